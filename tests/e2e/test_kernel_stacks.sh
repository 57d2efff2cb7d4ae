#!/bin/bash
# --kernel-stacks: kernel frames symbolize from the kallsyms captured at record time (KSYMS
# records), also where the report cannot read /proc/kallsyms. Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_kernel_stacks
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (or CAP_BPF+CAP_PERFMON) for eBPF"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# syscall-heavy: most samples are in the kernel (reads of /dev/zero, writes to /dev/null)
"$B/xpu-record" --no-gpu --kernel-stacks -o "$tmp/k.xpu" -- \
	timeout 1.5 dd if=/dev/zero of=/dev/null bs=512 >/dev/null 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): \|Operation not permitted" "$tmp/err" &&
	skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || [ $rc = 124 ] || fail "xpu-record exited $rc: $(head -1 "$tmp/err")"
"$B/xpu-report" --format=info "$tmp/k.xpu" >"$tmp/info" || fail "info failed"
grep -Eq '^  ksyms +[1-9]' "$tmp/info" || fail "no KSYMS records in the trace"
"$B/xpu-report" --format=folded "$tmp/k.xpu" >"$tmp/folded" || fail "folded failed"
awk '{ n = $NF; total += n; if ($0 ~ /_\[k\]/) k += n;
       if ($0 ~ /(ksys_read|vfs_read|read_zero|ksys_write|vfs_write|do_syscall_64|entry_SYSCALL_64)[^;]*_\[k\]/) named += n }
     END { if (total < 300) { print "only " total " samples"; exit 1 }
	   if (k < total / 3) { print "only " k " of " total " samples have kernel frames"; exit 1 }
	   if (named < k / 2) { print "only " named " of " k " kernel stacks name the syscall path"; exit 1 } }' \
	"$tmp/folded" || fail "$(sort -t' ' -k2 -n "$tmp/folded" | tail -1)"
grep -q '\[kernel.kallsyms\]_\[k\]' "$tmp/folded" &&
	[ "$(grep -c '\[kernel.kallsyms\]' "$tmp/folded")" -gt "$(($(wc -l <"$tmp/folded") / 10))" ] &&
	fail "many kernel frames left unnamed"
echo "PASS $NAME"
