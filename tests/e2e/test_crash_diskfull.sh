#!/bin/bash
# The output disk fills up (a 256 KiB tmpfs): xpu-record prints one clear line, stops
# recording, leaves the command to run to completion (still its child: its output, status
# and ^C are untouched), and exits non-zero; what was written stays readable.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_crash_diskfull
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF, and mount"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] && [ -x "$B/samples/cpu_burn" ] ||
	fail "run make first"
tmp=$(mktemp -d) || exit 1
mkdir "$tmp/small"
trap 'umount "$tmp/small" 2>/dev/null; rm -rf "$tmp"' EXIT
mount -t tmpfs -o size=256k tmpfs "$tmp/small" 2>/dev/null || skip "cannot mount a tmpfs here"

# 20 kHz on every CPU with 3 busy threads writes ~170 KiB/s in frames of ~80 KiB on an idle
# 2-core machine, but only what the threads get of the CPUs on a loaded one (half of it, with 3
# other busy processes, just fills the disk in 3 s). So the command burns in rounds of 1 s until
# xpu-record has said the disk is full (at most 30 rounds), then ends on its own.
"$B/xpu-record" --no-gpu -F 20000 -o "$tmp/small/full.xpu" -- sh -c \
	'for i in $(seq 30); do "$0" 1 || exit; grep -q "No space left" "$1" && exit 0; done' \
	"$B/samples/cpu_burn" "$tmp/err" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc != 0 ] || fail "xpu-record exited 0 although the disk was full"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "expected one line on stderr, got: $(cat "$tmp/err")"
grep -q "No space left on device" "$tmp/err" || fail "the error does not name the full disk: $(cat "$tmp/err")"
grep -q "cpu_burn: done" "$tmp/out" || fail "the target did not run to completion"
[ -s "$tmp/small/full.xpu" ] || fail "nothing was written"
"$B/xpu-report" "$tmp/small/full.xpu" >"$tmp/text" 2>"$tmp/rerr" ||
	fail "the partial trace is not readable: $(head -1 "$tmp/rerr")"
grep -q "^# samples: *[1-9]" "$tmp/text" || fail "no samples in the partial trace"
echo "PASS $NAME: $(cat "$tmp/err")"
