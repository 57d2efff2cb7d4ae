#!/bin/bash
# Portable traces: record (-g dwarf), `xpu-report archive`, then delete or rebuild the
# binaries; the report must symbolize and unwind from TRACE.xpa alone, and warn about a
# mismatched build-id when there is no archive. Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_archive
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/bin
mkdir -p "$bin"
NOFP="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
build() {
	${CC:-gcc} $NOFP -fPIC -shared $1 -o "$bin/libdwchain.so" tests/e2e/dwarf/chain_lib.c &&
		${CC:-gcc} $NOFP -o "$bin/dwchain" tests/e2e/dwarf/chain_main.c -L"$bin" -ldwchain \
			-Wl,-rpath,"$bin"
}
build "" || fail "building tests/e2e/dwarf"

"$B/xpu-record" --no-gpu -g dwarf -o "$tmp/t.xpu" -- "$bin/dwchain" 1 >/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
	skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record exited $rc: $(head -1 "$tmp/err")"
CHAIN='main;dw_deep;dw_loop;dw_main_1;dw_main_2;dw_main_3;dw_lib_a;dw_lib_b;dw_lib_c;dw_leaf '
"$B/xpu-report" --format=folded "$tmp/t.xpu" >"$tmp/before" || fail "report before archiving"
grep -q "$CHAIN" "$tmp/before" || fail "no full chain even with the binaries present"

"$B/xpu-report" archive "$tmp/t.xpu" >"$tmp/aout" 2>"$tmp/aerr" ||
	fail "xpu-report archive failed: $(head -1 "$tmp/aerr")"
[ -s "$tmp/t.xpu.xpa" ] || fail "no $tmp/t.xpu.xpa written"
grep -q "files" "$tmp/aout" || fail "archive printed no summary: $(cat "$tmp/aout")"

# 1. binaries gone: everything comes from the archive
rm -rf "$bin"
"$B/xpu-report" --format=folded "$tmp/t.xpu" >"$tmp/after" 2>"$tmp/rerr" ||
	fail "report from the archive failed: $(head -1 "$tmp/rerr")"
grep -q "$CHAIN" "$tmp/after" || fail "the archive alone does not give the chain: $(sort -t' ' -k2 -n "$tmp/after" | tail -1)"
"$B/xpu-report" -v --format=folded "$tmp/t.xpu" 2>&1 >/dev/null | grep -q "/proc/self/fd" &&
	fail "-v names an archived file by its descriptor instead of \"archive\""

# 2. rebuilt binaries (new build-ids), no archive: never used; one warning says what to do,
#    -v names each file
mkdir -p "$bin"
build "-DDW_REBUILT=1 -Wl,--build-id=sha1 -g" || fail "rebuilding"
mv "$tmp/t.xpu.xpa" "$tmp/saved.xpa"
"$B/xpu-report" --format=folded "$tmp/t.xpu" >"$tmp/mism" 2>"$tmp/merr" ||
	fail "report with mismatched binaries failed"
[ "$(grep -c "could not be symbolized (another build-id here): .*libdwchain.so.*; no archive $tmp/t.xpu.xpa: make it with 'xpu-report archive $tmp/t.xpu'" "$tmp/merr")" = 1 ] ||
	fail "not one build-id mismatch summary: $(head -3 "$tmp/merr")"
grep -q "build-id mismatch for" "$tmp/merr" && fail "a line per mismatched file without -v"
"$B/xpu-report" -v --format=folded "$tmp/t.xpu" 2>&1 >/dev/null |
	grep -q "build-id mismatch for $bin/libdwchain.so" || fail "-v does not name the mismatched file"
grep -q "dw_lib_a" "$tmp/mism" && fail "symbols of a mismatched file were used"

# 3. same, with the archive back: the archive wins over the mismatched local file
mv "$tmp/saved.xpa" "$tmp/t.xpu.xpa"
"$B/xpu-report" --format=folded "$tmp/t.xpu" >"$tmp/again" 2>/dev/null
grep -q "$CHAIN" "$tmp/again" || fail "archive not used when the local file mismatches"

# 4. a damaged archive: one warning, and the report still runs
printf 'garbage' | dd of="$tmp/t.xpu.xpa" bs=1 seek=40 conv=notrunc 2>/dev/null
"$B/xpu-report" --format=folded "$tmp/t.xpu" >/dev/null 2>"$tmp/derr" || fail "damaged archive broke the report"
grep -q "damaged" "$tmp/derr" || fail "no warning for a damaged archive: $(head -1 "$tmp/derr")"
"$B/xpu-report" archive >/dev/null 2>&1 && fail "archive without a trace succeeded"
echo "PASS $NAME ($(cat "$tmp/aout"))"
