#!/bin/bash
# -g cfi (user stacks unwound in BPF with .eh_frame tables, the default mode) on stripped Debian
# binaries (xz, sort, python3.11) and the frame-pointer-less tests/e2e/dwarf program, each
# recorded once with -g cfi,check: the BPF walk's stacks (xpu-report --no-unwind) must be
# complete for >= 95% of samples and hold the frames of the DWARF unwinding of the copies taken
# at the same samples (the same stack, or one that continues where the copy ended) for >= 95% of
# them. Each is recorded again with the default mode (no -g) and with -g fp: >= 95% complete, at
# most twice the bytes per sample of -g fp. The walk steps out of a leaf without CFI or frame
# pointer (tests/e2e/dwarf/nocfi_leaf.c) by a scan, in samples and off-CPU blocks; a frame whose
# CFA only a DWARF expression gives (tests/e2e/dwarf/cfiexpr_call.S) ends every BPF walk: the
# default mode copies those stacks and xpu-report completes them, where -g cfi,nocopy cannot.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_cfi
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

NOFP="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
${CC:-gcc} $NOFP -fPIC -shared -o "$tmp/libdwchain.so" tests/e2e/dwarf/chain_lib.c &&
	${CC:-gcc} $NOFP -o "$tmp/dwchain" tests/e2e/dwarf/chain_main.c -L"$tmp" -ldwchain \
		-Wl,-rpath,"$tmp" &&
	${CC:-gcc} $NOFP -fno-asynchronous-unwind-tables -fno-unwind-tables -c \
		-o "$tmp/nocfi_leaf.o" tests/e2e/dwarf/nocfi_leaf.c &&
	${CC:-gcc} $NOFP -o "$tmp/nocfi" tests/e2e/dwarf/nocfi_main.c \
		tests/e2e/dwarf/cfiexpr_call.S "$tmp/nocfi_leaf.o" ||
	fail "building tests/e2e/dwarf"

PY='
def f(n):
    return sum(i * i for i in range(n))
import time
t = time.time()
while time.time() - t < 1.5:
    f(20000)
'
record() {	# name mode command...   (mode default: no -g)
	local name=$1 mode=$2 g=(); shift 2
	[ "$mode" = default ] || g=(-g "$mode")
	"$B/xpu-record" --no-gpu "${g[@]}" -o "$tmp/$name.xpu" -- "$@" >/dev/null 2>"$tmp/err"
	local rc=$?
	grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
		skip "BPF unavailable: $(head -1 "$tmp/err")"
	[ $rc = 0 ] || fail "xpu-record -g $mode ($name) exited $rc: $(head -2 "$tmp/err")"
}

# Share of sample weight whose BPF-walk stack has the frames of the DWARF one: the same stack,
# or one that goes on past where the DWARF walk stopped (its copy ended; the walk in BPF reads
# the whole stack). Folded stacks are root first, so the DWARF stack is then a suffix.
same_share() {
	python3 - "$1" "$2" <<'PYEOF'
import sys
def load(f):
    d = {}
    for l in open(f):
        k, _, v = l.rstrip("\n").rpartition(" ")
        if k:
            d[k] = d.get(k, 0) + int(v)
    return d
dw, cfi = load(sys.argv[1]), load(sys.argv[2])
tot = sum(dw.values())
same = 0
for k in list(dw):
    m = min(dw[k], cfi.get(k, 0))
    dw[k] -= m; cfi[k] = cfi.get(k, 0) - m; same += m
for k, v in dw.items():
    tail = ";" + k.split(";", 1)[1] if ";" in k else None
    for c in cfi:
        if v and tail and cfi[c] and c.endswith(tail) and c.split(";", 1)[0] == k.split(";", 1)[0]:
            m = min(v, cfi[c]); v -= m; cfi[c] -= m; same += m
print(int(100 * same / tot) if tot else 0, tot)
PYEOF
}

