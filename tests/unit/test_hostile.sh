#!/bin/bash
# Hostile traces (issue 18), written by tests/unit/make_hostile.c: output amplification by one
# long name, DSO paths naming devices, FIFOs and pseudo-files, recorded paths that escape
# --symfs, and a stack over the format's depth limit. xpu-report must stay bounded, open none
# of those files (checked with strace), and use nothing outside --symfs with --no-host-files.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
R="$ROOT/$BUILD/xpu-report"
NAME=test_hostile
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

bad() { echo "FAIL $NAME: $*"; fail=1; }
command -v strace >/dev/null || { echo "SKIP $NAME: no strace (scripts/install-deps.sh)"; exit 77; }
[ -x "$R" ] || { echo "FAIL $NAME: $R not built"; exit 1; }
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$T/make_hostile" \
	"$ROOT/tests/unit/make_hostile.c" "$ROOT/build/libxpucommon.a" -lzstd ||
	{ echo "FAIL $NAME: cannot build make_hostile"; exit 1; }

# 1. a 1 MiB API name, 2,252 calls: every output bounded (names cut at 4 KB), and
#    --max-output stops the output with a clear error
"$T/make_hostile" longname "$T/long.xpu" || exit 1
for f in chrome text folded svg info; do
	"$R" -F $f -o "$T/long.$f" "$T/long.xpu" 2>"$T/err" ||
		{ [ $f = folded ] || [ $f = svg ] ||
		  # API calls only: text writes its header, then says there is nothing to rank
		  { [ $f = text ] && grep -q "nothing to report" "$T/err"; } ||
		  bad "long name: -F $f failed: $(cat "$T/err")"; }
	size=$(wc -c < "$T/long.$f")
	[ "$size" -le $((16 << 20)) ] || bad "long name: -F $f wrote $size bytes"
done
grep -q 'AAAA\.\.\."' "$T/long.chrome" || bad "long name: chrome names not cut and marked"
"$R" -F chrome --max-output=1M -o "$T/lim.json" "$T/long.xpu" 2>"$T/err"
rc=$?
size=$(wc -c < "$T/lim.json")
[ $rc != 0 ] && [ "$size" -le $((1 << 20)) ] && grep -q "passed --max-output=1048576" "$T/err" ||
	bad "--max-output=1M: exit $rc, $size bytes, stderr: $(cat "$T/err")"
"$R" -F chrome --max-output=10x "$T/long.xpu" >/dev/null 2>&1 && bad "--max-output=10x accepted"

# 2. DSOs named /dev/zero, /dev/null, /proc/kmsg, /proc/self/mem, a FIFO, a directory and an
#    empty file: none is opened, by any format or the archive
mkdir "$T/d" "$T/d/dir" && mkfifo "$T/d/fifo" && : > "$T/d/empty"
"$T/make_hostile" files "$T/files.xpu" "$T/d" || exit 1
for f in text info chrome folded svg; do
	strace -f -e trace=open,openat,openat2 -o "$T/st.$f" "$R" -F $f "$T/files.xpu" \
		>/dev/null 2>&1
done
strace -f -e trace=open,openat,openat2 -o "$T/st.archive" "$R" archive -o "$T/files.xpa" \
	"$T/files.xpu" >/dev/null 2>&1
opened=$(cat "$T"/st.* | grep -E "open.*\"(/dev/zero|/dev/null|/proc/kmsg|/proc/self/mem|$T/d/)")
[ -z "$opened" ] || bad "device or pseudo-file opened: $opened"
"$R" -F info "$T/files.xpu" | grep -c "local: not found" | grep -qx 7 ||
	bad "device DSOs not all 'not found'"

# 3. recorded paths that leave --symfs: ../../../../usr/bin/dash (".." past the root), a
#    symlink in DIR to the host's /usr/bin/dash; a copy inside DIR is found (path cleaned)
mkdir -p "$T/symfs/usr/bin"
ln -s /usr/bin/dash "$T/symfs/escape-link"
cp /usr/bin/dash "$T/symfs/usr/bin/copy"
"$T/make_hostile" escape "$T/esc.xpu" /usr/bin/dash || exit 1
strace -f -e trace=open,openat,openat2 -o "$T/st.esc" "$R" -F info --no-host-files \
	--symfs="$T/symfs" "$T/esc.xpu" > "$T/esc.info" 2>&1
grep -q "^  [0-9a-f]* \.\./\.\./\.\./\.\./usr/bin/dash local: not found" "$T/esc.info" ||
	bad "../ path used: $(grep dash "$T/esc.info")"
grep -q "^  [0-9a-f]* /escape-link local: not found" "$T/esc.info" ||
	bad "symlink out of --symfs used: $(grep escape-link "$T/esc.info")"
grep -q "/usr//bin/./copy local: $T/symfs/usr/bin/copy$" "$T/esc.info" ||
	bad "the copy under --symfs not found: $(grep copy "$T/esc.info")"
grep -E "open.*(\.\./|escape-link)" "$T/st.esc" && bad "escaping path opened"
"$R" archive --symfs="$T/symfs" -o "$T/esc.xpa" "$T/esc.xpu" >/dev/null 2>"$T/err" ||
	bad "archive of 3 files found of 5 failed: $(cat "$T/err")"
grep -aq "/usr/bin/copy" "$T/esc.xpa" && ! grep -aq "\.\./\|/usr//bin" "$T/esc.xpa" ||
	bad "archive entry names not cleaned"

# 4. FORMAT.md 3.3: a stack of more than 1,024 addresses is a bad record; 1,024 is fine
"$T/make_hostile" deep "$T/deep.xpu" || exit 1
"$R" -F info "$T/deep.xpu" > "$T/deep.info" 2>&1
grep -q "bad records      1$" "$T/deep.info" && grep -q "bad stack refs   1$" "$T/deep.info" ||
	bad "deep stacks: $(grep bad "$T/deep.info")"
"$R" -F folded "$T/deep.xpu" | grep -q '^victim;\[unknown stack\] 1$' ||
	bad "the 1,025-address stack is not an unknown stack"

[ $fail = 0 ] && echo "PASS $NAME"
exit $fail
