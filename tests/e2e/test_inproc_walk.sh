#!/usr/bin/env bash
# The in-process launch walk (issue 38, ARCHITECTURE.md section 4) against the BPF walk and the
# -g dwarf oracle, without a GPU: tests/gpu/mock/fake_cuda_app built WITHOUT frame pointers
# (-O2 -fomit-frame-pointer), over a fake libcupti and a library of its own
# (tests/e2e/inproc/deep_lib.c) built the same way, launching from main and from two more
# threads. Two shapes: flat (main -> launch_fake_kernel) and deep (FAKE_CUDA_DEPTH: every
# launch 25 calls below main or the thread's function, through plain, alloca (CFA from rbp)
# and DRAP-realigned frames, crossing into the library and back). Each shape is recorded three
# times: the default (--launch-walk=inproc), --launch-walk=bpf and -g dwarf (libdw unwinding
# stack copies). Checks, each launch's stack as xpu-report -F jsonl names it, cut below the
# fake libcupti's mock_api (the profiler's own frames under it may rightly differ: see
# tests/gpu/same_launch_stacks.sh), compared as multisets:
#  - in-process == bpf exactly, and in-process == dwarf: no frame lost, added or misnamed;
#  - the program's frames are the ones it made (main or launch_thread, the levels in order,
#    launch_fake_kernel, mock_api), from an outermost frame (_start or clone3);
#  - the default run took every launch in process (inproc_walks == launches, no fallback, none
#    dropped or lost, event bytes sent), --launch-walk=bpf none; every kernel joined.
# And one run loading libxpu-cupti.so with dlopen() late, as the CUDA driver does, where
# launches may come before a table is built: every launch still recorded and joined, each
# either walked in process or counted as a fallback, the reasons adding up.
#
# Why the program is linked against the libraries it otherwise dlopen()s: xpu-record holds the
# command's start only until the tables of its DT_NEEDED closure are built (cfi_start_wait_ns);
# a file dlopen()ed later gets its table some milliseconds on, and a launch before that takes
# the frame-pointer fallback in BPF (cfi_fp_table_not_loaded) or no_table in process. Linked,
# every walk of the exact runs has its tables, and nothing depends on timing.
#
# test: exclusive: its counts are exact only when the recorder's start waits (the tables built
# before the command starts, the share mapped before its first launch: both bounded) end in
# time; tests beside it on two cores made them time out, and launches took fallbacks
set -u
# a pause before the first launch (fake_cuda_app.c): the mappings published first
export FAKE_CUDA_START_MS=${FAKE_CUDA_START_MS:-300}
cd "$(dirname "$0")/../.." || exit 1
NAME=test_inproc_walk
. tests/lib/inproc_e2e.sh
"$B/xpu-record" --help 2>&1 | grep -q -- '--launch-walk' ||
	fail "xpu-record has no --launch-walk option: the in-process launch walk is not in this build"
tmp=$(mktemp -d)
# KEEP=DIR: copy the traces there before cleaning up, to look at a failure
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$tmp"/*.jsonl "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
LIB=$(realpath "$B/libxpu-cupti.so")
NOFP=(-O2 -g -fomit-frame-pointer)
cc "${NOFP[@]}" -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc "${NOFP[@]}" -shared -fPIC -o "$tmp/libdeep.so" tests/e2e/inproc/deep_lib.c ||
	fail "cannot build deep_lib.c"
# linked: the start waits for these tables (see the top); dlopen() of them finds them loaded
cc "${NOFP[@]}" -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" tests/gpu/mock/fake_cuda_app.c \
	-Wl,--no-as-needed -L"$tmp" -Wl,-rpath,"$tmp" -lmockcupti -ldeep "$LIB" -ldl -lpthread ||
	fail "cannot build fake_cuda_app"
# the dlopen() run's program: nothing linked, as a CUDA program before cuInit()
cc "${NOFP[@]}" -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app_dl" \
	tests/gpu/mock/fake_cuda_app.c -ldl -lpthread || fail "cannot build fake_cuda_app_dl"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"
