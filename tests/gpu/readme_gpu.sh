#!/bin/bash
# The README's GPU quick start, run as written on a GPU host (root), with the tools of the
# bundle (tests/gpu/bundle.sh). The bundle's libraries are made known to the dynamic linker
# after the system's own, so the quick start's plain commands find libbpf and libdw while
# PyTorch keeps the host's libraries.
#   tests/gpu/readme_gpu.sh
set -u
cd "$(dirname "$0")/../.."
lib=$(pwd)/.device/bundle/lib
[ -d "$lib" ] || { echo "readme_gpu: run tests/gpu/bundle.sh first"; exit 1; }
echo "$lib" >/etc/ld.so.conf.d/zz-xpu-bundle.conf && ldconfig
BUILD=.device/bundle/build tests/e2e/test_readme.sh gpu
