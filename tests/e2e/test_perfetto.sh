#!/bin/bash
# xpu-report --format=perfetto of every trace at hand (tests/viewers/lib.sh's make_traces):
# the synthetic GPU trace (two devices, hostile names), the golden synthetic trace and a CPU
# program recorded here when root allows (samples/cpu_burn); samples/traces/ are
# tests/unit/test_perfetto.sh's. Each output
# decodes with protoc against format-spec/perfetto_subset.proto and matches the chrome output
# event by event (tests/unit/perfetto_check.py). Exit 0 pass, 77 skip, else fail.
set -u
NAME=test_perfetto
source "$(dirname "$0")/../viewers/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
command -v protoc >/dev/null || skip "protoc not found (scripts/install-deps.sh installs protobuf-compiler)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
make_traces
# the packets of the file as the trace processor reads them: the compressed chunks
# (compressed_packets) inflated in place, every packet checked (perfetto_unpack.py)
raw() { python3 "$ROOT/tests/unit/perfetto_unpack.py" "$1" "$1.raw" >/dev/null && echo "$1.raw"; }
PROTO=$ROOT/format-spec/perfetto_subset.proto

for f in "${TRACES[@]}"; do
	n=$(basename "$f" .xpu)
	[[ $f == "$ROOT"/samples/traces/* ]] && continue
	"$REPORT" -F perfetto "$f" -o "$tmp/$n.pftrace" 2>"$tmp/$n.err" ||
		fail "xpu-report -F perfetto $n.xpu failed: $(head -1 "$tmp/$n.err")"
	"$REPORT" -F chrome "$f" -o "$tmp/$n.json" 2>/dev/null || fail "-F chrome $n.xpu failed"
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$PROTO")" "$PROTO" \
		<"$(raw "$tmp/$n.pftrace")" >"$tmp/$n.txt" 2>"$tmp/$n.protoc" && [ ! -s "$tmp/$n.protoc" ] ||
		fail "$n.xpu: protoc: $(head -2 "$tmp/$n.protoc")"
	extra=""
	case $n in
	cpu) extra="--frame func_a" ;;
	synthetic) extra="--coinciding-samples" ;;
	esac
	out=$(python3 "$ROOT/tests/unit/perfetto_check.py" "$tmp/$n.txt" "$tmp/$n.json" $extra) ||
		fail "$n.xpu: $(echo "$out" | grep FAIL | head -5)"
	echo "$n: $(echo "$out" | tail -1)"
done
# the hostile names of the synthetic GPU trace arrive as they were written (UTF-8 kept)
grep -q 'rocket \\360\\237\\232\\200' "$tmp/gpu.txt" || fail "valid UTF-8 (U+1F680) was not kept"
[ -z "$CPU_NOTE" ] || echo "note: $CPU_NOTE"
echo "PASS $NAME"
