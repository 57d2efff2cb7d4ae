#!/bin/sh
# --format=perfetto: every output decodes against format-spec/perfetto_subset.proto (protoc)
# and holds what --format=chrome of the same trace holds, event by event
# (tests/unit/perfetto_check.py), for the committed GPU traces, the synthetic CPU and
# off-CPU traces, two traces merged (of one host, and of two: a machine_id each), and with
# the interning tables reset every 500 entries; and the file is at most 4x the trace's size.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
REPORT="$ROOT/$BUILD/xpu-report"
# the packets of the file as the trace processor reads them: the compressed chunks
# (compressed_packets) inflated in place, every packet checked (perfetto_unpack.py)
raw() { python3 "$ROOT/tests/unit/perfetto_unpack.py" "$1" "$1.raw" >/dev/null && echo "$1.raw"; }
PROTO="$ROOT/format-spec/perfetto_subset.proto"
CC=${CC:-cc}
command -v protoc >/dev/null || { echo "skip: no protoc (make deps installs protobuf-compiler)"; exit 77; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
rc=0

# check NAME TRACE MAX_RATIO [perfetto_check.py options]
check() {
	n=$1 f=$2 ratio=$3
	shift 3
	"$REPORT" -F perfetto "$f" -o "$OUT/$n.pftrace" 2>"$OUT/$n.err" ||
		{ echo "FAIL $n: perfetto exit"; cat "$OUT/$n.err"; rc=1; return; }
	samples=$("$REPORT" -F info "$f" 2>/dev/null | awk '$1 == "cpu_sample" { print $2 }')
	"$REPORT" -F chrome "$f" -o "$OUT/$n.json" 2>/dev/null ||
		{ echo "FAIL $n: chrome exit"; rc=1; return; }
	# the file as written decodes too (its compressed chunks as bytes)
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$OUT/$n.pftrace" >/dev/null 2>"$OUT/$n.protoc" && [ ! -s "$OUT/$n.protoc" ] ||
		{ echo "FAIL $n: protoc did not decode the file as written"; head -5 "$OUT/$n.protoc"; rc=1; return; }
	# protoc prints what it cannot parse (invalid UTF-8 in a string, a wrong wire type) on stderr
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$OUT/$n.pftrace")" >"$OUT/$n.txt" 2>"$OUT/$n.protoc" && [ ! -s "$OUT/$n.protoc" ] ||
		{ echo "FAIL $n: protoc did not decode it cleanly"; head -5 "$OUT/$n.protoc"; rc=1; return; }
	python3 "$ROOT/tests/unit/perfetto_check.py" "$OUT/$n.txt" "$OUT/$n.json" --samples "${samples:-0}" "$@" ||
		{ echo "FAIL $n: perfetto and chrome differ"; rc=1; }
	t=$(wc -c <"$f") p=$(wc -c <"$OUT/$n.pftrace") c=$(wc -c <"$OUT/$n.json")
	echo "$n: trace $t bytes, perfetto $p, chrome $c"
	[ "$p" -le $((t * ratio)) ] || { echo "FAIL $n: perfetto is more than ${ratio}x the trace"; rc=1; }
}

for f in "$ROOT"/samples/traces/*.xpu; do
	n=$(basename "$f" .xpu)
	case $n in
	torch-python) check "$n" "$f" 4 --frame .py ;;
	*) check "$n" "$f" 4 ;;
	esac
done

# the trace generators are plain programs: linked with the plain build's library (the sanitizer
# pass's needs the sanitizers' runtime, which these are not built with)
lib=$ROOT/build/libxpucommon.a
[ -f "$lib" ] || lib=$ROOT/$BUILD/libxpucommon.a
# CPU-only traces: the golden generators' synthetic samples, and off-CPU blocks with stacks
$CC -O0 -g -o "$OUT/target" "$ROOT/tests/golden/target.c" &&
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$OUT/make_synthetic" \
		"$ROOT/tests/golden/make_synthetic.c" "$lib" -lzstd &&
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$OUT/make_offcpu" \
		"$ROOT/tests/golden/make_offcpu.c" "$lib" -lzstd ||
	{ echo "FAIL: building the synthetic traces"; exit 1; }
a() { nm "$OUT/target" | awk -v s="$1" '$3 == s { print $1 }'; }
"$OUT/make_synthetic" "$OUT/synthetic.xpu" "$OUT/target" "$(a main)" \
	"$(a _ZN3app6Solver4stepEi)" "$(a middle)" "$(a leaf_work)" &&
	"$OUT/make_offcpu" "$OUT/offcpu.xpu" "$OUT/target" "$(a main)" "$(a middle)" "$(a leaf_work)" ||
	{ echo "FAIL: writing the synthetic traces"; exit 1; }
# compressed chunks hold exactly the packets written without them (XPU_REPORT_PERFETTO_COMPRESS=0)
if "$REPORT" -F perfetto -o "$OUT/z.pftrace" "$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	XPU_REPORT_PERFETTO_COMPRESS=0 "$REPORT" -F perfetto -o "$OUT/z0.pftrace" \
		"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	z=$(python3 "$ROOT/tests/unit/perfetto_unpack.py" "$OUT/z.pftrace" "$OUT/z.raw"); then
	case $z in *" 0 compressed chunks"*)
		ldd "$REPORT" 2>/dev/null | grep -q 'libz\.so' &&
			{ echo "FAIL compress: no compressed chunk ($z)"; rc=1; } ;;
	esac
	cmp -s "$OUT/z.raw" "$OUT/z0.pftrace" ||
		{ echo "FAIL compress: the chunks do not hold the uncompressed packets ($z)"; rc=1; }
	echo "compress: $z; $(wc -c <"$OUT/z.pftrace") bytes, $(wc -c <"$OUT/z0.pftrace") uncompressed"
else
	echo "FAIL compress: perfetto with and without compression"; rc=1
fi
# tiny traces: the fixed packets (descriptors, clock snapshots) weigh more
check synthetic "$OUT/synthetic.xpu" 8 --frame leaf_work --coinciding-samples
check offcpu "$OUT/offcpu.xpu" 8 --frame middle
# a time range: the same slices, samples and counters clipped alike
"$REPORT" -F perfetto --time-range=6,8.6 -o "$OUT/range.pftrace" \
	"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	"$REPORT" -F chrome --time-range=6,8.6 -o "$OUT/range.json" \
		"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$OUT/range.pftrace")" >"$OUT/range.txt" &&
	python3 "$ROOT/tests/unit/perfetto_check.py" "$OUT/range.txt" "$OUT/range.json" ||
	{ echo "FAIL range: --time-range"; rc=1; }
# the interning tables reset every 500 entries: each packet still resolves every id it uses
XPU_REPORT_PERFETTO_INTERN_MAX=500 "$REPORT" -F perfetto -o "$OUT/reset.pftrace" \
	"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	"$REPORT" -F chrome -o "$OUT/reset.json" "$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$OUT/reset.pftrace")" >"$OUT/reset.txt" &&
	python3 "$ROOT/tests/unit/perfetto_check.py" "$OUT/reset.txt" "$OUT/reset.json" --resets ||
	{ echo "FAIL reset: interning resets"; rc=1; }
# two traces on one timeline (merged processes, their hosts in the names)
"$REPORT" -F perfetto -o "$OUT/multi.pftrace" "$ROOT/samples/traces/pipeline.xpu" \
	"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	"$REPORT" -F chrome -o "$OUT/multi.json" "$ROOT/samples/traces/pipeline.xpu" \
		"$ROOT/samples/traces/torch-small.xpu" 2>/dev/null &&
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$OUT/multi.pftrace")" >"$OUT/multi.txt" &&
	python3 "$ROOT/tests/unit/perfetto_check.py" "$OUT/multi.txt" "$OUT/multi.json" ||
	{ echo "FAIL multi: two traces"; rc=1; }
# two hosts (pipeline.xpu's "vm", the synthetic trace's "golden-host"): each host's packets
# carry its machine_id, 0 (left out) and 1, its tracks and events all on it, the interning
# reset at each change of machine (perfetto_check.py --machines)
"$REPORT" -F perfetto -o "$OUT/hosts.pftrace" "$ROOT/samples/traces/pipeline.xpu" \
	"$OUT/synthetic.xpu" 2>/dev/null &&
	"$REPORT" -F chrome -o "$OUT/hosts.json" "$ROOT/samples/traces/pipeline.xpu" \
		"$OUT/synthetic.xpu" 2>/dev/null &&
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$OUT/hosts.pftrace")" >"$OUT/hosts.txt" &&
	python3 "$ROOT/tests/unit/perfetto_check.py" "$OUT/hosts.txt" "$OUT/hosts.json" \
		--machines 2 --coinciding-samples ||
	{ echo "FAIL hosts: two hosts' traces"; rc=1; }
grep -q '^  machine_id: 1$' "$OUT/hosts.txt" || { echo "FAIL hosts: no machine_id 1"; rc=1; }
grep -q 'machine_id' "$OUT/multi.txt" && { echo "FAIL multi: a machine_id for one host"; rc=1; }
# bench/gen_trace's long-trace generator, cut to 20,000 samples (0.125 s of 8 threads at
# 20 kHz over 4000 deep stacks): its frames are a copy of xpu-report's functions
if [ -x "$ROOT/$BUILD/bench/gen_trace" ]; then
	cp "$REPORT" "$OUT/symbols"
	"$ROOT/$BUILD/bench/gen_trace" "$OUT/gen.xpu" 20000 4000 "$OUT/symbols" >/dev/null 2>&1 ||
		{ echo "FAIL: gen_trace"; exit 1; }
	check gen "$OUT/gen.xpu" 4
fi
[ $rc = 0 ] && echo "perfetto: all outputs decode and match chrome"
exit $rc
