#!/bin/bash
# Adds another build of xpu-record to the bundle, for tests/gpu/launch_profile.sh to compare
# with the bundle's own: from a commit (its BPF programs and record code), with extra BPF
# compiler flags (make's BPF_DEFS, e.g. -DCFI_CACHE_ENTRIES=4096u for a constant the source
# lets a build override; a commit whose Makefile predates BPF_DEFS ignores them), or both. The
# bundle's libxpu-cupti.so goes next to it. From the repo root, after bundle.sh:
#   tests/gpu/bundle_variant.sh NAME [REV|-] [BPF_DEFINES...] [DEST]
set -euo pipefail
cd "$(dirname "$0")/../.."
NAME=$1
REV=${2:--}
DEFS=${3:-}
DEST=${4:-.device/bundle}
SRC=$PWD
WT=
if [ "$REV" != - ]; then
	WT=$(mktemp -d)
	git worktree add -q --detach "$WT" "$REV"
	SRC=$WT
fi
OUTB=$(mktemp -d)
make -C "$SRC" --no-print-directory -j"$(nproc)" BUILD="$OUTB" BPF_DEFS="$DEFS" \
	"$OUTB/xpu-record" >/dev/null
mkdir -p "$DEST/variants/$NAME"
cp "$OUTB/xpu-record" "$DEST/variants/$NAME/"
cp "$DEST/build/libxpu-cupti.so" "$DEST/variants/$NAME/"
echo "$REV $DEFS" >"$DEST/variants/$NAME/what"
rm -rf "$OUTB"
[ -z "$WT" ] || git worktree remove --force "$WT"
echo "bundle_variant: $NAME = ${REV} ${DEFS}"
