#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A loop of many small launches (issue 38's third loop): an optimizer-style update of 64 small
parameter tensors done op by op (no foreach, no fusion), a few elementwise ops and a reduction
each, so that the GPU finishes each kernel in a few microseconds and the CPU's launch path is
all the loop's time: what a launch costs the program shows undiluted. torch_bench.py's interface:

  torch_small_bench.py [none|kineto] [STEPS]

Prints the timed loop's elapsed time (after 10 warm-up steps) as elapsed_ns."""
import sys
import time

import torch

NPARAM = 64


def update(ps, gs, ms, lr):
    for p, g, m in zip(ps, gs, ms):
        m.mul_(0.9).add_(g, alpha=0.1)
        p.add_(m, alpha=-lr)
        g.mul_(0.5)


def norms(ps):
    return [p.norm() for p in ps[:8]]


def step(ps, gs, ms):
    update(ps, gs, ms, 1e-3)
    return norms(ps)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    torch.manual_seed(0)
    dev = torch.device("cuda")
    ps = [torch.randn(256, device=dev) for _ in range(NPARAM)]
    gs = [torch.randn(256, device=dev) for _ in range(NPARAM)]
    ms = [torch.zeros(256, device=dev) for _ in range(NPARAM)]
    for _ in range(10):
        step(ps, gs, ms)
    torch.cuda.synchronize()
    prof = None
    if mode == "kineto":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    ends = []
    t0 = time.perf_counter_ns()
    for _ in range(steps):
        step(ps, gs, ms)
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
