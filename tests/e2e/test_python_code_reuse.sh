#!/usr/bin/env bash
# Python frames keep their own names when a code object's address is reused: a module's code
# is freed once it has run, and CPython's allocator gives the next module's code of that size
# the same address. Both start at line 1, so the first line alone (the fingerprint before
# 2026-12-08) named the second module's frames after the first. The script compiles one
# source as first_I.py, runs it (it launches from its top level), drops the code but keeps
# its functions (as an imported module does), waits past the walk's 2 ms code cache (a code
# object at a reused address within it is named after the one before: FORMAT.md, 1.9), and
# runs the same source as second_I.py, for ROUNDS rounds; it counts the rounds where the second
# code got the first's address (3.11-3.13 always here; a version that never reuses is skipped
# with a message: the case cannot arise there). Checked under every pyenv CPython 3.10-3.13,
# with the default launch walk and --launch-walk=bpf: each file's launches (in time order)
# named after it, never after another file. A launch whose code object the recorder read only
# after it was freed and its address taken (its frames come in batches) is unnamed, "[python]",
# and counted (py_code_errors): how many depends on the recorder's latency, so it is shown, not
# checked.
set -u
cd "$(dirname "$0")/../.." || exit 1
NAME=test_python_code_reuse
. tests/lib/inproc_e2e.sh

. tests/lib/pyenv_pythons.sh
[ ${#pythons[@]} -gt 0 ] || skip "no CPython 3.10-3.13 under $pyenv_root/versions"

tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] && trap 'cp -r "$tmp"/. "$KEEP"/; rm -rf "$tmp"' EXIT || trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O2 -g -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libfake_cuda_py.so" \
	tests/gpu/mock/fake_cuda_py.c -ldl || fail "cannot build fake_cuda_py.c"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"

ROUNDS=8 LAUNCHES=5
cat >"$tmp/reuse.py" <<'PY'
import ctypes, sys, time

lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_py_launch.restype = ctypes.c_int
rounds, launches = int(sys.argv[2]), int(sys.argv[3])
lib.fake_cuda_py_launch()	# sets the injection up, from this file's <module>

SRC = "def helper():\n    pass\nfor _ in range(%d):\n    launch()\n" % launches
kept = []			# the functions keep each file's name string alive
reused = 0


def run(name):
    code = compile(SRC, name, "exec")
    ns = {"launch": lib.fake_cuda_py_launch}
    exec(code, ns)
    kept.append(ns)
    time.sleep(0.05)	# past the walk's code cache (2 ms: within it, the reuse is missed)
    return id(code)


for i in range(rounds):
    first = run(f"first_{i}.py")
    reused += run(f"second_{i}.py") == first
print("reused", reused)
PY

for py in "${pythons[@]}"; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	for walk in inproc bpf; do
		label=$v-$walk
		opt=(); [ $walk = bpf ] && opt=(--launch-walk=bpf)
		"$B/xpu-record" "${opt[@]}" -o "$tmp/$label.xpu" -- "$py" "$tmp/reuse.py" \
			"$tmp/libfake_cuda_py.so" $ROUNDS $LAUNCHES >"$tmp/$label.out" 2>"$tmp/$label.err" ||
			{ bad "$label: xpu-record exited $?: $(head -3 "$tmp/$label.err")"; continue; }
		grep -q "bpf(): \|Operation not permitted" "$tmp/$label.err" &&
			skip "BPF unavailable: $(head -1 "$tmp/$label.err")"
		reused=$(awk '$1 == "reused" { print $2 }' "$tmp/$label.out")
		if [ "${reused:-0}" = 0 ]; then
			echo "skip: CPython $v ($walk): no code object got a freed one's address in $ROUNDS rounds"
			continue
		fi
		"$B/xpu-report" -F jsonl "$tmp/$label.xpu" 2>/dev/null | grep '"type":"launch"' \
			>"$tmp/$label.jsonl"
		python3 - "$tmp/$label.jsonl" "$label" $ROUNDS $LAUNCHES <<'PY' || bad "$label: see above"
import json, re, sys

label, rounds, launches = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
files = [f"{k}_{i}.py" for i in range(rounds) for k in ("first", "second")]
stacks = sorted((json.loads(line) for line in open(sys.argv[1])), key=lambda e: e["ts"])
ours = [e["frames"] for e in stacks if "run (reuse.py)" in e.get("frames", [])]
if len(ours) != len(files) * launches:
    sys.exit(f"  {label}: want {len(files) * launches} launches from the compiled files, got {len(ours)}")
named = unnamed = 0
for k, f in enumerate(ours):
    own = files[k // launches]
    top = f[f.index("run (reuse.py)") + 1]
    if top == f"<module> ({own})":
        named += 1
    elif top == "[python]":
        unnamed += 1	# read too late: the code was freed and its address taken (py_code_errors)
    else:
        sys.exit(f"  {label}: launch {k} of {own} under {top}: {';'.join(f)}")
print(f"  {label}: {named} launches named after their own file, {unnamed} unnamed, none after another")
PY
	done
done
[ $failed = 0 ] || exit 1
echo "PASS $NAME"
