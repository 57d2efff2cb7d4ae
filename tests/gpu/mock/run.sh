#!/bin/sh
# Tests libxpu-cupti.so against a fake libcupti: no GPU needed. Run from the repo root after make.
set -e
B=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p $B/tests/mock
gcc -O1 -g -shared -fPIC -I$CUDA_HOME/include -o $B/tests/mock/libmockcupti.so tests/gpu/mock/mock_cupti.c
gcc -O1 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -rdynamic -Icommon -Irecord -Ibpf \
	-I$CUDA_HOME/include -o $B/tests/mock/mock_host tests/gpu/mock/mock_host.c \
	$B/libxpurecord.a $B/libxpucommon.a -lbpf -lelf -ldw -lz -lzstd -ldl -lpthread
exec $B/tests/mock/mock_host "$(realpath $B/libxpu-cupti.so)" "$(realpath $B/tests/mock/libmockcupti.so)"
