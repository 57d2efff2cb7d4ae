#!/bin/bash
# On the GPU machine after PERF=1 tests/gpu/bundle.sh (issue 38): what the launching thread of
# torch_bench spends its time on under the default and under --no-launch-stacks, by DSO and by
# symbol, for that thread alone (the process's own id: its main thread), and what a clock read
# and a getcpu cost on this host (tests/gpu/clock_cost.c). From the repo root:
#   tests/gpu/walk_profile.sh OUT_DIR [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:?OUT_DIR}
STEPS=${2:-300}
S=${SCRIPT:-bench/gpu/torch_bench.py}
B=.device/bundle/build
LIB=.device/bundle/lib
PERF=.device/bundle/perf/perf
[ -x "$PERF" ] || PERF=$(command -v perf)
PLIB=.device/bundle/perf/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
$B/tests/gpu/clock_cost
python3 "$S" none 5 >/dev/null 2>&1
for cfg in default no-launch-stacks; do
	flags=()
	[ $cfg = no-launch-stacks ] && flags=(--no-launch-stacks)
	LD_LIBRARY_PATH=$LIB:$PLIB "$PERF" record -q -F 4999 -e cpu-clock -o "$O/$cfg.data" -- \
		env LD_LIBRARY_PATH=$LIB $B/xpu-record "${flags[@]}" -o "$O/$cfg.xpu" -- \
		env -u LD_LIBRARY_PATH sh -c 'echo $$ >"$0"; exec python3 "$2" none "$1"' \
		"$O/$cfg.pid" "$STEPS" "$S" >"$O/$cfg.log" 2>&1
	tid=$(cat "$O/$cfg.pid")
	echo "=== $cfg: $(grep -h 'elapsed_ns\|step_median' "$O/$cfg.log" | tr '\n' ' ') main thread $tid"
	LD_LIBRARY_PATH=$B/../lib $B/xpu-report "$O/$cfg.xpu" 2>/dev/null | grep '^# launches' || true
	LD_LIBRARY_PATH=$PLIB "$PERF" report -i "$O/$cfg.data" --no-children --tid "$tid" \
		--sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -14
	LD_LIBRARY_PATH=$PLIB "$PERF" report -i "$O/$cfg.data" --no-children --tid "$tid" \
		--sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60 >"$O/$cfg.syms"
	head -45 "$O/$cfg.syms"
	[ $cfg = default ] && LD_LIBRARY_PATH=$PLIB "$PERF" annotate -i "$O/$cfg.data" --tid "$tid" --stdio \
		-s cfi_step.constprop.0.isra.0 2>/dev/null | grep -E '^ +[0-9]+\.[0-9]+ ' | sort -rn | head -25
	rm -f "$O/$cfg.data" "$O/$cfg.xpu" "$O/$cfg.xpu.xpa"
done
