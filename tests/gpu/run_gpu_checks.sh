#!/bin/bash
# GPU checks, run as root on the GPU machine from the repo root:
#   tests/gpu/run_gpu_checks.sh [OUT_DIR]          (OUT_DIR defaults to $OUT, else /tmp/xpu-gpu)
# Uses the prebuilt .device/bundle from tests/gpu/bundle.sh when present (no compiler or -dev
# packages needed there); otherwise, with a toolchain, builds with make. Records each sample with
# xpu-record, runs xpu-report in every format, checks the traces with check_trace, copies traces
# and reports into OUT_DIR and prints a summary. Exit status: number of failed checks (max 100).
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${1:-${OUT:-/tmp/xpu-gpu}}
mkdir -p "$OUT"
BUNDLE=${XPU_BUNDLE:-$ROOT/.device/bundle}
FAILS=0
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

say() { echo "== $*" | tee -a "$SUMMARY"; }
fail() { echo "FAIL: $*" | tee -a "$SUMMARY"; FAILS=$((FAILS + 1)); }

if [ -x "$BUNDLE/build/xpu-record" ]; then
	B=$BUNDLE/build
	LIB=$BUNDLE/lib
	LIBCUDA=$BUNDLE/lib-cuda
elif [ "${XPU_PREBUILT:-0}" = 1 ] && [ -x build/xpu-record ]; then
	B=$ROOT/build; LIB=; LIBCUDA=
else
	make -j"$(nproc)" all >/dev/null && tests/gpu/bundle.sh "$BUNDLE" >/dev/null || {
		echo "build failed and no bundle at $BUNDLE" >&2; exit 100; }
	B=$BUNDLE/build; LIB=$BUNDLE/lib; LIBCUDA=$BUNDLE/lib-cuda
fi
# Tools see the bundled libraries; targets get a clean environment (see `tgt`) so PyTorch
# keeps loading its own CUDA libraries.
tool() { LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
# NVTX finds CUPTI through our library (InitializeInjectionNvtx2 forwards to libcupti).
tgt() { env -u LD_LIBRARY_PATH NVTX_INJECTION64_PATH="$B/libxpu-cupti.so" "$@"; }

# Launch stacks pass through libcudart, libcuda and libcupti, which have no frame pointers:
# only DWARF unwinding reaches the launching function (XPU_RECORD_ARGS= for frame pointers).
REC_ARGS=${XPU_RECORD_ARGS--g dwarf}
say "xpu-record options: ${REC_ARGS:-(defaults)}"
say "machine: $(uname -r), $(nvidia-smi -L 2>/dev/null | head -1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
say "tools: $B ($(tool "$B/xpu-record" -V 2>&1 | head -1))"

# report NAME: every output format of xpu-report, all must succeed
report() {
	local t=$OUT/$1.xpu
	tool "$B/xpu-report" -F info "$t" > "$OUT/$1.info.txt" 2>&1 || fail "$1: xpu-report -F info"
	tool "$B/xpu-report" "$t" > "$OUT/$1.report.txt" 2>&1 || fail "$1: xpu-report text"
	tool "$B/xpu-report" -F folded "$t" > "$OUT/$1.folded" 2>"$OUT/$1.folded.err" ||
		fail "$1: xpu-report -F folded"
	tool "$B/xpu-report" -F folded --view=gpu --weight=time "$t" > "$OUT/$1.gpu.folded" \
		2>"$OUT/$1.gpu.folded.err" || fail "$1: xpu-report -F folded --view=gpu"
	if tool "$B/xpu-report" --help 2>&1 | grep -q chrome; then
		tool "$B/xpu-report" -F chrome "$t" > "$OUT/$1.json" 2>"$OUT/$1.json.err" ||
			fail "$1: xpu-report -F chrome"
		python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$OUT/$1.json" 2>/dev/null ||
			fail "$1: chrome output is not valid JSON"
	fi
}

# check NAME ARGS...: check_trace with its output in the summary
check() {
	local name=$1; shift
	tool "$B/tests/gpu/check_trace" "$OUT/$name.xpu" "$@" > "$OUT/$name.check.txt" 2>&1
	local rc=$?
	sed "s/^/  [$name] /" "$OUT/$name.check.txt" | tee -a "$SUMMARY"
	[ $rc = 0 ] || fail "$name: check_trace"
}

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }'; }

# ---- 1. CUDA pipeline, graphs as nodes (the default) -------------------------------------
say "cuda_pipeline: baseline run without recording"
t0=$(date +%s.%N)
tgt env LD_LIBRARY_PATH="$LIBCUDA" "$B/samples/cuda_pipeline" > "$OUT/pipeline.expect" 2>&1 ||
	fail "cuda_pipeline does not run by itself: $(tail -1 "$OUT/pipeline.expect")"
say "  took $(elapsed "$t0") s"

say "cuda_pipeline: recording"
t0=$(date +%s.%N)
tool "$B/xpu-record" $REC_ARGS -o "$OUT/pipeline.xpu" -- \
	env -u LD_LIBRARY_PATH NVTX_INJECTION64_PATH="$B/libxpu-cupti.so" XPU_CUPTI_VERBOSE=1 \
	LD_LIBRARY_PATH="$LIBCUDA" "$B/samples/cuda_pipeline" > "$OUT/pipeline.stdout" \
	2> "$OUT/pipeline.stderr" || fail "xpu-record of cuda_pipeline exited $?"
say "  took $(elapsed "$t0") s; stderr: $(grep -c . "$OUT/pipeline.stderr") lines"
grep 'xpu-cupti' "$OUT/pipeline.stderr" | head -5 | sed 's/^/  /' | tee -a "$SUMMARY"
if [ -s "$OUT/pipeline.xpu" ]; then
	report pipeline
	check pipeline --expect "$OUT/pipeline.stdout" --folded "$OUT/pipeline.gpu.folded"
