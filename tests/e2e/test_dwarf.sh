#!/bin/bash
# -g dwarf against -g fp on a program and a library built without frame pointers
# (tests/e2e/dwarf/): with dwarf the folded stacks hold the whole chain from main, with fp they
# cannot. Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_dwarf
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

NOFP="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
${CC:-gcc} $NOFP -fPIC -shared -o "$tmp/libdwchain.so" tests/e2e/dwarf/chain_lib.c &&
	${CC:-gcc} $NOFP -o "$tmp/dwchain" tests/e2e/dwarf/chain_main.c -L"$tmp" -ldwchain \
		-Wl,-rpath,"$tmp" || fail "building tests/e2e/dwarf"

CHAIN='(^|;)main;(dw_deep;)*dw_loop;dw_main_1;dw_main_2;dw_main_3;dw_lib_a;dw_lib_b;dw_lib_c;dw_leaf( |$)'
for mode in dwarf fp; do
	"$B/xpu-record" --no-gpu -g $mode -o "$tmp/$mode.xpu" -- "$tmp/dwchain" 1.5 \
		>/dev/null 2>"$tmp/err"
	rc=$?
	grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
		skip "BPF unavailable: $(head -1 "$tmp/err")"
	[ $rc = 0 ] || fail "xpu-record -g $mode exited $rc: $(head -1 "$tmp/err")"
	"$B/xpu-report" --format=folded "$tmp/$mode.xpu" >"$tmp/$mode.folded" 2>"$tmp/rerr" ||
		fail "xpu-report ($mode) failed: $(head -1 "$tmp/rerr")"
	"$B/xpu-report" --format=info "$tmp/$mode.xpu" >"$tmp/$mode.info" 2>&1 ||
		fail "xpu-report --format=info ($mode) failed"
done

# share of samples in dw_leaf whose stack holds the whole chain from main
share() {
	awk -v re="$CHAIN" '/;dw_leaf( |$)/ { n = $NF; leaf += n; if ($0 ~ re) full += n }
		END { printf "%d %d\n", leaf ? 100 * full / leaf : 0, leaf }' "$1"
}
read -r dw_pct dw_leaf < <(share "$tmp/dwarf.folded")
read -r fp_pct fp_leaf < <(share "$tmp/fp.folded")
[ "$dw_leaf" -ge 500 ] || fail "only $dw_leaf samples in dw_leaf with -g dwarf"
[ "$fp_leaf" -ge 500 ] || fail "only $fp_leaf samples in dw_leaf with -g fp"
[ "$dw_pct" -ge 95 ] || fail "-g dwarf: only $dw_pct% of dw_leaf samples have the chain from main: $(sort -t' ' -k2 -n "$tmp/dwarf.folded" | tail -2)"
[ "$fp_pct" -le 5 ] || fail "-g fp: $fp_pct% of dw_leaf samples have the chain: frame pointers cannot give it here"
# the outermost frame is the thread's start: the complete-stack rate says so
grep -q 'dwarf .* copies' "$tmp/dwarf.info" || fail "info shows no stack copies"
cpct=$(awk '/^  complete/ { gsub(/[(%)]/, "", $7); print int($7) }' "$tmp/dwarf.info")
fpct=$(awk '/^  complete/ { gsub(/[(%)]/, "", $7); print int($7) }' "$tmp/fp.info")
[ "${cpct:-0}" -ge 95 ] || fail "-g dwarf complete-stack rate $cpct%"
[ "${fpct:-100}" -le 5 ] || fail "-g fp complete-stack rate $fpct% (expected ~0)"
# why walks ended: with the full copy at the thread's start; with 64 bytes at the copy's end
stops() { awk -v r="$2" '/^  dwarf stops/ { split($0, a, r " "); print int(a[2]) }' "$1"; }
[ "$(stops "$tmp/dwarf.info" outermost)" -ge 500 ] ||
	fail "dwarf stops: too few walks reached the outermost frame: $(grep stops "$tmp/dwarf.info")"
"$B/xpu-record" --no-gpu -g dwarf,64 -o "$tmp/short.xpu" -- "$tmp/dwchain" 0.5 >/dev/null 2>&1 ||
	fail "xpu-record -g dwarf,64 failed"
"$B/xpu-report" --format=info "$tmp/short.xpu" >"$tmp/short.info" 2>&1 ||
	fail "xpu-report --format=info (dwarf,64) failed"
[ "$(stops "$tmp/short.info" "copy end")" -ge 100 ] ||
	fail "a 64-byte copy did not end walks at the copy's end: $(grep -A3 stops "$tmp/short.info")"
grep -q '^ *[0-9]*  copy end   at dw_' "$tmp/short.info" ||
	fail "dwarf stops does not name the frame where the copy ended: $(grep -A3 stops "$tmp/short.info")"
grep -q '^  hint .*-g dwarf,65536' "$tmp/short.info" || fail "no hint to record a bigger copy"
! grep -q '^  hint' "$tmp/dwarf.info" || fail "bigger-copy hint where walks were complete"
# a 45 KiB deep main-thread stack with a 64 KiB copy: the copy cannot be whole (the stack's
# mapping ends first), so BPF must keep the longest readable prefix, which holds main
"$B/xpu-record" --no-gpu -g dwarf,65536 -o "$tmp/deep.xpu" -- "$tmp/dwchain" 0.5 45 \
	>/dev/null 2>&1 || fail "xpu-record -g dwarf,65536 (deep stack) failed"
"$B/xpu-report" --format=info "$tmp/deep.xpu" >"$tmp/deep.info" 2>&1 ||
	fail "xpu-report --format=info (deep stack) failed"
dpct=$(awk '/^  complete/ { gsub(/[(%)]/, "", $7); print int($7) }' "$tmp/deep.info")
[ "${dpct:-0}" -ge 90 ] ||
	fail "deep stack, 64 KiB copy: complete-stack rate $dpct%: $(grep -A4 '^  dwarf ' "$tmp/deep.info")"
# 150 short processes, each a Dwfl holding its files open: under 64 descriptors the walks are
# those of an unbounded report (issue 31: past the limit walks failed silently)
"$B/xpu-record" --no-gpu --no-pack -g dwarf -F 4999 -o "$tmp/many.xpu" -- \
	sh -c 'for i in $(seq 150); do /bin/true; done' >/dev/null 2>&1 ||
	fail "xpu-record -g dwarf (150 processes) failed"
"$B/xpu-report" -F folded "$tmp/many.xpu" >"$tmp/many.free" 2>/dev/null
(ulimit -n 64 && "$B/xpu-report" -F folded "$tmp/many.xpu") >"$tmp/many.lim" 2>/dev/null ||
	fail "report of 150 processes under 64 descriptors failed"
[ -s "$tmp/many.free" ] && cmp -s "$tmp/many.free" "$tmp/many.lim" ||
	fail "150 processes: 64 descriptors change the walks: $(diff "$tmp/many.free" "$tmp/many.lim" | grep -c '^[<>]') lines differ"
bad=$("$B/xpu-record" -g dwarf,12 -- true 2>&1 >/dev/null; echo "rc=$?")
echo "$bad" | tr "\n" " " | grep -q "invalid dwarf stack size.*rc=2" || fail "-g dwarf,12 not refused: $bad"
echo "PASS $NAME (dwarf: $dw_pct% full chain, $cpct% complete, $dpct% with a 45 KiB stack; fp: $fp_pct% / $fpct%)"
