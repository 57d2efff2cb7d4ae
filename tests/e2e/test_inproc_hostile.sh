#!/usr/bin/env bash
# The in-process launch walk (issue 38) where it must not walk, without a GPU:
# tests/gpu/mock/fake_cuda_app (built without frame pointers) makes launch 0 and every 10th
# launch from a hostile place (FAKE_CUDA_HOSTILE, see fake_cuda_app.c), the rest from main:
#   sigaltstack     from a signal handler on a small sigaltstack (2 x AT_MINSIGSTKSZ, whole
#                   pages, a guard page below): the callback runs outside the thread's stack.
#                   Expected reason: off_stack (the walk's first read is off the thread's stack).
#   badfp           from assembly without CFI with rbp = 0x10. Expected: code_read (no FDE: the
#                   frame-pointer step needs its return-address check, code bytes), else
#                   off_stack (had it followed rbp).
#   badfp-cfi       from assembly whose CFI says CFA = rbp + 16, with rbp = 0x10. Expected:
#                   incomplete (the CFA is off the stack: the walk ends short of the outermost
#                   frame), else off_stack.
#   badra           from assembly (true CFI) whose return address reads 0x10 during the launch;
#   badra-unmapped  ... the address of an unmapped page. Expected: code_read (a pc in no mapping:
#                   the BPF walk scans the stack for a return address, code bytes), else
#                   incomplete or no_table.
#   nested          a hardware watchpoint on the launching function's return-address slot
#                   fires (SIGTRAP) as the in-process walk reads it, and the handler launches
#                   once more, in the middle of the walk. The interrupted walk must finish
#                   exactly; the handler's launch, a CUDA call inside a CUDA call of the same
#                   thread, takes no stack by the library's rule (one stack per outermost
#                   call: cupti/callbacks.c rt_depth), so its kernel stays without a launch.
#                   BPF reads the stack from the kernel, which the watchpoint leaves out.
# Each mode recorded with the default (--launch-walk=inproc) and with --launch-walk=bpf.
# Checks: the program exits 0 (no signal, no crash) and made its launches; every launch is
# recorded and every kernel joined (nested: the handler's kernels aside); in the default run
# exactly the hostile launches fell back (inproc_fallbacks == hostile, inproc_walks == the
# rest; on a busy machine, also launches made before the recorder published the process's
# tables, as no_share, and only those) for one of the reasons expected above (nested: none fell back, the watchpoint fired in
# every hostile launch's walk: nested == hostile); with --launch-walk=bpf nothing in process
# (nested: the watchpoint never fired). Stacks, cut below mock_api: every plain launch's is
# exactly _start..main;launch_fake_kernel;mock_api; every hostile launch's ends in its place's
# function, launch_fake_kernel, mock_api (nested: the whole stack, walked in process); the
# plain launches' stacks the same in both runs. A hostile launch's stack beyond its place is
# BPF's to find in both runs and is not compared: launches made before xpu-record publishes
# the process's mappings to BPF walk by frame pointers and are finished offline from stack
# copies, which cannot cross from a sigaltstack to the thread's stack.
#
# test: exclusive: its counts are exact only when the recorder's start waits (the tables built
# before the command starts, the share mapped before its first launch: both bounded) end in
# time; tests beside it on two cores made them time out, and launches took fallbacks
set -u
# a pause before the first launch (fake_cuda_app.c): the mappings published first
export FAKE_CUDA_START_MS=${FAKE_CUDA_START_MS:-300}
cd "$(dirname "$0")/../.." || exit 1
NAME=test_inproc_hostile
. tests/lib/inproc_e2e.sh
[ "$(uname -m)" = x86_64 ] || skip "the hostile callers are x86-64 assembly"
"$B/xpu-record" --help 2>&1 | grep -q -- '--launch-walk' ||
	fail "xpu-record has no --launch-walk option: the in-process launch walk is not in this build"
tmp=$(mktemp -d)
# KEEP=DIR: copy the traces there before cleaning up, to look at a failure
trap '[ -n "${KEEP:-}" ] && cp "$tmp"/*.xpu "$tmp"/*.jsonl "$KEEP"/ 2>/dev/null; rm -rf "$tmp"' EXIT
LIB=$(realpath "$B/libxpu-cupti.so")
NOFP=(-O2 -g -fomit-frame-pointer)
cc "${NOFP[@]}" -shared -fPIC -I"$CUDA_HOME/include" -o "$tmp/libmockcupti.so" \
	tests/gpu/mock/mock_cupti.c -lpthread || fail "cannot build the fake libcupti"
