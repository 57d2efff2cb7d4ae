#!/bin/sh
# Issue 39 on traces recorded on the GPU machine (CUDA 13, H100, tests/gpu/cuda_graphs.sh):
# samples/traces/graphs-cuda.xpu (tests/gpu/graphs/graph_nodes.cu: stream capture, the node
# API, a child graph, cudaGraphExecUpdate) and torch-graphs.xpu (torch.cuda.graph of a decode
# step, tests/gpu/graphs/decode_graph.py eager). The GPU script's own checks run on them with
# REUSE=1: every replayed kernel under the function that captured it, none after the exec
# update, the decode step's work under its layers. They failed on the report that took a
# copy's CREATED record (CUPTI announces every exec-graph node so, outside any call) for its
# origin: 0% mapped.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for x in xpu xpu.xpa; do
	cp "$ROOT/samples/traces/graphs-cuda.$x" "$T/cuda.$x" &&
		cp "$ROOT/samples/traces/torch-graphs.$x" "$T/eager.$x" || exit 1
done
# the packs are named after the traces they belong to
cd "$ROOT" || exit 1
REUSE=1 XPU_BUILD="$BUILD" XPU_LIB= tests/gpu/cuda_graphs.sh "$T" >"$T/log" 2>&1
rc=$?
grep -q 'under capture_attention: 100.0%' "$T/log" &&
	grep -q 'under \[graph\] captured > decode_step: 100.0%' "$T/log" || rc=1
[ $rc = 0 ] && { echo "ok: recorded CUDA graphs under their capture sites"; exit 0; }
cat "$T/log"
echo "FAIL test_graphs_recorded"
exit 1
