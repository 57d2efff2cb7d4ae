#!/bin/bash
# One device call after tests/gpu/bundle.sh, for the default mode (-g cfi with copies of short
# walks): the 2-rank DDP run (tests/gpu/ddp_two.sh: NCCL where there are 2 GPUs),
# tests/gpu/torch_unwind.sh (REPS repetitions), the README's GPU quick start as written, then,
# if the call has time left, the GPU checks of every sample. Logs under OUT_DIR.
#   tests/gpu/session_cfi_default.sh [OUT_DIR] [REPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-session}}
REPS=${2:-4}
mkdir -p "$O"
rc=0
SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader | paste -sd,
# how long a recording of nothing takes per mode (BPF load and verification included)
for m in "-g fp" "" "-g cfi,nocopy"; do
	s=$(date +%s%N)
	LD_LIBRARY_PATH=.device/bundle/lib .device/bundle/build/xpu-record $m -o /tmp/true.xpu -- true \
		>/dev/null 2>&1
	echo "== xpu-record ${m:--g cfi (default)} -- true: $((($(date +%s%N) - s) / 1000000)) ms"
done
timeout 130 tests/gpu/ddp_two.sh /tmp/ddp >"$O/ddp.txt" 2>&1 || rc=1
echo "== ddp_two.sh: exit $? after ${SECONDS}s"
grep -E "^==|FAIL|^xpu-record|^   [AB] rank|^  pid" "$O/ddp.txt" | grep -v "top GPU stacks" | cut -c1-300
timeout 340 tests/gpu/torch_unwind.sh /tmp/unwind "$REPS" >"$O/unwind.txt" 2>&1 || rc=1
echo "== torch_unwind.sh: exit $? after ${SECONDS}s"
grep -E '^(sample|launch|incomplete|stopped)|^ +[0-9]+ ' /tmp/unwind/diag.txt 2>/dev/null | head -24 | cut -c1-220
sed -n '/^== summary/,$p' "$O/unwind.txt"
cp /tmp/unwind/gpu_bench.md /tmp/unwind/tables.md "$O/" 2>/dev/null
timeout 90 tests/gpu/readme_gpu.sh >"$O/readme.txt" 2>&1 || rc=1
echo "== readme_gpu.sh: exit $? after ${SECONDS}s"; tail -4 "$O/readme.txt"
if [ $SECONDS -lt 420 ]; then
	timeout $((540 - SECONDS)) tests/gpu/run_gpu_checks.sh /tmp/checks >"$O/checks.txt" 2>&1 || rc=1
	echo "== run_gpu_checks.sh: exit $? after ${SECONDS}s"
	grep -E "FAIL|result|failure|complete" "$O/checks.txt" | head -20 | cut -c1-250
fi
exit $rc
