# SPDX-License-Identifier: MIT
"""A decode loop run as a CUDA graph, for tests/gpu/cuda_graphs.sh (issue 39).

  python3 decode_graph.py eager|compile|plain [STEPS]

eager: decode_step (Attention.forward, then MLP.forward) captured once with torch.cuda.graph
inside capture(), replayed STEPS times by infer_loop(). compile: the same model under
torch.compile(mode="reduce-overhead"), whose CUDA graph trees capture and replay on their own;
infer_loop() calls the compiled step STEPS times. plain: no graph, the same block called STEPS
times by infer_loop(), the baseline of each layer's share. Prints one line: the mode and the steps run.
A report must put the replayed kernels under infer_loop's cudaGraphLaunch, then
'[graph] captured', then decode_step > Attention.forward or MLP.forward (eager); under the
compiled graph's capture (compile), never under the other layer."""
import sys

import torch

D = 1024


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.out = torch.nn.Linear(D, D)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        w = torch.softmax(q @ k.transpose(-1, -2) / D ** 0.5, dim=-1)
        return self.out(w @ v)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(D, 4 * D)
        self.down = torch.nn.Linear(4 * D, D)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.mlp = MLP()

    def forward(self, x):
        return decode_step(self, x)


def decode_step(block, x):
    x = x + block.attn(x)
    return x + block.mlp(x)


def capture(block, static_x):
    # warm up on a side stream, as torch.cuda.graph's documentation asks
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            block(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = block(static_x)
    return g, static_y


def infer_loop(step, steps):
    for _ in range(steps):
        step()
    torch.cuda.synchronize()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "eager"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    torch.manual_seed(0)
    block = Block().cuda().eval()
    x = torch.randn(64, D, device="cuda")
    with torch.no_grad():
        if mode == "eager":
            g, _ = capture(block, x)
            infer_loop(g.replay, steps)
        elif mode == "compile":
            fn = torch.compile(block, mode="reduce-overhead")
            for _ in range(3):  # compile, record, capture
                fn(x)
            infer_loop(lambda: fn(x), steps)
        elif mode == "plain":
            infer_loop(lambda: block(x), steps)
        else:
            sys.exit("mode: eager, compile or plain")
    print(f"{mode} {steps}")


if __name__ == "__main__":
    main()
