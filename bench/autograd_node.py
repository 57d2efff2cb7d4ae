#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The workload of bench/autograd_cost.py: NODES tiny autograd ops (each makes one node), a
backward through them, ROUNDS times; prints elapsed_ns of the timed rounds and the node count.

  autograd_node.py NODES ROUNDS
"""
import sys
import time

import torch


def main():
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    torch.set_num_threads(1)
    x = torch.ones(4, requires_grad=True)

    def one_round():
        y = x
        for _ in range(nodes):
            y = y * 1.0001  # one MulBackward0 node, a tiny kernel each way
        y.sum().backward()

    for _ in range(10):
        one_round()
    t0 = time.perf_counter_ns()
    for _ in range(rounds):
        one_round()
    t1 = time.perf_counter_ns()
    print(f"elapsed_ns {t1 - t0}")
    print(f"nodes {nodes * rounds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
