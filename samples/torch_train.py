#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A tiny PyTorch training loop for the GPU checks: a small conv net plus MLP head on random
data, on CUDA, a few hundred steps (well under 20 s on an H100), no downloads. NVTX ranges mark
the phases so the trace shows them. Prints "expect steps N" and the loss for a sanity check.

  torch_train.py [--profile OUT.stacks]

--profile runs 10 warm-up steps, then the same XPU_TORCH_STEPS steps under torch.profiler (CPU and
CUDA activities, with_stack=True), and writes each kernel's time under the stack of the op that
launched it (samples/torch_profile.py): Python frames ("file.py(LINE):_func") root first, a
backward op under the stack of its forward op. Without it the loop runs unprofiled, as it always did."""
import os
import sys
import time

import torch
import torch.nn as nn

STEPS = int(os.environ.get("XPU_TORCH_STEPS", "300"))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4))
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 16, 256), nn.GELU(), nn.Linear(256, 10))

    def forward(self, x):
        return self.head(self.features(x))


def train_step(model, opt, loss_fn, x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


def run_steps(model, opt, loss_fn, xs, ys, dev, n):
    """n steps of the training loop, each copying its batch to the device; the last loss."""
    loss = None
    for step in range(n):
        torch.cuda.nvtx.range_push("train_step")
        x = xs[step % 16].to(dev, non_blocking=True)
        y = ys[step % 16].to(dev, non_blocking=True)
        loss = train_step(model, opt, loss_fn, x, y)
        torch.cuda.nvtx.range_pop()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    return loss


def profile_steps(model, opt, loss_fn, xs, ys, dev, out):
    """The loop of main() after 10 warm-up steps, under torch.profiler; writes its stacks."""
    from torch.profiler import ProfilerActivity, profile
    from torch_profile import export_kernel_stacks, stack_config

    run_steps(model, opt, loss_fn, xs, ys, dev, 10)
    torch.cuda.synchronize()
    t0 = time.time()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 with_stack=True, **stack_config()) as prof:
        loss = run_steps(model, opt, loss_fn, xs, ys, dev, STEPS)
        torch.cuda.synchronize()
    t1 = time.time()
    lines, total = export_kernel_stacks(prof, out)
    print(f"final loss {loss.item():.4f}, {STEPS} profiled steps in {t1 - t0:.3f}s")
    print(f"profile {out}: {lines} stacks, {total} us")
    return 0


def main():
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    # a fixed random dataset on the host, copied per step like a real input pipeline
    xs = torch.randn(16, 64, 3, 32, 32).pin_memory()
    ys = torch.randint(0, 10, (16, 64))
    if "--profile" in sys.argv[1:-1]:
        return profile_steps(model, opt, loss_fn, xs, ys, dev,
                             sys.argv[sys.argv.index("--profile") + 1])
    t0 = time.time()
    loss = run_steps(model, opt, loss_fn, xs, ys, dev, STEPS)
    torch.cuda.synchronize()
    print(f"final loss {loss.item():.4f} in {time.time() - t0:.3f}s")
    print(f"expect steps {STEPS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
