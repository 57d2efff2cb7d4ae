#!/usr/bin/env bash
# report/ keeps its layers and has no include circle (scripts/check-report-layers.sh); also
# checks that the checker catches a circle and an upward include, so this test can fail.
set -eu
cd "$(dirname "$0")/../.."
scripts/check-report-layers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/common" "$tmp/report/base" "$tmp/report/sym"
cp scripts/check-report-layers.sh "$tmp/scripts/"
printf '#include "sym/b.h"\n' >"$tmp/report/base/a.h"
printf '#include "base/c.h"\n' >"$tmp/report/sym/b.h"
printf '#include "base/a.h"\n' >"$tmp/report/base/c.h"
if "$tmp/scripts/check-report-layers.sh" >"$tmp/out" 2>&1; then
	echo "FAIL: the checker accepted an upward include and a circle"; exit 1
fi
grep -q 'higher layer' "$tmp/out" && grep -q 'circle' "$tmp/out" ||
	{ echo "FAIL: checker output:"; cat "$tmp/out"; exit 1; }
echo "ok"
