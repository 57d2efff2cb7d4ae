#!/usr/bin/env bash
# --help and the README agree on the options: every option xpu-record's and xpu-report's
# --help lists is documented in README.md or docs/*.md (the references, docs/record.md and
# docs/report.md; by its long name, or its short one where it has one), and every option the
# README's xpu-record synopsis names is one --help lists. Needs no root.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
bad=0
docs=(README.md docs/*.md)
for tool in xpu-record xpu-report; do
	# the sanitizer build (BUILD=build-san) has no xpu-record: what --help says is the same
	bin=$B/$tool
	[ -x "$bin" ] || bin=build/$tool
	"$bin" --help >/tmp/help.$$ 2>&1 || { echo "FAIL: $tool --help failed"; exit 1; }
	while read -r short long; do
		if ! grep -q -- "$long\b" "${docs[@]}" &&
		   ! { [ -n "$short" ] && grep -qE -- "(^|[^a-zA-Z-])$short( |\`|$)" "${docs[@]}"; }; then
			echo "FAIL: $tool --help lists $long${short:+ ($short)}, neither README.md nor docs/*.md does"
			bad=1
		fi
	done < <(sed -nE 's/^ +(-[a-zA-Z]), (--[a-z][a-z-]*).*/\1 \2/p; s/^ +(--[a-z][a-z-]*).*/ \1/p' /tmp/help.$$ |
		 awk '{ if (NF == 2) print $1, $2; else print "", $1 }' | sort -u)
	[ "$tool" = xpu-record ] || continue
	for o in $(sed -n '/^xpu-record \[/,/^xpu-record \[options\]/p' README.md | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o\b" /tmp/help.$$ || { echo "FAIL: the README's synopsis names $o, xpu-record --help does not"; bad=1; }
	done
done
rm -f /tmp/help.$$
[ $bad = 0 ] && echo "ok: --help and README.md + docs/*.md list the same options"
exit $bad
