#!/usr/bin/env bash
# CUDA graph capture sites without a GPU (issue 39): tests/gpu/mock/fake_cuda_graphs.c makes
# the node callbacks CUPTI makes when a graph is captured from a stream, built with the node
# API, given a node made outside any traced call and a child graph, instantiated twice,
# replayed, changed by SetParams and by cudaGraphExecUpdate, under the real xpu-record with
# libxpu-cupti.so over the fake libcupti. Checks that each replayed kernel and copy whose node
# maps is under its replay's stack, '[graph] captured' and the stack that made its node (and
# capture-first, replay-only), that nothing else gets a capture site, that what does not map
# is counted by why (info, STATS, one warning), that chrome and jsonl name the capture site,
# that XPU_CUPTI_GRAPH_NODES=0 and xpu-record --cuda-graphs=replay turn it all off, and (with the stand-in libtorch_cpu.so of
# tests/gpu/mock/fake_libtorch.c) that a captured backward pass's replayed kernels keep their
# '[backward] NODE' under the forward code that made the node.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_cuda_graphs_mock
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "no CUPTI headers at $CUDA_HOME"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
# named as CUPTI is, so that the report trims its frames from launch stacks as CUPTI's
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libcupti.so.13" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O1 -g -fno-omit-frame-pointer -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_graphs" \
	tests/gpu/mock/fake_cuda_graphs.c -ldl || fail "cannot build fake_cuda_graphs"
