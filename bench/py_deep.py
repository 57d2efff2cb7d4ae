# SPDX-License-Identifier: MIT
"""Fixed Python CPU work at a chosen call depth, for bench/cfi_prog_cost.py: DEPTH nested
pure-Python calls, each a few native interpreter frames deep. Prints elapsed_ns N.

  python3 bench/py_deep.py DEPTH ROUNDS"""
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def down(depth, n):
    if depth <= 0:
        return leaf(n)
    return down(depth - 1, n) + 1


if __name__ == "__main__":
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    t0 = time.perf_counter_ns()
    for _ in range(rounds):
        down(depth, 20000)
    print(f"elapsed_ns {time.perf_counter_ns() - t0}")
