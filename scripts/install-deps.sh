#!/usr/bin/env bash
# Installs the Debian packages xpu-perf needs to build and test, when missing.
# As root it runs apt-get; otherwise it prints the exact command and fails if something is missing.
set -euo pipefail

# build: compilers, BPF toolchain, libraries (libiberty: the C++ demangler; protobuf-c and
# the pprof package's profile.proto: --format=pprof); test: perf (comparison), chromium (viewer
# tests), strace (tests/unit/test_hostile.sh), golang-go (go tool pprof reads --format=pprof),
# python3-torch (tests/e2e/test_backward_attr.sh: backward attribution needs Debian's PyTorch,
# CPU-only, whose autograd runs backward on the caller's thread), debuginfod (a real symbol
# server on the loopback for tests/e2e/test_debuginfod.sh, and libdebuginfod, which xpu-report
# loads at run time when DEBUGINFOD_URLS is set), protobuf-compiler (protoc: the tests decode
# --format=perfetto with format-spec/perfetto_subset.proto)
PKGS=(make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev libiberty-dev libzstd-dev
      zlib1g-dev pkg-config zstd linux-perf chromium python3 strace
      libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev golang-go
      python3-torch debuginfod protobuf-compiler)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
# node and npm (the viewer test installs speedscope from the npm registry) often come from
# outside Debian, and Debian's nodejs conflicts with such an npm: ask for them only if absent.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "xpu-perf: missing packages: ${missing[*]}" >&2
	echo "xpu-perf: run as root, or: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "xpu-perf: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
