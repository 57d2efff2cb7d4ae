#!/usr/bin/env bash
# Checks report/'s layering (docs/layout.md): a file in report/LAYER/ or a folder of it
# (report/output/chrome/) includes report headers only of its own layer or one below, always
# as "LAYER/name.h" (or "LAYER/folder/name.h"), and no two modules (x.c with
# x.h) include each other, directly or around a circle. Prints each violation; exit 1 if any.
# One layer is narrower: output/ includes only model/, base/ and its own headers, never a sym/
# or trace/ one: the naming phase (model/naming.c) names every stack an output prints before
# it runs, and the outputs read what the model made.
set -u
shopt -s nullglob	# a tree without folders in its layers (the tests' own) globs to nothing
cd "$(dirname "$0")/.."
layers=(base trace sym model output cmd)
output_may="base model output"
rank() {
	local i
	for i in "${!layers[@]}"; do
		[ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }
	done
	echo -1
}
bad=0 edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in report/*/*.[ch] report/*/*/*.[ch]; do
	layer=${f#report/}; layer=${layer%%/*}
	r=$(rank "$layer")
	if [ "$r" -lt 0 ]; then
		echo "$f: report/$layer/ is not a layer (${layers[*]})"; bad=1; continue
	fi
	mod=${f#report/}; mod=${mod%.*}
	echo "$mod $mod" >>"$edges"
	while read -r inc; do
		case $inc in
		*/*)
			il=${inc%%/*}
			ir=$(rank "$il")
			if [ "$ir" -lt 0 ] || [ ! -f "report/$inc" ]; then
				echo "$f: includes \"$inc\", not a report header"; bad=1
			elif [ "$ir" -gt "$r" ]; then
				echo "$f: $layer includes \"$inc\" from the higher layer $il"; bad=1
			elif [ "$layer" = output ] && [[ " $output_may " != *" $il "* ]]; then
				echo "$f: output includes \"$inc\": output/ includes only $output_may" \
					"headers (names and the trace come through model/)"; bad=1
			fi
			echo "$mod ${inc%.h}" >>"$edges" ;;
		*)
			if [ ! -f "common/$inc" ]; then
				echo "$f: includes \"$inc\": report headers are named \"LAYER/$inc\""; bad=1
			fi ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
# a module's own header is not an edge; tsort reports any circle left
if ! awk '$1 != $2' "$edges" | tsort >/dev/null 2>"$edges.err"; then
	echo "include circle among report/ modules:"; sed 's/^/  /' "$edges.err"; bad=1
fi
rm -f "$edges.err"
[ "$bad" -eq 0 ] && echo "report/ layers: ok (${layers[*]}; output/ includes $output_may)"
exit "$bad"
