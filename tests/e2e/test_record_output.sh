#!/bin/bash
# Where xpu-record writes: FILE.partial renamed to FILE at the end, so a command that never
# runs keeps the old trace, and a killed recording leaves its data in FILE.partial (the old
# FILE untouched); -o - streams the trace to stdout, readable by `xpu-report -`, with the
# command's own output moved to stderr; a closed pipe is a write error, not a silent death.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_record_output
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
source "$(dirname "$0")/../lib/record_wait.sh"

[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] && [ -x "$B/samples/cpu_burn" ] ||
	fail "run make first"
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
R=$PWD/$B/xpu-record
P=$PWD/$B/xpu-report
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
finalized() { [ "$(tail -c 32 "$1" | head -c 6)" = "XPUEND" ]; }

# 1. a good trace, then a mistyped command: the good trace stays, byte for byte
"$R" --no-gpu -o "$tmp/a.xpu" -- "$B/samples/cpu_burn" 0.3 >/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "recording cpu_burn exited $rc: $(head -2 "$tmp/err")"
[ -e "$tmp/a.xpu.partial" ] && fail "a.xpu.partial left after a finished recording"
# without -v, one closing line: what the file holds, its size and name, as the report counts it.
# On a loaded machine the ring buffer or the writer queue can overflow: each loss is then said
# on a line of its own before it ("lost N WHAT", documented), and the closing line counts
# them; so nothing else may be said, and the closing line's total is the sum of those lines.
grep -v '^xpu-record: lost [0-9]\+ ' "$tmp/err" >"$tmp/err.rest"
[ "$(wc -l <"$tmp/err.rest")" = 1 ] || fail "expected one closing line on stderr (and loss lines): $(cat "$tmp/err")"
lost=$(awk '$1 == "xpu-record:" && $2 == "lost" && $3 ~ /^[0-9]+$/ { n += $3 } END { print n + 0 }' "$tmp/err")
[ "$lost" = 0 ] || echo "note: $lost records lost on this (loaded?) machine: $(grep '^xpu-record: lost' "$tmp/err" | tr '\n' ' ')"
n=$(sed -nE "s|^xpu-record: ([0-9]+) samples, 0 GPU records, $lost lost; wrote [0-9.]+ (bytes\|KiB\|MiB) to $tmp/a.xpu and its symbol pack $tmp/a.xpu.xpa \([0-9.]+ (bytes\|KiB\|MiB), [0-9.]+ s\)\$|\1|p" "$tmp/err")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no closing summary line: $(cat "$tmp/err")"
"$P" "$tmp/a.xpu" 2>/dev/null | grep -q "^# samples: *$n " || fail "closing line's $n samples not in the report"
cp "$tmp/a.xpu" "$tmp/a.good"
"$R" --no-gpu -o "$tmp/a.xpu" -- nosuchcommand-xpu 2>"$tmp/err"
rc=$?
[ $rc = 127 ] || fail "a command not found: expected 127, got $rc"
cmp -s "$tmp/a.xpu" "$tmp/a.good" || fail "a command not found replaced the previous trace"
[ -e "$tmp/a.xpu.partial" ] && fail "a.xpu.partial left after a command not found"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "a command not found: not one line: $(cat "$tmp/err")"
"$R" --no-gpu -o "$tmp/none.xpu" -- "$tmp" 2>/dev/null
[ $? = 126 ] || fail "a directory as the command: expected 126"
[ -e "$tmp/none.xpu" ] || [ -e "$tmp/none.xpu.partial" ] && fail "a command that cannot run left a file"

# 2. while recording, the data is in FILE.partial; SIGKILL leaves it there, readable, and the
#    previous FILE untouched
"$R" --no-gpu -o "$tmp/a.xpu" -- "$B/samples/cpu_burn" 20 >/dev/null 2>"$tmp/err" &
rec=$!
kids=$(wait_target $rec) || fail "xpu-record did not start cpu_burn"
sleep 1
[ -f "$tmp/a.xpu.partial" ] || fail "no a.xpu.partial while recording"
kill -KILL $rec
wait $rec 2>/dev/null
[ -n "$kids" ] && kill -KILL $kids 2>/dev/null
cmp -s "$tmp/a.xpu" "$tmp/a.good" || fail "a killed recording replaced the previous trace"
"$P" "$tmp/a.xpu.partial" >"$tmp/text" 2>"$tmp/rerr" ||
	fail "xpu-report cannot read the killed recording's a.xpu.partial: $(head -1 "$tmp/rerr")"
