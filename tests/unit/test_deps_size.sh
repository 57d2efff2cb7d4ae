#!/usr/bin/env bash
# make demo installs only what the demo needs (issue 43): what scripts/install-deps.sh demo would
# download on a minimal Debian/Ubuntu (scripts/deps-size.sh, apt-get's simulation, nothing
# installed) stays under 150 MB, and the test tier's extra packages are not in it. Skips where
# apt has no package lists (a machine that never ran apt-get update).
set -u
cd "$(dirname "$0")/../.."
NAME=test_deps_size
fail() { echo "FAIL $NAME: $*"; exit 1; }
skip() { echo "SKIP $NAME: $*"; exit 77; }
command -v apt-get >/dev/null && [ -r /var/lib/dpkg/status ] || skip "not a Debian/Ubuntu machine"
ls /var/lib/apt/lists/*Packages* >/dev/null 2>&1 || skip "no apt package lists (apt-get update)"
out=$(scripts/deps-size.sh demo 2>&1) || fail "scripts/deps-size.sh demo: $out"
mb=$(sed -n '1s/.* \([0-9]*\) MB download.*/\1/p' <<<"$out")
[ -n "$mb" ] || fail "no download size in: $(head -1 <<<"$out")"
[ "$mb" -lt 150 ] || fail "make demo would download $mb MB (want < 150): $out"
demo=$(XPU_DEPS_LIST=1 scripts/install-deps.sh demo)
for p in chromium golang-go python3-torch linux-perf nodejs; do
	grep -qw -- "$p" <<<"$demo" && fail "the demo tier asks for the test package $p"
done
echo "PASS $NAME: $(head -1 <<<"$out")"
