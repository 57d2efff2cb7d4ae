#!/usr/bin/env bash
# Installs the Debian packages xpu-perf needs, when missing, by tier:
#   scripts/install-deps.sh build   what `make` needs (compilers, the BPF toolchain, libraries)
#   scripts/install-deps.sh demo    build + what `make demo` runs (python3)
#   scripts/install-deps.sh test    demo + what the tests compare against or drive (the default)
# As root it runs apt-get, waiting up to XPU_APT_LOCK_WAIT seconds (120) for another apt or
# dpkg to let go of its lock, and saying so; otherwise it prints the exact command and fails if
# something is missing.
set -euo pipefail
TIER=${1:-test}

# build: compilers, BPF toolchain, libraries (libiberty: the C++ demangler; protobuf-c and
# the pprof package's profile.proto: --format=pprof)
BUILD_PKGS=(make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev libiberty-dev libzstd-dev
	    zlib1g-dev pkg-config zstd libprotobuf-c-dev protobuf-c-compiler
	    golang-github-google-pprof-dev)
DEMO_PKGS=(python3)
# test: perf (comparison), chromium (viewer tests), strace (tests/unit/test_hostile.sh),
# golang-go (go tool pprof reads --format=pprof), python3-torch (tests/e2e/test_backward_attr.sh:
# backward attribution needs Debian's PyTorch, CPU-only, whose autograd runs backward on the
# caller's thread), debuginfod (a real symbol server on the loopback for
# tests/e2e/test_debuginfod.sh, and libdebuginfod, which xpu-report loads at run time when
# DEBUGINFOD_URLS is set), protobuf-compiler (protoc: the tests decode --format=perfetto with
# format-spec/perfetto_subset.proto)
TEST_PKGS=(linux-perf chromium strace golang-go python3-torch debuginfod protobuf-compiler)
case $TIER in
build) PKGS=("${BUILD_PKGS[@]}") ;;
demo) PKGS=("${BUILD_PKGS[@]}" "${DEMO_PKGS[@]}") ;;
test) PKGS=("${BUILD_PKGS[@]}" "${DEMO_PKGS[@]}" "${TEST_PKGS[@]}") ;;
*) echo "install-deps.sh: tier '$TIER': not build, demo or test" >&2; exit 2 ;;
esac
# XPU_DEPS_LIST=1: print the tier's packages on one line and stop (scripts/deps-size.sh)
if [ -n "${XPU_DEPS_LIST:-}" ]; then
	echo "${PKGS[*]}"
	exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
# node and npm (the viewer test installs speedscope from the npm registry) often come from
# outside Debian, and Debian's nodejs conflicts with such an npm: ask for them only if absent.
[ "$TIER" = test ] && ! command -v npm >/dev/null 2>&1 && missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "xpu-perf: missing packages: ${missing[*]}" >&2
	echo "xpu-perf: run as root, or: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "xpu-perf: installing (for make ${TIER/build/all}): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# another apt (unattended-upgrades, a second terminal) holds the lock: wait, bounded, and say so
wait_s=${XPU_APT_LOCK_WAIT:-120}
lock_held() {
	command -v fuser >/dev/null 2>&1 || return 1
	fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock >/dev/null 2>&1
}
if lock_held; then
	echo "xpu-perf: waiting up to ${wait_s}s for another apt or dpkg to release its lock" >&2
fi
apt_opts=(-o "DPkg::Lock::Timeout=$wait_s")
apt-get "${apt_opts[@]}" update -qq
apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
