#!/bin/sh
# Golden tests for xpu-report: every committed trace (samples/traces/*.xpu) and a synthetic
# trace built here (tests/golden/make_synthetic.c, plus a copy cut mid-frame) go through
# every format and view; outputs are diffed against tests/golden/expected/NAME.VARIANT.
# UPDATE=1 rewrites the expected files. Machine-specific text (the checkout path, the
# build-id of the locally built target) is masked before comparing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
REPORT="$ROOT/$BUILD/xpu-report"
EXP="$ROOT/tests/golden/expected"
# Always build/golden, whatever BUILD: the synthetic trace names its target's path, so a
# different directory would change its bytes (make test's SAN=1 pass checks only the report).
OUT="$ROOT/build/golden"
CC=${CC:-cc}
pass=0
fail=0

[ -x "$REPORT" ] || { echo "golden: $REPORT not built" >&2; exit 1; }
mkdir -p "$OUT" "$EXP"

build_synthetic() {
	$CC -O0 -g -o "$OUT/target" "$ROOT/tests/golden/target.c" || return 1
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$OUT/make_synthetic" \
		"$ROOT/tests/golden/make_synthetic.c" "$ROOT/build/libxpucommon.a" -lzstd || return 1
	a() { nm "$OUT/target" | awk -v s="$1" '$3 == s { print $1 }'; }
	"$OUT/make_synthetic" "$OUT/synthetic.xpu" "$OUT/target" "$(a main)" \
		"$(a _ZN3app6Solver4stepEi)" "$(a middle)" "$(a leaf_work)" || return 1
	# cut 200 bytes before the end: the trailer and the last frame are lost, mid-payload (1.12's
	# longer copy records moved the last frame's start: 100 bytes only cut its header)
	size=$(wc -c < "$OUT/synthetic.xpu")
	head -c $((size - 200)) "$OUT/synthetic.xpu" > "$OUT/synthetic-cut.xpu"
}

# The synthetic trace holds the checkout's path, so its size depends on where the tree is, and
# so do its frames' offsets (a clone at /work/fc7 moved the damaged frame by 4 bytes).
SIZE_MASK='s|^  size  *[0-9]* of [0-9]* bytes valid$|  size             @SIZE@|; s|at offset [0-9][0-9]*)|at offset @OFFSET@)|g'
mask() {	# the synthetic trace holds this checkout's path and test binary; recorded ones don't
	if [ "${RECORDED:-0}" = 1 ]; then	# only where the trace is (warnings name it)
		sed -e "s|$ROOT/samples/traces/|@TRACES@/|g"
		return
	fi
	bid=""
	[ -f "$OUT/target" ] && bid=$(readelf -n "$OUT/target" 2>/dev/null |
		awk '/Build ID/ { print $3 }')
	if [ -n "$bid" ]; then
		sed -e "s|$ROOT|@ROOT@|g" -e "s|$bid|@BUILDID@|g" -e "$SIZE_MASK"
	else
		sed -e "s|$ROOT|@ROOT@|g" -e "$SIZE_MASK"
	fi
}

check() {	# name variant args...
	name=$1
	variant=$2
	shift 2
	got="$OUT/$name.$variant"
	"$REPORT" "$@" > "$got.raw" 2> "$got.err"
	echo "exit $?" >> "$got.raw"
	mask < "$got.err" >> "$got.raw"
	mask < "$got.raw" > "$got"
	rm -f "$got.raw" "$got.err"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$got" "$EXP/$name.$variant"
		pass=$((pass + 1))
	elif diff -u "$EXP/$name.$variant" "$got" > "$got.diff" 2>&1; then
		pass=$((pass + 1))
		rm -f "$got.diff"
	else
		fail=$((fail + 1))
		echo "FAIL golden $name.$variant"
		head -40 "$got.diff"
	fi
}

run_trace() {	# file name [extra report options]
	f=$1
	n=$2
	shift 2
	check "$n" text "$@" "$f"
	check "$n" info -F info "$@" "$f"
	check "$n" folded-gpu-time -F folded --view=gpu --weight=time "$@" "$f"
	[ "${GOLDEN_SHORT:-0}" = 1 ] && return
	check "$n" folded -F folded "$@" "$f"
	check "$n" folded-cpu -F folded --view=cpu "$@" "$f"
	check "$n" folded-gpu -F folded --view=gpu "$@" "$f"
	check "$n" folded-time -F folded --weight=time "$@" "$f"
	check "$n" chrome -F chrome "$@" "$f"
	check "$n" svg -F svg "$@" "$f"
	check "$n" folded-memory -F folded --view=memory "$@" "$f"
}

