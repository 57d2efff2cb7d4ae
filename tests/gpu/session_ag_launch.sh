#!/bin/bash
# On the GPU machine: autograd nodes that take their op's launch stack instead of a walk (format
# 1.11, bpf/autograd.bpf.h). From the repo root as root, with the bundle of tests/gpu/bundle.sh:
#   tests/gpu/session_ag_launch.sh [OUT_DIR] [PART...]
# Parts (default: attr bpf):
#   attr  tests/gpu/backward_attr.sh (STEPS, default 60): attribution still right, per loop, with
#         info's autograd counters (autograd_nodes_from_launch among them);
#   bpf   bench/gpu/torch_bench.py (200 steps) recorded with -v and kernel.bpf_stats_enabled,
#         default and XPU_AUTOGRAD_WALK_ALL=1 (every node walked): run time per node event and
#         per launch in BPF, and the nodes that took their launch's stack;
#   cost  tests/gpu/backward_cost.sh (REPS, default 8; 200 steps): default, walk-all and
#         --no-autograd paired repetition by repetition.
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/xpu-ag-launch}
shift || true
PARTS=${*:-attr bpf}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
SECONDS=0
for part in $PARTS; do
	case $part in
	attr)
		echo "##### attr"
		STEPS=${STEPS:-60} tests/gpu/backward_attr.sh "$O/attr" || rc=1
		;;
	bpf)
		echo "##### bpf"
		sysctl -qw kernel.bpf_stats_enabled=1
		for mode in default walk-all; do
			env=()
			[ $mode = walk-all ] && env=(XPU_AUTOGRAD_WALK_ALL=1)
			env "${env[@]}" LD_LIBRARY_PATH="$LIB" $B/xpu-record -v -o "$O/bpf-$mode.xpu" -- \
				env -u LD_LIBRARY_PATH python3 bench/gpu/torch_bench.py none 200 \
				>"$O/bpf-$mode.log" 2>&1 || { echo "FAIL: record $mode"; rc=1; }
			echo "== $mode: $(grep -E '^elapsed|elapsed_ns' "$O/bpf-$mode.log" | tail -1)"
			grep -E 'bpf on_(ag_node|gpu_launch|ag_eval_begin)|node counter' "$O/bpf-$mode.log"
			LD_LIBRARY_PATH="$LIB" $B/xpu-report -F info "$O/bpf-$mode.xpu" 2>/dev/null |
				grep -E '^  (autograd_|gpu_launch |gpu_kernel )'
			awk '/bpf on_ag_node:/ { gsub(/,/, ""); printf "   node event: %.2f us in BPF\n", $6 / $4 / 1000 }
			     /bpf on_gpu_launch:/ { gsub(/,/, ""); printf "   launch event: %.2f us in BPF\n", $6 / $4 / 1000 }' \
				"$O/bpf-$mode.log"
			LD_LIBRARY_PATH="$LIB" $B/xpu-report -F folded --view=gpu --weight=time \
				"$O/bpf-$mode.xpu" 2>/dev/null >"$O/bpf-$mode.folded"
			awk '{ w = $NF; all += w; if (index($0, "torch_bench.py")) py += w
			       if (index($0, ";[backward] ")) bw += w }
			     END { printf "   GPU time under the script %.1f%%, under [backward] %.1f%%\n",
				   100 * py / all, 100 * bw / all }' "$O/bpf-$mode.folded"
		done
		sysctl -qw kernel.bpf_stats_enabled=0
		;;
	cost)
		echo "##### cost"
		MODES="cfi;XPU_AUTOGRAD_WALK_ALL=1 cfi;cfi --no-autograd" \
			tests/gpu/backward_cost.sh "$O/cost" "${REPS:-8}" 200 || rc=1
		;;
	esac
	echo "== part $part done at ${SECONDS}s"
done
exit $rc
