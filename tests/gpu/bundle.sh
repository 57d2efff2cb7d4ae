#!/bin/bash
# Packs what the GPU machine needs into .device/bundle (git-ignored; carry it with the run):
# the built tools, the CUDA samples and the checker, plus the shared libraries they need that
# a bare machine lacks (libbpf, libelf, libdw, libzstd, ...; never glibc). libcudart goes to a
# separate lib-cuda/ that only the CUDA sample sees, so PyTorch keeps its own copy.
# Usage (repo root, after make): tests/gpu/bundle.sh [DEST]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
DEST=${1:-.device/bundle}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}


for f in xpu-record xpu-report libxpu-cupti.so libxpucommon.a; do
	[ -e "$B/$f" ] || { echo "bundle: $B/$f missing: run make first" >&2; exit 1; }
done
mkdir -p "$B/tests/gpu" "$B/samples"
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -Icommon \
	-o "$B/tests/gpu/check_trace" tests/gpu/check_trace.c "$B/libxpucommon.a" -lzstd
# the samples and benchmarks are built by make, with the flags in samples/cuda.mk
make --no-print-directory BUILD="$B" samples bench >/dev/null

rm -rf "$DEST"
mkdir -p "$DEST/build/samples" "$DEST/build/tests/gpu" "$DEST/lib" "$DEST/lib-cuda"
cp -a "$B/xpu-record" "$B/xpu-report" "$B/libxpu-cupti.so" "$DEST/build/"
cp -a "$B/samples/cuda_pipeline" "$B/samples/cuda_pipeline_static" "$DEST/build/samples/"
cp -a "$B/tests/gpu/check_trace" "$DEST/build/tests/gpu/"
# tests/gpu/cuda_graphs.sh's CUDA C graphs, the samples' architecture; cudart static: no
# library to carry (launch sites are then found by symbol, as static_cudart.sh checks)
if [ -x "$CUDA_HOME/bin/nvcc" ]; then
	"$CUDA_HOME/bin/nvcc" -O1 -g -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
		-Xcompiler -fno-omit-frame-pointer,-fno-optimize-sibling-calls,-g \
		-o "$DEST/build/tests/gpu/graph_nodes" tests/gpu/graphs/graph_nodes.cu ||
		echo "bundle: tests/gpu/graphs/graph_nodes.cu did not build" >&2
fi
gcc -O2 -Wall -Wextra -o "$DEST/build/tests/gpu/clock_cost" tests/gpu/clock_cost.c
mkdir -p "$DEST/build/bench"
cp -a "$B/bench/cfi_tables" "$DEST/build/bench/"
[ -x "$B/bench/launch_bench" ] && cp -a "$B/bench/launch_bench" "$DEST/build/bench/"
# the minimal CUPTI client, the floor of bench/gpu/ladder.py (issue 28)
if [ -f "$CUDA_HOME/include/cupti.h" ]; then
	gcc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC -fvisibility=hidden \
		-I"$CUDA_HOME/include" -o "$DEST/build/bench/libcupti_min.so" bench/gpu/cupti_min.c -ldl
fi

is_glibc() {
	case "$(basename "$1")" in
	libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libutil.so*) return 0 ;;
	esac
	return 1
}
copy_deps() {	# BINARY DIR
	ldd "$1" | awk '/=> \//{print $3}' | while read -r lib; do
		is_glibc "$lib" && continue
		case "$(basename "$lib")" in
		libcudart.so*|libcuda.so*) [ "$2" = "$DEST/lib-cuda" ] || continue ;;
		*) [ "$2" = "$DEST/lib-cuda" ] && continue ;;
		esac
		cp -L "$lib" "$2/"
	done
}
for bin in xpu-record xpu-report tests/gpu/check_trace bench/cfi_tables; do
	copy_deps "$B/$bin" "$DEST/lib"
done
# bpftool, where this machine has it: tests/gpu/hit_cost.sh reads the BPF programs' run times
if command -v bpftool >/dev/null; then
	cp -L "$(command -v bpftool)" "$DEST/build/bpftool"
	copy_deps "$DEST/build/bpftool" "$DEST/lib"
fi
# PERF=1: perf and its libraries, for tests/gpu/launch_profile.sh's profile of the BPF programs
if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
	mkdir -p "$DEST/perf/lib"
	cp -L "$(command -v perf)" "$DEST/perf/perf"
	copy_deps "$DEST/perf/perf" "$DEST/perf/lib"
fi
copy_deps "$B/samples/cuda_pipeline" "$DEST/lib-cuda"
rm -f "$DEST/lib-cuda/libcuda.so"*	# the driver's libcuda must come from the machine
( cd "$DEST" && find . -type f | sort && du -sh . ) | sed 's/^/bundle: /'
