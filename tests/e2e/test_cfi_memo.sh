#!/bin/bash
# -g cfi's memo (bpf/cfi_memo.bpf.h): a walk takes the outer frames of the same thread's previous
# walk only after reading every stack word that walk read from the matched frame on again. Its
# failure would be silent (plausible stacks with a wrong outer part), so this checks exact stacks
# against ground truth: tests/e2e/cfi_memo/memo_calls calls the launch marker through chains
# whose depth changes every call and whose outer caller (site_a/site_b, frames of one size, so
# that everything below them stands at the same addresses) every 4 calls, and prints how many
# calls it made per (site, depth); every launch stack must be one of those chains, with those
# counts, and both the memo's reuse and its refusals (a changed word) must have happened.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_cfi_memo
skip() { echo "SKIP $NAME: $*"; exit 77; }
fail() { echo "FAIL $NAME: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -f "$B/libxpu-cupti.so" ] || skip "$B/libxpu-cupti.so not built (no CUDA toolkit at build time)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# no frame pointers, so that only the CFI walk (and its memo) can give these stacks
cc -O2 -g -fomit-frame-pointer -o "$tmp/memo_calls" tests/e2e/cfi_memo/memo_calls.c -ldl ||
	fail "cannot build memo_calls"
N=6000
"$B/xpu-record" -g cfi -F 1 --no-pack -o "$tmp/m.xpu" -- \
	"$tmp/memo_calls" "$(realpath "$B/libxpu-cupti.so")" $N >"$tmp/truth" 2>"$tmp/rec.err" ||
	fail "recording failed: $(tail -1 "$tmp/rec.err")"
[ "$(awk '{ s += $3 } END { print s }' "$tmp/truth")" = $N ] || fail "memo_calls: $(cat "$tmp/truth")"
# each launch's chain as "site depth": the frames between main and leaf
"$B/xpu-report" -F jsonl "$tmp/m.xpu" 2>/dev/null | grep '"type":"launch"' |
	sed 's/.*"frames":\[//; s/\]}$//' | tr -d '"' |
	awk -F, '{
		chain = ""; d = -1; site = "?"
		for (i = 1; i <= NF; i++) chain = chain " " $i
		if (chain !~ /^ _start __libc_start_main __libc_start_call_main main site_[ab]( descend)+ leaf xpu_cupti_api_enter$/) {
			print "bad" chain; next
		}
		for (i = 1; i <= NF; i++) { if ($i ~ /^site_/) site = $i; if ($i == "descend") d++ }
		print site, d
	}' | sort | uniq -c | awk '{ print $2, $3, $1 }' >"$tmp/got"
sort "$tmp/truth" >"$tmp/want"
diff "$tmp/want" "$tmp/got" >"$tmp/diff" ||
	fail "launch stacks differ from the calls made (want, got): $(tr '\n' ' ' <"$tmp/diff" | cut -c1-400)"
info=$("$B/xpu-report" -F info "$tmp/m.xpu" 2>/dev/null)
frames=$(awk '$1 == "cfi_memo_frames" { print $2 }' <<<"$info")
misses=$(awk '$1 == "cfi_memo_misses" { print $2 }' <<<"$info")
[ "${frames:-0}" -gt 0 ] || fail "no frame was taken from the memo: the reuse was not exercised"
[ "${misses:-0}" -gt 0 ] || fail "no memo was refused: a changed outer caller went unseen"
echo "PASS $NAME: $N launch stacks exact; $frames frames from the memo, $misses refused"
