#!/bin/bash
# -g cfi (user stacks unwound in BPF with .eh_frame tables) on stripped Debian binaries (xz,
# sort, python3.11) and the frame-pointer-less tests/e2e/dwarf program, each recorded once with
# -g cfi,check: the BPF walk's stacks (xpu-report --no-unwind) must be complete for >= 95% of
# samples and hold the frames of the DWARF unwinding of the copies taken at the same samples
# (the same stack, or one that continues where the copy ended) for >= 95% of them; a -g cfi trace costs at most twice the bytes per sample of -g fp.
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
		-Wl,-rpath,"$tmp" || fail "building tests/e2e/dwarf"

PY='
def f(n):
    return sum(i * i for i in range(n))
import time
t = time.time()
while time.time() - t < 1.5:
    f(20000)
'
record() {	# name mode command...
	local name=$1 mode=$2; shift 2
	"$B/xpu-record" --no-gpu -g "$mode" -o "$tmp/$name.xpu" -- "$@" >/dev/null 2>"$tmp/err"
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
	[ "${pct:-0}" -ge 95 ] || { echo "FAIL $name: only ${pct:-0}% complete"; failed=1; }
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

# trace bytes per sample: -g cfi against -g fp on the same program
for mode in cfi fp; do
	record "size-$mode" $mode "$tmp/dwchain" 1.5
	"$B/xpu-report" --format=info "$tmp/size-$mode.xpu" >"$tmp/size-$mode.info" 2>&1
done
read -r bc bf < <(for mode in cfi fp; do
	awk -v f="$(stat -c %s "$tmp/size-$mode.xpu")" '$1 == "samples" { printf "%d ", f / $2 }' \
		"$tmp/size-$mode.info"; done)
echo "bytes per sample: cfi $bc, fp $bf"
[ -n "$bc" ] && [ -n "$bf" ] && [ "$bc" -le $((2 * bf)) ] ||
	{ echo "FAIL cfi trace bytes per sample $bc > 2 x fp's $bf"; failed=1; }
[ $failed = 0 ] || fail "see above"
echo "PASS $NAME"
