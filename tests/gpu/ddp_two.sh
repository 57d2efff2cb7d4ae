#!/bin/bash
# On the GPU machine (issue 14): a 2-rank PyTorch DDP run (samples/torch_ddp.py under torchrun)
# recorded two ways, and the figures for docs/report.md's fleet section. Uses the prebuilt bundle
# (tests/gpu/bundle.sh), run from the repo root as root:
#   tests/gpu/ddp_two.sh [OUT_DIR]
# With 2 GPUs each rank has its own and the backend is NCCL; with 1, both ranks share cuda:0
# over gloo (NCCL refuses two ranks on one device). XPU_DDP_BACKEND=nccl|gloo forces one.
#  A. one recording of the whole tree: xpu-record -- torchrun ... (both ranks in one trace,
#     told apart by the RANK each process reported);
#  B. one recording per rank (torchrun --no-python runs xpu-record per rank), merged with
#     xpu-report rank0.xpu rank1.xpu.
# Checks, for A and for B: both ranks present and labelled, each rank's kernels (NCCL's
# included) >= 95% matched to launch stacks by GPU time, one chrome timeline with both ranks'
# processes and GPU work. Exit status 1 when a step or a check failed.
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/xpu-ddp}}
B=$PWD/.device/bundle/build
LIB=$PWD/.device/bundle/lib
STEPS=${XPU_TORCH_STEPS:-100}
mkdir -p "$OUT" && OUT=$(realpath "$OUT")
rm -f "$OUT"/*.xpu
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
rc=0
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null)
echo "== $(python3 -V 2>&1), torch $(python3 -c 'import torch; print(torch.__version__)' 2>&1), $ngpu GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd,)"
run_torch=(env -u LD_LIBRARY_PATH XPU_TORCH_STEPS="$STEPS" python3 -m torch.distributed.run
	--standalone --nproc_per_node=2)

# per_rank TRACE... LABEL: per rank, its kernels, NCCL kernels, share of GPU time under a launch
# stack (folded: an unmatched record is comm;[gpu] leaf, two frames) and the launch matching line
per_rank() {
	local label=${*: -1} r n nccl
	local files=("${@:1:$#-1}")
	for r in 0 1; do
		tool $B/xpu-report -F folded --view=gpu --weight=time --rank=$r "${files[@]}" \
			>"$OUT/$label-r$r.folded" 2>/dev/null
		tool $B/xpu-report --rank=$r --rows=8 "${files[@]}" >"$OUT/$label-r$r.txt" 2>&1
		n=$(awk '/^  kernels / { print $2; exit }' "$OUT/$label-r$r.txt")
		nccl=$(grep -ci 'nccl' "$OUT/$label-r$r.folded")
		awk -v l="$label" -v r=$r -v n="${n:-0}" -v nc="$nccl" -F';' '
			{ w = $NF; sub(/.* /, "", w); all += w; if (NF > 2) st += w
			  if (tolower($NF) ~ /nccl/) { ncl += w; if (NF > 2) ncs += w } }
			END { printf "== %s rank %d: %d kernels, %.1f%% of %d us GPU time under a launch stack; NCCL: %d stacks, %d us, %.1f%% with a launch stack\n",
				l, r, n, all ? 100 * st / all : 0, all, nc, ncl, ncl ? 100 * ncs / ncl : 0
			  exit !(all > 0 && st >= 0.95 * all) }' "$OUT/$label-r$r.folded" ||
			{ echo "FAIL: $label rank $r: under 95% of its GPU time has a launch stack (or none)"; rc=1; }
		grep -E '^  (kernels|copies|memsets) ' "$OUT/$label-r$r.txt" | sed "s/^/   $label rank $r /"
	done
	tool $B/xpu-report -F info "${files[@]}" >"$OUT/$label-info.txt" 2>&1
	sed -n '/^traces\|^ranks/,/^clock sync/p' "$OUT/$label-info.txt" | grep -v '^clock sync'
	[ "$(grep -cE '^  pid [0-9]+ .*: rank [01] ' "$OUT/$label-info.txt")" -ge 2 ] ||
		{ echo "FAIL: $label: info does not list both ranks"; rc=1; }
	tool $B/xpu-report -F chrome "${files[@]}" >"$OUT/$label.json" 2>/dev/null ||
		{ echo "FAIL: $label: chrome"; rc=1; }
	python3 - "$OUT/$label.json" "$label" <<'EOF' || { echo "FAIL: $label: chrome does not show both ranks on one timeline"; rc=1; }
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
ranks = sorted(n for n in names.values() if " rank " in n)
gpus = sorted(n for p, n in names.items() if p >= 2000000000)
kern = [e for e in ev if e.get("cat") == "kernel"]
streams = {(e["pid"], e["tid"]) for e in kern}
print("== %s chrome: %d events, %d kernels on %d GPU stream tracks; processes: %s; GPUs: %s" %
      (sys.argv[2], len(ev), len(kern), len(streams), ranks, gpus))
ok = any(" rank 0 " in n for n in ranks) and any(" rank 1 " in n for n in ranks) and kern
sys.exit(0 if ok else 1)
EOF
}

echo "== A: one recording of torchrun and both ranks"
tool $B/xpu-record -o "$OUT/ddp.xpu" -- "${run_torch[@]}" samples/torch_ddp.py >"$OUT/A.log" 2>&1 ||
	{ echo "FAIL: A: record: $(tail -3 "$OUT/A.log")"; rc=1; }
grep -E '^rank [01]/2|^xpu-record:' "$OUT/A.log"
echo "   trace: $(stat -c %s "$OUT/ddp.xpu" 2>/dev/null) bytes"
per_rank "$OUT/ddp.xpu" A

echo "== B: one recording per rank, merged"
cat >"$OUT/rank_wrap.sh" <<EOF
#!/bin/sh
# torchrun --no-python runs this once per rank, with RANK etc. set
exec env LD_LIBRARY_PATH="$LIB" $B/xpu-record -o "$OUT/rank\$RANK.xpu" -- \
	env -u LD_LIBRARY_PATH python3 "$PWD/samples/torch_ddp.py"
EOF
chmod +x "$OUT/rank_wrap.sh"
env -u LD_LIBRARY_PATH XPU_TORCH_STEPS="$STEPS" python3 -m torch.distributed.run --standalone \
	--nproc_per_node=2 --no-python "$OUT/rank_wrap.sh" >"$OUT/B.log" 2>&1 ||
	{ echo "FAIL: B: record: $(tail -3 "$OUT/B.log")"; rc=1; }
grep -E '^rank [01]/2|^xpu-record:' "$OUT/B.log"
echo "   traces: $(stat -c %s "$OUT/rank0.xpu" "$OUT/rank1.xpu" 2>/dev/null | paste -sd' ') bytes"
per_rank "$OUT/rank0.xpu" "$OUT/rank1.xpu" B
# the merged kernels are the sum of each rank's alone, exactly
k0=$(tool $B/xpu-report -F info "$OUT/rank0.xpu" 2>/dev/null | awk '$1 == "gpu_kernel" { print $2 }')
k1=$(tool $B/xpu-report -F info "$OUT/rank1.xpu" 2>/dev/null | awk '$1 == "gpu_kernel" { print $2 }')
km=$(awk '$1 == "gpu_kernel" { print $2 }' "$OUT/B-info.txt")
echo "== B: kernels rank0 ${k0:-?} + rank1 ${k1:-?} = merged ${km:-?}"
[ -n "$k0" ] && [ -n "$k1" ] && [ $((k0 + k1)) = "$km" ] ||
	{ echo "FAIL: B: merged kernels are not the sum"; rc=1; }
echo "== top GPU stacks of rank 1 (B), heaviest first:"
sort -t' ' -k2 -n "$OUT/B-r1.folded" 2>/dev/null | awk '{ print $NF, $0 }' | sort -rn | head -3 | cut -c1-600
exit $rc