grep -q "^# samples: *[1-9]" "$tmp/text" || fail "no samples in a.xpu.partial"
[ "$(stat -c %a "$tmp/a.xpu.partial")" = 600 ] || fail "a.xpu.partial is not mode 600"
# the next recording says it replaces the leftover, and finishes normally
"$R" --no-gpu -o "$tmp/a.xpu" -- true 2>"$tmp/err" || fail "recording over a leftover failed"
grep -q "replacing .*a.xpu.partial" "$tmp/err" || fail "leftover .partial replaced silently"
[ -e "$tmp/a.xpu.partial" ] && fail "a.xpu.partial still there after a finished recording"
finalized "$tmp/a.xpu" || fail "trace over a leftover not finalized"
# a symlink planted at FILE.partial is refused, in one line, its target untouched
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/l.xpu.partial"
"$R" --no-gpu -o "$tmp/l.xpu" -- true 2>"$tmp/err" && fail "wrote through a symlink at .partial"
[ "$(cat "$tmp/victim")" = precious ] || fail "the .partial symlink's target was modified"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail ".partial symlink refusal is not one line: $(cat "$tmp/err")"

# 3. -o -: the stream is the trace (finalized), the command's stdout goes to stderr
"$R" --no-gpu -o - -- sh -c "echo MARK-stdout; exec $B/samples/cpu_burn 0.3" \
	>"$tmp/s.xpu" 2>"$tmp/err" || fail "-o - exited $?: $(head -2 "$tmp/err")"
grep -q MARK-stdout "$tmp/err" || fail "the command's stdout did not reach stderr"
grep -q "lost; wrote .* to standard output$" "$tmp/err" || fail "no closing line for -o -: $(cat "$tmp/err")"
grep -q MARK-stdout "$tmp/s.xpu" && fail "the command's stdout got into the stream"
[ -e ./- ] && fail "-o - wrote a file named -"
finalized "$tmp/s.xpu" || fail "streamed trace has no trailer"
"$P" "$tmp/s.xpu" >"$tmp/s.file" 2>&1 || fail "xpu-report cannot read the streamed trace"
"$P" - <"$tmp/s.xpu" >"$tmp/s.stdin" 2>&1 || fail "xpu-report - cannot read a redirected stdin"
cmp -s "$tmp/s.file" "$tmp/s.stdin" || fail "xpu-report - differs from xpu-report FILE"
# from a pipe: spooled to an unlinked file, or read into memory where no file can be made
cat "$tmp/s.xpu" | "$P" - >"$tmp/s.pipe" 2>&1 || fail "xpu-report - cannot read a pipe"
cmp -s "$tmp/s.file" "$tmp/s.pipe" || fail "xpu-report - from a pipe differs from xpu-report FILE"
cat "$tmp/s.xpu" | TMPDIR=$tmp/none "$P" - >"$tmp/s.mem" 2>&1 || fail "xpu-report - without TMPDIR failed"
cmp -s "$tmp/s.file" "$tmp/s.mem" || fail "xpu-report - read into memory differs"
grep -q "^# samples: *[1-9]" "$tmp/s.file" || fail "no samples in the streamed trace"
# straight through a pipe, folded output included
"$R" --no-gpu -o - -- "$B/samples/cpu_burn" 0.3 2>/dev/null |
	"$P" --format=folded - >"$tmp/folded" 2>"$tmp/rerr"
[ "${PIPESTATUS[*]}" = "0 0" ] || fail "xpu-record -o - | xpu-report - failed: ${PIPESTATUS[*]}"
grep -q "cpu_burn" "$tmp/folded" || fail "no cpu_burn stack through the pipe"

# 4. the reader goes away: xpu-record says so and exits non-zero (not killed by SIGPIPE); the
#    command runs to its end undisturbed
"$R" --no-gpu -F 20000 -o - -- sh -c "$B/samples/cpu_burn 1.5; echo DONE-cmd" \
	2>"$tmp/err" | head -c 100 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc = 141 ] && fail "xpu-record died of SIGPIPE"
[ $rc != 0 ] || fail "xpu-record exited 0 with the reader gone"
grep -q "cannot write standard output" "$tmp/err" || fail "no write error said: $(cat "$tmp/err")"
grep -q DONE-cmd "$tmp/err" || fail "the command did not run to its end"
echo "PASS $NAME"
