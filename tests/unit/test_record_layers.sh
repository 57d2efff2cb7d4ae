#!/usr/bin/env bash
# record/ keeps its structure: the core knows no handler, handlers know neither each other nor
# what is above them, only the parts table names a part, the lifecycle includes no part's
# header (nor any record/ header it is not allowed), no include circle
# (scripts/check-record-layers.sh); also checks that the checker catches each of those, so
# this test can fail.
set -eu
cd "$(dirname "$0")/../.."
scripts/check-record-layers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/record/cfi" "$tmp/record/python"
cp scripts/check-record-layers.sh "$tmp/scripts/"
printf '#include "cfi/table.h"\n' >"$tmp/record/procmaps.c"
printf '#include "python/frames.h"\n' >"$tmp/record/cfi/table.h"
printf '#include "rb_drain.h"\n' >"$tmp/record/python/frames.h"
printf '#include "b.h"\n' >"$tmp/record/rb_drain.h"
printf '#include "rb_drain.h"\n#include "a.c"\n' >"$tmp/record/b.h"
printf 'const struct rec_part cfi_part = {\n};\n' >"$tmp/record/cfi/cfi_part.c"
printf 'const struct rec_part kallsyms_part = {\n};\n' >"$tmp/record/kallsyms_part.c"
: >"$tmp/record/kallsyms.h"
printf '#include "kallsyms.h"\n#include "trace_writer.h"\n' >"$tmp/record/recording.c"
: >"$tmp/record/trace_writer.h"
printf 'static const void *p = &cfi_part;\n' >>"$tmp/record/procmaps.c"
if "$tmp/scripts/check-record-layers.sh" >"$tmp/out" 2>&1; then
	echo "FAIL: the checker accepted what it must refuse"; exit 1
fi
for what in 'the core includes the handler header' 'handler cfi includes' \
	    'above the handlers' 'source file' 'circle' 'names the part cfi_part' \
	    'includes the part header "kallsyms.h"' \
	    'recording.c: includes "trace_writer.h"; the lifecycle includes only'; do
	grep -q "$what" "$tmp/out" || { echo "FAIL: no '$what' in the checker's output:"; cat "$tmp/out"; exit 1; }
done
echo "ok"
