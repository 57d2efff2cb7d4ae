#!/bin/bash
# One device call after the Python code cache and the API-record default (issue 16): in-BPF time
# per launch (bpf_stats) for -g fp --no-python, -g cfi --no-python and the default; the walk's
# counters on samples/torch_train.py; then the default and -g fp paired against Kineto
# (tests/gpu/default_vs_kineto.sh, REPS x STEPS). Logs under OUT_DIR.
#   tests/gpu/session_code_cache.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-code-cache}}
mkdir -p "$O"
rc=0
SECONDS=0
CONFIGS='-g fp --no-python;-g cfi --no-python;default' tests/gpu/torch_breakdown.sh "$O" 0 200 || rc=1
t=/tmp/train.xpu
LD_LIBRARY_PATH=.device/bundle/lib .device/bundle/build/xpu-record -o $t -- env -u LD_LIBRARY_PATH \
	XPU_TORCH_STEPS=60 python3 samples/torch_train.py >"$O/train.log" 2>&1 || rc=1
LD_LIBRARY_PATH=.device/bundle/lib .device/bundle/build/xpu-report -F info $t 2>/dev/null |
	grep -E '^  (complete|gpu_api|py_frames|py_frame_reads|py_code_cache_hits|py_code_errors|cfi_frames|size) '
echo "== ${SECONDS}s before the paired runs"
tests/gpu/default_vs_kineto.sh "$O" "${2:-8}" "${3:-400}" || rc=1
echo "== ${SECONDS}s in all"
exit $rc
