# SPDX-License-Identifier: MIT
"""Fixed Python CPU work for bench/python_overhead.py: nested pure-Python calls a few frames
deep. Prints its own elapsed time (elapsed_ns N), so interpreter start-up is not measured."""
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def middle(n):
    return leaf(n) + leaf(n // 2)


def outer(rounds, n):
    return sum(middle(n) for _ in range(rounds))


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    t0 = time.perf_counter_ns()
    outer(rounds, 5000)
    print(f"elapsed_ns {time.perf_counter_ns() - t0}")
