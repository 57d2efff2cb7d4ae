#!/bin/bash
# Symbol packs cover files without a build-id (issue 40; format-spec/ARCHIVE.md 2.6): a program
# and the library it dlopens, both linked -Wl,--build-id=none (as XLA's libraries, OpenBLAS and
# ptxas are), recorded here. Read as on a laptop (--no-host-files, from another folder, the
# binaries gone, only the trace and its pack), folded and text equal the recording host's, and
# name the library's and the program's functions. Without the pack they do not (the check can
# fail); a byte of the pack damaged is said, and the report still runs. Then the hostile
# cases of a key that is a path: the library rebuilt at its path after the recording is not
# packed (nor read on the host) as if it were the recorded one, and a second trace of the
# rebuilt library, read with the first trace's pack, does not take the first library's names.
# A library without build-id deleted while it runs is packed from the recorder's copy.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_pack_nobuildid
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
cc=${CC:-gcc}
command -v "$cc" >/dev/null || skip "no C compiler to build the test program"
command -v readelf >/dev/null || skip "no readelf to check the binaries have no build-id"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
R=$(pwd)/$B/xpu-report
bin=$tmp/bin
mkdir -p "$bin" "$tmp/laptop" "$tmp/nowhere"

# -O1 keeps the static functions apart: their names are in .symtab, nowhere else
$cc -O1 -fPIC -shared -Wl,--build-id=none -o "$bin/libnoid.so" tests/e2e/pack/plugin.c &&
	$cc -O1 -Wl,--build-id=none -o "$bin/noid_main" tests/e2e/pack/pack_main.c -ldl ||
	fail "building tests/e2e/pack without build-ids"
for f in libnoid.so noid_main; do
	readelf -n "$bin/$f" | grep -q "Build ID" && fail "$f has a build-id: the test proves nothing"
done

record() {	# name: records noid_main with the libnoid.so in $bin now
	"$B/xpu-record" --no-gpu -o "$tmp/$1.xpu" -- "$bin/noid_main" "$bin/libnoid.so" 0.6 \
		>/dev/null 2>"$tmp/$1.err"
	local rc=$?
	grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/$1.err" &&
		skip "BPF unavailable: $(head -1 "$tmp/$1.err")"
	[ $rc = 0 ] || fail "recording $1 exited $rc: $(tail -2 "$tmp/$1.err")"
	[ -s "$tmp/$1.xpu.xpa" ] || fail "$1: no pack written: $(cat "$tmp/$1.err")"
}

record t
# nothing left out: both files are packed, by the identity the trace recorded
grep -q "not archived" "$tmp/t.err" && fail "files left out of the pack: $(grep "not archived" "$tmp/t.err")"

# on the recording host: its files, no pack
mv "$tmp/t.xpu.xpa" "$tmp/t.pack"
for f in folded text; do
	"$R" -F $f "$tmp/t.xpu" >"$tmp/host.$f" 2>"$tmp/host.err" ||
		fail "host report -F $f: $(head -1 "$tmp/host.err")"
done
grep -q "plugin_outer;plugin_inner_loop" "$tmp/host.folded" ||
	fail "the host names not the library's functions: $(head -3 "$tmp/host.folded")"
grep -q "main;child_spin" "$tmp/host.folded" ||
	fail "the host names not the program's functions: $(head -3 "$tmp/host.folded")"

# as on a laptop: another folder, the binaries gone, the trace and its pack
mv "$bin" "$tmp/gone"
cp "$tmp/t.xpu" "$tmp/laptop/t.xpu"
(cd "$tmp/laptop" && HOME=$tmp/nowhere "$R" -F folded --no-host-files t.xpu) \
	>"$tmp/bare.folded" 2>/dev/null
cp "$tmp/t.pack" "$tmp/laptop/t.xpu.xpa"
for f in folded text; do
	(cd "$tmp/laptop" && HOME=$tmp/nowhere "$R" -F $f --no-host-files t.xpu) \
		>"$tmp/laptop.$f" 2>"$tmp/laptop.err" || fail "report with the pack -F $f: $(head -1 "$tmp/laptop.err")"
	cmp -s "$tmp/host.$f" "$tmp/laptop.$f" ||
		fail "-F $f with the pack differs from the host's: $(diff "$tmp/host.$f" "$tmp/laptop.$f" | head -4)"
done
[ -s "$tmp/laptop.err" ] && fail "warnings with the pack: $(head -2 "$tmp/laptop.err")"
grep -q "plugin_outer;plugin_inner_loop" "$tmp/laptop.folded" && grep -q "main;child_spin" "$tmp/laptop.folded" ||
	fail "the pack does not name the functions of the files without build-id: $(head -3 "$tmp/laptop.folded")"
# the check can fail: without the pack these frames are addresses
grep -q "plugin_inner_loop\|child_spin" "$tmp/bare.folded" &&
	fail "without its pack the laptop still names the functions: the test proves nothing"
cmp -s "$tmp/host.folded" "$tmp/bare.folded" && fail "the report reads the same without its pack"
# a pack damaged on its way (a byte of its first entry's payload): said, no crash, exit 0
if command -v python3 >/dev/null; then
	python3 - "$tmp/t.pack" "$tmp/laptop/t.xpu.xpa" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
