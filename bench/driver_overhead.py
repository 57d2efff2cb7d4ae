#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of xpu-record --driver and of GPU memory tracking, as ratios in one run.

Runs COMMAND interleaved REPS times in four modes: not profiled; recorded (default options,
memory tracking on); recorded with XPU_CUPTI_MEMORY=0 (no memory activity, no allocation
stacks); recorded with --driver. Prints the median [min..max] time ratio of each mode to the
unprofiled run, and of --driver and of memory tracking to the recording without them.

The time is the program's own when it prints one ("... in 12.34s", as samples/torch_train.py
does for its training loop), so start-up (CUDA initialization, the recorder's set-up and
finalization) does not dilute the cost of the loop; otherwise the wall time of the whole
command (samples/cuda_pipeline prints no time of its own). The output says which.

  bench/driver_overhead.py --build DIR [--reps 7] -- COMMAND [ARGS...]   (as root)
"""
import argparse
import re
import os
import statistics
import subprocess
import sys
import tempfile
import time


OWN_TIME = re.compile(r"\bin ([0-9]+(?:\.[0-9]+)?)s\b")
used = set()


def timed(cmd, env):
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t0
    if r.returncode:
        sys.exit(f"driver_overhead: {' '.join(cmd[:3])}... exited {r.returncode}: {r.stderr[-500:]}")
    m = OWN_TIME.findall(r.stdout)
    used.add("own" if m else "wall")
    return float(m[-1]) if m else dt


def fmt(v):
    med = statistics.median(v)
    return f"{(med - 1) * 100:+.1f}% [{(min(v) - 1) * 100:+.1f}..{(max(v) - 1) * 100:+.1f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd or a.reps < 7:
        sys.exit("usage: driver_overhead.py --build DIR [--reps N>=7] -- COMMAND [ARGS...]")
    rec = os.path.join(a.build, "xpu-record")
    out = os.path.join(tempfile.mkdtemp(), "b.xpu")
    env = dict(os.environ)
    nomem = dict(env, XPU_CUPTI_MEMORY="0")
    modes = {
        "none": (cmd, env),
        "record": ([rec, "-o", out, "--"] + cmd, env),
        "record_nomem": ([rec, "-o", out, "--"] + cmd, nomem),
        "record_driver": ([rec, "--driver", "-o", out, "--"] + cmd, env),
    }
    t = {m: [] for m in modes}
    timed(*modes["record"])  # warm caches
    for _ in range(a.reps):
        for m, (c, e) in modes.items():
            t[m].append(timed(c, e))
    ratio = lambda x, y: [p / q for p, q in zip(t[x], t[y])]
    if len(used) > 1:
        sys.exit("driver_overhead: the program printed its own time in some runs only")
    what = ("the program's own time" if used == {"own"} else
            "wall time of the whole command (the program prints no time of its own)")
    print(f"command: {' '.join(cmd)}; {a.reps} interleaved runs; {what}; median "
          + ", ".join(f"{m} {statistics.median(v):.3f} s" for m, v in t.items()))
    print(f"  recorded (memory tracking on) vs none:   {fmt(ratio('record', 'none'))}")
    print(f"  recorded, XPU_CUPTI_MEMORY=0 vs none:    {fmt(ratio('record_nomem', 'none'))}")
    print(f"  memory tracking: record vs record_nomem: {fmt(ratio('record', 'record_nomem'))}")
    print(f"  --driver vs none:                        {fmt(ratio('record_driver', 'none'))}")
    print(f"  --driver: record_driver vs record:       {fmt(ratio('record_driver', 'record'))}")


if __name__ == "__main__":
    main()
