#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare per-function shares, backward included, between an xpu-perf folded profile and
PyTorch's own profiler (prof.export_stacks), for backward attribution tests.

usage: backward_shares.py --xpu FOLDED [--prof STACKS] --root train_step --funcs a,b,c
                          [--tol 8] [--max-unattributed 10]

FOLDED is `xpu-report --format=folded --view=cpu` output: one line per stack, frames root
first separated by ";", then a space and the weight. Python frames read "qualname (file.py)"
(or "qualname (file.py:LINE)" with --python-lines); a backward sample has the forward stack
that made its autograd node, then "[backward] NODE", then the backward's own frames.
  - Only lines with a frame of the root function ("ROOT (...") count; their weights are the total.
  - Share of F: the weight of those lines with a frame of F ("F (...") anywhere, over the total.
    A line counts once per function however many frames of it it has.
  - Unattributed backward: lines under the root with autograd-engine work (a frame containing
    Engine::evaluate_function, Engine::thread_main or [backward]) that have no frame of any
    --funcs function and no attributed "[backward] " frame. A "[backward] " frame is attributed
    when, walking from it towards the root, a Python frame comes before any frame containing
    "Engine::" (the forward stack was put above it, rather than the stack of the
    loss.backward() call that ran the engine). Fails above --max-unattributed percent.
  - At least one "[backward] " frame must be there.

STACKS is torch.profiler's export_stacks(PATH, "self_cpu_time_total") file: one line per op
event, frames root first separated by ";", a space, the weight (microseconds of the event's
own time). Frames are Python only: "FILE(LINE): NAME" with " " turned into "_" by
export_stacks, so "loop.py(42):_mlp" (FILE without its sys.path prefix, NAME the code
object's co_name), "<built-in_method_mm_of_type_object_at_0x..>" for a C function's call and
"nn.Module:_Linear_0" for a module's. A backward op carries the Python stack of the forward
op with its node's sequence number (checked on torch 1.13, CPU: tests/e2e/python/
torch_backward.py has the details; check the frame names of another release before use).
  - Only lines with a frame of the root function count; share of F: lines with a frame of F.
    F matches a frame ending in ":_F" or ": F"; for a dotted F (Class.method) the profiler side
    matches only the last part, which is all co_name holds. F@FILE (_BatchNorm.forward@
    batchnorm.py) names the file too, on both sides: methods named alike (forward) stay apart.

