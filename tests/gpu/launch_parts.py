#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads `perf script -F tid,ip,sym` (perf record -g of kernel time) on stdin and splits the
samples under the launch probe's BPF program (on_gpu_launch) by part: the innermost BPF
function on the chain (the program itself or a bpf_loop callback such as cfi_step or
py_frame_step), and by leaf (the kernel function the sample hit: a helper such as
copy_from_user_nofault, or the BPF code itself). Used by tests/gpu/launch_profile.sh.
"""
import collections
import re
import sys

PROG = "on_gpu_launch"


def bpf_name(sym):
    m = re.match(r"bpf_prog_[0-9a-f]+_(\w+)", sym)
    return m.group(1) if m else None


def samples(lines):
    chain = []
    for line in lines:
        if not line.strip():
            if chain:
                yield chain
            chain = []
        elif line.startswith("\t"):
            parts = line.split(None, 1)
            chain.append(parts[1].strip() if len(parts) > 1 else "?")
    if chain:
        yield chain


def main():
    total = 0
    parts = collections.Counter()
    leaves = collections.Counter()
    for chain in samples(sys.stdin):
        total += 1
        names = [bpf_name(s) for s in chain]
        if PROG not in names:
            continue
        part = next(n for n in names if n)	# the innermost BPF function
        parts[part] += 1
        leaves[(part, chain[0] if not names[0] else "(BPF code)")] += 1
    inside = sum(parts.values())
    print(f"{inside} of {total} kernel samples inside {PROG}")
    if not inside:
        return
    for part, n in parts.most_common():
        print(f"  {100 * n / inside:5.1f}%  {part}")
    print("by part and leaf:")
    for (part, leaf), n in leaves.most_common(30):
        print(f"  {100 * n / inside:5.1f}%  {part:16s} {leaf}")


if __name__ == "__main__":
    main()
