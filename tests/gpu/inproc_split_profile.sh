#!/bin/bash
# Issue 38, on the GPU machine after PERF=1 tests/gpu/bundle.sh: where the launching thread's
# time goes, configuration by configuration (--no-launch-stacks, the launch callbacks with and
# without CUPTI's API records but no stack, the default, the default without autograd probes):
# the loop's time, then perf's self time by DSO and by symbol in the target's main thread only
# (the thread that launches; OpenBLAS's spinning threads are left out). From the repo root:
#   tests/gpu/inproc_split_profile.sh OUT_DIR [SCRIPT] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:?OUT_DIR}
S=${2:-bench/gpu/torch_bench.py}
STEPS=${3:-300}
B=.device/bundle/build
LIB=.device/bundle/lib
PERF=${PERF_BIN:-.device/bundle/perf/perf}
[ -x "$PERF" ] || PERF=$(command -v perf)
PLIB=.device/bundle/perf/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
# warm the bytecode cache so that no configuration pays for compiling PyTorch's modules
python3 "$S" none 5 >/dev/null 2>&1

run() {	# NAME ENV... -- XPU-RECORD-FLAGS...
	local name=$1 envs=() flags=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	flags=("$@")
	LD_LIBRARY_PATH=$LIB:$PLIB "$PERF" record -q -F 2999 -e cpu-clock -o "$O/$name.data" -- \
		env LD_LIBRARY_PATH=$LIB "${envs[@]}" $B/xpu-record "${flags[@]}" -o "$O/$name.xpu" -- \
		env -u LD_LIBRARY_PATH python3 "$S" none "$STEPS" >"$O/$name.log" 2>&1
	# the main thread: the python3 thread with the lowest id (its process's own id); PyTorch
	# names its main thread pt_main_thread, so python3 alone picked an OpenBLAS thread (H100,
	# 2026-12-07)
	local tid
	tid=$(LD_LIBRARY_PATH=$PLIB "$PERF" report -i "$O/$name.data" --comm python3,pt_main_thread --sort pid \
		--stdio 2>/dev/null | sed -n 's/^ *[0-9.]*% *\([0-9][0-9]*\):.*/\1/p' | sort -n | head -1)
	echo "=== $name (${envs[*]} ${flags[*]}): $(grep elapsed_ns "$O/$name.log" | tail -1); main thread $tid"
	LD_LIBRARY_PATH=$PLIB "$PERF" report -i "$O/$name.data" --no-children --tid "$tid" \
		--sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
	LD_LIBRARY_PATH=$PLIB "$PERF" report -i "$O/$name.data" --no-children --tid "$tid" \
		--sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 >"$O/$name.syms"
	head -25 "$O/$name.syms"
	rm -f "$O/$name.data"
}

# CONFIGS=all: every configuration below; by default the four that split the launch's cost
run no-launch-stacks -- --no-launch-stacks
run callbacks XPU_CUPTI_NO_MARKER=1 --
if [ "${CONFIGS:-}" = all ]; then
	run callbacks-no-api XPU_CUPTI_NO_MARKER=1 XPU_CUPTI_API=none --
	run default-no-api XPU_CUPTI_API=none --
	run default-no-autograd -- --no-autograd
fi
run default --
run default-api-callbacks XPU_CUPTI_API=callbacks --
