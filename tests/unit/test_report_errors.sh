#!/bin/bash
# What xpu-report says when something is missing, cut or failing, from a new user's issue:
# 1. one symbol warning, only for the files the stacks go through that gave no symbols
#    (missing or another build-id), naming the archive looked for and the command that makes
#    it; none when everything resolved (pipeline.xpu with its archive);
# 2. `archive` where most of those files are missing fails and writes nothing;
# 3. a trace cut anywhere near its end is "truncated" (read up to the cut), a damaged one
#    "corrupt";
# 4. a failed write of the output says the file and errno once, exits 1, and removes the
#    partial file (not a device);
# 5. each warning at most once per process (damaged archive entries, diff of one trace).
set -u
NAME=test_report_errors
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
R=$B/xpu-report
S=$ROOT/samples/traces
fail=0
bad() { echo "FAIL $NAME: $*"; fail=1; }
[ -x "$R" ] || { echo "FAIL $NAME: $R not built"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'umount "$tmp/full" 2>/dev/null; rm -rf "$tmp"' EXIT
lines() { grep -c "$1" "$2"; }

# ---- 1. the symbol warning ------------------------------------------------------------------
# its archive resolves every file the stacks touch: silent, even where local files differ
"$R" -F folded "$S/pipeline.xpu" >/dev/null 2>"$tmp/err" || bad "pipeline.xpu failed"
[ -s "$tmp/err" ] && bad "pipeline.xpu with its archive: $(cat "$tmp/err")"
"$R" -F folded --no-host-files "$S/pipeline.xpu" >/dev/null 2>"$tmp/err" || bad "pipeline.xpu failed"
[ -s "$tmp/err" ] && bad "pipeline.xpu with its archive, --no-host-files: $(cat "$tmp/err")"
# no archive: one line, the files that matter named, the archive path and the command
cp "$S/torch-small.xpu" "$tmp/ts.xpu"
"$R" --no-host-files "$tmp/ts.xpu" >/dev/null 2>"$tmp/err" || bad "torch-small failed"
w="could not be symbolized"
[ "$(wc -l < "$tmp/err")" = 1 ] && [ "$(lines "$w" "$tmp/err")" = 1 ] ||
	bad "torch-small: not one symbol warning: $(cat "$tmp/err")"
grep -q "python3.12" "$tmp/err" && grep -q "no archive $tmp/ts.xpu.xpa" "$tmp/err" &&
	grep -q "'xpu-report archive $tmp/ts.xpu' on the recording host" "$tmp/err" ||
	bad "torch-small: warning lacks a file, the archive or the command: $(cat "$tmp/err")"

# ---- 2. archive where the files are missing -------------------------------------------------
# the trace generator is not under test: the plain build's library (also in the SAN=1 pass)
lib=$ROOT/build/libxpucommon.a
[ -f "$lib" ] || lib=$B/libxpucommon.a
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$tmp/make_hostile" \
	"$ROOT/tests/unit/make_hostile.c" "$lib" -lzstd ||
	{ echo "FAIL $NAME: cannot build make_hostile"; exit 1; }
"$tmp/make_hostile" escape "$tmp/esc.xpu" /bin/sh || exit 1
# its 5 DSO records are one file (one build-id), not found without --symfs
# (tests/unit/make_hostile.c)
"$R" archive "$tmp/esc.xpu" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc != 0 ] || bad "archive with every file missing: exit 0"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "only 0 of the 1 file the stacks.*nothing written" "$tmp/err" ||
	bad "archive with every file missing: not one line saying why: $(cat "$tmp/err")"
ls "$tmp"/esc.xpu.xpa* >/dev/null 2>&1 && bad "archive with every file missing wrote a file"
# a trace whose pack is beside it, on a machine without its files: the pack's names are not
# this machine's, so no new pack is made from them, and the one there is left as it was
cp "$S/pipeline.xpu" "$S/pipeline.xpu.xpa" "$tmp/"
"$R" archive "$tmp/pipeline.xpu" >"$tmp/out" 2>"$tmp/err" &&
	bad "archive of pipeline.xpu from its pack alone succeeded: $(cat "$tmp/out")"
grep -q "only [0-9]* of the 8 files the stacks of $tmp/pipeline.xpu go through" "$tmp/err" ||
	bad "archive from a pack alone: not one line saying why: $(cat "$tmp/err")"
cmp -s "$S/pipeline.xpu.xpa" "$tmp/pipeline.xpu.xpa" || bad "a refused archive changed the pack there"

# ---- 3. truncated, corrupt ------------------------------------------------------------------
# a trace of many frames (torch-small.xpu), so that a cut leaves frames to read
CUT_SRC=$S/torch-small.xpu
size=$(wc -c < "$CUT_SRC")
for cut in 1 10 24 31 32 33 1000 $((size / 2)); do
	head -c $((size - cut)) "$CUT_SRC" >"$tmp/cut.xpu"
	"$R" -F folded --no-host-files "$tmp/cut.xpu" >"$tmp/out" 2>"$tmp/err" ||
		bad "cut $cut bytes short: exit $?"
	grep -q "warning: trace truncated after" "$tmp/err" && ! grep -q corrupt "$tmp/err" ||
		bad "cut $cut bytes short: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] || bad "cut $cut bytes short: nothing reported"
	"$R" -F folded --no-host-files --strict "$tmp/cut.xpu" >/dev/null 2>&1
	[ $? = 2 ] || bad "cut $cut bytes short: --strict did not exit 2"
