#!/bin/bash
# Load: a bounded fork storm (tests/e2e/load/forkstorm.c: 2000 short processes with threads,
# a quarter of them exec'ing) sampled at 20 kHz on every CPU with a small ring buffer. Every
# loss the recorder counts (ring buffer, stacks, processes gone before their mappings were
# read) must reach the trace and be shown by xpu-report with the same numbers; the
# recorder's peak RSS must stay bounded (< 200 MB; the figures are printed). A second run at
# 100 kHz (100 processes) overflows the ring buffer on purpose. Frame-pointer stacks: the point is the
# bookkeeping of losses, and stack copies would also overflow the writer queue (counted apart).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_load
LIMIT_KB=$((200 * 1024))
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O1 -pthread -o "$tmp/forkstorm" tests/e2e/load/forkstorm.c || fail "cannot build forkstorm"

load() {	# FREQ NPROC
	# Peak RSS: VmHWM of xpu-record itself (not its children), read until it exits.
	"$B/xpu-record" -v --no-gpu -g fp -F "$1" --ringbuf-mb=1 -o "$tmp/load.xpu" -- "$tmp/forkstorm" "$2" \
		>"$tmp/out" 2>"$tmp/err" &
	rec=$!
	hwm=0
	while kill -0 $rec 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' /proc/$rec/status 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
		sleep 0.1
	done
	wait $rec
	rc=$?
	grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
	[ $rc = 0 ] || fail "xpu-record exited $rc: $(grep -v '^xpu-record: recording' "$tmp/err" | head -2)"
	grep -q "forkstorm: done $2" "$tmp/out" || fail "the fork storm did not complete"
	[ "$hwm" -gt 0 ] || fail "could not read the recorder's VmHWM"
	[ "$hwm" -lt $LIMIT_KB ] || fail "recorder peak RSS $((hwm / 1024)) MB, over $((LIMIT_KB / 1024)) MB"

	# "N samples, R lost in the ring buffer, S stack errors, M mappings, U processes with ..."
	line=$(grep "samples, .* lost in the ring buffer" "$tmp/err") || fail "no summary line with -v"
	read -r samples rb st maps <<<"$(sed -E 's/.*: ([0-9]+) samples, ([0-9]+) lost in the ring buffer, ([0-9]+) stack errors, [0-9]+ mappings, ([0-9]+) processes.*/\1 \2 \3 \4/' <<<"$line")"
	[ -n "$maps" ] || fail "cannot parse: $line"
	"$B/xpu-report" "$tmp/load.xpu" >"$tmp/text" 2>"$tmp/rerr" || fail "xpu-report failed: $(head -1 "$tmp/rerr")"
	lost=$(grep "^# lost:" "$tmp/text") || fail "the report shows no lost line"
	read -r g_rb g_st g_maps <<<"$(sed -E 's/.*ringbuf ([0-9]+), stack ([0-9]+), .*mappings ([0-9]+),.*/\1 \2 \3/' <<<"$lost")"
	# processes gone before their mappings were read without a sample are on a line of their own
	short=$(sed -nE 's/^# +([0-9]+) short-lived process.*/\1/p' "$tmp/text")
	got="$g_rb $g_st $((g_maps + ${short:-0}))"
	[ "$got" = "$rb $st $maps" ] ||
		fail "recorder counted ringbuf/stack/mappings $rb/$st/$maps, the report shows $got"
	# every loss class on stderr without -v, and the closing line's total, as the report says
	if [ "$rb" != 0 ]; then
		grep -q "^xpu-record: lost $rb events: the BPF ring buffer was full" "$tmp/err" ||
			fail "no stderr line for $rb ring-buffer losses: $(grep lost "$tmp/err")"
	fi
	# the classes the line shows (a recording without GPU shows no cupti or transport)
	total=0
	for class in ringbuf stack cupti transport mappings writer; do
		n=$(sed -nE "s/.*[ :]$class ([0-9]+)(,.*)?\$/\1/p" <<<"$lost")
		total=$((total + ${n:-0}))
	done
	# the closing line counts the samples in the file; -v those taken: the same unless the
	# writer queue overflowed (a loaded host at 100 kHz), which the writer loss then counts
	written=$(sed -nE 's/^xpu-record: ([0-9]+) samples, 0 GPU records, '"$total"' lost; wrote .* to [^ ]*load\.xpu( and its symbol pack .*)?$/\1/p' "$tmp/err")
	[ -n "$written" ] || fail "closing line does not say $total lost: $(tail -1 "$tmp/err")"
	grep -q "^# samples: *$written " "$tmp/text" ||
		fail "closing line says $written samples, report: $(grep '^# samples' "$tmp/text")"
	wdrop=$(sed -E 's/.*writer ([0-9]+).*/\1/' <<<"$lost")
	[ "$wdrop" = 0 ] || [ $((samples - written)) -le "$wdrop" ] ||
		fail "$samples samples taken, $written written, but only $wdrop writer losses"
	[ "$wdrop" != 0 ] || grep -q "^# samples: *$samples " "$tmp/text" ||
		fail "recorder wrote $samples samples, report: $(grep '^# samples' "$tmp/text")"
	summary="$summary; $1 Hz: peak RSS $((hwm / 1024)) MB, $samples samples, lost ringbuf $rb, stack $st, unreadable mappings $maps"
}

summary=""
load 20000 2000
# 100 kHz overflows the 1 MiB ring buffer: the losses must be counted the same on both sides.
# 100 processes, not 1,000: the overflow comes from the rate (100 kHz on each CPU into 1 MiB),
# not the length, and 100 still lose most samples (162,000 of 226,000 here) and some
# processes' mappings (13), for 5 CPU-s instead of 60; the sampling interrupts of every CPU
# also slowed every test beside it (test_launch_probe from 6 s to 2 min).
load 100000 100
echo "PASS $NAME: figures match in the report${summary}"
