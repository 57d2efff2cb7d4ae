#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CPU-sample stacks speedscope draws from our Trace Event JSON are our stacks, root first.

  stacks.py EXPORT.speedscope.json FOLDED

EXPORT is what speedscope's own Export button saved after importing xpu-report's --format=chrome
output (tests/viewers/browse.js speedscope-export): each thread's evented profile opens and
closes frames in the nesting speedscope draws. FOLDED is `xpu-report -F folded --view=cpu` of
the same trace. Every frame speedscope opens on a "samples" track must extend a path that is
a root-first prefix of one of the folded stacks: a stack drawn upside down (a leaf below its
caller, as when equal slices come leaf first) is not. Prints one line; exit 0 pass, 1 fail.
"""
import json
import re
import sys


def main():
    exp = json.load(open(sys.argv[1]))
    prefixes = set()
    for line in open(sys.argv[2]):
        if not line.strip():
            continue
        frames = line.rsplit(" ", 1)[0].split(";")[1:]	# [0] is the process name
        for k in range(1, len(frames) + 1):
            prefixes.add(tuple(frames[:k]))
    # speedscope names a Trace Event slice "name {args as JSON}"
    names = [re.sub(r' \{"samples":\d+,"depth":\d+\}$', "", f["name"]) for f in exp["shared"]["frames"]]
    opened = deepest = tracks = 0
    for prof in exp["profiles"]:
        if prof.get("type") != "evented" or " samples (tid " not in prof["name"]:
            continue
        tracks += 1
        stack = []
        for ev in prof["events"]:
            if ev["type"] == "O":
                stack.append(names[ev["frame"]])
                opened += 1
                deepest = max(deepest, len(stack))
                if tuple(stack) not in prefixes:
                    print(f"FAIL: {prof['name']}: speedscope draws {' > '.join(stack[-4:])} "
                          f"(depth {len(stack)}), not a root-first path of any sampled stack")
                    return 1
            elif ev["type"] == "C":
                stack.pop()
    if not tracks or deepest < 2:
        print(f"FAIL: nothing to check: {tracks} sample tracks, deepest stack {deepest}")
        return 1
    print(f"ok: {opened} frames on {tracks} sample tracks drawn root first (deepest {deepest})")
    return 0


sys.exit(main())
