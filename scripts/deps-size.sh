#!/usr/bin/env bash
# What scripts/install-deps.sh TIER would download and put on disk on a fresh Debian/Ubuntu
# machine, without installing anything: apt-get's simulation against a minimal system (the
# packages of priority required and important, the essential ones, and what they depend on,
# taken from this machine's dpkg status), summing each package's Size and Installed-Size from
# the package lists. Needs the package lists (apt-get update); no root, no network.
#   scripts/deps-size.sh [TIER]     (demo by default; build, demo or test)
# Prints "TIER: N packages, D MB download, I MB installed" and the ten largest.
set -euo pipefail
TIER=${1:-demo}
cd "$(dirname "$0")/.."
list=$(XPU_DEPS_LIST=1 scripts/install-deps.sh "$TIER") || exit 2	# it said why
read -ra pkgs <<<"$list"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - /var/lib/dpkg/status "$tmp/status" <<'PY'
import re, sys

blocks = [b for b in open(sys.argv[1]).read().split("\n\n") if "Status: install ok installed" in b]
pk, provides = {}, {}
for b in blocks:
    m = re.search(r"^Package: (\S+)$", b, re.M)
    if m:
        pk.setdefault(m.group(1), b)
for n, b in pk.items():
    m = re.search(r"^Provides: (.*)$", b, re.M)
    for x in (m.group(1).split(",") if m else []):
        provides.setdefault(x.strip().split()[0], n)


def depends(b):
    for field in ("Depends", "Pre-Depends"):
        m = re.search(r"^%s: (.*)$" % field, b, re.M)
        for alts in (m.group(1).split(",") if m else []):
            for a in alts.split("|"):
                n = a.strip().split()[0].split(":")[0]
                if n in pk or n in provides:
                    yield n if n in pk else provides[n]
                    break


base = [n for n, b in pk.items()
        if re.search(r"^(Priority: (required|important)|Essential: yes)$", b, re.M)]
seen, todo = set(), list(base)
while todo:
    n = todo.pop()
    if n not in seen:
        seen.add(n)
        todo.extend(depends(pk[n]))
open(sys.argv[2], "w").write("\n\n".join(pk[n] for n in sorted(seen)) + "\n\n")
PY

apt-get -s install --no-install-recommends -o Dir::State::status="$tmp/status" \
	-o Debug::NoLocking=1 "${pkgs[@]}" >"$tmp/sim" 2>&1 ||
	{ echo "deps-size: apt-get's simulation failed: $(tail -2 "$tmp/sim")" >&2; exit 1; }
awk '/^Inst /{ print $2 }' "$tmp/sim" >"$tmp/inst"
[ -s "$tmp/inst" ] || { echo "deps-size: apt-get would install nothing: no package lists? (apt-get update)" >&2; exit 1; }
# one apt-cache call for all of them (one a package took minutes on a loaded machine)
xargs apt-cache show --no-all-versions <"$tmp/inst" 2>/dev/null |
	awk '/^Package:/ { p = $2 } /^Size:/ { s[p] = $2 } /^Installed-Size:/ { i[p] = $2 }
	     END { for (k in s) print s[k] + 0, i[k] + 0, k }' >"$tmp/sizes"
awk -v t="$TIER" '{ d += $1; i += $2; n++ }
	END { printf "%s: %d packages, %.0f MB download, %.0f MB installed\n", t, n, d / 1048576, i / 1024 }' "$tmp/sizes"
sort -k2,2nr "$tmp/sizes" | head -10 | awk '{ printf "  %-32s %6.1f MB download, %6.1f MB installed\n", $3, $1 / 1048576, $2 / 1024 }'
