#!/bin/bash
# On the GPU machine (issue 13): xpu-record --off-cpu on a small PyTorch loop that waits for
# the GPU. Uses the prebuilt bundle (tests/gpu/bundle.sh), run from the repo root as root:
#   tests/gpu/offcpu_sync.sh [OUT_DIR]
# The loop (written to OUT_DIR/sync_loop.py) queues ~20 ms of matmuls per step, then waits in
# wait_event() on a blocking CUDA event (Event(blocking=True).synchronize(): the thread sleeps)
# and, in a second phase, in wait_sync() on torch.cuda.synchronize() (the driver may spin or
# sleep). Checks that --view=off-cpu puts at least half of wait_event's measured wait under the
# Python function wait_event (sync_loop.py), and that --view=wall puts at least half of
# wait_sync's under wait_sync, on or off the CPU. Prints the figures and the top blocked stacks.
# Exit status 1 when a step or a check failed.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-offcpu-sync}}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$OUT"
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0

cat >"$OUT/sync_loop.py" <<'PY'
import time
import torch

STEPS = 40
x = torch.randn(4096, 4096, device="cuda")
waited = {"event": 0.0, "sync": 0.0}


def work():
    y = x
    for _ in range(8):
        y = y @ x
        y = y / y.norm()
    return y


def wait_event():
    ev = torch.cuda.Event(blocking=True)
    ev.record()
    t = time.monotonic()
    ev.synchronize()
    waited["event"] += time.monotonic() - t


def wait_sync():
    t = time.monotonic()
    torch.cuda.synchronize()
    waited["sync"] += time.monotonic() - t


work()
torch.cuda.synchronize()
for _ in range(STEPS):
    work()
    wait_event()
for _ in range(STEPS):
    work()
    wait_sync()
print("waited_us event %d sync %d" % (waited["event"] * 1e6, waited["sync"] * 1e6))
PY

t=$OUT/offcpu-sync.xpu
tool $B/xpu-record --off-cpu -o "$t" -- env -u LD_LIBRARY_PATH python3 "$OUT/sync_loop.py" \
	>"$OUT/rec.log" 2>&1 || { echo "FAIL: record: $(tail -3 "$OUT/rec.log")"; rc=1; }
read -r ev_us sync_us < <(awk '/^waited_us/ { print $3, $5 }' "$OUT/rec.log")
echo "== the loop measured: wait_event ${ev_us:-?} us, wait_sync ${sync_us:-?} us"
tool $B/xpu-report -F info "$t" >"$OUT/info.txt" 2>&1
sed -n '/^off-cpu/,/^dsos/p' "$OUT/info.txt" | grep -v '^dsos'
pid=$(awk '/^  target pid/ { print $3 }' "$OUT/info.txt")
tool $B/xpu-report -F folded --view=off-cpu --tid="$pid" "$t" >"$OUT/off.folded" 2>"$OUT/off.err" ||
	{ echo "FAIL: --view=off-cpu: $(head -1 "$OUT/off.err")"; rc=1; }
tool $B/xpu-report -F folded --view=wall --tid="$pid" "$t" >"$OUT/wall.folded" 2>/dev/null
tool $B/xpu-report -F chrome --tid="$pid" "$t" >"$OUT/offcpu-sync.json" 2>/dev/null
off_ev=$(awk '/wait_event \(sync_loop\.py\)/ { s += $NF } END { print s + 0 }' "$OUT/off.folded")
off_sync=$(awk '/wait_sync \(sync_loop\.py\)/ { s += $NF } END { print s + 0 }' "$OUT/off.folded")
wall_sync=$(awk '/wait_sync \(sync_loop\.py\)/ { s += $NF } END { print s + 0 }' "$OUT/wall.folded")
echo "== off-CPU under wait_event: $off_ev us; under wait_sync: $off_sync us off-CPU, $wall_sync us of wall time"
awk -v got="$off_ev" -v want="${ev_us:-0}" 'BEGIN { exit !(want > 0 && got >= 0.5 * want) }' ||
	{ echo "FAIL: under half of wait_event's wait is off-CPU under wait_event (sync_loop.py)"; rc=1; }
awk -v got="$wall_sync" -v want="${sync_us:-0}" 'BEGIN { exit !(want > 0 && got >= 0.5 * want) }' ||
	{ echo "FAIL: under half of wait_sync's wait is in the wall view under wait_sync (sync_loop.py)"; rc=1; }
echo "== top blocked stacks of the main thread (us):"
sort -t' ' -k2 -n "$OUT/off.folded" | awk '{ print $NF, $0 }' | sort -rn | head -3 | cut -c1-900
exit $rc
