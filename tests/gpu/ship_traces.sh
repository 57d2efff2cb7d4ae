#!/bin/bash
# On the GPU machine: records the GPU traces shipped in samples/traces/ with the default options
# and clean command lines (the environment the harness needs is set on xpu-record and inherited,
# not written into the target's command), archives the CUDA ones (the PyTorch ones' archives
# would be tens of MB), and prints what a reader sees. From the repo root as root:
#   tests/gpu/ship_traces.sh [OUT_DIR]
set -u
cd "$(dirname "$0")/../.."
O=$(realpath -m "${1:-${OUT:-/tmp/xpu-ship}}")
B=$PWD/.device/bundle/build
L="$PWD/.device/bundle/lib:$PWD/.device/bundle/lib-cuda"
mkdir -p "$O"
rec() {	# NAME DIR ARGS...: xpu-record in DIR with the bundle's libraries
	local name=$1 dir=$2
	shift 2
	(cd "$dir" && LD_LIBRARY_PATH="$L" "$B/xpu-record" -o "$O/$name.xpu" "$@") \
		>"$O/$name.out" 2>"$O/$name.err" || { echo "FAIL $name: $(tail -2 "$O/$name.err")"; return 1; }
	echo "== $name: $(tail -1 "$O/$name.err")"
}
rec pipeline "$B/samples" -- ./cuda_pipeline
rec pipeline-graph "$B/samples" --cuda-graphs=graph -- ./cuda_pipeline
XPU_TORCH_STEPS=10 rec torch-python "$PWD" -- python3 samples/torch_train.py
XPU_TORCH_STEPS=5 rec torch-small "$PWD" -F 99 -- python3 samples/torch_train.py
for n in pipeline pipeline-graph; do
	LD_LIBRARY_PATH="$L" "$B/xpu-report" archive "$O/$n.xpu" 2>&1 | tail -1
done
for n in pipeline pipeline-graph torch-python torch-small; do
	echo "== $n: $(ls -la "$O/$n.xpu" | awk '{ print $5 }') bytes"
	LD_LIBRARY_PATH="$L" "$B/xpu-report" -F info "$O/$n.xpu" 2>/dev/null |
		grep -E '^  (command|complete|gpu_kernel) '
done
