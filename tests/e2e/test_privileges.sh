#!/bin/bash
# Privileges: under sudo (SUDO_UID/SUDO_GID/SUDO_USER, set here for a temporary user) the
# command runs as that user (or as root with --keep-root) and the trace, mode 0600, belongs to
# that user; the CUPTI socket directory is 0700 and the user's; an output path that is a
# symlink is refused and a hard-linked one is replaced, never written through; xpu-report
# opens nothing for writing but its -o file, whatever paths the trace names (strace).
# The socket's peer-credential check (only the traced tree may connect) is unit-tested in
# tests/unit/test_cupti_rx.c (test_rejected).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
NAME=test_privileges
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (eBPF, useradd)"
[ -x "$B/xpu-record" ] && [ -x "$B/xpu-report" ] || fail "run make first"
command -v useradd >/dev/null || skip "no useradd"
R=$(realpath "$B/xpu-record")
user=xputest$$
tmp=$(mktemp -d) || exit 1
trap 'userdel "$user" 2>/dev/null; rm -rf "$tmp"' EXIT
useradd -M -r -s /usr/sbin/nologin "$user" 2>"$tmp/uerr" || skip "useradd failed: $(head -1 "$tmp/uerr")"
uid=$(id -u "$user")
gid=$(id -g "$user")
chmod 0755 "$tmp"
mkdir -m 0777 "$tmp/w"	# the target, as the user, writes its findings here

as_sudo() { env SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$@"; }
probe='id -u >"$0/uid"; id -g >"$0/gid";
	if [ -n "${XPU_CUPTI_SOCKET:-}" ]; then
		stat -c "%a %u" "$(dirname "$XPU_CUPTI_SOCKET")" >"$0/sockdir"
		[ -w "$XPU_CUPTI_SOCKET" ] && echo yes >"$0/sockw"
	fi'

# 1. default under sudo: the command runs as the user; the trace is the user's, 0600
as_sudo "$R" -o "$tmp/a.xpu" -- sh -c "$probe" "$tmp/w" 2>"$tmp/err"
rc=$?
grep -q "need root\|bpf(): " "$tmp/err" && skip "BPF unavailable: $(head -1 "$tmp/err")"
[ $rc = 0 ] || fail "xpu-record under sudo exited $rc: $(head -1 "$tmp/err")"
[ "$(cat "$tmp/w/uid")" = "$uid" ] || fail "command ran as uid $(cat "$tmp/w/uid"), not $uid"
[ "$(cat "$tmp/w/gid")" = "$gid" ] || fail "command ran as gid $(cat "$tmp/w/gid"), not $gid"
[ "$(stat -c '%u %a' "$tmp/a.xpu")" = "$uid 600" ] ||
	fail "trace is $(stat -c '%U %a' "$tmp/a.xpu"), expected $user 600"
if [ -f "$B/libxpu-cupti.so" ]; then
	[ "$(cat "$tmp/w/sockdir" 2>/dev/null)" = "700 $uid" ] ||
		fail "CUPTI socket directory is '$(cat "$tmp/w/sockdir" 2>/dev/null)', expected '700 $uid'"
	[ -f "$tmp/w/sockw" ] || fail "the user's command cannot write to the CUPTI socket"
fi
rm -f "$tmp/w/"*

# 2. --keep-root: the command stays root; the trace is still the user's
as_sudo "$R" --keep-root --no-gpu -o "$tmp/b.xpu" -- sh -c "$probe" "$tmp/w" 2>"$tmp/err" ||
	fail "--keep-root run failed: $(head -1 "$tmp/err")"
[ "$(cat "$tmp/w/uid")" = 0 ] || fail "--keep-root: command ran as uid $(cat "$tmp/w/uid")"
[ "$(stat -c '%u' "$tmp/b.xpu")" = "$uid" ] || fail "--keep-root: trace not owned by $user"

# 3. not under sudo: root stays root, the trace is root's, still 0600
"$R" --no-gpu -o "$tmp/c.xpu" -- sh -c "$probe" "$tmp/w" 2>"$tmp/err" || fail "plain run failed"
[ "$(cat "$tmp/w/uid")" = 0 ] || fail "without sudo the command ran as uid $(cat "$tmp/w/uid")"
[ "$(stat -c '%u %a' "$tmp/c.xpu")" = "0 600" ] || fail "plain trace is $(stat -c '%u %a' "$tmp/c.xpu")"

# 4. a symlink at the output path is refused; its target is untouched
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/link.xpu"
"$R" --no-gpu -o "$tmp/link.xpu" -- true 2>"$tmp/err" && fail "wrote through a symlink"
[ "$(cat "$tmp/victim")" = precious ] || fail "the symlink's target was modified"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "symlink refusal is not one line: $(cat "$tmp/err")"

# 5. a hard link at the output path is replaced, not written through
ln "$tmp/victim" "$tmp/hard.xpu"
"$R" --no-gpu -o "$tmp/hard.xpu" -- true 2>"$tmp/err" || fail "hard-linked output: $(head -1 "$tmp/err")"
[ "$(cat "$tmp/victim")" = precious ] || fail "wrote through a hard link"
[ "$(stat -c %h "$tmp/victim")" = 1 ] || fail "the hard link was not replaced"

# 6. xpu-report writes only its -o file: paths named by the trace are read, never written
if command -v strace >/dev/null; then
	mkdir "$tmp/cwd"
	for f in text folded info chrome svg; do
		"$B/xpu-report" --help | grep -q "$f" || continue
		(cd "$tmp/cwd" && strace -f -qq -e trace=open,openat,creat,rename,unlink,unlinkat \
			-o "$tmp/strace.$f" "$OLDPWD/$B/xpu-report" -F $f -o "$tmp/out.$f" "$tmp/a.xpu" \
			2>/dev/null) || fail "xpu-report -F $f failed on the sudo trace"
		bad=$(grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\(|rename|unlink' "$tmp/strace.$f" |
			grep -v "\"$tmp/out.$f\"")
		[ -z "$bad" ] || fail "xpu-report -F $f opened for writing: $bad"
	done
	[ -z "$(ls -A "$tmp/cwd")" ] || fail "xpu-report left files in its working directory"
fi
echo "PASS $NAME: command ran as uid $uid, trace owned by it with mode 600"
