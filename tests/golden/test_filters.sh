#!/bin/sh
# One filter in every format (tests/golden/filters.py) over a committed GPU trace.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
exec python3 "$ROOT/tests/golden/filters.py" "$ROOT/$BUILD/xpu-report" \
	"$ROOT/samples/traces/pipeline.xpu"
