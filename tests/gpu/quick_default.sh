#!/bin/bash
# A short device call for the default mode after a change to the BPF walk: how long a recording
# of nothing takes per mode (BPF load and verification), the README's GPU quick start as
# written, and samples/torch_train.py recorded with the default mode, alone and with --off-cpu
# (the largest BPF programs), with their complete-stack rates. Logs under OUT_DIR.
#   tests/gpu/quick_default.sh [OUT_DIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-quick}}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
SECONDS=0
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
for m in "-g fp" "" "-g fp" ""; do
	s=$(date +%s%N)
	tool $B/xpu-record $m -o /tmp/true.xpu -- true >/dev/null 2>&1
	echo "== xpu-record ${m:--g cfi (default)} -- true: $((($(date +%s%N) - s) / 1000000)) ms"
done
tool $B/xpu-record -vvv -o /tmp/true.xpu -- true 2>&1 | grep 'verifier:'
timeout 90 tests/gpu/readme_gpu.sh >"$O/readme.txt" 2>&1 || rc=1
echo "== readme_gpu.sh: exit $? after ${SECONDS}s"; tail -2 "$O/readme.txt"
for extra in "" "--off-cpu"; do
	t=/tmp/train$extra.xpu
	tool $B/xpu-record $extra -o "$t" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=60 \
		python3 samples/torch_train.py >"$O/rec$extra.log" 2>&1 || { rc=1; tail -3 "$O/rec$extra.log"; }
	echo "== default $extra: $(grep '^xpu-record:' "$O/rec$extra.log" | tail -1)"
	tool $B/xpu-report -F info "$t" 2>/dev/null |
		grep -E '^  (complete|cfi_walks|cfi_frames|cfi_row_cache_hits|cfi_stack_reads|cfi_short_walk_copies|cfi_scanned_frames|off_cpu_blocks) '
done
echo "== ${SECONDS}s in all"
exit $rc
