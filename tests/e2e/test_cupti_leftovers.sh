#!/usr/bin/env bash
# A recorder killed with SIGKILL leaves its CUPTI socket directory (xpu-cupti-*) behind; the
# next recording removes it, because no live recorder holds its lock. A directory whose lock a
# live process holds stays, and so does one without a lock file (an older recorder's: nothing
# says it is dead). TMPDIR is a private directory, so no other run's files are touched.
set -u
cd "$(dirname "$0")/../.."
NAME=test_cupti_leftovers
B=${BUILD:-build}
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -f "$B/libxpu-cupti.so" ] || skip "no libxpu-cupti.so (built only with the CUDA toolkit)"
command -v flock >/dev/null || skip "no flock(1)"
tmp=$(mktemp -d)
holder=
trap '[ -n "$holder" ] && kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT
export TMPDIR=$tmp/t
mkdir -p "$TMPDIR"

"$B/xpu-record" -o "$tmp/k.xpu" -- sleep 60 >/dev/null 2>&1 &
rec=$!
for _ in $(seq 300); do
	ls -d "$TMPDIR"/xpu-cupti-* >/dev/null 2>&1 && break
	sleep 0.1
done
dead=$(ls -d "$TMPDIR"/xpu-cupti-* 2>/dev/null | head -1)
[ -n "$dead" ] || fail "the recorder made no socket directory in 30 s"
# its own sleep only: a pattern would kill other runs' sleeps on a shared machine
tgt=$(pgrep -P $rec)
kill -9 $rec
wait $rec 2>/dev/null
[ -n "$tgt" ] && kill $tgt 2>/dev/null
[ -d "$dead" ] || fail "SIGKILL left nothing to clean: the test shows nothing"

# a live one: its lock held by another process; an old one: no lock file
mkdir -m 0700 "$TMPDIR/xpu-cupti-live" "$TMPDIR/xpu-cupti-old"
: >"$TMPDIR/xpu-cupti-live/lock"
: >"$TMPDIR/xpu-cupti-old/sock"
flock "$TMPDIR/xpu-cupti-live/lock" sleep 60 &
holder=$!
for _ in $(seq 100); do
	flock -n "$TMPDIR/xpu-cupti-live/lock" true 2>/dev/null || break
	sleep 0.1
done

"$B/xpu-record" -o "$tmp/t.xpu" -- true >/dev/null 2>&1 || fail "the next recording failed"
[ ! -e "$dead" ] || fail "the killed recorder's $dead was not removed"
[ -d "$TMPDIR/xpu-cupti-live" ] || fail "a directory whose lock is held was removed"
[ -e "$TMPDIR/xpu-cupti-old/sock" ] || fail "a directory without a lock file was removed"
left=$(ls -d "$TMPDIR"/xpu-cupti-* | grep -v -e live -e old)
[ -z "$left" ] || fail "the recording left its own directory: $left"
echo "PASS $NAME: a SIGKILLed recorder's socket directory is removed by the next recording, a live or unknown one kept"
