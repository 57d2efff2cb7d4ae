#!/bin/bash
# make install into a DESTDIR puts xpu-record and xpu-report in PREFIX/bin and libxpu-cupti.so
# in PREFIX/lib/xpu-perf; the installed recorder injects that library (found from its own
# path, also through a symlink to it), records, and the installed report reads the trace;
# make uninstall removes every file it installed.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_install
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v make >/dev/null || skip "no make"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
D=$tmp/dest
PREFIX=/opt/xpu-test

make -s --no-print-directory BUILD="$B" DESTDIR="$D" PREFIX=$PREFIX install >"$tmp/log" 2>&1 ||
	fail "make install failed: $(tail -3 "$tmp/log")"
for f in bin/xpu-record bin/xpu-report; do
	[ -x "$D$PREFIX/$f" ] || fail "$PREFIX/$f not installed"
done
lib=""
if [ -f "$B/libxpu-cupti.so" ]; then
	lib=$D$PREFIX/lib/xpu-perf/libxpu-cupti.so
	[ -f "$lib" ] || fail "libxpu-cupti.so not installed in $PREFIX/lib/xpu-perf"
	[ "$(stat -c %a "$lib")" = 644 ] || fail "libxpu-cupti.so is mode $(stat -c %a "$lib"), not 644"
fi
"$D$PREFIX/bin/xpu-report" --version >/dev/null || fail "installed xpu-report does not run"

if [ "$(id -u)" = 0 ]; then
	# the command prints the library it was given: the installed one, not build/'s
	ln -s "$D$PREFIX/bin/xpu-record" "$tmp/xpu-record-link"
	for r in "$D$PREFIX/bin/xpu-record" "$tmp/xpu-record-link"; do
		"$r" -o "$tmp/i.xpu" -- sh -c 'echo "lib=$CUDA_INJECTION64_PATH"' >"$tmp/out" 2>"$tmp/err"
		rc=$?
		grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
		[ $rc = 0 ] || fail "installed xpu-record exited $rc: $(head -2 "$tmp/err")"
		[ "$(cat "$tmp/out")" = "lib=$lib" ] ||
			fail "$r injected '$(cat "$tmp/out")', expected 'lib=$lib'"
		# info, not the text report: a run this short may hold no sample at all (the
		# text report then says "nothing to report" and exits 1)
		"$D$PREFIX/bin/xpu-report" -F info "$tmp/i.xpu" >"$tmp/info" 2>"$tmp/rerr" &&
			grep -q 'lib=' "$tmp/info" ||
			fail "the installed xpu-report cannot read the installed recorder's trace" \
				"(exit $?): $(head -3 "$tmp/rerr"); the recorder said: $(tail -3 "$tmp/err")"
	done
else
	echo "note: not root, the installed recorder was not run"
fi

make -s --no-print-directory BUILD="$B" DESTDIR="$D" PREFIX=$PREFIX uninstall >"$tmp/log" 2>&1 ||
	fail "make uninstall failed: $(tail -3 "$tmp/log")"
left=$(find "$D" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"
[ -e "$D$PREFIX/lib/xpu-perf" ] && fail "make uninstall left $PREFIX/lib/xpu-perf"
echo "PASS $NAME${lib:+ (with libxpu-cupti.so)}"
