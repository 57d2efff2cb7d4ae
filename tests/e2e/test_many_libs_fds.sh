#!/bin/bash
# Descriptors (docs/robustness.md): under `ulimit -n 1024` (soft and hard: the recorder cannot
# raise it) a target with 1,000 libraries still gets a full recording and pack: the
# unwind-table queue holds a bounded number of descriptors (STATS cfi_fds_peak) and queues
# the rest by name, running out would be said once (fd_exhausted), and no table fails
# (cfi_files_failed; a file whose process is gone before its table's turn is
# cfi_files_unopened, no loss). tests/e2e/maps/many_maps.c maps 1,000 copies of a library,
# one by one. Under a lower soft limit the recorder raises its own to the hard one, and the
# command keeps the limit it was started with.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_many_libs_fds
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
lib=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
[ -f "$lib" ] || skip "no libz.so.1 to copy"
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1024 ] || skip "hard ulimit -n under 1024"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -O1 -o "$tmp/many_maps" tests/e2e/maps/many_maps.c || fail "building many_maps.c"
n=1000 lim=1024 soft=192
mkdir "$tmp/d"
(ulimit -n $lim && exec "$B/xpu-record" --no-gpu -o "$tmp/t.xpu" -- "$tmp/many_maps" "$tmp/d" $n "$lib") \
	>/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record exited $rc: $(tail -3 "$tmp/err")"
grep -i "descriptor" "$tmp/err" && fail "ran out of descriptors under ulimit -n $lim (above)"
[ -s "$tmp/t.xpu.xpa" ] || fail "no symbol pack: $(cat "$tmp/err")"
"$B/xpu-report" -F info "$tmp/t.xpu" >"$tmp/info" 2>&1 || fail "xpu-report -F info"
stat() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/info"; }
[ "$(stat fd_exhausted)" = 0 ] || fail "fd_exhausted is '$(stat fd_exhausted)'"
[ "$(stat mapping_scan_failures)" = 0 ] || fail "mappings lost: $(grep mapping "$tmp/info")"
[ "$(stat cfi_files_failed)" = 0 ] || fail "$(grep -E 'cfi_files' "$tmp/info" | tr -s ' ')"
peak=$(stat cfi_fds_peak)
[ -n "$peak" ] && [ "$peak" -le 64 ] || fail "the unwind-table queue held ${peak:-?} descriptors"
# the command keeps the limit it was started with
(ulimit -Sn $soft && exec "$B/xpu-record" --no-gpu --no-pack -g fp -o "$tmp/u.xpu" -- \
	sh -c 'ulimit -Sn >"$0"' "$tmp/limit") 2>"$tmp/uerr" || fail "recording ulimit: $(cat "$tmp/uerr")"
[ "$(cat "$tmp/limit")" = $soft ] || fail "the command ran with ulimit -n $(cat "$tmp/limit"), not $soft"
echo "PASS $NAME: $n libraries under ulimit -n $lim: full pack, queue peak $peak descriptors," \
	"$(stat cfi_files_reopened) tables opened by name, $(stat cfi_files_unopened) unopened"

