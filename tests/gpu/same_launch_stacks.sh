#!/bin/bash
# On the GPU machine: whether another build of xpu-record (tests/gpu/bundle_variant.sh) takes the
# same launch stacks as the bundle's own on a PyTorch loop: a change to the BPF walk must move
# its cost, never its stacks. From the repo root, after bundle.sh and bundle_variant.sh:
#   tests/gpu/same_launch_stacks.sh OUT_DIR VARIANT [STEPS] [SCRIPT]
# VARIANT flags:ARGS compares the bundle's own build with itself run with ARGS added instead
# (issue 38: flags:--launch-walk=bpf, the BPF walk against the default in-process one).
# Each build records SCRIPT (default bench/gpu/torch_bench.py); the launch stacks of both, as
# xpu-report -F jsonl names them, are compared as multisets. The frames inside the profiler's
# own libraries (below libcupti's last frame: the callback and the probed marker) are left out,
# since a walk change may rightly find one more of them. Two runs of one program do not launch
# quite alike: the caching allocator's and the libraries' lazy work (a cudaMalloc, a workspace)
# falls in a different op now and then (3 of 7,043 launches on the H200's torch_bench, each a
# whole stack of another op, not a shorter or broken one). Exit 0 when at most 1 in 1,000
# launches differ, 1 when more do; the differing stacks are printed either way.
set -u
cd "$(dirname "$0")/../.."
O=${1:?OUT_DIR}
V=${2:?VARIANT}
STEPS=${3:-100}
SCRIPT=${4:-bench/gpu/torch_bench.py}
BUNDLE=.device/bundle
LIB=$BUNDLE/lib
mkdir -p "$O"
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/xpu-ladder-pyc
VFLAGS=
VDIR=$BUNDLE/variants/$V
case $V in flags:*) VFLAGS=${V#flags:}; V=variant; VDIR=$BUNDLE/build ;; esac
for b in "cur:$BUNDLE/build" "$V:$VDIR"; do
	n=${b%%:*}
	f=; [ "$n" = cur ] || f=$VFLAGS
	# shellcheck disable=SC2086
	LD_LIBRARY_PATH=$LIB "${b#*:}/xpu-record" --no-pack $f -o "$O/$n.xpu" -- env -u LD_LIBRARY_PATH \
		python3 "$SCRIPT" none "$STEPS" >"$O/$n.out" 2>&1 || { tail -3 "$O/$n.out"; exit 2; }
	LD_LIBRARY_PATH=$LIB "$BUNDLE/build/xpu-report" -F jsonl "$O/$n.xpu" 2>/dev/null |
		grep '"type":"launch"' >"$O/$n.launches.jsonl"
done
python3 - "$O/cur.launches.jsonl" "$O/$V.launches.jsonl" <<'PY'
import collections, json, re, sys

def stacks(path):
    c = collections.Counter()
    for line in open(path):
        f = json.loads(line).get("frames", [])
        last = max((i for i, x in enumerate(f) if re.search(r"libcupti\.so", x)), default=len(f) - 1)
        c[tuple(f[:last + 1])] += 1
    return c

a, b = stacks(sys.argv[1]), stacks(sys.argv[2])
na, nb = sum(a.values()), sum(b.values())
print(f"launches: {na} and {nb}; distinct stacks: {len(a)} and {len(b)}")
diff = (a - b) + (b - a)
print(f"launches whose stack one build has and the other not: {sum((a - b).values())} and {sum((b - a).values())}")
def show(only, other, name):
    # each stack one build has alone, from where it leaves the closest stack of the other
    for s, n in list(only.items())[:4]:
        best = max(other, key=lambda o: next((i for i, (x, y) in enumerate(zip(s, o)) if x != y),
                                             min(len(s), len(o))), default=())
        k = next((i for i, (x, y) in enumerate(zip(s, best)) if x != y), min(len(s), len(best)))
        print(f"  {name} {n}x, {len(s)} frames, from frame {k}: {';'.join(s[k:k + 4])[:240]}")
        print(f"    the other's closest, {len(best)} frames: {';'.join(best[k:k + 4])[:240]}")
show(a - b, b, "cur")
show(b - a, a, "variant")
sys.exit(0 if na and nb and sum(diff.values()) <= 2 * max(na, nb) / 1000 else 1)
PY
