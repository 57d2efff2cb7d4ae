#!/bin/bash
# xpu-record passes SIGINT/SIGTERM on to the launched command (saying so), still finishes the
# trace, and exits with the command's status (128+N when signal N killed it); a command that
# ignores the signal gets SIGTERM 5 s later, and 5 s after that recording stops without it.
set -u
set -m	# own process group per job: background jobs do not start with SIGINT ignored
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_record_signals
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
source "$(dirname "$0")/../lib/record_wait.sh"

# Started with SIGINT ignored (nohup, a script's background job), the targets would inherit
# that and no trap could undo it: run again with the default action, where env can give it.
if trap -p INT | grep -q "''"; then
	[ -z "${XPU_SIGNALS_RESET:-}" ] && env --default-signal=INT true 2>/dev/null &&
		XPU_SIGNALS_RESET=1 exec env --default-signal=INT "$0" "$@"
	skip "started with SIGINT ignored, which the targets would inherit"
fi
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] || fail "run make first ($B/xpu-record)"
tmp=$(mktemp -d) || exit 1
# (sections 7 and 8, in the background, end within their own bounds: waited for first)
trap 'wait; rm -rf "$tmp"' EXIT

# bounded_wait PID: wait's status, or a failure when xpu-record is still running 20 s on
bounded_wait() {
	local i
	for i in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$1" 2>/dev/null; then
		pkill -KILL -P "$1"
		kill -KILL "$1"
		fail "xpu-record still running 20 s after the signal"
	fi
	wait "$1"
}

finalized() {
	# A cleanly finished file ends with the 32-byte trailer starting "XPUEND".
	[ "$(tail -c 32 "$1" | head -c 6)" = "XPUEND" ]
}

# Sections 7 and 8 wait 5 and 10 s for xpu-record's escalation, with the CPU idle: they run
# in the background (each its own job, job control on for its own jobs) while 1-6 run, and
# their output and status are checked at the end.
# 7. ^C to a target that ignores SIGINT: a line says it was forwarded, SIGTERM follows 5 s
#    later (said too), the recording ends well within 15 s with a readable trace
escalate_term() {
	"$B/xpu-record" --no-gpu -o "$tmp/g.xpu" -- sh -c 'trap "" INT; sleep 60' 2>"$tmp/g.err" &
	rec=$!
	wait_target $rec >/dev/null || fail "xpu-record did not start its command"
	sleep 0.5
	t0=$(date +%s%N)
	kill -INT $rec
	bounded_wait $rec
	rc=$?
	took_ms=$((($(date +%s%N) - t0) / 1000000))
	[ $took_ms -lt 15000 ] || fail "SIGINT-ignoring target: recording ended $took_ms ms after ^C"
	grep -q "forwarded SIGINT to PID [0-9]*; ^C again stops recording" "$tmp/g.err" ||
		fail "no line saying SIGINT was forwarded: $(cat "$tmp/g.err")"
	grep -q "still running 5 s after SIGINT; sending SIGTERM" "$tmp/g.err" ||
		fail "no line saying SIGTERM was sent: $(cat "$tmp/g.err")"
	[ $rc = 143 ] || fail "SIGINT-ignoring target ended by SIGTERM: expected 143, got $rc"
	finalized "$tmp/g.xpu" || fail "trace not finalized after the escalation"
	"$B/xpu-report" "$tmp/g.xpu" >/dev/null 2>&1 || fail "xpu-report cannot read the escalated trace"
}

# 8. a target that ignores SIGINT and SIGTERM: 5 s after SIGTERM recording stops, says so and
#    leaves it running (never killed: SIGKILL would lose its own cleanup)
escalate_stop() {
	"$B/xpu-record" --no-gpu -o "$tmp/h.xpu" -- sh -c 'trap "" INT TERM; sleep 60' 2>"$tmp/h.err" &
	rec=$!
	wait_target $rec >/dev/null || fail "xpu-record did not start its command"
	sleep 0.5
	tgt=$(pgrep -P $rec)
	t0=$(date +%s%N)
	kill -INT $rec
	bounded_wait $rec
	rc=$?
	took_ms=$((($(date +%s%N) - t0) / 1000000))
	alive=no
	# alive, not a zombie: kill -0 succeeds on a process killed but not yet reaped
	[ -n "$tgt" ] && [ -r "/proc/$tgt/stat" ] &&
		! awk '{ sub(/^.*\) /, ""); exit ($1 == "Z" || $1 == "X") ? 0 : 1 }' "/proc/$tgt/stat" &&
		alive=yes
	[ -n "$tgt" ] && pkill -KILL -P "$tgt" 2>/dev/null
	[ -n "$tgt" ] && kill -KILL "$tgt" 2>/dev/null
	[ $took_ms -lt 15000 ] || fail "target ignoring SIGINT and SIGTERM: ended $took_ms ms after ^C"
	grep -q "after SIGTERM; recording stopped, the command keeps running" "$tmp/h.err" ||
		fail "no line saying recording stopped with the target running: $(cat "$tmp/h.err")"
	[ $alive = yes ] || fail "the target ignoring SIGTERM was killed"
	[ $rc = 130 ] || fail "recording stopped after ^C: expected 130, got $rc"
	finalized "$tmp/h.xpu" || fail "trace not finalized when recording gave up on the target"
}

