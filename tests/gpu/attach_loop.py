#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PyTorch training loop to attach to (tests/gpu/attach.sh): runs for SECONDS, and every 20
steps synchronizes and appends "monotonic_ns steps" to LOG, so the step time before, during and
after an attach can be compared. MODEL train: samples/torch_train.py's conv net and train_step;
attn: a small transformer block (attention, MLP, layer norms) trained with AdamW.

  attach_loop.py MODEL SECONDS LOG
"""
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples"))


class Block(nn.Module):
    def __init__(self, d=256, heads=8):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.out = nn.Linear(d, 10)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        return self.out(x.mean(dim=1))


def train_step(model, opt, loss_fn, x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


def main():
    which, seconds, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    dev = torch.device("cuda")
    torch.manual_seed(0)
    if which == "train":
        import torch_train
        model = torch_train.Net().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs = torch.randn(16, 64, 3, 32, 32, device=dev)
    else:
        model = Block().to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        xs = torch.randn(16, 32, 64, 256, device=dev)
    ys = torch.randint(0, 10, (16, xs.shape[1]), device=dev)
    loss_fn = nn.CrossEntropyLoss()
    end = time.monotonic() + seconds
    step = 0
    with open(log, "w") as f:
        while time.monotonic() < end:
            train_step(model, opt, loss_fn, xs[step % 16], ys[step % 16])
            step += 1
            if step % 20 == 0:
                torch.cuda.synchronize()
                f.write(f"{time.monotonic_ns()} {step}\n")
                f.flush()
    print(f"steps {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
