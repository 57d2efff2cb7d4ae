#!/bin/bash
# bench/gpu/ladder.py (issue 28's breakdown) without a GPU or a recorder: a fake loop whose
# time the environment sets, base, plain and kineto rungs from a rung file. Every repetition
# runs every rung once; the CSV is bench/gpu_pairs.py's; the table's ratios are paired.
set -u
NAME=test_gpu_ladder
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL $NAME: $*"; exit 1; }
PY=$(command -v python3)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# the "loop": 100 ms unprofiled, FAKE_NS when set, 160 ms as "kineto"
cat >"$tmp/loop.py" <<'PYEOF'
import os, sys
ns = 160000000 if sys.argv[1] == "kineto" else int(os.environ.get("FAKE_NS", "100000000"))
print(f"elapsed_ns {ns}")
PYEOF
cat >"$tmp/rungs" <<'RUNGS'
base = base
minimal = plain CUDA_INJECTION64_PATH=@MIN FAKE_NS=110000000   # the floor
slow = plain FAKE_NS=150000000
kineto = kineto
RUNGS
mkdir -p "$tmp/out"
out=$("$PY" "$ROOT/bench/gpu/ladder.py" --build "$tmp" --min-lib "$tmp/libcupti_min.so" \
	--script "$tmp/loop.py" --rungs "$tmp/rungs" --reps 3 --out "$tmp/out" 2>&1) ||
	fail "exit $?: $out"
[ "$(wc -l <"$tmp/out/ladder_runs.csv")" = 12 ] || fail "runs: $(cat "$tmp/out/ladder_runs.csv")"
for r in 0 1 2; do
	[ "$(grep -c "^$r," "$tmp/out/ladder_runs.csv")" = 4 ] || fail "repetition $r"
done
grep -qE '^\| minimal \| `CUDA_INJECTION64_PATH=libcupti_min.so FAKE_NS=110000000` \| \+10\.0% \[\+10\.0\.\.\+10\.0\] \|  \|  \| 3/3 \|$' \
	"$tmp/out/ladder.md" || fail "minimal row: $(cat "$tmp/out/ladder.md")"
grep -qE '^\| slow \| .* \| \+50\.0% \[\+50\.0\.\.\+50\.0\] \| \+40\.0 \| 0/3 \| 3/3 \|$' \
	"$tmp/out/ladder.md" || fail "slow row: $(cat "$tmp/out/ladder.md")"
pairs=$("$PY" "$ROOT/bench/gpu_pairs.py" --ref minimal "$tmp/out/ladder_runs.csv") ||
	fail "gpu_pairs: $pairs"
echo "$pairs" | grep -qE '^  slow +\+36\.4%' || fail "gpu_pairs against minimal: $pairs"
echo "PASS $NAME"
