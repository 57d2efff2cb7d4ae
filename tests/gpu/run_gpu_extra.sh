#!/bin/bash
# More GPU checks, run as root on the GPU machine after tests/gpu/bundle.sh (like
# run_gpu_checks.sh): several CUDA processes at once, coexistence with PyTorch's own profiler
# (Kineto owns CUPTI then), and the final flush of a target killed by SIGTERM or ended by SIGINT.
#   tests/gpu/run_gpu_extra.sh [OUT_DIR]
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-gpu}}
mkdir -p "$OUT"
BUNDLE=${XPU_BUNDLE:-$(pwd)/.device/bundle}
B=$BUNDLE/build
LIB=$BUNDLE/lib
LIBCUDA=$BUNDLE/lib-cuda
PY=${PYTHON:-python3}
FAILS=0
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
say() { echo "== $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
info() { tool "$B/xpu-report" -F info "$1" 2>/dev/null; }
count() { awk -v k="$2" '$1 == k { print $2 }' <(info "$1"); }
# wait_bounded PID SECONDS: wait for a recorder we signalled; SIGKILL it if it hangs
wait_bounded() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		fail "xpu-record (pid $1) still running $2 s after the signal"
		pkill -KILL -P "$1"
		kill -KILL "$1"
	fi
	wait "$1"
}
ONLY=${XPU_GPU_EXTRA_ONLY:-1234}

# 1. two CUDA processes at once: both connect, every kernel of both has its launch stack
if [[ $ONLY == *1* ]]; then
say "two cuda_pipeline processes at once"
tool "$B/xpu-record" -g dwarf -o "$OUT/two.xpu" -- env -u LD_LIBRARY_PATH \
	LD_LIBRARY_PATH="$LIBCUDA" sh -c "$B/samples/cuda_pipeline & $B/samples/cuda_pipeline; wait" \
	>/dev/null 2>"$OUT/two.err" || fail "recording two processes exited $?"
n=$(info "$OUT/two.xpu" | sed -n '/^gpu processes/,/^[a-z]/p' | grep -c 'connected, flushed')
k=$(count "$OUT/two.xpu" gpu_kernel)
say "  processes connected and flushed: $n, kernels: $k"
[ "$n" = 2 ] || fail "expected 2 CUDA processes connected and flushed, got $n"
[ "$k" = 180 ] || fail "expected 180 kernels (90 each), got $k"
m=$(tool "$B/xpu-report" "$OUT/two.xpu" 2>/dev/null | awk '$1 == "kernels" && NF == 4 { print $4 }')
say "  kernels matched to a launch stack: $m"
[ "$m" = "100.00%" ] || fail "kernels matched: $m"
fi

# 2. PyTorch's own profiler in the target: one of the two subscribers loses, nobody crashes
if [[ $ONLY == *2* ]]; then
say "torch.profiler (Kineto) inside a recorded target"
tool "$B/xpu-record" -o "$OUT/kineto.xpu" -- env -u LD_LIBRARY_PATH \
	"$PY" bench/gpu/torch_bench.py kineto 20 >"$OUT/kineto.out" 2>"$OUT/kineto.err"
rc=$?
say "  exit $rc; $(grep -m1 -iE 'subscriber|cupti' "$OUT/kineto.err" | cut -c1-200)"
[ $rc = 0 ] || fail "the target failed with Kineto active ($rc): $(tail -2 "$OUT/kineto.err")"
s=$(count "$OUT/kineto.xpu" cpu_sample)
say "  cpu samples: ${s:-0}; gpu kernels: $(count "$OUT/kineto.xpu" gpu_kernel)"
[ "${s:-0}" -gt 100 ] || fail "CPU data missing with Kineto active"
fi

# 3. SIGTERM to xpu-record: forwarded to a C target that keeps the default action; the
# injected library flushes and says FLUSHED before the target dies of it
if [[ $ONLY == *3* ]]; then
say "SIGTERM to xpu-record recording a long launch loop"
# not through tool(): a shell function in the background is a subshell, and $! would be the
# subshell rather than xpu-record
LD_LIBRARY_PATH="$LIB" "$B/xpu-record" -o "$OUT/term.xpu" -- env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$LIBCUDA" \
	"$B/bench/launch_bench" 1 50000000 >/dev/null 2>"$OUT/term.err" &
rec=$!
sleep 6
kill -TERM $rec
wait_bounded $rec 60
rc=$?
p=$(info "$OUT/term.xpu" | sed -n '/^gpu processes/,/^[a-z]/p' | grep -c flushed)
k=$(count "$OUT/term.xpu" gpu_kernel)
say "  xpu-record exit $rc; processes flushed: $p; kernels: $k; $(info "$OUT/term.xpu" | sed -n '/^lost/,/^[a-z]/p' | tr -s ' ' | tr '\n' ' ')"
[ "$rc" = 143 ] || fail "xpu-record should exit 143 (target killed by SIGTERM), got $rc"
[ "$p" = 1 ] || fail "the killed target did not flush its GPU records"
[ "${k:-0}" -gt 1000 ] || fail "too few kernels from the killed target: $k"
fi

# 4. SIGINT to a PyTorch target: KeyboardInterrupt, atexit flush
if [[ $ONLY == *4* ]]; then
say "SIGINT to xpu-record recording PyTorch"
# job control on: a script's background job would otherwise start with SIGINT ignored, and
# Python, finding it ignored, would never raise KeyboardInterrupt
set -m
LD_LIBRARY_PATH="$LIB" "$B/xpu-record" -o "$OUT/int.xpu" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100000 \
	"$PY" samples/torch_train.py >/dev/null 2>"$OUT/int.err" &
rec=$!
sleep ${XPU_SIGINT_AFTER_S:-30}
kill -INT $rec
wait_bounded $rec 60
rc=$?
p=$(info "$OUT/int.xpu" | sed -n '/^gpu processes/,/^[a-z]/p' | grep -c flushed)
say "  xpu-record exit $rc; processes flushed: $p; kernels: $(count "$OUT/int.xpu" gpu_kernel)"
[ "$p" = 1 ] || fail "the interrupted PyTorch target did not flush its GPU records"
set +m
fi
rm -f "$OUT"/*.xpu
say "result: $FAILS failure(s)"
exit $FAILS
