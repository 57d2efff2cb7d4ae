#!/bin/bash
# The README's quick starts, run as written: each ```sh block after a `<!-- quickstart: NAME -->`
# line, in a scratch directory that links build/ and samples/ of this checkout (so the files
# they write land there), `sudo ` dropped when already root. Then a check per block of what
# its text promises. The gpu block needs a GPU host: tests/gpu/readme_gpu.sh runs it there.
#   tests/e2e/test_readme.sh [BLOCK...]     (default: cpu python laptop)
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
B=${BUILD:-build}
NAME=test_readme
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

blocks=("$@")
[ ${#blocks[@]} -gt 0 ] || blocks=(cpu python laptop)
[ -x "$B/xpu-report" ] || fail "run make first"
for b in "${blocks[@]}"; do
	[ "$b" = laptop ] && continue
	[ "$(id -u)" = 0 ] || skip "the $b quick start records: needs root for eBPF"
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ln -s "$ROOT/$B" "$tmp/build"
ln -s "$ROOT/samples" "$tmp/samples"

# block NAME: the commands of that quick start, one per line
block() {
	awk -v want="<!-- quickstart: $1 -->" '
		$0 == want { armed = 1; next }
		armed && /^```sh$/ { inside = 1; next }
		inside && /^```$/ { exit }
		inside { print }' README.md
}

check() {	# NAME: what the quick start's text says its output shows
	case $1 in
	cpu)
		grep -q '^# top functions by self' cpu.txt || return 1
		grep -q '^# top functions by total' cpu.txt || return 1
		grep -q 'spin' cpu.txt || return 1
		grep -q '<svg' cpu.svg ;;
	python)
		grep -q 'count (py_demo\.py)' py.folded || return 1
		grep -q 'tokenize (py_demo\.py)' py.folded ;;
	gpu)
		grep -q '^# top gpu kernels' train.txt || return 1
		grep -q 'train_step (torch_train\.py).*\[gpu\] ' gpu.folded || return 1
		[ -s train.xpu.xpa ] ;;
	laptop)
		grep -q '^# top gpu kernels' pipeline.txt || return 1
		grep -q '"cat":"kernel"' pipeline.json || return 1
		grep -q 'train_step (torch_train\.py).*\[gpu\] ' torch.folded ;;
	*) return 1 ;;
	esac
}

for b in "${blocks[@]}"; do
	cmds=$(block "$b")
	[ -n "$cmds" ] || fail "README has no quick start block '$b'"
	[ "$(id -u)" = 0 ] && cmds=$(sed 's/^sudo //' <<<"$cmds")
	(cd "$tmp" && bash -e -o pipefail -c "$cmds") >"$tmp/$b.log" 2>&1 ||
		fail "quick start '$b' failed: $(tail -3 "$tmp/$b.log")"
	(cd "$tmp" && check "$b") || fail "quick start '$b' ran but its output lacks what the README says"
	echo "ok: quick start '$b' ($(wc -l <<<"$cmds") commands)"
done
echo "PASS $NAME"
