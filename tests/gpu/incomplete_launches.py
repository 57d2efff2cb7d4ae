#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which launch stacks of a trace do not reach a thread's first frame: reads
`xpu-report --format=jsonl` on stdin and prints, for launches whose outermost frame is not a
root (_start, clone, start_thread, ...), the most common outermost frames and the process.
A diagnostic for the GPU scripts (tests/gpu/backward_attr.sh)."""
import collections
import json
import sys

ROOTS = {"_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone",
         "clone3", "main"}


def main():
    total = bad = 0
    by_top = collections.Counter()
    for line in sys.stdin:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") != "launch":
            continue
        total += 1
        frames = e.get("frames") or []
        root = frames[1] if len(frames) > 1 else (frames[0] if frames else "")
        if frames and (frames[0] in ROOTS or root in ROOTS or "clone" in root):
            continue
        bad += 1
        by_top[(e.get("pid"), " ; ".join(f[:80] for f in frames[:4]))] += 1
    print(f"{bad} of {total} launches without a root frame")
    for (pid, top), n in by_top.most_common(12):
        print(f"  {n:6d}  pid {pid}: {top}")


if __name__ == "__main__":
    main()
