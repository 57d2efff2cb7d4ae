#!/bin/bash
# On the GPU machine (issue 40): how soon a launched PyTorch program's GPU collection has its
# tables, with a cold and then a warm table cache (--cache-dir in OUT_DIR), with the bundle of
# tests/gpu/bundle.sh, from the repo root as root:
#   tests/gpu/start_gpu.sh [OUT_DIR]
# Per run: the whole recording's wall time, when the CUDA library connected and the first
# launch came (check_trace), the tables built or taken from the cache, the start's wait, and
# the launches not walked in process for want of a table (each a BPF walk instead).
set -u
cd "$(dirname "$0")/../.."
O=$(realpath -m "${1:-${OUT:-/tmp/xpu-start-gpu}}")
B=$PWD/.device/bundle/build
LIB=$PWD/.device/bundle/lib
mkdir -p "$O"
rm -rf "$O/cache"
rc=0
for run in cold warm warm2; do
	t0=$(date +%s%N)
	LD_LIBRARY_PATH="$LIB" XPU_TORCH_STEPS=5 "$B/xpu-record" --cache-dir="$O/cache" \
		-o "$O/start-$run.xpu" -- python3 samples/torch_train.py >"$O/start-$run.out" 2>"$O/start-$run.err" ||
		{ echo "FAIL $run: $(tail -2 "$O/start-$run.err")"; rc=1; continue; }
	t1=$(date +%s%N)
	echo "== $run: recording $(( (t1 - t0) / 1000000 )) ms in all"
	"$B/tests/gpu/check_trace" "$O/start-$run.xpu" | grep -E "^gpu start|^match"
	LD_LIBRARY_PATH="$LIB" "$B/xpu-report" -F info "$O/start-$run.xpu" 2>/dev/null |
		grep -E '^  (cfi_files|cfi_build_ns|cfi_cache_hits|cfi_cache_misses|cfi_start_wait_ns|cfi_walks_without_tables|inproc_walks|inproc_fallbacks|inproc_fallback_no_table|inproc_fallback_no_share|complete) ' |
		sed 's/^/   /'
done
rm -f "$O"/*.xpu.xpa
exit $rc
