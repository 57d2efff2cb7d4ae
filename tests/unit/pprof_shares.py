#!/usr/bin/env python3
"""--format=pprof read back by `go tool pprof -top` against --format=folded.

For each case (a committed trace, a view, filters): every function's flat and cum share in
pprof's default sample type must be its self and total share in folded output (the first
frame of a folded line, the process name, is a label in pprof, not a frame), and pprof must
list exactly the functions folded output has. Folded weights are rounded per line (the
remainder carried), so a function may differ by one unit per folded line that holds it;
pprof prints shares to 0.01%.

Python frames and GPU leaves are also read back with pprof's default symbolization, which
simplifies names it takes for C++: each must show whole (<> are written as look-alikes there,
which this maps back), not blank nor merged with another.

usage: pprof_shares.py XPU_REPORT GO TRACES_DIR TMPDIR [TRACE [ARG...]]
(with TRACE: that trace of TRACES_DIR alone, with ARGs, instead of the committed cases)
"""
import re
import subprocess
import sys
from collections import defaultdict

REPORT, GO, TRACES, TMP = sys.argv[1:5]

CASES = [
    ("pipeline.xpu", ["--view=gpu"]),
    ("pipeline.xpu", []),                                   # merged, weighed in time
    ("pipeline.xpu", ["--view=cpu"]),
    ("pipeline-graph.xpu", ["--view=gpu"]),
    ("torch-python.xpu", ["--view=cpu"]),                   # samples
    ("torch-python.xpu", ["--view=cpu", "--weight=time"]),  # cpu/nanoseconds
    ("torch-python.xpu", ["--view=gpu", "--python-lines"]),
    ("torch-python.xpu", ["--dso=libc.so.6"]),
    ("torch-small.xpu", ["--view=gpu", "--pid=9999999"]),  # nothing: an error, no file
    ("torch-small.xpu", ["--inline"]),
]


def folded_shares(lines):
    flat, cum, nlines = defaultdict(float), defaultdict(float), defaultdict(int)
    total = 0.0
    for line in lines:
        stack, w = line.rsplit(" ", 1)
        w = float(w)
        frames = stack.split(";")[1:]           # [0]: the process name
        total += w
        flat[frames[-1]] += w
        for f in set(frames):
            cum[f] += w
            nlines[f] += 1
    return ({f: 100 * v / total for f, v in flat.items()},
            {f: 100 * v / total for f, v in cum.items()}, nlines, total)


# the look-alikes out_pprof.c writes for the brackets pprof reads as C++ syntax
LOOK_ALIKES = str.maketrans({"\u2039": "<", "\u203a": ">", "\u27e6": "[", "\u27e7": "]"})
# "qualname (file.py)", "qualname (<frozen x>)", with --python-lines ":LINE"
PYTHON_FRAME = re.compile(r"^\S+ \((?:<[^>]*>|[^()]*\.py)(?::\d+)?\)$")


def pprof_shares(path, symbolize="none"):
    out = subprocess.run([GO, "tool", "pprof", f"-symbolize={symbolize}", "-top",
                          "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0", path],
                         capture_output=True, text=True, check=True).stdout
    flat, cum = {}, {}
    rows = False
    for line in out.splitlines():
        if line.split() == ["flat", "flat%", "sum%", "cum", "cum%"]:
            rows = True
            continue
        if not rows:
            continue
        f = line.split(None, 5)
        name = f[5].translate(LOOK_ALIKES) if len(f) > 5 else ""
        flat[name] = float(f[1].rstrip("%"))
        cum[name] = float(f[4].rstrip("%"))
    if not rows:
        raise SystemExit("pprof -top printed no table:\n" + out)
    return flat, cum


def check(trace, args):
    name = " ".join([trace] + args)
    base = [REPORT, "--no-host-files"] + args + [f"{TRACES}/{trace}"]
    folded = subprocess.run(base[:1] + ["--format=folded"] + base[1:], capture_output=True,
                            text=True).stdout.splitlines()
    pb = f"{TMP}/out.pb.gz"
    r = subprocess.run(base[:1] + ["--format=pprof", "-o", pb] + base[1:])
    if not folded:     # a view that selects nothing fails alike
        print(f"{name}: nothing selected, exit {r.returncode}")
        return [] if r.returncode == 1 else [f"{name}: exit {r.returncode} for an empty view"]
    if r.returncode:
        return [f"{name}: exit {r.returncode}"]
    with open(pb, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return [f"{name}: not gzip"]
    fflat, fcum, nlines, total = folded_shares(folded)
    pflat, pcum = pprof_shares(pb)
    bad = []
    if set(fcum) != set(pcum):
        bad.append(f"{name}: functions only in folded {sorted(set(fcum) - set(pcum))[:5]}, "
                   f"only in pprof {sorted(set(pcum) - set(fcum))[:5]}")
    for fn in set(fcum) & set(pcum):
        tol = 100 * (nlines[fn] + 1) / total + 0.011
        for what, a, b in (("flat", fflat.get(fn, 0.0), pflat[fn]), ("cum", fcum[fn], pcum[fn])):
            if abs(a - b) > tol:
                bad.append(f"{name}: {fn}: {what} {b}% in pprof, {a:.3f}% in folded")
    # what pprof's default symbolization shows of Python frames and GPU leaves: all of them
    shown = set(pprof_shares(pb, "local")[1])
    for fn in sorted(fn for fn in fcum if fn.startswith("[gpu] ") or PYTHON_FRAME.match(fn)):
        if fn not in shown:
            bad.append(f"{name}: {fn[:100]} is not shown whole by pprof's default symbolization")
    print(f"{name}: {len(fcum)} functions, {len(folded)} folded lines: "
          f"{'ok' if not bad else 'MISMATCH'}")
    return bad


def main():
    bad = []
    for trace, args in [(sys.argv[5], sys.argv[6:])] if len(sys.argv) > 5 else CASES:
        bad += check(trace, args)
    for b in bad[:40]:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
