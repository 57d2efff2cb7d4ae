#!/usr/bin/env bash
# Runs every test: unit (no root: build/tests/test_* and tests/unit/test_*.sh), golden
# (committed traces), e2e (real eBPF; skip without root). Each test exits 0 (pass), 77 (skip,
# with a message) or anything else (fail).
#
# Independent tests run in parallel, TEST_JOBS at a time (default: the CPU count + 1), longest
# first by the times of the last run ($BUILD/test-times, else the committed
# tests/test-times.seed), so that a long test does not start last and run on alone. A test whose file has the line
#     # test: exclusive <reason>        (shell)     // test: exclusive <reason>    (C)
# runs afterwards, alone on the machine: the reason says what it measures that other tests
# would disturb.
#
# Prints one line per test as it ends (PASS/SKIP/FAIL, with its time), a "...." line every
# PROGRESS_SECS (30) naming the tests still running, then the failed tests' output grouped
# under "== FAILED", then the closing "N passed, N failed, N skipped"; with TEST_TOTALS=FILE,
# also appends the counts to FILE. With TEST_CPU=1 (root, and a cgroup2 or cgroup v1 cpuacct
# mount), each test runs in a cgroup of its own and its line also says the CPU seconds of all
# its processes (a browser's too, which rusage misses), written to $BUILD/test-cpu.
# Usage: tests/run-tests.sh [NAME-PART]   runs only the tests whose path contains NAME-PART.
# TEST_TIER=check: the quick tier of `make check` (unit, golden, walker, a few e2e).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
PROGRESS_SECS=${PROGRESS_SECS:-30}
# one more job than CPUs: a third of a test's time is waits (recordings starting, browsers),
# which a third job fills (2 cores: 570 s for make test at 2 jobs, 513 s at 3, 517 s at 4)
JOBS=${TEST_JOBS:-$(($(nproc 2>/dev/null || echo 2) + 1))}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "TEST_JOBS must be a positive number, not '$JOBS'" >&2; exit 2; }
TIER=${TEST_TIER:-all}
# the e2e tests of the quick tier: each covers a path the edit loop breaks most (record and
# report a C program, the recorder's output files, a DWARF unwind, frame names, diff, the GPU
# mock) in seconds; test_python_frames (20 recordings, minutes) is left to make test
CHECK_E2E=" test_record_cpu test_record_output test_dwarf test_names test_diff test_gpu_mock_record test_cuda_graphs_mock "
pass=0 fail=0 skip=0 failed=()
logs=$(mktemp -d) || exit 1
# the tests' own children are theirs to end; ours are the test jobs we started and the
# TEST_BACKGROUND job's process group
bg_pid="" cg_root=""
cleanup() {
	local p d
	for p in "${!running[@]}"; do kill -- "$p" 2>/dev/null; done
	[ -n "$bg_pid" ] && kill -- -"$bg_pid" 2>/dev/null
	rm -rf "$logs"
	[ -n "$cg_root" ] || return 0
	for d in "$cg_root"/*/; do rmdir "$d"; done 2>/dev/null
	for p in $(<"$cg_root/cgroup.procs"); do echo "$p" >"$cg_top/cgroup.procs"; done 2>/dev/null
	rmdir "$cg_root" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

names=() cmds=() excl=() bdirs=()
# add NAME FILE-WITH-THE-MARK CMD...   (a test of the build directory in $bd)
add() {
	local name=$1 src=$2; shift 2
	names+=("$name"); cmds+=("$*"); bdirs+=("$bd")
	if [ -f "$src" ] && grep -qE '^(#|//) test: exclusive' "$src"; then excl+=(1); else excl+=(0); fi
}
# a test's key in the times: its build directory and name
key() { echo "${bdirs[$1]} ${names[$1]}"; }

# The rest in one block, read whole before it runs: bash reads a script as it goes, and a
# checkout or an edit of this file during the minutes of a run would change what it reads next.
{
only=${1:-}
# enumerate BUILD_DIR NO_E2E: the tests of one build directory; a directory other than
# $BUILD's runs its tests with BUILD set to it
enumerate() {
	local bd=$1 no_e2e=$2 t b src pre=""
	[ "$bd" = "$BUILD" ] || pre="env BUILD=$bd "
for t in "$bd"/tests/test_*; do
	[ -x "$t" ] || continue
	[ -n "$only" ] && [[ "$t" != *"$only"* ]] && continue
	b=$(basename "$t")
	src=$(ls tests/unit/"$b".c tests/walker/"$b".c 2>/dev/null | head -1)
	add "unit/$b" "${src:-}" "$pre$t"
done
# NO_E2E=1 (the sanitizer pass of make test): unit and golden only.
for t in tests/unit/test_*.sh tests/golden/run.sh tests/gpu/mock/run.sh tests/fuzz/run.sh \
	 tests/e2e/test_*.sh; do
	[ -x "$t" ] || continue
	[ "$no_e2e" = 1 ] && [ "$t" != tests/golden/run.sh ] && [[ "$t" != tests/unit/* ]] &&
		continue
	if [ "$TIER" = check ] && [[ "$t" == tests/e2e/* ]]; then
		b=$(basename "$t" .sh)
		[[ "$CHECK_E2E" == *" $b "* ]] || continue
	fi
	# the fuzz round is minutes of CPU for the full run only
	[ "$TIER" = check ] && [ "$t" = tests/fuzz/run.sh ] && continue
	[ -n "$only" ] && [[ "$t" != *"$only"* ]] && continue
	add "${t#tests/}" "$t" "$pre$t"
done
}
enumerate "$BUILD" "${NO_E2E:-0}"

# the last run's times, "NAME SECONDS" lines; where it lacks a test (a fresh clone has none),
# the committed seed's time for this build directory (tests/test-times.seed: "build" lines,
# or "build-san" for the sanitizer pass; `make test-times-seed` refreshes it); a test in
# neither counts as long (unknown)
declare -A last=() seed=()
# load_times BUILD_DIR: its last run's times and the seed's lines for it, keyed "DIR NAME"
load_times() {
	local bd=$1 n s d sd
	if [ -r "$bd/test-times" ]; then
		while read -r n s; do last["$bd $n"]=$s; done <"$bd/test-times"
	fi
	sd=${bd%/}; sd=${sd##*/}
	[ -r tests/test-times.seed ] && grep -q "^$sd " tests/test-times.seed || sd=build
	if [ -r tests/test-times.seed ]; then
		while read -r d n s; do
			[ "$d" = "$sd" ] && seed["$bd $n"]=$s
		done < <(grep -v '^#' tests/test-times.seed)
	fi
}
load_times "$BUILD"
declare -A queued=()
order() {	# EXCLUSIVE(0|1) -> the indexes of those tests not yet queued, longest first
	local i k
	for i in "${!names[@]}"; do
		[ -n "${queued[$i]:-}" ] && continue
		k=$(key "$i")
		[ "${excl[$i]}" = "$1" ] && echo "${last[$k]:-${seed[$k]:-9999}} $i"
	done | sort -k1,1nr -k2,2n | awk '{ print $2 }'
}

