#!/usr/bin/env bash
# The unwind-table cache end to end: a first recording builds and stores every table, a second
# of the same program reads every one back (no miss, no build) and its stacks are as complete;
# tables put into BPF one by one and in a batch alike; --no-cache touches no cache; a cache directory others may write to is refused with one line
# and the recording goes on without it.
set -u
cd "$(dirname "$0")/../.."
NAME=test_cfi_cache
B=${BUILD:-build}
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stat_of() { "$B/xpu-report" -F info "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2 }'; }
# a program that runs long enough for its tables to be built while it runs (no timing needed:
# the start waits for its first files' tables)
prog=(/bin/sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done')
rec() { "$B/xpu-record" "$@" -o "$tmp/t.xpu" -- "${prog[@]}" >/dev/null 2>"$tmp/err" ||
	fail "recording ($*) failed: $(tail -1 "$tmp/err")"; }

rec --cache-dir "$tmp/cache"
w1=$(stat_of "$tmp/t.xpu" cfi_cache_writes); f1=$(stat_of "$tmp/t.xpu" cfi_files)
[ "${w1:-0}" -ge 2 ] && [ "$(stat_of "$tmp/t.xpu" cfi_cache_hits)" = 0 ] ||
	fail "first run: want tables written and no hit, got ${w1:-none} written, $(stat_of "$tmp/t.xpu" cfi_cache_hits) hits"
rec --cache-dir "$tmp/cache"
h2=$(stat_of "$tmp/t.xpu" cfi_cache_hits); m2=$(stat_of "$tmp/t.xpu" cfi_cache_misses)
[ "${h2:-0}" -ge "$w1" ] && [ "${m2:-1}" = 0 ] && [ "$(stat_of "$tmp/t.xpu" cfi_cache_writes)" = 0 ] ||
	fail "second run: want $w1+ hits, no miss or write; got ${h2:-0} hits, ${m2:-?} misses"
[ "$(stat_of "$tmp/t.xpu" cfi_files)" = "$f1" ] || fail "second run: $(stat_of "$tmp/t.xpu" cfi_files) tables, first $f1"
[ "$(stat_of "$tmp/t.xpu" cfi_cache_rejected)" = 0 ] || fail "second run: entries rejected"
# the tables put into BPF one at a time (XPU_CFI_PUBLISH=single, the old way) or in a batch
# (the default, both runs above): the same tables, none failed
for mode in single batch; do
	XPU_CFI_PUBLISH=$mode rec --cache-dir "$tmp/cache"
	[ "$(stat_of "$tmp/t.xpu" cfi_files)" = "$f1" ] && [ "$(stat_of "$tmp/t.xpu" cfi_files_failed)" = 0 ] ||
		fail "XPU_CFI_PUBLISH=$mode: $(stat_of "$tmp/t.xpu" cfi_files) tables ($(stat_of "$tmp/t.xpu" cfi_files_failed) failed), first run $f1"
done

rec --no-cache --cache-dir "$tmp/cache"
[ "$(stat_of "$tmp/t.xpu" cfi_cache_hits)" = 0 ] && [ "$(stat_of "$tmp/t.xpu" cfi_cache_misses)" = 0 ] ||
	fail "--no-cache read the cache"

mkdir -m 0777 "$tmp/open"
chmod 0777 "$tmp/open"
rec --cache-dir "$tmp/open"
grep -q 'no unwind-table cache.*writable by others' "$tmp/err" || fail "a world-writable cache was not refused: $(cat "$tmp/err")"
[ "$(ls -A "$tmp/open")" = "" ] || fail "a refused cache directory was written to"
echo "PASS $NAME: tables stored, read back on the next recording, --no-cache and an unsafe directory respected"
