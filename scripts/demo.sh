#!/usr/bin/env bash
# make demo: record the bundled CPU sample with real eBPF and print its report.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=${DEMO_OUT:-$B/demo.xpu}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: xpu-record loads BPF programs and needs root (or CAP_BPF+CAP_PERFMON): run 'sudo make demo'" >&2
	exit 1
fi
echo "== xpu-record -o $out -- $B/samples/cpu_burn"
"$B"/xpu-record -o "$out" -- "$B"/samples/cpu_burn
echo
echo "== xpu-report $out"
"$B"/xpu-report "$out"
echo
echo "== xpu-report --format=folded $out (heaviest stacks)"
"$B"/xpu-report --format=folded "$out" | sort -t' ' -k2 -nr | head -n 8
if [ -x "$B/libxpu-cupti.so" ] && [ -f samples/traces/cuda_pipeline.xpu ]; then
	echo
	echo "== xpu-report --format=folded samples/traces/cuda_pipeline.xpu (recorded on a GPU host)"
	"$B"/xpu-report --format=folded samples/traces/cuda_pipeline.xpu | sort -t' ' -k2 -nr | head -n 8
fi
echo
echo "demo: the trace is $out; try: $B/xpu-report --format=info $out"
