#!/usr/bin/env bash
# The whole GPU path without a GPU: tests/gpu/mock/fake_cuda_app loads libxpu-cupti.so over a
# fake libcupti and "launches kernels" under the real xpu-record (injection environment, the
# marker's uprobe, the socket, the writer, the report). Checks: every kernel joined to its launch
# stack; and the final flush when the target dies of SIGTERM or ends on SIGINT.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_gpu_mock_record
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "no CUPTI headers at $CUDA_HOME"
tmp=$(mktemp -d)
# KEEP=DIR: copy the traces there before cleaning up, to look at a failure
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O1 -g -fno-omit-frame-pointer -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" \
	tests/gpu/mock/fake_cuda_app.c -ldl || fail "cannot build fake_cuda_app"
LIB=$(realpath "$B/libxpu-cupti.so")
# the fake libcupti stands in for the real one; the library's own search is skipped
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"
app=("$tmp/fake_cuda_app" "$LIB" "$tmp/libmockcupti.so")
info() { "$B/xpu-report" -F info "$1" 2>/dev/null; }
count() { info "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
source tests/lib/record_wait.sh
flushed() { info "$1" | sed -n '/^gpu processes/,/^[a-z]/p' | grep -c 'flushed'; }

# 1. a clean run: N kernels, N launches, all joined, the process flushed
N=3000
"$B/xpu-record" -o "$tmp/a.xpu" -- "${app[@]}" $N >"$tmp/a.out" 2>"$tmp/a.err" ||
	fail "recording the fake CUDA app failed: $(tail -1 "$tmp/a.err")"
k=$(count "$tmp/a.xpu" gpu_kernel); l=$(count "$tmp/a.xpu" gpu_launch)
[ "$k" = $N ] && [ "$l" = $N ] || fail "expected $N kernels and launches, got ${k:-0} and ${l:-0}"
"$B/xpu-report" "$tmp/a.xpu" 2>/dev/null | grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%' ||
	fail "not every kernel was joined to its launch stack"
"$B/xpu-report" -F folded --view=gpu --weight=time "$tmp/a.xpu" 2>/dev/null |
	grep -qE ';main;launch_fake_kernel;(.*;)?\[gpu\] fake_kernel\(float\*\) ' ||
	fail "kernels are not under main;launch_fake_kernel"
[ "$(flushed "$tmp/a.xpu")" = 1 ] || fail "the process did not report its final flush"

# 1b. GPU memory: 10 allocations (one per 100 launches), 5 of them freed; each allocation and
#     release call gets its launch stack, so gpu_launch counts them too
FAKE_CUDA_ALLOCS=100 "$B/xpu-record" -o "$tmp/m.xpu" -- "${app[@]}" 1000 >/dev/null 2>"$tmp/m.err" ||
	fail "recording the fake CUDA app with allocations failed: $(tail -1 "$tmp/m.err")"
m=$(count "$tmp/m.xpu" gpu_memory); l=$(count "$tmp/m.xpu" gpu_launch)
[ "$m" = 15 ] && [ "$l" = 1015 ] ||
	fail "expected 15 memory records and 1015 launches, got ${m:-0} and ${l:-0}"
"$B/xpu-report" "$tmp/m.xpu" 2>/dev/null >"$tmp/m.txt"
grep -qE '^ +0 +10 +5 +10\.000 +6\.000 +5\.000$' "$tmp/m.txt" ||
	fail "memory by device: want 10 allocs, 5 frees, 10 MiB, peak 6, 5 at the end: $(grep -A2 '# gpu memory' "$tmp/m.txt")"
grep -qE '^ +10\.000 +10 +5\.000 +5 .*main > allocate_fake' "$tmp/m.txt" ||
	fail "allocations are not under main > allocate_fake: $(grep -A2 'allocating call paths' "$tmp/m.txt")"
# the memory view: the peak is 6 MiB, reached by the 10th allocation (allocations 0, 2, 4, 6
# and 8 still held, 9 just made): exactly 6 x 1 MiB under allocate_fake, in folded and svg
"$B/xpu-report" -F folded --view=memory "$tmp/m.xpu" 2>/dev/null >"$tmp/m.folded"
[ "$(awk '{ s += $NF } END { print s + 0 }' "$tmp/m.folded")" = 6291456 ] ||
	fail "memory view: want 6291456 bytes at the peak, got: $(cat "$tmp/m.folded")"
grep -qE ';main;allocate_fake;.*\[gpu\] alloc device 6291456$' "$tmp/m.folded" ||
	fail "memory view: the peak's bytes are not under main;allocate_fake: $(cat "$tmp/m.folded")"
"$B/xpu-report" -F folded --view=memory --time-range=0,0.000001 "$tmp/m.xpu" 2>/dev/null >"$tmp/m0.folded"
[ ! -s "$tmp/m0.folded" ] || fail "memory view ignores --time-range: $(cat "$tmp/m0.folded")"
"$B/xpu-report" -F svg --view=memory "$tmp/m.xpu" 2>/dev/null | grep -q '6291456 bytes' ||
	fail "the memory view's svg does not show the 6291456 bytes at its root"
# pprof of the memory view: space/bytes, the same 6 MiB under the same call paths as folded
if command -v go >/dev/null && "$B/xpu-report" -F pprof --view=memory -o "$tmp/m.pb.gz" \
	"$tmp/m.xpu" 2>"$tmp/m.perr"; then
	out=$(python3 tests/unit/pprof_shares.py "$B/xpu-report" go "$tmp" "$tmp" m.xpu --view=memory) ||
		fail "pprof of the memory view: $out"
	GOCACHE=$tmp/gocache go tool pprof -top -unit=B "$tmp/m.pb.gz" 2>&1 |
		grep -q 'accounting for 6291456B, 100% of 6291456B total' ||
		fail "pprof of the memory view does not hold 6291456 bytes"
elif ! grep -q 'not in this build' "$tmp/m.perr" 2>/dev/null && command -v go >/dev/null; then
	fail "xpu-report -F pprof --view=memory: $(head -1 "$tmp/m.perr")"
fi
# chrome: a counter per device of the bytes allocated, rising to 6 MiB and ending at 5 MiB
"$B/xpu-report" -F chrome "$tmp/m.xpu" 2>/dev/null >"$tmp/m.json"
python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "gpu memory"]
v = [e["args"]["allocated_bytes"] for e in sorted(ev, key=lambda e: e["ts"])]
sys.exit(0 if len(v) == 15 and max(v) == 6 << 20 and v[-1] == 5 << 20 and
         all(e["pid"] == ev[0]["pid"] for e in ev) else "counter: %r" % v)' "$tmp/m.json" ||
	fail "chrome: the gpu memory counter is not 15 steps to a 6 MiB peak and 5 MiB at the end"
