# SPDX-License-Identifier: MIT
"""Fixed PyTorch CPU work (autograd through a small MLP, so libtorch's native stacks are deep),
for bench/cfi_prog_cost.py. Prints elapsed_ns N. Needs torch (Debian: python3-torch).

  python3 bench/torch_deep.py STEPS"""
import sys
import time

import torch

torch.set_num_threads(1)


def step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


if __name__ == "__main__":
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.Tanh(),
                                torch.nn.Linear(512, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randn(64, 16)
    t0 = time.perf_counter_ns()
    for _ in range(steps):
        step(model, opt, x, y)
    print(f"elapsed_ns {time.perf_counter_ns() - t0}")