info() { "$B/xpu-report" -F info "$1" 2>/dev/null; }
# count TRACE KEY: the value of KEY in info (records or stats), empty when absent
count() { info "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }
joined() {
	"$B/xpu-report" "$1" 2>/dev/null | grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%'
}

# record LABEL SHAPE OPTS...: the app's run for SHAPE (flat or deep) into $tmp/LABEL.xpu, its
# launch lines into $tmp/LABEL.jsonl; checks the exit, the launch and kernel counts, the joins
PER=150		# launches per thread: 3 threads, 450 launches, under the 1024 stack copies
THREADS=2	# the dwarf run's ring holds, so that the oracle loses none whatever the load
record() {
	local label=$1 shape=$2 total=$((PER * (THREADS + 1))) k l lost
	shift 2
	local env=(FAKE_CUDA_THREADS=$THREADS)
	[ "$shape" = deep ] && env+=(FAKE_CUDA_DEPTH=25 FAKE_CUDA_DEEPLIB="$tmp/libdeep.so")
	env "${env[@]}" "$B/xpu-record" -F 99 "$@" -o "$tmp/$label.xpu" -- "$tmp/fake_cuda_app" \
		"$LIB" "$tmp/libmockcupti.so" $PER >"$tmp/$label.out" 2>"$tmp/$label.err" ||
		fail "$label: xpu-record $* exited $?: $(grep -v '^xpu-record: lost 5 GPU' "$tmp/$label.err" | head -3)"
	grep -q "bpf(): \|Operation not permitted" "$tmp/$label.err" &&
		skip "BPF unavailable: $(head -1 "$tmp/$label.err")"
	grep -qx "launches $total" "$tmp/$label.out" ||
		fail "$label: the app did not make its $total launches: $(cat "$tmp/$label.out")"
	k=$(count "$tmp/$label.xpu" gpu_kernel); l=$(count "$tmp/$label.xpu" gpu_launch)
	[ "$k" = $total ] && [ "$l" = $total ] ||
		fail "$label: want $total kernels and launches, got ${k:-0} and ${l:-0}"
	joined "$tmp/$label.xpu" || fail "$label: not every kernel was joined to its launch stack"
	lost=$(count "$tmp/$label.xpu" ringbuf_lost)
	[ "${lost:-0}" = 0 ] || fail "$label: $lost ring-buffer events lost"
	"$B/xpu-report" -F jsonl "$tmp/$label.xpu" 2>/dev/null | grep '"type":"launch"' \
		>"$tmp/$label.jsonl"
	[ "$(wc -l <"$tmp/$label.jsonl")" = $total ] ||
		fail "$label: want $total launch lines in jsonl, got $(wc -l <"$tmp/$label.jsonl")"
}

# compare A B: the launch stacks of two runs, cut below mock_api, as multisets; for run A
# also that every stack is the program's own shape (SHAPE: flat, or deep with DEPTH levels)
compare() {
	python3 - "$tmp/$1.jsonl" "$tmp/$2.jsonl" "$1" "$2" "$3" <<'PY'
import collections, json, sys

def cut(path, label):
    c = collections.Counter()
    for line in open(path):
        f = json.loads(line).get("frames", [])
        if "mock_api" not in f:
            sys.exit(f"{label}: a launch stack without mock_api (the fake libcupti): {f}")
        last = len(f) - 1 - f[::-1].index("mock_api")
        c[tuple(f[:last + 1])] += 1
    return c

a, b = cut(sys.argv[1], sys.argv[3]), cut(sys.argv[2], sys.argv[4])
shape = sys.argv[5]
# the program's own frames, outermost first: level k's function is fns[k % 6]
fns = ["deep_plain", "deep_alloca", "lib_deep_plain", "deep_aligned", "lib_deep_alloca",
       "lib_deep_aligned"]
levels = [fns[k % 6] for k in range(25, 0, -1)] if shape == "deep" else []
want = {"main": levels + ["launch_fake_kernel", "mock_api"],
        "launch_thread": levels + ["launch_fake_kernel", "mock_api"]}
bad = 0
for s, n in a.items():
    top = "main" if "main" in s else "launch_thread" if "launch_thread" in s else None
    i = s.index(top) if top else -1
    if top is None or list(s[i + 1:]) != want[top] or s[0] not in ("_start", "clone3", "clone"):
        print(f"  {sys.argv[3]}: {n} launches with a stack not the program's {shape} one: {';'.join(s)}")
        bad += n
na, nb = sum(a.values()), sum(b.values())
only_a, only_b = a - b, b - a
for name, only in ((sys.argv[3], only_a), (sys.argv[4], only_b)):
    for s, n in list(only.items())[:4]:
        print(f"  only {name}: {n} x {';'.join(s)}")
if bad or only_a or only_b or na != nb:
    sys.exit(f"{sys.argv[3]} vs {sys.argv[4]}: {na} and {nb} launches, {sum(only_a.values())} "
             f"and {sum(only_b.values())} whose stacks the other has not, {bad} not the program's")
PY
}

for shape in flat deep; do
	total=$((PER * (THREADS + 1)))
	record "$shape-inproc" $shape
	record "$shape-bpf" $shape --launch-walk=bpf
	record "$shape-dwarf" $shape -g dwarf
	compare "$shape-inproc" "$shape-bpf" $shape || bad "$shape: the in-process stacks are not the BPF walk's"
	compare "$shape-inproc" "$shape-dwarf" $shape || bad "$shape: the in-process stacks are not -g dwarf's"
	# the default run: every launch walked in process, none fallen back, dropped or lost
	# every launch walked in process, none dropped or lost; the one fallback allowed is a walk
	# that saw the recorder republish the process's mappings under it (a library mapped while
	# launches go on: when is up to the scheduler), which BPF then takes with the same stack
	t="$tmp/$shape-inproc.xpu"
	changed=$(count "$t" inproc_fallback_changed)
	for want in "inproc_walks $((total - ${changed:-0}))" "inproc_launches $((total - ${changed:-0}))" \
		"inproc_fallbacks ${changed:-0}" "inproc_events_dropped 0" "inproc_launches_lost 0"; do
		read -r key val <<<"$want"
		got=$(count "$t" "$key")
		[ "${got:-0}" = "$val" ] || bad "$shape: default run: $key: want $val, got '${got}'" \
			"($(info "$t" | grep -E '^  inproc_[a-z_]+ +[1-9]' | tr -s ' ' | tr '\n' ','))"
	done
	b=$(count "$tmp/$shape-inproc.xpu" inproc_event_bytes)
	[ "${b:-0}" -gt 0 ] || bad "$shape: default run: no inproc_event_bytes"
	# one launch in 16 of each thread timed (a thread's count starts at its first launch),
	# each taking some time; the text report says what they cost
	w=$(count "$t" inproc_walks); tm=$(count "$t" inproc_timed); tns=$(count "$t" inproc_timed_ns)
	[ "${tm:-0}" -le $((w / 16)) ] && [ "${tm:-0}" -ge $((w / 16 - THREADS - 1)) ] ||
		bad "$shape: default run: inproc_timed $tm for $w walks (want one in 16 a thread)"
	[ "${tns:-0}" -ge "${tm:-1}" ] || bad "$shape: default run: inproc_timed_ns '$tns' for $tm timed"
	"$B/xpu-report" "$t" 2>/dev/null | grep -qE "^# launches: +$w stacks walked in the launching thread, ${changed:-0} by BPF; the walk cost [0-9.]+ us a launch \($tm timed\)" ||
		bad "$shape: the text report has no launches line with the walk's cost"
	# --launch-walk=check: each launch walked both ways in one run, from the same stack: the
	# two stacks of every launch must be equal, frame for frame
	env FAKE_CUDA_THREADS=$THREADS $([ $shape = deep ] && echo FAKE_CUDA_DEPTH=25 FAKE_CUDA_DEEPLIB="$tmp/libdeep.so") \
		"$B/xpu-record" -F 99 --launch-walk=check -o "$tmp/$shape-check.xpu" -- "$tmp/fake_cuda_app" \
		"$LIB" "$tmp/libmockcupti.so" $PER >"$tmp/$shape-check.out" 2>"$tmp/$shape-check.err" ||
		bad "$shape: --launch-walk=check: xpu-record exited $?: $(head -3 "$tmp/$shape-check.err")"
	w=$(count "$tmp/$shape-check.xpu" inproc_walks)
	python3 tests/e2e/inproc/launch_walk_check.py --report "$B/xpu-report" --min-pairs "${w:-1}" \
		"$tmp/$shape-check.xpu" >"$tmp/$shape-check.txt" 2>&1 ||
		bad "$shape: --launch-walk=check: the two walks differ: $(cat "$tmp/$shape-check.txt")"
	[ "${w:-0}" -ge $((total - 2)) ] ||
		bad "$shape: --launch-walk=check: only ${w:-0} of $total launches walked in process"
	# --launch-walk=bpf: nothing in process (the stats may be left out when 0)
	for key in inproc_walks inproc_launches inproc_event_bytes; do
		got=$(count "$tmp/$shape-bpf.xpu" $key)
		[ "${got:-0}" = 0 ] || bad "$shape: --launch-walk=bpf: $key is $got, want 0"
	done
done

# the library loaded late by dlopen(), as CUDA loads it: counts only, whatever the timing
N=2000
"$B/xpu-record" -F 99 -o "$tmp/dl.xpu" -- "$tmp/fake_cuda_app_dl" "$LIB" "$tmp/libmockcupti.so" $N \
	>"$tmp/dl.out" 2>"$tmp/dl.err" ||
	fail "dlopen run: xpu-record exited $?: $(grep -v '^xpu-record: lost 5 GPU' "$tmp/dl.err" | head -3)"
grep -qx "launches $N" "$tmp/dl.out" ||
	fail "dlopen run: the app did not make its $N launches: $(cat "$tmp/dl.out") $(head -2 "$tmp/dl.err")"
k=$(count "$tmp/dl.xpu" gpu_kernel); l=$(count "$tmp/dl.xpu" gpu_launch)
[ "$k" = $N ] && [ "$l" = $N ] || fail "dlopen run: want $N kernels and launches, got ${k:-0} and ${l:-0}"
joined "$tmp/dl.xpu" || fail "dlopen run: not every kernel was joined to its launch stack"
read -r walks fbs reasons launches dropped lostl < <(info "$tmp/dl.xpu" | awk '
	$1 == "inproc_walks" { w = $2 } $1 == "inproc_fallbacks" { f = $2 }
	$1 ~ /^inproc_fallback_/ { r += $2 } $1 == "inproc_launches" { l = $2 }
	$1 == "inproc_events_dropped" { d = $2 } $1 == "inproc_launches_lost" { x = $2 }
	END { print w + 0, f + 0, r + 0, l + 0, d + 0, x + 0 }')
[ $((walks + fbs)) = $N ] && [ "$reasons" = "$fbs" ] && [ "$launches" = "$walks" ] &&
	[ "$dropped" = 0 ] && [ "$lostl" = 0 ] ||
	bad "dlopen run: $walks walked in process + $fbs fallbacks (reasons add to $reasons), want" \
		"$N in all; $launches in-process launches recorded, $dropped dropped, $lostl lost"
[ $failed = 0 ] || exit 1
echo "PASS $NAME: flat and 25-deep launches from 3 threads without frame pointers: in-process" \
	"stacks == BPF's == -g dwarf's, every launch walked in process; the late-loaded library's" \
	"$N launches all recorded ($walks in process, $fbs fallen back)"
