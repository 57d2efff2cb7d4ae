#!/bin/bash
# On the GPU machine (issue 42): where a jitted JAX step's GPU time and CPU time land.
# Records bench/gpu/jax_step.py with the default options and with --off-cpu (the thread that
# called jit, blocked while XLA's threads compile and autotune), with the bundle of
# tests/gpu/bundle.sh, from the repo root as root:
#   tests/gpu/jax_step.sh [OUT_DIR] [STEPS]
# Prints, per recording: GPU time under the script, GPU time by launching thread name, the top
# launch stacks of the threads outside the script; keeps the traces and their packs in OUT_DIR
# for the report's work at home.
set -u
cd "$(dirname "$0")/../.."
O=$(realpath -m "${1:-${OUT:-/tmp/xpu-jax}}")
STEPS=${2:-200}
B=$PWD/.device/bundle/build
LIB=$PWD/.device/bundle/lib
mkdir -p "$O"
rc=0
tool() { LD_LIBRARY_PATH="$LIB" "$@"; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1 | tail -1
echo "== unprofiled: $(python3 bench/gpu/jax_step.py "$STEPS" 2>/dev/null | paste -sd' ')"
for v in default offcpu; do
	flags=()
	[ $v = offcpu ] && flags=(--off-cpu)
	tool "$B/xpu-record" "${flags[@]}" -o "$O/jax-$v.xpu" -- python3 bench/gpu/jax_step.py "$STEPS" \
		>"$O/jax-$v.out" 2>"$O/jax-$v.err" || { echo "FAIL $v: $(tail -3 "$O/jax-$v.err")"; rc=1; continue; }
	echo "== $v: $(paste -sd' ' "$O/jax-$v.out"); $(tail -1 "$O/jax-$v.err")"
	tool "$B/xpu-report" -F info "$O/jax-$v.xpu" >"$O/jax-$v.info" 2>&1
	grep -E '^  (gpu_kernel|gpu_launch|complete|task|py_stack) ' "$O/jax-$v.info"
	tool "$B/xpu-report" "$O/jax-$v.xpu" >"$O/jax-$v.txt" 2>&1
	tool "$B/xpu-report" -F folded --view=gpu --weight=time "$O/jax-$v.xpu" >"$O/jax-$v.gpu.folded" 2>/dev/null
	tool "$B/xpu-report" -F jsonl "$O/jax-$v.xpu" >"$O/jax-$v.jsonl" 2>/dev/null
	awk '{ w = $NF; all += w; if (index($0, "(jax_step.py)")) s += w }
	     END { printf "== %s: %.1f%% of %d us of GPU time under jax_step.py\n", v,
		   all ? 100 * s / all : 0, all }' v=$v "$O/jax-$v.gpu.folded"
	python3 - "$O/jax-$v.jsonl" <<'PY'
import collections, json, sys
by, main = collections.Counter(), None
for l in open(sys.argv[1]):
    if not l.startswith('{"type":"kernel"'):
        continue
    r = json.loads(l)
    by[r["tid"] if r["tid"] != r["pid"] else "main"] += r.get("dur", 0)
tot = sum(by.values()) or 1
for n, d in by.most_common(8):
    print(f"   {100 * d / tot:5.1f}%  {d / 1e3:10.0f} us  launched by thread {n}")
PY
	rm -f "$O/jax-$v.jsonl"
	grep -v "(jax_step.py)" "$O/jax-$v.gpu.folded" |
		awk '{ n = split($0, f, ";"); s = ""; for (i = (n > 14 ? n - 13 : 1); i <= n; i++) s = s ";" f[i]
		       print $NF "\t" s }' | sort -t"$(printf '\t')" -k1,1 -nr | head -5 | cut -c1-600
done
ls -la "$O"
echo "== $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
