#!/bin/bash
# JIT code (issue 10): perf maps and jitdumps read into the trace, and DWARF walks continued
# through code without CFI.
#  1. tests/e2e/jit/jit_target.c copies a loop with a frame pointer into anonymous executable
#     memory twice, names one copy in /tmp/perf-PID.map (after a malformed line) and the other
#     in a jitdump it maps: recorded with -g fp and with the default -g dwarf, its hot stacks
#     must be main;run;<the JIT name>, the DWARF ones from _start (libdw's own frame-pointer
#     guess carries them past the leaf), and the bad line counted. The -g fp run removes its
#     perf map before it exits: the recorder held it open from the jitdump's mapping on.
#  2. pyenv's CPython 3.12 with -X perf (its perf trampolines are JIT code without CFI or a
#     frame pointer): JIT symbols in the trace, no [unknown] frame among the top stacks, the
#     trampolines folded into their Python frames, stacks complete from _start through
#     Py_RunMain to the script's functions. Skipped with a message when 3.12 is missing.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
B=${BUILD:-build}
NAME=test_jit_maps
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
[ "$(uname -m)" = x86_64 ] || skip "the test's JIT emits x86-64 code"
tmp=$(mktemp -d) || exit 1
maps=()
trap 'rm -rf "$tmp"; rm -f "${maps[@]}"' EXIT
REC="$ROOT/$B/xpu-record"
REP="$ROOT/$B/xpu-report"

${CC:-cc} -O1 -g -fno-omit-frame-pointer -Wall -Wextra -o "$tmp/jit_target" \
	tests/e2e/jit/jit_target.c || fail "cannot build jit_target"

target_pid() { "$REP" -F info "$1" | awk '$1 == "target" && $2 == "pid" { print $3 }'; }
# weight of the folded lines matching a regex
weight() { grep -E "$2" "$1" | awk '{ s += $NF } END { print s + 0 }'; }

for mode in fp dwarf; do
	opt=(); rm=; [ $mode = fp ] && { opt=(-g fp); rm=rm; }
	t=$tmp/jit-$mode.xpu
	(cd "$tmp" && "$REC" --no-gpu "${opt[@]}" -o "$t" -- ./jit_target 1 $rm) >"$tmp/out" 2>"$tmp/err" ||
		{ grep -q "bpf(): \|Operation not permitted" "$tmp/err" &&
			  skip "BPF unavailable: $(head -1 "$tmp/err")"
		  fail "$mode: xpu-record exited $?: $(head -3 "$tmp/err")"; }
	pid=$(target_pid "$t")
	maps+=("/tmp/perf-$pid.map")
	"$REP" -F folded --view=cpu "$t" >"$tmp/f" 2>"$tmp/rerr" || fail "$mode: report: $(cat "$tmp/rerr")"
	"$REP" -F info "$t" >"$tmp/info" || fail "$mode: info"
	total=$(weight "$tmp/f" .)
	for name in jit_loop_from_map jit_loop_from_dump; do
		w=$(weight "$tmp/f" ";main;run;$name [0-9]+\$")
		[ $((w * 4)) -ge "$total" ] ||
			fail "$mode: main;run;$name has $w of $total samples:$(awk '{ print $NF "\t" $0 }' "$tmp/f" | sort -nr | head -5 | cut -f2-)"
		if [ $mode = dwarf ]; then
			w2=$(weight "$tmp/f" "^jit_target;_start;.*;main;run;$name [0-9]+\$")
			[ "$w2" = "$w" ] || fail "dwarf: $w2 of $w $name samples reach _start"
		fi
	done
	grep -Eq '^  jit_symbols +2$' "$tmp/info" || fail "$mode: JIT symbols: $(grep jit_ "$tmp/info")"
	grep -Eq '^  jit_skipped +1$' "$tmp/info" || fail "$mode: the malformed map line was not counted"
	[ -z "$rm" ] || [ ! -e "/tmp/perf-$pid.map" ] || fail "$mode: jit_target did not remove its map"
	echo "ok: jit_target -g $mode: both JIT names, $total samples${rm:+, its perf map removed before the end}"
done

py=$(ls -d "$HOME"/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1)
if [ -z "$py" ] || [ ! -x "$py" ]; then
	echo "skip: no pyenv CPython 3.12 under ~/.pyenv/versions: python -X perf not checked"
	exit 0
fi
cat >"$tmp/burn.py" <<'PY'
import time
def primes(n):
    c = 0
    for i in range(2, n):
        for j in range(2, int(i ** 0.5) + 1):
            if i % j == 0:
                break
        else:
            c += 1
    return c
def main():
    # CPU time: on a loaded machine start-up must not outweigh the loop
    t = time.process_time()
    while time.process_time() - t < 1.5:
        primes(20000)
main()
PY
t=$tmp/py.xpu
"$REC" --no-gpu -o "$t" -- "$py" -X perf "$tmp/burn.py" >/dev/null 2>"$tmp/err" ||
	fail "python: xpu-record exited $?: $(head -3 "$tmp/err")"
maps+=("/tmp/perf-$(target_pid "$t").map")
"$REP" -F folded --view=cpu "$t" >"$tmp/f" || fail "python: report"
"$REP" -F info "$t" >"$tmp/info" || fail "python: info"
n=$(awk '$1 == "jit_symbol" { print $2 }' "$tmp/info")
[ "${n:-0}" -gt 10 ] || fail "python: ${n:-no} JIT symbols"
top5() { awk '{ print $NF "\t" $0 }' "$1" | sort -nr | head -5 | cut -f2-; }
top5 "$tmp/f" >"$tmp/top"
grep -q '\[unknown\]\|\[anon\]' "$tmp/top" && fail "python: unnamed frames in the top stacks:
$(cut -c1-300 "$tmp/top")"
total=$(weight "$tmp/f" .)
# a trampoline stays a frame only where no Python frame follows it (a sample in the trampoline)
tw=$(weight "$tmp/f" ';py::')
[ $((tw * 100)) -le "$total" ] || fail "python: $tw of $total samples keep a trampoline frame:
$(grep -m3 ';py::' "$tmp/f" | sed 's/.*PyEval_EvalCode;//' | cut -c1-300)"
w=$(weight "$tmp/f" '^python3.12;_start;.*;Py_RunMain;.*;main \(burn.py\);.*primes \(burn.py\)')
[ $((w * 100)) -ge $((total * 80)) ] ||
	fail "python: $w of $total samples go from _start through Py_RunMain to primes:
$(cut -c1-400 "$tmp/top")"
# the trampolines have neither CFI nor a frame pointer: the walks resumed past them (the
# default -g cfi by its scan in BPF, an offline walk of a copy by its fp fallback)
grep -q '^  fp fallback ' "$tmp/info" || grep -Eq '^  cfi_scanned_frames +[1-9]' "$tmp/info" ||
	fail "python: neither the BPF walk's scan nor the offline fp fallback in info"
rate=$(awk '$1 == "complete" { gsub(/[(%),]/, "", $7); print int($7) }' "$tmp/info")
[ "${rate:-0}" -ge 90 ] || fail "python: complete rate ${rate:-?}% (want >= 90%)"
echo "ok: python3.12 -X perf: $n JIT symbols, $w of $total samples from _start to primes, complete $rate%"
exit 0
