#!/bin/bash
# xpu-record --duration: a launched command's tree gets SIGINT when the time is up (SIGTERM 5 s
# later if it ignores SIGINT) and the trace ends with reason "duration reached"; xpu-record then
# exits 0, as the duration ending a recording is no failure; with -p the process is left
# running. Bad values are refused with one line and status 2.
set -u
set -m	# own process group per job: background jobs do not start with SIGINT ignored
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_duration
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
for bad in 0 -1 abc 1e3 "" 1.5x . 99999999; do
	out=$("$B/xpu-record" --no-gpu -d "$bad" -- true 2>&1)
	rc=$?
	[ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "invalid duration" ||
		fail "-d '$bad' not refused with one line and status 2 (rc $rc): $out"
done
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"; [ -n "${victim:-}" ] && kill "$victim" 2>/dev/null' EXIT
reason() { "$B/xpu-report" --format=info "$1" 2>/dev/null | awk '/^  end reason/ { $1 = $2 = ""; print substr($0, 3) }'; }

# 1. launched: the command is stopped with SIGINT, the trace is complete, the status 0
timeout 60 "$B/xpu-record" --no-gpu -d 0.5 -o "$tmp/a.xpu" -- sleep 120 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "launched: expected 0 for a command ended by -d, got $rc: $(head -2 "$tmp/err")"
[ "$(reason "$tmp/a.xpu")" = "duration reached" ] || fail "launched: end reason '$(reason "$tmp/a.xpu")'"

# 2. a tree that ignores SIGINT gets SIGTERM after the grace period, children included
timeout 60 "$B/xpu-record" --no-gpu -d 0.5 -o "$tmp/b.xpu" -- \
	sh -c 'trap "" INT; sleep 120; exit 0' 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || fail "SIGINT ignored: expected 0 after -d's SIGTERM, got $rc: $(head -2 "$tmp/err")"
grep -q "sending SIGTERM" "$tmp/err" || fail "SIGINT ignored: no word of the SIGTERM"
[ "$(reason "$tmp/b.xpu")" = "duration reached" ] || fail "SIGINT ignored: end reason '$(reason "$tmp/b.xpu")'"

# 2b. a command that handles SIGINT and exits with its own status keeps that status
timeout 60 "$B/xpu-record" --no-gpu -d 0.5 -o "$tmp/b2.xpu" -- \
	sh -c 'trap "exit 5" INT; while :; do sleep 0.05; done' 2>"$tmp/err"
rc=$?
[ $rc = 5 ] || fail "command exiting 5 on SIGINT: expected 5, got $rc: $(head -2 "$tmp/err")"

# 3. attached: recording stops, the process runs on
sleep 120 &
victim=$!
timeout 60 "$B/xpu-record" -p "$victim" -d 0.5 -o "$tmp/c.xpu" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] || fail "attached: xpu-record exited $rc: $(head -2 "$tmp/err")"
kill -0 "$victim" 2>/dev/null || fail "attached: the process did not survive --duration"
[ "$(reason "$tmp/c.xpu")" = "duration reached" ] || fail "attached: end reason '$(reason "$tmp/c.xpu")'"
echo "PASS $NAME"
