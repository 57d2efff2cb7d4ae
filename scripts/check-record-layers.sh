#!/usr/bin/env bash
# Checks record/'s structure (docs/layout.md): the core (record/*.c, *.h) includes no header of
# a handler (record/HANDLER/): the part in the handler's folder wires it; a handler includes
# none of another handler's, nor those of the modules above the handlers (procmaps.h,
# rb_drain.h, recording.h, parts.h); only record/parts.c names a part (a const struct rec_part,
# defined beside its code), and the lifecycle (recording.c, main.c) includes no part's header
# (X.h of a part record/X_part.c; a handler's by the rule above) and of record/'s headers only
# those it is allowed (the table, and what the signals and the child use: a module a part
# wires is the part's to include); no file includes a .c file; and no two modules include
# each other, directly or around a circle. Prints each violation; exit 1 if any.
set -u
cd "$(dirname "$0")/.."
handlers=(cfi python jit autograd)
above=(procmaps.h rb_drain.h recording.h parts.h)
lifecycle=(recording.c main.c)
# the record/ headers each lifecycle file may include
declare -A lifecycle_may=(
	[recording.c]="recording.h config.h part.h parts.h stat_sink.h proc_table.h target.h clock.h"
	[main.c]="recording.h config.h fd_limit.h"
)
is_handler() {
	local h
	for h in "${handlers[@]}"; do [ "$h" = "$1" ] && return 0; done
	return 1
}
bad=0 edges=$(mktemp)
trap 'rm -f "$edges" "$edges.err"' EXIT
for f in record/*.[ch] record/*/*.[ch]; do
	[ -e "$f" ] || continue
	rel=${f#record/}
	dir=.
	case $rel in */*) dir=${rel%%/*} ;; esac
	if [ "$dir" != . ] && ! is_handler "$dir"; then
		echo "$f: record/$dir/ is not a handler folder (${handlers[*]})"; bad=1; continue
	fi
	mod=${rel%.*}
	echo "$mod $mod" >>"$edges"
	while read -r inc; do
		case $inc in
		*.c) echo "$f: includes the source file \"$inc\""; bad=1; continue ;;
		esac
		case $inc in
		*/*)
			hd=${inc%%/*}
			if ! is_handler "$hd" || [ ! -f "record/$inc" ]; then
				echo "$f: includes \"$inc\", not a handler's header"; bad=1
			elif [ "$dir" = . ]; then
				echo "$f: the core includes the handler header \"$inc\" (only the part in its folder wires it)"; bad=1
			elif [ "$dir" != . ] && [ "$hd" != "$dir" ]; then
				echo "$f: handler $dir includes \"$inc\" of handler $hd"; bad=1
			fi
			echo "$mod ${inc%.h}" >>"$edges" ;;
		*)
			if [ "$dir" != . ] && [ -f "record/$dir/$inc" ]; then
				echo "$mod $dir/${inc%.h}" >>"$edges"
			elif [ -f "record/$inc" ]; then
				if [ "$dir" != . ] && [[ " ${above[*]} " == *" $inc "* ]]; then
					echo "$f: handler $dir includes \"$inc\", which is above the handlers"; bad=1
				fi
				echo "$mod ${inc%.h}" >>"$edges"
			fi ;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
# the parts: NAME defined in FILE as "const struct rec_part NAME = {"
parts=$(grep -HE '^const struct rec_part [a-z_0-9]+ = \{' record/*.c record/*/*.c 2>/dev/null |
	sed -E 's/^([^:]*):const struct rec_part ([a-z_0-9]+) .*/\2 \1/')
while read -r name file; do
	[ -n "$name" ] || continue
	for f in $(grep -lw "$name" record/*.[ch] record/*/*.[ch] 2>/dev/null); do
		[ "$f" = "$file" ] || [ "$f" = record/parts.c ] ||
			{ echo "$f: names the part $name (only record/parts.c names a part)"; bad=1; }
	done
	case $file in record/*/*) continue ;; esac
	hdr=${file%_part.c}.h
	[ -f "$hdr" ] || continue
	for l in "${lifecycle[@]}"; do
		[ -f "record/$l" ] && grep -q "^#include \"${hdr#record/}\"" "record/$l" &&
			{ echo "record/$l: includes the part header \"${hdr#record/}\" of $name"; bad=1; }
	done
done <<<"$parts"
for l in "${lifecycle[@]}"; do
	[ -f "record/$l" ] || continue
	while read -r inc; do
		[ -f "record/$inc" ] || continue
		[[ " ${lifecycle_may[$l]} " == *" $inc "* ]] ||
			{ echo "record/$l: includes \"$inc\"; the lifecycle includes only ${lifecycle_may[$l]}"; bad=1; }
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "record/$l")
done
# a module's own header is not an edge; tsort reports any circle left
if ! awk '$1 != $2' "$edges" | tsort >/dev/null 2>"$edges.err"; then
	echo "include circle among record/ modules:"; sed 's/^/  /' "$edges.err"; bad=1
fi
[ "$bad" -eq 0 ] && echo "record/ layers: ok (handlers: ${handlers[*]}; parts: $(echo "$parts" | awk '{ print $1 }' | paste -sd ' '))"
exit "$bad"