# linked with the libraries it would dlopen(), so that the start waits for their tables
# (tests/e2e/test_inproc_walk.sh says why)
cc "${NOFP[@]}" -I"$CUDA_HOME/include" -o "$tmp/fake_cuda_app" tests/gpu/mock/fake_cuda_app.c \
	-Wl,--no-as-needed -L"$tmp" -Wl,-rpath,"$tmp" -lmockcupti "$LIB" -ldl -lpthread ||
	fail "cannot build fake_cuda_app"
export XPU_CUPTI_LIB="$tmp/libmockcupti.so"
info() { "$B/xpu-report" -F info "$1" 2>/dev/null; }
count() { info "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }
joined() {
	"$B/xpu-report" "$1" 2>/dev/null | grep -qE '^  kernels +[0-9]+ +[0-9]+ +100\.00%'
}

N=200 H=20	# launches, hostile ones (launch 0 and every 10th: ids 1, 11, 21, ...)
# the hostile place's function, right above launch_fake_kernel
declare -A PLACE=([sigaltstack]=on_hostile_signal [badfp]=fake_badfp_call
	[badfp-cfi]=fake_badfp_cfi_call [badra]=fake_badra_call [badra-unmapped]=fake_badra_call
	[nested]=watch_launch)
# the fallback reasons each mode may count (see the top)
declare -A REASONS=([sigaltstack]="off_stack" [badfp]="code_read off_stack"
	[badfp-cfi]="incomplete off_stack" [badra]="code_read incomplete no_table"
	[badra-unmapped]="code_read incomplete no_table" [nested]="")
# the nested mode needs a hardware watchpoint: without one it is skipped (with a message)
modes=(sigaltstack badfp badfp-cfi badra badra-unmapped nested)
FAKE_CUDA_HOSTILE=nested XPU_CUPTI_SOCKET= "$tmp/fake_cuda_app" "$LIB" "$tmp/libmockcupti.so" 1 \
	>/dev/null 2>"$tmp/watch.err" ||
	{ echo "skip: nested: $(grep -m1 'watchpoint' "$tmp/watch.err" || head -1 "$tmp/watch.err")"
	  modes=(sigaltstack badfp badfp-cfi badra badra-unmapped); }

done_modes=()
for mode in "${modes[@]}"; do
	for walk in inproc bpf; do
		label=$mode-$walk
		FAKE_CUDA_HOSTILE=$mode "$B/xpu-record" -F 99 --launch-walk=$walk -o "$tmp/$label.xpu" -- \
			"$tmp/fake_cuda_app" "$LIB" "$tmp/libmockcupti.so" $N >"$tmp/$label.out" 2>"$tmp/$label.err"
		rc=$?
		grep -q "bpf(): \|Operation not permitted" "$tmp/$label.err" &&
			skip "BPF unavailable: $(head -1 "$tmp/$label.err")"
		# xpu-record exits with the command's status (128 + N for a signal)
		[ $rc = 0 ] || { bad "$label: the program exited $rc: $(grep -v '^xpu-record: lost 5 GPU' "$tmp/$label.err" | head -3)"; continue; }
		grep -qx "launches $N" "$tmp/$label.out" && grep -qx "hostile $H" "$tmp/$label.out" ||
			{ bad "$label: want $N launches, $H hostile: $(cat "$tmp/$label.out")"; continue; }
		nested=0
		if [ $mode = nested ]; then
			nested=$(awk '$1 == "nested" { print $2 }' "$tmp/$label.out")
			want=$H; [ $walk = bpf ] && want=0
			[ "$nested" = $want ] || bad "$label: the watchpoint fired in ${nested:-0} walks, want $want"
		fi
		k=$(count "$tmp/$label.xpu" gpu_kernel); l=$(count "$tmp/$label.xpu" gpu_launch)
		[ "$k" = $((N + nested)) ] && [ "$l" = $N ] ||
			bad "$label: want $((N + nested)) kernels and $N launches, got ${k:-0} and ${l:-0}"
		[ "$nested" != 0 ] || joined "$tmp/$label.xpu" ||
			bad "$label: not every kernel was joined to its launch stack"
		"$B/xpu-report" -F jsonl "$tmp/$label.xpu" 2>/dev/null | grep '"type":"launch"' \
			>"$tmp/$label.jsonl"
		if [ $walk = inproc ]; then
			fb=$H; [ $mode = nested ] && fb=0
			got_w=$(count "$tmp/$label.xpu" inproc_walks); got_f=$(count "$tmp/$label.xpu" inproc_fallbacks)
			sum=0
			for r in ${REASONS[$mode]}; do
				v=$(count "$tmp/$label.xpu" inproc_fallback_$r)
				sum=$((sum + ${v:-0}))
			done
			# A busy machine: launches made before the recorder had published the
			# process's tables fall back as no_share (counted, BPF walks them). Those are
			# the only fallbacks allowed beyond the hostile ones; idle, there are none.
			ns=0
			case " ${REASONS[$mode]} " in *" no_share "*) ;; *)
				ns=$(count "$tmp/$label.xpu" inproc_fallback_no_share); ns=${ns:-0} ;;
			esac
			[ "$ns" = 0 ] || echo "note: $label: $ns launches fell back before the recorder" \
				"published the process's tables (no_share: a busy machine)"
			# A busier one: the start gate gave up waiting for the first tables
			# (cfi_start_wait_timeouts, record/cfi/cfi_part.c), so launches made before
			# a file's table was built end short of the outermost frame and fall back
			# as incomplete or no_table (BPF walks them): then any number of those is
			# allowed beside the hostile ones, and said.
			maxf=$((fb + ns))
			if [ "$(count "$tmp/$label.xpu" cfi_start_wait_timeouts)" -gt 0 ] 2>/dev/null; then
				for r in incomplete no_table; do
					case " ${REASONS[$mode]} " in *" $r "*) continue ;; esac
					v=$(count "$tmp/$label.xpu" inproc_fallback_$r)
					sum=$((sum + ${v:-0}))
				done
				maxf=$N
				echo "note: $label: the start was released before the first tables were" \
					"built (cfi_start_wait_timeouts): ${got_f:-0} fallbacks, $fb of them hostile"
			fi
			[ $(( ${got_w:-0} + ${got_f:-0} )) = $N ] && [ "${got_f:-0}" -ge $fb ] &&
				[ "${got_f:-0}" -le $maxf ] && [ $((sum + ns)) = "${got_f:-0}" ] ||
				bad "$label: want $((N - fb)) walked in process and $fb fallbacks," \
					"${REASONS[$mode]:-none} only; got ${got_w:-0} and ${got_f:-0}" \
					"($(info "$tmp/$label.xpu" | grep -E '^  (inproc_fallback_[a-z_]+|cfi_start_wait_[a-z]+|cfi_build_ns) +[1-9]' | tr -s ' ' | tr '\n' ','))"
			[ "$(count "$tmp/$label.xpu" inproc_launches)" = "${got_w:-0}" ] &&
				[ "$(count "$tmp/$label.xpu" inproc_events_dropped)" = 0 ] ||
				bad "$label: $(count "$tmp/$label.xpu" inproc_launches) in-process launches recorded" \
					"(${got_w:-0} walked), $(count "$tmp/$label.xpu" inproc_events_dropped) dropped"
		else
			got_w=$(count "$tmp/$label.xpu" inproc_walks)
			[ "${got_w:-0}" = 0 ] || bad "$label: $got_w launches walked in process with --launch-walk=bpf"
		fi
		grep -h '^altstack used' "$tmp/$label.out" | sed "s/^/$label: /"
	done
	[ -s "$tmp/$mode-inproc.jsonl" ] && [ -s "$tmp/$mode-bpf.jsonl" ] || continue
	python3 - "$tmp/$mode-inproc.jsonl" "$tmp/$mode-bpf.jsonl" "$mode" "${PLACE[$mode]}" <<'PY' ||
