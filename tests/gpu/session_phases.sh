#!/bin/bash
# One device call running several phases in turn, each under its own time limit, after
# tests/gpu/bundle.sh (PERF=1 for the profile phase). The device returns at most 8 files from
# $OUT, so each phase's text results (logs, tables, folded stacks, info; never perf data or
# traces over 2 MiB) are packed into $OUT/PHASE.tar.gz and its output goes to stdout too.
#   tests/gpu/session_phases.sh PHASE:SECONDS...
# Phases:
#   split      the split profile (tests/gpu/inproc_split_profile.sh) on torch_bench
#   splitlad   the split ladder (bench/gpu/ladder_inproc_split.rungs), 4 reps, torch_bench
#   final-S    the final ladder (RUNGS, default bench/gpu/ladder_inproc_final.rungs), 8 reps, on loop S:
#              torch (torch_bench), attn (torch_attn_bench), small (torch_small_bench)
#   launch     LAUNCHES=100000 ladder (bench/gpu/ladder_launch_2026-12-07.rungs), 5 reps: us a launch, CUPTI callbacks split
#   walkcheck  tests/gpu/launch_walk_check.sh: each launch walked both ways in one run, 3 loops
#   wprof      tests/gpu/walk_profile.sh: the launching thread's profile, default and
#              --no-launch-stacks (PERF=1 bundle), and the host's clock and getcpu costs
#   same       tests/gpu/same_launch_stacks.sh default against --launch-walk=bpf
#   check      tests/gpu/session_inproc.sh check (launches walked, completeness, memory)
#   graphs     tests/gpu/cuda_graphs.sh (issue 39)
#   attach     tests/gpu/attach.sh (issue 40; MODELS as there)
#   start      tests/gpu/start_gpu.sh: a PyTorch recording's GPU start, cold and warm cache (issue 40)
#   ship       tests/gpu/ship_traces.sh: the traces of samples/traces/ re-recorded (issue 43)
#   jax        tests/gpu/jax_step.sh: a jitted JAX step's GPU time by thread (issue 42)
# Files up to 7 MiB come back (traces and packs), so a phase keeps less than 16 MiB.
set -u
cd "$(dirname "$0")/../.."
OUTD=${OUT:-/tmp/xpu-phases-out}
W=/tmp/xpu-phases
mkdir -p "$OUTD" "$W"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
echo "cpus $(nproc), kernel $(uname -r)"
rc=0
for spec in "$@"; do
	ph=${spec%%:*} lim=${spec#*:}
	[ "$lim" = "$spec" ] && lim=300
	d=$W/$ph
	rm -rf "$d"
	mkdir -p "$d"
	s=$SECONDS
	echo "######## $ph (limit ${lim}s)"
	case $ph in
	split) cmd=(tests/gpu/inproc_split_profile.sh "$d" bench/gpu/torch_bench.py 300) ;;
	splitlad) cmd=(tests/gpu/ladder.sh "$d" bench/gpu/ladder_inproc_split.rungs 4 300
		bench/gpu/torch_bench.py $((lim - 20))) ;;
	final-torch|final-attn|final-small)
		n=${ph#final-}
		case $n in torch) sc=torch_bench ;; attn) sc=torch_attn_bench ;; small) sc=torch_small_bench ;; esac
		cmd=(tests/gpu/ladder.sh "$d" "${RUNGS:-bench/gpu/ladder_inproc_final.rungs}" 8 300
			"bench/gpu/$sc.py" $((lim - 20))) ;;
	launch) cmd=(env -u ONLY LAUNCHES=100000 tests/gpu/ladder.sh "$d" "${LAUNCH_RUNGS:-bench/gpu/ladder_launch_2026-12-07.rungs}" 5 300
		bench/gpu/torch_bench.py $((lim - 20))) ;;
	walkcheck) cmd=(tests/gpu/launch_walk_check.sh "$d" 100) ;;
	wprof) cmd=(tests/gpu/walk_profile.sh "$d" 300) ;;
	same) cmd=(tests/gpu/same_launch_stacks.sh "$d" flags:--launch-walk=bpf 100) ;;
	check) cmd=(tests/gpu/session_inproc.sh check "$d") ;;
	graphs) cmd=(tests/gpu/cuda_graphs.sh "$d") ;;
	attach) cmd=(tests/gpu/attach.sh "$d") ;;
	start) cmd=(tests/gpu/start_gpu.sh "$d") ;;
	ship) cmd=(tests/gpu/ship_traces.sh "$d") ;;
	jax) cmd=(tests/gpu/jax_step.sh "$d") ;;
	*) echo "unknown phase $ph"; rc=1; continue ;;
	esac
	timeout -k 5 "$lim" "${cmd[@]}" 2>&1 | tee "$d/phase.log"
	prc=${PIPESTATUS[0]}
	echo "######## $ph: exit $prc after $((SECONDS - s))s"
	[ "$prc" = 0 ] || rc=1
	(cd "$W" && find "$ph" -type f ! -name '*.data' ! -name '*.data.old' -size -7168k -print0 |
		tar --null --ignore-failed-read -czf "$OUTD/$ph.tar.gz" -T -)
done
exit $rc