# jsonl: 15 memory events (10 alloc, 5 free) with their stacks' threads
"$B/xpu-report" -F jsonl "$tmp/m.xpu" 2>/dev/null >"$tmp/m.jsonl"
[ "$(grep -c '"type":"memory","ts":[0-9]*,"pid":[0-9]*,"tid":[1-9][0-9]*,"op":"alloc"' "$tmp/m.jsonl")" = 10 ] &&
	[ "$(grep -c '"type":"memory".*"op":"free"' "$tmp/m.jsonl")" = 5 ] ||
	fail "jsonl: want 10 allocations and 5 releases with their thread: $(grep -m3 '"memory"' "$tmp/m.jsonl")"

# 1b'. API records: each launch makes a cudaLaunchKernel record and a cudaGetLastError one.
#     By default only the calls the launch callbacks take are recorded (CUPTI's per-API
#     switches), all with XPU_CUPTI_API=all, none with =none, the launches' own made by the
#     launch callbacks with =callbacks; a bad value warns, keeps the default
for api in default all none callbacks bogus; do
	case $api in default|bogus|callbacks) want=400 ;; all) want=800 ;; none) want=0 ;; esac
	env $([ $api = default ] || echo XPU_CUPTI_API=$api) FAKE_CUDA_API=1 "$B/xpu-record" -g fp \
		-o "$tmp/api.xpu" -- "${app[@]}" 400 >/dev/null 2>"$tmp/api.err" ||
		fail "XPU_CUPTI_API=$api: recording failed: $(tail -1 "$tmp/api.err")"
	got=$(count "$tmp/api.xpu" gpu_api)
	[ "${got:-0}" = $want ] || fail "XPU_CUPTI_API=$api: want $want API records, got ${got:-0}"
	[ "$(count "$tmp/api.xpu" gpu_kernel)" = 400 ] || fail "XPU_CUPTI_API=$api: kernels lost"
