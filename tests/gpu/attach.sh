#!/bin/bash
# On the GPU machine: xpu-record -p on running PyTorch loops (tests/gpu/attach_loop.py: MODELS,
# default "train attn"), with the bundle of tests/gpu/bundle.sh, from the repo root as root:
#   tests/gpu/attach.sh [OUT_DIR]
# Per loop: a control run with no attach, then a run that is attached to for 4 s (-d 4) after
# WARM + WINDOW seconds (defaults 8 and 20). Checks: GPU kernels recorded, all joined to launch
# stacks, every launch stack complete and under train_step (attach_loop.py); the GPU process
# "attached mid-run" then "detached"; the loop ends normally; and the median step time over
# WINDOW s after the detach within 2 points of the median over WINDOW s before the attach,
# beyond the control's own drift between the same two windows (printed for both).
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-attach}}
MODELS=${MODELS:-train attn}
WARM=${WARM:-8}
W=${WINDOW:-20}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
fail() { echo "FAIL: $*"; rc=1; }
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }
# median_step LOG FROM_NS TO_NS: the median step time (us) of the log's intervals within
median_step() {
	python3 - "$@" <<'PY'
import statistics, sys
log, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [tuple(map(int, l.split())) for l in open(log) if l.strip()]
d = [(t2 - t1) / (s2 - s1) / 1000 for (t1, s1), (t2, s2) in zip(rows, rows[1:])
     if t1 >= a and t2 <= b and s2 > s1]
print(f"{statistics.median(d):.2f}" if d else "nan")
PY
}
# first_ns LOG: the first line's time (the loop's steady start)
first_ns() { awk 'NR == 1 { print $1 }' "$1"; }
SECONDS=0
for m in $MODELS; do
	total=$((WARM + W + 4 + 3 + W + 2))
	echo "=== $m: control (no attach), $total s"
	python3 tests/gpu/attach_loop.py "$m" "$total" "$O/$m-control.log" >"$O/$m-control.out" 2>&1 ||
		fail "$m: control run: $(tail -2 "$O/$m-control.out")"
	echo "=== $m: attached for 4 s after $((WARM + W)) s"
	python3 tests/gpu/attach_loop.py "$m" "$total" "$O/$m-attach.log" >"$O/$m-attach.out" 2>&1 &
	pid=$!
	# the steady start: the loop's first log line
	for _ in $(seq 100); do [ -s "$O/$m-attach.log" ] && break; sleep 0.2; done
	start=$(first_ns "$O/$m-attach.log")
	sleep $((WARM + W))
	ta=$(mono)
	LD_LIBRARY_PATH="$LIB" $B/xpu-record -v -p "$pid" -d 4 -o "$O/$m.xpu" >"$O/$m-rec.out" 2>"$O/$m-rec.err" ||
		fail "$m: xpu-record -p: $(tail -2 "$O/$m-rec.err")"
	td=$(mono)
	wait "$pid" || fail "$m: the attached loop exited $?: $(tail -2 "$O/$m-attach.out")"
	grep -E "GPU|CUPTI|attach" "$O/$m-rec.err" | head -5
	echo "== attach took $(( (td - ta) / 1000000 )) ms in all (4 s recording)"
	info=$(LD_LIBRARY_PATH="$LIB" $B/xpu-report -F info "$O/$m.xpu" 2>/dev/null)
	k=$(echo "$info" | awk '$1 == "gpu_kernel" { print $2 }')
	echo "$info" | grep -E '^  (gpu_kernel|gpu_launch|complete) '
	[ "${k:-0}" -gt 0 ] || fail "$m: no kernels recorded"
	LD_LIBRARY_PATH="$LIB" $B/xpu-report "$O/$m.xpu" >"$O/$m.txt" 2>&1
	grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%' "$O/$m.txt" ||
		fail "$m: not every kernel joined: $(grep -E '^  kernels' "$O/$m.txt")"
	echo "$info" | grep -q 'gpu launches (100.0%)' || fail "$m: launch stacks not all complete"
	sed -n '/^# gpu processes/,/^# [a-z]/p' "$O/$m.txt" | head -4
	grep -q "attached mid-run" "$O/$m.txt" && grep -q "detached" "$O/$m.txt" ||
		fail "$m: the GPU process is not 'attached mid-run' then 'detached'"
	LD_LIBRARY_PATH="$LIB" $B/xpu-report -F folded --view=gpu --weight=time "$O/$m.xpu" \
		>"$O/$m.folded" 2>/dev/null
	awk '{ w = $NF; all += w; if (index($0, "train_step (attach_loop.py)")) s += w }
	     END { printf "== %.1f%% of %d us of GPU time under train_step (attach_loop.py)\n",
		   all ? 100 * s / all : 0, all }' "$O/$m.folded"
	grep -q "train_step (attach_loop.py)" "$O/$m.folded" || fail "$m: no kernel under train_step"
	# step time: WINDOW s before the attach, WINDOW s from 1 s after the detach
	b0=$((ta - W * 1000000000)); a0=$((td + 1000000000)); a1=$((a0 + W * 1000000000))
	off_b0=$((b0 - start)); off_ta=$((ta - start)); off_a0=$((a0 - start)); off_a1=$((a1 - start))
	cstart=$(first_ns "$O/$m-control.log")
	before=$(median_step "$O/$m-attach.log" "$b0" "$ta")
	after=$(median_step "$O/$m-attach.log" "$a0" "$a1")
	cbefore=$(median_step "$O/$m-control.log" $((cstart + off_b0)) $((cstart + off_ta)))
	cafter=$(median_step "$O/$m-control.log" $((cstart + off_a0)) $((cstart + off_a1)))
	python3 - "$m" "$before" "$after" "$cbefore" "$cafter" <<'PY' || rc=1
import sys
m, b, a, cb, ca = sys.argv[1], *map(float, sys.argv[2:])
drift, ctl = 100 * (a / b - 1), 100 * (ca / cb - 1)
ok = drift - ctl <= 2
print(f"== {m}: step {b:.1f} us before the attach, {a:.1f} us after the detach ({drift:+.1f}%); "
      f"control {cb:.1f} -> {ca:.1f} us ({ctl:+.1f}%); difference {drift - ctl:+.1f} points: "
      f"{'ok' if ok else 'FAIL (> 2 points)'}")
sys.exit(0 if ok else 1)
PY
done
echo "== ${SECONDS}s, $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
