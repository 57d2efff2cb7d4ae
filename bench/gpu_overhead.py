#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GPU overhead, trace size and drops; runs on the GPU machine (root, CUDA, PyTorch).

Interleaved repetitions of:
  - bench/gpu/launch_bench (empty kernels; 1 thread, and 4 threads): unprofiled, under
    xpu-record (-g fp), and under xpu-record -g dwarf when the recorder supports it;
  - bench/gpu/torch_bench.py (a training loop): unprofiled, under xpu-record, and under
    torch.profiler with CPU+CUDA activities (Kineto).
Each workload prints its own elapsed time; every figure is a ratio (or a difference per launch)
against the unprofiled run of the same repetition. Writes a markdown table to OUT/gpu_bench.md
(and to BENCHMARKS.md's "gpu-overhead" section with --write), and each PyTorch run's time to
OUT/gpu_runs.csv (repetition, position in it, what, ns).

  bench/gpu_overhead.py --build DIR [--lib DIR] [--libcuda DIR] [--reps N] [--out DIR] [--write]
                        [--workloads launch,torch] [--dwarf-sizes 8192,65536] [--section NAME]
                        [--modes 'fp;cfi;dwarf,32768,32768'] [--launches N] [--steps N]

--dwarf-sizes replaces the plain -g dwarf mode with -g dwarf,SIZE per size (what a bigger copy
costs); with a ';' in it, the sizes are ';'-separated and may name a window: '8192;32768,32768'
runs -g dwarf,8192 and -g dwarf,32768,32768. --modes lists the -g modes to run instead
(';'-separated; a mode may carry more xpu-record flags, "fp --no-python", or be flags
only, "--no-gpu", and start with VAR=VALUE words for the target's environment,
"XPU_CUPTI_API=none fp"). --section names the BENCHMARKS.md section --write replaces (default gpu-overhead).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = re.search(r"elapsed_ns (\d+)", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n"
                           f"{r.stderr[-2000:]}")
    return int(m.group(1))


def info_counts(report, path, env):
    r = subprocess.run([report, "--format=info", path], capture_output=True, text=True, env=env)
    counts = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+([a-z_]+)\s+(\d+)$", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="dir with xpu-record, xpu-report, "
                    "libxpu-cupti.so and bench/launch_bench")
    ap.add_argument("--lib", default="", help="LD_LIBRARY_PATH for the tools")
    ap.add_argument("--libcuda", default="", help="LD_LIBRARY_PATH for launch_bench")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--launches", type=int, default=100000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--workloads", default="launch,torch")
    ap.add_argument("--dwarf-sizes", default="")
    ap.add_argument("--modes", default="")
    ap.add_argument("--section", default="gpu-overhead")
    ap.add_argument("--torch-script", default="", help="another loop with torch_bench.py's "
                    "interface (bench/gpu/torch_attn_bench.py) in its place")
    args = ap.parse_args()

    b = args.build
    xrec, xrep = os.path.join(b, "xpu-record"), os.path.join(b, "xpu-report")
    lbench = os.path.join(b, "bench", "launch_bench")
    tbench = args.torch_script or os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu",
                                               "torch_bench.py")
    tool_env = dict(os.environ, LD_LIBRARY_PATH=args.lib)
    tgt_env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    cuda_env = dict(tgt_env, LD_LIBRARY_PATH=args.libcuda)
    help_text = subprocess.run([xrec, "--help"], capture_output=True, text=True,
                               env=tool_env).stdout
    modes = [("fp", [])] + ([("dwarf", ["-g", "dwarf"])] if "dwarf" in help_text else [])
    if args.dwarf_sizes:
        modes = [("fp", [])] + [(f"dwarf,{sz}", ["-g", f"dwarf,{sz}"])
                                for sz in args.dwarf_sizes.split(
                                    ";" if ";" in args.dwarf_sizes else ",") if sz]
    if args.modes:
        # "cfi" -> -g cfi; "fp --no-python" -> -g fp --no-python; "--no-gpu" -> flags only;
        # leading VAR=VALUE words go to the environment ("XPU_CUPTI_API=none fp")
        modes = []
        for m in (m.strip() for m in args.modes.split(";")):
            words = m.split()
            env = [w for w in words if "=" in w and not w.startswith("-")]
            words = [w for w in words if w not in env]
            if words:
                modes.append((m, env + (words if words[0].startswith("-") else ["-g"] + words)))
    workloads = args.workloads.split(",")
    tmp = tempfile.mkdtemp(prefix="xpu-gpubench-")

    def recorded(extra, cmd, env, name):
        out = os.path.join(tmp, name + ".xpu")
        assigns = [w for w in extra if "=" in w and not w.startswith("-")]
        flags = [w for w in extra if w not in assigns]
        full = [xrec, "-o", out] + flags + ["--", "env", "-u", "LD_LIBRARY_PATH"] + \
            [f"{k}={v}" for k, v in env.items() if k == "LD_LIBRARY_PATH"] + assigns + cmd
        # xpu-record needs the bundled libraries; the target gets the CUDA ones only. The
        # assignments reach xpu-record too (XPU_AUTOGRAD_PROBES is the recorder's own).
        return run(full, dict(tool_env, **dict(a.split("=", 1) for a in assigns))), out

    def label(mode):
        words = mode.split()
        env = [w for w in words if "=" in w and not w.startswith("-")]
        rest = [w for w in words if w not in env]
        flags = " ".join(rest) if rest and rest[0].startswith("-") else "-g " + " ".join(rest)
        return " ".join(env + [flags])

    def table(done):
        title = "GPU overhead" + (f" by -g dwarf copy size ({args.dwarf_sizes})"
                                  if args.dwarf_sizes else "")
        lines = [f"## {title} (`bench/gpu_overhead.py`, on the GPU machine)", "",
                 f"Machine: {benchlib.machine_line()}. {done} interleaved repetitions; "
                 "slowdown = the workload's own elapsed time / unprofiled in the same repetition, "
                 "median [min..max]; vs Kineto = the workload's time under the profiler / under "
                 "torch.profiler in the same repetition (below 0: faster than Kineto), and in how many "
                 "repetitions the profiler was faster; "
                 "added cost per launch = (profiled - unprofiled) / launches. "
                 "Bytes per GPU record and per launch = whole trace file / GPU kernel records and "
                 "/ launch events (first repetition); drops = every LOST count in the trace.", "",
                 "| workload | profiler | slowdown | vs Kineto | added per launch (us) | kernels "
                 "| launches | bytes/kernel | bytes/launch | lost |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        # time under the profiler / time under Kineto, repetition by repetition: the two runs of
        # a pair share the repetition's machine state, which the unprofiled base alone does not
        kineto = [v[0] for v in res.get(("torch_bench", "torch.profiler (Kineto)"), [])]
        for (wl, prof), vals in res.items():
            ratios = [v[0] for v in vals]
            per = [v[1] for v in vals if v[1] is not None]
            size, counts = sizes.get((wl, prof), (0, {}))
            k, la = counts.get("gpu_kernel", 0), counts.get("gpu_launch", 0)
            lost = counts.get("ringbuf_lost", 0) + counts.get("cupti_dropped", 0)
            per_s = ""
            if per:
                med, lo, hi = benchlib.median_spread(per)
                per_s = f"{med:.2f} [{lo:.2f}..{hi:.2f}]"
            vs_k = ""
            if wl == "torch_bench" and kineto and not prof.startswith("torch.profiler"):
                pairs = [r / k for r, k in zip(ratios, kineto)]
                # how many pairs the profiler won: a sign test needs no assumption on the noise
                vs_k = (f"{benchlib.fmt_ratio(pairs)}, faster in "
                        f"{sum(p < 1 for p in pairs)}/{len(pairs)}")
            lines.append(f"| {wl} | {prof} | {benchlib.fmt_ratio(ratios)} | {vs_k} | {per_s} | "
                         f"{k or ''} | {la or ''} | {size / k if k else float('nan'):.1f} | "
                         f"{size / la if la else float('nan'):.1f} | "
                         f"{lost if counts else ''} |")
        if bases:
            med, lo, hi = benchlib.median_spread([b / 1e6 for b in bases])
            lines += ["", f"torch_bench unprofiled, {args.steps} steps: {med:.1f} ms "
                      f"[{lo:.1f}..{hi:.1f}] (the base each repetition's ratios divide by)."]
        text = "\n".join(lines) + "\n"
        return text

    res = {}
    sizes = {}
    bases = []
    open(os.path.join(args.out, "gpu_runs.csv"), "w").close()
    shapes = [(1, args.launches), (4, args.launches // 4)] if "launch" in workloads else []
    for rep in range(args.reps):
        for threads, n in shapes:
            cmd = [lbench, str(threads), str(n)]
            base = run(cmd, cuda_env)
            total = threads * n
            for mode, extra in modes:
                t, out = recorded(extra, cmd, cuda_env, f"launch{threads}-{mode}")
                key = (f"launch_bench {threads}x{n}", f"xpu-record {label(mode)}")
                res.setdefault(key, []).append((t / base, (t - base) / total / 1000.0))
                if rep == 0:
                    sizes[key] = (os.path.getsize(out), info_counts(xrep, out, tool_env))
        if "torch" not in workloads:
            print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
            continue
        # the runs of a repetition in a new order each time, so that none always runs first
        # or last (the GPU's clocks and the page cache drift within a repetition)
        order = ["base"] + [m for m, _ in modes] + ["kineto"]
        random.Random(rep).shuffle(order)
        times = {}
        for what in order:
            if what == "base":
                times[what] = run([args.python, tbench, "none", str(args.steps)], tgt_env)
            elif what == "kineto":
                times[what] = run([args.python, tbench, "kineto", str(args.steps)], tgt_env)
            else:
                extra = dict(modes)[what]
                times[what], out = recorded(extra, [args.python, tbench, "none",
                                                    str(args.steps)], tgt_env, f"torch-{what}")
                if rep == 0:
                    key = ("torch_bench", f"xpu-record {label(what)}")
                    sizes[key] = (os.path.getsize(out), info_counts(xrep, out, tool_env))
        base = times["base"]
        bases.append(base)
        # every run's own time, in the order it ran, to look at the noise afterwards
        with open(os.path.join(args.out, "gpu_runs.csv"), "a") as f:
            for i, what in enumerate(order):
                f.write(f"{rep},{i},{what},{times[what]}\n")
        for mode, _ in modes:
            key = ("torch_bench", f"xpu-record {label(mode)}")
            res.setdefault(key, []).append((times[mode] / base, None))
        res.setdefault(("torch_bench", "torch.profiler (Kineto)"), []).append(
            (times["kineto"] / base, None))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
        # what is done so far, so that a run cut off by a time limit still leaves a table
        with open(os.path.join(args.out, "gpu_bench.md"), "w") as f:
            f.write(table(rep + 1))

    text = table(args.reps)
    print(text)
    with open(os.path.join(args.out, "gpu_bench.md"), "w") as f:
        f.write(text)
    if args.write:
        benchlib.write_section(args.section, text)


if __name__ == "__main__":
    main()
