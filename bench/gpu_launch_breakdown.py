#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the added cost per CUDA launch comes from; runs on the GPU machine.

launch_bench (one thread, empty kernels) under xpu-record with parts of the GPU tracing turned
off through the injected library's switches, interleaved with unprofiled runs:
  full                  everything (the default)
  api=runtime           no driver-API activity records
  api=none              no API activity records at all
  api=none, no marker   launch callbacks run, but the probed marker is not called (no uprobe)
  api=none, no stacks   no launch callbacks (kernel activity records only)
  --no-gpu              no injection: CPU sampling only
Added cost per launch = (profiled - unprofiled elapsed) / launches, median [min..max].

  bench/gpu_launch_breakdown.py --build DIR [--lib DIR] [--libcuda DIR] [--reps N] [--write]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from gpu_overhead import run  # noqa: E402

CONFIGS = [
    ("full", [], {}),
    ("api=runtime", [], {"XPU_CUPTI_API": "runtime"}),
    ("api=none", [], {"XPU_CUPTI_API": "none"}),
    ("api=none, no marker (no uprobe hit)", [], {"XPU_CUPTI_API": "none",
                                                 "XPU_CUPTI_NO_MARKER": "1"}),
    ("api=none, no launch callbacks", [], {"XPU_CUPTI_API": "none",
                                           "XPU_CUPTI_LAUNCH_STACKS": "0"}),
    ("--no-gpu (CPU sampling only)", ["--no-gpu"], {}),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--lib", default="")
    ap.add_argument("--libcuda", default="")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--launches", type=int, default=50000)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    xrec = os.path.join(args.build, "xpu-record")
    lbench = os.path.join(args.build, "bench", "launch_bench")
    base_env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    cuda_env = dict(base_env, LD_LIBRARY_PATH=args.libcuda)
    cmd = [lbench, "1", str(args.launches)]
    launches = args.launches + 1000
    res = {}
    for rep in range(args.reps):
        for name, opts, env in CONFIGS:
            base = run(cmd, cuda_env)
            tool_env = dict(os.environ, LD_LIBRARY_PATH=args.lib, **env)
            t = run([xrec, "-o", "/tmp/breakdown.xpu"] + opts +
                    ["--", "env", "-u", "LD_LIBRARY_PATH", f"LD_LIBRARY_PATH={args.libcuda}"] +
                    cmd, tool_env)
            res.setdefault(name, []).append((t - base) / launches / 1000.0)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
    lines = ["## Added cost per CUDA launch, by part (`bench/gpu_launch_breakdown.py`)", "",
             f"Machine: {benchlib.machine_line()}. `launch_bench 1 {args.launches}` (one thread,"
             f" empty kernels), {args.reps} repetitions, each against an unprofiled run just "
             "before it. Added cost = (profiled - unprofiled) / launches: median [min..max].",
             "", "| configuration | added per launch (us) |", "|---|---|"]
    for name, _, _ in CONFIGS:
        med, lo, hi = benchlib.median_spread(res[name])
        lines.append(f"| {name} | {med:.2f} [{lo:.2f}..{hi:.2f}] |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "gpu_breakdown.md"), "w") as f:
        f.write(text)
    if args.write:
        benchlib.write_section("gpu-launch-breakdown", text)


if __name__ == "__main__":
    main()