# Traces recorded on a GPU host. --no-host-files: symbols come only from a committed archive
# (NAME.xpu.xpa) or not at all, so the output is the same on every machine. PyTorch traces get
# the short set: their every-format outputs would be megabytes of unsymbolized frames.
for f in "$ROOT"/samples/traces/*.xpu; do
	[ -f "$f" ] || continue
	n=$(basename "$f" .xpu)
	case "$n" in
	torch*) RECORDED=1 GOLDEN_SHORT=1 run_trace "$f" "$n" --no-host-files ;;
	*) RECORDED=1 run_trace "$f" "$n" --no-host-files ;;
	esac
done

if build_synthetic; then
	run_trace "$OUT/synthetic.xpu" synthetic
	check synthetic folded-pid -F folded --pid=200 "$OUT/synthetic.xpu"
	check synthetic folded-tid -F folded --tid=101 "$OUT/synthetic.xpu"
	check synthetic folded-comm -F folded --comm=helper "$OUT/synthetic.xpu"
	check synthetic text-tid --tid=101 "$OUT/synthetic.xpu"
	check synthetic-cut folded -F folded "$OUT/synthetic-cut.xpu"
	check synthetic-cut strict -F folded --strict "$OUT/synthetic-cut.xpu"
	check synthetic-cut info -F info "$OUT/synthetic-cut.xpu"
	# navigation: --sort, --rows, --percent-limit, --dso, --callers/--callees, -v for losses
	check synthetic text-sort --sort=dso,sym --rows=4 --percent-limit=2 "$OUT/synthetic.xpu"
	check synthetic text-sort-comm --sort=comm --rows=1 "$OUT/synthetic.xpu"
	check synthetic folded-dso -F folded --dso=libfoo.so.1 "$OUT/synthetic.xpu"
	check synthetic text-dso --dso=/usr/lib/libfoo.so.1 "$OUT/synthetic.xpu"
	check synthetic callers --callers=leaf_work "$OUT/synthetic.xpu"
	check synthetic callees --callees=main --weight=samples "$OUT/synthetic.xpu"
	check synthetic callers-none --callers=no_such_function "$OUT/synthetic.xpu"
	check synthetic info-v -F info -v "$OUT/synthetic.xpu"
	# what selects nothing, or holds nothing, says so and exits 1
	check synthetic folded-empty -F folded --pid=12345 "$OUT/synthetic.xpu"
	check synthetic chrome-empty -F chrome --pid=12345 "$OUT/synthetic.xpu"
	check synthetic text-empty --comm=nobody "$OUT/synthetic.xpu"
	head -c 64 "$OUT/synthetic.xpu" > "$OUT/synthetic-empty.xpu"
	check synthetic-empty folded -F folded "$OUT/synthetic-empty.xpu"
	# a damaged frame is "corrupt", a short file "truncated" (synthetic-cut above)
	python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
		"$OUT/synthetic.xpu" "$OUT/synthetic-corrupt.xpu"
	check synthetic-corrupt text-head --rows=1 "$OUT/synthetic-corrupt.xpu"
	# a file with another build-id under --symfs: one warning for all such files
	mkdir -p "$OUT/symfs/opt/missing"
	cp "$OUT/target" "$OUT/symfs/opt/missing/libfoo.so.1"
	check synthetic text-mismatch --no-host-files --symfs="$OUT/symfs" "$OUT/synthetic.xpu"
else
	echo "FAIL golden: could not build the synthetic trace"
	fail=$((fail + 1))
fi

# xpu-report diff: two different traces in each format and with the options that shape the
# table, then what must hold of any diff (tests/golden/diff_check.py): a trace against itself
# changes by exactly 0, each side's shares are its own report's
T="$ROOT/samples/traces"
check pipeline diff-graph diff --no-host-files --rows=30 "$T/pipeline.xpu" "$T/pipeline-graph.xpu"
check pipeline diff-graph-total diff --no-host-files --order=total --sort=dso \
	--percent-limit=1 --view=cpu "$T/pipeline.xpu" "$T/pipeline-graph.xpu"
check pipeline diff-graph-folded diff -F folded --view=gpu --no-host-files \
	"$T/pipeline.xpu" "$T/pipeline-graph.xpu"
check pipeline diff-graph-svg diff -F svg --view=gpu --no-host-files \
	"$T/pipeline.xpu" "$T/pipeline-graph.xpu"
if [ -f "$OUT/synthetic.xpu" ]; then
	check synthetic diff-cut diff "$OUT/synthetic.xpu" "$OUT/synthetic-cut.xpu"
	check synthetic diff-comm diff --sort=comm,sym --rows=8 "$OUT/synthetic.xpu" "$OUT/synthetic.xpu"
	check synthetic diff-empty diff --pid=200 "$OUT/synthetic.xpu" "$OUT/synthetic-empty.xpu"
	check synthetic diff-pid diff --pid=12345 "$OUT/synthetic.xpu" "$OUT/synthetic.xpu"
fi
if python3 "$ROOT/tests/golden/diff_check.py" "$REPORT" "$T/pipeline.xpu" "$T/pipeline-graph.xpu" \
	"$T/torch-small.xpu" "$OUT/synthetic.xpu"; then
	pass=$((pass + 1))
else
	echo "FAIL golden diff_check"
	fail=$((fail + 1))
fi

# --off-cpu: blocked time by stack, wall time, and every format (tests/golden/make_offcpu.c)
build_offcpu() {
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$OUT/make_offcpu" \
		"$ROOT/tests/golden/make_offcpu.c" "$ROOT/build/libxpucommon.a" -lzstd || return 1
	a() { nm "$OUT/target" | awk -v s="$1" '$3 == s { print $1 }'; }
	"$OUT/make_offcpu" "$OUT/offcpu.xpu" "$OUT/target" "$(a main)" "$(a middle)" \
		"$(a leaf_work)"
}
if [ -x "$OUT/target" ] && build_offcpu; then
	o="$OUT/offcpu.xpu"
	check offcpu text --view=wall "$o"
	check offcpu text-off-cpu --view=off-cpu "$o"
	check offcpu info -F info "$o"
	check offcpu folded-off-cpu -F folded --view=off-cpu "$o"
	check offcpu folded-wall -F folded --view=wall "$o"
	check offcpu folded-wall-samples -F folded --view=wall --weight=samples "$o"
	check offcpu folded-range -F folded --view=off-cpu --time-range=0.06,0.08 "$o"
	check offcpu folded-tid -F folded --view=off-cpu --tid=301 "$o"
	check offcpu chrome -F chrome "$o"
	check offcpu jsonl -F jsonl "$o"
	check offcpu svg -F svg --view=off-cpu "$o"
	check offcpu folded-cpu -F folded --view=cpu "$o"
	check offcpu folded-empty -F folded --view=off-cpu --pid=1 "$o"
	# a trace without off-CPU data says so in one line and exits 1
	check synthetic folded-off-cpu -F folded --view=off-cpu "$OUT/synthetic.xpu"
	check synthetic text-wall --view=wall "$OUT/synthetic.xpu"
else
	echo "FAIL golden: could not build the off-CPU trace"
	fail=$((fail + 1))
fi

# PyTorch backward attribution: backward work under the forward stacks of its nodes, with
# the cases it must leave alone (tests/golden/make_autograd.c)
build_autograd() {
	$CC -O2 -std=gnu11 -D_GNU_SOURCE -I"$ROOT/common" -o "$OUT/make_autograd" \
		"$ROOT/tests/golden/make_autograd.c" "$ROOT/build/libxpucommon.a" -lzstd || return 1
	a() { nm "$OUT/target" | awk -v s="$1" '$3 == s { print $1 }'; }
	"$OUT/make_autograd" "$OUT/autograd.xpu" "$OUT/target" "$(a main)" \
		"$(a _ZN3app6Solver4stepEi)" "$(a middle)" "$(a leaf_work)"
}
if [ -x "$OUT/target" ] && build_autograd; then
	o="$OUT/autograd.xpu"
	check autograd text "$o"
	check autograd info -F info "$o"
	check autograd folded-cpu -F folded --view=cpu "$o"
	check autograd folded-gpu -F folded --view=gpu --weight=time "$o"
	check autograd folded-no-backward -F folded --view=cpu --no-backward "$o"
	check autograd chrome -F chrome "$o"
	check autograd jsonl -F jsonl "$o"
else
	echo "FAIL golden: could not build the autograd trace"
	fail=$((fail + 1))
fi

# folded weights keep every GPU record and the totals (tests/golden/weights.py)
if [ -f "$OUT/synthetic.xpu" ] &&
   python3 "$ROOT/tests/golden/weights.py" "$REPORT" "$ROOT/samples/traces/pipeline.xpu" \
	"$OUT/synthetic.xpu"; then
	pass=$((pass + 1))
else
	echo "FAIL golden weights"
	fail=$((fail + 1))
fi

# one filter: the same samples and GPU records in every format (tests/golden/filters.py)
if "$ROOT/tests/golden/test_filters.sh"; then
	pass=$((pass + 1))
else
	echo "FAIL golden filters"
	fail=$((fail + 1))
fi

# pprof of the synthetic trace: addresses and DWARF source lines (build/tests/test_pprof)
if [ -f "$OUT/synthetic.xpu" ] && [ -x "$ROOT/$BUILD/tests/test_pprof" ]; then
	"$ROOT/$BUILD/tests/test_pprof" "$OUT/synthetic.xpu"
	rc=$?
	if [ $rc = 0 ] || [ $rc = 77 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL golden pprof lines"
		fail=$((fail + 1))
	fi
fi

# jsonl of every committed trace, line by line (tests/golden/jsonl_check.py)
if "$ROOT/tests/golden/test_jsonl.sh"; then
	pass=$((pass + 1))
else
	echo "FAIL golden jsonl"
	fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