failed=0
check() {	# name
	local name=$1 t=$tmp/$1.xpu pct n share
	"$B/xpu-report" --no-unwind --format=info "$t" >"$tmp/$name.info" 2>&1 ||
		fail "$name: xpu-report --format=info failed"
	grep -q "cfi (unwound in BPF)" "$tmp/$name.info" || fail "$name: info does not name the cfi mode"
	pct=$(awk '$1 == "complete" { gsub(/[(%),]/, "", $7); print int($7) }' "$tmp/$name.info")
	"$B/xpu-report" --no-unwind --format=folded --view=cpu "$t" >"$tmp/$name.cfi" 2>/dev/null &&
		"$B/xpu-report" --format=folded --view=cpu "$t" >"$tmp/$name.dwarf" 2>/dev/null ||
		fail "$name: xpu-report --format=folded failed"
	read -r share n < <(same_share "$tmp/$name.dwarf" "$tmp/$name.cfi")
	echo "$name: ${pct:-0}% complete (BPF walk), ${share}% of $n samples same frames as -g dwarf"
	if [ "${pct:-0}" -lt 95 ]; then
		echo "FAIL $name: only ${pct:-0}% complete"; failed=1
		# what fell short, for whoever reads the log: the walk's counters and the heaviest
		# stacks that do not reach the program's entry
		grep -E "cfi_|complete|lost" "$tmp/$name.info" | sed 's/^/  /'
		grep -vE '^[^;]*;(_start|__libc_start|clone)' "$tmp/$name.cfi" |
			awk '{ print $NF "\t" $0 }' | sort -nr | cut -f2- | head -8 | cut -c1-240 | sed 's/^/  short: /'
	fi
	[ "$share" -ge 95 ] || { echo "FAIL $name: only $share% as -g dwarf"; failed=1; }
	[ "$n" -ge 200 ] || { echo "FAIL $name: only $n samples"; failed=1; }
}

head -c 3000000 /dev/urandom >"$tmp/rand" || fail "no /dev/urandom"
seq 1 2000000 | shuf >"$tmp/nums" 2>/dev/null || seq 2000000 -1 1 >"$tmp/nums"
record xz cfi,check xz -9 -k -c "$tmp/rand"
check xz
record sort cfi,check sort -n -S 64M "$tmp/nums" -o "$tmp/sorted"
check sort
if [ -x /usr/bin/python3.11 ]; then
	record python cfi,check /usr/bin/python3.11 -c "$PY"
	check python
	grep -q ";f (<string>)" "$tmp/python.cfi" ||
		{ echo "FAIL python: no Python frame f in the BPF walk's stacks"; failed=1; }
else
	echo "skip: no /usr/bin/python3.11"
fi
record dwchain cfi,check "$tmp/dwchain" 1.5
check dwchain
grep -qE '(^|;)main;(dw_deep;)*dw_loop;dw_main_1;dw_main_2;dw_main_3;dw_lib_a;dw_lib_b;dw_lib_c;dw_leaf( |$)' \
	"$tmp/dwchain.cfi" || { echo "FAIL dwchain: no whole chain from main"; failed=1; }

# the default mode against -g fp on each program: complete stacks (walks that fell short are
# unwound from their copies) and trace bytes per sample
complete_pct() {	# trace [xpu-report options]: the complete-sample share, an integer
	"$B/xpu-report" "${@:2}" --format=info "$1" 2>/dev/null |
		awk '$1 == "complete" { gsub(/[(%),]/, "", $7); print int($7) }'
}
per_sample() {	# trace: whole file bytes / samples
	"$B/xpu-report" --format=info "$1" 2>/dev/null |
		awk -v f="$(stat -c %s "$1")" '$1 == "samples" { printf "%d", f / $2 }'
}
size_check() {	# name command...
	local name=$1 pct bd bf; shift
	record "$name-default" default "$@"
	record "$name-fp" fp "$@"
	pct=$(complete_pct "$tmp/$name-default.xpu")
	bd=$(per_sample "$tmp/$name-default.xpu"); bf=$(per_sample "$tmp/$name-fp.xpu")
	echo "$name, default mode: ${pct:-0}% complete, bytes per sample ${bd:-?} (fp ${bf:-?})"
	[ "${pct:-0}" -ge 95 ] || { echo "FAIL $name: default mode only ${pct:-0}% complete"; failed=1; }
	[ -n "$bd" ] && [ -n "$bf" ] && [ "$bd" -le $((2 * bf)) ] ||
		{ echo "FAIL $name: default mode ${bd:-?} bytes per sample > 2 x fp's ${bf:-?}"; failed=1; }
}
size_check xz xz -9 -k -c "$tmp/rand"
size_check sort sort -n -S 64M "$tmp/nums" -o "$tmp/sorted"
[ -x /usr/bin/python3.11 ] && size_check python /usr/bin/python3.11 -c "$PY"
size_check dwchain "$tmp/dwchain" 1.5

# a leaf without CFI or frame pointer: the BPF walk steps out of it by a scan for a return
# address (a word after a call instruction), in CPU samples and off-CPU blocks alike
record nocfi default "$tmp/nocfi" 1
p_walk=$(complete_pct "$tmp/nocfi.xpu" --no-unwind)
echo "nocfi: BPF walk alone ${p_walk:-0}% complete"
[ "${p_walk:-0}" -ge 95 ] || { echo "FAIL nocfi: the walk did not scan out of the leaf"; failed=1; }
"$B/xpu-report" --format=folded --no-unwind "$tmp/nocfi.xpu" 2>/dev/null |
	grep -qE '(^|;)main;outer_caller;nocfi_burn [0-9]+$' ||
	{ echo "FAIL nocfi: no main;outer_caller;nocfi_burn stack from the walk"; failed=1; }
