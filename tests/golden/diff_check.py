#!/usr/bin/env python3
"""xpu-report diff on committed traces, checked by what must hold rather than by bytes:

- a trace against itself: every change is exactly zero in every format (text: every delta
  prints 0.00 and both sides' shares are equal; folded: base == new on every line; svg: every
  frame is the no-change grey and every tooltip says +0.00 points);
- two different traces: each side's self and total shares are the plain text report's shares
  of that trace (the diff reuses the text tables' rows), a function on one side only is marked
  so, the deltas are new - base, and the two-column folded lines are the two traces' folded
  lines side by side.

Usage: diff_check.py XPU_REPORT TRACE [TRACE...]; exit 0 pass, 1 fail.
"""
import re
import subprocess
import sys

REPORT = sys.argv[1]
OPTS = ["--no-host-files", "--rows=0"]
fails = []


def run(*args):
    p = subprocess.run([REPORT, *args], capture_output=True, text=True, errors="replace")
    if p.returncode:
        fails.append("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[:200]))
    return p.stdout


ROW = re.compile(r"^ +(-|[0-9.]+%) +(-|[0-9.]+%) +([-+]?[0-9.]+) +(-|[0-9.]+%) +(-|[0-9.]+%) "
                 r"+([-+]?[0-9.]+)  (both|base|new) +(\S+) +(.*)$")


def diff_rows(text):
    """(file, function name) -> (in, base self, new self, dself, base total, new total, dtotal):
    a function is its name in its file (`_start` of a program and of python3 are two)"""
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        v = [None if x == "-" else float(x.rstrip("%")) for x in m.group(1, 2, 3, 4, 5, 6)]
        rows[(m.group(8), m.group(9))] = (m.group(7), *v)
    return rows


def text_shares(text):
    """the plain report's function tables: (file, name) -> share, for self and total"""
    self_t, total_t, cur = {}, {}, None
    for line in text.splitlines():
        if line.startswith("# top functions by self"):
            cur = self_t
        elif line.startswith("# top functions by total"):
            cur = total_t
        elif line.startswith("#") or not line.strip():
            cur = None if line.startswith("#") else cur
        elif cur is not None:
            m = re.match(r"^ *([0-9.]+)% +[0-9]+  (\S+) +(.*)$", line)
            if m:
                cur[(m.group(2), m.group(3))] = float(m.group(1))
    return self_t, total_t


def check_self(trace):
    rows = diff_rows(run("diff", *OPTS, trace, trace))
    if not rows:
        fails.append("%s: self-diff has no rows" % trace)
    for name, (where, bs, ns, ds, bt, nt, dt) in rows.items():
        if where != "both" or bs != ns or bt != nt or ds != 0 or dt != 0:
            fails.append("%s: self-diff row %r changed: %s" % (trace, name, (bs, ns, ds, bt, nt, dt)))
            break
    for line in run("diff", "-F", "folded", *OPTS, trace, trace).splitlines():
        b, n = line.rsplit(" ", 2)[1:]
        if b != n:
            fails.append("%s: self-diff folded line differs: %s" % (trace, line[-80:]))
            break
    svg = run("diff", "-F", "svg", *OPTS, trace, trace)
    frames = svg[svg.find('<g id="frames">'):]
    fills = set(re.findall(r'fill="(rgb[^"]*)"', frames))
    tips = re.findall(r"<title>[^<]*; ([-+][0-9.]+) points\)</title>", frames)
    if fills != {"rgb(235,235,235)"} or not tips or set(tips) != {"+0.00"}:
        fails.append("%s: self-diff svg not all unchanged: fills %s" % (trace, sorted(fills)[:4]))


def check_pair(base, new):
    rows = diff_rows(run("diff", *OPTS, base, new))
    sides = [text_shares(run(*OPTS, t)) for t in (base, new)]
    if not rows or not all(s[1] for s in sides):
        fails.append("%s vs %s: no rows to compare" % (base, new))
    checked[0] += len(rows)
    for name, (where, bs, ns, ds, bt, nt, dt) in rows.items():
        for side, s, t in ((0, bs, bt), (1, ns, nt)):
            self_t, total_t = sides[side]
            seen = name in total_t
            if seen != (where in ("both", ("base", "new")[side])):
                fails.append("%s: %r marked %s, in side %d's report: %s" % (new, name, where, side, seen))
            if seen and (abs(total_t[name] - t) > 0.006 or abs(self_t.get(name, 0) - s) > 0.006):
                fails.append("%s: %r side %d: diff says %s/%s, report %s/%s" %
                             (new, name, side, s, t, self_t.get(name, 0), total_t[name]))
        if abs(((ns or 0) - (bs or 0)) - ds) > 0.011 or abs(((nt or 0) - (bt or 0)) - dt) > 0.011:
            fails.append("%s: %r delta is not new - base" % (new, name))
    folded = {}
    for side, t in enumerate((base, new)):
        for line in run("-F", "folded", "--no-host-files", t).splitlines():
            stack, w = line.rsplit(" ", 1)
            folded.setdefault(stack, [0, 0])[side] = int(w)
    got = {}
    for line in run("diff", "-F", "folded", "--no-host-files", base, new).splitlines():
        stack, b, n = line.rsplit(" ", 2)
        got[stack] = [int(b), int(n)]
    if got != folded:
        fails.append("%s: two-column folded is not the two folded outputs side by side" % new)


checked = [0]
traces = sys.argv[2:]
for t in traces:
    check_self(t)
for b, n in zip(traces, traces[1:]):
    check_pair(b, n)
for f in fails[:20]:
    print("FAIL diff_check:", f)
if not fails:
    print("diff_check: %d traces against themselves, %d pairs (%d rows): ok" %
          (len(traces), len(traces) - 1, checked[0]))
sys.exit(1 if fails else 0)
