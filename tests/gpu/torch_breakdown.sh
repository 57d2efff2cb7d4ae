#!/bin/bash
# Where xpu-record's cost on the PyTorch loop (bench/gpu/torch_bench.py) goes: one recording
# per configuration with kernel.bpf_stats_enabled, printing the in-BPF time per CPU sample and
# per GPU launch (the sampler and the launch uprobe), then bench/gpu_overhead.py interleaving
# the configurations against Kineto (MODES, bench/gpu_overhead.py's --modes; by default
# --no-gpu: sampling only, -g fp --no-python: launch stacks by frame pointers without the
# Python walk, -g fp, -g fp without CUPTI's API records, and the default).
# CONFIGS (';'-separated xpu-record flags, 'default' for none) replaces the recordings' list; REPS 0
# skips the interleaved runs. Needs the bundle of tests/gpu/bundle.sh. Logs under OUT_DIR.
#   tests/gpu/torch_breakdown.sh [OUT_DIR] [REPS] [STEPS]
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-breakdown}}
REPS=${2:-8}
STEPS=${3:-300}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
old=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
echo 1 >/proc/sys/kernel/bpf_stats_enabled || echo "cannot enable bpf_stats: no in-BPF times"
IFS=';' read -r -a configs <<<"${CONFIGS:---no-gpu;-g fp --no-python;-g fp;-g cfi --no-python;default}"
for m in "${configs[@]}"; do
	[ "$m" = default ] && m=
	log="$O/rec${m// /_}.log"
	LD_LIBRARY_PATH="$LIB" $B/xpu-record -v $m -o /tmp/bd.xpu -- env -u LD_LIBRARY_PATH \
		python3 bench/gpu/torch_bench.py none "$STEPS" >"$log" 2>&1 || { rc=1; tail -3 "$log"; }
	awk -v m="${m:-default (-g cfi)}" '
		/^elapsed_ns/ { ms = $2 / 1e6 }
		/bpf on_sample:/ { sr = $4; sn = $6 }
		/bpf on_gpu_launch:/ { lr = $4; ln = $6 }
		END { printf "== %-20s loop %.0f ms; sampler %d runs %.2f us each; launch probe %d runs %.2f us each\n",
		      m, ms, sr, sr ? sn / sr / 1000 : 0, lr, lr ? ln / lr / 1000 : 0 }' "$log"
done
echo "$old" >/proc/sys/kernel/bpf_stats_enabled
[ "$REPS" -gt 0 ] || exit $rc
BUILD=$B LD_LIBRARY_PATH="$LIB" python3 bench/gpu_overhead.py --build "$B" --lib "$LIB" \
	--libcuda .device/bundle/lib-cuda --reps "$REPS" --steps "$STEPS" --workloads torch \
	--modes "${MODES:---no-gpu;fp --no-python;fp;XPU_CUPTI_API=none fp;cfi}" --out "$O" >"$O/bench.txt" 2>&1 || rc=1
grep -E '^\||^torch_bench unprofiled' "$O/gpu_bench.md" 2>/dev/null || tail -20 "$O/bench.txt"
exit $rc
