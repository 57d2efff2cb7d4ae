#!/bin/bash
# On the GPU machine (issue 39, not yet run: written without a GPU): replayed CUDA graph work
# under the code that captured it. Uses the prebuilt bundle (tests/gpu/bundle.sh), from the
# repo root as root:
#   tests/gpu/cuda_graphs.sh [OUT_DIR]
# Three programs, recorded with the default options, each report's GPU folded view
# (--weight=time) and info checked:
#   cuda    tests/gpu/graphs/graph_nodes.cu (built by bundle.sh, else nvcc here): a graph captured from a stream
#           (capture_attention: attn_kernel + memset, capture_mlp: mlp_kernel + copy) and one
#           built with the node API (build_node_api: node_api_kernel + memset; add_child: a
#           child graph with child_kernel), REPLAYS replays each, then cudaGraphExecUpdate of
#           the captured exec graph and REPLAYS/10 more. Checks: every attn_kernel replayed
#           before the update is under replay_captured;...;[graph] captured;...;capture_attention,
#           every mlp_kernel under capture_mlp, node_api_kernel under build_node_api, and never
#           under another capture function; the kernels replayed after the update are under
#           replay_after_update with no [graph] frame; info's counts (printed: how CUPTI
#           numbers a child graph's kernels is one thing this run finds out: child_kernel must
#           be either under add_child or under no capture site at all).
#   eager   tests/gpu/graphs/decode_graph.py eager: torch.cuda.graph capture of decode_step,
#           STEPS replays from infer_loop: at least 95% of the GPU time under infer_loop is
#           under '[graph] captured' with decode_step below it, the attention kernels' time
#           under Attention.forward and the MLP's under MLP.forward (the two shares printed),
#           none of either layer's GEMMs under the other.
#   compile the same model with torch.compile(mode="reduce-overhead"): at least 95% of the
#           replayed GPU time (under a capture site or a replay's stack) has a capture site
#           ('[graph] captured'), and the capture
#           stacks reach Block.forward / decode_step.
# Also, for cost (printed, not checked): the eager loop's wall time with XPU_CUPTI_GRAPH_NODES=0
# against the default, and info's graph_* stats. Exits 1 when any check failed.
# REUSE=1: no recording (no GPU needed): the checks run on the traces already in OUT_DIR
# (cuda.xpu, eager.xpu, compile.xpu), e.g. after a change to the report.
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-graphs}}
B=${XPU_BUILD:-.device/bundle/build}
LIB=${XPU_LIB-.device/bundle/lib}
REPLAYS=${REPLAYS:-200}
STEPS=${STEPS:-200}
mkdir -p "$O"
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/xpu-inductor-cache}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$TORCHINDUCTOR_CACHE_DIR/triton}
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0
fail() { echo "FAIL: $*"; rc=1; }
rec() { # NAME ARGS...: record, fold, info
	local n=$1
	shift
	if [ -n "${REUSE:-}" ]; then
		[ -f "$O/$n.xpu" ] || { echo "  $n: no $O/$n.xpu to reuse"; return 1; }
	else
		tool "$B/xpu-record" -o "$O/$n.xpu" -- "$@" >"$O/$n.log" 2>&1 || { fail "$n: record: $(tail -2 "$O/$n.log")"; return 1; }
	fi
	tool "$B/xpu-report" -F folded --view=gpu --weight=time "$O/$n.xpu" >"$O/$n.folded" 2>"$O/$n.err"
	tool "$B/xpu-report" -F info "$O/$n.xpu" >"$O/$n.info" 2>/dev/null
	sed -n '/^cuda graphs/,/^[a-z]/p' "$O/$n.info" | sed '$d'
	grep -E '^  graph_' "$O/$n.info"
	cat "$O/$n.err"
}
# share PATTERN_ALL PATTERN_PART FOLDED: % of the weight of lines matching ALL that match PART
share() { awk -v a="$1" -v p="$2" '$0 ~ a { t += $NF; if ($0 ~ p) s += $NF }
	END { printf "%.1f", t ? 100 * s / t : -1 }' "$3"; }
# the end of a frame's name in folded lines: C++ frames carry their parameters
E='[(; ]'
ge() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x >= y) }'; }

echo "##### cuda"
# built by tests/gpu/bundle.sh (the GPU machine may have no nvcc), else here
if [ -n "${REUSE:-}" ]; then
	:
elif [ -x "$B/tests/gpu/graph_nodes" ]; then
	cp "$B/tests/gpu/graph_nodes" "$O/graph_nodes"
else
	nvcc -O1 -g -Xcompiler -fno-omit-frame-pointer -o "$O/graph_nodes" \
		tests/gpu/graphs/graph_nodes.cu || fail "nvcc"
