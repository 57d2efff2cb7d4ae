#!/bin/bash
# Bad input never crashes and never leaves the user guessing: every bad invocation of
# xpu-record and xpu-report (a table below) exits non-zero with one clear line on stderr, and
# no sanitizer report or core dump. Recording cases that need BPF are skipped without root.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_bad_input
R=$B/xpu-record
P=$B/xpu-report
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ -x "$R" ] && [ -x "$P" ] || fail "run make first"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1	# a stray core file or default record.xpu would land here
ulimit -c unlimited 2>/dev/null
exec </dev/null
ROOT=$OLDPWD
R=$ROOT/$R
P=$ROOT/$P
SEED=$ROOT/tests/fuzz/seeds/cpu_burn.xpu
[ -f "$SEED" ] || fail "missing $SEED"

# inputs
: >empty.xpu
head -c 4096 /dev/urandom >random.xpu
head -c 1000 "$SEED" >cut.xpu
mkdir adir
cat >newer.c <<'C'
/* Copies a trace with its major version raised, header CRC fixed: a file from the future. */
#include <stddef.h>
#include <stdio.h>
#include "crc32c.h"
#include "xpu_format.h"
int main(int argc, char **argv)
{
	static char buf[1 << 22];
	FILE *f = fopen(argv[1], "rb"), *o = fopen(argv[2], "wb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	struct xpu_file_header *h = (struct xpu_file_header *)buf;

	if (!o || n < sizeof(*h))
		return 1;
	h->major += 1;
	h->hdr_crc32c = crc32c(0, h, offsetof(struct xpu_file_header, hdr_crc32c));
	return fwrite(buf, 1, n, o) != n;
}
C
${CC:-cc} -O1 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o newer newer.c "$ROOT/$B/libxpucommon.a" \
	-lzstd >cc.log 2>&1 || fail "cannot build the header patcher: $(head -3 cc.log)"
./newer "$SEED" newer.xpu || fail "cannot write newer.xpu"
# a trace whose binary path is a FIFO (or a device): the report must not block opening it
mkfifo fifo
${CC:-cc} -O1 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o make_synthetic \
	"$ROOT/tests/golden/make_synthetic.c" "$ROOT/$B/libxpucommon.a" -lzstd >cc.log 2>&1 ||
	fail "cannot build make_synthetic: $(head -3 cc.log)"
timeout 10 ./make_synthetic fifo.xpu "$tmp/fifo" 1000 1100 1200 1300 || fail "make_synthetic failed"
timeout 10 ./make_synthetic zero.xpu /dev/zero 1000 1100 1200 1300 || fail "make_synthetic failed"

n=0
# expect EXIT_RULE PROGRAM ARGS...: EXIT_RULE is "nz" (non-zero) or an exact code
expect() {
	local rule=$1; shift
	local rc lines
	n=$((n + 1))
	rm -f core core.*
	ASAN_OPTIONS=abort_on_error=0 timeout 20 "$@" >out 2>err
	rc=$?
	lines=$(wc -l <err)
	[ $rc = 124 ] && fail "hung: $*"
	if [ "$rule" = nz ]; then
		[ $rc != 0 ] || fail "exit 0 for: $*"
	else
		[ $rc = "$rule" ] || fail "exit $rc, expected $rule, for: $*: $(head -1 err)"
	fi
	[ $rc -ge 128 ] && [ $rc != 130 ] && fail "died of signal $((rc - 128)): $*"
	[ "$lines" = 1 ] || fail "$lines lines on stderr for: $*: $(cat err)"
	grep -q "Sanitizer\|runtime error" err && fail "sanitizer report for: $*"
	ls core core.* >/dev/null 2>&1 && fail "core dump for: $*"
	printf '  %-60s -> %s: %s\n' "${*#"$ROOT/"}" "$rc" "$(cat err)" >>table
}

# ---- xpu-record: option errors (no BPF needed) ----
expect 2 "$R" --bogus -- true
expect 2 "$R" -F
expect 2 "$R" -F 0 -- true
expect 2 "$R" -F 99999999999 -- true
expect 2 "$R" -F abc -- true
expect 2 "$R" -F -5 -- true
expect 2 "$R" --ringbuf-mb=3 -- true
expect 2 "$R" -p abc
expect 2 "$R" -p 0
expect 2 "$R" -p 1 -- true
expect 2 "$R" -o "" -- true
expect 2 "$R" -g lbr -- true
expect 2 "$R"
# ---- xpu-record: run-time errors (BPF needed: root) ----
if [ "$(id -u)" = 0 ]; then
	expect nz "$R" --no-gpu -p 999999999
	expect nz "$R" --no-gpu -o "$tmp/missing/dir/x.xpu" -- true
	expect nz "$R" --no-gpu -o "$tmp/adir" -- true
	expect 127 "$R" --no-gpu -o x.xpu -- /nonexistent/command
	expect 126 "$R" --no-gpu -o x.xpu -- "$tmp/adir"
fi

# ---- xpu-report ----
expect 1 "$P"		# no FILE: record.xpu, which is not here
expect 2 "$P" --bogus "$SEED"
expect 2 "$P" -F
expect 2 "$P" -F pdf "$SEED"
expect 2 "$P" --pid=abc "$SEED"
expect 2 "$P" --pid= "$SEED"
expect 2 "$P" --tid=-1 "$SEED"
expect 2 "$P" --view=all "$SEED"
expect 2 "$P" --weight=bytes "$SEED"
# several traces are one report (multi-trace); stdin cannot be one of them, nor a bad --rank
expect 2 "$P" - "$SEED"
expect 2 "$P" --rank=x "$SEED" "$SEED"
expect 1 "$P" "$SEED" /nonexistent.xpu
if "$P" --help | grep -q -- --time-range; then
	expect 2 "$P" --time-range=garbage "$SEED"
	expect 2 "$P" --time-range=5,1 "$SEED"
fi
expect nz "$P" adir
expect nz "$P" nonexistent.xpu
expect nz "$P" empty.xpu
expect nz "$P" random.xpu
grep -q "random.xpu: not an xpu trace" err || fail "not-a-trace does not name the file: $(cat err)"
expect nz "$P" newer.xpu
grep -q "newer.xpu: " err || fail "a trace from the future does not name the file: $(cat err)"
expect nz "$P" -o "$tmp/missing/dir/out" "$SEED"
expect nz "$P" /dev/null
expect nz "$P" /dev/zero	# a device is not read, however long it would last
mkfifo nowriter.xpu
expect nz "$P" nowriter.xpu	# a FIFO without a writer reads as empty: no hang in open()
# a truncated trace is readable (one warning line, exit 0) unless --strict
expect 1 "$P" cut.xpu		# cut inside frame 0: no record recovered, nothing to report
expect nz "$P" --strict cut.xpu
expect nz "$P" - <random.xpu
grep -q "standard input: not an xpu trace" err || fail "not-a-trace on stdin: $(cat err)"
# hostile but valid traces: one warning at most is fine, but no hang, no crash, exit 0
for f in fifo.xpu zero.xpu; do
	timeout 20 "$P" "$f" >out 2>err
	rc=$?
	[ $rc = 0 ] || fail "xpu-report on $f (binary path a FIFO or device) exited $rc: $(head -1 err)"
	grep -q "Sanitizer\|runtime error" err && fail "sanitizer report for $f"
done
# a pipe is read to its end, like standard input
timeout 20 "$P" <(cat "$SEED") >out 2>err || fail "xpu-report <(cat trace) exited $?: $(head -1 err)"
# an archive beside the trace that is a device is no archive: said once, not read, not "damaged"
cp "$SEED" devxpa.xpu && ln -sf /dev/zero devxpa.xpu.xpa
timeout 20 "$P" devxpa.xpu >out 2>err || fail "xpu-report with TRACE.xpa -> /dev/zero exited $?"
grep -q "devxpa.xpu.xpa is not an archive" err && ! grep -q damaged err ||
	fail "TRACE.xpa -> /dev/zero: $(head -2 err)"
sed 's/^/    /' table
echo "PASS $NAME: $n bad invocations, each one line and a non-zero exit"
