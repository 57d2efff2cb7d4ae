#!/usr/bin/env bash
# Runs every test: unit (no root: build/tests/test_* and tests/unit/test_*.sh), golden
# (committed traces), e2e (real eBPF; skip without root). Each test exits 0 (pass), 77 (skip,
# with a message) or anything else (fail).
# Prints one line per test (and a "...." line every PROGRESS_SECS, 30, while a test runs on)
# and a closing "N passed, N failed, N skipped"; with TEST_TOTALS=FILE, also appends the counts
# to FILE.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
PROGRESS_SECS=${PROGRESS_SECS:-30}
pass=0 fail=0 skip=0 failed=()

run() {
	local name=$1; shift
	local log; log=$(mktemp)
	local t0=$SECONDS next=$((SECONDS + PROGRESS_SECS)) pid rc
	# in the background, so a long test shows it is alive instead of a still screen
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if [ $SECONDS -ge $next ]; then
			printf '....  %-40s %3ss so far\n' "$name" $((SECONDS - t0))
			next=$((SECONDS + PROGRESS_SECS))
		fi
		sleep 0.2
	done
	wait $pid
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %3ss\n' "$name" $((SECONDS - t0)) ;;
	77) skip=$((skip + 1)); printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); printf 'FAIL  %-40s (exit %d)\n' "$name" $rc
	   # the lines that say what failed, wherever they are in a long log, then its end
	   grep -m 8 'FAIL' "$log" | sed 's/^/      ! /'
	   sed 's/^/      | /' "$log" | tail -n 40 ;;
	esac
	rm -f "$log"
}

only=${1:-}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	[ -n "$only" ] && [[ "$t" != *"$only"* ]] && continue
	run "unit/$(basename "$t")" "$t"
done
# NO_E2E=1 (the sanitizer pass of make test): unit and golden only.
for t in tests/unit/test_*.sh tests/golden/run.sh tests/gpu/mock/run.sh tests/fuzz/run.sh \
	 tests/e2e/test_*.sh; do
	[ -x "$t" ] || continue
	[ "${NO_E2E:-0}" = 1 ] && [ "$t" != tests/golden/run.sh ] && [[ "$t" != tests/unit/* ]] &&
		continue
	[ -n "$only" ] && [[ "$t" != *"$only"* ]] && continue
	run "${t#tests/}" "$t"
done
echo "${pass} passed, ${fail} failed, ${skip} skipped"
# make test runs this twice (plain, then sanitizers) and prints the sum of both at the end
[ -n "${TEST_TOTALS:-}" ] && echo "$pass $fail $skip ${failed[*]}" >>"$TEST_TOTALS"
[ "$fail" -eq 0 ]
