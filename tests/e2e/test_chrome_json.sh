#!/bin/bash
# xpu-report --format=chrome gives valid Trace Event JSON for every trace at hand: the
# synthetic GPU trace (API calls, NVTX, kernels on two devices, flows, hostile names), the
# golden synthetic trace, a CPU trace recorded here when root allows, and samples/traces/.
# Checked by tests/viewers/check_chrome.py; also --time-range, filters, the size warning and
# bad options. Exit 0 pass, 77 skip, else fail.
set -u
NAME=test_chrome_json
source "$(dirname "$0")/../viewers/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
make_traces
CHECK="python3 $ROOT/tests/viewers/check_chrome.py"

for f in "${TRACES[@]}"; do
	n=$(basename "$f" .xpu)
	"$REPORT" -F chrome "$f" >"$tmp/$n.json" 2>"$tmp/$n.err" ||
		fail "xpu-report -F chrome $n.xpu failed: $(head -1 "$tmp/$n.err")"
	extra=""
	case $n in
	gpu) extra="--expect-gpu --expect-samples" ;;
	cpu) extra="--expect-samples" ;;
	esac
	out=$($CHECK "$tmp/$n.json" $extra) || fail "$n.xpu: $out"
	echo "$n: $out"
done

# the synthetic GPU trace: escaping survived, and the names are the ones written
grep -q 'quote\\"back\\\\slash\\ttab\\u0001\\u001f ctrl' "$tmp/gpu.json" ||
	fail "kernel name with quote, backslash and control bytes not escaped as expected"
grep -q "rocket 🚀" "$tmp/gpu.json" || fail "valid UTF-8 (U+1F680) was not kept"
grep -q '"name":"cudaLaunchKernel"' "$tmp/gpu.json" || fail "API name not shown without its version suffix"

# --time-range keeps only what overlaps the window; --pid keeps one process
"$REPORT" -F chrome --time-range=0.1,0.2 "$tmp/gpu.xpu" >"$tmp/range.json" 2>"$tmp/err" ||
	fail "--time-range=0.1,0.2 failed: $(head -1 "$tmp/err")"
out=$($CHECK "$tmp/range.json" --range 0.1,0.2) || fail "--time-range: $out"
all=$(grep -c '"ph":"X"' "$tmp/gpu.json")
part=$(grep -c '"ph":"X"' "$tmp/range.json")
[ "$part" -gt 0 ] && [ "$part" -lt "$all" ] || fail "--time-range kept $part of $all slices"
echo "range: $out"
"$REPORT" -F chrome --pid=100 "$tmp/synthetic.xpu" >"$tmp/pid.json" 2>"$tmp/err" || fail "--pid failed"
$CHECK "$tmp/pid.json" >/dev/null || fail "--pid output: $($CHECK "$tmp/pid.json")"
grep -q '"pid":200,' "$tmp/pid.json" && fail "--pid=100 still shows pid 200"
"$REPORT" -F chrome --time-range=50,60 "$tmp/gpu.xpu" >"$tmp/empty.json" 2>"$tmp/err" ||
	fail "an empty time range failed"
grep -q "no events in the time range" "$tmp/err" || fail "no warning for an empty time range"

# the size warning (threshold lowered: the real one is 256 MB)
XPU_REPORT_CHROME_WARN_BYTES=10000 "$REPORT" -F chrome "$tmp/gpu.xpu" >/dev/null 2>"$tmp/err" ||
	fail "xpu-report failed with a low size threshold"
[ "$(grep -c "passed .* MB.*--time-range" "$tmp/err")" = 1 ] ||
	fail "no single size warning suggesting --time-range: $(head -1 "$tmp/err")"

# bad options: one line, exit 2
for bad in "--time-range=2,1" "--time-range=x" "--time-range=1" "--time-range=-1,2" \
	   "--time-range=1,2,3" "-F chrom"; do
	"$REPORT" -F chrome $bad "$tmp/gpu.xpu" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "'$bad': exit $rc, $(wc -l <"$tmp/err") lines on stderr"
done
# every format takes the range (tests/golden/filters.py checks they agree)
"$REPORT" -F folded --time-range=0.1,0.2 "$tmp/gpu.xpu" >"$tmp/range.folded" 2>"$tmp/err" ||
	fail "--time-range with -F folded failed: $(head -1 "$tmp/err")"
[ -z "$CPU_NOTE" ] || echo "note: $CPU_NOTE"
echo "PASS $NAME: ${#TRACES[@]} traces"
