#!/usr/bin/env bash
# Frame names (issue 12, "Names"), on a real recording of tests/e2e/names/: a PLT stub is
# "trivial@plt" (not _init), the vdso's clock_gettime is named (not [vdso]), a stripped
# library's static function is one frame "libnames.so+0xSTART" at its FDE start (its nm
# address in the unstripped build), and an inlined callee's time stays with its caller unless
# --inline asks for a frame of its own.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_names
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=tests/e2e/names
cc -O2 -g -fPIC -shared -o "$tmp/libnames_full.so" "$src/names_lib.c" || fail "cc lib"
strip -o "$tmp/libnames.so" "$tmp/libnames_full.so" || fail "strip"
cc -O2 -g -o "$tmp/names" "$src/names_main.c" -L"$tmp" -lnames -Wl,-rpath,"$tmp" ||
	fail "cc main"
nm "$tmp/libnames.so" 2>&1 | grep -q hidden_spin && fail "strip left hidden_spin's symbol"

"$B/xpu-record" --no-gpu -F 999 -o "$tmp/n.xpu" -- "$tmp/names" 0.5 >/dev/null 2>"$tmp/err" ||
	fail "xpu-record failed: $(tail -1 "$tmp/err")"
"$B/xpu-report" -F folded "$tmp/n.xpu" >"$tmp/default.folded" 2>"$tmp/err" ||
	fail "xpu-report failed: $(head -1 "$tmp/err")"
"$B/xpu-report" -F folded --inline "$tmp/n.xpu" >"$tmp/inline.folded" 2>"$tmp/err" ||
	fail "xpu-report --inline failed: $(head -1 "$tmp/err")"

leaves() {	# FILE -> "samples leaf" per leaf name, most first
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); s[f[k]] += n }
	     END { for (l in s) print s[l], l }' "$1" | sort -rn
}
leaves "$tmp/default.folded" >"$tmp/default.leaves"
leaves "$tmp/inline.folded" >"$tmp/inline.leaves"
self() { awk -v l="$2" '{ n = $1; $1 = "" } substr($0, 2) == l { print n; f = 1 }
			END { if (!f) print 0 }' "$1"; }

# 1. PLT: the stub has its own name, and _init (which precedes .plt) gets nothing
plt=$(self "$tmp/default.leaves" "trivial@plt")
[ "$plt" -gt 0 ] || fail "no samples in trivial@plt: $(head -5 "$tmp/default.leaves" | tr '\n' ' ')"
[ "$(self "$tmp/default.leaves" "_init")" -eq 0 ] || fail "samples still named _init"

# 2. vdso: named from the image in the trace
vdso=$(grep -c '__vdso_clock_gettime\|__vdso_gettimeofday' "$tmp/default.leaves")
[ "$vdso" -gt 0 ] || fail "vdso frames not named: $(head -5 "$tmp/default.leaves" | tr '\n' ' ')"
grep -q '\[vdso\]' "$tmp/default.folded" && fail "[vdso] frames remain"

# 3. stripped: one frame at hidden_spin's start, as a file offset
va=$(nm "$tmp/libnames_full.so" | awk '$3 ~ /^hidden_spin/ { print $1 }')
[ -n "$va" ] || fail "no hidden_spin in the unstripped library"
off=""
while read -r typ o v _ fs _; do	# LOAD offset vaddr paddr filesz ...
	[ "$typ" = LOAD ] || continue
	if ((16#$va >= v && 16#$va < v + fs)); then off=$(printf '0x%x' $((16#$va - v + o))); fi
done < <(readelf -lW "$tmp/libnames_full.so")
want="libnames.so+$off"
got=$(awk '$2 ~ /^libnames\.so\+/' "$tmp/default.leaves")
[ "$(echo "$got" | awk 'NF' | wc -l)" -eq 1 ] || fail "stripped code split over rows: $got"
[ "$(echo "$got" | awk '{ print $2 }')" = "$want" ] || fail "stripped row is $got, want $want"
[ "$(echo "$got" | awk '{ print $1 }')" -gt 50 ] || fail "too few samples in $want: $got"

# 4. inline: outer_fn keeps inner_work's time by default; --inline gives it its own frame
outer=$(self "$tmp/default.leaves" outer_fn)
[ "$outer" -gt 50 ] || fail "outer_fn has $outer self samples by default"
grep -q '(inlined)' "$tmp/default.folded" && fail "inlined frames without --inline"
inl=$(self "$tmp/inline.leaves" "inner_work (inlined)")
[ "$inl" -gt $((outer / 2)) ] || fail "--inline: inner_work has $inl of outer_fn's $outer samples"

# 5. the same names from an archive on a machine without the files (PLT stubs need .plt and
#    .rela.plt kept in it; stripped code needs .eh_frame_hdr)
"$B/xpu-report" archive "$tmp/n.xpu" >/dev/null 2>"$tmp/err" || fail "archive: $(head -1 "$tmp/err")"
"$B/xpu-report" -F folded --no-host-files "$tmp/n.xpu" >"$tmp/archive.folded" 2>"$tmp/err" ||
	fail "report from the archive: $(head -1 "$tmp/err")"
leaves "$tmp/archive.folded" >"$tmp/archive.leaves"
[ "$(self "$tmp/archive.leaves" "trivial@plt")" -eq "$plt" ] || fail "archive: trivial@plt differs"
[ "$(self "$tmp/archive.leaves" "$want")" -eq "${got%% *}" ] || fail "archive: $want differs"

echo "PASS $NAME: trivial@plt $plt, vdso $vdso rows, $want ${got%% *}, outer_fn $outer (--inline: inner_work $inl)"
