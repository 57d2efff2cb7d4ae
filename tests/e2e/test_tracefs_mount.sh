#!/bin/bash
# On a host without tracefs mounted (minimal VMs, containers), xpu-record mounts it to resolve
# tracepoints, and unmounts it at the end: the host is left as it was found (docs/robustness.md,
# "Leftovers"). Run in a private mount namespace (unshare -m), where tracefs is unmounted
# first, so the host's mounts and other recordings are untouched.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_tracefs_mount
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (eBPF, mount namespaces)"
[ -x "$B/xpu-record" ] || fail "run make first"
command -v unshare >/dev/null && command -v mountpoint >/dev/null || skip "no unshare or mountpoint"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
R=$(realpath "$B/xpu-record")

# in the namespace: 3 tracefs could not be unmounted, 4 the recording failed, 5 left mounted
unshare -m --propagation private sh -c '
	while mountpoint -q /sys/kernel/tracing; do umount /sys/kernel/tracing || exit 3; done
	[ -d /sys/kernel/debug/tracing/events ] && umount /sys/kernel/debug/tracing 2>/dev/null
	"$0" --no-gpu --no-pack -g fp -o "$1/t.xpu" -- true 2>"$1/err" || exit 4
	mountpoint -q /sys/kernel/tracing && exit 5
	exit 0' "$R" "$tmp"
rc=$?
case $rc in
0) ;;
3) skip "cannot unmount tracefs in a private mount namespace" ;;
4) grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
   fail "xpu-record failed without tracefs mounted: $(tail -2 "$tmp/err")" ;;
5) fail "tracefs is still mounted at /sys/kernel/tracing after the recording" ;;
*) fail "unshare exited $rc" ;;
esac
echo "PASS $NAME: tracefs mounted for the recording and unmounted after it"
