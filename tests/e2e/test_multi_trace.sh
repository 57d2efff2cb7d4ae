#!/usr/bin/env bash
# Several recordings as one, and ranks, with real eBPF:
#  1. two CPU recordings of cpu_burn, one after the other: merged folded weights are the sum of
#     each alone, exactly; chrome puts both on one timeline, the second after the first;
#  2. the fake CUDA app (tests/gpu/mock) recorded twice with RANK=0 and RANK=1: each trace has
#     its PROCESS_ENV, merged they add up, --rank=N is rank N's recording alone, chrome names
#     the processes by host and rank;
#  3. both ranks in one recording of one process tree: --rank splits it.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
NAME=test_multi_trace
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -x "$B/samples/cpu_burn" ] || skip "$B/samples/cpu_burn not built"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
R=$B/xpu-report
HOST=$(uname -n)

# per stack, merged = a + b exactly (integers: samples, or kernel counts)
sum_check() {
	python3 - "$@" <<'EOF'
import collections, sys
def load(p):
    d = collections.Counter()
    for l in open(p):
        k, w = l.rstrip("\n").rsplit(" ", 1)
        d[k] += int(w)
    return d
a, b, m = (load(p) for p in sys.argv[1:4])
s = a + b
bad = [(k, s[k], m[k]) for k in set(s) | set(m) if s[k] != m[k]]
if bad or not m:
    sys.exit("%d stacks differ, e.g. %r" % (len(bad), bad[:1]))
EOF
}

# 1. two CPU recordings, one after the other
for x in 1 2; do
	"$B/xpu-record" -o "$tmp/c$x.xpu" -- "$B/samples/cpu_burn" 0.5 >/dev/null 2>"$tmp/c$x.err" ||
		fail "recording cpu_burn ($x): $(tail -1 "$tmp/c$x.err")"
done
for x in 1 2; do
	"$R" -F folded --view=cpu --weight=samples "$tmp/c$x.xpu" >"$tmp/c$x.folded" 2>/dev/null ||
		fail "report of recording $x"
done
"$R" -F folded --view=cpu --weight=samples "$tmp/c1.xpu" "$tmp/c2.xpu" >"$tmp/c.folded" 2>/dev/null ||
	fail "report of both recordings"
sum_check "$tmp/c1.folded" "$tmp/c2.folded" "$tmp/c.folded" || fail "CPU: merged is not the sum"
"$R" "$tmp/c1.xpu" "$tmp/c2.xpu" 2>/dev/null >"$tmp/c.txt"
s1=$("$R" "$tmp/c1.xpu" 2>/dev/null | awk '/^# samples:/ { print $3 }')
s2=$("$R" "$tmp/c2.xpu" 2>/dev/null | awk '/^# samples:/ { print $3 }')
[ "$(awk '/^# samples:/ { print $3 }' "$tmp/c.txt")" = $((s1 + s2)) ] ||
	fail "text: samples of both are not $s1 + $s2"
"$R" -F chrome "$tmp/c1.xpu" "$tmp/c2.xpu" >"$tmp/c.json" 2>/dev/null || fail "chrome of both"
python3 - "$tmp/c.json" "$HOST" <<'EOF' || fail "chrome: not one timeline, second after first"
import json, sys
d = json.load(open(sys.argv[1]))
host = sys.argv[2]
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
# each recording: cpu_burn and its --child; order the recordings by their files
tr = d["otherData"]["traces"]
assert len(tr) == 2 and tr[0]["start_realtime_ns"] < tr[1]["start_realtime_ns"], tr
assert all(p["monotonic_shift_ns"] == 0 for p in tr), tr   # one host, one clock
t1 = tr[1]["start_realtime_ns"] / 1e3
first = {e["pid"] for e in ev if e["ts"] < t1}
second = {e["pid"] for e in ev if e["ts"] >= t1}
assert first and second and not first & second, (first, second)
assert all(n.startswith(host + " pid ") for n in names.values()), names
EOF

# 2. and 3. need the fake CUDA app and the injected library
if [ ! -f "$B/libxpu-cupti.so" ] || [ ! -f "$CUDA_HOME/include/cupti.h" ]; then
	echo "PASS $NAME: CPU recordings merged (no libxpu-cupti.so or CUPTI headers: ranks not tested)"
	exit 0
