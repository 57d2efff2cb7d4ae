#!/bin/bash
# On the GPU machine (issue 16): PyTorch stacks unwound in BPF (-g cfi, the default mode, which
# copies the stacks of walks that fall short), against -g fp, -g dwarf,32768,32768 and
# torch.profiler (Kineto), and how fast the tables of the CUDA and PyTorch libraries build. Uses the prebuilt bundle (tests/gpu/bundle.sh), from the repo root as
# root, in about 7 minutes on the H100:
#   tests/gpu/torch_unwind.sh [OUT_DIR] [REPS]      (REPS: bench repetitions, default 7)
# Checks (exit 1 if one fails):
#  - samples/torch_train.py (60 steps) recorded with -g fp, the default (-g cfi) and
#    -g dwarf,32768,32768 (in-BPF time per event from kernel.bpf_stats_enabled, complete stacks,
#    trace bytes); with the default: >= 95% of all launches and of the main thread's launches
#    complete, >= 95% of the main thread's launch GPU time under a function of torch_train.py;
#    it prints the share of complete CPU samples (with the copies of short walks unwound, and
#    of the BPF walk alone), frames per walk, walks at the frame limit and why frames were
#    unwound by frame pointer;
#  - the same program recorded once with -g cfi,check: >= 95% of launches (matched by
#    correlation id in jsonl) have the same frames in the BPF walk (xpu-report --no-unwind)
#    as in the DWARF unwinding of the copies; tests/gpu/cfi_diag.py says where the walks that
#    fell short stopped;
#  - bench/gpu_overhead.py, interleaved (none, -g fp, -g cfi, -g dwarf,32768,32768, Kineto on
#    launch_bench and torch_bench): -g cfi's torch slowdown below Kineto's, and its trace
#    bytes per launch at most 2x -g fp's.
# Then it prints the table build figures (bench/cfi_tables.py) and a summary.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-torch-unwind}}
REPS=${2:-7}
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

# 1. the training loop with each mode, in-BPF cost from the kernel's own accounting
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
declare -A BPF_US BYTES
for mode in fp cfi dwarf,32768,32768; do
	t=$OUT/torch-$mode.xpu
	start=$SECONDS
	tool $B/xpu-record -v -g "$mode" -o "$t" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=60 \
		python3 samples/torch_train.py >"$OUT/rec-$mode.log" 2>&1 ||
		fail "record -g $mode: $(tail -3 "$OUT/rec-$mode.log")"
	tool $B/xpu-report -F info "$t" >"$OUT/info-$mode.txt" 2>&1
	ev=$(awk '$1 == "cpu_sample" || $1 == "gpu_launch" { n += $2 } END { print n + 0 }' "$OUT/info-$mode.txt")
	ns=$(awk '/bpf on_(sample|gpu_launch):/ { n += $(NF - 3) } END { print n + 0 }' "$OUT/rec-$mode.log")
	BPF_US[$mode]=$(awk -v a="$ns" -v b="$ev" 'BEGIN { printf "%.2f", b ? a / b / 1000 : 0 }')
	BYTES[$mode]=$(stat -c %s "$t" 2>/dev/null || echo 0)
	cpl=$(grep -h '^  complete' "$OUT/info-$mode.txt" | sed 's/^ *//')
	echo "== -g $mode: $((SECONDS - start))s, ${BYTES[$mode]} bytes, ${BPF_US[$mode]} us in BPF per event ($ev events); $cpl"
	say "torch_train -g $mode: ${BPF_US[$mode]} us in BPF per sample or launch, trace ${BYTES[$mode]} bytes; $cpl"
done
echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null

t=$OUT/torch-cfi.xpu
pid=$(awk '/^  target pid/ { print $3 }' "$OUT/info-cfi.txt")
tool $B/xpu-report -F info --tid="$pid" "$t" >"$OUT/info-cfi-main.txt" 2>&1
tool $B/xpu-report --no-unwind -F info "$t" >"$OUT/info-cfi-walk.txt" 2>&1
tool $B/xpu-report -F folded --view=gpu --weight=time --tid="$pid" "$t" \
	>"$OUT/main-gpu.folded" 2>/dev/null