done
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
	"$CUT_SRC" "$tmp/cut.xpu"
"$R" -F folded --no-host-files "$tmp/cut.xpu" >/dev/null 2>"$tmp/err"
grep -q "warning: trace corrupt after" "$tmp/err" || bad "a flipped byte: $(cat "$tmp/err")"

# ---- 4. write errors ------------------------------------------------------------------------
P="$S/pipeline.xpu"
"$R" -F chrome --no-host-files -o /dev/full "$P" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "xpu-report: cannot write /dev/full: No space left on device" ] ||
	bad "-o /dev/full: exit $rc: $(cat "$tmp/err")"
[ -c /dev/full ] || bad "/dev/full is no longer a device"
"$R" -F perfetto --no-host-files -o /dev/full "$P" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "xpu-report: cannot write /dev/full: No space left on device" ] ||
	bad "-F perfetto -o /dev/full: exit $rc: $(cat "$tmp/err")"
"$R" -F chrome --no-host-files "$P" >/dev/full 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "xpu-report: cannot write standard output: No space left on device" ] ||
	bad "stdout on /dev/full: exit $rc: $(cat "$tmp/err")"
# a file that cannot grow (a file size limit; its signal ignored, so write fails EFBIG): no
# archive beside this copy, whose files would be extracted under the same limit
cp "$P" "$tmp/p.xpu"
(trap '' XFSZ; ulimit -f 16; "$R" -F chrome --no-host-files -o "$tmp/part.json" "$tmp/p.xpu") \
	>/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ "$(lines "cannot write $tmp/part.json: File too large" "$tmp/err")" = 1 ] ||
	bad "file size limit: exit $rc: $(cat "$tmp/err")"
[ -e "$tmp/part.json" ] && bad "file size limit: partial $tmp/part.json left"
# a full file system, where one can be mounted (root)
mkdir "$tmp/full"
if mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
	"$R" -F chrome --no-host-files -o "$tmp/full/out.json" "$P" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "xpu-report: cannot write $tmp/full/out.json: No space left on device" ] ||
		bad "full tmpfs: exit $rc: $(cat "$tmp/err")"
	[ -e "$tmp/full/out.json" ] && bad "full tmpfs: partial out.json left"
	umount "$tmp/full"
fi
# a directory without write permission (root writes anywhere: run as nobody)
mkdir "$tmp/ro" && chmod 555 "$tmp/ro" && chmod 755 "$tmp"
as=""
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ] || [ -n "$as" ]; then
	$as "$R" -F chrome --no-host-files -o "$tmp/ro/out.json" "$P" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] && [ "$(cat "$tmp/err")" = "xpu-report: cannot write $tmp/ro/out.json: Permission denied" ] ||
		bad "read-only directory: exit $rc: $(cat "$tmp/err")"
fi

# ---- 5. each warning once -------------------------------------------------------------------
# every archive entry damaged: one warning, not one per file looked up
python3 - "$S/pipeline.xpu.xpa" "$tmp/pipeline.xpu.xpa" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
pad8 = lambda n: (n + 7) & ~7
off = 32
while off + 64 <= len(b):
    esize, = struct.unpack_from("<I", b, off + 4)
    plen, = struct.unpack_from("<H", b, off + 10)
    comp, = struct.unpack_from("<Q", b, off + 40)
    payload = off + esize + pad8(plen)
    b[payload + comp // 2] ^= 0xff
    off = payload + pad8(comp)
open(sys.argv[2], "wb").write(b)
EOF
"$R" -F folded --no-host-files "$tmp/pipeline.xpu" >/dev/null 2>"$tmp/err"
[ "$(lines "a damaged entry was skipped" "$tmp/err")" = 1 ] ||
	bad "damaged archive entries: $(cat "$tmp/err")"
# diff of a truncated trace with itself: its warning once; both sides' files in one line
head -c $((size - 10)) "$CUT_SRC" >"$tmp/cut.xpu"
rm -f "$tmp/cut.xpu.xpa"
"$R" diff --no-host-files "$tmp/cut.xpu" "$tmp/cut.xpu" >/dev/null 2>"$tmp/err"
[ "$(lines "trace truncated" "$tmp/err")" = 1 ] && [ "$(lines "$w" "$tmp/err")" = 1 ] ||
	bad "diff of a cut trace with itself: $(cat "$tmp/err")"
cp "$S/torch-python.xpu" "$tmp/tp.xpu"
"$R" diff --no-host-files "$tmp/ts.xpu" "$tmp/tp.xpu" >/dev/null 2>"$tmp/err"
[ "$(lines "$w" "$tmp/err")" = 1 ] && grep -q "nor beside 1 other trace" "$tmp/err" ||
	bad "diff of two traces without archives: $(cat "$tmp/err")"

[ $fail = 0 ] && echo "PASS $NAME"
exit $fail