fi
if { [ -n "${REUSE:-}" ] || [ -x "$O/graph_nodes" ]; } && rec cuda "$O/graph_nodes" "$REPLAYS"; then
	f=$O/cuda.folded
	for k in attn_kernel:capture_attention mlp_kernel:capture_mlp node_api_kernel:build_node_api; do
		kern=${k%%:*} site=${k#*:}
		s=$(share "replay_(captured|built)$E.*\\[gpu\\] $kern$E" "\\[graph\\] captured;(.*;)?$site$E" "$f")
		echo "  $kern under $site: $s%"
		ge "$s" 99.9 || fail "cuda: $kern: only $s% under its capture site $site"
		grep -E "\\[graph\\] captured;.*\\[gpu\\] $kern$E" "$f" | grep -vE ";$site$E" &&
			fail "cuda: $kern under another capture site"
	done
	s=$(share "replay_after_update$E" "\\[graph\\]" "$f")
	[ "$s" = 0.0 ] || fail "cuda: $s% of the work replayed after cudaGraphExecUpdate has a capture site"
	grep -E "\\[graph\\] captured;.*\\[gpu\\] child_kernel$E" "$f" | grep -vE ";add_child$E" &&
		fail "cuda: child_kernel under a wrong capture site"
	echo "  child_kernel: $(share "\\[gpu\\] child_kernel$E" '\[graph\] captured' "$f")% under a capture site"
	grep -E '\[graph\] captured;.*\[gpu\] memset' "$f" | grep -vE ";(capture_attention|build_node_api)$E" &&
		fail "cuda: a memset under a wrong capture site"
fi

echo "##### eager"
if rec eager python3 tests/gpu/graphs/decode_graph.py eager "$STEPS"; then
	f=$O/eager.folded
	s=$(share 'infer_loop' '\[graph\] captured;(.*;)?decode_step' "$f")
	echo "  under [graph] captured > decode_step: $s% of infer_loop's GPU time"
	ge "$s" 95 || fail "eager: only $s% of the replayed work under its capture site"
	a=$(share 'infer_loop' '\[graph\] captured;.*Attention\.forward' "$f")
	m=$(share 'infer_loop' '\[graph\] captured;.*MLP\.forward' "$f")
	echo "  Attention.forward $a%, MLP.forward $m%"
	# each layer's share within 3 points of the same loop without a graph (issue 39)
	if rec plain python3 tests/gpu/graphs/decode_graph.py plain "$STEPS"; then
		pa=$(share 'infer_loop' 'Attention\.forward' "$O/plain.folded")
		pm=$(share 'infer_loop' 'MLP\.forward' "$O/plain.folded")
		echo "  without a graph: Attention.forward $pa%, MLP.forward $pm%"
		awk -v a="$a" -v m="$m" -v pa="$pa" -v pm="$pm" 'BEGIN {
			d1 = a - pa; d2 = m - pm; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
			exit !(d1 <= 3 && d2 <= 3) }' ||
			fail "eager: a layer's share moved more than 3 points from the loop without a graph"
	fi
	ge "$a" 1 && ge "$m" 1 || fail "eager: a layer has no replayed work"
	grep -E '\[graph\] captured;.*Attention\.forward.*MLP\.forward|\[graph\] captured;.*MLP\.forward.*Attention\.forward' "$f" &&
		fail "eager: a stack under both layers"
	# cost: the same loop with the node callbacks off
	[ -n "${REUSE:-}" ] || for v in 1 0; do
		/usr/bin/time -f "%e" -o "$O/eager-time-$v" env XPU_CUPTI_GRAPH_NODES=$v \
			LD_LIBRARY_PATH="$LIB" "$B/xpu-record" -o "$O/eager-$v.xpu" -- \
			python3 tests/gpu/graphs/decode_graph.py eager "$STEPS" >/dev/null 2>&1
	done
	[ -n "${REUSE:-}" ] || echo "  wall: node callbacks on $(cat "$O/eager-time-1") s, off $(cat "$O/eager-time-0") s"
fi

echo "##### compile"
if rec compile python3 tests/gpu/graphs/decode_graph.py compile "$STEPS"; then
	f=$O/compile.folded
	# the replayed work: under a capture site, or under a replay's own stack where the node
	# has none; what cudagraph trees launch outside the replays (the copies of the inputs
	# into the graph's static buffers, _copy_inputs_and_remove_from_src) is not replayed
	s=$(share '\[graph\]|CUDAGraph::replay|cudaGraphLaunch' '\[graph\] captured' "$f")
	o=$(share 'infer_loop' '_copy_inputs_and_remove_from_src' "$f")
	echo "  under a capture site: $s% of the replayed GPU time; launched outside the replays (input copies): $o% of infer_loop's"
	ge "$s" 95 || fail "compile: only $s% of the replayed work under a capture site"
	grep -qE '\[graph\] captured;.*(Block\.forward|decode_step)' "$f" ||
		fail "compile: no capture stack reaches the model's code"
fi
exit $rc
