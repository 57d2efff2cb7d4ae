#!/bin/bash
# Fork children that do not exec have their parent's mappings (docs/robustness.md): the
# recorder copies them from its table at the fork instead of reading each child's from /proc,
# which a child that exits at once no longer has (a fork storm lost 31% of its frames to
# [unknown] that way). tests/e2e/maps/fork_storm.c forks K children one after the other, each
# working a few ms. Counting, not timing: the K forks cost no scan of a child's mappings
# (STATS mapping_scans stays at the few of exec and first sight), every child gets its
# parent's mappings (mappings_inherited), and under 1% of the samples have an [unknown] frame.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_fork_storm
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -O1 -o "$tmp/fork_storm" tests/e2e/maps/fork_storm.c || fail "building fork_storm.c"
k=200

"$B/xpu-record" --no-gpu --no-pack -o "$tmp/t.xpu" -- "$tmp/fork_storm" $k >/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record exited $rc: $(tail -3 "$tmp/err")"
"$B/xpu-report" -F info "$tmp/t.xpu" >"$tmp/info" 2>&1 || fail "xpu-report -F info"
stat() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/info"; }
# the "lost N processes' mappings" line counts processes (STATS mapping_scan_failures, one
# LOST mappings record each), not failed reads: at most the k children and their parent
line=$(sed -n "s/.*lost \([0-9]*\) processes' mappings.*/\1/p" "$tmp/err")
lost=$(sed -n '/^lost$/,/^[a-z]/p' "$tmp/info" | awk '$1 == "mappings" { print $2 }')
[ "${line:-0}" = "$(stat mapping_scan_failures)" ] && [ "${line:-0}" = "${lost:-0}" ] ||
	fail "lost ${line:-0} processes' mappings, STATS mapping_scan_failures" \
		"$(stat mapping_scan_failures), LOST mappings ${lost:-0}"
[ "${line:-0}" -le $((k + 1)) ] || fail "lost $line processes' mappings of $((k + 1)) processes"
scans=$(stat mapping_scans) inherited=$(stat mappings_inherited)
[ "$scans" -le 8 ] || fail "$scans scans of mappings for $k forks (one per child?), expected a few"
[ "${inherited:-0}" -ge $k ] || fail "${inherited:-no} mappings inherited by $k children"
"$B/xpu-report" -F folded "$tmp/t.xpu" >"$tmp/folded" 2>/dev/null || fail "xpu-report -F folded"
read -r total unknown < <(awk '{ t += $NF; if ($0 ~ /\[unknown\]/) u += $NF }
	END { print t + 0, u + 0 }' "$tmp/folded")
[ "$total" -gt 0 ] || fail "no samples"
[ $((unknown * 100)) -lt "$total" ] ||
	fail "$unknown of $total samples have an [unknown] frame: $(grep -m3 unknown "$tmp/folded")"
grep -q fork_storm_child "$tmp/folded" || fail "no sample names fork_storm_child"
echo "PASS $NAME: $k forks, $scans scans, $inherited mappings inherited, $unknown of $total samples [unknown]," \
	"${line:-0} processes' mappings lost ($(stat mapping_read_failures) failed reads)"
