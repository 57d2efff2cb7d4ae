#!/bin/sh
# --format=jsonl of the committed H100 traces, line by line (tests/golden/jsonl_check.py).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
T="$ROOT/samples/traces"
rc=0
python3 "$ROOT/tests/golden/jsonl_check.py" "$ROOT/$BUILD/xpu-report" "$T/pipeline.xpu" 90 || rc=1
for f in "$T"/*.xpu; do
	[ "$(basename "$f")" = pipeline.xpu ] && continue
	python3 "$ROOT/tests/golden/jsonl_check.py" "$ROOT/$BUILD/xpu-report" "$f" || rc=1
done
exit $rc