fi
cc -O1 -g -fno-omit-frame-pointer -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc -O1 -g -fno-omit-frame-pointer -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" \
	tests/gpu/mock/fake_cuda_app.c -ldl || fail "cannot build fake_cuda_app"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"
app=("$tmp/fake_cuda_app" "$(realpath "$B/libxpu-cupti.so")" "$tmp/libmockcupti.so")
kernels() { "$R" -F info "$@" 2>/dev/null | awk '$1 == "gpu_kernel" { print $2 }'; }

for r in 0 1; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 "$B/xpu-record" -o "$tmp/r$r.xpu" -- \
		"${app[@]}" $((300 + 100 * r)) >/dev/null 2>"$tmp/r$r.err" ||
		fail "recording rank $r: $(tail -1 "$tmp/r$r.err")"
	"$R" -F info "$tmp/r$r.xpu" 2>/dev/null | grep -qE "^  pid [0-9]+ \(fake_cuda_app\): rank $r local_rank $r world_size 2 local_world_size 2$" ||
		fail "rank $r: no PROCESS_ENV in info: $("$R" -F info "$tmp/r$r.xpu" 2>&1 |
			grep -E -A2 '^ranks|^  gpu_(kernel|launch) |^  gpu process') (recorder: $(tail -2 "$tmp/r$r.err" | tr '\n' ' '))"
	"$R" "$tmp/r$r.xpu" 2>/dev/null | grep -qE "^ +100\.00% +[0-9]+ +[0-9]+  fake_cuda_app  \($HOST rank $r\)$" ||
		fail "rank $r: text has no rank on its process: $("$R" "$tmp/r$r.xpu" 2>&1 | grep -A3 'by process')"
done
[ "$(kernels "$tmp/r0.xpu" "$tmp/r1.xpu")" = 700 ] || fail "merged: not 300 + 400 kernels"
for r in 0 1; do
	"$R" -F folded --view=gpu --weight=time "$tmp/r$r.xpu" >"$tmp/r$r.folded" 2>/dev/null
	"$R" -F folded --view=gpu --weight=time --rank=$r "$tmp/r0.xpu" "$tmp/r1.xpu" \
		>"$tmp/m$r.folded" 2>/dev/null || fail "--rank=$r of both"
	cmp -s "$tmp/r$r.folded" "$tmp/m$r.folded" || fail "--rank=$r of both is not rank $r's recording"
done
"$R" -F folded --view=gpu --rank=2 "$tmp/r0.xpu" "$tmp/r1.xpu" >/dev/null 2>&1 && fail "--rank=2: exit 0"
"$R" -F chrome "$tmp/r0.xpu" "$tmp/r1.xpu" >"$tmp/r.json" 2>/dev/null || fail "chrome of both ranks"
python3 - "$tmp/r.json" "$HOST" <<'EOF' || fail "chrome: processes are not named and sorted by rank"
import json, sys
d = json.load(open(sys.argv[1]))
host = sys.argv[2]
meta = [e for e in d["traceEvents"] if e["ph"] == "M" and e["pid"] < 2000000000 and e["tid"] == 0]
name = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
order = sorted((e["args"]["sort_index"], e["pid"]) for e in meta if e["name"] == "process_sort_index")
labels = [name[p] for _, p in order]
assert len(labels) == 2 and labels[0].startswith(host + " rank 0 pid ") and \
    labels[1].startswith(host + " rank 1 pid ") and labels[0].endswith("(fake_cuda_app)"), labels
kern = [e for e in d["traceEvents"] if e.get("cat") == "kernel"]
assert len(kern) == 700, len(kern)
EOF

# 3. both ranks in one recording of one tree (as torchrun's children)
RANK_APP="${app[*]}" "$B/xpu-record" -o "$tmp/both.xpu" -- sh -c \
	'RANK=0 WORLD_SIZE=2 $RANK_APP 200 & RANK=1 WORLD_SIZE=2 $RANK_APP 300; wait' \
	>/dev/null 2>"$tmp/both.err" || fail "recording two ranks at once: $(tail -1 "$tmp/both.err")"
