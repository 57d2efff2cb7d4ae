#!/usr/bin/env bash
# Each verbosity level records: -v, -vv and -vvv on `true` exit 0 with a readable trace, and
# -vvv prints the verifier's statistics of the stack-taking programs (its log buffer once
# too small for them: the kernel refused the load with ENOSPC).
set -u
cd "$(dirname "$0")/../.."
NAME=test_verbose_levels
B=${BUILD:-build}
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in -v -vv -vvv; do
	"$B/xpu-record" $v -o "$tmp/t.xpu" -- true >"$tmp/out" 2>"$tmp/err" ||
		fail "xpu-record $v -- true failed: $(grep -m1 -iE 'error|cannot|No space' "$tmp/err" || tail -1 "$tmp/err")"
	"$B/xpu-report" -F info "$tmp/t.xpu" >/dev/null 2>&1 || fail "$v: the trace does not read"
done
grep -q 'verifier: on_sample: processed [0-9]* insns' "$tmp/err" ||
	fail "-vvv: no verifier statistics: $(grep -m2 verifier "$tmp/err")"
echo "PASS $NAME: -v, -vv and -vvv record; -vvv shows the verifier's statistics"