LIB=$(realpath "$B/libxpu-cupti.so")
export XPU_CUPTI_LIB="$tmp/libcupti.so.13"
app=("$tmp/fake_cuda_graphs" "$LIB" "$tmp/libcupti.so.13")
R=10
rep() { "$B/xpu-report" "$@" 2>/dev/null; }
info_val() { rep -F info "$1" | awk -v k="$2" '{ v = $NF; $NF = ""; sub(/^ +/, ""); sub(/ +$/, "") }
	$0 == k { print v; exit }'; }

"$B/xpu-record" -o "$tmp/g.xpu" -- "${app[@]}" $R >"$tmp/g.out" 2>"$tmp/g.err" ||
	fail "recording failed: $(tail -2 "$tmp/g.err")"
# per replay of 0xe1: 5 kernels and a copy; R + 1 replays of it, 2 of 0xe2 with 2 kernels
want=$(( (R + 1) * 6 + 4 ))
grep -q "^replayed $want records$" "$tmp/g.out" || fail "the app replayed: $(cat "$tmp/g.out")"

# 1. what became of each replayed record. Mapped: attn, mlp, the copy and the node-API kernel
#    of the R replays before the exec update, and 0xe2's mlp_kernel twice. Not recorded: the
#    child graph's kernel, R + 1 times. Made outside a traced call: driver_kernel, R times
#    (its last replay is after the exec update). Updated: 0xe2's attn_kernel (SetParams) twice,
#    and the last replay of 0xe1 but its child kernel (5). Each of the 8 copies is announced
#    as CUPTI 13 does (seen on the GPU machine): CREATED outside any call, then CLONED; the
#    copy's CREATED must not stand for the copy (a report that takes it finds no call).
declare -A fate=( ["replayed records"]=$want ["under the capture stack"]=$(( 4 * R + 2 ))
	["node not recorded"]=$(( R + 1 )) ["node made outside a traced call"]=$R
	["node updated after capture"]=7 ["node records"]=24
	[gpu_graph_node]=24 [graph_nodes]=14 [graph_nodes_no_call]=9 [graph_clones]=8
	[graph_updates]=2 [gpu_launch]=$(( 5 + R + 3 )) )
for k in "${!fate[@]}"; do
	got=$(info_val "$tmp/g.xpu" "$k")
	[ "$got" = "${fate[$k]}" ] || fail "info: $k: want ${fate[$k]}, got '${got}'"
done
unmapped=$(( want - 4 * R - 2 ))
warn=$("$B/xpu-report" -F folded "$tmp/g.xpu" 2>&1 >/dev/null)
[ "$(grep -c "^xpu-report: warning: $unmapped GPU records replayed from CUDA graphs stay under their replay's stack only" <<<"$warn")" = 1 ] ||
	fail "the unmapped records are not said once: $warn"

rep "$tmp/g.xpu" | grep -q "^# graphs:    $(( 4 * R + 2 )) of $want GPU records replayed from CUDA graphs are under the stack that captured their node" ||
	fail "text header: $(rep "$tmp/g.xpu" | grep '^# graphs')"

# 2. folded, GPU view, microseconds (each kernel 2 us, the copy 0.7 us): under the replay's
#    stack, the marker, then the capture stack from where it leaves the replay's
rep -F folded --view=gpu --weight=time "$tmp/g.xpu" >"$tmp/g.folded"
expect() {
	grep -qE "$1" "$2" || fail "$3: no line like '$1' in: $(cat "$2")"
}
expect ';main;replay_loop;\[graph\] captured;capture_model;capture_attention;\[gpu\] attn_kernel 20$' \
	"$tmp/g.folded" "stream-captured kernel"
expect ';main;replay_loop;\[graph\] captured;capture_model;capture_mlp;\[gpu\] mlp_kernel 20$' \
	"$tmp/g.folded" "stream-captured kernel"
expect ';main;replay_loop;\[graph\] captured;capture_model;capture_mlp;\[gpu\] memcpy DtoD 7$' \
	"$tmp/g.folded" "stream-captured copy"
expect ';main;replay_loop;\[graph\] captured;build_by_node_api;\[gpu\] node_api_kernel 20$' \
	"$tmp/g.folded" "node-API kernel"
expect ';main;replay_second;\[graph\] captured;capture_model;capture_mlp;\[gpu\] mlp_kernel 4$' \
	"$tmp/g.folded" "the second exec graph's unchanged node"
# what does not map stays under the replay alone, never under a capture site
expect ';main;replay_loop;\[gpu\] driver_kernel 22$' "$tmp/g.folded" "node without a traced call"
expect ';main;replay_loop;\[gpu\] child_kernel 22$' "$tmp/g.folded" "child graph kernel"
expect ';main;replay_loop;\[gpu\] attn_kernel 2$' "$tmp/g.folded" "after cudaGraphExecUpdate"
expect ';main;replay_second;\[gpu\] attn_kernel 4$' "$tmp/g.folded" "after SetParams"
! grep -E '\[graph\] captured.*\[gpu\] (driver|child)_kernel' "$tmp/g.folded" ||
	fail "unmappable work got a capture site"
[ "$(grep -c '\[graph\] captured' "$tmp/g.folded")" = 5 ] || fail "want 5 captured lines: $(cat "$tmp/g.folded")"

# 3. capture-first: the capture stack, '[graph] replayed', then the replay's own frames;
#    replay-only: as before 1.12. The weights are the same in all three orders
rep -F folded --view=gpu --weight=time --cuda-graphs=capture-first "$tmp/g.xpu" >"$tmp/c.folded"
expect ';main;capture_model;capture_attention;\[graph\] replayed;replay_loop;\[gpu\] attn_kernel 20$' \
	"$tmp/c.folded" "capture-first"
rep -F folded --view=gpu --weight=time --cuda-graphs=replay-only "$tmp/g.xpu" >"$tmp/r.folded"
! grep -q '\[graph\]' "$tmp/r.folded" || fail "replay-only still has graph frames"
expect ';main;replay_loop;\[gpu\] attn_kernel 22$' "$tmp/r.folded" "replay-only"
sum() { awk '{ s += $NF } END { print s }' "$1"; }
[ "$(sum "$tmp/g.folded")" = "$(sum "$tmp/c.folded")" ] && [ "$(sum "$tmp/g.folded")" = "$(sum "$tmp/r.folded")" ] ||
	fail "weights differ between orders: $(sum "$tmp/g.folded") $(sum "$tmp/c.folded") $(sum "$tmp/r.folded")"
"$B/xpu-report" --cuda-graphs=bogus "$tmp/g.xpu" >/dev/null 2>"$tmp/bad.err" &&
	fail "--cuda-graphs=bogus accepted"
grep -q "unknown --cuda-graphs 'bogus'" "$tmp/bad.err" || fail "bad --cuda-graphs: $(cat "$tmp/bad.err")"

# 4. chrome and jsonl: the capture site of each replayed record (the program's own innermost
#    frame of the capture stack), or why there is none
printf '%s\n' "$R \"capture_site\":\"build_by_node_api\"" "$R \"capture_site\":\"capture_attention\"" \
	"$(( 2 * R + 2 )) \"capture_site\":\"capture_mlp\"" \
	"$R \"capture_site_unknown\":\"node made outside a traced call\"" \
	"$(( R + 1 )) \"capture_site_unknown\":\"node not recorded\"" \
	"7 \"capture_site_unknown\":\"node updated after capture\"" >"$tmp/want.sites"
for fmt in chrome jsonl; do
	rep -F $fmt "$tmp/g.xpu" | grep -o '"capture_site[a-z_]*":"[^"]*"' | LC_ALL=C sort |
		uniq -c | sed 's/^ *//' >"$tmp/$fmt.sites"
	diff "$tmp/want.sites" "$tmp/$fmt.sites" >"$tmp/$fmt.diff" ||
		fail "$fmt capture sites: $(cat "$tmp/$fmt.diff")"
done
rep -F jsonl "$tmp/g.xpu" | grep '"name":"attn_kernel"' | grep -q '"graph_node_id":513,"capture_correlation_id":1,"capture_site":"capture_attention"' ||
	fail "jsonl: the first node's kernel lacks its node and capture call: $(rep -F jsonl "$tmp/g.xpu" | grep -m1 attn_kernel)"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' <(rep -F chrome "$tmp/g.xpu") ||
	fail "chrome output is not JSON"

# 5. XPU_CUPTI_GRAPH_NODES=0: no node callbacks, no node records; every replayed record is
#    under its replay's stack and counted as not recorded
XPU_CUPTI_GRAPH_NODES=0 "$B/xpu-record" -o "$tmp/off.xpu" -- "${app[@]}" $R >/dev/null 2>"$tmp/off.err" ||
	fail "recording with XPU_CUPTI_GRAPH_NODES=0 failed: $(tail -2 "$tmp/off.err")"
[ -z "$(info_val "$tmp/off.xpu" gpu_graph_node)" ] || fail "XPU_CUPTI_GRAPH_NODES=0 still records nodes"
[ "$(info_val "$tmp/off.xpu" "node not recorded")" = $want ] ||
	fail "XPU_CUPTI_GRAPH_NODES=0: want $want not recorded: $(rep -F info "$tmp/off.xpu" | sed -n '/^cuda graphs/,/^[a-z]/p')"
! rep -F folded "$tmp/off.xpu" | grep -q '\[graph\]' || fail "XPU_CUPTI_GRAPH_NODES=0: graph frames"
# the same from xpu-record's option, which the target gets as XPU_CUDA_GRAPHS=replay
"$B/xpu-record" --cuda-graphs=replay -o "$tmp/rp.xpu" -- "${app[@]}" $R >/dev/null 2>"$tmp/rp.err" ||
	fail "recording with --cuda-graphs=replay failed: $(tail -2 "$tmp/rp.err")"
[ -z "$(info_val "$tmp/rp.xpu" gpu_graph_node)" ] && [ "$(info_val "$tmp/rp.xpu" gpu_kernel)" = $(( want - R - 1 )) ] ||
	fail "--cuda-graphs=replay: $(info_val "$tmp/rp.xpu" gpu_graph_node) node records, $(info_val "$tmp/rp.xpu" gpu_kernel) kernels"
"$B/xpu-record" --cuda-graphs=bogus -o "$tmp/x.xpu" -- true 2>&1 | grep -q "expected node, replay or graph" ||
	fail "xpu-record --cuda-graphs=bogus is not refused"


# 6. a backward pass captured in a graph (8 MmBackward0 evaluations, each launch captured),
#    replayed R times: each replayed kernel under replay_backward, '[graph] captured', then the
#    forward stack of its node (forward_ops, fake_op), '[backward] MmBackward0' and the
#    engine's frames down to the captured launch
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -o "$tmp/libtorch_cpu.so" \
	tests/gpu/mock/fake_libtorch.c || fail "cannot build the fake libtorch_cpu.so"
FAKE_TORCH="$tmp/libtorch_cpu.so" "$B/xpu-record" -o "$tmp/t.xpu" -- "${app[@]}" $R \
	>"$tmp/t.out" 2>"$tmp/t.err" || fail "recording the captured backward failed: $(tail -2 "$tmp/t.err")"
grep -q "^replayed $(( 8 * R )) records$" "$tmp/t.out" || fail "backward replays: $(cat "$tmp/t.out")"
rep -F folded --view=gpu --weight=time "$tmp/t.xpu" >"$tmp/t.folded"
expect ";main;replay_backward;\[graph\] captured;forward_ops;fake_op;\[backward\] MmBackward0;torch::autograd::Engine::evaluate_function\(.*\);backward_launch_captured;\[gpu\] bw_kernel $(( 16 * R ))$" \
	"$tmp/t.folded" "captured backward"
[ "$(info_val "$tmp/t.xpu" "under the capture stack")" = $(( 8 * R )) ] ||
	fail "captured backward: $(rep -F info "$tmp/t.xpu" | sed -n '/^cuda graphs/,/^[a-z]/p')"
[ "$(rep -F chrome "$tmp/t.xpu" | grep -c '"name":"bw_kernel".*"capture_site":"backward_launch_captured".*"backward_node":"MmBackward0"')" = $(( 8 * R )) ] ||
	fail "captured backward: chrome lacks the capture site or the backward node"
echo "ok $NAME"
