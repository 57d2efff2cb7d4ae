#!/usr/bin/env bash
# The committed line-table vectors (tests/unit/data/pyline-3.X.txt, read by test_pyline) are
# what the interpreters really produce: each installed CPython 3.10-3.13 under pyenv rewrites
# its file with tests/unit/gen_pyline_vectors.py and the result must equal the committed one.
# A missing version, or one whose patch release differs from the file's (its bytecode may
# differ), is skipped with a message; exit 77 when none could be compared.
set -u
cd "$(dirname "$0")/../.."
PYENV_VERSIONS=${PYENV_ROOT:-$HOME/.pyenv}/versions
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compared=0 fails=0

for minor in 10 11 12 13; do
	data=tests/unit/data/pyline-3.$minor.txt
	if [ ! -s "$data" ]; then
		echo "FAIL $data: missing or empty"
		fails=$((fails + 1))
		continue
	fi
	want=$(sed -n '1s/^# CPython //p' "$data")
	py=$PYENV_VERSIONS/$want/bin/python3.$minor
	if [ -z "$want" ]; then
		echo "FAIL $data: no '# CPython X.Y.Z' first line"
		fails=$((fails + 1))
		continue
	fi
	if [ ! -x "$py" ]; then
		echo "skip 3.$minor: $data was made by CPython $want, not installed ($py)"
		continue
	fi
	if ! "$py" tests/unit/gen_pyline_vectors.py >"$tmp/3.$minor.txt"; then
		echo "FAIL 3.$minor: gen_pyline_vectors.py failed under $py"
		fails=$((fails + 1))
		continue
	fi
	if ! cmp -s "$tmp/3.$minor.txt" "$data"; then
		echo "FAIL $data differs from what CPython $want writes now:"
		diff "$data" "$tmp/3.$minor.txt" | cut -c 1-160 | head -n 10
		echo "  (regenerate: $py tests/unit/gen_pyline_vectors.py > $data)"
		fails=$((fails + 1))
		continue
	fi
	compared=$((compared + 1))
done

if [ "$fails" -eq 0 ] && [ "$compared" -eq 0 ]; then
	echo "no CPython that made tests/unit/data/pyline-3.*.txt is installed under $PYENV_VERSIONS"
	exit 77
fi
echo "$compared vector files regenerated and equal, $fails failed"
[ "$fails" -eq 0 ]
