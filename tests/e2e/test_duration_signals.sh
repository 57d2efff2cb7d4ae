#!/bin/bash
# --duration on hostile commands (docs/record.md, exit status): a stopped command gets
# SIGCONT after the stop signal, so it takes it instead of holding it pending until both grace
# periods pass and being left stopped; a command that outlives SIGINT and SIGTERM makes the
# exit status 130 (as a second ^C does), not 0 (which says the duration ended the command).
# The waits are xpu-record's own (-d, its 5 s grace periods); the test's are bounded and say
# what they waited for.
# Exit 0 pass, 77 skip, anything else fail.
set -u
set -m	# own process group per job: background jobs do not start with SIGINT ignored
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_duration_signals
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
source "$(dirname "$0")/../lib/record_wait.sh"

if trap -p INT | grep -q "''"; then
	[ -z "${XPU_SIGNALS_RESET:-}" ] && env --default-signal=INT true 2>/dev/null &&
		XPU_SIGNALS_RESET=1 exec env --default-signal=INT "$0" "$@"
	skip "started with SIGINT ignored, which the targets would inherit"
fi
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] || fail "run make first ($B/xpu-record)"
tmp=$(mktemp -d) || exit 1
tgt=
trap '[ -n "$tgt" ] && { pkill -KILL -P "$tgt"; kill -KILL "$tgt"; } 2>/dev/null; rm -rf "$tmp"' EXIT

# bounded_wait PID: wait's status; a failure when xpu-record is still running 40 s on
bounded_wait() {
	local i
	for i in $(seq 400); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$1" 2>/dev/null; then
		pkill -KILL -P "$1"
		kill -KILL "$1"
		fail "xpu-record still running 40 s after it started (-d 1 and two 5 s grace periods)"
	fi
	wait "$1"
}

# 1. a command that stops itself: -d's SIGINT (and SIGCONT) ends it; nothing left stopped
"$B/xpu-record" --no-gpu --no-pack -g fp -d 1 -o "$tmp/a.xpu" -- sh -c 'kill -STOP $$; exit 9' \
	2>"$tmp/a.err" &
rec=$!
tgt=$(wait_target $rec) || { grep -q "need root\|bpf(): " "$tmp/a.err" &&
	skip "BPF unavailable: $(head -1 "$tmp/a.err")"; fail "xpu-record did not start its command"; }
bounded_wait $rec
rc=$?
if kill -0 "$tgt" 2>/dev/null; then
	fail "the stopped command is still there ($(ps -o stat= -p "$tgt")): $(cat "$tmp/a.err")"
fi
tgt=
grep -q "still running" "$tmp/a.err" && fail "a stopped command outlived -d: $(cat "$tmp/a.err")"
[ $rc = 0 ] || fail "-d ended a stopped command: exit $rc, expected 0: $(cat "$tmp/a.err")"

# 2. a command that ignores SIGINT and SIGTERM outlives -d: 130, and it is left running
"$B/xpu-record" --no-gpu --no-pack -g fp -d 1 -o "$tmp/b.xpu" -- \
	sh -c 'trap "" INT TERM; while :; do sleep 1; done' 2>"$tmp/b.err" &
rec=$!
tgt=$(wait_target $rec) || fail "xpu-record did not start its command"
bounded_wait $rec
rc=$?
grep -q "after SIGTERM; recording stopped, the command keeps running" "$tmp/b.err" ||
	fail "no line saying the command outlived SIGTERM: $(cat "$tmp/b.err")"
kill -0 "$tgt" 2>/dev/null || fail "the command that ignores SIGTERM was killed"
[ $rc = 130 ] || fail "a command outlived -d's SIGINT and SIGTERM: exit $rc, expected 130"
echo "PASS $NAME: a stopped command ended by -d (exit 0); one that outlived SIGTERM: 130"
