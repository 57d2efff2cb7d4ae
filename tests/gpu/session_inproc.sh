#!/bin/bash
# Issue 38 on the GPU machine, one call per phase, from the repo root after tests/gpu/bundle.sh:
#   tests/gpu/session_inproc.sh check OUT_DIR
#     the default (in-process launch walk) on samples/torch_train.py and the three loops: every
#     launch and 99.5% of samples complete, how many launches the process walked and why the
#     others fell back (xpu-report -F info), the tables' memory in the target; then
#     tests/gpu/same_launch_stacks.sh between the default and --launch-walk=bpf on torch_bench
#   tests/gpu/session_inproc.sh ladder OUT_DIR SCRIPT [REPS] [STEPS]
#     tests/gpu/ladder.sh with bench/gpu/ladder_inproc.rungs on SCRIPT
set -u
cd "$(dirname "$0")/../.."
PHASE=${1:?check or ladder}
O=${2:?OUT_DIR}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
SECONDS=0
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
echo "cpus $(nproc), kernel $(uname -r)"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
stats='^  (complete|gpu_launch|gpu_kernel|inproc_[a-z_]*|cfi_walks|cfi_frames|cfi_short_walk_copies|py_stacks|ringbuf_lost|lost_[a-z_]*) '

case $PHASE in
check)
	for s in samples/torch_train.py bench/gpu/torch_bench.py bench/gpu/torch_attn_bench.py \
		bench/gpu/torch_small_bench.py; do
		n=$(basename "$s" .py)
		case $s in samples/*) args=() ;; *) args=(none 100) ;; esac
		# the target's memory: VmRSS and the share's mappings while it runs (sampled once)
		tool $B/xpu-record -o "$O/$n.xpu" -- env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=60 \
			python3 "$s" "${args[@]}" >"$O/$n.log" 2>&1 &
		rp=$!
		sleep 12
		for p in $(pgrep -x python3); do
			python3 - "$p" <<'PY'
import sys
virt = rss = 0
cur = None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    f = line.split()
    if "-" in f[0] and len(f) >= 5:
        cur = "memfd:xpu" in line
        if cur:
            a, b = (int(x, 16) for x in f[0].split("-"))
            virt += b - a
    elif cur and f[0] == "Rss:":
        rss += int(f[1])
print(f"== pid {sys.argv[1]}: the share mapped {virt / 2**20:.1f} MiB virtual, {rss / 1024:.1f} MiB resident")
PY
			grep -E 'VmRSS|RssShmem' "/proc/$p/status" 2>/dev/null
		done
		wait $rp || { rc=1; tail -3 "$O/$n.log"; }
		echo "== $n: $(grep '^xpu-record:' "$O/$n.log" | tail -1)"
		tool $B/xpu-report -F info "$O/$n.xpu" 2>/dev/null | grep -E "$stats"
	done
	tests/gpu/same_launch_stacks.sh "$O/same" flags:--launch-walk=bpf 100 || rc=1
	;;
ladder)
	tests/gpu/ladder.sh "$O" bench/gpu/ladder_inproc.rungs "${4:-8}" "${5:-300}" "${3:?SCRIPT}" || rc=1
	;;
esac
echo "== ${SECONDS}s in all"
exit $rc
