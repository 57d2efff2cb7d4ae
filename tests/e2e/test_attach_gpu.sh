#!/usr/bin/env bash
# xpu-record -p on a running CUDA program: tests/gpu/mock/fake_cuda_app started unprofiled
# (FAKE_CUDA_NO_INJECT=1) over the fake libcupti, made to look like a CUDA process by a stand-in
# libcuda.so.1. The recorder loads libxpu-cupti.so into it through ptrace and starts CUPTI there
# mid-run; at its end (-d) it asks the library to stop. Checks: kernels recorded and all joined
# to their launch stacks; the GPU process says "attached mid-run" then "detached"; a later -p
# records the GPU again, one made meanwhile says the process is taken; the program runs on
# with no callbacks into the library outside the recordings (CUPTI finalized) and ends
# normally; -p of two processes records both; a target that blocks every signal is attached
# all the same; one under a tracer is said to be and left alone; one that exits while attached
# ends the recording; -p of a process without CUDA records its CPU only and says so, naming
# its descendants that use CUDA (a launcher's ranks).
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_attach_gpu
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF and ptrace"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
[ -f "$CUDA_HOME/include/cupti.h" ] || skip "no CUPTI headers at $CUDA_HOME"
tmp=$(mktemp -d)
app_pid=
cleanup() {
	[ -n "$app_pid" ] && kill -9 $app_pid 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$tmp"/*.err "$KEEP"/ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O1 -g -fno-omit-frame-pointer -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" \
	tests/gpu/mock/fake_cuda_app.c -ldl || fail "cannot build fake_cuda_app"
echo 'int fake_libcuda;' | cc -shared -fPIC -x c -o "$tmp/libcuda.so.1" - || fail "cannot build libcuda.so.1"
LIB=$(realpath "$B/libxpu-cupti.so")
info() { "$B/xpu-report" -F info "$1" 2>/dev/null; }
# wait_said FILE TEXT WHAT: until FILE has TEXT, 60 s at most (the recorder's start takes the
# verifier seconds on a loaded machine); fails saying what it waited for, never goes on silently
wait_said() {
	local _
	for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	fail "waited 60 s for $3 ('$2' in $(basename "$1")): $(tail -3 "$1" 2>/dev/null)"
}
count() { info "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# the program runs unprofiled; the library it will be given finds the fake libcupti
XPU_CUPTI_LIB="$tmp/libmockcupti.so" FAKE_CUDA_NO_INJECT=1 FAKE_CUDA_LIBCUDA="$tmp/libcuda.so.1" \
	"$tmp/fake_cuda_app" "$LIB" "$tmp/libmockcupti.so" 0 catch-sigint >"$tmp/app.out" 2>&1 &
app_pid=$!
sleep 0.5
kill -0 "$app_pid" 2>/dev/null || fail "the fake CUDA program did not start: $(cat "$tmp/app.out")"

# 1. attach for 2 s
"$B/xpu-record" -v -p "$app_pid" -d 2 -o "$tmp/a.xpu" >"$tmp/a.out" 2>"$tmp/a.err" ||
	fail "xpu-record -p failed: $(tail -3 "$tmp/a.err")"
grep -q "CUPTI started in pid $app_pid mid-run" "$tmp/a.err" ||
	fail "no GPU attach said: $(grep -i 'gpu' "$tmp/a.err" | tail -3)"
k=$(count "$tmp/a.xpu" gpu_kernel); l=$(count "$tmp/a.xpu" gpu_launch)
[ "${k:-0}" -gt 100 ] && [ "${l:-0}" -gt 100 ] ||
	fail "expected kernels and launches from the attach window, got ${k:-0} and ${l:-0}"
"$B/xpu-report" "$tmp/a.xpu" 2>/dev/null | grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%' ||
	fail "not every kernel was joined to its launch stack: $("$B/xpu-report" "$tmp/a.xpu" 2>/dev/null | grep -E '^  kernels')"
"$B/xpu-report" -F folded --view=gpu "$tmp/a.xpu" 2>/dev/null | grep -q 'launch_fake_kernel' ||
	fail "the launch stacks do not reach the program's launch function"
states=$("$B/xpu-report" "$tmp/a.xpu" 2>/dev/null | sed -n '/^# gpu processes/,/^#/p' | grep -E "^ +$app_pid ")
case $states in
*"attached mid-run"*detached*flushed*) ;;
*) fail "the GPU process's states: '$states' (want attached mid-run, ..., detached, flushed)" ;;
esac

# 2. the program runs on, the library no longer called back, CUPTI finalized
sleep 0.5
kill -0 "$app_pid" 2>/dev/null || fail "the program died after the detach: $(cat "$tmp/app.out")"

