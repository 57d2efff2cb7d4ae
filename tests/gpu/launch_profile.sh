#!/bin/bash
# On the GPU machine (issue 28): where the launch path's BPF time goes, for several builds of
# xpu-record side by side. With the bundle of tests/gpu/bundle.sh (PERF=1 adds perf) and the
# builds of tests/gpu/bundle_variant.sh, from the repo root:
#   tests/gpu/launch_profile.sh OUT_DIR [REPS] [STEPS]
# 1. torch_bench.py under each build (the bundle's own is "cur"), default options, REPS rounds
#    in a shuffled order, kernel.bpf_stats_enabled=1: each BPF program's mean run time (bpftool,
#    polled while the recording runs) and the walks' counters (frames and user reads per walk).
# 2. perf record -a -g of kernel time during one recording by each of the first and the last
#    build (PROFILE=a,b picks others): inside on_gpu_launch, the share of each part (the BPF
#    subprogram: cfi_step, py_frame_step, the program itself) and of each leaf under it.
# 3. Where the CPU samples' BPF walks stop short (their outermost frame, xpu-report --no-unwind).
set -u
cd "$(dirname "$0")/../.."
O=${1:-/tmp/xpu-launch-profile}
REPS=${2:-3}
STEPS=${3:-300}
BUNDLE=.device/bundle
LIB=$BUNDLE/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
BPFTOOL=$(command -v bpftool || echo "$BUNDLE/build/bpftool")
bpftool() { LD_LIBRARY_PATH=$LIB "$BPFTOOL" "$@"; }
xrep() { LD_LIBRARY_PATH=$LIB "$BUNDLE/build/xpu-report" "$@"; }
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled' EXIT

