#!/bin/bash
# On the GPU machine after tests/gpu/bundle.sh (issue 38): each PyTorch loop recorded once with
# --launch-walk=check, so that every launch walked in the launching thread is walked by BPF too,
# from the same stack; tests/e2e/inproc/launch_walk_check.py compares the two stacks of each
# launch. Unlike same_launch_stacks.sh (two runs, whose start-up work differs a little), this
# is the same launch both ways. From the repo root:
#   tests/gpu/launch_walk_check.sh OUT_DIR [STEPS] [SCRIPT...]
# Exit 0 when every loop has at most 1 in 1,000 launches whose two stacks differ.
set -u
cd "$(dirname "$0")/../.."
O=${1:?OUT_DIR}
STEPS=${2:-100}
shift 2 2>/dev/null
SCRIPTS=("$@")
[ ${#SCRIPTS[@]} -gt 0 ] || SCRIPTS=(bench/gpu/torch_bench.py bench/gpu/torch_attn_bench.py bench/gpu/torch_small_bench.py)
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
rc=0
for s in "${SCRIPTS[@]}"; do
	n=$(basename "$s" .py)
	LD_LIBRARY_PATH=$LIB $B/xpu-record --launch-walk=check -o "$O/$n-check.xpu" -- \
		env -u LD_LIBRARY_PATH python3 "$s" none "$STEPS" >"$O/$n-check.log" 2>&1 ||
		{ echo "$n: xpu-record exited $?: $(tail -3 "$O/$n-check.log")"; rc=1; continue; }
	LD_LIBRARY_PATH=$LIB $B/xpu-report -F info "$O/$n-check.xpu" 2>/dev/null |
		grep -E '^  (gpu_launch|gpu_kernel|inproc_walks|inproc_fallbacks|inproc_fallback_[a-z_]+|inproc_timed[a-z_]*|inproc_memo_[a-z]+|complete) ' |
		grep -v ' 0$' >"$O/$n-check.info"
	echo "== $n"
	cat "$O/$n-check.info"
	LD_LIBRARY_PATH=$LIB python3 tests/e2e/inproc/launch_walk_check.py --report $B/xpu-report \
		--max-per-mille 1 --min-pairs 100 "$O/$n-check.xpu" | tee "$O/$n-check.txt" || rc=1
	LD_LIBRARY_PATH=$LIB $B/xpu-report "$O/$n-check.xpu" 2>/dev/null | sed -n '/^# launches:/p'
	rm -f "$O/$n-check.xpu.xpa"
	[ "$(stat -c %s "$O/$n-check.xpu")" -lt 2000000 ] || rm -f "$O/$n-check.xpu"
done
exit $rc
