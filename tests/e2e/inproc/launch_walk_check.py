#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whether the in-process launch walk takes exactly the BPF walk's stacks, launch by launch
(issue 38): a trace of `xpu-record --launch-walk=check` holds, for every launch walked in the
launching thread, a second GPU_LAUNCH of the same correlation id walked by BPF from the same
stack. Compares each pair's frames as xpu-report -F jsonl names them, whole.

  launch_walk_check.py TRACE [--report XPU_REPORT] [--max-per-mille N] [--min-pairs N]

Prints the pairs, how many are equal, the launches without a twin, and the first differing
pairs frame by frame. Exit 0 when at most N per mille of the pairs differ (default 0) and at
least --min-pairs pairs were found (default 1), 1 otherwise, 2 on a usage or read error.
"""
import argparse
import collections
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--report", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "..", "build", "xpu-report"))
    ap.add_argument("--max-per-mille", type=float, default=0.0)
    ap.add_argument("--min-pairs", type=int, default=1)
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    r = subprocess.run([args.report, "-F", "jsonl", args.trace], capture_output=True, text=True)
    if r.returncode:
        print(f"launch_walk_check: xpu-report failed: {r.stderr.strip()[:300]}", file=sys.stderr)
        return 2
    walks = collections.defaultdict(lambda: {"in": [], "bpf": []})
    for line in r.stdout.splitlines():
        if not line.startswith('{"type":"launch"'):
            continue
        ev = json.loads(line)
        walks[(ev["pid"], ev["correlation_id"])]["in" if ev.get("in_process") else "bpf"].append(
            ev.get("frames", []))
    pairs = equal = lone_in = lone_bpf = extra = 0
    shown = 0
    for key, w in sorted(walks.items()):
        if len(w["in"]) > 1 or len(w["bpf"]) > 1:
            extra += 1
        if w["in"] and not w["bpf"]:
            lone_in += 1
            continue
        if w["bpf"] and not w["in"]:
            lone_bpf += 1
            continue
        pairs += 1
        a, b = w["in"][0], w["bpf"][0]
        if a == b:
            equal += 1
            continue
        if shown < args.show:
            shown += 1
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"  differ: pid {key[0]} correlation id {key[1]}: {len(a)} frames in process, "
                  f"{len(b)} by BPF, first difference at frame {k} (outermost first):")
            print(f"    in process: {';'.join(a[max(0, k - 2):k + 4])}")
            print(f"    BPF:        {';'.join(b[max(0, k - 2):k + 4])}")
    differ = pairs - equal
    pm = 1000.0 * differ / pairs if pairs else 0.0
    print(f"launch_walk_check: {pairs} launches walked both ways, {equal} with the same stack, "
          f"{differ} differing ({pm:.2f} per mille); {lone_bpf} walked by BPF only (the "
          f"in-process walk fell back), {lone_in} in process only, {extra} correlation ids "
          "with more than one launch of a kind")
    ok = pairs >= args.min_pairs and pm <= args.max_per_mille and not lone_in and not extra
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
