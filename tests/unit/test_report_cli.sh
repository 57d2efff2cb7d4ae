#!/bin/bash
# xpu-report's command line for navigation and defaults: no FILE reads record.xpu (what
# xpu-record writes by default), and bad --sort/--rows/--percent-limit/--dso/--callers values
# are usage errors (exit 2, one line); so are diff's, and a bad trace on either side of a diff
# is one line naming it (exit 1). --callers/--callees name a Python function with or without its
# file ("train_step" for "train_step (torch_train.py)"), and say which functions a name stands for.
set -u
NAME=test_report_cli
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
R=$B/xpu-report
T=$ROOT/samples/traces/pipeline.xpu
fail() { echo "FAIL $NAME: $*"; exit 1; }
[ -x "$R" ] || fail "$R not built"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

cd "$tmp" || exit 1
"$R" -F folded --no-host-files >/dev/null 2>"$tmp/err" && fail "no record.xpu, yet exit 0"
grep -q "cannot open record.xpu" "$tmp/err" || fail "no record.xpu: $(cat "$tmp/err")"
cp "$T" record.xpu && cp "$T.xpa" record.xpu.xpa
"$R" -F folded --no-host-files >"$tmp/a" 2>&1 || fail "record.xpu not read: $(head -1 "$tmp/a")"
"$R" -F folded --no-host-files "$T" >"$tmp/b" 2>&1 || fail "explicit trace failed"
cmp -s "$tmp/a" "$tmp/b" || fail "xpu-report without FILE differs from xpu-report record.xpu"

n=0
for args in "--sort=bogus" "--sort=sym,sym" "--sort=" "--sort=sym," "--rows=-1" "--rows=x" \
	    "--percent-limit=101" "--percent-limit=x" "--dso=" "--dso=a,,b" "--callers=" \
	    "--callers=main --callees=main" "-F folded --callers=main"; do
	# shellcheck disable=SC2086
	"$R" $args "$T" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] || fail "'$args': exit $rc, want 2"
	[ "$(wc -l < "$tmp/err")" = 1 ] || fail "'$args': not one line: $(cat "$tmp/err")"
	n=$((n + 1))
done
# xpu-report diff: two traces, formats that compare, its own --order; a bad side names itself
for args in "" "$T" "$T $T $T" "- -" "-F chrome $T $T" "-F jsonl $T $T" "-F info $T $T" \
	    "-F pprof $T $T" "--order=x $T $T" "--callers=main $T $T"; do
	# shellcheck disable=SC2086
	"$R" diff $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] || fail "'diff $args': exit $rc, want 2"
	[ "$(wc -l < "$tmp/err")" = 1 ] || fail "'diff $args': not one line: $(cat "$tmp/err")"
	n=$((n + 1))
done
# the formats diff writes and those it does not, both from the table of formats
"$R" diff -F pprof "$T" "$T" 2>&1 | grep -q 'diff writes text, folded or svg (not info, chrome, perfetto, jsonl or pprof)' ||
	fail "diff -F pprof does not list the formats diff writes and those it does not"
"$R" --order=total "$T" >/dev/null 2>&1 && fail "--order accepted outside diff"
printf 'not a trace' >"$tmp/bad.xpu"
for args in "$T $tmp/bad.xpu" "$tmp/bad.xpu $T" "$T $tmp/none.xpu"; do
	# shellcheck disable=SC2086
	"$R" diff --no-host-files $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] || fail "'diff $args': exit $rc, want 1"
	[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "$tmp/\(bad\|none\).xpu" "$tmp/err" ||
		fail "'diff $args': not one line naming the file: $(cat "$tmp/err")"
	n=$((n + 1))
done
"$R" diff --no-host-files "$T" - <"$T" >/dev/null 2>&1 || fail "diff TRACE - (stdin) failed"
"$R" --rows=0 --percent-limit=0.5% --sort=comm,dso,sym "$T" >/dev/null 2>&1 ||
	fail "--rows=0 --percent-limit=0.5% --sort=comm,dso,sym refused"
P=$ROOT/samples/traces/torch-python.xpu
"$R" --no-host-files --callees=train_step "$P" >"$tmp/out" 2>"$tmp/err" ||
	fail "--callees=train_step: $(head -1 "$tmp/err")"
head -1 "$tmp/out" | grep -qx "# callees of train_step (torch_train.py)" ||
	fail "--callees=train_step: $(head -1 "$tmp/out")"
grep -q "^ 100.00% .*  train_step (torch_train.py) (" "$tmp/out" ||
	fail "--callees=train_step: no root row train_step (torch_train.py)"
"$R" --no-host-files --callees='train_step (torch_train.py)' "$P" >"$tmp/full" 2>/dev/null &&
	cmp -s "$tmp/out" "$tmp/full" || fail "--callees=train_step differs from its full name"
# a method by its name alone: every class's, as one, named in the header
"$R" --no-host-files --callers=forward "$P" >"$tmp/out" 2>/dev/null || fail "--callers=forward"
grep -q "^# forward: [0-9]* Python functions of that name, as one: .*Net.forward (torch_train.py)" \
	"$tmp/out" || fail "--callers=forward: $(sed -n 2p "$tmp/out")"
# native names as before: exactly, and a Python frame is not a native function's prefix match
"$R" --no-host-files --callers=ioctl "$T" >"$tmp/out" 2>/dev/null &&
	head -1 "$tmp/out" | grep -qx "# callers of ioctl (the direct caller first)" ||
	fail "--callers=ioctl: $(head -1 "$tmp/out")"
echo "PASS $NAME: record.xpu by default; $n bad values refused with exit 2;" \
	"Python functions by name"
