#!/bin/bash
# One device call after tests/gpu/bundle.sh: the GPU checks of every sample, the README's GPU
# quick start as written, and the signal checks of run_gpu_extra.sh (SIGTERM flush, PyTorch
# SIGINT). Logs under OUT_DIR (default $OUT).
#   tests/gpu/session_final.sh [OUT_DIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-final}}
mkdir -p "$O"
rc=0
SECONDS=0
tests/gpu/run_gpu_checks.sh /tmp/checks >"$O/checks.txt" 2>&1 || rc=1
echo "== run_gpu_checks.sh: exit $? after ${SECONDS}s"; grep -E "FAIL|result|failure" "$O/checks.txt" | head -20
tests/gpu/readme_gpu.sh >"$O/readme.txt" 2>&1 || rc=1
echo "== readme_gpu.sh after ${SECONDS}s:"; tail -3 "$O/readme.txt"
XPU_GPU_EXTRA_ONLY=34 tests/gpu/run_gpu_extra.sh /tmp/extra >"$O/extra.txt" 2>&1 || rc=1
echo "== run_gpu_extra.sh 3,4 after ${SECONDS}s:"; grep -E "^==|FAIL" "$O/extra.txt" | cut -c1-300
exit $rc
