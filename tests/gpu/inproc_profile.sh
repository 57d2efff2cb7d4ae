#!/bin/bash
# Issue 38, on the GPU machine after PERF=1 tests/gpu/bundle.sh: where the target's time goes
# under the default (in-process launch walk) on SCRIPT: perf's self time by symbol in the
# target's threads (python3, and the library's flusher), STEPS steps. From the repo root:
#   tests/gpu/inproc_profile.sh OUT_DIR [SCRIPT] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:?OUT_DIR}
S=${2:-bench/gpu/torch_bench.py}
STEPS=${3:-300}
B=.device/bundle/build
LIB=.device/bundle/lib
PERF=${PERF_BIN:-.device/bundle/perf/perf}
[ -x "$PERF" ] || PERF=$(command -v perf)
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
LD_LIBRARY_PATH=$LIB:.device/bundle/perf/lib "$PERF" record -F 4999 -e cpu-clock -o "$O/perf.data" -- \
	env LD_LIBRARY_PATH=$LIB $B/xpu-record -o "$O/t.xpu" -- env -u LD_LIBRARY_PATH \
	python3 "$S" none "$STEPS" >"$O/rec.log" 2>&1
LD_LIBRARY_PATH=.device/bundle/perf/lib "$PERF" report -i "$O/perf.data" --no-children --comm python3,pt_main_thread \
	--sort dso,sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -45
echo "== by dso"
LD_LIBRARY_PATH=.device/bundle/perf/lib "$PERF" report -i "$O/perf.data" --no-children --comm python3,pt_main_thread \
	--sort dso --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15
