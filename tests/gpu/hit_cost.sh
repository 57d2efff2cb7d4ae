#!/bin/bash
# On the GPU machine (issue 28): what one launch costs on the launch path, measured inside the
# kernel rather than as a loop's slowdown. With the bundle of tests/gpu/bundle.sh, from the repo root:
#   tests/gpu/hit_cost.sh OUT_DIR [STEPS]
# 1. torch_bench.py under xpu-record (default, then -g fp --no-python --no-autograd -F 1) with
#    kernel.bpf_stats_enabled=1: each BPF program's run count and mean run time (bpftool, polled
#    while the recording runs: the programs go when xpu-record ends).
# 2. bench/marker_py.py (the launch marker called from Python at depth 20, no GPU needed):
#    unprofiled; with the uprobe attached but the caller not traced (the probe's fixed cost:
#    trampoline, syscall, a BPF program that returns at once); traced with -g fp --no-python;
#    traced with the default walk (cfi + Python).
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/xpu-hitcost}
STEPS=${2:-300}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
BPFTOOL=$(command -v bpftool || echo "$B/bpftool")
bpftool() { LD_LIBRARY_PATH=$LIB "$BPFTOOL" "$@"; }
# the tools find the bundle's libraries; the target keeps the machine's own (PyTorch's)
xrec() {
	local a=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	LD_LIBRARY_PATH=$LIB "$B/xpu-record" "${a[@]}" -- env -u LD_LIBRARY_PATH "$@"
}
xrep() { LD_LIBRARY_PATH=$LIB "$B/xpu-report" "$@"; }
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled' EXIT

# poll_progs PID FILE: the last `bpftool prog show -j` taken while PID lived
poll_progs() {
	while kill -0 "$1" 2>/dev/null; do
		bpftool -j prog show >"$2.tmp" 2>/dev/null && mv "$2.tmp" "$2"
		sleep 0.5
	done
}
per_prog() {
	python3 - "$1" <<'PY'
import json, sys
progs = [p for p in json.load(open(sys.argv[1])) if p.get("run_cnt")]
for p in sorted(progs, key=lambda p: -p["run_time_ns"]):
    if p["name"] in ("on_gpu_launch", "on_sample", "on_ag_node", "on_ag_eval_begin", "cfi_step",
                     "py_frame_step", "py_scan_step") or p["run_time_ns"] > 1e7:
        print(f"  {p['name']:20s} runs {p['run_cnt']:9d}  mean {p['run_time_ns'] / p['run_cnt']:8.0f} ns"
              f"  total {p['run_time_ns'] / 1e6:8.1f} ms")
PY
}
for cfg in default fp; do
	flags=(); [ "$cfg" = fp ] && flags=(-g fp --no-python --no-autograd -F 1)
	xrec "${flags[@]}" -o "$O/torch-$cfg.xpu" -- python3 bench/gpu/torch_bench.py none "$STEPS" \
		>"$O/torch-$cfg.out" 2>&1 &
	rp=$!
	sleep 1
	poll_progs "$rp" "$O/progs-$cfg.json" &
	pp=$!
	wait "$rp"; wait "$pp"
	echo "== torch_bench $STEPS steps, xpu-record ${flags[*]:-(default)}: $(grep elapsed_ns "$O/torch-$cfg.out")"
	per_prog "$O/progs-$cfg.json"
	xrep --format=info "$O/torch-$cfg.xpu" | grep -E "gpu_launch|gpu_kernel|cpu_sample|lost|cfi_walks|cfi_frames|cfi_stack_reads|py_frames|py_frame_reads|py_stacks" | head -16
done

echo "== marker_py.py: the launch marker from Python at depth 20, ns per call"
M="python3 bench/marker_py.py $B/libxpu-cupti.so ${CALLS:-300000} 20"
for i in 1 2 3; do echo "unprofiled        $($M | grep ns_per_call)"; done
sleep 600 & sp=$!
LD_LIBRARY_PATH=$LIB "$B/xpu-record" -p "$sp" -o "$O/idle.xpu" --no-pack >"$O/idle.out" 2>&1 & ip=$!
sleep 3
for i in 1 2 3; do echo "probe, not traced $($M | grep ns_per_call)"; done
kill -INT "$ip" 2>/dev/null; wait "$ip"; kill "$sp"
tail -1 "$O/idle.out"
for i in 1 2 3; do
	echo "traced -g fp      $(xrec -g fp --no-python -F 1 --no-pack -o "$O/m-fp.xpu" -- $M 2>/dev/null | grep ns_per_call)"
	echo "traced default    $(xrec --no-pack -o "$O/m-def.xpu" -- $M 2>/dev/null | grep ns_per_call)"
done
