#!/bin/bash
# On the GPU machine (2 GPUs: the nvidia-h100-x2 / nvidia-h200-x2 kinds): xpu-record -p on both
# ranks of a running 2-rank DDP job (samples/torch_ddp.py under torchrun, started unprofiled),
# with the bundle of tests/gpu/bundle.sh, from the repo root as root:
#   tests/gpu/ddp_attach.sh [OUT_DIR]
# After WARM s (default 20: NCCL set up, the loop running) one xpu-record -p RANK0,RANK1 -d 4;
# then the job is stopped. Checks: both ranks in the one trace, labelled by their RANK, each with
# kernels (NCCL's among them) >= 95% of its GPU time under launch stacks, and each GPU process
# "attached mid-run" then "detached"; the ranks still running after the detach.
set -u
cd "$(dirname "$0")/../.."
O=${1:-${OUT:-/tmp/xpu-ddp-attach}}
WARM=${WARM:-20}
B=.device/bundle/build
LIB=.device/bundle/lib
mkdir -p "$O"
rc=0
fail() { echo "FAIL: $*"; rc=1; }
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
echo "== $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd,)"
env -u LD_LIBRARY_PATH XPU_TORCH_STEPS=100000000 python3 -m torch.distributed.run --standalone \
	--nproc_per_node=2 samples/torch_ddp.py >"$O/job.out" 2>&1 &
job=$!
sleep "$WARM"
# the ranks: processes of the job with RANK in their environment
ranks=()
for p in $(pgrep -f samples/torch_ddp.py); do
	r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^RANK=//p')
	[ -n "$r" ] && ranks[$r]=$p
done
echo "== ranks: 0 -> ${ranks[0]:-?}, 1 -> ${ranks[1]:-?}"
if [ -z "${ranks[0]:-}" ] || [ -z "${ranks[1]:-}" ]; then
	fail "the job's two ranks are not running: $(tail -3 "$O/job.out")"
else
	tool $B/xpu-record -v -p "${ranks[0]},${ranks[1]}" -d 4 -o "$O/ddp.xpu" >"$O/rec.out" \
		2>"$O/rec.err" || fail "xpu-record -p: $(tail -2 "$O/rec.err")"
	grep -E "CUPTI started|not recorded|wrote" "$O/rec.err"
	sleep 2
	for r in 0 1; do
		kill -0 "${ranks[$r]}" 2>/dev/null || fail "rank $r is gone after the detach"
	done
	tool $B/xpu-report -F info "$O/ddp.xpu" >"$O/info.txt" 2>&1
	grep -E '^  pid [0-9]+ .*: rank [01] ' "$O/info.txt"
	[ "$(grep -cE '^  pid [0-9]+ .*: rank [01] ' "$O/info.txt")" -ge 2 ] ||
		fail "info does not list both ranks"
	tool $B/xpu-report "$O/ddp.xpu" >"$O/text.txt" 2>&1
	sed -n '/^# gpu processes/,/^# [a-z]/p' "$O/text.txt" | head -5
	[ "$(sed -n '/^# gpu processes/,/^# [a-z]/p' "$O/text.txt" |
		grep -c 'attached mid-run, detached, flushed')" -ge 2 ] ||
		fail "not both ranks attached mid-run and detached"
	for r in 0 1; do
		tool $B/xpu-report -F folded --view=gpu --weight=time --rank=$r "$O/ddp.xpu" \
			>"$O/r$r.folded" 2>/dev/null
		awk -v r=$r -F';' '{ w = $NF; sub(/.* /, "", w); all += w; if (NF > 2) st += w
			if (tolower($NF) ~ /nccl/) ncl += w }
			END { printf "== rank %d: %.1f%% of %d us GPU time under a launch stack, NCCL %d us\n",
				r, all ? 100 * st / all : 0, all, ncl
			      exit !(all > 0 && st >= 0.95 * all) }' "$O/r$r.folded" ||
			fail "rank $r: under 95% of its GPU time under a launch stack (or none)"
	done
fi
kill -INT $job 2>/dev/null
sleep 3
pkill -9 -f samples/torch_ddp.py 2>/dev/null
wait $job 2>/dev/null
echo "== $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
