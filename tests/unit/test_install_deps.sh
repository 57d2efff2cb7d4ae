#!/usr/bin/env bash
# scripts/install-deps.sh installs by tier: make demo's (build + demo) never asks for the test
# tier's heavy packages (chromium, python3-torch, golang-go...), make test's asks for all; an
# unknown tier is refused. Run against stand-ins for dpkg-query (nothing installed) and id
# (not root), so it only prints what it would install and touches no package.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexit 1\n' >"$tmp/dpkg-query"
printf '#!/bin/sh\necho 1000\n' >"$tmp/id"
chmod +x "$tmp/dpkg-query" "$tmp/id"
fail() { echo "FAIL: $*"; exit 1; }
want_of() { PATH="$tmp:$PATH" scripts/install-deps.sh "$@" 2>&1 | sed -n 's/^xpu-perf: missing packages: //p'; }
demo=$(want_of demo)
test=$(want_of test)
[ -n "$demo" ] && [ -n "$test" ] || fail "no missing-package line (demo: '$demo', test: '$test')"
for p in gcc clang bpftool libbpf-dev python3; do
	[[ " $demo " == *" $p "* ]] || fail "demo tier lacks $p: $demo"
done
for p in chromium python3-torch golang-go linux-perf debuginfod; do
	[[ " $demo " == *" $p "* ]] && fail "demo tier asks for the test package $p: $demo"
	[[ " $test " == *" $p "* ]] || fail "test tier lacks $p: $test"
done
PATH="$tmp:$PATH" scripts/install-deps.sh bogus >/dev/null 2>&1 && fail "tier 'bogus' accepted"
echo "ok"
