# SPDX-License-Identifier: MIT
"""Python CPU work for bench/vs_perf_names.py: a fixed amount of iteration, dict, string and
clock work, so an interpreter's C functions (object allocation, iteration through PLT stubs,
the vdso's clock) all show up in its native profile."""
import sys
import time


def step(n):
    d = {}
    total = 0
    for i in range(n):
        total += i * i % 7
        d[i % 211] = str(i)
    for _k, v in sorted(d.items()):
        total += len(v)
    total += sum(int(v) for v in d.values())
    for _ in range(n // 20):
        total += int(time.monotonic()) & 1
    return total


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    print(sum(step(5000) for _ in range(rounds)) & 0xff)
