#!/bin/bash
# A short device call (issue 16): the PyTorch loop (bench/gpu/torch_bench.py) unprofiled, under
# -g fp, the default -g cfi, -g cfi,nocopy and torch.profiler (Kineto), interleaved, REPS
# repetitions, with the bundle of tests/gpu/bundle.sh. Prints bench/gpu_overhead.py's table.
#   tests/gpu/torch_vs_kineto.sh [OUT_DIR] [REPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-kineto}}
REPS=${2:-4}
mkdir -p "$O"
B=.device/bundle/build
LIB=.device/bundle/lib
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --steps 40 --workloads torch \
	--modes 'fp;cfi;cfi,nocopy' --out "$O" >"$O/bench.txt" 2>&1
rc=$?
grep '^|' "$O/gpu_bench.md" 2>/dev/null || tail -20 "$O/bench.txt"
exit $rc
