#!/bin/bash
# On the GPU machine: a short samples/torch_train.py recorded with the default options, kept as
# OUT_DIR/torch-backward.xpu (samples/traces/ ships it for the golden tests), and the GPU
# memory view of the same trace, whose backward allocations must sit under [backward] frames.
#   tests/gpu/backward_sample.sh [OUT_DIR] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-backward-sample}}
STEPS=${2:-8}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
t=$O/torch-backward.xpu
LD_LIBRARY_PATH="$LIB" $B/xpu-record -o "$t" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS="$STEPS" \
	python3 samples/torch_train.py >"$O/rec.log" 2>&1 || { tail -3 "$O/rec.log"; exit 1; }
grep '^xpu-record:' "$O/rec.log" | tail -1
LD_LIBRARY_PATH="$LIB" $B/xpu-report "$t" | grep -E '^# (backward|stacks|gpu)'
LD_LIBRARY_PATH="$LIB" $B/xpu-report -F folded --view=memory "$t" >"$O/memory.folded"
echo "== memory view: $(wc -l <"$O/memory.folded") stacks, $(grep -c '\[backward\]' "$O/memory.folded") under a [backward] frame"
grep '\[backward\]' "$O/memory.folded" | awk '{ print $NF, $0 }' | sort -rn | head -3 | cut -c1-300
