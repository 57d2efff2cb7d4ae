#!/bin/bash
# One device call for the Python-frames issue (10), after tests/gpu/bundle.sh: the stack-mode
# and Python-frame checks on PyTorch, the SIGTERM flush check of run_gpu_extra.sh, and the cost
# benchmark. Results under OUT_DIR (default $OUT, the device tool's folder).
#   tests/gpu/session_python.sh [OUT_DIR] [REPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-session}}
REPS=${2:-7}
mkdir -p "$O"
nvidia-smi -L; uname -r
rc=0
XPU_GPU_EXTRA_ONLY=3 tests/gpu/run_gpu_extra.sh /tmp/extra 2>&1 | tee "$O/extra.txt" || rc=1
grep -q FAIL "$O/extra.txt" && rc=1
tests/gpu/torch_python.sh /tmp/tp "$REPS" 2>&1 | tee "$O/torch_python.txt" || rc=1
cp /tmp/tp/torch-python.xpu "$O/" 2>/dev/null
cp /tmp/tp/main-gpu.folded "$O/" 2>/dev/null
exit $rc