declare -A running=() started=()
declare -A took=() cpu=()
# TEST_CPU=1: the cgroup tree whose children count each test's CPU time (cpu.stat's
# usage_usec under cgroup2, cpuacct.usage's nanoseconds under v1), else none
cg_kind=""
if [ "${TEST_CPU:-0}" = 1 ]; then
	while read -r _ mnt fs opts _; do
		if [ "$fs" = cgroup2 ] && [ -z "$cg_root" ]; then cg_root=$mnt cg_kind=2
		elif [ "$fs" = cgroup ] && [[ ",$opts," == *,cpuacct,* ]]; then cg_root=$mnt cg_kind=1; break
		fi
	done </proc/mounts
	if [ -n "$cg_root" ] && mkdir "$cg_root/xpu-tests.$$" 2>/dev/null; then
		cg_top=$cg_root cg_root=$cg_root/xpu-tests.$$
	else
		echo "TEST_CPU=1: no cgroup to count CPU time in (needs root and a cgroup mount)" >&2
		cg_root=""
	fi
fi
# cg_cpu I: the CPU seconds test I's cgroup counted, then the cgroup removed (a process the
# test left goes to the parent first)
cg_cpu() {
	local d=$cg_root/$1 p us
	if [ $cg_kind = 2 ]; then us=$(awk '$1 == "usage_usec" { print $2 }' "$d/cpu.stat")
	else us=$(($(<"$d/cpuacct.usage") / 1000)); fi
	for p in $(<"$d/cgroup.procs"); do echo "$p" >"$cg_root/cgroup.procs"; done 2>/dev/null
	rmdir "$d" 2>/dev/null
	awk -v u="${us:-0}" 'BEGIN { printf "%.1f", u / 1e6 }'
}
# start I: in the background, its output to its own log, so tests never interleave
start() {
	local i=$1
	# the exit status goes to a file: a pid alone can be reused by then on a busy machine
	[ -n "$cg_root" ] && mkdir "$cg_root/$i"
	( [ -n "$cg_root" ] && echo $BASHPID >"$cg_root/$i/cgroup.procs"
	  ${cmds[$i]} >"$logs/$i.log" 2>&1 </dev/null; echo $? >"$logs/$i.rc" ) &
	running[$!]=$i
	started[$!]=$SECONDS
}
# finish PID RC: the test's line, and its log kept for the failure report
finish() {
	local pid=$1 rc=$2 i=${running[$1]} s=$((SECONDS - ${started[$1]}))
	unset "running[$pid]" "started[$pid]"
	local name=${names[$i]}
	took[$(key "$i")]=$s
	[ "${bdirs[$i]}" = "$BUILD" ] || name="$name (${bdirs[$i]})"
	local c=""
	[ -n "$cg_root" ] && { cpu[$name]=$(cg_cpu "$i"); c=" ${cpu[$name]} cpu-s"; }
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %4ss%s\n' "$name" $s "$c" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %-40s %4ss%s  %s\n' "$name" $s "$c" "$(tail -n 1 "$logs/$i.log")" ;;
	*) fail=$((fail + 1)); failed+=("$i")
	   printf 'FAIL  %-40s %4ss%s  (exit %d; output below)\n' "$name" $s "$c" $rc ;;
	esac
}
# reap: waits for one test to end (at most until the next progress line is due)
next_progress=$((SECONDS + PROGRESS_SECS))
reap() {
	local pid rc
	while :; do
		for pid in "${!running[@]}"; do
			if [ -s "$logs/${running[$pid]}.rc" ]; then
				wait "$pid" 2>/dev/null
				rc=$(<"$logs/${running[$pid]}.rc")
				finish "$pid" "$rc"
				return
			fi
		done
		if [ $SECONDS -ge $next_progress ]; then
			local p list=""
			for p in "${!running[@]}"; do
				list+=" ${names[${running[$p]}]}($((SECONDS - ${started[$p]}))s)"
			done
			printf '....  running:%s\n' "$list"
			next_progress=$((SECONDS + PROGRESS_SECS))
		fi
		# polling, not wait -n: that cannot time out for the progress line, and a short
		# sleep costs nothing next to tests of seconds
		sleep 0.2
	done
}
# run_set JOBS EXCLUSIVE: every test of that kind, and those TEST_AFTER_BACKGROUND adds on
# the way (the queue is ordered again when they come)
run_set() {
	local jobs=$1 i q
	while :; do
		after_bg_check
		q=$(order "$2")
		if [ -z "$q" ]; then
			# nothing left to start: the background's tests may still come
			if [ "$2" = 0 ] && [ -n "$after_bg" ] && [ -z "$after_bg_added" ]; then
				while [ ${#running[@]} -gt 0 ] && ! after_bg_check; do reap; done
				[ -n "$after_bg_added" ] || { bg_wait; after_bg_check; }
				continue
			fi
			break
		fi
		for i in $q; do
			while [ ${#running[@]} -ge "$jobs" ]; do reap; done
			queued[$i]=1
			start "$i"
			# the background's tests join as soon as its build is done
			[ -n "$after_bg" ] && [ -z "$after_bg_added" ] && after_bg_check && break
		done
	done
	while [ ${#running[@]} -gt 0 ]; do reap; done
}

# TEST_BACKGROUND=CMD (make test: the sanitizer pass's build) runs beside the tests from the
# start, at idle priority (SCHED_IDLE where chrt can set it, and nice 19): it takes the CPU
# time the tests leave while they wait (recordings, sleeps, browsers), not theirs. It ends
# before the exclusive tests, which must have the machine alone (waited for there, and in any
# case before this script exits); its output goes to $BUILD/test-background.log, and what it
# made is for the caller to check (make test runs the same build again, then a no-op).
bg_wait() {
	[ -n "$bg_pid" ] || return 0
	local t=$SECONDS
	wait "$bg_pid"
	local rc=$?
	# the command's own status (the wrapper around it exits 0 once it has written it)
	[ -s "$logs/bg.rc" ] && rc=$(<"$logs/bg.rc")
	bg_rc=$rc
	[ $((SECONDS - t)) -gt 1 ] && echo "== waited $((SECONDS - t))s for TEST_BACKGROUND"
	[ $rc = 0 ] || echo "== TEST_BACKGROUND exited $rc (its output: $BUILD/test-background.log)"
	bg_pid=""
}
# TEST_AFTER_BACKGROUND=DIR (make test: build-san): once TEST_BACKGROUND has ended well, the
# unit and golden tests of build directory DIR (NO_E2E's set: the sanitizer pass) join the
# queue of the tests not yet started, so that they fill the same job slots instead of a second
# run after this one; if it failed, that is one failed test, named for it.
after_bg=${TEST_AFTER_BACKGROUND:-} after_bg_added=""
after_bg_check() {	# 0 once the background's tests are in (or there are none to add)
	[ -n "$after_bg" ] || return 0
	[ -n "$after_bg_added" ] && return 0
	# its exit status in a file: a pid that has exited is still there until waited for
	[ -n "$bg_pid" ] && [ ! -s "$logs/bg.rc" ] && return 1
	bg_wait
	after_bg_added=1
	if [ "$bg_rc" = 0 ]; then
		local n0=${#names[@]}
		enumerate "$after_bg" 1
		load_times "$after_bg"
		echo "== TEST_BACKGROUND done: $((${#names[@]} - n0)) tests of $after_bg join the queue"
	else
		fail=$((fail + 1)); failed_bg=1
		printf 'FAIL  %-40s (TEST_BACKGROUND exited %s: its tests cannot run)\n' "$after_bg" "$bg_rc"
	fi
	return 0
}
failed_bg=""
bg_rc=0
if [ -n "${TEST_BACKGROUND:-}" ]; then
	idle=(nice -n 19)
	chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0 nice -n 19)
	mkdir -p "$BUILD"
	# a process group of its own (setsid), for the cleanup to end all of it
	export TEST_BACKGROUND BG_RC_FILE=$logs/bg.rc
	setsid "${idle[@]}" bash -c 'bash -c "$TEST_BACKGROUND"; echo $? >"$BG_RC_FILE"' \
		>"$BUILD/test-background.log" 2>&1 </dev/null &
	bg_pid=$!
	echo "== beside the tests, at idle priority: $TEST_BACKGROUND"
fi

t0=$SECONDS
nex=0; for e in "${excl[@]}"; do [ "$e" = 1 ] && nex=$((nex + 1)); done
echo "== ${#names[@]} tests: $((${#names[@]} - nex)) of them ${JOBS} at a time (TEST_JOBS), then $nex exclusive, alone${after_bg:+; those of $after_bg join once its build is done}"
run_set "$JOBS" 0
bg_wait
after_bg_check
nex=0; for e in "${excl[@]}"; do [ "$e" = 1 ] && nex=$((nex + 1)); done
[ "$nex" -gt 0 ] && { echo "== exclusive tests, one at a time"; run_set 1 1; }

if [ -n "$failed_bg" ]; then
	echo "== FAILED: TEST_BACKGROUND (exit $bg_rc), the end of $BUILD/test-background.log"
	tail -n 40 "$BUILD/test-background.log" | sed 's/^/      | /'
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "== FAILED: ${#failed[@]} test(s); each one's output"
	for i in "${failed[@]}"; do
		echo "---- ${names[$i]}"
		# the lines that say what failed, wherever they are in a long log, then its end
		grep -m 8 'FAIL' "$logs/$i.log" | sed 's/^/      ! /'
		sed 's/^/      | /' "$logs/$i.log" | tail -n 60
	done
fi
# this run's times for the next run's order, each build directory's in its own file (a
# filtered run adds to them, not replaces them)
for k in "${!took[@]}"; do last[$k]=${took[$k]}; done
for bd in "$BUILD" ${after_bg_added:+"$after_bg"}; do
	[ -d "$bd" ] || continue
	for k in "${!last[@]}"; do
		[ "${k%% *}" = "$bd" ] && echo "${k#* } ${last[$k]}"
	done | sort >"$bd/test-times.$$" && mv "$bd/test-times.$$" "$bd/test-times"
done
if [ -n "$cg_root" ] && [ -d "$BUILD" ]; then
	for n in "${!cpu[@]}"; do echo "$n ${cpu[$n]}"; done | sort -k2,2nr >"$BUILD/test-cpu"
	echo "(CPU: $(awk '{ s += $2 } END { printf "%.0f", s }' "$BUILD/test-cpu") s in all, per test in $BUILD/test-cpu)"
fi
failed_names=()
for i in "${failed[@]}"; do failed_names+=("${names[$i]}"); done
[ -n "$failed_bg" ] && failed_names+=("$after_bg")
echo "($((SECONDS - t0))s, $JOBS at a time)"
echo "${pass} passed, ${fail} failed, ${skip} skipped"
# make test runs this twice (plain, then sanitizers) and prints the sum of both at the end
[ -n "${TEST_TOTALS:-}" ] && echo "$pass $fail $skip ${failed_names[*]}" >>"$TEST_TOTALS"
[ "$fail" -eq 0 ]
exit
}
