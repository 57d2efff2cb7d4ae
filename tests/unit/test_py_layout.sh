#!/usr/bin/env bash
# record/python/py_layout.c against the real CPython builds. For each installed CPython 3.10-3.13
# (pyenv, and the system's /usr/bin/python3.X where its headers are installed) it compiles
# tests/unit/py_layout_dump.c against that version's own headers and compares every offset
# the Python walk uses with what the recorder's code yields:
#   py_layout__for_version()  the built-in table
#   py_layout__probe()        run on the interpreter file (libpython3.X.so.1.0, or the
#                             executable); for 3.13 this reads its _Py_DebugOffsets
# It also checks the widths the BPF walk reads, that frame_read covers every frame field,
# that the str state bits read_str() (record/python/py_procs.c) decodes are where the headers put
# them, and (3.13) that the indexes py_layout.c reads _Py_DebugOffsets at are the header's.
# Any mismatch fails, naming the field. Exit 77 when no CPython 3.10-3.13 is found.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CC=${CC:-cc}
OURS=$BUILD/tests/py_layout_ours
PYENV_VERSIONS=${PYENV_ROOT:-$HOME/.pyenv}/versions
XPU_PY_FRAME_READ_MAX=$(sed -n 's/^#define XPU_PY_FRAME_READ_MAX \([0-9]*\).*/\1/p' bpf/xpu_bpf_abi.h)

if [ ! -x "$OURS" ]; then
	echo "missing $OURS: run 'make unit' first"
	exit 1
fi
if [ -z "$XPU_PY_FRAME_READ_MAX" ]; then
	echo "cannot find XPU_PY_FRAME_READ_MAX in bpf/xpu_bpf_abi.h"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
compared=0

# The bit positions read_str() decodes a str's state with: kind = state >> K & 7,
# compact = state >> C & 1, ascii = state >> A & 1.
shift_in() {
	grep -oE "$1" record/python/py_procs.c | head -n 1 | grep -oE '>> [0-9]+' | tr -dc 0-9
}
kind_shift=$(shift_in 'kind = state >> [0-9]+ & 7')
compact_shift=$(shift_in '!\(state >> [0-9]+ & 1\)')
ascii_shift=$(shift_in '\(state >> [0-9]+ & 1\) \?')
if [ -z "$kind_shift" ] || [ -z "$compact_shift" ] || [ -z "$ascii_shift" ]; then
	echo "cannot find the str state bits read_str() uses in record/python/py_procs.c;" \
	     "update this test with it"
	exit 1
fi

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# check LABEL TRUTH OURS: every field the headers give must equal the recorder's.
check() {
	local label=$1 truth=$2 ours=$3 name value minor model
	declare -A t=() o=()
	while read -r name value; do t[$name]=$value; done <"$truth"
	while read -r name value; do o[$name]=$value; done <"$ours"
	minor=${t[version]#3.}
	if [ "${o[version]:-}" != "${t[version]}" ]; then
		fail "$label: version: headers say ${t[version]}, py_layout.c says ${o[version]:-nothing}"
		return
	fi
	for name in "${!t[@]}"; do
		case $name in
		bytes_size) ;;	# an offset (of ob_size), not a width
		version | frame_need | frame_size | *_size | state_*) continue ;;
		esac
		if [ -z "${o[$name]+x}" ]; then
			fail "$label: field $name: headers say ${t[$name]}, py_layout.c gives none"
		elif [ "${o[$name]}" != "${t[$name]}" ]; then
			fail "$label: field $name: headers say ${t[$name]}, py_layout.c says ${o[$name]}"
		fi
	done
	# the 3.13 probe reads D_NR u64s of _Py_DebugOffsets: every index it uses must be inside
	for name in "${!t[@]}"; do
		[[ $name == dbg_* ]] && [ "${t[$name]}" -ge "${o[dbg_read]}" ] &&
			fail "$label: $name: index ${t[$name]} past the ${o[dbg_read]} u64s read"
	done
	[ -n "${o[walk_co_firstlineno]+x}" ] &&
		fail "$label: field co_firstlineno: the walk uses ${o[walk_co_firstlineno]}," \
		     "the code reader ${o[co_firstlineno]}"
	[ "${o[status]}" = 1 ] || fail "$label: status ${o[status]}, want 1 (supported)"
	model=$((minor - 9))	# enum xpu_py_frame_model: 3.10 is 1 ... 3.13 is 4
	[ "${o[model]}" = "$model" ] || fail "$label: field model: ${o[model]}, want $model"
	# one read per frame must cover every field the walk takes from it, and stay inside it
	if [ "${o[frame_read]}" -lt "${t[frame_need]}" ] ||
	   [ "${o[frame_read]}" -gt "${t[frame_size]}" ] ||
	   [ "${o[frame_read]}" -gt "$XPU_PY_FRAME_READ_MAX" ]; then
		fail "$label: field frame_read: ${o[frame_read]}, the fields need ${t[frame_need]}," \
		     "the frame has ${t[frame_size]}, the BPF buffer $XPU_PY_FRAME_READ_MAX"
	fi
	compared=$((compared + 1))
}