[ "$(kernels --rank=0 "$tmp/both.xpu")" = 500 ] || fail "info counts all kernels"
for r in 0 1; do
	n=$("$R" -F info --rank=$r "$tmp/both.xpu" 2>/dev/null | awk '$1 == "gpu" && $2 == "records" { print $3 }')
	[ "$n" = $((200 + 100 * r)) ] || fail "--rank=$r of one recording: ${n:-no} GPU records, want $((200 + 100 * r))"
done
"$R" "$tmp/both.xpu" 2>/dev/null | grep -c "  ($HOST rank [01])\$" | grep -qx 2 ||
	fail "text: two processes with a rank: $("$R" "$tmp/both.xpu" 2>&1 | grep -A4 'by process')"
# pprof labels each rank's samples with it: go tool pprof -tags lists rank 0 and rank 1
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ] && "$R" -F pprof --view=gpu -o "$tmp/both.pb.gz" "$tmp/both.xpu" 2>/dev/null; then
	GOCACHE="$tmp/gocache" GOTOOLCHAIN=local "$GO" tool pprof -tags "$tmp/both.pb.gz" \
		>"$tmp/tags" 2>&1 || fail "go tool pprof -tags: $(tail -2 "$tmp/tags")"
	awk '/^ rank:/ { on = 1; next } on && /^ [a-z]+:/ { on = 0 } on && $NF ~ /^[01]$/ { n++ }
	     END { exit n != 2 }' "$tmp/tags" || fail "pprof: no rank 0 and rank 1 labels: $(cat "$tmp/tags")"
fi
# 4. two hosts: rank 1 again, recorded in a UTS namespace named as another host. Its GPU is
#    another host's GPU 0, its clock is aligned by realtime; --host picks each host's part
if unshare -u true 2>/dev/null; then
	OTHER=xpu-other-host
	RANK=1 WORLD_SIZE=2 unshare -u sh -c 'hostname "$0" && exec "$@"' "$OTHER" \
		"$B/xpu-record" -o "$tmp/h1.xpu" -- "${app[@]}" 400 >/dev/null 2>"$tmp/h1.err" ||
		fail "recording as host $OTHER: $(tail -1 "$tmp/h1.err")"
	"$R" -F info "$tmp/r0.xpu" "$tmp/h1.xpu" 2>/dev/null >"$tmp/h.info"
	grep -q "^    host           $OTHER$" "$tmp/h.info" || fail "info: no trace of host $OTHER"
	"$R" -F folded --view=gpu --weight=time --host="$OTHER" "$tmp/r0.xpu" "$tmp/h1.xpu" \
		>"$tmp/h1m.folded" 2>/dev/null || fail "--host=$OTHER"
	"$R" -F folded --view=gpu --weight=time "$tmp/h1.xpu" >"$tmp/h1.folded" 2>/dev/null
	cmp -s "$tmp/h1.folded" "$tmp/h1m.folded" || fail "--host=$OTHER is not its trace alone"
	"$R" -F chrome "$tmp/r0.xpu" "$tmp/h1.xpu" >"$tmp/h.json" 2>/dev/null || fail "chrome of two hosts"
	python3 - "$tmp/h.json" "$HOST" "$OTHER" <<'EOF' || fail "chrome: two hosts are not two GPUs and two named processes"
import json, sys
d = json.load(open(sys.argv[1]))
host, other = sys.argv[2:4]
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
gpus = sorted(n for p, n in names.items() if p >= 2000000000)
procs = sorted(n for p, n in names.items() if p < 2000000000)
assert gpus == ["GPU 0 on " + host, "GPU 0 on " + other], gpus
assert procs[0].startswith(host + " rank 0 pid ") and procs[1].startswith(other + " rank 1 pid "), procs
tr = d["otherData"]["traces"]
# one machine: the realtime alignment is right to the clock reads' precision (well under 1 ms)
assert abs(tr[1]["monotonic_shift_ns"]) < 1000000, tr
assert "NTP" in d["otherData"]["cross_host_alignment"]
EOF
fi
echo "PASS $NAME: CPU recordings add up on one timeline; ranks recorded, merged, filtered and named; two hosts apart"
