#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Calls libxpu-cupti.so's launch marker, xpu_cupti_api_enter(), from Python N times at a given
Python call depth, as PyTorch's CUDA launches reach it, and prints the mean time per call. Under
xpu-record every call is a uprobe hit that walks the native and Python stack, so the difference
against an unprofiled run is the launch path's cost per launch, without a GPU.

  marker_py.py LIBXPU_CUPTI [CALLS] [DEPTH]      (defaults 200000 and 20)
"""
import ctypes
import sys
import time


def main():
    lib = ctypes.CDLL(sys.argv[1])
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    marker = lib.xpu_cupti_api_enter
    marker.argtypes = [ctypes.c_uint32] * 3

    def nest(d):
        if d:
            return nest(d - 1)
        t0 = time.perf_counter_ns()
        for i in range(calls):
            marker(i + 1, 211, 1)
        return time.perf_counter_ns() - t0

    ns = nest(depth)
    print(f"calls {calls}\nelapsed_ns {ns}\nns_per_call {ns / calls:.1f}")


if __name__ == "__main__":
    main()