else
	fail "no pipeline.xpu"
fi

# ---- 2. CUDA pipeline, XPU_CUDA_GRAPHS=graph ----------------------------------------------
say "cuda_pipeline: recording with XPU_CUDA_GRAPHS=graph"
tool "$B/xpu-record" $REC_ARGS --cuda-graphs=graph -o "$OUT/pipeline-graph.xpu" -- \
	env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$LIBCUDA" "$B/samples/cuda_pipeline" \
	> "$OUT/pipeline-graph.stdout" 2> "$OUT/pipeline-graph.stderr" ||
	fail "xpu-record of cuda_pipeline (graph mode) exited $?"
if [ -s "$OUT/pipeline-graph.xpu" ]; then
	# graph launches become one "cudaGraph#N" record each; the direct kernels are unchanged
	grep -v graph_kernel "$OUT/pipeline-graph.stdout" > "$OUT/pipeline-graph.expect"
	echo "expect graph_kernel cudaGraph# 5 run_graph" >> "$OUT/pipeline-graph.expect"
	report pipeline-graph
	check pipeline-graph --expect "$OUT/pipeline-graph.expect"
fi

# ---- 3. PyTorch --------------------------------------------------------------------------
PY=${PYTHON:-python3}
if tgt "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
	say "torch: $(tgt "$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)')"
	t0=$(date +%s.%N)
	tgt "$PY" samples/torch_train.py > "$OUT/torch-baseline.stdout" 2>&1 ||
		fail "torch_train.py does not run by itself"
	say "  baseline $(elapsed "$t0") s: $(grep final "$OUT/torch-baseline.stdout")"
	t0=$(date +%s.%N)
	tool "$B/xpu-record" $REC_ARGS -o "$OUT/torch.xpu" -- \
		env -u LD_LIBRARY_PATH NVTX_INJECTION64_PATH="$B/libxpu-cupti.so" XPU_CUPTI_VERBOSE=1 \
		"$PY" samples/torch_train.py > "$OUT/torch.stdout" 2> "$OUT/torch.stderr" ||
		fail "xpu-record of torch_train.py exited $?"
	say "  recorded $(elapsed "$t0") s: $(grep final "$OUT/torch.stdout")"
	grep 'xpu-cupti' "$OUT/torch.stderr" | head -5 | sed 's/^/  /' | tee -a "$SUMMARY"
	if [ -s "$OUT/torch.xpu" ]; then
		report torch
		# PyTorch launches through cudaLaunchKernel, cuLaunchKernel(Ex) and cuBLAS: all must match
		check torch --min-match "${XPU_TORCH_MIN_MATCH:-99}"
		say "  top GPU stacks:"
		sort -t' ' -k2 -nr "$OUT/torch.gpu.folded" 2>/dev/null | head -5 | cut -c1-300 |
			sed 's/^/    /' | tee -a "$SUMMARY"
	else
		fail "no torch.xpu"
	fi
else
	say "torch: not importable with CUDA by $PY: skipped (set PYTHON=...)"
fi

# ---- a short PyTorch recording, small enough to commit as a golden trace ----------------
if tgt "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
	# frame pointers and 99 Hz keep this trace small enough to commit (DWARF copies: ~6 MB)
	tool "$B/xpu-record" -g fp -F 99 -o "$OUT/torch-small.xpu" -- \
		env -u LD_LIBRARY_PATH NVTX_INJECTION64_PATH="$B/libxpu-cupti.so" \
		XPU_TORCH_STEPS=20 "$PY" samples/torch_train.py > "$OUT/torch-small.stdout" \
		2> "$OUT/torch-small.stderr" || fail "xpu-record of a short torch run exited $?"
fi
for t in pipeline torch torch-small; do
	[ -s "$OUT/$t.xpu" ] || continue
	say "$t: $(tool "$B/xpu-report" -F info "$OUT/$t.xpu" 2>/dev/null | grep -iE 'complete' | tr -s ' ' | tr '\n' ';')"
done

# archives of what the pipeline traces' stacks touch, so they symbolize on any machine
for t in pipeline pipeline-graph; do
	[ -s "$OUT/$t.xpu" ] && { tool "$B/xpu-report" archive "$OUT/$t.xpu" >/dev/null 2>&1 ||
		fail "xpu-report archive $t.xpu"; }
done

# ---- traces small enough to commit under samples/traces/ ----------------------------------
ls -la "$OUT"/*.xpu "$OUT"/*.xpa 2>/dev/null | awk '{print "  " $5 " " $9}' | tee -a "$SUMMARY"
say "result: $FAILS failure(s); outputs in $OUT"
# The device tool brings back at most 8 files: keep the summary and the small traces loose and
# pack every other output into one archive.
if [ "${XPU_PACK_OUTPUTS:-1}" = 1 ]; then
	# traces too large to bring back (the full PyTorch run) stay on the machine
	find "$OUT" -maxdepth 1 -name '*.xpu' -size +8M -delete
	(cd "$OUT" && find . -maxdepth 1 -type f ! -name summary.txt ! -name 'outputs.tar.gz' \
		! -name 'pipeline*.xpu*' ! -name 'torch-small.xpu' -printf '%P\n' | tar czf outputs.tar.gz -T - &&
		find . -maxdepth 1 -type f ! -name summary.txt ! -name 'outputs.tar.gz' \
			! -name 'pipeline*.xpu*' ! -name 'torch-small.xpu' -delete)
fi
[ $FAILS -lt 100 ] || FAILS=100
exit $FAILS
