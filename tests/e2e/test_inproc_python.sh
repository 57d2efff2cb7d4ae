#!/usr/bin/env bash
# The in-process launch walk with Python frames (issue 38), without a GPU, under every CPython
# 3.10-3.13 that pyenv has (a missing one is skipped with a message; the test skips only when
# none is there): a script whose launches come through ctypes (tests/gpu/mock/fake_cuda_py.c,
# which injects libxpu-cupti.so over the fake libcupti as the CUDA driver does) from nested
# functions, a class method, a lambda and a generator driven by a for loop; first from the main
# thread alone, then from the main thread and a threading.Thread at once (ctypes lets the GIL
# go, so both walk at the same time, each its own frame chain). Recorded with the default
# (--launch-walk=inproc) and with --launch-walk=bpf. Checks, each launch's stack as
# xpu-report -F jsonl names it, cut below the fake libcupti's mock_api:
#  - in-process == bpf exactly, as multisets (native and Python frames, in their places);
#  - the script's frames are the ones it made, in order (<module>, main or worker, outer, steps,
#    the method, the lambda, launch_one; qualified names from 3.11 on), the right count of
#    each, and inside the interpreter's native frames (no _PyEval_EvalFrameDefault among them);
#  - the default run took every launch in process (inproc_walks == launches, no fallback, the
#    Python one included), --launch-walk=bpf none; every kernel joined.
# And one run of the interpreter itself, which dlopen()s everything late: every launch recorded
# and joined, each walked in process or counted as a fallback.
#
# The exact runs use tests/e2e/inproc/py_launcher.c, CPython's main() linked with the files the
# launches' stacks go through that Python would dlopen() late: xpu-record's start waits only
# for the command's DT_NEEDED tables, and a launch before a late file's table is built falls
# back (no_table), or takes BPF's frame-pointer fallback, at a time no test controls.
#
# test: exclusive: its counts are exact only when the recorder's start waits (the tables built
# before the command starts, the share mapped before its first launch: both bounded) end in
# time; tests beside it on two cores made them time out, and launches took fallbacks
set -u
cd "$(dirname "$0")/../.." || exit 1
NAME=test_inproc_python
. tests/lib/inproc_e2e.sh
"$B/xpu-record" --help 2>&1 | grep -q -- '--launch-walk' ||
	fail "xpu-record has no --launch-walk option: the in-process launch walk is not in this build"

