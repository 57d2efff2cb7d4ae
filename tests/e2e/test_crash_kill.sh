#!/bin/bash
# xpu-record killed with SIGKILL mid-run: the trace is readable up to its last flushed frame
# (a frame is closed once 500 ms old, checked every 100 ms, so at most ~0.6 s plus the ring
# buffer's polling is lost: the last sample must be within 1 s of the kill, to allow for load),
# the data is in FILE.partial (FILE appears only at a clean end), xpu-report says in one line
# on stderr that it is truncated and exits 0,
# and --strict makes that an error.
set -u
set -m
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_crash_kill
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
source "$(dirname "$0")/../lib/record_wait.sh"

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] && [ -x "$B/samples/cpu_burn" ] ||
	fail "run make first"
tmp=$(mktemp -d) || exit 1
kids=""
trap '[ -n "$kids" ] && kill -KILL $kids 2>/dev/null; rm -rf "$tmp"' EXIT
${CC:-cc} -O1 -std=gnu11 -D_GNU_SOURCE -Icommon -o "$tmp/trace_stat" tests/e2e/load/trace_stat.c \
	"$B/libxpucommon.a" -lzstd || fail "cannot build the trace_stat helper"

"$B/xpu-record" --no-gpu -o "$tmp/k.xpu" -- "$B/samples/cpu_burn" 20 >/dev/null 2>"$tmp/err" &
rec=$!
kids=$(wait_target $rec)
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
sleep 1.5
[ -n "$kids" ] || fail "no target under xpu-record (pid $rec): $(head -1 "$tmp/err")"
now=$("$tmp/trace_stat" --now)
kill -KILL $rec
wait $rec 2>/dev/null
# the target is not ours to keep: it was orphaned by the kill, end it
kill -KILL $kids 2>/dev/null
kids=""
# the data of a killed recording is in FILE.partial (FILE appears only at a clean end)
[ -e "$tmp/k.xpu" ] && fail "k.xpu exists after the recorder was killed"
mv "$tmp/k.xpu.partial" "$tmp/k.xpu" || fail "no k.xpu.partial after the recorder was killed"

"$B/xpu-report" "$tmp/k.xpu" >"$tmp/text" 2>"$tmp/rerr"
rc=$?
[ $rc = 0 ] || fail "xpu-report on a killed recording exited $rc: $(head -1 "$tmp/rerr")"
[ "$(wc -l <"$tmp/rerr")" = 1 ] || fail "expected one line on stderr, got: $(cat "$tmp/rerr")"
grep -q "truncated" "$tmp/rerr" || fail "stderr does not say truncated: $(cat "$tmp/rerr")"
grep -q "^# trace: *truncated" "$tmp/text" || fail "the text report does not say truncated"
"$B/xpu-report" --strict "$tmp/k.xpu" >/dev/null 2>&1 && fail "--strict accepted a truncated trace"

read -r line < <("$tmp/trace_stat" "$tmp/k.xpu") || fail "trace_stat failed"
eval "$line"
# shellcheck disable=SC2154 # set by eval
[ "$samples" -gt 100 ] || fail "only $samples samples survived 3 s of recording"
gap_ms=$(( (now - last_sample_ns) / 1000000 ))
[ "$gap_ms" -le 1000 ] || fail "last sample $gap_ms ms before the kill (frames flushed every 500 ms)"
echo "PASS $NAME: $samples samples kept, the last $gap_ms ms before SIGKILL"
