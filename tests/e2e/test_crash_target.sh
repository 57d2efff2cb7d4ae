#!/bin/bash
# The target crashes (SIGSEGV) or is killed (SIGKILL from outside): xpu-record still writes a
# complete trace (trailer), exits 128+N, and the trace says how the target ended: the
# SESSION_END signal shown by `xpu-report -F info` and the text summary.
set -u
set -m
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_crash_target
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
source "$(dirname "$0")/../lib/record_wait.sh"

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ulimit -c 0	# the crash is the point; no core file
finalized() { [ "$(tail -c 32 "$1" | head -c 6)" = "XPUEND" ]; }

# 1. a real SIGSEGV: a null store after some work, so there are samples too
cat >"$tmp/segv.c" <<'C'
#include <stdint.h>
int main(void)
{
	volatile unsigned long x = 0, i;
	for (i = 0; i < 300000000ul; i++)
		x += i;
	*(volatile int *)(uintptr_t)(x & 0) = 1;
	return 0;
}
C
${CC:-cc} -O0 -o "$tmp/segv" "$tmp/segv.c" || fail "cannot build the crashing target"
"$B/xpu-record" --no-gpu -o "$tmp/segv.xpu" -- "$tmp/segv" 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 139 ] || fail "target died of SIGSEGV: expected exit 139, got $rc ($(head -1 "$tmp/err"))"
finalized "$tmp/segv.xpu" || fail "no trailer after the target crashed"
"$B/xpu-report" -F info "$tmp/segv.xpu" >"$tmp/info" 2>"$tmp/rerr" || fail "info failed: $(cat "$tmp/rerr")"
[ -s "$tmp/rerr" ] && fail "xpu-report complained about a complete trace: $(cat "$tmp/rerr")"
grep -q "^  killed by signal 11 (Segmentation fault)$" "$tmp/info" || fail "info does not show signal 11: $(grep -A8 '^session' "$tmp/info")"
grep -q "^  exit code" "$tmp/info" && fail "info prints an exit code for a target killed by a signal"
grep -q "^  end *clean" "$tmp/info" || fail "info does not say the file ended cleanly"
"$B/xpu-report" "$tmp/segv.xpu" >"$tmp/text" 2>/dev/null || fail "text report failed"
grep -q "^# target: *killed by signal 11" "$tmp/text" || fail "text does not show the SIGSEGV"
grep -q "^# samples: *[1-9]" "$tmp/text" || fail "no samples before the crash"

# 2. the target killed from outside with SIGKILL
"$B/xpu-record" --no-gpu -o "$tmp/kill.xpu" -- sleep 30 2>/dev/null &
rec=$!
tgt=$(wait_target $rec) || fail "no target under xpu-record after 30 s"
sleep 1
kill -KILL "$tgt"
wait $rec
rc=$?
[ $rc = 137 ] || fail "target killed by SIGKILL: expected 137, got $rc"
finalized "$tmp/kill.xpu" || fail "no trailer after the target was killed"
"$B/xpu-report" -F info "$tmp/kill.xpu" >"$tmp/info2" 2>/dev/null || fail "info failed"
grep -q "^  killed by signal 9 (Killed)$" "$tmp/info2" || fail "info does not show signal 9"
echo "PASS $NAME"