# 3. a later -p of the same process (the library is loaded there now) records its GPU again;
#    one made while that recording runs says the process already reports to a recorder
# b runs until c is done (SIGINT then): with a fixed -d, a start of c slowed by a busy machine
# could come after b had detached, and c would find the process free
"$B/xpu-record" -v -p "$app_pid" -d 120 -o "$tmp/b.xpu" >"$tmp/b.out" 2>"$tmp/b.err" &
rec_b=$!
# the second recording runs once the first has started CUPTI (its start may take a while)
wait_said "$tmp/b.err" "CUPTI started" "the second attach to start CUPTI"
"$B/xpu-record" -p "$app_pid" -d 1 -o "$tmp/c.xpu" >"$tmp/c.out" 2>"$tmp/c.err" ||
	fail "a concurrent xpu-record -p failed: $(tail -3 "$tmp/c.err")"
kill -INT $rec_b
# ended by SIGINT, as ^C would: 130, as the README says
wait $rec_b; rc_b=$?
[ $rc_b = 0 ] || [ $rc_b = 130 ] || fail "the second xpu-record -p failed: $(tail -3 "$tmp/b.err")"
grep -q "CUPTI started in pid $app_pid mid-run" "$tmp/b.err" ||
	fail "a later attach did not start CUPTI again: $(grep -i 'gpu' "$tmp/b.err" | tail -3)"
k2=$(count "$tmp/b.xpu" gpu_kernel); l2=$(count "$tmp/b.xpu" gpu_launch)
[ "${k2:-0}" -gt 100 ] || fail "a later attach recorded ${k2:-0} kernels"
grep -q "already reports to a recorder" "$tmp/c.err" ||
	fail "a concurrent attach did not say the process is taken: $(tail -3 "$tmp/c.err")"
[ "$(count "$tmp/c.xpu" cpu_sample)" -gt 0 ] 2>/dev/null ||
	fail "the concurrent attach recorded no CPU samples"

kill -INT "$app_pid"
wait "$app_pid"
rc=$?
app_pid=
[ $rc -eq 0 ] || fail "the program exited $rc after the attach: $(tail -3 "$tmp/app.out")"
launches=$(awk '$1 == "launches" { print $2 }' "$tmp/app.out")
read -r _ callbacks _ finalized < <(grep '^callbacks ' "$tmp/app.out")
[ -n "$launches" ] && [ -n "${callbacks:-}" ] || fail "the program's end lines: $(cat "$tmp/app.out")"
[ "$finalized" = 1 ] || fail "CUPTI was not finalized at the detach"
# every callback fires the launch marker, so the launches recorded are the callbacks made
[ "$callbacks" -ge $((l + l2)) ] && [ "$callbacks" -le $((l + l2 + (l + l2) / 100)) ] &&
	[ "$callbacks" -lt "$launches" ] ||
	fail "callbacks $callbacks: want the $l + $l2 recorded launches (none between or after the attaches) of all $launches"

# 4. -p of two processes at once (the ranks of a host): both recorded, GPU included
start_app() {
	XPU_CUPTI_LIB="$tmp/libmockcupti.so" FAKE_CUDA_NO_INJECT=1 FAKE_CUDA_LIBCUDA="$tmp/libcuda.so.1" \
		"$tmp/fake_cuda_app" "$LIB" "$tmp/libmockcupti.so" 0 catch-sigint >"$tmp/$1.out" 2>&1 &
}
start_app r0; r0=$!
start_app r1; r1=$!
app_pid="$r0 $r1"
sleep 0.5
"$B/xpu-record" -p "$r0,$r1" -d 1 -o "$tmp/r.xpu" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "xpu-record -p $r0,$r1 failed: $(tail -3 "$tmp/r.err")"
ranks=$("$B/xpu-report" "$tmp/r.xpu" 2>/dev/null | sed -n '/^# gpu processes/,/^#/p' |
	grep -cE "^ +($r0|$r1) .*attached mid-run, detached, flushed")
[ "$ranks" = 2 ] || fail "-p of two processes: $ranks of 2 attached and detached"
kill -INT $r0 $r1
wait $r0 && wait $r1 || fail "a process exited badly after the two-process attach"
app_pid=

# 5. a target that blocks every signal: attached all the same (ptrace needs none of them)
FAKE_CUDA_BLOCK_SIGNALS=1 start_app blocked; blocked=$!
app_pid=$blocked
sleep 0.5
"$B/xpu-record" -v -p "$blocked" -d 1 -o "$tmp/s.xpu" >"$tmp/s.out" 2>"$tmp/s.err" ||
	fail "xpu-record -p of a signal-blocking target failed: $(tail -3 "$tmp/s.err")"
grep -q "CUPTI started in pid $blocked mid-run" "$tmp/s.err" ||
	fail "a signal-blocking target was not attached: $(grep -i gpu "$tmp/s.err" | tail -2)"
[ "$(count "$tmp/s.xpu" gpu_kernel)" -gt 0 ] 2>/dev/null || fail "no kernels from the signal-blocking target"
kill -0 "$blocked" || fail "the signal-blocking target died"

