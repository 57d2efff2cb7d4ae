#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""samples/torch_attn.py's training loop (convolutions, attention, MLP, AdamW: larger kernels
than torch_bench.py's) for overhead benchmarks, with torch_bench.py's interface:

  torch_attn_bench.py [none|kineto] [STEPS]

Prints the timed loop's elapsed time (after 10 warm-up steps) as elapsed_ns."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "samples"))
import torch  # noqa: E402
import torch_attn as ta  # noqa: E402


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    torch.manual_seed(0)
    dev = torch.device("cuda")
    w = ta.Weights().to(dev)
    opt = torch.optim.AdamW(w.parameters(), lr=1e-4)
    xs = [torch.randn(16, 3, ta.IMG, ta.IMG, device=dev) for _ in range(4)]
    ys = [torch.randint(0, ta.CLASSES, (16,), device=dev) for _ in range(4)]
    ta.run(10, ta.model_fn, w, opt, xs, ys, dev)
    torch.cuda.synchronize()
    prof = None
    if mode == "kineto":
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    t0 = time.perf_counter_ns()
    ta.run(steps, ta.model_fn, w, opt, xs, ys, dev)
    torch.cuda.synchronize()
    t1 = time.perf_counter_ns()
    if prof is not None:
        prof.__exit__(None, None, None)
    print(f"elapsed_ns {t1 - t0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
