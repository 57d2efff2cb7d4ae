#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pools the paired comparison of one or more bench/gpu_overhead.py runs (their gpu_runs.csv).

Each row of a gpu_runs.csv is one run of the PyTorch loop: repetition, position, what, ns. Within
a repetition of one file, every profiler's time is divided by the reference's (Kineto by
default); per file and over all files this prints the median ratio [min..max], how many pairs
the profiler won, and the one-sided sign-test p of winning that many or more by chance (no
assumption on the noise, which on the GPU host is neither small nor normal).

  bench/gpu_pairs.py [--ref kineto] RUNS.csv [RUNS.csv...]
"""
import argparse
import csv
import math
import statistics
import sys


def sign_test_p(wins, n):
    """P(at least wins of n) for a fair coin."""
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n if n else 1.0


def load(path):
    reps = {}
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) != 4:
                raise ValueError(f"{path}: want 'rep,position,what,ns' rows, got {row!r}")
            rep, _, what, ns = row
            reps.setdefault(int(rep), {})[what] = int(ns)
    return reps


def line(name, ratios):
    wins = sum(r < 1 for r in ratios)
    med = statistics.median(ratios)
    return (f"  {name:<28} {100 * (med - 1):+6.1f}% [{100 * (min(ratios) - 1):+.1f}.."
            f"{100 * (max(ratios) - 1):+.1f}]  faster in {wins}/{len(ratios)}  "
            f"p = {sign_test_p(wins, len(ratios)):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="kineto", help="what the others are divided by")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    pooled = {}
    for path in args.runs:
        try:
            reps = load(path)
        except (OSError, ValueError) as e:
            sys.exit(f"gpu_pairs: {e}")
        per = {}
        for rep in sorted(reps):
            times = reps[rep]
            if args.ref not in times:
                continue
            for what, ns in times.items():
                if what not in (args.ref, "base"):
                    per.setdefault(what, []).append(ns / times[args.ref])
        if not per:
            sys.exit(f"gpu_pairs: {path}: no repetition has a '{args.ref}' run")
        print(f"{path}: against {args.ref}")
        for what, ratios in sorted(per.items()):
            print(line(what, ratios))
            pooled.setdefault(what, []).extend(ratios)
    if len(args.runs) > 1:
        print(f"all {len(args.runs)} files: against {args.ref}")
        for what, ratios in sorted(pooled.items()):
            print(line(what, ratios))


if __name__ == "__main__":
    main()
