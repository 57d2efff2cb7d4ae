#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PyTorch training loop for overhead benchmarks. Prints the timed loop's elapsed time.

  torch_bench.py [none|kineto] [STEPS]

kineto wraps the timed loop in torch.profiler with CPU and CUDA activities (PyTorch's own
profiler, the baseline we compare against); none runs it bare (also used under xpu-record).
"""
import sys
import time

import torch
import torch.nn as nn


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(64 * 16, 256), nn.GELU(),
        nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(64, 3, 32, 32, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(20):  # warm-up: cuDNN autotuning, allocator, lazy module loading
        step()
    torch.cuda.synchronize()
    prof = None
    if mode == "kineto":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    ends = []
    t0 = time.perf_counter_ns()
    for _ in range(steps):
        step()
        ends.append(time.perf_counter_ns())
    torch.cuda.synchronize()
    t1 = time.perf_counter_ns()
    if prof is not None:
        prof.__exit__(None, None, None)
    print(f"elapsed_ns {t1 - t0}")
    # each step's wall time (the launches' CPU side while the GPU keeps up): the median is the
    # steady state, without start-up and rare long steps
    d = sorted(b - a for a, b in zip([t0] + ends[:-1], ends))
    print(f"step_median_ns {d[len(d) // 2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
