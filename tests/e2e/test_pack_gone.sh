#!/bin/bash
# Files only the traced process can reach are packed (docs/robustness.md): a library
# replaced on disk after it was loaded (its mapping "(deleted)", another file at its path) and
# one loaded from a memfd are copied by the recorder through /proc/PID/map_files, and their
# names are in the pack. tests/e2e/pack/gone_main.c works in both and in a third library,
# then waits on a FIFO until the memfd copy exists (a bounded wait, that says what it waited
# for): the recorder has then seen all three. The test replaces the third library's file
# (an upgrade while the process runs, after the recorder saw the file at its path): it is
# copied at the last look, from the descriptor the recorder kept (STATS host_copies_late).
# The first one may be seen before or after gone_main replaces it: copied at once or at the
# last look, either way copied. Read as on a laptop (--no-host-files), the report names the
# three functions; the copies are gone after the pack.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_pack_gone
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
rec=
# a failure leaves no target waiting on its FIFO: the recorder's children go with it
trap '[ -n "$rec" ] && { pkill -KILL -P $rec; kill -KILL $rec; } 2>/dev/null; rm -rf "$tmp"' EXIT
cc=${CC:-gcc}
$cc -O1 -fPIC -shared -Wl,--build-id=sha1 -DSPIN=xpu_gone_spin -o "$tmp/libgone.so" \
	tests/e2e/pack/gone_plugin.c &&
	$cc -O1 -fPIC -shared -Wl,--build-id=sha1 -DSPIN=xpu_memfd_spin -o "$tmp/libmem.so" \
		tests/e2e/pack/gone_plugin.c &&
	$cc -O1 -fPIC -shared -Wl,--build-id=sha1 -DSPIN=xpu_up_spin -o "$tmp/libup.so" \
		tests/e2e/pack/gone_plugin.c &&
	$cc -O1 -o "$tmp/gone_main" tests/e2e/pack/gone_main.c -ldl || fail "building tests/e2e/pack"
mkfifo "$tmp/go"
# the copies of a recorder killed before its pack: removed by the next recording of the trace;
# a directory of that name that is not one (not root's 0711) is left alone
mkdir -m 0711 "$tmp/t.xpu.files-AbCdEf" && mkdir -p "$tmp/t.xpu.files-AbCdEf/usr/lib" &&
	echo x >"$tmp/t.xpu.files-AbCdEf/usr/lib/libx.so" && mkdir -m 0755 "$tmp/t.xpu.files-notour"

"$B/xpu-record" --no-gpu -o "$tmp/t.xpu" -- "$tmp/gone_main" "$tmp/libgone.so" "$tmp/libmem.so" \
	"$tmp/libup.so" "$tmp/go" >/dev/null 2>"$tmp/err" &
rec=$!
# the memfd's copy: TRACE.files-XXXXXX/ + the path as /proc/PID/maps names it
for _ in $(seq 600); do
	n=$(find "$tmp" -path "$tmp/t.xpu.files-??????/*memfd:*" -type f 2>/dev/null | wc -l)
	[ "$n" -ge 1 ] && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.1
done
if [ "${n:-0}" -lt 1 ]; then
	grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
	fail "no copy of the memfd library appeared beside the trace within 60 s" \
		"($(find "$tmp" -path "$tmp/t.xpu.files-*" 2>/dev/null | tr '\n' ' ')): $(cat "$tmp/err")"
fi
# the upgrade: the recorder saw libup.so at its path; another file is there now
rm "$tmp/libup.so" && echo "not the library" >"$tmp/libup.so"
exec 3>"$tmp/go" && echo >&3 && exec 3>&-
wait $rec
rc=$?
rec=
[ $rc = 0 ] || fail "xpu-record exited $rc: $(tail -3 "$tmp/err")"
[ -s "$tmp/t.xpu.xpa" ] || fail "no symbol pack: $(cat "$tmp/err")"
[ -d "$tmp/t.xpu.files-notour" ] || fail "a directory not made by xpu-record was removed"
rmdir "$tmp/t.xpu.files-notour"
[ -z "$(find "$tmp" -maxdepth 1 -name 't.xpu.files-*')" ] ||
	fail "copies left behind: $(find "$tmp" -maxdepth 1 -name 't.xpu.files-*')"
HOME=$tmp/nowhere "$B/xpu-report" -F folded --no-host-files "$tmp/t.xpu" >"$tmp/folded" \
	2>"$tmp/rerr" || fail "xpu-report: $(head -2 "$tmp/rerr")"
for f in xpu_gone_spin xpu_memfd_spin xpu_up_spin; do
	grep -q "$f" "$tmp/folded" || fail "the pack does not name $f: $(head -c 800 "$tmp/folded")"
done
"$B/xpu-report" -F info "$tmp/t.xpu" >"$tmp/info" || fail "xpu-report -F info failed"
grep -q "host_copies *3$" "$tmp/info" || fail "STATS host_copies is not 3: $(grep host_cop "$tmp/info")"
# libup.so at the last look; libgone.so too if the recorder saw it before gone_main replaced it
grep -qE "host_copies_late *[12]$" "$tmp/info" ||
	fail "STATS host_copies_late is not 1 or 2: $(grep host_cop "$tmp/info")"
echo "PASS $NAME: libraries replaced before and after the recorder saw them and a memfd one" \
	"copied, named by the pack"