Prints a table (function, xpu %, xpu backward %, profiler %, diff), the heaviest [backward]
nodes of the xpu side with the function above each (--show N), the heaviest unattributed
lines when there are too many, and exits 1 when a |diff| exceeds --tol points or a check
above fails, 0 otherwise (2 for bad arguments). Without --prof only the xpu-side checks run.
Weights are read as floats. Standard library only.
"""
import argparse
import re
import sys

PY_FRAME = re.compile(r"^\S+ \([^()]+\)$")   # "qualname (file.py)", "f (<frozen x>)"
ENGINE_WORK = ("Engine::evaluate_function", "Engine::thread_main", "[backward]")
BACKWARD = "[backward] "


def read_weighted(path):
    """Yields (frames, weight) per line of a folded file; malformed lines are counted."""
    bad = 0
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, sep, w = line.rpartition(" ")
            try:
                weight = float(w)
            except ValueError:
                weight = None
            if not sep or weight is None or not stack:
                bad += 1
                continue
            yield stack.split(";"), weight
    if bad:
        print("warning: %s: %d line(s) without a weight skipped" % (path, bad), file=sys.stderr)


def split_spec(name):
    """'F' or 'F@file.py': a function, and the file its frames must name (None: any)."""
    f, _, file = name.partition("@")
    return f, file or None


def xpu_has(frames, name):
    f, file = split_spec(name)
    if file:
        exact = "%s (%s)" % (f, file)
        return any(fr == exact or fr.startswith("%s (%s:" % (f, file)) for fr in frames)
    p = f + " ("
    return any(fr.startswith(p) for fr in frames)


def attributed_backward(frames):
    """True if a [backward] frame has a Python frame above it before any engine frame."""
    for i, fr in enumerate(frames):
        if not fr.startswith(BACKWARD):
            continue
        for above in reversed(frames[:i]):
            if "Engine::" in above:
                break
            if PY_FRAME.match(above):
                return True
    return False


class XpuShares:
    def __init__(self, funcs):
        self.total = 0.0                        # weight under the root
        self.per = dict.fromkeys(funcs, 0.0)    # ... with a frame of F
        self.per_bwd = dict.fromkeys(funcs, 0.0)  # ... and a [backward] frame
        self.backward = 0.0                     # ... with a [backward] frame
        self.unattr = 0.0                       # unattributed backward
        self.n_bwd_frames = 0                   # [backward] frames, anywhere
        self.nodes = {}                         # (first [backward] node, F or "-") -> weight
        self.unattr_tails = {}                  # the last frames of unattributed lines


def xpu_shares(path, root, funcs):
    r = XpuShares(funcs)
    for frames, w in read_weighted(path):
        bwd = [fr for fr in frames if fr.startswith(BACKWARD)]
        r.n_bwd_frames += len(bwd)
        if not xpu_has(frames, root):
            continue
        r.total += w
        hit = [f for f in funcs if xpu_has(frames, f)]
        for f in hit:
            r.per[f] += w
            if bwd:
                r.per_bwd[f] += w
        if bwd:
            r.backward += w
            key = (bwd[0][len(BACKWARD):], hit[0] if hit else "-")
            r.nodes[key] = r.nodes.get(key, 0.0) + w
        if hit:
            continue
        if any(any(k in fr for k in ENGINE_WORK) for fr in frames) and \
                not attributed_backward(frames):
            r.unattr += w
            tail = ";".join(short(fr) for fr in frames[-4:])
            r.unattr_tails[tail] = r.unattr_tails.get(tail, 0.0) + w
    return r


def prof_matcher(name):
    f, file = split_spec(name)
    last = re.escape(f.rsplit(".", 1)[-1])
    if file:
        return re.compile(r"(^|/)" + re.escape(file) + r"\(\d+\):[_ ]" + last + r"$")
    return re.compile(r":[_ ]" + last + r"$")


def prof_shares(path, root, funcs):
    root_re = prof_matcher(root)
    res = {f: prof_matcher(f) for f in funcs}
    total = 0.0
    per = dict.fromkeys(funcs, 0.0)
    for frames, w in read_weighted(path):
        if not any(root_re.search(fr) for fr in frames):
            continue
        total += w
        for f, r in res.items():
            if any(r.search(fr) for fr in frames):
                per[f] += w
    return total, per


def short(frame):
    """A C++ frame without its parameter list, for messages."""
    if PY_FRAME.match(frame):
        return frame
    f = frame[:-6] if frame.endswith(" const") else frame
    if not f.endswith(")"):
        return frame
    depth = 0
    for i in range(len(f) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(f[i], 0)
        if depth == 0:
            return f[:i] if i else frame
    return frame


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


def main(argv):
    ap = argparse.ArgumentParser(
        description="Compare per-function shares (backward included) of an xpu-perf folded "
        "profile with torch.profiler's export_stacks.")
    ap.add_argument("--xpu", required=True, help="xpu-report --format=folded --view=cpu output")
    ap.add_argument("--prof", help="torch.profiler export_stacks(..., 'self_cpu_time_total') file")
    ap.add_argument("--root", required=True, help="the training-step function, e.g. train_step")
    ap.add_argument("--funcs", required=True, help="comma-separated forward functions")
    ap.add_argument("--tol", type=float, default=8.0, help="max |xpu - profiler| in points")
    ap.add_argument("--max-unattributed", type=float, default=10.0,
                    help="max percent of unattributed backward work under the root")
    ap.add_argument("--show", type=int, default=8,
                    help="how many backward nodes (and unattributed lines) to list")
    a = ap.parse_args(argv)
    funcs = [f.strip() for f in a.funcs.split(",") if f.strip()]
    if not funcs:
        ap.error("--funcs is empty")

    failures = []
    try:
        xs = xpu_shares(a.xpu, a.root, funcs)
        ptotal, pper = prof_shares(a.prof, a.root, funcs) if a.prof else (None, None)
    except OSError as e:
        print("FAIL: %s" % e)
        return 1
    total, per, per_bwd = xs.total, xs.per, xs.per_bwd
    if total <= 0:
        failures.append("no xpu sample under a frame '%s ('" % a.root)
    if a.prof and ptotal <= 0:
        failures.append("no profiler line under a frame ending in ':_%s'" % a.root)
    if xs.n_bwd_frames == 0:
        failures.append("no '[backward] ' frame in %s" % a.xpu)

    print("%-34s %8s %8s %8s %8s" % ("function", "xpu %", "xpu bwd", "prof %", "diff"))
    for f in funcs:
        x = pct(per[f], total)
        if a.prof:
            p = pct(pper[f], ptotal)
            d = x - p
            print("%-34s %8.1f %8.1f %8.1f %+8.1f" % (f, x, pct(per_bwd[f], total), p, d))
            if abs(d) > a.tol and total > 0 and ptotal > 0:
                failures.append("%s: xpu %.1f%% vs profiler %.1f%%: |diff| %.1f > %g"
                                % (f, x, p, abs(d), a.tol))
        else:
            print("%-34s %8.1f %8.1f %8s %8s" % (f, x, pct(per_bwd[f], total), "-", "-"))
    u = pct(xs.unattr, total)
    print("xpu: %g under %s, %.1f%% in backward, %.1f%% unattributed backward (max %g)"
          % (total, a.root, pct(xs.backward, total), u, a.max_unattributed))
    if a.prof:
        print("profiler: %g under %s" % (ptotal, a.root))
    top = sorted(xs.nodes.items(), key=lambda kv: -kv[1])[:a.show]
    if top:
        print("xpu backward nodes (%% of %s, the function above them):" % a.root)
        for (node, f), w in top:
            print("  %5.1f%%  %-32s %s" % (pct(w, total), node, f))
    if u > a.max_unattributed:
        failures.append("unattributed backward %.1f%% > %g%%" % (u, a.max_unattributed))
        print("heaviest unattributed lines (their last frames):")
        for tail, w in sorted(xs.unattr_tails.items(), key=lambda kv: -kv[1])[:a.show]:
            print("  %5.1f%%  ...;%s" % (pct(w, total), tail[-300:]))
    for msg in failures:
        print("FAIL: " + msg)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
