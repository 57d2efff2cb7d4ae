#!/bin/bash
# The issue-16 measurement as it stands: the PyTorch loop (bench/gpu/torch_bench.py) unprofiled,
# under the default mode, under -g fp and under torch.profiler (Kineto), REPS shuffled
# repetitions of STEPS timed steps, paired against Kineto (bench/gpu_overhead.py), with every
# run's time in OUT/gpu_runs.csv. MODES replaces 'cfi;fp'.
#   tests/gpu/default_vs_kineto.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-vs-kineto}}
MODES=${MODES:-cfi;fp} tests/gpu/torch_vs_kineto.sh "$O" "${2:-8}" "${3:-400}"
rc=$?
cat "$O/gpu_runs.csv" 2>/dev/null
exit $rc
