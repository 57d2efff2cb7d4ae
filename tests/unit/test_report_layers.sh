#!/usr/bin/env bash
# report/ keeps its layers and has no include circle (scripts/check-report-layers.sh); also
# checks that the checker catches a circle, an upward include and an output that includes a
# sym/ or trace/ header (the naming phase's rule), so this test can fail.
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
# outputs: model/ and base/ headers pass, a sym/ or a trace/ one does not
rm -rf "$tmp/report"
mkdir -p "$tmp/report/base" "$tmp/report/trace" "$tmp/report/sym" "$tmp/report/model" \
	"$tmp/report/output"
printf '\n' >"$tmp/report/base/a.h"
printf '\n' >"$tmp/report/trace/t.h"
printf '\n' >"$tmp/report/sym/s.h"
printf '#include "trace/t.h"\n' >"$tmp/report/model/m.h"
printf '#include "base/a.h"\n#include "model/m.h"\n' >"$tmp/report/output/ok.c"
"$tmp/scripts/check-report-layers.sh" >"$tmp/out" 2>&1 ||
	{ echo "FAIL: the checker refused an output of model/ and base/ headers:"; cat "$tmp/out"; exit 1; }
for inc in trace/t.h sym/s.h; do
	printf '#include "model/m.h"\n#include "%s"\n' "$inc" >"$tmp/report/output/bad.c"
	if "$tmp/scripts/check-report-layers.sh" >"$tmp/out" 2>&1 ||
	   ! grep -q "bad.c: output includes \"$inc\"" "$tmp/out"; then
		echo "FAIL: the checker let an output include $inc:"; cat "$tmp/out"; exit 1
	fi
done
echo "ok"
