#!/usr/bin/env bash
# Autograd nodes that take the stack of their op's launch instead of walking their own
# (bpf/autograd.bpf.h XPU_EV_AG_FROM_LAUNCH), without a GPU or PyTorch: tests/gpu/mock's fake
# CUDA app in its FAKE_TORCH mode drives a stand-in libtorch_cpu.so (tests/gpu/mock/
# fake_libtorch.c: the probed functions, the node counter under PyTorch's names) under the real
# xpu-record. K ops that launch a kernel between making their node and setting it (MmBackward0),
# K views that launch nothing (ViewBackward0) and a warm-up view, then every node evaluated, each
# evaluation launching one kernel. Checks: exactly the K kernel ops' nodes come from their
# launch, none lost, the counter located; each backward kernel under the forward stack of its
# node (forward_kernels or forward_views, then fake_op, then "[backward] CLASS"), and the stacks
# taken from launches cut where the launch left the op's library (no launch_fake_kernel).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_autograd_from_launch
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "no CUPTI headers at $CUDA_HOME"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
tmp=$(mktemp -d)
# KEEP=DIR: copy the trace there before cleaning up, to look at a failure
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O1 -g -fno-omit-frame-pointer -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" \
	tests/gpu/mock/fake_cuda_app.c -ldl || fail "cannot build fake_cuda_app"
# the name xpu-record looks for: a file whose base name starts with libtorch_cpu.so
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -o "$tmp/libtorch_cpu.so" \
	tests/gpu/mock/fake_libtorch.c || fail "cannot build the fake libtorch_cpu.so"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"
app=("$tmp/fake_cuda_app" "$(realpath "$B/libxpu-cupti.so")" "$tmp/libmockcupti.so")
count() { "$B/xpu-report" -F info "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2 }'; }

# 1. K kernel ops, K views, the warm-up view: 2K + 1 nodes, K forward and 2K + 1 backward kernels
K=200
FAKE_TORCH="$tmp/libtorch_cpu.so" "$B/xpu-record" -o "$tmp/t.xpu" -- "${app[@]}" $K \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "bpf(): \|Operation not permitted" "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record exited $rc: $(head -3 "$tmp/err")"
grep -qx "nodes $((2 * K + 1)) launches $((3 * K + 1))" "$tmp/out" ||
	fail "the fake ops did not run: $(cat "$tmp/out") $(head -3 "$tmp/err")"
[ "$(count "$tmp/t.xpu" gpu_kernel)" = $((3 * K + 1)) ] ||
	fail "want $((3 * K + 1)) kernels, got $(count "$tmp/t.xpu" gpu_kernel)"

# 2. the recorder's counts: every node seen, the kernel ops' nodes (and only those) from their launch
# (the probes' programs loaded at the library's first mapping: autograd_programs_loaded)
for want in "autograd_programs_loaded 1" "autograd_nodes $((2 * K + 1))" "autograd_nodes_from_launch $K" \
	"autograd_nodes_launch_lost 0" "autograd_counters_unlocated 0" "autograd_evals $((2 * K + 1))"; do
	read -r key val <<<"$want"
	got=$(count "$tmp/t.xpu" "$key")
	[ "$got" = "$val" ] || fail "$key: want $val, got '${got}' ($(count "$tmp/t.xpu" autograd_nodes) nodes," \
		"$(count "$tmp/t.xpu" autograd_nodes_from_launch) from launch)"
done

# 3. where the kernels are (weight: microseconds of GPU time, 2 per fake kernel)
"$B/xpu-report" -F folded --view=gpu --weight=time "$tmp/t.xpu" >"$tmp/t.folded" 2>"$tmp/rerr" ||
	fail "xpu-report -F folded failed: $(head -1 "$tmp/rerr")"
# backward CLASS FUNC: of the kernels under "[backward] CLASS", the µs in all, those whose forward
# part (the frames before it) holds FUNC, then fake_op right before the [backward] frame; those
# whose forward part holds launch_fake_kernel (the launch's own frames, to be cut)
backward() {
	awk -v cls="[backward] $1" -v fn=";$2;" '
		{ i = index($0, ";" cls ";"); if (!i) next
		  fw = substr($0, 1, i); all += $NF
		  if (index(fw, fn) && substr(fw, length(fw) - 8) == ";fake_op;") under += $NF
		  if (index(fw, "launch_fake_kernel")) uncut += $NF }
		END { print all + 0, under + 0, uncut + 0 }' "$tmp/t.folded"
}
want=$((2 * K))
# the forward kernels themselves: under forward_kernels, fake_op and the launch's frames
fwd=$(awk '!/\[backward\]/ && /;forward_kernels;(.*;)?fake_op;(.*;)?launch_fake_kernel;/ { s += $NF }
	END { print s + 0 }' "$tmp/t.folded")
[ "$fwd" = $want ] || fail "forward kernels: want $want us under forward_kernels;..;fake_op;..;" \
	"launch_fake_kernel, got $fwd: $(head -5 "$tmp/t.folded")"
read -r all under uncut < <(backward MmBackward0 forward_kernels)
[ "$all" = $want ] && [ "$under" = $want ] ||
	fail "MmBackward0: want $want us of backward kernels, all under forward_kernels;..;fake_op;" \
		"[backward] MmBackward0, got $all us, $under under it: $(grep -m3 MmBackward0 "$tmp/t.folded")"
[ "$uncut" = 0 ] || fail "MmBackward0: $uncut us of backward kernels keep the launch's frames in" \
	"their forward stack: $(grep -m1 '\[backward\] MmBackward0' "$tmp/t.folded")"
# views: K under forward_views, and the warm-up's under main
read -r all under uncut < <(backward ViewBackward0 forward_views)
[ "$all" = $((want + 2)) ] && [ "$under" = $want ] && [ "$uncut" = 0 ] ||
	fail "ViewBackward0: want $((want + 2)) us of backward kernels, $want under forward_views;..;" \
		"fake_op;[backward] ViewBackward0, none with launch_fake_kernel; got $all, $under, $uncut:" \
		"$(grep -m3 ViewBackward0 "$tmp/t.folded")"
# no backward kernel left out of its node
lost=$(awk '/evaluate_function/ && !/\[backward\]/ { s += $NF } END { print s + 0 }' "$tmp/t.folded")
[ "$lost" = 0 ] || fail "$lost us of backward kernels without a [backward] frame"
echo "PASS $NAME: $((2 * K + 1)) nodes, $K from their launch, none lost; backward kernels under" \
	"forward_kernels;..;fake_op;[backward] MmBackward0 (launch frames cut) and" \
	"forward_views;..;fake_op;[backward] ViewBackward0"
