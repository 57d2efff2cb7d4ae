#!/bin/bash
# Several traces as one (xpu-report A.xpu B.xpu) over the committed H200 traces, which were
# recorded one after the other on one host: folded weights and text totals add up, chrome has
# both on one timeline in the order they ran, a trace given twice (every pid collides) counts
# twice under distinct processes, with a warning, --host filters, and bad input is refused in one line.
set -u
NAME=test_multi_trace
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
R=$B/xpu-report
fail() { echo "FAIL $NAME: $*"; exit 1; }
[ -x "$R" ] || fail "$R not built"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# one symbol source for both (the same binary, one archive): merged names equal lone names
A=$ROOT/samples/traces/pipeline.xpu
G=$tmp/pipeline-graph.xpu
cp "$ROOT/samples/traces/pipeline-graph.xpu" "$G" && cp "$A.xpa" "$G.xpa" || fail "copy"
rep() { "$R" --no-host-files "$@" 2>>"$tmp/err"; }

# sum_check A B MERGED EXACT: per stack, the merged weight is A's plus B's (EXACT=1: to the
# unit; else within the 1-unit rounding of folded output, and the totals within 1 per kind)
sum_check() {
	python3 - "$@" <<'EOF'
import collections, sys
def load(p):
    d = collections.Counter()
    for l in open(p):
        k, w = l.rstrip("\n").rsplit(" ", 1)
        d[k] += int(w)
    return d
a, b, m = (load(p) for p in sys.argv[1:4])
exact = sys.argv[4] == "1"
s = a + b
bad = [(k, s[k], m[k]) for k in set(s) | set(m) if abs(s[k] - m[k]) > (0 if exact else 1)]
tot = abs(sum(s.values()) - sum(m.values()))
if bad or tot > (0 if exact else 2) or not m:
    sys.exit("%d stacks differ (e.g. %r), totals %d vs %d" %
             (len(bad), bad[:1], sum(s.values()), sum(m.values())))
EOF
}

for v in cpu merged gpu; do
	for w in samples time; do
		# GPU work in samples: a stack counts at least 1, which does not add up
		[ $v != cpu ] && [ $w = samples ] && continue
		exact=0
		[ $w = samples ] && exact=1
		rep -F folded --view=$v --weight=$w "$A" >"$tmp/a" || fail "$v/$w: first trace alone"
		rep -F folded --view=$v --weight=$w "$G" >"$tmp/b" || fail "$v/$w: second trace alone"
		rep -F folded --view=$v --weight=$w "$A" "$G" >"$tmp/m" || fail "$v/$w: both"
		sum_check "$tmp/a" "$tmp/b" "$tmp/m" $exact || fail "--view=$v --weight=$w: not the sum"
	done
done

# text: samples, GPU records, kernel counts and launch matching add up
rep "$A" >"$tmp/a.txt"; rep "$G" >"$tmp/b.txt"; rep "$A" "$G" >"$tmp/m.txt"
num() { awk -v k="$2" '$0 ~ k { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' "$1"; }
for key in '^# samples:' '^  kernels ' '^  copies ' '^  memsets '; do
	a=$(num "$tmp/a.txt" "$key"); b=$(num "$tmp/b.txt" "$key"); m=$(num "$tmp/m.txt" "$key")
	[ -n "$a" ] && [ $((a + b)) = "$m" ] || fail "text '$key': $a + $b != $m"
done
grep -qE '^# trace 2: .*pipeline-graph.xpu: host vm, starts at \+[0-9]+\.[0-9]{3} s' "$tmp/m.txt" ||
	fail "text: no line for the second trace: $(grep '^# trace' "$tmp/m.txt")"

# chrome: one timeline, distinct processes, the second recording's events after the first's
rep -F chrome "$A" "$G" >"$tmp/m.json" || fail "chrome of both"
python3 - "$tmp/m.json" <<'EOF' || fail "chrome: the two recordings are not one ordered timeline"
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e["ph"] in "XiC" and e["pid"] < 2000000000]
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
pids = sorted({e["pid"] for e in ev})
assert len(pids) == 2, pids
first, second = sorted(pids, key=lambda p: min(e["ts"] for e in ev if e["pid"] == p))
end1 = max(e["ts"] + e.get("dur", 0) for e in ev if e["pid"] == first)
start2 = min(e["ts"] for e in ev if e["pid"] == second)
assert end1 < start2, (end1, start2)
parts = d["otherData"]["traces"]
assert len(parts) == 2 and all(p["host"] == "vm" for p in parts), parts
assert names[first].startswith("vm pid ") and names[second].startswith("vm pid "), names
gpu = [e for e in d["traceEvents"] if e["ph"] == "X" and e["pid"] >= 2000000000]
assert {e["args"]["correlation_id"] > 0 for e in gpu} == {True}
EOF

# a trace given twice: every pid collides, the copy's move; everything counts twice
rep -F folded --view=cpu --weight=samples "$A" >"$tmp/a"
rep -F folded --view=cpu --weight=samples "$A" "$A" >"$tmp/m"
sum_check "$tmp/a" "$tmp/a" "$tmp/m" 1 || fail "a trace given twice is not twice its weight"
grep -q "are the same recording (one uuid): its events count twice" "$tmp/err" ||
	fail "a trace given twice is merged without a word"
rep -F chrome "$A" "$A" >"$tmp/aa.json"
python3 - "$tmp/aa.json" <<'EOF' || fail "chrome: a trace given twice is not two processes"
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(e["args"]["name"] for e in d["traceEvents"]
               if e.get("name") == "process_name" and e["pid"] < 2000000000)
assert len(names) == 2 and names[0].startswith("vm pid ") and \
    names[1] == names[0].replace("vm pid ", "vm trace 2 pid "), names
EOF
rep -F info "$A" "$A" | grep -q 'pids moved     +4194304' || fail "info: no 'pids moved' line"

# --host: the traces' host keeps all, another host nothing (exit 1, one line)
rep -F folded --view=cpu --weight=samples --host=vm "$A" "$G" >"$tmp/h" || fail "--host=vm"
rep -F folded --view=cpu --weight=samples "$A" "$G" >"$tmp/m"
cmp -s "$tmp/h" "$tmp/m" || fail "--host=vm left something out"
rep -F folded --host=elsewhere "$A" "$G" >"$tmp/h" 2>"$tmp/e" && fail "--host=elsewhere: exit 0"
[ ! -s "$tmp/h" ] || fail "--host=elsewhere printed stacks"
# --rank: these traces hold no rank, so no process has one
rep -F folded --rank=0 "$A" >/dev/null 2>&1 && fail "--rank=0 of a trace without ranks: exit 0"

# bad input: one line and exit 2 (usage) or 1 (a file)
for args in "--rank=x" "--rank=-1" "--rank=1,,2" "--host=" "- -"; do
	# shellcheck disable=SC2086
	"$R" $args "$A" >/dev/null 2>"$tmp/e"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || fail "'$args': exit $rc, $(cat "$tmp/e")"
done
"$R" "$A" "$tmp/missing.xpu" >/dev/null 2>"$tmp/e"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q missing.xpu "$tmp/e" ||
	fail "a missing second trace: exit $rc, $(cat "$tmp/e")"
echo "PASS $NAME"
