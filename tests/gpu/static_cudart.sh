#!/bin/bash
# On the GPU machine: samples/cuda_pipeline.cu linked as nvcc links by default (cudart static,
# inside the executable: build/samples/cuda_pipeline_static), recorded with the default options
# and archived, for the golden test of launch sites found by symbol (samples/traces/
# pipeline-static.xpu and its .xpa). From the repo root as root, with the bundle:
#   tests/gpu/static_cudart.sh [OUT_DIR]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-static}}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
t=$O/pipeline-static.xpu
# run from the bundle's samples dir so the trace's command reads "cuda_pipeline_static"
(cd $B/samples && LD_LIBRARY_PATH="$PWD/../../lib" ../xpu-record -o "$t" -- ./cuda_pipeline_static) \
	>"$O/rec.out" 2>"$O/rec.err" || { tail -3 "$O/rec.err"; exit 1; }
tail -1 "$O/rec.err"
LD_LIBRARY_PATH="$LIB" $B/xpu-report archive "$t" 2>&1 | tail -2
LD_LIBRARY_PATH="$LIB" $B/xpu-report "$t" 2>/dev/null | sed -n '/^# top gpu launch sites/,/^# [a-z]/p' | head -14
LD_LIBRARY_PATH="$LIB" $B/xpu-report -F info "$t" 2>/dev/null | grep -E '^  (complete|gpu_kernel|gpu_launch) '