# 1. plain exit status
"$B/xpu-record" --no-gpu -o "$tmp/a.xpu" -- sh -c 'exit 3' 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 3 ] || fail "exit status 3 of the target came back as $rc"
finalized "$tmp/a.xpu" || fail "trace of a normal exit has no trailer"
( set -m; escalate_term ) >"$tmp/s7.out" 2>&1 &
s7=$!
( set -m; escalate_stop ) >"$tmp/s8.out" 2>&1 &
s8=$!

# 2. target killed by a signal: 128+15
"$B/xpu-record" --no-gpu -o "$tmp/b.xpu" -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?
[ $rc = 143 ] || fail "target killed by SIGTERM: expected 143, got $rc"

# 3. SIGINT to xpu-record reaches a target that handles it (exit 7)
"$B/xpu-record" --no-gpu -o "$tmp/c.xpu" -- \
	sh -c 'trap "exit 7" INT; while :; do sleep 0.05; done' 2>/dev/null &
rec=$!
wait_target $rec >/dev/null || fail "xpu-record did not start its command"
sleep 0.5
kill -INT $rec
bounded_wait $rec
rc=$?
[ $rc = 7 ] || fail "SIGINT forwarded to a target that exits 7 on SIGINT: got $rc"
finalized "$tmp/c.xpu" || fail "trace not finalized after SIGINT"

# 4. SIGINT to xpu-record kills a target with the default action: 128+2
"$B/xpu-record" --no-gpu -o "$tmp/d.xpu" -- sleep 30 2>/dev/null &
rec=$!
wait_target $rec >/dev/null || fail "xpu-record did not start its command"
sleep 0.5
kill -INT $rec
bounded_wait $rec
rc=$?
[ $rc = 130 ] || fail "SIGINT forwarded to sleep: expected 130, got $rc"
finalized "$tmp/d.xpu" || fail "trace not finalized after SIGINT to sleep"

# 5. SIGTERM likewise
"$B/xpu-record" --no-gpu -o "$tmp/e.xpu" -- sleep 30 2>/dev/null &
rec=$!
wait_target $rec >/dev/null || fail "xpu-record did not start its command"
sleep 0.5
kill -TERM $rec
bounded_wait $rec
rc=$?
[ $rc = 143 ] || fail "SIGTERM forwarded to sleep: expected 143, got $rc"
finalized "$tmp/e.xpu" || fail "trace not finalized after SIGTERM"

# 6. a target that ignores SIGINT: the first ^C is forwarded and ignored, a second one stops
#    the recording now; the trace is finalized and the target is left running (not ours to
#    kill: the user asked to stop recording, not to stop the job).
"$B/xpu-record" --no-gpu -o "$tmp/f.xpu" -- sh -c 'trap "" INT; sleep 30' 2>/dev/null &
rec=$!
wait_target $rec >/dev/null || fail "xpu-record did not start its command"
sleep 0.5
tgt=$(pgrep -P $rec)
kill -INT $rec
sleep 0.5
kill -0 $rec 2>/dev/null || fail "xpu-record stopped on the first SIGINT of a target ignoring it"
kill -INT $rec
bounded_wait $rec
rc=$?
alive=no
[ -n "$tgt" ] && kill -0 "$tgt" 2>/dev/null && alive=yes
[ -n "$tgt" ] && pkill -KILL -P "$tgt" 2>/dev/null
[ -n "$tgt" ] && kill -KILL "$tgt" 2>/dev/null
[ $rc = 130 ] || fail "second SIGINT: expected 130, got $rc"
[ $alive = yes ] || fail "second SIGINT killed the target"
finalized "$tmp/f.xpu" || fail "trace not finalized after a second SIGINT"

for s in 7:$s7 8:$s8; do
	wait "${s#*:}" || { cat "$tmp/s${s%%:*}.out"; fail "section ${s%%:*} failed (its output above)"; }
done

# GPU buffers on SIGINT: libxpu-cupti.so flushes and finishes before a default-action
# SIGINT/SIGTERM/SIGHUP kills the target; tests/gpu/mock/run.sh checks that against a mock
# libcupti (RUN_SIGNAL), tests/gpu/run_gpu_checks.sh on a GPU.
echo "PASS $NAME"
