#!/bin/bash
# Fuzzing: tests/fuzz/run.sh [SECONDS_PER_TARGET] (default 4, the short run of make test;
# `make fuzz FUZZ_SECONDS=N` gives each target N seconds, and CI's .ci/run a longer round of 30
# after make test, from the corpus that round left).
# Builds the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/, replays every input kept
# under tests/fuzz/regressions/TARGET/ (each once crashed a target; all must pass now), then
# fuzzes each target, seeded with committed traces, the seeds here and the golden synthetic
# and autograd traces (fuzz_pack: the entries of the committed symbol packs, by pack2seed). A
# new crash is saved as build-fuzz/crashes/TARGET-crash-* and fails the run: fix it, then copy
# the input into tests/fuzz/regressions/TARGET/.
# Exit 0 pass, 77 skip (no clang with libFuzzer), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-4}
FB=build-fuzz
TARGETS="reader report records output pack"
NAME=fuzz

command -v "${FUZZ_CC:-clang}" >/dev/null || { echo "SKIP $NAME: no clang"; exit 77; }
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
if ! make --no-print-directory fuzz-build >"$log" 2>&1; then
	if grep -q "fsanitize=fuzzer\|libclang_rt.fuzzer\|unsupported option" "$log"; then
		echo "SKIP $NAME: clang has no libFuzzer"; exit 77
	fi
	cat "$log"; echo "FAIL $NAME: cannot build the fuzz targets"; exit 1
fi

rc=0
# 1. regressions: each file once, must neither crash nor hang
for t in $TARGETS; do
	d=tests/fuzz/regressions/$t
	ls "$d"/* >/dev/null 2>&1 || continue
	n=$(ls "$d" | wc -l)
	if "$FB/fuzz_$t" -timeout=20 -close_fd_mask=3 "$d"/* >"$log" 2>&1; then
		echo "regressions $t: $n inputs pass"
	else
		grep -m1 -B2 -A12 "ERROR:\|runtime error\|deadly signal\|timeout" "$log"
		echo "FAIL $NAME: a regression input of fuzz_$t fails again"
		rc=1
	fi
done

# 2. seeds: real traces, their record streams for fuzz_records
seeds=$FB/seeds
mkdir -p "$seeds/xpu" "$seeds/records" "$FB/crashes"
for f in samples/traces/*.xpu tests/fuzz/seeds/*.xpu build/golden/synthetic.xpu \
	 build/golden/synthetic-cut.xpu build/golden/autograd.xpu; do
	[ -f "$f" ] || continue
	b=$(basename "$f" .xpu)
	cp "$f" "$seeds/xpu/$b.xpu"
	"$FB/trace2records" "$f" "$seeds/records/$b" 2>/dev/null || rm -f "$seeds/records/$b"
done

# fuzz_pack: the NAMES and WALKS entries of the committed symbol packs, each for its trace (the
# order of fuzz_pack.c's trace_names), an archive with no entries, one with a small ELF file
# as a whole-file entry, and NAMES_BY_FILE entries for the trace fuzz_pack writes (index 3)
mkdir -p "$seeds/pack"
printf '\0\0' >"$seeds/pack/empty"
printf 'int f(void) { return 1; }\nint g(void) { return f() + 1; }\n' |
	"${FUZZ_CC:-clang}" -x c -O1 -shared -fPIC -nostdlib -Wl,--build-id -o "$FB/tiny.so" - \
		2>/dev/null && "$FB/pack2seed" "$FB/tiny.so" 0 "$seeds/pack/tiny"
i=0
for b in pipeline pipeline-graph pipeline-static; do
	[ -f "samples/traces/$b.xpu.xpa" ] &&
		"$FB/pack2seed" "samples/traces/$b.xpu.xpa" $i "$seeds/pack/$b" 2>/dev/null
	i=$((i + 1))
done
# the last trace's file has no build-id: the first pack's names as its NAMES_BY_FILE entries
[ -f samples/traces/pipeline.xpu.xpa ] &&
	"$FB/pack2seed" samples/traces/pipeline.xpu.xpa 3 "$seeds/pack/noid" by-file 2>/dev/null

# 3. fuzz each target for SECS seconds, all at once (each is bounded by the clock, so one
# after another the round took five times as long for the same total of CPU the machine
# gives); the corpus under build-fuzz/corpus/ grows across runs
[ "$SECS" -gt 0 ] || exit $rc
for t in $TARGETS; do
	corpus=$FB/corpus/$t
	mkdir -p "$corpus"
	case $t in
	records|output) s=$seeds/records ;;
	pack) s=$seeds/pack ;;
	*) s=$seeds/xpu ;;
	esac
	( "$FB/fuzz_$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
		-close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$FB/crashes/$t-" \
		"$corpus" "$s" >"$log.$t" 2>&1; echo $? >"$log.$t.rc" ) &
done
wait
for t in $TARGETS; do
	r=$(cat "$log.$t.rc" 2>/dev/null || echo 1)
	mv "$log.$t" "$log"
	rm -f "$log.$t.rc"
	corpus=$FB/corpus/$t
	execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ $r = 0 ]; then
		echo "fuzz_$t: ${execs:-?} executions in ${SECS}s, $cov, corpus $(ls "$corpus" | wc -l)"
	else
		grep -m1 -A25 "ERROR:\|runtime error\|deadly signal\|timeout after" "$log"
		grep "Test unit written to" "$log"
		echo "FAIL $NAME: fuzz_$t found a crash (exit $r)"
		rc=1
	fi
done
exit $rc
