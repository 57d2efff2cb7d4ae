#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A second PyTorch training loop for the GPU checks, for backward attribution: a convolution
stem, one self-attention block and an MLP block on random images, AdamW, on CUDA, no downloads.

The forward is three functions at module level, each with its own name in a stack and a clearly
different share of the GPU time (forward and backward together; rough figures for an H100, the
real ones are whatever tests/gpu/backward_attr.sh prints):
  conv_stem   two 3x3 convolutions and GELUs, image to tokens    (smallest, ~10-15%)
  attention   layer norm, QKV projection, scores by matmul, softmax, matmul with V, output
              projection (several kernels each way, not one fused SDPA kernel; the largest, ~50%)
  mlp         layer norm, two linears with a GELU between them     (~25%)
model_fn() chains them and adds a small classifier head; train_step() runs model_fn, the loss,
backward() and the AdamW step. XPU_TORCH_STEPS steps (default 200); prints "expect steps N".

  torch_attn.py [--compile] [--profile OUT.stacks]

--compile runs model_fn through torch.compile (inductor, default mode): its backward is one
CompiledFunctionBackward node (conv_stem, attention and mlp are inlined into the graph, so only
train_step and model_fn keep their frames). --profile OUT.stacks runs WARMUP unprofiled steps,
then the XPU_TORCH_STEPS steps under torch.profiler (CPU and CUDA activities, with_stack=True)
and writes each kernel's time under the stack of the op that launched it (torch_profile.py):
Python frames "file.py(LINE):_func" root first, backward ops under the stack of their forward op.
--device cpu (for debugging without a GPU) runs a smaller batch on the CPU and exports
self_cpu_time_total.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = int(os.environ.get("XPU_TORCH_STEPS", "200"))
WARMUP = 10  # steps before the profiled ones: cuDNN/cuBLAS handles, allocator, compilation
IMG, DIM, HEADS, HIDDEN, CLASSES = 64, 128, 4, 1024, 10  # 64x64 images -> 32x32 = 1024 tokens


class Weights(nn.Module):
    """Only the parameters: the forward is the module-level functions below, so that each reads
    as its own name in a stack (a method would read Weights.forward)."""

    def __init__(self):
        super().__init__()

        def p(*shape, scale=1.0):
            return nn.Parameter(torch.randn(*shape) * scale)

        def z(n, value=0.0):
            return nn.Parameter(torch.full((n,), value))

        self.c1, self.c1_b = p(32, 3, 3, 3, scale=0.2), z(32)
        self.c2, self.c2_b = p(DIM, 32, 3, 3, scale=0.06), z(DIM)
        self.ln1_w, self.ln1_b = z(DIM, 1.0), z(DIM)
        self.qkv, self.qkv_b = p(3 * DIM, DIM, scale=DIM ** -0.5), z(3 * DIM)
        self.proj, self.proj_b = p(DIM, DIM, scale=DIM ** -0.5), z(DIM)
        self.ln2_w, self.ln2_b = z(DIM, 1.0), z(DIM)
        self.fc1, self.fc1_b = p(HIDDEN, DIM, scale=DIM ** -0.5), z(HIDDEN)
        self.fc2, self.fc2_b = p(DIM, HIDDEN, scale=HIDDEN ** -0.5), z(DIM)
        self.out, self.out_b = p(CLASSES, DIM, scale=DIM ** -0.5), z(CLASSES)


def conv_stem(w, x):
    """[B, 3, 64, 64] images -> [B, 1024, DIM] tokens."""
    h = F.gelu(F.conv2d(x, w.c1, w.c1_b, padding=1))
    h = F.gelu(F.conv2d(h, w.c2, w.c2_b, stride=2, padding=1))
    return h.flatten(2).transpose(1, 2)


def attention(w, h):
    """Pre-norm multi-head self-attention with a residual, spelled out op by op."""
    b, t, d = h.shape
    x = F.layer_norm(h, (d,), w.ln1_w, w.ln1_b)
    qkv = F.linear(x, w.qkv, w.qkv_b).view(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = torch.matmul(q, k.transpose(-2, -1)) * (d // HEADS) ** -0.5
    o = torch.matmul(torch.softmax(scores, dim=-1), v)
    return h + F.linear(o.transpose(1, 2).reshape(b, t, d), w.proj, w.proj_b)


def mlp(w, h):
    """Pre-norm feed-forward block with a residual."""
    x = F.layer_norm(h, (h.shape[-1],), w.ln2_w, w.ln2_b)
    return h + F.linear(F.gelu(F.linear(x, w.fc1, w.fc1_b)), w.fc2, w.fc2_b)


def model_fn(w, x):
    h = mlp(w, attention(w, conv_stem(w, x)))
    return F.linear(h.mean(dim=1), w.out, w.out_b)


def train_step(forward, w, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(forward(w, x), y)
    loss.backward()
    opt.step()
    return loss


def run(steps, forward, w, opt, xs, ys, dev):
    nvtx = dev.type == "cuda"
    loss = None
    for step in range(steps):
        if nvtx:
            torch.cuda.nvtx.range_push("train_step")
        loss = train_step(forward, w, opt, xs[step % len(xs)], ys[step % len(ys)])
        if nvtx:
            torch.cuda.nvtx.range_pop()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    return loss


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def export(prof, path, metric):
    try:
        prof.export_stacks(path, metric)
    except ValueError:  # a torch that names the metric after the device, not CUDA
        prof.export_stacks(path, metric.replace("cuda", "device"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile", action="store_true", help="torch.compile model_fn (inductor)")
    ap.add_argument("--profile", metavar="OUT", help="profile the loop with torch.profiler and "
                    "write its GPU time per Python stack to OUT")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: debugging only
    args = ap.parse_args()
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    batch = 16 if dev.type == "cuda" else 2
    torch.manual_seed(0)
    w = Weights().to(dev)
    opt = torch.optim.AdamW(w.parameters(), lr=1e-4)
    # a fixed random data set already on the device: the loop launches no input copies
    xs = [torch.randn(batch, 3, IMG, IMG, device=dev) for _ in range(4)]
    ys = [torch.randint(0, CLASSES, (batch,), device=dev) for _ in range(4)]
    forward = torch.compile(model_fn) if args.compile else model_fn

    if args.profile:
        from torch.profiler import ProfilerActivity, profile
        from torch_profile import export_kernel_stacks, stack_config
        run(WARMUP, forward, w, opt, xs, ys, dev)
        sync(dev)
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
        t0 = time.time()
        with profile(activities=acts, with_stack=True, **stack_config()) as prof:
            loss = run(STEPS, forward, w, opt, xs, ys, dev)
            sync(dev)
        t1 = time.time()
        if dev.type == "cuda":
            lines, total = export_kernel_stacks(prof, args.profile)
        else:
            export(prof, args.profile, "self_cpu_time_total")
            with open(args.profile) as f:
                text = f.read().splitlines()
            lines = len(text)
            total = sum(int(line.rsplit(" ", 1)[1]) for line in text if " " in line)
        print(f"final loss {loss.item():.4f}, {STEPS} profiled steps in {t1 - t0:.3f}s")
        print(f"profile {args.profile}: {lines} stacks, {total} us")
        return 0

    t0 = time.time()
    loss = run(STEPS, forward, w, opt, xs, ys, dev)
    sync(dev)
    print(f"final loss {loss.item():.4f} in {time.time() - t0:.3f}s")
    print(f"expect steps {STEPS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
