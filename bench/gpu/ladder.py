#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the profiler's cost on a PyTorch loop goes, rung by rung (issue 28); runs on the GPU
machine (root, CUDA, PyTorch), with the bundle of tests/gpu/bundle.sh.

Each repetition runs every rung once, in a new shuffled order, and each rung's time is divided by
the unprofiled run of the same repetition (paired, as bench/gpu_overhead.py does). A rung is

  NAME = KIND [VAR=VALUE ...] [xpu-record flags ...]

KIND is base (the loop bare), plain (the loop with the VAR=VALUE environment, no recorder: the
minimal CUPTI client of bench/gpu/cupti_min.c is injected this way), xpu (under xpu-record with
the flags; the VAR=VALUE words go to the target's environment, after xpu-record's own) or kineto
(the loop's own torch.profiler mode). In a rung, @MIN stands for the minimal client's path.
Rungs come from --rungs (a file, one per line, # comments) or --ladder (a named set below: cupti, the activity kinds and the library's own parts; stacks,
the default piece by piece, the default).

Writes OUT/ladder_runs.csv (repetition, position, rung, ns: bench/gpu_pairs.py reads it, e.g.
--ref minimal), OUT/ladder_steps.csv and ladder_steps.md (the same for each run's median step,
where the script prints step_median_ns: torch_bench, torch_small_bench), OUT/ladder_counts.txt (xpu-report --format=info's record counts of each xpu rung's
first trace: what each configuration keeps) and OUT/ladder.md: per rung the slowdown against the
unprofiled run (median [min..max]), the step from the rung above (median of the paired
differences, in points), and the pairs it was faster than the minimal client and than Kineto.

  bench/gpu/ladder.py --build DIR --lib DIR --min-lib PATH [--script PY] [--steps N] [--reps N]
                      [--ladder NAME | --rungs FILE] [--only A,B] [--out DIR] [--budget-s S]
                      [--launches N --libcuda DIR]

--budget-s stops starting new repetitions when the next would likely end past S seconds
(a device call's limit); what is done so far is in the files.

--pin CPUS (a taskset list, e.g. 0-7) runs the loop of every rung on those CPUs and xpu-record's
own threads on the others: the seventh session's ladder spread one rung's paired ratio over
30-40 points where the recorder's threads, the target's and the GPU driver's shared any CPU; the
profiler's work that runs in the target (its BPF programs, the injected library's threads) stays
with the target, as it does unpinned.
"""
import argparse
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402
from gpu_pairs import sign_test_p  # noqa: E402

# The CUPTI-only base of xpu-record: no launch callbacks, no API records, no Python frames, no
# autograd probes, 1 Hz sampling with frame pointers (nothing to build for the walk).
CUPTI_ONLY = ("xpu XPU_CUPTI_LAUNCH_STACKS=0 XPU_CUPTI_API=none -g fp --no-python --no-autograd "
              "-F 1")
# The library as it was before issue 28's cuts: CUPTI's synchronization activity, overhead
# records, conversion in CUPTI's buffer callback.
OLD = "XPU_CUPTI_KINDS=all XPU_CUPTI_CONVERT=inline"

LADDERS = {
    # what separates xpu's CUPTI-only configuration from the minimal client
    "cupti": f"""
        base = base
        minimal = plain CUDA_INJECTION64_PATH=@MIN CUPTI_MIN_VERBOSE=1
        recorder+minimal = xpu CUDA_INJECTION64_PATH=@MIN --no-gpu -g fp --no-python --no-autograd -F 1
        kinds-none = {CUPTI_ONLY} XPU_CUPTI_KINDS=none
        kinds-none-floor = {CUPTI_ONLY} XPU_CUPTI_KINDS=none XPU_CUPTI_CONVERT=none XPU_CUPTI_CLOCK=offset XPU_CUPTI_FLUSH_PERIOD_MS=0 XPU_CUPTI_FLUSH_MS=1000000 XPU_CUPTI_SUBSCRIBE=0 NVTX_INJECTION64_PATH=
        +sync = {CUPTI_ONLY} XPU_CUPTI_KINDS=sync
        +cupti-sync = {CUPTI_ONLY} XPU_CUPTI_KINDS=cupti-sync
        +memory = {CUPTI_ONLY} XPU_CUPTI_KINDS=memory
        +marker = {CUPTI_ONLY} XPU_CUPTI_KINDS=marker
        +overhead = {CUPTI_ONLY} XPU_CUPTI_KINDS=overhead
        +memcpy2 = {CUPTI_ONLY} XPU_CUPTI_KINDS=memcpy2
        +device = {CUPTI_ONLY} XPU_CUPTI_KINDS=device
        cupti-only = {CUPTI_ONLY}
        cupti-only-old = {CUPTI_ONLY} {OLD}
        kineto = kineto
    """,
    # the whole default, piece by piece
    "stacks": f"""
        base = base
        minimal = plain CUDA_INJECTION64_PATH=@MIN
        cupti-only = {CUPTI_ONLY}
        cupti-only-old = {CUPTI_ONLY} {OLD}
        +api = xpu XPU_CUPTI_LAUNCH_STACKS=0 -g fp --no-python --no-autograd -F 1
        +stacks-fp = xpu -g fp --no-python --no-autograd -F 1
        +cfi = xpu -g cfi --no-python --no-autograd -F 1
        +python = xpu -g cfi --no-autograd -F 1
        +autograd = xpu -g cfi -F 1
        default = xpu
        default-old = xpu {OLD}
        kineto = kineto
    """,
}

def parse_rungs(text, min_lib):
    rungs = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, spec = (s.strip() for s in line.split("=", 1))
        words = shlex.split(spec.replace("@MIN", min_lib))
        kind, words = words[0], words[1:]
        if kind not in ("base", "plain", "xpu", "kineto"):
            sys.exit(f"ladder: rung {name}: unknown kind {kind}")
        env = [w for w in words if "=" in w and not w.startswith("-")]
        flags = [w for w in words if w not in env]
        rungs.append((name, kind, dict(w.split("=", 1) for w in env), flags))
    return rungs


def parse_cpus(text):
    """A taskset CPU list (0-7,12) as a set; empty if malformed."""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            return set()
        out.update(range(int(a), int(b or a) + 1))
    return out


def step_median(r):
    """The loop's median step time, where the script prints one (step_median_ns), else None."""
    m = re.search(r"step_median_ns (\d+)", r.stdout)
    return int(m.group(1)) if m else None


def elapsed(r, what):
    m = re.search(r"elapsed_ns (\d+)", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{what} failed ({r.returncode}):\n{r.stdout[-1500:]}\n"
                           f"{r.stderr[-1500:]}")
    return int(m.group(1))


COUNTED = ("gpu_kernel", "gpu_memcpy", "gpu_memset", "gpu_sync", "gpu_api", "gpu_launch", "nvtx",
           "gpu_memory", "gpu_overhead", "gpu_device", "cpu_sample", "ringbuf_lost",
           # issue 38: launches walked in process, and those that fell back to BPF
           "inproc_walks", "inproc_fallbacks",
           # the walk's own time, one launch in 16 timed by the library
           "inproc_timed", "inproc_timed_ns",
           # the walk memo: walks that took their outer frames from the last one
           "inproc_memo_walks", "inproc_memo_frames")


def info_counts(xrep, path, env):
    r = subprocess.run([xrep, "--format=info", path], capture_output=True, text=True, env=env)
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+([a-z_0-9]+)\s+(\d+)$", line)
        if m and m.group(1) in COUNTED:
            out[m.group(1)] = int(m.group(2))
        m = re.search(r"cupti dropped (\d+)", line)
        if m:
            out["cupti_dropped"] = out.get("cupti_dropped", 0) + int(m.group(1))
        m = re.match(r"\s+complete\s+(.*)", line)
        if m:
            out["complete"] = m.group(1)
    # GPU work joined to a launch stack: the text report's launch-matching table
    r = subprocess.run([xrep, path], capture_output=True, text=True, env=env)
    for line in r.stdout.splitlines():
        m = re.match(r"\s+(kernels|copies|memsets)\s+(\d+)\s+(\d+)\s+[\d.]+%$", line)
        if m:
            out[m.group(1) + "_joined"] = f"{m.group(3)} of {m.group(2)}"
    return out


def summary(rungs, reps, machine, script, steps, metric="the loop's own time"):
    names = [n for n, *_ in rungs]
    done = sorted(r for r in reps if all(n in reps[r] for n in names))
    ratio = {n: [reps[r][n] / reps[r]["base"] for r in done] for n in names if n != "base"}
    what = f"`{os.path.basename(script)}` with {steps} timed steps" if script.endswith(".py") \
        else f"`{script}` (empty kernels, one thread)"
    lines = [f"`bench/gpu/ladder.py`, {what}, "
             f"{len(done)} repetitions, every rung once per repetition in a shuffled order. "
             f"Machine: {machine}. Slowdown = " + metric + " / unprofiled in the same "
             "repetition, median [min..max]; step = median of the paired differences from the "
             "rung above, in points; faster than minimal / Kineto = in how many repetitions the "
             "rung's loop beat that one's.", "",
             "| rung | configuration | slowdown | step | faster than minimal | faster than Kineto |",
             "|---|---|---|---|---|---|"]
    prev = None
    for name, kind, env, flags in rungs:
        if name == "base":
            continue
        conf = " ".join([f"{k}={v}" for k, v in env.items()] + flags) if kind != "kineto" else \
            "torch.profiler, CPU + CUDA activities"
        conf = conf.replace(os.path.dirname(env.get("CUDA_INJECTION64_PATH", "/x/y")) + "/", "")
        if kind == "xpu" and not conf:
            conf = "(xpu-record's defaults)"
        r = ratio[name]
        step = ""
        if prev is not None and r:
            d = [100 * (a - b) for a, b in zip(r, ratio[prev])]
            step = f"{statistics.median(d):+.1f}"
        vs = []
        for ref in ("minimal", "kineto"):
            if ref in ratio and ref != name and r:
                w = sum(a < b for a, b in zip(r, ratio[ref]))
                vs.append(f"{w}/{len(r)}")
            else:
                vs.append("")
        lines.append(f"| {name} | `{conf}` | {benchlib.fmt_ratio(r) if r else ''} | {step} | "
                     f"{vs[0]} | {vs[1]} |")
        prev = name
    if done:
        base = [reps[r]["base"] / 1e6 for r in done]
        med, lo, hi = benchlib.median_spread(base)
        lines += ["", f"Unprofiled loop: {med:.1f} ms [{lo:.1f}..{hi:.1f}]."]
    return "\n".join(lines) + "\n", ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--lib", default="")
    ap.add_argument("--min-lib", required=True)
    ap.add_argument("--script", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "torch_bench.py"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--ladder", default="stacks", choices=sorted(LADDERS))
    ap.add_argument("--rungs", default="")
    ap.add_argument("--only", default="", help="comma-separated rung names to keep (base "
                    "always)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--budget-s", type=float, default=0)
    ap.add_argument("--launches", type=int, default=0, help="run the build's "
                    "bench/launch_bench 1 N (empty kernels) instead of the PyTorch loop; "
                    "kineto rungs are skipped")
    ap.add_argument("--libcuda", default="", help="LD_LIBRARY_PATH of launch_bench")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pin", default="", help="CPUS (taskset list): the loop on these, "
                    "xpu-record on the others")
    args = ap.parse_args()

    text = open(args.rungs).read() if args.rungs else LADDERS[args.ladder]
    rungs = parse_rungs(text, os.path.abspath(args.min_lib))
    if args.only:
        keep = set(args.only.split(",")) | {"base"}
        rungs = [r for r in rungs if r[0] in keep]
    if not any(n == "base" for n, *_ in rungs):
        sys.exit("ladder: a rung named base is needed")
    xrec = os.path.join(args.build, "xpu-record")
    xrep = os.path.join(args.build, "xpu-report")
    tool_env = dict(os.environ, LD_LIBRARY_PATH=args.lib)
    tgt_env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    loop = [args.python, args.script]
    loop_args = lambda mode: [mode, str(args.steps)]  # noqa: E731
    if args.launches:
        loop = [os.path.join(args.build, "bench", "launch_bench")]
        loop_args = lambda mode: ["1", str(args.launches)]  # noqa: E731
        tgt_env = dict(tgt_env, LD_LIBRARY_PATH=args.libcuda)
        rungs = [r for r in rungs if r[1] != "kineto"]
        args.script = f"launch_bench 1 {args.launches}"
    pin_loop, pin_rec = [], []
    if args.pin:
        cpus = parse_cpus(args.pin)
        others = sorted(os.sched_getaffinity(0) - cpus)
        if not cpus or not others:
            sys.exit(f"ladder: --pin {args.pin}: want some of this machine's CPUs, not all")
        pin_loop = ["taskset", "-c", args.pin]
        pin_rec = ["taskset", "-c", ",".join(map(str, others))]
    loop = pin_loop + loop
    trace = os.path.join("/tmp", "ladder.xpu")
    csv_path = os.path.join(args.out, "ladder_runs.csv")
    open(csv_path, "w").close()
    # the median step of each run, where the script prints it: steady state, without the
    # loop's start-up and its rare long steps (both rows of a pair measured the same way)
    steps_path = os.path.join(args.out, "ladder_steps.csv")
    open(steps_path, "w").close()
    step_reps = {}
    def run_rung(kind, env, flags):
        """One run of the loop as the rung says; a hung run ends after 300 s."""
        if kind in ("base", "kineto", "plain"):
            return subprocess.run(loop + loop_args("kineto" if kind == "kineto" else "none"),
                                  capture_output=True, text=True, timeout=300,
                                  env=dict(tgt_env, **env) if kind == "plain" else tgt_env)
        lib = [f"LD_LIBRARY_PATH={args.libcuda}"] if args.launches else []
        cmd = pin_rec + [xrec, "-o", trace] + flags + ["--", "env", "-u", "LD_LIBRARY_PATH"] + \
            lib + [f"{k}={v}" for k, v in env.items()] + loop + loop_args("none")
        return subprocess.run(cmd, capture_output=True, text=True, env=tool_env, timeout=300)

    counts = {}
    reps = {}
    t_start = time.monotonic()
    rep_s = 0.0
    for rep in range(args.reps):
        if args.budget_s and rep and time.monotonic() - t_start + rep_s * 1.1 > args.budget_s:
            print(f"ladder: stopping after {rep} repetitions (budget)", file=sys.stderr)
            break
        t_rep = time.monotonic()
        order = list(range(len(rungs)))
        random.Random(args.seed * 1000 + rep).shuffle(order)
        times = {}
        step_times = {}
        walls = []
        for pos, i in enumerate(order):
            name, kind, env, flags = rungs[i]
            t0 = time.monotonic()
            try:
                r = run_rung(kind, env, flags)
            except subprocess.TimeoutExpired:
                print(f"ladder: rep {rep}: {name} ran past 300 s", file=sys.stderr)
                continue
            try:
                times[name] = elapsed(r, name)
                if step_median(r) is not None:
                    step_times[name] = step_median(r)
            except RuntimeError as e:
                print(f"ladder: rep {rep}: {e}", file=sys.stderr)
                continue
            walls.append(f"{name} {time.monotonic() - t0:.1f}s")
            if kind == "xpu" and name not in counts:
                counts[name] = info_counts(xrep, trace, tool_env)
            if kind == "xpu" and os.path.exists(trace):
                os.unlink(trace)
            if kind == "plain" and "CUPTI_MIN_VERBOSE" in env:
                print(r.stderr.strip()[-300:], file=sys.stderr)
        with open(csv_path, "a") as f:
            for pos, i in enumerate(order):
                name = rungs[i][0]
                if name in times:
                    f.write(f"{rep},{pos},{name},{times[name]}\n")
        with open(steps_path, "a") as f:
            for pos, i in enumerate(order):
                name = rungs[i][0]
                if name in step_times:
                    f.write(f"{rep},{pos},{name},{step_times[name]}\n")
        if "base" in times:
            reps[rep] = times
        if "base" in step_times:
            step_reps[rep] = step_times
        rep_s = time.monotonic() - t_rep
        print(f"rep {rep + 1}/{args.reps} done in {rep_s:.0f}s: {', '.join(walls)}",
              file=sys.stderr, flush=True)
        text, _ = summary(rungs, reps, benchlib.machine_line(), args.script, args.steps)
        with open(os.path.join(args.out, "ladder.md"), "w") as f:
            f.write(text)
        if step_reps:
            stext, _ = summary(rungs, step_reps, benchlib.machine_line(), args.script,
                               args.steps, "the median step")
            with open(os.path.join(args.out, "ladder_steps.md"), "w") as f:
                f.write(stext)
        with open(os.path.join(args.out, "ladder_counts.txt"), "w") as f:
            for name, c in counts.items():
                f.write(f"{name}: " + " ".join(f"{k}={v}" for k, v in c.items()) + "\n")
    text, _ = summary(rungs, reps, benchlib.machine_line(), args.script, args.steps)
    print(text)
    if step_reps:
        stext, _ = summary(rungs, step_reps, benchlib.machine_line(), args.script, args.steps,
                           "the median step")
        print("By the median step of each run:\n" + stext)
    for name, c in counts.items():
        print(f"{name}: " + " ".join(f"{k}={v}" for k, v in c.items()))


if __name__ == "__main__":
    main()