. tests/lib/pyenv_pythons.sh
[ ${#pythons[@]} -gt 0 ] || skip "no CPython 3.10-3.13 under $pyenv_root/versions"

tmp=$(mktemp -d)
# KEEP=DIR: copy the traces there before cleaning up, to look at a failure
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$tmp"/*.jsonl "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
LIB=$(realpath "$B/libxpu-cupti.so")
NOFP=(-O2 -g -fomit-frame-pointer)
cc "${NOFP[@]}" -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
cc "${NOFP[@]}" -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libfake_cuda_py.so" \
	tests/gpu/mock/fake_cuda_py.c -ldl || fail "cannot build fake_cuda_py.c"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"

N=100		# launches of each outer(): 2 N from the main thread, N from the worker
cat >"$tmp/launches.py" <<'PY'
import ctypes, sys, threading

lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_py_launch.restype = ctypes.c_int
N = int(sys.argv[2])


def launch_one(i):
    if lib.fake_cuda_py_launch() <= 0:
        raise SystemExit("fake_cuda_py_launch failed")


class Model:
    def forward(self, i):
        return (lambda j: launch_one(j))(i)


def steps(model, n):
    for i in range(n):
        model.forward(i)
        yield i


def outer(n):
    m = Model()
    done = 0
    for _ in steps(m, n):
        done += 1
    return done


done = []


def worker():
    done.append(outer(N))


def main():
    # the main thread alone first: its first launch sets the injection up
    done.append(outer(N))
    t = threading.Thread(target=worker)
    t.start()
    done.append(outer(N))
    t.join()
    print("launches", sum(done))


main()
PY

info() { "$B/xpu-report" -F info "$1" 2>/dev/null; }
count() { info "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }
joined() {
	"$B/xpu-report" "$1" 2>/dev/null | grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%'
}

# record LABEL PYTHON OPTS...: the script's run into $tmp/LABEL.xpu and its launches' lines
# into $tmp/LABEL.jsonl; 0, or 1 after saying why
record() {
	local label=$1 py=$2 total=$((3 * N)) k l
	shift 2
	"$B/xpu-record" -F 99 "$@" -o "$tmp/$label.xpu" -- "$py" "$tmp/launches.py" \
		"$tmp/libfake_cuda_py.so" $N >"$tmp/$label.out" 2>"$tmp/$label.err" ||
		{ bad "$label: xpu-record $* exited $?: $(grep -v '^xpu-record: lost 5 GPU' "$tmp/$label.err" | head -3)"; return 1; }
	grep -q "bpf(): \|Operation not permitted" "$tmp/$label.err" &&
		skip "BPF unavailable: $(head -1 "$tmp/$label.err")"
	grep -qx "launches $total" "$tmp/$label.out" ||
		{ bad "$label: the script did not make its $total launches: $(cat "$tmp/$label.out") $(grep -v '^xpu-record' "$tmp/$label.err" | head -3)"; return 1; }
	k=$(count "$tmp/$label.xpu" gpu_kernel); l=$(count "$tmp/$label.xpu" gpu_launch)
	[ "$k" = $total ] && [ "$l" = $total ] ||
		{ bad "$label: want $total kernels and launches, got ${k:-0} and ${l:-0}"; return 1; }
	joined "$tmp/$label.xpu" || { bad "$label: not every kernel was joined to its launch stack"; return 1; }
	"$B/xpu-report" -F jsonl "$tmp/$label.xpu" 2>/dev/null | grep '"type":"launch"' \
		>"$tmp/$label.jsonl"
}

for py in "${pythons[@]}"; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	# the launcher: libpython3.N.so, and the late files linked in (see the top)
	read -r inc libdir shared ctypes_so < <("$py" -c '
import sysconfig as s, _ctypes
print(s.get_config_var("INCLUDEPY"), s.get_config_var("LIBDIR"), s.get_config_var("Py_ENABLE_SHARED"), _ctypes.__file__)')
	if [ "$shared" != 1 ] || [ ! -f "$inc/Python.h" ]; then
		echo "skip: CPython $v at $py has no shared libpython or no Python.h (built without --enable-shared)"
		continue
	fi
	mkdir -p "$tmp/py$v"
	launcher=$tmp/py$v/python$v
	cc -O2 -g -I"$inc" -o "$launcher" tests/e2e/inproc/py_launcher.c -L"$libdir" \
		-Wl,-rpath,"$libdir" -lpython$v -Wl,--no-as-needed "$ctypes_so" \
		"$tmp/libfake_cuda_py.so" "$tmp/libmockcupti.so" "$LIB" ||
		{ bad "$v: cannot build the launcher"; continue; }
	record "$v-inproc" "$launcher" || continue
	record "$v-bpf" "$launcher" --launch-walk=bpf || continue
	python3 - "$tmp/$v-inproc.jsonl" "$tmp/$v-bpf.jsonl" "$v" $N <<'PY' || bad "$v: see above"
import collections, json, sys

v, n = sys.argv[3], int(sys.argv[4])
qual = tuple(map(int, v.split("."))) >= (3, 11)
fwd = ["Model.forward", "Model.forward.<locals>.<lambda>"] if qual else ["forward", "<lambda>"]
tail = ["outer", "steps"] + fwd + ["launch_one"]
want = {("<module>", "main", *tail): 2 * n, ("worker", *tail): n}

def cut(path):
    c = collections.Counter()
    for line in open(path):
        f = json.loads(line).get("frames", [])
        if "mock_api" not in f:
            sys.exit(f"{v}: a launch stack without mock_api (the fake libcupti): {f}")
        last = len(f) - 1 - f[::-1].index("mock_api")
        c[tuple(f[:last + 1])] += 1
    return c

a, b = cut(sys.argv[1]), cut(sys.argv[2])
ok = True
# the script's frames: in order, the right count of each shape, between native frames
got = collections.Counter()
for s, k in a.items():
    py = [i for i, x in enumerate(s) if x.endswith(" (launches.py)")]
    names = tuple(s[i][:-len(" (launches.py)")] for i in py)
    inner = s[py[0]:py[-1] + 1] if py else ()
    # the C call below the last Python frame, an outermost frame above the first
    native = (bool(py) and "fake_cuda_py_launch" in s and s.index("fake_cuda_py_launch") > py[-1]
              and s[0] in ("_start", "clone3", "clone"))
    if names not in want or "_PyEval_EvalFrameDefault" in inner or not native:
        print(f"  {v}: {k} launches whose stack is not one the script made: {';'.join(s)}")
        ok = False
    got[names] += k
if dict(got) != want:
    print(f"  {v}: want {dict((';'.join(k), x) for k, x in want.items())},"
          f" got {dict((';'.join(k), x) for k, x in got.items())}")
    ok = False
for name, only in (("in-process", a - b), ("bpf", b - a)):
    for s, k in list(only.items())[:4]:
        print(f"  {v}: only {name}: {k} x {';'.join(s)}")
if a != b:
    print(f"  {v}: in-process and bpf launch stacks differ: {sum((a - b).values())} and"
          f" {sum((b - a).values())} launches whose stack the other has not")
    ok = False
sys.exit(0 if ok else 1)
PY
	total=$((3 * N))
	# every launch walked in process, none dropped or lost; the one fallback allowed is a walk
	# that saw the recorder republish the process's mappings under it (a library mapped while
	# launches go on: when is up to the scheduler), which BPF then takes with the same stack
	t="$tmp/$v-inproc.xpu"
	changed=$(count "$t" inproc_fallback_changed)
	for want in "inproc_walks $((total - ${changed:-0}))" "inproc_launches $((total - ${changed:-0}))" \
		"inproc_fallbacks ${changed:-0}" "inproc_fallback_python 0" "inproc_events_dropped 0" "inproc_launches_lost 0"; do
		read -r key val <<<"$want"
		got=$(count "$t" "$key")
		[ "${got:-0}" = "$val" ] || bad "$v: default run: $key: want $val, got '${got}'" \
			"($(info "$t" | grep -E '^  inproc_[a-z_]+ +[1-9]' | tr -s ' ' | tr '\n' ','))"
	done
	for key in inproc_walks inproc_launches inproc_event_bytes; do
		got=$(count "$tmp/$v-bpf.xpu" $key)
		[ "${got:-0}" = 0 ] || bad "$v: --launch-walk=bpf: $key is $got, want 0"
	done
	# --launch-walk=check: each launch walked both ways in one run, Python frames included:
	# the two stacks of every launch walked in process must be equal, frame for frame
	"$B/xpu-record" -F 99 --launch-walk=check -o "$tmp/$v-check.xpu" -- "$launcher" \
		"$tmp/launches.py" "$tmp/libfake_cuda_py.so" $N >"$tmp/$v-check.out" 2>&1 ||
		bad "$v: --launch-walk=check: xpu-record exited $?: $(tail -3 "$tmp/$v-check.out")"
	w=$(count "$tmp/$v-check.xpu" inproc_walks)
	[ "${w:-0}" -ge $((total - 1)) ] || bad "$v: --launch-walk=check: ${w:-0} of $total walked in process"
	python3 tests/e2e/inproc/launch_walk_check.py --report "$B/xpu-report" --min-pairs "${w:-1}" \
		"$tmp/$v-check.xpu" >"$tmp/$v-check.txt" 2>&1 ||
		bad "$v: --launch-walk=check: the two walks of a launch differ: $(cat "$tmp/$v-check.txt")"
	# the interpreter itself, everything dlopen()ed late: counts only, whatever the timing
	record "$v-plain" "$py" || continue
	read -r walks fbs reasons launches < <(info "$tmp/$v-plain.xpu" | awk '
		$1 == "inproc_walks" { w = $2 } $1 == "inproc_fallbacks" { f = $2 }
		$1 ~ /^inproc_fallback_/ { r += $2 } $1 == "inproc_launches" { l = $2 }
		END { print w + 0, f + 0, r + 0, l + 0 }')
	[ $((walks + fbs)) = $total ] && [ "$reasons" = "$fbs" ] && [ "$launches" = "$walks" ] ||
		bad "$v: plain interpreter: $walks walked in process + $fbs fallbacks (reasons add" \
			"to $reasons), want $total in all; $launches in-process launches recorded"
	echo "$v: done (plain interpreter: $walks of $total in process)"
done
[ $failed = 0 ] || exit 1
echo "PASS $NAME (${#pythons[@]} interpreters): ctypes launches from two threads, stacks with" \
	"Python frames in-process == bpf, every launch walked in process"