path_len = int.from_bytes(b[32 + 10:32 + 12], "little")
b[32 + 64 + (path_len + 7) // 8 * 8 + 4] ^= 0xff
open(sys.argv[2], "wb").write(b)
EOF
	(cd "$tmp/laptop" && HOME=$tmp/nowhere "$R" -F folded --no-host-files t.xpu) \
		>"$tmp/damaged.folded" 2>"$tmp/damaged.err" ||
		fail "a damaged pack made the report fail: $(head -2 "$tmp/damaged.err")"
	grep -q "a damaged entry was skipped" "$tmp/damaged.err" ||
		fail "a damaged entry is not said: $(head -2 "$tmp/damaged.err")"
	cp "$tmp/t.pack" "$tmp/laptop/t.xpu.xpa"
fi

# the library rebuilt at its path after the recording (other functions, another size and
# mtime): the host does not take it for the recorded one, and `archive` does not pack it
mv "$tmp/gone" "$bin"
$cc -O1 -fPIC -shared -Wl,--build-id=none -Dplugin_inner_loop=rebuilt_inner \
	-Dplugin_outer=rebuilt_outer -o "$bin/libnoid.so.new" \
	tests/e2e/pack/plugin.c && mv "$bin/libnoid.so.new" "$bin/libnoid.so" || fail "rebuilding the library"
"$R" -F folded "$tmp/t.xpu" >"$tmp/changed.folded" 2>/dev/null
grep -q "rebuilt_" "$tmp/changed.folded" &&
	fail "the host named the recorded library's frames from the rebuilt one: $(grep -m1 rebuilt_ "$tmp/changed.folded")"
grep -q "main;child_spin" "$tmp/changed.folded" || fail "the unchanged program lost its names"
"$R" archive -o "$tmp/changed.xpa" "$tmp/t.xpu" >/dev/null 2>"$tmp/archive.err" ||
	fail "archive with the library rebuilt: $(head -1 "$tmp/archive.err")"
grep -q "1 file not archived (no build-id, and no file here with the size and mtime recorded): $bin/libnoid.so$" \
	"$tmp/archive.err" || fail "the rebuilt library is not said to be left out: $(cat "$tmp/archive.err")"

# a trace of the rebuilt library read with the first trace's pack: same path, another size
# and mtime, so the first library's entry is not its file's
record t2
grep -q "rebuilt_outer;rebuilt_inner" <("$R" -F folded "$tmp/t2.xpu" 2>/dev/null) ||
	fail "the second trace does not name the rebuilt library's functions on the host"
mv "$bin" "$tmp/gone"
cp "$tmp/t2.xpu" "$tmp/laptop/t2.xpu"
cp "$tmp/t.pack" "$tmp/laptop/t2.xpu.xpa"
(cd "$tmp/laptop" && HOME=$tmp/nowhere "$R" -F folded --no-host-files t2.xpu) \
	>"$tmp/wrong.folded" 2>/dev/null
grep -q "plugin_inner_loop\|plugin_outer" "$tmp/wrong.folded" &&
	fail "another library's pack entry named the rebuilt one's frames: $(grep -m1 plugin_ "$tmp/wrong.folded")"
grep -q "main;child_spin" "$tmp/wrong.folded" ||
	fail "the program (unchanged, same path, size and mtime) lost its names from the pack"
grep -q "libnoid.so+0x" "$tmp/wrong.folded" || fail "the rebuilt library's frames are not addresses"

# a library without build-id deleted while the program runs: the recorder copies it (at once,
# or at the last look from the descriptor it kept) with its mtime, which the pack knows it by
mv "$tmp/gone" "$bin"
lib=$bin/libdel.so
$cc -O1 -fPIC -shared -Wl,--build-id=none -o "$lib" tests/e2e/pack/plugin.c || fail "building libdel.so"
(for _ in $(seq 100); do grep -qs "$lib" /proc/[0-9]*/maps && break; sleep 0.1; done
	sleep 0.2; rm -f "$lib") &
waiter=$!
"$B/xpu-record" --no-gpu -o "$tmp/t3.xpu" -- "$bin/noid_main" "$lib" 1.5 >/dev/null 2>"$tmp/t3.err" ||
	fail "recording with the library deleted: $(tail -2 "$tmp/t3.err")"
wait $waiter
[ -e "$lib" ] && fail "the library was not deleted while the program ran"
grep -q "not archived" "$tmp/t3.err" && fail "the deleted library was left out: $(grep "not archived" "$tmp/t3.err")"
cp "$tmp/t3.xpu" "$tmp/t3.xpu.xpa" "$tmp/laptop/" || fail "no pack of the third trace: $(cat "$tmp/t3.err")"
(cd "$tmp/laptop" && HOME=$tmp/nowhere "$R" -F folded --no-host-files t3.xpu) >"$tmp/del.folded" 2>/dev/null
grep -q "plugin_outer;plugin_inner_loop" "$tmp/del.folded" ||
	fail "the deleted library's functions are not named by the pack: $(head -3 "$tmp/del.folded")"
echo "PASS $NAME ($(wc -l <"$tmp/host.folded") folded lines, pack $(stat -c %s "$tmp/t.pack") bytes)"
