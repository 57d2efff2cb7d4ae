#!/bin/bash
# Mapping tracking in proportion to the mappings (docs/robustness.md): a process that makes N
# executable mappings, one mmap of a file of its own each (tests/e2e/maps/many_maps.c, which
# waits after each until the recorder has read it, so every read sees the process alive with
# all its mappings so far). Counting work, not time: each mmap is one lookup (STATS
# mapping_queries), not a scan of every mapping (mapping_scans stays at the few of exec and
# first sight), and the entries read and compared (mapping_entries) grow as N log N at most:
# twice the mappings, less than three times the entries (N scans of N mappings: four times).
# Every mapping is in the trace, and nothing is lost. Then the same under -g cfi: the unwind-table
# loader's list of each process's mappings follows each mmap's change (STATS
# cfi_mapping_entries: entries added, refreshed or gone, search steps), not made again from all
# the mappings at each (N^2 / 2 entries: 180,000 for 600), and the autograd probes' programs
# are not loaded (no PyTorch).
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_many_maps
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -O1 -o "$tmp/many_maps" tests/e2e/maps/many_maps.c || fail "building many_maps.c"

# stat NAME FILE: a STATS value from `info` (empty when the recorder does not write it)
stat() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

rec() {
	local n=$1 g=${2:-fp}
	mkdir "$tmp/d$n"
	"$B/xpu-record" --no-gpu -g "$g" --no-pack -o "$tmp/$n.xpu" -- "$tmp/many_maps" "$tmp/d$n" "$n" \
		>/dev/null 2>"$tmp/$n.err"
	local rc=$?
	grep -q "need root\|bpf(): " "$tmp/$n.err" && skip "BPF unavailable: $(head -1 "$tmp/$n.err")"
	[ $rc = 0 ] || fail "N=$n: xpu-record exited $rc: $(tail -3 "$tmp/$n.err")"
	"$B/xpu-report" -F info "$tmp/$n.xpu" >"$tmp/$n.info" 2>&1 || fail "N=$n: xpu-report -F info"
	[ -n "$(stat mapping_entries "$tmp/$n.info")" ] ||
		fail "N=$n: the trace has no mapping_entries stat: $(grep mapping "$tmp/$n.info")"
	# every mapping of the N files is in the trace (and those of the program and its libraries)
	local maps
	maps=$(awk '$1 == "mapping" { print $2 }' "$tmp/$n.info")
	[ "${maps:-0}" -ge "$n" ] || fail "N=$n: ${maps:-no} MAPPING records for $n mmaps"
	[ "$(stat mapping_scan_failures "$tmp/$n.info")" = 0 ] ||
		fail "N=$n: mappings lost: $(grep mapping "$tmp/$n.info")"
}

rec 300
rec 600
for n in 300 600; do
	s=$(stat mapping_scans "$tmp/$n.info")
	[ "$s" -le 8 ] || fail "N=$n: $s scans of all the mappings (one per mmap?), expected a few"
	q=$(stat mapping_queries "$tmp/$n.info")
	[ "$q" -ge "$n" ] || fail "N=$n: $q lookups for $n mmaps"
done
e1=$(stat mapping_entries "$tmp/300.info") e2=$(stat mapping_entries "$tmp/600.info")
[ $((e2 * 10)) -lt $((e1 * 30)) ] ||
	fail "mapping entries read grow faster than N log N: $e1 for 300 mappings, $e2 for 600"

rm -rf "$tmp/d600"
rec 600 cfi
c=$(stat cfi_mapping_entries "$tmp/600.info")
[ -n "$c" ] || fail "-g cfi: the trace has no cfi_mapping_entries stat"
# a mmap: a search of the list and of the published one, the entry added, refreshed when its
# file's table is built (a search again): about 3 log2 N each, so 5 N log2 N at most (log2 600
# rounded up: 10)
[ "$c" -le $((5 * 600 * 10)) ] ||
	fail "-g cfi: the table loader looked at $c mapping entries for 600 mmaps (the list made again at each?)"
ag=$(stat autograd_programs_loaded "$tmp/600.info")
[ "$ag" = 0 ] || fail "-g cfi: autograd_programs_loaded '$ag' for a program without PyTorch, want 0"
echo "PASS $NAME: 300 and 600 mappings: $e1 and $e2 entries read and compared, one lookup a mmap;" \
	"-g cfi: $c entries for the table loader's lists"