import collections, json, sys

mode, place = sys.argv[3], sys.argv[4]
plain = ["main", "launch_fake_kernel", "mock_api"]
ok = True

def stacks(path, label):
    global ok
    c = collections.Counter()
    for line in open(path):
        e = json.loads(line)
        f, corr = e.get("frames", []), e["correlation_id"]
        if "mock_api" not in f:
            print(f"  {label}: launch {corr}: no mock_api (the fake libcupti): {f}")
            ok = False
            continue
        last = len(f) - 1 - f[::-1].index("mock_api")
        f = f[:last + 1]
        hostile = corr % 10 == 1
        if not hostile:
            good = f[0] == "_start" and "main" in f and f[f.index("main"):] == plain
        elif mode == "nested" and label.endswith("inproc"):
            # walked in process, the watchpoint's signal and all
            good = f[0] == "_start" and "main" in f and \
                f[f.index("main"):] == ["main", "hostile_launch", place] + plain[1:]
        else:
            good = f[-3:] == [place] + plain[1:]
        if not good:
            print(f"  {label}: {'hostile' if hostile else 'plain'} launch {corr}: {';'.join(f)}")
            ok = False
        if not hostile:
            c[tuple(f)] += 1
    return c

a = stacks(sys.argv[1], mode + "-inproc")
b = stacks(sys.argv[2], mode + "-bpf")
if a != b:
    print(f"  {mode}: the plain launches' stacks differ between the runs: {dict(a - b)} and {dict(b - a)}")
    ok = False
sys.exit(0 if ok else 1)
PY
		{ bad "$mode: launch stacks (see above)"; continue; }
	done_modes+=("$mode")
done
[ $failed = 0 ] || exit 1
echo "PASS $NAME: ${done_modes[*]}: the program unharmed, every launch recorded, exactly the" \
	"hostile ones taken by BPF, for the reasons expected"
