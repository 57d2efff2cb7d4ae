#!/bin/bash
# On the GPU machine (issue 28): bench/gpu/ladder.py's breakdown of the profiler's cost, from the
# minimal CUPTI client (bench/gpu/cupti_min.c) up to the default and Kineto, paired and shuffled,
# with the bundle of tests/gpu/bundle.sh (which builds the minimal client), from the repo root:
#   tests/gpu/ladder.sh OUT_DIR [LADDER] [REPS] [STEPS] [SCRIPT] [BUDGET_S]
# LADDER: cupti (activity kinds and the library's own parts) or stacks (launch stacks, Python,
# autograd, sampling; the default) or a rungs file (e.g. bench/gpu/ladder_core.rungs); SCRIPT: bench/gpu/torch_bench.py (default) or
# bench/gpu/torch_attn_bench.py. Prints the table, the record counts of each rung's first trace
# and bench/gpu_pairs.py's paired ratios against the minimal client. ONLY=a,b keeps those rungs
# (and base); LAUNCHES=N runs bench/gpu/launch_bench 1 N (empty kernels) instead of the loop;
# PIN=CPUS runs every rung's loop on those CPUs and xpu-record on the others (ladder.py --pin).
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-ladder}}
LADDER=${2:-stacks}
REPS=${3:-8}
STEPS=${4:-300}
SCRIPT=${5:-bench/gpu/torch_bench.py}
BUDGET=${6:-0}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
SECONDS=0
# the machine sets PYTHONDONTWRITEBYTECODE: every run would compile torch's modules again,
# seconds of start-up per run that measure nothing
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
PYTHONUNBUFFERED=1 python3 bench/gpu/ladder.py --build "$B" --lib "$LIB" \
	--min-lib "$B/bench/libcupti_min.so" --script "$SCRIPT" --steps "$STEPS" --reps "$REPS" \
	$([ -f "$LADDER" ] && echo --rungs || echo --ladder) "$LADDER" --out "$O" --budget-s "$BUDGET" ${ONLY:+--only "$ONLY"} ${PIN:+--pin "$PIN"} \
	${LAUNCHES:+--launches "$LAUNCHES" --libcuda .device/bundle/lib-cuda} 2>&1 | tee "$O/ladder.log" | grep -v '^|'
rc=${PIPESTATUS[0]}
cat "$O/ladder.md" 2>/dev/null
[ -s "$O/ladder_runs.csv" ] && python3 bench/gpu_pairs.py --ref minimal "$O/ladder_runs.csv"
echo "== ${SECONDS}s"
exit $rc
