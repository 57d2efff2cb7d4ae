#!/bin/bash
# On the GPU machine (issue 5's PyTorch check): how complete PyTorch launch stacks are with
# -g dwarf at several copy sizes, and why the other walks end. Uses the prebuilt bundle
# (tests/gpu/bundle.sh), run from the repo root as root:
#   tests/gpu/torch_dwarf.sh [OUT_DIR] [SIZES...]  (default: 8192 32768 65536 32768,32768;
#   SIZE,TOP records with -g dwarf,SIZE,TOP, the window below the stack top)
# Per size it prints the trace bytes per launch, the complete-stack rates (all threads, and the
# main thread alone, where launches come from Python code), the share of main-thread launch
# time whose stack holds the Python interpreter (_PyEval_EvalFrameDefault) and main, and the
# top `dwarf stops` from `xpu-report --format=info`. Exit status: 1 when a step failed, or when
# at 32 KiB or more under 95% of the main thread's launch time outside cuDNN/cuBLASLt has a
# stack from main through _PyEval_EvalFrameDefault (measured: 100%).
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-torch-dwarf}}
shift || true
SIZES=${*:-8192 32768 65536 32768,32768}
B=.device/bundle/build
LIB=.device/bundle/lib
STEPS=${XPU_TORCH_STEPS:-20}
mkdir -p "$OUT"
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0

py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)
echo "== python: $py ($(python3 -V 2>&1)); sections:"
readelf -SW "$py" 2>/dev/null | awk '/eh_frame|debug_frame|symtab/ { print "  " $2, $6 }'
ldd "$py" 2>/dev/null | grep -i python | sed 's/^/  /'

for sz in $SIZES; do
	n=${sz//,/-}	# file names: dwarf,SIZE,TOP as SIZE-TOP
	t=$OUT/torch-$n.xpu
	tool $B/xpu-record -g dwarf,"$sz" -F 99 --ringbuf-mb=64 -o "$t" -- \
		env -u LD_LIBRARY_PATH XPU_TORCH_STEPS="$STEPS" python3 samples/torch_train.py \
		>"$OUT/rec-$n.log" 2>&1 || { echo "FAIL: record $sz: $(tail -2 "$OUT/rec-$n.log")"; rc=1; }
done
# the reports (libdw over libtorch's CFI) run in parallel, one per size
for sz in $SIZES; do
	n=${sz//,/-}	# file names: dwarf,SIZE,TOP as SIZE-TOP
	(
		t=$OUT/torch-$n.xpu
		tool $B/xpu-report -F info "$t" >"$OUT/info-$n.txt" 2>/dev/null
		pid=$(awk '/^  target pid/ { print $3 }' "$OUT/info-$n.txt")
		tool $B/xpu-report -F info --tid="$pid" "$t" >"$OUT/info-main-$n.txt" 2>/dev/null
		tool $B/xpu-report -F folded --view=gpu --weight=time --tid="$pid" "$t" \
			>"$OUT/main-$n.folded" 2>/dev/null
	) &
done
wait

for sz in $SIZES; do
	n=${sz//,/-}	# file names: dwarf,SIZE,TOP as SIZE-TOP
	t=$OUT/torch-$n.xpu
	launches=$(awk '/^  gpu_launch / { print $2 }' "$OUT/info-$n.txt")
	bytes=$(stat -c %s "$t" 2>/dev/null || echo 0)
	echo "== -g dwarf,$sz: $bytes bytes, ${launches:-0} launches," \
		"$(( bytes / (${launches:-0} > 0 ? launches : 1) )) bytes per launch (CPU samples included)"
	grep -E '^  (complete|dwarf) ' "$OUT/info-$n.txt" | sed 's/^/  all threads: /'
	grep -E '^  complete ' "$OUT/info-main-$n.txt" | sed 's/^/  main thread: /'
	awk '{ w = $NF; all += w; if (/;_PyEval_EvalFrameDefault;/) py += w
		if (/^[^;]*;(_start|__libc_start_main|__libc_start_call_main|main);/) root += w
		if (/;_PyEval_EvalFrameDefault;/ && /^[^;]*;(_start|__libc_start_main|__libc_start_call_main|main);/) both += w }
		END { if (all) printf "  main thread launch time: %.1f%% under the interpreter, %.1f%% from main, %.1f%% both\n",
			100 * py / all, 100 * root / all, 100 * both / all }' "$OUT/main-$n.folded"
	# issue 5's check: outside cuDNN/cuBLASLt (whose own stack outgrows any copy), every
	# main-thread launch reaches main through the interpreter once the copy is 32 KiB
	other=$(awk '!/cudnn|cublasLt/ { w = $NF; all += w
		if (/;_PyEval_EvalFrameDefault;/ && /^[^;]*;(_start|__libc_start_main|__libc_start_call_main|main);/) both += w }
		END { printf "%d", all ? 100 * both / all : 0 }' "$OUT/main-$n.folded")
	echo "  main thread launch time outside cuDNN/cuBLASLt: $other% from main through the interpreter"
	awk '/cudnn|cublasLt/ { w = $NF; all += w
		if (/;_PyEval_EvalFrameDefault;/ && /^[^;]*;(_start|__libc_start_main|__libc_start_call_main|main);/) both += w }
		END { if (all) printf "  main thread launch time inside cuDNN/cuBLASLt: %.1f%% from main through the interpreter\n", 100 * both / all }' \
		"$OUT/main-$n.folded"
	if [ "${sz%%,*}" -ge 32768 ] && [ "${other:-0}" -lt 95 ]; then
		echo "FAIL: -g dwarf,$sz: only $other% of main-thread launch time outside cuDNN/cuBLASLt reaches main"
		rc=1
	fi
	sed -n '/^  dwarf stops/,/^dsos/p' "$OUT/info-$n.txt" | grep -v '^dsos' | sed 's/^/  /'
	grep -A8 '^lost' "$OUT/info-$n.txt" | grep -v '(none)' | head -4 | sed 's/^/  /'
done
# one main-thread stack, as a sample of what the folded output shows
echo "== heaviest main-thread launch stack (largest size):"
last=${SIZES##* }
last=${last//,/-}
awk '$NF + 0 > max { max = $NF + 0; line = $0 } END { print line }' "$OUT/main-$last.folded" \
	2>/dev/null | tr ';' '\n' | head -60 | sed 's/^/  /'
exit $rc
