#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A tiny PyTorch DistributedDataParallel loop for the multi-rank GPU check
(tests/gpu/ddp_two.sh), run by torchrun: one process per rank, RANK/LOCAL_RANK/WORLD_SIZE from
torchrun. NCCL when every rank has its own GPU; with fewer GPUs than ranks (NCCL refuses two
ranks on one device) gloo, the ranks sharing the GPUs. Random data, no downloads, a few
seconds. Prints "rank R/W backend B device D steps N loss L" per rank."""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = int(os.environ.get("XPU_TORCH_STEPS", "100"))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024),
                                  nn.GELU(), nn.Linear(1024, 10))

    def forward(self, x):
        return self.body(x)


def train_step(model, opt, loss_fn, x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()  # DDP all-reduces the gradients here
    opt.step()
    return loss


def main():
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    ngpu = torch.cuda.device_count()
    backend = os.environ.get("XPU_DDP_BACKEND") or ("nccl" if ngpu >= world else "gloo")
    dev = torch.device("cuda", local % ngpu)
    torch.cuda.set_device(dev)
    dist.init_process_group(backend)
    torch.manual_seed(rank)
    model = DDP(Net().to(dev), device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    xs = torch.randn(8, 256, 512).pin_memory()
    ys = torch.randint(0, 10, (8, 256))
    t0 = time.time()
    for step in range(STEPS):
        x = xs[step % 8].to(dev, non_blocking=True)
        y = ys[step % 8].to(dev, non_blocking=True)
        loss = train_step(model, opt, loss_fn, x, y)
    torch.cuda.synchronize()
    print(f"rank {rank}/{world} backend {backend} device {dev} steps {STEPS} "
          f"loss {loss.item():.4f} {time.time() - t0:.2f} s", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
