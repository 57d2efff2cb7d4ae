#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What backward attribution costs per autograd node, on this machine's PyTorch (CPU: Debian's
python3-torch, /usr/bin/python3). bench/autograd_node.py makes tiny nodes and evaluates them, so
nearly all of its time is per-node work; it runs unprofiled, under xpu-record --no-autograd and
under xpu-record with the default (attribution), in a new order each repetition. Reports each
mode's slowdown against the unprofiled run of its repetition, and the time attribution adds per
node (default minus --no-autograd, paired by repetition). Writes BENCHMARKS.md's
"autograd-node-cost" section unless --no-write. Needs root (BPF).

  bench/autograd_cost.py [--reps 7] [--nodes 200] [--rounds 200] [--python /usr/bin/python3]
"""
import argparse
import os
import random
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

MODES = {"unprofiled": None, "xpu-record --no-autograd": ["--no-autograd"],
         "xpu-record (default)": []}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    work = [args.python, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "autograd_node.py"), str(args.nodes), str(args.rounds)]
    nodes = args.nodes * args.rounds
    tmp = tempfile.mkdtemp(prefix="xpu-agcost-")
    times = {m: [] for m in MODES}
    for rep in range(args.reps):
        order = list(MODES)
        random.Random(rep).shuffle(order)
        for m in order:
            cmd = work if MODES[m] is None else [
                os.path.join(benchlib.BUILD, "xpu-record"), "--no-gpu", "-o",
                os.path.join(tmp, "t.xpu")] + MODES[m] + ["--"] + work
            r = benchlib.run(cmd)
            if r.returncode:
                raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr[-500:]}")
            times[m].append(benchlib.elapsed(r.stdout))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
    base = times["unprofiled"]
    lines = ["## Backward attribution: cost per autograd node (`bench/autograd_cost.py`)", "",
             f"Machine: {benchlib.machine_line()}. {args.reps} interleaved repetitions of "
             f"`bench/autograd_node.py {args.nodes} {args.rounds}` ({nodes} nodes made and "
             "evaluated, one tiny op each) with /usr/bin/python3's PyTorch on the CPU; slowdown "
             "= elapsed / unprofiled in the same repetition, median [min..max].", "",
             "| run | per node (us) | slowdown |", "|---|---|---|"]
    for m in MODES:
        per = statistics.median(t / nodes / 1000 for t in times[m])
        ratio = benchlib.fmt_ratio([t / b for t, b in zip(times[m], base)]) \
            if MODES[m] is not None else ""
        lines.append(f"| {m} | {per:.2f} | {ratio} |")
    added = [(a - b) / nodes / 1000 for a, b in
             zip(times["xpu-record (default)"], times["xpu-record --no-autograd"])]
    med, lo, hi = benchlib.median_spread(added)
    lines += ["", f"Attribution adds {med:.2f} us [{lo:.2f}..{hi:.2f}] per node (default minus "
              "--no-autograd, paired by repetition): a uprobe and a stack walk where the node is "
              "made, a uprobe where it is evaluated."]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("autograd-node-cost", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
