#!/bin/bash
# bench/gpu_pairs.py, which pools the paired runs behind docs/record.md's "below Kineto" figures:
# ratios per repetition, wins, the sign test, pooling over files; bad input is one line, exit 1.
set -u
NAME=test_gpu_pairs
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL $NAME: $*"; exit 1; }
PY=$(command -v python3)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# rep 0: cfi 90 vs kineto 100 (-10%); rep 1: 110 vs 100 (+10%); rep 2: 95 vs 100 (-5%)
printf '0,0,base,50\n0,1,cfi,90\n0,2,kineto,100\n1,0,kineto,100\n1,1,cfi,110\n1,2,base,60\n2,0,cfi,95\n2,1,kineto,100\n2,2,base,55\n' >"$tmp/a.csv"
# one more repetition, won: pooled 3 of 4
printf '0,0,kineto,200\n0,1,cfi,180\n0,2,base,100\n' >"$tmp/b.csv"
out=$("$PY" "$ROOT/bench/gpu_pairs.py" "$tmp/a.csv" "$tmp/b.csv") || fail "exit $?: $out"
echo "$out" | grep -qE '^  cfi +-5\.0% \[-10\.0\.\.\+10\.0\]  faster in 2/3  p = 0\.500$' ||
	fail "per file: $out"
# pooled: ratios 0.9, 1.1, 0.95, 0.9 -> median 0.925; P(>= 3 of 4) = 5/16
echo "$out" | grep -qE '^  cfi +-7\.5% \[-10\.0\.\.\+10\.0\]  faster in 3/4  p = 0\.312$' ||
	fail "pooled: $out"
echo "$out" | grep -q ' base ' && fail "the unprofiled runs are not a profiler: $out"
printf '0,0,cfi\n' >"$tmp/bad.csv"
err=$("$PY" "$ROOT/bench/gpu_pairs.py" "$tmp/bad.csv" 2>&1) && fail "a bad row gave exit 0"
[ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "rep,position,what,ns" ||
	fail "a bad row: $err"
err=$("$PY" "$ROOT/bench/gpu_pairs.py" "$tmp/none.csv" 2>&1) && fail "a missing file gave exit 0"
echo "$err" | grep -q "none.csv" || fail "a missing file: $err"
echo "PASS $NAME"
