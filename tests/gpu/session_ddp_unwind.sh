#!/bin/bash
# One device call on the 2-GPU kind (issues 14 and 16): the 2-rank DDP run over NCCL
# (tests/gpu/ddp_two.sh), then the in-BPF unwinding measurement on PyTorch
# (tests/gpu/torch_unwind.sh, REPS repetitions). Logs under OUT_DIR (default $OUT).
#   tests/gpu/session_ddp_unwind.sh [OUT_DIR] [REPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-session}}
REPS=${2:-5}
mkdir -p "$O"
rc=0
SECONDS=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
env | grep -E '^(NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS)='
timeout 200 tests/gpu/ddp_two.sh /tmp/ddp >"$O/ddp.txt" 2>&1 || rc=1
echo "== ddp_two.sh: exit $? after ${SECONDS}s"; grep -E "^==|FAIL" "$O/ddp.txt" | cut -c1-400
timeout 380 tests/gpu/torch_unwind.sh /tmp/unwind "$REPS" >"$O/unwind.txt" 2>&1 || rc=1
echo "== torch_unwind.sh: exit $? after ${SECONDS}s"
sed -n '/^== summary/,$p' "$O/unwind.txt"
cp /tmp/unwind/gpu_bench.md "$O/" 2>/dev/null
exit $rc
