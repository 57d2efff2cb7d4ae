# SPDX-License-Identifier: MIT
"""torch.profiler's attribution of GPU time to Python stacks, for the checks of backward
attribution (tests/gpu/backward_attr.sh): the samples' --profile option writes it.

export_stacks(path, "self_cuda_time_total") counts a kernel's time once per profiler event it
falls under (with torch 2.x's Python function events it came to twice the GPU time), so this
writes the same format from the kernels themselves: each kernel, copy and memset counted once,
under the stack of the op that launched it. A backward op has its forward op's stack: the
profiler copies it by sequence number (EventList._set_backward_stacktraces)."""


def stack_config():
    """The profiler keeps Python stacks only when asked to (torch 2.x); {} before that."""
    try:
        from torch._C._profiler import _ExperimentalConfig
    except ImportError:
        return {}
    return {"experimental_config": _ExperimentalConfig(verbose=True)}


def export_kernel_stacks(prof, path):
    """One line per distinct stack, root first, frames as export_stacks writes them
    ("file.py(LINE):_func"), then the microseconds of GPU work launched under it. Returns
    (lines, total microseconds)."""
    translate = str.maketrans(" ;\t\n", "____")
    weights = {}
    for evt in prof.events():
        us = sum(k.duration for k in (getattr(evt, "kernels", None) or []))
        if not evt.stack or us <= 0:
            continue
        key = ";".join(frame.translate(translate) for frame in reversed(evt.stack))
        weights[key] = weights.get(key, 0) + us
    with open(path, "w") as f:
        for key, us in weights.items():
            f.write(f"{key} {int(round(us))}\n")
    return len(weights), int(round(sum(weights.values())))
