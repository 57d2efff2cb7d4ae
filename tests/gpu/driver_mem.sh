#!/bin/bash
# On the GPU machine (issue 15): --driver and GPU memory on samples/cuda_pipeline and
# samples/torch_train.py, with the prebuilt bundle (tests/gpu/bundle.sh), as root from the
# repo root:
#   tests/gpu/driver_mem.sh [OUT_DIR] [REPS]
# Prints the ioctl counts per request and per CUDA API call and the memory sections of each
# text report; fails when a recording has no ioctls, no memory records, allocations without a
# launch stack, or (PyTorch) no bytes of the memory view's peak under a Python frame of
# torch_train.py; then runs bench/driver_overhead.py on both (REPS >= 7, default 7).
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-driver-mem}}
REPS=${2:-7}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$OUT"
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0
echo "== kernel $(uname -r); nvidia BTF: $(ls /sys/kernel/btf 2>/dev/null | grep -i nvidia | tr '\n' ' ')"

one() {
	local name=$1 t=$OUT/$1.xpu
	shift
	tool $B/xpu-record -v --driver -o "$t" -- "$@" >"$OUT/$name.rec.log" 2>&1 ||
		{ echo "FAIL: $name: record: $(tail -3 "$OUT/$name.rec.log")"; rc=1; return; }
	grep -- '--driver' "$OUT/$name.rec.log"
	tool $B/xpu-report -F info "$t" >"$OUT/$name.info" 2>&1
	tool $B/xpu-report "$t" >"$OUT/$name.txt" 2>&1
	echo "== $name: $(awk '$1 == "driver_ioctl" || $1 == "gpu_memory" || $1 == "gpu_launch"' "$OUT/$name.info" | tr -s ' ' | tr '\n' ';')"
	sed -n '/^# gpu memory/,$p' "$OUT/$name.txt"
	grep -q '^  driver_ioctl ' "$OUT/$name.info" || { echo "FAIL: $name: no ioctls recorded"; rc=1; }
	grep -q '^  gpu_memory ' "$OUT/$name.info" || { echo "FAIL: $name: no memory records"; rc=1; }
	if grep -A20 'allocating call paths' "$OUT/$name.txt" | grep -q '(no launch stack)'; then
		echo "FAIL: $name: allocations without their launch stack"; rc=1
	fi
	tool $B/xpu-report -F folded --view=memory "$t" >"$OUT/$name.memory.folded" 2>/dev/null
	echo "== $name: memory view (bytes held at the peak, by allocating stack), heaviest 5:"
	awk '{ n = split($0, f, ";"); print $NF "  ... " f[n-2] ";" f[n-1] }' "$OUT/$name.memory.folded" |
		sort -rn | head -5 | sed 's/^/  /'
	if [ -n "$PYFILE" ]; then
		awk -v f="($PYFILE)" '{ w = $NF; t += w; if (index($0, f)) p += w }
			END { printf "== %s: %d of %d peak bytes (%.1f%%) under a frame of %s\n", n, p, t, t ? 100 * p / t : 0, f
			      exit !(p > 0) }' n="$name" "$OUT/$name.memory.folded" ||
			{ echo "FAIL: $name: no allocation of the peak reaches a Python frame of $PYFILE"; rc=1; }
	fi
}

PYFILE= one cuda_pipeline $B/samples/cuda_pipeline
PYFILE=torch_train.py one torch_train env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100 python3 samples/torch_train.py
echo "== cost (bench/driver_overhead.py, $REPS interleaved runs)"
LD_LIBRARY_PATH="$LIB" python3 bench/driver_overhead.py --build $B --reps "$REPS" -- \
	$B/samples/cuda_pipeline || rc=1
LD_LIBRARY_PATH="$LIB" python3 bench/driver_overhead.py --build $B --reps "$REPS" -- \
	env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100 python3 samples/torch_train.py || rc=1
exit $rc
