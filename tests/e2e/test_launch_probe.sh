#!/usr/bin/env bash
# The launch-stack path without a GPU: bench/marker_bench calls libxpu-cupti.so's probed marker
# as the CUPTI callback does once per CUDA launch. Under xpu-record every call must become one
# GPU_LAUNCH record with its correlation id and a stack through the calling function, and
# nothing may be lost.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_launch_probe
# Every record must fit in the ring buffer at once: marker_bench makes its calls as fast as it
# can, and on a loaded machine the drain thread may not run for a while. 32 MiB hold 20000 fp
# launches (~1.1 KiB each) or 2000 dwarf ones (~9.4 KiB with the 8 KiB stack copy).
RB_MB=32
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the default ring buffer grows with the stack copies of -g dwarf, and those of -g cfi's short
# walks; --ringbuf-mb wins
rb() { "$B/xpu-record" -v --no-gpu -o "$tmp/rb.xpu" "$@" -- true 2>&1 |
	sed -n 's/.*(ring buffer \([0-9]*\) MiB).*/\1/p'; }
for want in "8 -g fp" "8 -g cfi,nocopy" "32 -g cfi" "32" "16 -g dwarf" "64 -g dwarf,32768" "64 -g dwarf,65536,32768" \
	"4 -g dwarf,65536 --ringbuf-mb=4"; do
	# shellcheck disable=SC2086
	got=$(rb ${want#* })
	[ "$got" = "${want%% *}" ] || fail "ring buffer with ${want#* }: ${got:-?} MiB, not ${want%% *}"
done
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
for mode in fp cfi dwarf; do
	N=20000
	[ $mode = dwarf ] && N=2000
	"$B/xpu-record" -g $mode --ringbuf-mb=$RB_MB -o "$tmp/m.xpu" -- "$B/bench/marker_bench" \
		"$(realpath "$B/libxpu-cupti.so")" $N >"$tmp/out" 2>"$tmp/err" ||
		fail "xpu-record -g $mode failed: $(tail -1 "$tmp/err")"
	"$B/xpu-report" -F info "$tmp/m.xpu" >"$tmp/info" 2>&1 || fail "xpu-report -F info failed"
	got=$(awk '$1 == "gpu_launch" { print $2 }' "$tmp/info")
	[ "$got" = "$N" ] || fail "-g $mode: $N marker calls gave ${got:-no} gpu_launch records"
	# Nothing of the launch path may be lost. A process's mappings may be (counted): xpu-record
	# reads /proc/PID/maps after an mmap event, and marker_bench can exit first (1 run in 8
	# of -g dwarf's 2000 calls, before and after the walk's changes of 2026-11-26).
	lost=$(awk '/^lost/ { on = 1; next } /^[a-z]/ { on = 0 } on' "$tmp/info" |
		grep -v -e '(none)' -e '^ *mappings ')
	[ -z "$lost" ] || fail "-g $mode: events were lost: $(echo $lost)"
	# each launch stack must show the caller of the marker and main above it
	# launches without GPU work: the gpu view is empty, which the report says (exit 1)
	"$B/xpu-report" -F folded --view=gpu "$tmp/m.xpu" >/dev/null 2>"$tmp/gpu.err" ||
		grep -q "nothing to report: the trace has no GPU work" "$tmp/gpu.err" ||
		fail "-g $mode: xpu-report --view=gpu failed: $(head -1 "$tmp/gpu.err")"
	"$B/xpu-report" -F info "$tmp/m.xpu" | grep -E "complete .* gpu launches \(100\.0%\)" >/dev/null ||
		fail "-g $mode: not every launch stack is complete: $(grep -i complete "$tmp/info")"
done
echo "PASS $NAME: every marker call -> one launch record with a complete stack (fp, cfi: 20000, dwarf: 2000)"