done
grep -q 'XPU_CUPTI_API=bogus: not all, launches, callbacks, runtime or none: using launches' "$tmp/api.err" ||
	fail "a bad XPU_CUPTI_API value is not reported: $(head -2 "$tmp/api.err")"

# 1b''. --no-launch-stacks: GPU activity only; the kernels all there, no launch callbacks, so
#     no launch records (no marker call, no uprobe hit) and no API records, even where the user's
#     environment asks for every API call; refused with -p
XPU_CUPTI_API=all FAKE_CUDA_API=1 "$B/xpu-record" --no-launch-stacks -o "$tmp/nl.xpu" -- \
	"${app[@]}" 400 >/dev/null 2>"$tmp/nl.err" ||
	fail "--no-launch-stacks: recording failed: $(tail -1 "$tmp/nl.err")"
[ "$(count "$tmp/nl.xpu" gpu_kernel)" = 400 ] || fail "--no-launch-stacks: kernels lost"
[ "$(count "$tmp/nl.xpu" gpu_launch)" = "" ] && [ "$(count "$tmp/nl.xpu" gpu_api)" = "" ] ||
	fail "--no-launch-stacks: want no launch or API records, got $(count "$tmp/nl.xpu" gpu_launch) and $(count "$tmp/nl.xpu" gpu_api)"
"$B/xpu-record" --no-launch-stacks -p $$ -o "$tmp/nlp.xpu" >/dev/null 2>"$tmp/nlp.err" &&
	fail "--no-launch-stacks with -p was accepted"
grep -q 'not with -p' "$tmp/nlp.err" || fail "--no-launch-stacks with -p: $(cat "$tmp/nlp.err")"

# 1c. --driver: each launch makes one ioctl on a file named as a device file, inside its
#     cudaLaunchKernel; the report ties every ioctl to that call
: >"$tmp/fakedev"
FAKE_CUDA_IOCTL="$tmp/fakedev" XPU_DRIVER_TEST_PATHS="$tmp/fakedev" "$B/xpu-record" --driver \
	-o "$tmp/i.xpu" -- "${app[@]}" 300 >/dev/null 2>"$tmp/i.err" ||
	fail "recording with --driver failed: $(tail -1 "$tmp/i.err")"
[ "$(count "$tmp/i.xpu" driver_ioctl)" = 300 ] || fail "expected 300 ioctls, got $(count "$tmp/i.xpu" driver_ioctl)"
"$B/xpu-report" "$tmp/i.xpu" 2>/dev/null >"$tmp/i.txt"
grep -qE '^ +0xc0104629 +300 .* 300 +NV_ESC_RM_FREE +'"$tmp/fakedev"'$' "$tmp/i.txt" ||
	fail "ioctls by request: $(grep -A2 'by request code' "$tmp/i.txt")"
grep -qE '^ +300 +300 .*cudaLaunchKernel' "$tmp/i.txt" ||
	fail "ioctls are not tied to their cudaLaunchKernel calls: $(grep -A3 'by CUDA API call' "$tmp/i.txt")"
# chrome: each ioctl a slice named by its escape code, inside its cudaLaunchKernel slice
"$B/xpu-report" -F chrome "$tmp/i.xpu" 2>/dev/null >"$tmp/i.json"
python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
io = [e for e in ev if e.get("cat") == "driver"]
api = [e for e in ev if e.get("cat") == "cuda_api" and e["name"] == "cudaLaunchKernel"]
inside = sum(any(a["tid"] == e["tid"] and a["ts"] <= e["ts"] and
                 e["ts"] + e["dur"] <= a["ts"] + a["dur"] for a in api) for e in io)
