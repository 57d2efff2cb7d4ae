#!/bin/bash
# -g dwarf,SIZE,TOP on a 96 KiB stack frame between the outer frames and the leaf
# (tests/e2e/dwarf/huge_frame.c, no frame pointers), on the main thread and on a pthread: a copy
# from the leaf cannot reach past the huge frame, so walks end there ("copy end"); with a
# window below the stack top they reach main and the thread's start. Exit 0 pass, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_dwarf_top
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
for bad in dwarf,8192,12 dwarf,8192,65536 dwarf,8192,x dwarf,,4096 dwarf,8192,; do
	out=$("$B/xpu-record" --no-gpu -g "$bad" -- true 2>&1)
	rc=$?
	[ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ] ||
		fail "-g $bad not refused with one line and status 2 (rc $rc): $out"
done
[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
command -v "${CC:-gcc}" >/dev/null || skip "no C compiler to build the test program"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${CC:-gcc} -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o "$tmp/hf" \
	tests/e2e/dwarf/huge_frame.c -lpthread || fail "building tests/e2e/dwarf/huge_frame.c"

rate() { awk '/^  complete/ { gsub(/[(%)]/, "", $7); print int($7) }' "$1"; }
MAIN='(^|;)main;hf_outer_a;hf_outer_b;hf_huge;hf_inner;hf_leaf( |;)'
THREAD='(^|;)start_thread;hf_thread;hf_outer_b;hf_huge;hf_inner;hf_leaf( |;)'
for mode in dwarf,8192 dwarf,8192,16384; do
	"$B/xpu-record" --no-gpu -g $mode -o "$tmp/t.xpu" -- "$tmp/hf" 1 >/dev/null 2>"$tmp/err"
	rc=$?
	grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
		skip "BPF unavailable: $(head -1 "$tmp/err")"
	[ $rc = 0 ] || fail "xpu-record -g $mode exited $rc: $(head -1 "$tmp/err")"
	"$B/xpu-report" --format=info "$tmp/t.xpu" >"$tmp/$mode.info" 2>&1 ||
		fail "xpu-report --format=info ($mode) failed"
	"$B/xpu-report" --format=folded "$tmp/t.xpu" >"$tmp/$mode.folded" 2>/dev/null ||
		fail "xpu-report --format=folded ($mode) failed"
done
# without the window: the walks end at the huge frame
r=$(rate "$tmp/dwarf,8192.info")
[ "${r:-100}" -le 5 ] || fail "-g dwarf,8192: $r% complete: the huge frame should stop the walks"
grep -q '^ *[0-9]*  copy end   at hf_huge' "$tmp/dwarf,8192.info" ||
	fail "-g dwarf,8192: walks do not end at hf_huge: $(grep -A3 'dwarf stops' "$tmp/dwarf,8192.info")"
# with it: complete, the whole chain on both threads
r=$(rate "$tmp/dwarf,8192,16384.info")
[ "${r:-0}" -ge 90 ] ||
	fail "-g dwarf,8192,16384: only $r% complete: $(grep -A4 'dwarf stops' "$tmp/dwarf,8192,16384.info")"
grep -Eq "$MAIN" "$tmp/dwarf,8192,16384.folded" || fail "no main-thread chain from main"
grep -Eq "$THREAD" "$tmp/dwarf,8192,16384.folded" || fail "no thread chain from start_thread"
grep -q '^  user_stack_top' "$tmp/dwarf,8192,16384.info" || fail "no USER_STACK_TOP records counted"
grep -q '^  dwarf top' "$tmp/dwarf,8192,16384.info" || fail "info does not show the top windows"
# about one run in five counts one window not copied (of ~2000, on main before -g cfi became the
# default too; cause not found): counted and reported, so a rare one is allowed, not a habit
read -r tops errs < <(awk '$1 == "user_stack_top" { t = $2 } $1 == "stack_top_errors" { e = $2 }
	END { print t + 0, e + 0 }' "$tmp/dwarf,8192,16384.info")
[ $((errs * 200)) -le "$tops" ] ||
	fail "stack-top windows not copied: $errs errors for $tops windows"

# -p PID: the thread was running before recording began, so its clone was never seen; its top
# comes from the mapping that holds its stack
"$tmp/hf" 4 &
hf=$!
sleep 0.5
"$B/xpu-record" --no-gpu -g dwarf,8192,16384 -p $hf -d 1.5 -o "$tmp/p.xpu" >/dev/null 2>"$tmp/err" ||
	fail "xpu-record -p failed: $(head -1 "$tmp/err")"
kill $hf 2>/dev/null
wait $hf 2>/dev/null
"$B/xpu-report" --format=info "$tmp/p.xpu" >"$tmp/p.info" 2>&1 || fail "xpu-report --format=info (-p) failed"
"$B/xpu-report" --format=folded "$tmp/p.xpu" >"$tmp/p.folded" 2>/dev/null || fail "xpu-report (-p) failed"
rp=$(rate "$tmp/p.info")
[ "${rp:-0}" -ge 90 ] || fail "-p with a window: only $rp% complete: $(grep -A4 'dwarf stops' "$tmp/p.info")"
grep -Eq "$THREAD" "$tmp/p.folded" || fail "-p: no chain from start_thread on the thread that ran before"
grep -Eq "$MAIN" "$tmp/p.folded" || fail "-p: no main-thread chain from main"
echo "PASS $NAME (no window: $(rate "$tmp/dwarf,8192.info")% complete; 16 KiB window: $r%; -p: $rp%)"
