#!/bin/bash
# xpu-record --off-cpu with -g fp, -g dwarf and -g cfi (tests/e2e/offcpu/offcpu_prog.c): a program that
# alternates 50 ms of CPU work and 50 ms of sleep shows the sleeping function at its share of
# wall time (+-10 points) in --view=wall: 50% on an idle machine; the CPU work is counted in CPU
# time, so on a loaded one the program measures (and prints) a lower share, which is the one
# the report must match; a thread blocked on a held mutex and one blocked on a
# pipe read show their waiting stacks in --view=off-cpu; every format carries the blocks.
# Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_off_cpu
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/offcpu_prog" \
	tests/e2e/offcpu/offcpu_prog.c || fail "building tests/e2e/offcpu/offcpu_prog.c"

record() {	# mode trace args...
	local mode=$1 out=$2
	shift 2
	"$B/xpu-record" --no-gpu --off-cpu -g "$mode" -o "$out" -- "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
		skip "BPF unavailable: $(head -1 "$tmp/err")"
	[ $rc = 0 ] || fail "xpu-record -g $mode exited $rc: $(head -1 "$tmp/err")"
}

for mode in fp dwarf cfi; do
	# 1. 50 ms CPU / 50 ms sleep: sleep_phase's share of wall time
	record $mode "$tmp/alt.xpu" "$tmp/offcpu_prog" alternate 20
	measured=$(awk '/sleep share/ { print $3 }' "$tmp/out")
	[ -n "$measured" ] || fail "the program did not say its sleep share"
	"$B/xpu-report" -F folded --view=wall "$tmp/alt.xpu" >"$tmp/wall" 2>"$tmp/rerr" ||
		fail "--view=wall ($mode): $(head -1 "$tmp/rerr")"
	share=$(awk '{ n = $NF; total += n; if ($0 ~ /;sleep_phase;.*\[off-cpu\] sleeping /) s += n }
		END { printf "%.1f", total ? 100 * s / total : 0 }' "$tmp/wall")
	echo "  -g $mode: sleep_phase ${share}% of wall time in the report, ${measured}% measured by the program"
	awk -v a="$share" -v b="$measured" 'BEGIN { d = a - b; exit !(d <= 10 && d >= -10 && a >= 10) }' ||
		fail "-g $mode: sleep_phase is ${share}% of wall time, the program measured ${measured}%"
	grep -q ';burn_cpu' "$tmp/wall" || fail "-g $mode: no on-CPU samples under burn_cpu in the wall view"
	# the off-cpu view holds only blocked time, in microseconds: 20 x 50 ms at least, and no
	# more than the program measured around its sleeps (a busy machine wakes it late: more)
	slept=$(awk '/slept_us/ { print $2 }' "$tmp/out")
	"$B/xpu-report" -F folded --view=off-cpu "$tmp/alt.xpu" >"$tmp/off" ||
		fail "--view=off-cpu ($mode) failed"
	awk -v m="${slept:-0}" '/;sleep_phase;.*\[off-cpu\] sleeping / { s += $NF }
		END { exit !(s >= 900000 && s <= m * 1.02 + 20000) }' "$tmp/off" ||
		fail "-g $mode: sleep_phase's blocked time is not 1 s to the ${slept:-?} us measured:" \
			"$(grep sleep_phase "$tmp/off")"
	grep -v '\[off-cpu\]' "$tmp/off" && fail "-g $mode: the off-cpu view holds on-CPU stacks"

	# 2. a held mutex and an empty pipe: their waiting stacks
	record $mode "$tmp/wait.xpu" "$tmp/offcpu_prog" wait
	"$B/xpu-report" -F folded --view=off-cpu "$tmp/wait.xpu" >"$tmp/waits" ||
		fail "--view=off-cpu ($mode) of the waits failed"
	awk '/;wait_for_lock;.*(futex|lll_lock_wait|pthread_mutex_lock)[^;]*;\[off-cpu\] sleeping / { s += $NF }
	     END { exit !(s >= 250000) }' "$tmp/waits" ||
		fail "-g $mode: no 300 ms futex wait under wait_for_lock: $(cat "$tmp/waits")"
	awk '/;read_from_pipe;(.*;)?(__libc_)?read[^;]*;\[off-cpu\] sleeping / { s += $NF }
	     END { exit !(s >= 250000) }' "$tmp/waits" ||
		fail "-g $mode: no 300 ms read under read_from_pipe: $(cat "$tmp/waits")"
	if [ $mode != fp ]; then
		grep -q ';wait_for_lock;take_lock;pthread_mutex_lock[^;]*;__lll_lock_wait' "$tmp/waits" ||
			fail "-g $mode: the futex wait's stack is not whole: $(cat "$tmp/waits")"
		grep -q ';read_from_pipe;read_byte;read' "$tmp/waits" ||
			fail "-g $mode: the read's stack is not whole: $(cat "$tmp/waits")"
	fi
done

# 3. every format: jsonl lines, chrome slices on the thread tracks, info counts; the waker
"$B/xpu-report" -F jsonl "$tmp/wait.xpu" >"$tmp/jsonl" || fail "jsonl failed"
grep '"type":"off_cpu"' "$tmp/jsonl" | grep '"state":"sleeping"' | grep -q '"waker_tid":' ||
	fail "jsonl: no off_cpu line with its waker"
"$B/xpu-report" -F chrome "$tmp/wait.xpu" >"$tmp/chrome.json" || fail "chrome failed"
python3 - "$tmp/chrome.json" <<'PY' || fail "chrome: no blocked slices on the thread tracks"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
off = [e for e in ev if e.get("cat") == "off_cpu"]
assert len(off) >= 3 and all(e["ph"] == "X" and e["tid"] < 1000000000 for e in off), off
assert any("read_from_pipe" in e["args"]["stack"] for e in off), off
PY
"$B/xpu-report" -F info "$tmp/wait.xpu" >"$tmp/info" || fail "info failed"
grep -Eq '^  off_cpu +([3-9]|[1-9][0-9]+)$' "$tmp/info" || fail "info: no OFF_CPU records counted"
grep -Eq '^  sleeping +[3-9]' "$tmp/info" || fail "info: no sleeping blocks"
"$B/xpu-report" "$tmp/wait.xpu" | grep -q '^# off-cpu: ' || fail "text: no off-cpu header line"
# pprof: go tool pprof reads the same per-function shares as folded, in both views
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ] && ! "$B/xpu-report" -F pprof /dev/null 2>&1 | grep -q 'not in this build'; then
	for v in off-cpu wall; do
		GOCACHE="$tmp/gocache" GOTOOLCHAIN=local python3 tests/unit/pprof_shares.py \
			"$B/xpu-report" "$GO" "$tmp" "$tmp" wait.xpu --view=$v >"$tmp/pp" 2>&1 ||
			fail "pprof --view=$v: $(tail -3 "$tmp/pp")"
	done
else
	echo "  (pprof not checked: go or protobuf-c missing)"
fi

# 4. a trace without --off-cpu: the views say so and exit 1
"$B/xpu-record" --no-gpu -g fp -o "$tmp/plain.xpu" -- true 2>/dev/null || fail "plain recording"
"$B/xpu-report" --view=off-cpu "$tmp/plain.xpu" >/dev/null 2>"$tmp/rerr"
[ $? = 1 ] && grep -q 'no off-CPU data' "$tmp/rerr" || fail "--view=off-cpu of a plain trace: $(cat "$tmp/rerr")"
"$B/xpu-record" --off-cpu-min=soon -- true 2>"$tmp/rerr"
[ $? = 2 ] || fail "--off-cpu-min=soon was accepted"
echo "PASS $NAME"