# widths: what the BPF walk (bpf/py_walk.bpf.h) and read_str() read at each field
check_widths() {
	local label=$1 truth=$2 name value minor want
	declare -A t=()
	while read -r name value; do t[$name]=$value; done <"$truth"
	minor=${t[version]#3.}
	want=8; [ "$minor" = 10 ] && want=4	# f_lasti is an int; the others are pointers
	[ "${t[fr_instr_size]}" = "$want" ] ||
		fail "$label: fr_instr is ${t[fr_instr_size]} bytes, the walk reads $want"
	[ "${t[ts_id_size]}" = 8 ] || fail "$label: ts_id is ${t[ts_id_size]} bytes, the walk reads 8"
	[ "${t[fr_marker_size]:-1}" = 1 ] ||
		fail "$label: fr_marker is ${t[fr_marker_size]} bytes, the walk reads 1"
	[ "${t[co_firstlineno_size]}" = 4 ] ||
		fail "$label: co_firstlineno is ${t[co_firstlineno_size]} bytes, the walk reads 4"
	[ "${t[str_length_size]}" = 8 ] ||
		fail "$label: str length is ${t[str_length_size]} bytes, read_str() reads 8"
	[ "${t[state_kind_shift]}" = "$kind_shift" ] && [ "${t[state_kind_mask]}" = 7 ] ||
		fail "$label: str state kind at bit ${t[state_kind_shift]} (mask ${t[state_kind_mask]})," \
		     "read_str() takes bit $kind_shift mask 7"
	[ "${t[state_compact_shift]}" = "$compact_shift" ] ||
		fail "$label: str state compact at bit ${t[state_compact_shift]}," \
		     "read_str() takes bit $compact_shift"
	[ "${t[state_ascii_shift]}" = "$ascii_shift" ] ||
		fail "$label: str state ascii at bit ${t[state_ascii_shift]}," \
		     "read_str() takes bit $ascii_shift"
}

# one LABEL INCLUDE_DIR FILE MINOR: one CPython, its headers and its interpreter ELF file
one() {
	local label=$1 inc=$2 file=$3 minor=$4 truth=$tmp/$1.truth
	if ! "$CC" -o "$tmp/$label.dump" -I"$inc" -I"$inc/internal" \
	     tests/unit/py_layout_dump.c 2>"$tmp/$label.cc"; then
		fail "$label: py_layout_dump.c does not build against $inc:"
		sed 's/^/    /' "$tmp/$label.cc" | head -n 20
		return
	fi
	"$tmp/$label.dump" >"$truth" || { fail "$label: the dumper failed"; return; }
	check_widths "$label" "$truth"
	if "$OURS" version "3.$minor" >"$tmp/$label.table"; then
		check "$label table" "$truth" "$tmp/$label.table"
	else
		fail "$label table: py_layout__for_version(3.$minor) refuses it"
	fi
	if "$OURS" probe "$file" >"$tmp/$label.probe"; then
		check "$label probe $file" "$truth" "$tmp/$label.probe"
	else
		fail "$label probe: py_layout__probe($file) finds no CPython"
	fi
}

for minor in 10 11 12 13; do
	found=
	for dir in "$PYENV_VERSIONS"/3.$minor.*; do
		[ -f "$dir/include/python3.$minor/Python.h" ] || continue
		[ -f "$dir/lib/libpython3.$minor.so.1.0" ] || {
			echo "skip $dir: no lib/libpython3.$minor.so.1.0 (not a --enable-shared build)"
			continue
		}
		found=1
		one "pyenv-$(basename "$dir")" "$dir/include/python3.$minor" \
		    "$dir/lib/libpython3.$minor.so.1.0" "$minor"
	done
	[ -n "$found" ] || echo "skip 3.$minor: no CPython 3.$minor under $PYENV_VERSIONS"
	if [ -x "/usr/bin/python3.$minor" ]; then
		if [ -f "/usr/include/python3.$minor/internal/pycore_interp.h" ]; then
			one "system-3.$minor" "/usr/include/python3.$minor" "/usr/bin/python3.$minor" \
			    "$minor"
		else
			echo "skip /usr/bin/python3.$minor: no internal headers in /usr/include/python3.$minor"
		fi
	fi
done

if [ "$compared" -eq 0 ] && [ "$fails" -eq 0 ]; then
	echo "no CPython 3.10-3.13 with headers found (pyenv under $PYENV_VERSIONS, /usr/bin)"
	exit 77
fi
echo "$compared layouts compared, $fails mismatches"
[ "$fails" -eq 0 ]
