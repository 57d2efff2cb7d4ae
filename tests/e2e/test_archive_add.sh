#!/bin/bash
# `xpu-report archive --add`: a symbol pack completed on another machine. A trace's pack is made
# where its library is missing (the pack lacks it: the report warns, the library's frames are
# addresses); then, where the library is back but the program is gone, `archive --add` keeps
# the program's names from the first pack and adds the library's: the report reads the whole
# chain with --no-host-files, without a warning, and a plain archive there refuses (most files
# missing). Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_archive_add
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/bin
mkdir -p "$bin" "$tmp/away"
NOFP="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
${CC:-gcc} $NOFP -fPIC -shared -o "$bin/libdwchain.so" tests/e2e/dwarf/chain_lib.c &&
	${CC:-gcc} $NOFP -o "$bin/dwchain" tests/e2e/dwarf/chain_main.c -L"$bin" -ldwchain \
		-Wl,-rpath,"$bin" || fail "building tests/e2e/dwarf"

# no stack copies: the first pack's walks of them would pass on as they were (made without the
# library), and the comparison below is of names
"$B/xpu-record" --no-gpu --no-pack -g cfi,nocopy -o "$tmp/t.xpu" -- "$bin/dwchain" 1 >/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
	skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record exited $rc: $(head -1 "$tmp/err")"
CHAIN='main;dw_deep;dw_loop;dw_main_1;dw_main_2;dw_main_3;dw_lib_a;dw_lib_b;dw_lib_c;dw_leaf '
folded() { "$B/xpu-report" --no-host-files --format=folded "$@"; }

# 1. the library missing: a pack of the rest, which lacks it
mv "$bin/libdwchain.so" "$tmp/away/"
"$B/xpu-report" archive "$tmp/t.xpu" >"$tmp/a1" 2>"$tmp/e1" ||
	fail "archive without the library failed: $(head -1 "$tmp/e1")"
grep -q "libdwchain.so" "$tmp/e1" || fail "the archive did not say the library is missing: $(cat "$tmp/e1")"
folded "$tmp/t.xpu" >"$tmp/f1" 2>"$tmp/r1" || fail "report of the first pack failed"
grep -q "dw_lib_a" "$tmp/f1" && fail "the library's names without the library"
grep -q "could not be symbolized.*libdwchain.so" "$tmp/r1" || fail "no warning for the missing library: $(cat "$tmp/r1")"

# 2. another machine: the library back, the program gone (its names only in the first pack)
mv "$tmp/away/libdwchain.so" "$bin/"
mv "$bin/dwchain" "$tmp/away/"
"$B/xpu-report" archive --add "$tmp/t.xpu" >"$tmp/a2" 2>"$tmp/e2" ||
	fail "archive --add failed: $(head -1 "$tmp/e2")"
grep -q "symbol pack of" "$tmp/a2" || fail "archive --add printed no summary: $(cat "$tmp/a2")"
folded "$tmp/t.xpu" >"$tmp/f2" 2>"$tmp/r2" || fail "report of the completed pack failed"
grep -q "$CHAIN" "$tmp/f2" || fail "the completed pack does not give the whole chain: $(sort -t' ' -k2 -n "$tmp/f2" | tail -1)"
grep -q "could not be symbolized" "$tmp/r2" && fail "a warning with the completed pack: $(cat "$tmp/r2")"
# the same folded output as with every file at hand
mv "$tmp/away/dwchain" "$bin/"
"$B/xpu-report" archive -o "$tmp/all.xpa" "$tmp/t.xpu" >/dev/null 2>&1 || fail "a plain archive with every file failed"
cp "$tmp/t.xpu" "$tmp/u.xpu" && cp "$tmp/all.xpa" "$tmp/u.xpu.xpa"
folded "$tmp/u.xpu" >"$tmp/f3" 2>/dev/null
cmp -s <(sort "$tmp/f2") <(sort "$tmp/f3") ||
	fail "the completed pack reads otherwise than a pack made with every file: $(diff <(sort "$tmp/f2") <(sort "$tmp/f3") | head -4)"

# 3. --add makes no --elf archive
"$B/xpu-report" archive --add --elf "$tmp/t.xpu" >/dev/null 2>"$tmp/e4" && fail "--add --elf accepted"
grep -q -- "--add" "$tmp/e4" || fail "--add --elf: no clear error: $(cat "$tmp/e4")"
echo "PASS $NAME"
