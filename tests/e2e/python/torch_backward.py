# SPDX-License-Identifier: MIT
"""A CPU training loop with known backward costs, for tests/e2e/test_backward_attr.sh.

train_step() runs three forward functions defined at module level, then loss.backward() and a
tiny SGD update. Their costs, forward and backward together, differ clearly (Debian's
python3-torch 1.13, reference BLAS, one thread: about 46/31/21% of a 38 ms step, half of it
in backward):
  big_mlp     two matmuls (addmm, mm): AddmmBackward0, MmBackward0, ReluBackward0
  conv_block  three conv2d layers (oneDNN): ConvolutionBackward0, ReluBackward0, MeanBackward1
  cheap_head  rounds of elementwise ops: TanhBackward0, MulBackward0, SigmoidBackward0
so a profiler that gives each backward sample the forward stack that created its autograd
node must split the backward time in the same proportions as torch's own profiler.

Usage:
  torch_backward.py SECONDS              train for SECONDS (wall clock), print "N steps"
  torch_backward.py [SECONDS] --profile OUT STEPS   3 warm-up steps, then STEPS steps under
      torch.profiler.profile(activities=[CPU], with_stack=True); writes
      prof.export_stacks(OUT, "self_cpu_time_total") and prints the time a step (SECONDS,
      if there, is not used)

Everything is deterministic (fixed seed, synthetic inputs, no downloads) and runs on one
thread (torch.set_num_threads(1)), the caller's: in torch 1.13 on CPU the autograd engine
evaluates the backward graph on the thread that called backward(), so sampling that one thread
sees forward and backward alike.

torch.profiler's stacks file (torch 1.13: EventList.export_stacks in
torch/autograd/profiler_util.py, checked by running this script):
  - one line per op event with a non-empty stack and a self time of 1 us or more:
      FRAME;FRAME;...;FRAME MICROSECONDS
    frames root first (the outermost <module> first), then a space and the event's
    self_cpu_time_total, an integer (wall-clock microseconds, children excluded);
  - frames are Python only, no native frame and no op name; " ", ";", tab and newline in a
    frame become "_", so "FILE(LINE): NAME" reads "FILE(LINE):_NAME":
      torch_backward.py(120):_train_step     this script (FILE without the sys.path entry
      torch/_tensor.py(429):_backward        it was found under: a basename here)
      <built-in_method_mm_of_type_object_at_0x7f..>   a C function's call, the last frame
      nn.Module:_Linear_0                    a module's call (its forward is a frame below)
    NAME is the code object's co_name, not its qualified name. LINE is the function's def
    line for a call made while profiling, the current line for one already running when
    profiling began (<module>, main, profile);
  - a backward op, and every event under it, gets the stack of the forward op that made its
    node: the first event (not itself under a backward node) with the node's sequence number
    on the node's forward thread (EventList._set_backward_stacktraces). So MmBackward0's time
    reads train_step;big_mlp;<built-in_method_mm...>, not loss.backward();
  - AccumulateGrad has no sequence number: it and its ops get an empty stack and are left out
    of the file. The engine's own events (the "autograd::engine::evaluate_function: X" around
    each node; gradients summed or reduced between nodes) keep the stack of the backward()
    call: train_step;torch/_tensor.py(429):_backward;<built-in_method_run_backward...>, about
    1% of this loop.
"""
import ctypes
import sys
import time

import torch


