#!/bin/bash
# A device call for the cost of CUPTI's API records (issue 16): samples/torch_train.py recorded
# with the default mode under XPU_CUPTI_API=all and =launches (API records and launch stacks
# each keeps), then the PyTorch loop paired against Kineto with all, launches and none.
#   tests/gpu/cupti_api_cost.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-api}}
REPS=${2:-7}
STEPS=${3:-200}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
SECONDS=0
for api in all launches; do
	t=/tmp/train-$api.xpu
	LD_LIBRARY_PATH="$LIB" XPU_CUPTI_API=$api XPU_CUPTI_VERBOSE=1 $B/xpu-record -o "$t" -- \
		env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=60 python3 samples/torch_train.py \
		>"$O/rec-$api.log" 2>&1 || { rc=1; tail -3 "$O/rec-$api.log"; }
	echo "== XPU_CUPTI_API=$api: $(grep -E 'API records for|cannot choose' "$O/rec-$api.log" | head -1)"
	LD_LIBRARY_PATH="$LIB" $B/xpu-report -F info "$t" 2>/dev/null |
		grep -E '^  (gpu_api|gpu_launch|gpu_kernel|complete|size) '
	LD_LIBRARY_PATH="$LIB" $B/xpu-report "$t" 2>/dev/null | grep -E "^# time blocked|before its API call|^# gpu:"
done
echo "== checks done after ${SECONDS}s"
MODES='cfi;XPU_CUPTI_API=launches cfi;XPU_CUPTI_API=none cfi' \
	tests/gpu/torch_vs_kineto.sh "$O" "$REPS" "$STEPS" || rc=1
echo "== ${SECONDS}s in all"
exit $rc
