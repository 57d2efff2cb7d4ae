#!/bin/sh
# --format=pprof read back by go tool pprof (golang-go) against folded output, per function
# (tests/unit/pprof_shares.py); the message itself is checked by build/tests/test_pprof.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
REPORT="$ROOT/$BUILD/xpu-report"
GO=${GO:-$(command -v go || echo /usr/lib/go/bin/go)}
if "$REPORT" --format=pprof /dev/null 2>&1 | grep -q 'not in this build'; then
	echo "skip: xpu-report was built without protobuf-c (scripts/install-deps.sh, then rebuild)"
	exit 77
fi
if [ ! -x "$GO" ]; then
	echo "skip: go is not installed (golang-go; scripts/install-deps.sh installs it)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# go caches builds under HOME; keep the test from writing into a user's home
export GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOTOOLCHAIN=local
exec python3 "$ROOT/tests/unit/pprof_shares.py" "$REPORT" "$GO" "$ROOT/samples/traces" "$tmp"
