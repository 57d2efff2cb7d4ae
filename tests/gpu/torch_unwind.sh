#!/bin/bash
# On the GPU machine (issue 16): PyTorch launch stacks unwound in BPF (-g cfi), what it costs
# against -g fp, -g dwarf,32768,32768 and torch.profiler (Kineto), and how fast the tables of
# the CUDA and PyTorch libraries build. Uses the prebuilt bundle (tests/gpu/bundle.sh), from
# the repo root as root, within 9 minutes on the H100:
#   tests/gpu/torch_unwind.sh [OUT_DIR] [REPS]      (REPS: bench repetitions, default 5)
# Checks (exit 1 if one fails):
#  - samples/torch_train.py (100 steps) recorded with -g cfi: >= 95% of all launches and of the
#    main thread's launches complete, >= 95% of the main thread's launch GPU time under a
#    function of torch_train.py;
#  - the same program recorded once with -g cfi,check: >= 95% of launches have the same
#    frames in the BPF walk (xpu-report --no-unwind) as in the DWARF unwinding of the copies;
#  - bench/gpu_overhead.py, interleaved: -g cfi's torch slowdown below Kineto's, and its trace
#    bytes per launch at most 2x -g fp's.
# Then it prints the table build figures (bench/cfi_tables.py) and a summary.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-torch-unwind}}
REPS=${2:-5}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$OUT"
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0
declare -a SUMMARY
say() { SUMMARY+=("$*"); }
fail() { echo "FAIL: $*"; say "FAIL: $*"; rc=1; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

echo "== $(python3 -V 2>&1), $(python3 -c 'import torch; print("torch", torch.__version__)' 2>&1)"

# 1. -g cfi on the training loop
t=$OUT/torch-cfi.xpu
SECONDS=0
tool $B/xpu-record -v -g cfi -o "$t" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100 \
	python3 samples/torch_train.py >"$OUT/rec-cfi.log" 2>&1 ||
	fail "record -g cfi: $(tail -3 "$OUT/rec-cfi.log")"
echo "== -g cfi recording: ${SECONDS}s, $(stat -c %s "$t" 2>/dev/null) bytes; $(grep 'start held' "$OUT/rec-cfi.log")"
tool $B/xpu-report -F info "$t" >"$OUT/info-cfi.txt" 2>&1
pid=$(awk '/^  target pid/ { print $3 }' "$OUT/info-cfi.txt")
tool $B/xpu-report -F info --tid="$pid" "$t" >"$OUT/info-cfi-main.txt" 2>&1
tool $B/xpu-report -F folded --view=gpu --weight=time --tid="$pid" "$t" >"$OUT/main-gpu.folded" 2>/dev/null
grep -E '^  (complete|gpu_launch |py_stacks|cfi_)' "$OUT/info-cfi.txt"
read -r lc lt < <(awk '$1 == "complete" { print $7, $9 }' "$OUT/info-cfi.txt")
read -r mc mt < <(awk '$1 == "complete" { print $7, $9 }' "$OUT/info-cfi-main.txt")
all_pct=$(pct "${lc:-0}" "${lt:-0}")
main_pct=$(pct "${mc:-0}" "${mt:-0}")
py_pct=$(awk '{ w = $NF; all += w; if (/\(torch_train\.py\)/) py += w }
	END { printf "%.1f", all ? 100 * py / all : 0 }' "$OUT/main-gpu.folded")
say "-g cfi: ${all_pct}% of ${lt:-0} launches complete, main thread ${main_pct}% of ${mt:-0}; ${py_pct}% of main-thread launch GPU time under torch_train.py"
awk -v p="$all_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${all_pct}% of launches complete with -g cfi"
awk -v p="$main_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${main_pct}% of main-thread launches complete"
awk -v p="$py_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${py_pct}% of main-thread launch GPU time under torch_train.py"
echo "== top main-thread GPU stacks:"
awk '{ print $NF, $0 }' "$OUT/main-gpu.folded" | sort -rn | head -3 | cut -c1-600

# 2. the BPF walk against the DWARF unwinding of copies taken at the same launches
t=$OUT/torch-check.xpu
tool $B/xpu-record -g cfi,check -F 99 --ringbuf-mb=64 -o "$t" -- env -u LD_LIBRARY_PATH \
	XPU_TORCH_STEPS=10 python3 samples/torch_train.py >"$OUT/rec-check.log" 2>&1 ||
	fail "record -g cfi,check: $(tail -3 "$OUT/rec-check.log")"
tool $B/xpu-report --no-unwind -F folded --view=gpu "$t" >"$OUT/check.cfi" 2>/dev/null &
tool $B/xpu-report -F folded --view=gpu "$t" >"$OUT/check.dwarf" 2>/dev/null
wait
same=$(python3 - "$OUT/check.dwarf" "$OUT/check.cfi" <<'EOF'
import sys
def load(f):
    d = {}
    for l in open(f):
        k, _, v = l.rstrip("\n").rpartition(" ")
        if k:
            d[k] = d.get(k, 0) + int(v)
    return d
# the same stack, or a BPF-walk stack that goes on past where the copy ended (root first:
# the DWARF stack without its comm is then a suffix)
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
print(f"{100 * same / tot if tot else 0:.1f} {tot}")
EOF
)
say "-g cfi,check: ${same% *}% of ${same#* } launch-weighted GPU stacks have the DWARF unwinding's frames in the BPF walk"
awk -v p="${same% *}" 'BEGIN { exit !(p >= 95) }' || fail "BPF walk and DWARF differ: only ${same% *}% the same"

# 3. cost, interleaved: no profiling, -g fp, -g cfi, -g dwarf,32768,32768, Kineto
echo "== bench/gpu_overhead.py --reps $REPS"
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --launches 50000 --steps 100 \
	--modes 'fp;cfi;dwarf,32768,32768' --out "$OUT" >"$OUT/bench.txt" 2>&1 || fail "gpu_overhead.py"
cat "$OUT/gpu_bench.md" 2>/dev/null || tail -20 "$OUT/bench.txt"
med() {	# workload profiler column: the median of that cell
	awk -F'|' -v w="$1" -v p="$2" -v c="$3" '$2 ~ w && $3 ~ p { v = $c; sub(/^ */, "", v);
		sub(/[% ].*/, "", v); print v; exit }' "$OUT/gpu_bench.md" 2>/dev/null
}
cfi_s=$(med torch_bench "-g cfi" 4); kin_s=$(med torch_bench Kineto 4)
cfi_b=$(med torch_bench "-g cfi" 9); fp_b=$(med torch_bench "-g fp " 9)
say "torch_bench slowdown: -g cfi ${cfi_s:-?}%, Kineto ${kin_s:-?}%; bytes/launch: -g cfi ${cfi_b:-?}, -g fp ${fp_b:-?}"
awk -v a="${cfi_s:-x}" -v b="${kin_s:-x}" 'BEGIN { exit !(a != "x" && b != "x" && a + 0 < b + 0) }' ||
	fail "-g cfi slowdown ${cfi_s:-?}% not below Kineto's ${kin_s:-?}%"
awk -v a="${cfi_b:-x}" -v b="${fp_b:-x}" 'BEGIN { exit !(a != "x" && b != "x" && a + 0 <= 2 * b) }' ||
	fail "-g cfi trace ${cfi_b:-?} bytes/launch over 2x -g fp's ${fp_b:-?}"

# 4. table build time and memory for the CUDA and PyTorch libraries
tdir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
mapfile -t libs < <( { [ -n "$tdir" ] && find "$tdir/lib" "$tdir/../nvidia" -name 'lib*.so*' 2>/dev/null
	find /usr/local/cuda*/lib64/ -maxdepth 1 -name 'lib*.so*' 2>/dev/null; } |
	grep -E 'libtorch_cuda|libtorch_cpu|libtorch_python|libc10|libcublas|libcudnn|libnccl|libcupti|libcudart|libcusparse|libcufft' |
	xargs -r ls -LS 2>/dev/null | awk '!seen[$0]++' | head -14)
echo "== bench/cfi_tables.py on ${#libs[@]} files"
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/cfi_tables.py --reps 3 --no-write "${libs[@]}" \
	>"$OUT/tables.md" 2>/dev/null || fail "cfi_tables.py"
cat "$OUT/tables.md"
say "tables: $(tail -2 "$OUT/tables.md" | tr -d '\n')"

echo "== summary (${SECONDS}s in all)"
printf '  %s\n' "${SUMMARY[@]}"
exit $rc
