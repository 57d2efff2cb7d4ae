#!/bin/bash
# Records samples/cpu_burn with real eBPF and checks its folded profile against the split
# documented in samples/cpu_burn.c. Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_record_cpu
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/samples/cpu_burn" ] || fail "run make first ($B/xpu-record, $B/samples/cpu_burn)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$B/xpu-record" --no-gpu -o "$tmp/cpu.xpu" -- "$B/samples/cpu_burn" 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err"; then
	skip "BPF unavailable: $(head -1 "$tmp/err")"
fi
[ $rc = 0 ] || fail "xpu-record exited $rc: $(head -1 "$tmp/err")"
grep -q "cpu_burn: done" "$tmp/out" || fail "the target did not finish"
[ -x "$B/xpu-report" ] || skip "recorded fine, but $B/xpu-report is not built to check the profile"
"$B/xpu-report" --format=folded "$tmp/cpu.xpu" >"$tmp/folded" 2>"$tmp/rerr" ||
	fail "xpu-report --format=folded failed: $(head -1 "$tmp/rerr")"
# Every process lives long enough for its mappings to be read: nothing may be lost.
"$B/xpu-report" --format=info "$tmp/cpu.xpu" >"$tmp/info" 2>&1 || fail "xpu-report --format=info failed"
awk '/^lost/ { on = 1; next } /^[a-z]/ { on = 0 } on' "$tmp/info" | grep -q '(none)' ||
	fail "events or mappings were lost: $(awk '/^lost/ { on = 1; next } /^[a-z]/ { on = 0 } on' "$tmp/info" | head -2 | tr -s ' ')"
# No PyTorch mapped: the autograd probes' BPF programs were never loaded (verified), a third
# of what starting -g cfi cost when every recording loaded them.
ag=$(awk '$1 == "autograd_programs_loaded" { print $2 }' "$tmp/info")
[ "$ag" = 0 ] || fail "autograd_programs_loaded: want 0 for a program without PyTorch, got '$ag'"

# Main thread: func_a 50%, func_b 25%, plugin_work 25% of its CPU time. About 1500 samples
# land there in 2 s on an idle machine, so one standard deviation of a share is ~1.3 points;
# samples inside the vDSO's clock_gettime may lose their caller frame (~1%). On a busy machine
# the threads get less CPU and fewer samples: the tolerance is 4.5 sigma of the samples there
# are (at least 6 points), and the floors are what a share can still be told from.
awk -v mintol=6 '
{
	n = $NF; line = $0; total += n
	if (line ~ /^cpu_burn;/ && line !~ /run_child|func_child/) {
		if (line ~ /(^|;)func_a(;| |$)/) a += n
		else if (line ~ /(^|;)func_b(;| |$)/) b += n
		else if (line ~ /(^|;)plugin_work(;| |$)/) p += n
	}
	if (line ~ /func_child/) child += n
	if (line ~ /;worker;/ && line ~ /func_c/) {
		cnt = gsub(/;recurse/, "", line)
		if (cnt >= 40) deep += n
		worker += n
	}
}
END {
	m = a + b + p
	if (total < 200) { print "only " total " samples in 2 s of 3 busy threads"; exit 1 }
	if (m < 100) { print "only " m " main-thread samples in func_a/func_b/plugin_work"; exit 1 }
	tol = 4.5 * 100 * sqrt(0.25 / m)
	if (tol < mintol) tol = mintol
	sa = 100 * a / m; sb = 100 * b / m; sp = 100 * p / m
	if (sa < 50 - tol || sa > 50 + tol || sb < 25 - tol || sb > 25 + tol || sp < 25 - tol || sp > 25 + tol) {
		printf "main-thread split func_a/func_b/plugin_work = %.1f/%.1f/%.1f%%, expected 50/25/25 +-%.1f (%d samples)\n", sa, sb, sp, tol, m
		exit 1
	}
	if (p == 0) { print "no samples in the dlopened plugin_work"; exit 1 }
	if (worker == 0) { print "no samples of thread burn-worker (worker) in func_c"; exit 1 }
	if (deep < worker / 2) { print "burn-worker stacks lack the 40 recurse frames (" deep "/" worker ")"; exit 1 }
	if (child == 0) { print "no samples of the exec-ed child in func_child"; exit 1 }
	printf "split %.1f/%.1f/%.1f%%, %d samples\n", sa, sb, sp, total
}' "$tmp/folded" >"$tmp/check" || fail "$(head -1 "$tmp/check")"
echo "PASS $NAME: $(cat "$tmp/check")"