def keep_freed_memory():
    """Keeps freed tensor memory in the process (glibc's mallopt). Left to glibc's dynamic
    thresholds, the heap's top went back to the kernel in some runs and tensors were faulted
    in afresh every step: 370 to 660 thousand page faults in a 4 to 6 s run instead of 40
    thousand, a slower step, and cheap_head's forward at 19 to 21% of it instead of 15%
    (measured by the program itself), from run to run, recorded or not."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: never give the heap's top back
        libc.mallopt(-3, 1 << 25)  # M_MMAP_THRESHOLD: its maximum, 32 MiB: tensors on the heap
    except (OSError, AttributeError):
        pass


keep_freed_memory()
torch.set_num_threads(1)
torch.set_flush_denormal(True)  # keep the step's cost constant as the weights move
torch.manual_seed(0)

WARMUP = 3
LR = 1e-4

# big_mlp: 64x256 @ 256x512, relu, @ 512x256
W1 = (torch.randn(256, 512) * 0.05).requires_grad_()
B1 = torch.zeros(512).requires_grad_()
W2 = (torch.randn(512, 256) * 0.05).requires_grad_()
X = torch.randn(64, 256)

# conv_block: 3 layers of a 3x3 conv, 128 to 128 channels, on 8 images of 8x8 (256 KiB).
# With one conv on 20 images of 32 channels, 32x32 (2.5 MiB tensors), oneDNN's convolution
# backward took 350 to 800 page faults a step under torch.profiler instead of 65 (the
# profiler's growing event store splits the heap, so large tensors land on fresh pages) and
# 30 to 100% longer: conv_block's share in the profiler rose 4 to 10 points above xpu-perf's
# and the program's own timing.
CONV_LAYERS = 3
K = (torch.randn(128, 128, 3, 3) * 0.05).requires_grad_()
IMG = torch.randn(8, 128, 8, 8)

# cheap_head: 12 rounds of elementwise work on 32 x 4096 (512 KiB a tensor). With 3 rounds on
# 128 x 4096 (2 MiB tensors), torch.profiler put cheap_head at 28% of the step where the
# program, timing itself, measured 21%: the profiler's growing event store splits the heap,
# and large tensors then land on fresh pages (see conv_block).
CHEAP_ROUNDS = 12
S = (torch.ones(4096) * 0.5).requires_grad_()
Z = torch.randn(32, 4096)

PARAMS = [W1, B1, W2, K, S]

# torch 1.13's profiler gives a backward op the stack of the first forward event that carries
# its node's sequence number, and every op records at::sequence_number::peek(), the number the
# next node will get, whether it makes a node or not. So the first node of a step (the addmm
# of big_mlp) would share its number with the previous step's loss.item() and SGD ops, and
# AddmmBackward0 would be put under train_step;item. A throwaway node made first in each step
# takes that number; its backward never runs and it costs a microsecond.
SEQ_SINK = torch.zeros(1, requires_grad=True)


def big_mlp(x):
    h = torch.relu(torch.addmm(B1, x, W1))
    return torch.mm(h, W2)


def conv_block(img):
    y = img
    for _ in range(CONV_LAYERS):
        y = torch.relu(torch.nn.functional.conv2d(y, K, padding=1))
    return y.mean(dim=(2, 3))


def cheap_head(z):
    # a chain: each result has one consumer, so no gradient is summed in the engine's input
    # buffers (an aten::add that torch's profiler puts outside any node)
    y = z * S
    for _ in range(CHEAP_ROUNDS):
        y = torch.sigmoid(torch.tanh(y) * 1.5)
    return torch.square(y).mean()


def train_step():
    SEQ_SINK.mul(1.0)
    a = big_mlp(X)
    b = conv_block(IMG)
    c = cheap_head(Z)
    loss = a.pow(2).mean() + b.pow(2).mean() + c
    loss.backward()
    with torch.no_grad():
        for p in PARAMS:
            p.sub_(LR * p.grad)
            p.grad = None
    return loss.item()


def run_for(seconds):
    steps = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        train_step()
        steps += 1
    return steps


def profile(out, steps):
    from torch.profiler import ProfilerActivity
    for _ in range(WARMUP):
        train_step()
    with torch.profiler.profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        t0, c0 = time.monotonic(), time.thread_time()
        for _ in range(steps):
            train_step()
        dt, dc = time.monotonic() - t0, time.thread_time() - c0
    prof.export_stacks(out, "self_cpu_time_total")
    # the profiler times ops by the clock, so time spent off the CPU (a busy machine) counts
    # towards whichever op was running: the share on CPU says how much of that there was
    print("%d steps profiled, %.1f ms a step, %.0f%% of it on CPU"
          % (steps, dt * 1000 / steps, 100 * dc / dt))


def main(argv):
    args = list(argv[1:])
    prof = None
    if "--profile" in args:
        i = args.index("--profile")
        if len(args) < i + 3:
            sys.exit("usage: torch_backward.py [SECONDS] --profile OUT STEPS")
        prof = (args[i + 1], int(args[i + 2]))
        del args[i:i + 3]
    if prof and len(args) <= 1:
        profile(*prof)
    elif len(args) == 1:
        steps = run_for(float(args[0]))
        print("%d steps" % steps)
    else:
        sys.exit(__doc__.split("\n\n")[2])


if __name__ == "__main__":
    main(sys.argv)
