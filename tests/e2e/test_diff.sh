#!/usr/bin/env bash
# xpu-report diff on two real recordings of one program (tests/e2e/diff/split.c) whose CPU
# time moves between two functions: work_a 70% / work_b 30% in BASE, 30% / 70% in NEW, each run
# 1.5 s of its CPU time however loaded the machine is. The text diff must show work_a's self
# and total shares fall by about 40 points and work_b's rise by as much (+-10), in the right
# order; the two-column folded output must give the same
# shares; the differential flame graph must draw work_a blue (shrank) and work_b red (grew).
# Then a diff of a trace against itself, and a recording at another rate (noted, compared by
# shares). Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_diff
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
command -v python3 >/dev/null || skip "python3 not found"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/split" tests/e2e/diff/split.c || fail "cc split.c"

record() {	# out rate percent_a
	"$B/xpu-record" --no-gpu -F "$2" -o "$1" -- "$tmp/split" "$3" 1.5 >/dev/null 2>"$tmp/err" ||
		fail "xpu-record -F $2 split $3: $(tail -1 "$tmp/err")"
}
record "$tmp/base.xpu" 999 70
record "$tmp/new.xpu" 999 30
record "$tmp/slow.xpu" 299 30

R="$B/xpu-report"
"$R" diff "$tmp/base.xpu" "$tmp/new.xpu" >"$tmp/diff.txt" 2>"$tmp/err" ||
	fail "xpu-report diff: $(head -1 "$tmp/err")"
"$R" diff -F folded "$tmp/base.xpu" "$tmp/new.xpu" >"$tmp/diff.folded" 2>"$tmp/err" ||
	fail "xpu-report diff -F folded: $(head -1 "$tmp/err")"
"$R" diff -F svg "$tmp/base.xpu" "$tmp/new.xpu" >"$tmp/diff.svg" 2>"$tmp/err" ||
	fail "xpu-report diff -F svg: $(head -1 "$tmp/err")"
"$R" diff "$tmp/base.xpu" "$tmp/base.xpu" >"$tmp/self.txt" 2>"$tmp/err" ||
	fail "xpu-report diff (itself): $(head -1 "$tmp/err")"
"$R" diff "$tmp/base.xpu" "$tmp/slow.xpu" >"$tmp/slow.txt" 2>"$tmp/err" ||
	fail "xpu-report diff (299 Hz): $(head -1 "$tmp/err")"

python3 - "$tmp" <<'PY' || fail "see above"
import re, sys
tmp = sys.argv[1]
ROW = re.compile(r"^ +(-|[0-9.]+%) +(-|[0-9.]+%) +([-+]?[0-9.]+) +(-|[0-9.]+%) +(-|[0-9.]+%) "
                 r"+([-+]?[0-9.]+)  (both|base|new) +(\S+) +(.*)$")
def rows(path):
    out, order = {}, []
    for line in open(path):
        m = ROW.match(line)
        if m:
            v = [None if x == "-" else float(x.rstrip("%")) for x in m.group(1, 2, 3, 4, 5, 6)]
            out[m.group(9)] = v
            order.append(m.group(9))
    return out, order
bad = []
def near(what, got, want, tol=10):
    if got is None or abs(got - want) > tol:
        bad.append("%s: %s, expected %+.0f +-%d" % (what, got, want, tol))

d, order = rows(tmp + "/diff.txt")
for fn, sign in (("work_a", -1), ("work_b", 1)):
    if fn not in d:
        bad.append("%s not in the diff" % fn)
        continue
    bs, ns, ds, bt, nt, dt = d[fn]
    near(fn + " base self share", bs, 50 - sign * 20)
    near(fn + " new self share", ns, 50 + sign * 20)
    near(fn + " self delta", ds, sign * 40)
    near(fn + " total delta", dt, sign * 40)
# the two largest changes of self share come first
if sorted(order[:2]) != ["work_a", "work_b"]:
    bad.append("rows not sorted by change: %s" % order[:4])

# folded: "stack base new", each side's shares of the leaves
tot, leaf = [0, 0], {}
for line in open(tmp + "/diff.folded"):
    stack, b, n = line.rsplit(" ", 2)
    f = stack.split(";")[-1]
    for i, w in enumerate((int(b), int(n))):
        tot[i] += w
        leaf.setdefault(f, [0, 0])[i] += w
for fn, sign in (("work_a", -1), ("work_b", 1)):
    b, n = (100.0 * leaf.get(fn, [0, 0])[i] / tot[i] if tot[i] else 0 for i in (0, 1))
    near(fn + " folded share change", n - b, sign * 40)

# svg: work_a in blue (shrank), work_b in red (grew)
svg = open(tmp + "/diff.svg").read()
for fn, grew in (("work_a", False), ("work_b", True)):
    g = re.findall(r'<g><title>' + fn + r' \(([^<]*)\)</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)
    if not g:
        bad.append("svg: no %s frame" % fn)
    for tip, r, gg, b in g:
        r, b = int(r), int(b)
        if (r > b) != grew or abs(r - b) < 60:
            bad.append("svg: %s drawn rgb(%d,%s,%d), expected %s" % (fn, r, gg, b, "red" if grew else "blue"))
        m = re.search(r"; ([-+][0-9.]+) points$", tip)
        if not m or (float(m.group(1)) > 0) != grew:
            bad.append("svg: %s tooltip %r" % (fn, tip))

# a trace against itself: no change anywhere
s, _ = rows(tmp + "/self.txt")
if not s or any(v[2] != 0 or v[5] != 0 for v in s.values()):
    bad.append("self-diff has changes")

# another rate: said, and shares still compare
slow = open(tmp + "/slow.txt").read()
if "sampling rates differ (base 999 Hz, new 299 Hz)" not in slow:
    bad.append("no note of the rates: " + slow[:400])
sl, _ = rows(tmp + "/slow.txt")
near("299 Hz: work_a self delta", sl.get("work_a", [None] * 6)[2], -40)

for b in bad:
    print("FAIL test_diff:", b)
if not bad:
    print("work_a %+.1f, work_b %+.1f points of self share" % (d["work_a"][2], d["work_b"][2]))
sys.exit(1 if bad else 0)
PY
echo "PASS $NAME"
