#!/bin/bash
# The symbol pack under sudo (docs/robustness.md): made after the traced processes exit, from
# paths they control, it reads files with the rights of the user who ran sudo, not root's. A
# target (run as that user) swaps its own file for a symlink to a root-only (0600) copy of
# itself with one function renamed (the same build-id), then exits; the copy's name must not reach the pack. A
# control run without the swap shows the pack still names the user's own file.
# Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_pack_sudo
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (eBPF, useradd)"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v useradd >/dev/null || skip "no useradd"
command -v "${CC:-gcc}" >/dev/null && command -v objcopy >/dev/null || skip "no gcc or objcopy"
user=xpupack$$
tmp=$(mktemp -d) || exit 1
trap 'userdel "$user" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
useradd -M -r -s /usr/sbin/nologin "$user" 2>"$tmp/uerr" || skip "useradd failed: $(head -1 "$tmp/uerr")"
uid=$(id -u "$user")
gid=$(id -g "$user")
chmod 0755 "$tmp"
mkdir -m 0700 "$tmp/root"
mkdir -m 0755 "$tmp/w"
# the copy keeps the build-id: a user who knows a root-only file's build-id can give it to a
# file of their own, so the pack's build-id check alone cannot tell the two apart
${CC:-gcc} -O1 -Wl,--build-id=sha1 -o "$tmp/w/prog" tests/e2e/pack/swap_self.c ||
	fail "building tests/e2e/pack/swap_self.c"
objcopy --redefine-sym xpu_public_spin=xpu_secret_spin "$tmp/w/prog" "$tmp/root/secret" ||
	fail "objcopy"
chmod 0600 "$tmp/root/secret"
chown -R "$uid:$gid" "$tmp/w"

# rec NAME ARGS...: records prog ARGS under sudo as $user; prints what --no-host-files names
rec() {
	local name=$1; shift
	env SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$B/xpu-record" --no-gpu \
		-o "$tmp/w/$name.xpu" -- "$tmp/w/prog" "$@" >/dev/null 2>"$tmp/$name.err"
	local rc=$?
	grep -q "need root\|bpf(): " "$tmp/$name.err" && skip "BPF unavailable: $(head -1 "$tmp/$name.err")"
	[ $rc = 0 ] || fail "$name: xpu-record exited $rc: $(tail -3 "$tmp/$name.err")"
	[ -s "$tmp/w/$name.xpu.xpa" ] || fail "$name: no symbol pack: $(cat "$tmp/$name.err")"
	[ "$(stat -c %u "$tmp/w/$name.xpu.xpa")" = "$uid" ] || fail "$name: the pack is not $user's"
	HOME=$tmp/nowhere "$B/xpu-report" -F folded --no-host-files "$tmp/w/$name.xpu" \
		>"$tmp/$name.folded" 2>"$tmp/$name.rerr" ||
		fail "$name: xpu-report: $(head -2 "$tmp/$name.rerr")"
}

rec plain 0.3
grep -q xpu_public_spin "$tmp/plain.folded" ||
	fail "control: the pack does not name the user's own file: $(head -c 600 "$tmp/plain.folded")"

rec swapped 0.3 "$tmp/root/secret"
[ -L "$tmp/w/prog" ] || fail "the target did not swap its file for a symlink"
if grep -q xpu_secret_spin "$tmp/swapped.folded"; then
	fail "a root-only file's names reached the user's pack (xpu_secret_spin):" \
		"$(grep -m1 xpu_secret_spin "$tmp/swapped.folded")"
fi
echo "PASS $NAME: the pack read as uid $uid; the root-only file's names stayed out"
