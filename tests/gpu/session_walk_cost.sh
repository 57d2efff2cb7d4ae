#!/bin/bash
# One device call after the walk's cost work (row cache, stack window, state in the map):
# tests/gpu/quick_default.sh (start-up per mode, verifier statistics, torch_train.py's
# complete stacks and walk counters), then tests/gpu/torch_vs_kineto.sh with REPS repetitions
# of STEPS steps (-g fp, the default, -g cfi,nocopy and Kineto, interleaved). Logs under OUT_DIR.
#   tests/gpu/session_walk_cost.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-walk-cost}}
mkdir -p "$O"
rc=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
echo "cpus $(nproc), kernel $(uname -r)"
tests/gpu/quick_default.sh "$O/quick" || rc=1
tests/gpu/torch_vs_kineto.sh "$O/kineto" "${2:-7}" "${3:-150}" || rc=1
exit $rc
