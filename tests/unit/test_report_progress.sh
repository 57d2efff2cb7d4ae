#!/bin/bash
# xpu-report's progress line (report/base/progress.h): on a terminal (a pseudo-terminal from
# script(1)) a report that runs past the delay rewrites "xpu-report: PHASE N%" on stderr and
# erases it at the end; with stderr a pipe, or on a terminal before the delay, nothing. The
# delay is set to 0 (XPU_REPORT_PROGRESS_AFTER_S) so the result never depends on speed.
set -u
NAME=test_report_progress
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
fail() { echo "FAIL $NAME: $*"; exit 1; }
command -v script >/dev/null || { echo "SKIP $NAME: script(1) not found"; exit 77; }
[ -x "$B/xpu-report" ] || fail "$B/xpu-report not built"
# the trace generator is not under test: the plain build's, also in the sanitizer pass
make -C "$ROOT" --no-print-directory -s build/bench/gen_trace >/dev/null ||
	fail "cannot build gen_trace"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT" && build/bench/gen_trace "$tmp/t.xpu" 1000000 >/dev/null 2>&1 || fail "gen_trace failed"
rep="$B/xpu-report -F folded -o $tmp/out.folded $tmp/t.xpu"

XPU_REPORT_PROGRESS_AFTER_S=0 script -qec "$rep" /dev/null >"$tmp/tty" 2>&1 ||
	fail "report on a terminal failed: $(tr '\r' '\n' < "$tmp/tty" | tail -1)"
grep -aq 'xpu-report: reading the trace *[0-9]*%' "$tmp/tty" ||
	fail "no progress on a terminal: $(cat -v "$tmp/tty" | head -c 300)"
# the line is erased at the end: after the last progress line come \r, erase-to-end-of-line
# (then only whole lines, such as the symbol warning)
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(d.rfind(b"\r\033[K") < d.rfind(b"%"))' \
	"$tmp/tty" || fail "progress line not erased at the end: $(tail -c 40 "$tmp/tty" | cat -v)"
[ -s "$tmp/out.folded" ] || fail "no folded output"

XPU_REPORT_PROGRESS_AFTER_S=0 $rep 2>"$tmp/pipe" || fail "report to a pipe failed"
# (whole lines, such as the symbol warning, are no progress)
! grep -aq $'%\\|\r' "$tmp/pipe" || fail "progress written to a pipe: $(head -c 200 "$tmp/pipe" | cat -v)"

script -qec "$B/xpu-report -F folded -o $tmp/small.folded $ROOT/samples/traces/pipeline.xpu" \
	/dev/null >"$tmp/small" 2>&1 || fail "short report failed"
! grep -aq '%' "$tmp/small" || fail "progress on a short report: $(cat -v "$tmp/small" | head -c 200)"
echo "PASS $NAME: progress on a terminal past the delay, erased; none on a pipe or a short report"