# 6. one already under a tracer (a debugger): said, CPU recorded, the target untouched
if command -v strace >/dev/null; then
	strace -p "$blocked" -e trace=none -o /dev/null &
	tracer=$!
	sleep 0.5
	"$B/xpu-record" -p "$blocked" -d 1 -o "$tmp/t.xpu" >"$tmp/t.out" 2>"$tmp/t.err" ||
		fail "xpu-record -p of a traced target failed: $(tail -3 "$tmp/t.err")"
	grep -q "already traced" "$tmp/t.err" ||
		fail "a traced target was not said to be: $(tail -2 "$tmp/t.err")"
	kill "$tracer"; wait "$tracer" 2>/dev/null
fi
kill -9 "$blocked"; wait "$blocked" 2>/dev/null
app_pid=

# 7. a target that exits while it is attached to: the recording ends, nothing hangs
start_app gone; gone=$!
app_pid=$gone
sleep 0.5
# the target ends once CUPTI runs in it (however long the recorder takes to start); -d 90
# only bounds a recording that would not end with its target
( for _ in $(seq 600); do grep -q "CUPTI started" "$tmp/g.err" 2>/dev/null && break; sleep 0.1; done
  grep -q "CUPTI started" "$tmp/g.err" 2>/dev/null || : >"$tmp/g.nostart"
  sleep 0.3; kill -INT "$gone" ) &
timeout 120 "$B/xpu-record" -v -p "$gone" -d 90 -o "$tmp/g.xpu" >"$tmp/g.out" 2>"$tmp/g.err"
rc=$?
[ -e "$tmp/g.nostart" ] && fail "waited 60 s for the attach to start CUPTI in the target: $(tail -3 "$tmp/g.err")"
[ $rc -ne 124 ] || fail "xpu-record hung on a target that exited while attached"
wait "$gone" || fail "the target did not end normally while attached"
app_pid=
[ "$(count "$tmp/g.xpu" gpu_kernel)" -gt 0 ] 2>/dev/null ||
	fail "no kernels from a target that exited while attached: $(tail -2 "$tmp/g.err")"

# 8. a process without CUDA: CPU only, said (it sleeps longer than any start of the recorder)
sleep 120 &
cpu_pid=$!
"$B/xpu-record" -p "$cpu_pid" -d 1 -o "$tmp/d.xpu" >"$tmp/d.out" 2>"$tmp/d.err" ||
	fail "xpu-record -p of a CPU process failed: $(tail -3 "$tmp/d.err")"
grep -q "has not loaded CUDA (libcuda.so): CPU only" "$tmp/d.err" ||
	fail "no 'CPU only' said for a process without CUDA: $(tail -3 "$tmp/d.err")"
kill "$cpu_pid" 2>/dev/null
wait "$cpu_pid" 2>/dev/null

# 9. a launcher (here a shell) whose child uses CUDA: CPU only for the launcher, and the child
#    named, as -p of torchrun's agent instead of its ranks would be
sh -c "XPU_CUPTI_LIB='$tmp/libmockcupti.so' FAKE_CUDA_NO_INJECT=1 FAKE_CUDA_LIBCUDA='$tmp/libcuda.so.1' \
	'$tmp/fake_cuda_app' '$LIB' '$tmp/libmockcupti.so' 0 catch-sigint >'$tmp/child.out' 2>&1; :" &
sh_pid=$!
# a busy machine may take a while to start it: up to 60 s, then a clear failure
for _ in $(seq 600); do child=$(pgrep -P "$sh_pid" | head -1); [ -n "$child" ] && break; sleep 0.1; done
[ -n "$child" ] || fail "the launcher's child did not start within 60 s"
app_pid=$child
for _ in $(seq 600); do grep -q libcuda "/proc/$child/maps" 2>/dev/null && break; sleep 0.1; done
grep -q libcuda "/proc/$child/maps" 2>/dev/null || fail "the launcher's child did not map libcuda.so.1 within 60 s"
"$B/xpu-record" -p "$sh_pid" -d 1 -o "$tmp/s.xpu" >"$tmp/s.out" 2>"$tmp/s.err" ||
	fail "xpu-record -p of a launcher failed: $(tail -3 "$tmp/s.err")"
grep -q "pid $sh_pid has not loaded CUDA (libcuda.so): CPU only; its descendant $child has loaded it: -p $child records its GPU work" "$tmp/s.err" ||
	fail "-p of a launcher does not name its CUDA child $child: $(grep -i cuda "$tmp/s.err")"
kill -INT "$child" 2>/dev/null
wait "$sh_pid" 2>/dev/null
app_pid=

echo "PASS $NAME: $k and $k2 kernels in two attaches (2 s, and until a third attach was done), all joined; $callbacks of $launches launches called back, none outside them"
