#!/bin/bash
# On the GPU machine: what backward attribution costs. The PyTorch loop (bench/gpu/torch_bench.py)
# unprofiled, under xpu-record with the default options (-g cfi, backward attribution on), under
# xpu-record --no-autograd (the same without it) and under torch.profiler (Kineto), in a new
# order each repetition: REPS repetitions (default 6) of STEPS timed steps (default 200), with the
# bundle of tests/gpu/bundle.sh, from the repo root as root:
#   tests/gpu/backward_cost.sh [OUT_DIR] [REPS] [STEPS]
# Prints bench/gpu_overhead.py's table (slowdown against unprofiled and against Kineto in the same
# repetition, trace bytes per launch), then bench/gpu_pairs.py's paired ratios of each run
# against the --no-autograd one (the cost of attribution itself; "faster in" counts the pairs
# the other run won) and against Kineto. MODES (bench/gpu_overhead.py --modes) replaces the two
# xpu-record modes; SCRIPT runs another loop in torch_bench.py's place
# (bench/gpu/torch_attn_bench.py: larger kernels; its rows keep the name torch_bench).
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-backward-cost}}
REPS=${2:-6}
STEPS=${3:-200}
MODES=${MODES:-cfi;cfi --no-autograd}
mkdir -p "$O"
B=.device/bundle/build
LIB=.device/bundle/lib
SECONDS=0
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --steps "$STEPS" --workloads torch \
	--modes "$MODES" --out "$O" ${SCRIPT:+--torch-script "$SCRIPT"} >"$O/bench.txt" 2>&1
rc=$?
grep '^|' "$O/gpu_bench.md" 2>/dev/null || tail -20 "$O/bench.txt"
grep '^torch_bench unprofiled' "$O/gpu_bench.md" 2>/dev/null
# the reference of the pairs: the mode with --no-autograd, as gpu_runs.csv names it
ref=$(printf '%s\n' "$MODES" | tr ';' '\n' | sed 's/^ *//; s/ *$//' | grep -e '--no-autograd' | head -1)
if [ -s "$O/gpu_runs.csv" ]; then
	[ -n "$ref" ] && python3 bench/gpu_pairs.py --ref "$ref" "$O/gpu_runs.csv"
	python3 bench/gpu_pairs.py --ref kineto "$O/gpu_runs.csv"
fi
echo "== ${SECONDS}s"
exit $rc