grep -E '^  (complete|gpu_launch |py_stacks|cfi_|dwarf )' "$OUT/info-cfi.txt"
# "complete  C of N cpu samples (P%), L of M gpu launches (Q%)"
read -r sc st lc lt < <(awk '$1 == "complete" { print $2, $4, $8, $10 }' "$OUT/info-cfi.txt")
read -r mc mt < <(awk '$1 == "complete" { print $8, $10 }' "$OUT/info-cfi-main.txt")
read -r wc wt < <(awk '$1 == "complete" { print $2, $4 }' "$OUT/info-cfi-walk.txt")
all_pct=$(pct "${lc:-0}" "${lt:-0}")
cpu_pct=$(pct "${sc:-0}" "${st:-0}")
main_pct=$(pct "${mc:-0}" "${mt:-0}")
py_pct=$(awk '{ w = $NF; all += w; if (/\(torch_train\.py\)/) py += w }
	END { printf "%.1f", all ? 100 * py / all : 0 }' "$OUT/main-gpu.folded")
cfi() { awk -v k="cfi_$1" '$1 == k { print $2 }' "$OUT/info-cfi.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'; }
walks=$(cfi walks)
say "-g cfi: ${all_pct}% of ${lt:-0} launches complete, main thread ${main_pct}% of ${mt:-0}; ${py_pct}% of main-thread launch GPU time under torch_train.py; ${cpu_pct}% of ${st:-0} CPU samples complete ($(pct "${wc:-0}" "${wt:-0}")% by the BPF walk alone, $(cfi short_walk_copies) short-walk copies)"
say "-g cfi walks: $(ratio "$(cfi frames)" "$walks") frames per walk, ${walks:-0} walks, $(cfi end_frame_limit) at the frame limit; fp steps: $(cfi fp_table_not_loaded) table not loaded, $(cfi fp_no_fde) no FDE, $(cfi fp_unsupported_rule) rule not evaluated, $(cfi fp_no_mapping) no mapping; tables $(cfi files) files, $(cfi table_bytes) bytes"
say "trace bytes: cfi/fp $(ratio "${BYTES[cfi]}" "${BYTES[fp]}"), dwarf/fp $(ratio "${BYTES[dwarf,32768,32768]}" "${BYTES[fp]}")"
awk -v p="$all_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${all_pct}% of launches complete with -g cfi"
awk -v p="$main_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${main_pct}% of main-thread launches complete"
awk -v p="$py_pct" 'BEGIN { exit !(p >= 95) }' || fail "only ${py_pct}% of main-thread launch GPU time under torch_train.py"
echo "== top main-thread GPU stacks:"
awk '{ print $NF, $0 }' "$OUT/main-gpu.folded" | sort -rn | head -3 | cut -c1-600

# 2. the BPF walk against the DWARF unwinding of the copies taken at the same launches, launch
# by launch (jsonl: pid and correlation id), not through folded weights
t=$OUT/torch-check.xpu
tool $B/xpu-record -g cfi,check -F 99 --ringbuf-mb=64 -o "$t" -- env -u LD_LIBRARY_PATH \
	XPU_TORCH_STEPS=10 python3 samples/torch_train.py >"$OUT/rec-check.log" 2>&1 ||
	fail "record -g cfi,check: $(tail -3 "$OUT/rec-check.log")"
tool $B/xpu-report --no-unwind -F jsonl "$t" >"$OUT/check-cfi.jsonl" 2>"$OUT/check-cfi.err" &
tool $B/xpu-report -F jsonl "$t" >"$OUT/check-dwarf.jsonl" 2>"$OUT/check-dwarf.err"
wait
same=$(python3 - "$OUT/check-dwarf.jsonl" "$OUT/check-cfi.jsonl" <<'EOF'
import json, sys
def load(f):
    d = {}
    for l in open(f):
        try:
            e = json.loads(l)
        except ValueError:
            continue
        if e.get("type") == "launch":
            d[(e.get("pid"), e.get("correlation_id"))] = e.get("frames") or []
    return d
# the same frames, or a BPF walk that goes on past where the copy ended (frames are root
# first: the DWARF stack is then a suffix of the BPF one)
dw, cfi = load(sys.argv[1]), load(sys.argv[2])
same = sum(1 for k, f in dw.items() if f and k in cfi and cfi[k][-len(f):] == f)
print(f"{100 * same / len(dw) if dw else 0:.1f} {len(dw)} {len(cfi)}")
EOF
)
read -r same_pct same_n cfi_n <<<"$same"
say "-g cfi,check: ${same_pct:-0}% of ${same_n:-0} launches (${cfi_n:-0} in the BPF walk's view) have the DWARF unwinding's frames in the BPF walk"
python3 tests/gpu/cfi_diag.py "$OUT/check-cfi.jsonl" "$OUT/check-dwarf.jsonl" >"$OUT/diag.txt" 2>&1
sed -n 1,20p "$OUT/diag.txt" | cut -c1-200
[ "${same_n:-0}" -gt 0 ] || fail "-g cfi,check: no launch stacks read ($(head -c 300 "$OUT/check-dwarf.err"))"
awk -v p="${same_pct:-0}" 'BEGIN { exit !(p >= 95) }' || fail "BPF walk and DWARF differ: only ${same_pct:-0}% the same"

# 3. cost, interleaved: no profiling, -g fp, -g cfi, -g dwarf,32768,32768, Kineto
echo "== bench/gpu_overhead.py --reps $REPS"
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --launches 20000 --steps 40 \
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
	xargs -r realpath 2>/dev/null | awk '!seen[$0]++' | xargs -r ls -LS 2>/dev/null | head -8)
echo "== bench/cfi_tables.py on ${#libs[@]} files"
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/cfi_tables.py --reps 1 --no-write "${libs[@]}" \
	>"$OUT/tables.md" 2>/dev/null || fail "cfi_tables.py"
cat "$OUT/tables.md"
say "tables: $(tail -2 "$OUT/tables.md" | tr -d '\n')"

echo "== summary (${SECONDS}s in all)"
printf '  %s\n' "${SUMMARY[@]}"
exit $rc
