#!/bin/bash
# On the GPU machine (issue 10): Python frames in PyTorch launch stacks recorded with the
# default options, and what they cost. Uses the prebuilt bundle (tests/gpu/bundle.sh), run from
# the repo root as root:
#   tests/gpu/torch_python.sh [OUT_DIR] [REPS]
# Checks that at least 95% of the main thread's launch GPU time sits under a named Python
# function of samples/torch_train.py, prints the top GPU stacks, writes a small -g fp trace
# (torch-python.xpu, for the golden tests) and runs bench/python_overhead.py --workload torch
# (REPS interleaved repetitions, default 7). Exit status 1 when a step or the check failed.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-torch-python}}
REPS=${2:-7}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$OUT"
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0

echo "== python: $(python3 -V 2>&1), $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1)"
t=$OUT/torch-default.xpu
tool $B/xpu-record -o "$t" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100 \
	python3 samples/torch_train.py >"$OUT/rec.log" 2>&1 || { echo "FAIL: record: $(tail -3 "$OUT/rec.log")"; rc=1; }
tool $B/xpu-report -F info "$t" >"$OUT/info.txt" 2>&1
pid=$(awk '/^  target pid/ { print $3 }' "$OUT/info.txt")
tool $B/xpu-report -F folded --view=gpu --weight=time --tid="$pid" "$t" >"$OUT/main-gpu.folded" 2>/dev/null
tool $B/xpu-report -F folded --view=gpu --weight=time "$t" >"$OUT/all-gpu.folded" 2>/dev/null
tool $B/xpu-report "$t" >"$OUT/text.txt" 2>&1
echo "== default recording: $(stat -c %s "$t") bytes"
sed -n '/^python/,/^dsos/p' "$OUT/info.txt" | grep -v '^dsos'
grep -E '^  (complete|py_|gpu_launch )' "$OUT/info.txt"
awk -v what="main thread" '{ w = $NF; all += w; if (/\(torch_train\.py\)/) py += w }
	END { printf "== %s: %.1f%% of %d us of launch GPU time under a function of torch_train.py\n",
		what, all ? 100 * py / all : 0, all; exit !(all > 0 && py >= 0.95 * all) }' \
	"$OUT/main-gpu.folded" || { echo "FAIL: under 95% of the main thread's launch GPU time has a torch_train.py frame"; rc=1; }
awk '{ w = $NF; all += w; if (/\(torch_train\.py\)/) py += w }
	END { printf "== all threads: %.1f%% of launch GPU time under a function of torch_train.py\n", all ? 100 * py / all : 0 }' \
	"$OUT/all-gpu.folded"
echo "== top main-thread GPU stacks (Python frames and the native frames around them):"
sort -t' ' -k2 -n -r "$OUT/main-gpu.folded" 2>/dev/null | awk '{ print $NF, $0 }' | sort -rn | head -4 | cut -c1-700
echo "== top CPU samples:"
sed -n '/top functions by self/,+12p' "$OUT/text.txt"

# a small trace for the golden tests: -g fp keeps it small, Python frames are the point
tool $B/xpu-record -g fp -F 199 -o "$OUT/torch-python.xpu" -- env -u LD_LIBRARY_PATH \
	XPU_TORCH_STEPS=20 python3 samples/torch_train.py >"$OUT/rec-small.log" 2>&1 ||
	{ echo "FAIL: small record: $(tail -3 "$OUT/rec-small.log")"; rc=1; }
echo "== small trace: $(stat -c %s "$OUT/torch-python.xpu" 2>/dev/null) bytes"

echo "== bench/python_overhead.py --workload torch --reps $REPS"
BUILD=$B LD_LIBRARY_PATH="$LIB" XPU_TORCH_STEPS=100 python3 bench/python_overhead.py \
	--workload torch --reps "$REPS" --modes 'fp;dwarf,32768,32768' --clean-target-env \
	--no-write >"$OUT/bench.txt" 2>&1 || { echo "FAIL: bench"; rc=1; }
cat "$OUT/bench.txt"
exit $rc