"$B/xpu-record" --no-gpu --off-cpu -o "$tmp/nap.xpu" -- "$tmp/nocfi" 1 nap >/dev/null 2>"$tmp/err" ||
	fail "xpu-record --off-cpu (nap) failed: $(head -2 "$tmp/err")"
"$B/xpu-report" -F folded --view=off-cpu --no-unwind "$tmp/nap.xpu" 2>/dev/null |
	grep -qE '(^|;)main;outer_napper;nocfi_nap;\[off-cpu\] sleeping [0-9]+$' ||
	{ echo "FAIL nocfi nap: no main;outer_napper;nocfi_nap off-CPU stack from the walk"; failed=1; }

# a frame whose CFA only a DWARF expression gives (cfiexpr_call.S): the BPF walk stops there;
# the default mode copies those stacks (samples and off-CPU blocks), -g cfi,nocopy has none
record expr default "$tmp/nocfi" 1 expr
record expr-nocopy cfi,nocopy "$tmp/nocfi" 1 expr
p_def=$(complete_pct "$tmp/expr.xpu"); p_walk=$(complete_pct "$tmp/expr.xpu" --no-unwind)
p_nocopy=$(complete_pct "$tmp/expr-nocopy.xpu")
copies=$("$B/xpu-report" --format=info "$tmp/expr.xpu" 2>/dev/null |
	awk '$1 == "cfi_short_walk_copies" { print $2 }')
echo "expr: default ${p_def:-0}% complete (BPF walk alone ${p_walk:-0}%, ${copies:-0} copies), cfi,nocopy ${p_nocopy:-0}%"
[ "${p_def:-0}" -ge 95 ] || { echo "FAIL expr: the copies did not complete the walks"; failed=1; }
[ "${p_walk:-100}" -le 10 ] && [ "${p_nocopy:-100}" -le 10 ] ||
	{ echo "FAIL expr: the BPF walk alone should stop in cfiexpr_call"; failed=1; }
[ "${copies:-0}" -ge 200 ] || { echo "FAIL expr: only ${copies:-0} short-walk copies"; failed=1; }
# the offline unwinding steps out of the CFI-less leaf by a checked scan (libdw alone made up a
# caller from rbp there) and evaluates cfiexpr_call's CFA expression
"$B/xpu-report" --format=folded "$tmp/expr.xpu" 2>/dev/null |
	grep -qE '(^|;)main;outer_expr;cfiexpr_call;nocfi_burn [0-9]+$' ||
	{ echo "FAIL expr: no main;outer_expr;cfiexpr_call;nocfi_burn stack"; failed=1; }
"$B/xpu-report" "$tmp/expr.xpu" 2>/dev/null | grep -q "short walks unwound from stack copies" ||
	{ echo "FAIL expr: the text header does not say how the stacks were made"; failed=1; }
"$B/xpu-record" --no-gpu --off-cpu -o "$tmp/exprnap.xpu" -- "$tmp/nocfi" 1 exprnap \
	>/dev/null 2>"$tmp/err" || fail "xpu-record --off-cpu (exprnap) failed: $(head -2 "$tmp/err")"
blocks=$("$B/xpu-report" --format=info "$tmp/exprnap.xpu" 2>/dev/null |
	awk '$1 == "off_cpu_blocks" { b = $2 } $1 == "cfi_short_walk_copies" { c = $2 }
	     END { print (b ? b : 0) " " (c ? c : 0) }')
echo "expr nap: off-CPU blocks and short-walk copies: $blocks"
read -r nb nc <<<"$blocks"
[ "$nb" -ge 100 ] && [ "$nc" -ge $((nb * 9 / 10)) ] ||
	{ echo "FAIL expr nap: off-CPU blocks whose walk fell short were not copied"; failed=1; }
"$B/xpu-report" -F folded --view=off-cpu "$tmp/exprnap.xpu" 2>/dev/null |
	grep -qE '(^|;)main;outer_expr;cfiexpr_call;nocfi_nap;\[off-cpu\] sleeping [0-9]+$' ||
	{ echo "FAIL expr nap: no main;outer_expr;cfiexpr_call;nocfi_nap off-CPU stack"; failed=1; }
[ $failed = 0 ] || fail "see above"
echo "PASS $NAME"