declare -A DIR
NAMES=(cur)
DIR[cur]=$BUNDLE/build
for d in "$BUNDLE"/variants/*/; do
	[ -x "$d/xpu-record" ] || continue
	n=$(basename "$d")
	NAMES+=("$n")
	DIR[$n]=${d%/}
done
echo "builds: ${NAMES[*]}"
# one unprofiled run fills the bytecode cache, so every recorded run starts alike
python3 bench/gpu/torch_bench.py none 5 >/dev/null 2>&1

# record NAME OUTFILE [xpu-record options]: torch_bench under build NAME
record() {
	local n=$1 out=$2
	shift 2
	LD_LIBRARY_PATH=$LIB "${DIR[$n]}/xpu-record" --no-pack "$@" -o "$out" -- \
		env -u LD_LIBRARY_PATH python3 bench/gpu/torch_bench.py none "$STEPS"
}
poll_progs() {	# PID FILE: the last `bpftool prog show -j` taken while PID lived
	while kill -0 "$1" 2>/dev/null; do
		bpftool -j prog show >"$2.tmp" 2>/dev/null && mv "$2.tmp" "$2"
		sleep 0.3
	done
}
summarize() {	# NAME REP PROGS_JSON TRACE STDOUT
	python3 - "$@" "$(xrep -F info "$4" 2>/dev/null)" <<'PY'
import json, re, sys
name, rep, progs, trace, out, info = sys.argv[1:7]
mean = {}
for p in json.load(open(progs)):
    if p.get("run_cnt") and p["name"] in ("on_gpu_launch", "on_sample", "on_ag_node"):
        mean[p["name"]] = (p["run_time_ns"] / p["run_cnt"], p["run_cnt"])
def ctr(k):
    m = re.search(r"^\s+%s\s+(\d+)" % k, info, re.M)
    return int(m.group(1)) if m else 0
el = re.search(r"elapsed_ns (\d+)", open(out).read())
walks, py = ctr("cfi_walks") or 1, ctr("py_frames") or 1
row = [name, rep, "%.1f" % (int(el.group(1)) / 1e6 if el else -1)]
for k in ("on_gpu_launch", "on_sample", "on_ag_node"):
    row += ["%.0f" % mean.get(k, (0, 0))[0], str(mean.get(k, (0, 0))[1])]
row += ["%.1f" % (ctr("cfi_frames") / walks), "%.2f" % (ctr("cfi_stack_reads") / walks),
        "%.2f" % (ctr("cfi_row_cache_hits") / max(ctr("cfi_frames"), 1)),
        "%.1f" % (py / max(ctr("py_stacks"), 1)), "%.2f" % (ctr("py_frame_reads") / py),
        str(ctr("cfi_short_walk_copies")), str(ctr("cpu_sample") or ctr("samples"))]
print(",".join(row))
PY
}

echo "name,rep,loop_ms,launch_ns,launches,sample_ns,samples,ag_node_ns,ag_nodes,frames_per_walk,reads_per_walk,row_cache_hit,py_frames_per_stack,py_reads_per_frame,short_walk_copies,samples_recorded" |
	tee "$O/runs.csv"
for rep in $(seq "$REPS"); do
	for n in $(printf '%s\n' "${NAMES[@]}" | shuf); do
		record "$n" "$O/t-$n-$rep.xpu" >"$O/t-$n-$rep.out" 2>&1 &
		rp=$!
		sleep 1
		poll_progs "$rp" "$O/progs-$n-$rep.json" &
		pp=$!
		wait "$rp"; wait "$pp"
		summarize "$n" "$rep" "$O/progs-$n-$rep.json" "$O/t-$n-$rep.xpu" "$O/t-$n-$rep.out" |
			tee -a "$O/runs.csv"
	done
done
python3 - "$O/runs.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("median per build (launch_ns, sample_ns, reads_per_walk, py_reads_per_frame, loop_ms):")
for n in dict.fromkeys(r["name"] for r in rows):
    rs = [r for r in rows if r["name"] == n]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    print(f"  {n:12s} launch {med('launch_ns'):6.0f} ns  sample {med('sample_ns'):6.0f} ns  "
          f"reads/walk {med('reads_per_walk'):5.2f}  py reads/frame {med('py_reads_per_frame'):4.2f}  "
          f"loop {med('loop_ms'):6.1f} ms")
PY

PERF=$BUNDLE/perf/perf
if [ -x "$PERF" ]; then
	IFS=, read -r -a prof <<<"${PROFILE:-${NAMES[0]},${NAMES[-1]}}"
	for n in "${prof[@]}"; do
		echo "== perf: inside on_gpu_launch, build $n (kernel time, all CPUs)"
		LD_LIBRARY_PATH=$BUNDLE/perf/lib "$PERF" record -q -a -g -e cycles:k -F 4999 \
			-o "$O/perf-$n.data" -- bash -c "$(declare -f record); $(declare -p DIR); \
			LIB=$LIB STEPS=$STEPS; record $n $O/perf-$n.xpu" >"$O/perf-$n.out" 2>&1
		LD_LIBRARY_PATH=$BUNDLE/perf/lib "$PERF" script -i "$O/perf-$n.data" -F tid,ip,sym \
			2>/dev/null | python3 tests/gpu/launch_parts.py | tee "$O/perf-$n.txt"
	done
fi

echo "== where CPU samples' walks stop short (outermost frame of the BPF walk, cur, rep 1)"
xrep --no-unwind -F folded --view=cpu --weight=samples "$O/t-cur-1.xpu" 2>/dev/null |
	python3 -c '
import collections, re, sys
c = collections.Counter(); total = 0
whole = re.compile(r"^(_start|clone3?|start_thread|.* \(.*\))$")	# or a Python frame
for line in sys.stdin:
    stack, _, n = line.rstrip().rpartition(" ")
    frames = stack.split(";")
    total += int(n)
    if len(frames) > 1 and not whole.match(frames[1]):
        c[frames[1] + "  ...  " + frames[-1]] += int(n)
print(f"{sum(c.values())} of {total} samples start elsewhere than _start, clone, start_thread or Python")
for k, v in c.most_common(15):
    print(f"  {v:7d}  {k[:150]}")'
xrep -F info "$O/t-cur-1.xpu" | grep -E "cfi_end|cfi_fp_|short|copies" | head -20
xrep -F info "$O/t-cur-1.xpu" | grep -E "cfi_files|cfi_build|cfi_start_wait|fp fallback|dwarf stops|no cfi|no file" | head -20
# the BLAS library numpy brought (its worker threads spin where samples land)
blas=$(python3 -c 'import glob, os, numpy; d = os.path.dirname(numpy.__file__); print(" ".join(glob.glob(d + ".libs/*blas*") + glob.glob(d + "/../scipy_openblas*/lib/*.so*")))' 2>/dev/null)
for f in $blas; do
	echo "== $f"
	LD_LIBRARY_PATH=$LIB "$BUNDLE/build/bench/cfi_tables" "$f" 2>&1 | head -3
	command -v readelf >/dev/null && readelf -SW "$f" | grep -E "eh_frame|debug_frame" && readelf -sW "$f" | grep -m3 blas_thread_server
done