ok = len(io) == 300 and inside == 300 and all(e["name"] == "NV_ESC_RM_FREE" and
     e["args"]["request"] == "0xc0104629" and e["args"]["ret"] < 0 for e in io)
sys.exit(0 if ok else "%d ioctl slices, %d inside a launch: %r" % (len(io), inside, io[:1]))' "$tmp/i.json" ||
	fail "chrome: ioctl slices are not 300 NV_ESC_RM_FREE slices nested in cudaLaunchKernel"
[ "$("$B/xpu-report" -F jsonl "$tmp/i.xpu" 2>/dev/null | grep -c '"type":"ioctl".*"request":3222292009,"request_name":"NV_ESC_RM_FREE"')" = 300 ] ||
	fail "jsonl: want 300 ioctl lines named NV_ESC_RM_FREE"

# signalled SIGNAL EXPECTED_RC APP_ARGS...: record the endless fake app, send SIGNAL to
# xpu-record 1.5 s after the app started, and check the exit status, the final flush and the
# kernel count. From the app's start, not xpu-record's: its BPF load takes the verifier
# seconds on a loaded machine, and a signal before the app runs tests nothing.
signalled() {
	local sig=$1 want=$2 rc i k l
	shift 2
	# frame-pointer stacks: the endless app launches as fast as it can, and the default mode's
	# 64 KiB of stack copies per launch can overflow the writer queue (counted as lost, but
	# then a kernel's launch record is missing); the point here is the flush, not the stacks
	"$B/xpu-record" -g fp -o "$tmp/s.xpu" -- "${app[@]}" "$@" >/dev/null 2>"$tmp/s.err" &
	rec=$!
	wait_target $rec >/dev/null ||
		{ kill -KILL $rec 2>/dev/null; fail "SIG$sig: xpu-record did not start the app within 30 s: $(tail -2 "$tmp/s.err")"; }
	sleep 1.5
	kill -"$sig" $rec
	# 30 s: the flush is quick, but a loaded machine may run it late; a hang is far longer
	for i in $(seq 300); do kill -0 $rec 2>/dev/null || break; sleep 0.1; done
	kill -0 $rec 2>/dev/null && { kill -KILL $rec; fail "xpu-record still running 30 s after SIG$sig"; }
	wait $rec
	rc=$?
	[ $rc = "$want" ] || fail "SIG$sig: xpu-record should exit $want, got $rc"
	[ "$(flushed "$tmp/s.xpu")" = 1 ] ||
		fail "SIG$sig: the target did not flush: $(head -3 "$tmp/s.err")"
	k=$(count "$tmp/s.xpu" gpu_kernel); l=$(count "$tmp/s.xpu" gpu_launch)
	# A fatal signal can land between a launch's API enter (its stack is recorded) and its
	# kernel, which CUPTI no longer records once the flush has disabled collection: the one
	# launching thread may leave exactly one launch without a kernel. A caught SIGINT may not.
	# Never a kernel without its launch: calls entered after the signal are held, not made.
	[ "${k:-0}" -gt 100 ] && { [ "$k" = "$l" ] ||
		{ [ "$sig" = TERM ] && [ $((l - k)) = 1 ]; }; } ||
		fail "SIG$sig: ${k:-0} kernels for ${l:-0} launches"
}

# 2. SIGTERM to xpu-record: forwarded; the target keeps the default action, so the library
#    flushes, reports, and lets it die of the signal (xpu-record exits 128+15)
signalled TERM 143 0
# 3. SIGINT with a target that catches it and exits normally (as Python does)
signalled INT 0 0 catch-sigint
echo "PASS $NAME: clean run, memory by device and call path, API records per XPU_CUPTI_API, ioctls tied to their API calls, SIGTERM and SIGINT all flushed, every kernel joined to its launch"
