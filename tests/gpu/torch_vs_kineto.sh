#!/bin/bash
# A short device call (issue 16): the PyTorch loop (bench/gpu/torch_bench.py) unprofiled, under
# -g fp, the default -g cfi, -g cfi,nocopy and torch.profiler (Kineto), interleaved, REPS
# repetitions of STEPS timed steps, with the bundle of tests/gpu/bundle.sh. Prints
# bench/gpu_overhead.py's table. MODES (bench/gpu_overhead.py --modes) replaces the three modes.
#   tests/gpu/torch_vs_kineto.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-kineto}}
REPS=${2:-4}
STEPS=${3:-40}
mkdir -p "$O"
B=.device/bundle/build
LIB=.device/bundle/lib
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --steps "$STEPS" --workloads torch \
	--modes "${MODES:-fp;cfi;cfi,nocopy}" --out "$O" >"$O/bench.txt" 2>&1
rc=$?
grep '^|' "$O/gpu_bench.md" 2>/dev/null || tail -20 "$O/bench.txt"
exit $rc
