#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of the stack walk inside BPF, per walk and per frame: -g fp, -g cfi, -g dwarf,32768,32768.

The kernel's own accounting (kernel.bpf_stats_enabled: run_time_ns of the sampling and launch
programs, as xpu-record -v prints it) divided by the events recorded, in the same interleaved
repetitions. Workloads, each a fixed amount of work:
  chain10, chain150  bench/deep_chain DEPTH (C without frame pointers; cfi and dwarf unwind it)
  chain150fp         the same chain built with frame pointers (what -g fp costs when it works)
  python             python3.11 bench/py_deep.py 40 (40 Python calls, ~150 native frames)
  torch              Debian's python3 bench/torch_deep.py (libtorch autograd; python3-torch)
  launch             bench/marker_bench (one uprobe hit and stack per call, as per CUDA launch)
Frames per event = the user frames of the recorded stacks (cfi: as walked in BPF; dwarf: as
unwound by xpu-report), from xpu-report --format=folded. Per frame = in-BPF ns per event /
frames per event; "fixed" = the intercept of chain10 and chain150 (cost of a walk of 0 frames).
Writes the "cfi-prog-cost" section of BENCHMARKS.md. Needs root (BPF).

With --base-build DIR, DIR's xpu-record (an older build, e.g. of main) also runs -g cfi in the
same repetitions, as the row "cfi@base": the walk before and after a change, side by side.

  bench/cfi_prog_cost.py [--reps 7] [--workloads ...] [--base-build DIR] [--no-write]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

MODES = ["fp", "cfi", "dwarf,32768,32768"]


def stack_depth(path, mode):
    """Mean user frames per CPU sample or launch, weighted, and the complete-stack rate."""
    rep = os.path.join(benchlib.BUILD, "xpu-report")
    flags = ["--no-unwind"] if mode == "cfi" else []
    out = benchlib.run([rep, "--format=folded", "--no-inline"] + flags + [path]).stdout
    frames = weight = 0
    for line in out.splitlines():
        stack, _, w = line.rpartition(" ")
        if not stack or not w.isdigit():
            continue
        # Python frames ("name (file.py)") are not walked by the native unwinder
        n = sum(1 for f in stack.split(";") if not f.endswith(".py)") and
                not f.startswith("[gpu]"))
        frames += n * int(w)
        weight += int(w)
    info = benchlib.run([rep, "--format=info"] + flags + [path]).stdout
    m = re.search(r"^  complete +(\d+) of (\d+) cpu samples \S+(?:, (\d+) of (\d+) gpu launches)?",
                  info, re.M)
    rate = "?"
    if m:
        done = int(m.group(1)) + int(m.group(3) or 0)
        tot = int(m.group(2)) + int(m.group(4) or 0)
        rate = f"{100.0 * done / tot:.1f}%" if tot else "?"
    events = sum(int(x) for x in re.findall(r"^\s*(?:cpu_sample|gpu_launch)\s+(\d+)", info,
                                            re.M))
    return (frames / weight if weight else 0.0), events, rate


def workloads(args):
    b = os.path.join(benchlib.BUILD, "bench")
    lib = os.path.join(benchlib.BUILD, "libxpu-cupti.so")
    py = os.path.join(benchlib.ROOT, "bench")
    w = {
        "chain10": [os.path.join(b, "deep_chain"), "10", "500"],
        "chain150": [os.path.join(b, "deep_chain"), "150", "500"],
        "chain150fp": [os.path.join(b, "deep_chain_fp"), "150", "500"],
        "python": [args.python, os.path.join(py, "py_deep.py"), "40", "800"],
        "torch": ["/usr/bin/python3", os.path.join(py, "torch_deep.py"), str(args.torch_steps)],
        "launch": [os.path.join(b, "marker_bench"), lib, "50000"],
    }
    out = {}
    for name in args.workloads.split(","):
        if name not in w:
            sys.exit(f"cfi_prog_cost: unknown workload {name}")
        if name == "launch" and not os.path.exists(lib):
            print("cfi_prog_cost: no libxpu-cupti.so: launch skipped", file=sys.stderr)
            continue
        if name == "torch" and subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                              capture_output=True).returncode:
            print("cfi_prog_cost: no torch in /usr/bin/python3: torch skipped", file=sys.stderr)
            continue
        out[name] = w[name]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--workloads", default="chain10,chain150,chain150fp,python,torch,launch")
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--torch-steps", type=int, default=40)
    ap.add_argument("--base-build", default="")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("cfi_prog_cost: needs root for BPF")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    tmp = tempfile.mkdtemp(prefix="xpu-cficost-")
    per_ev, depth, first = {}, {}, {}
    stats_path = "/proc/sys/kernel/bpf_stats_enabled"
    stats_was = open(stats_path).read().strip()
    with open(stats_path, "w") as f:
        f.write("1")
    wl = workloads(args)
    modes = MODES + (["cfi@base"] if args.base_build else [])
    try:
        for rep in range(args.reps):
            for name, wcmd in wl.items():
                for mode in modes:
                    cmd = wcmd
                    out = os.path.join(tmp, "t.xpu")
                    extra = [] if name == "launch" else ["--no-gpu"]
                    rec, g = xrec, mode
                    if mode == "cfi@base":
                        rec, g = os.path.join(args.base_build, "xpu-record"), "cfi"
                        # the launch marker's uprobe is on the recorder's own library
                        lib = os.path.join(benchlib.BUILD, "libxpu-cupti.so")
                        cmd = [os.path.join(args.base_build, "libxpu-cupti.so") if a == lib
                               else a for a in cmd]
                    r = benchlib.run([rec, "-v", "-g", g] + extra + ["-o", out, "--"] + cmd)
                    if r.returncode:
                        sys.exit(f"cfi_prog_cost: -g {mode} ({name}) failed:\n{r.stderr}")
                    bpf_ns = sum(int(x) for x in re.findall(
                        r"bpf on_(?:sample|gpu_launch): \d+ runs, (\d+) ns", r.stderr))
                    d, n, rate = stack_depth(out, g)
                    if n and bpf_ns:
                        per_ev.setdefault((name, mode), []).append(bpf_ns / n)
                        depth.setdefault((name, mode), []).append(d)
                    if rep == 0:
                        first[(name, mode)] = (os.path.getsize(out), n, rate)
                    os.unlink(out)
            print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        with open(stats_path, "w") as f:
            f.write(stats_was)

    med = lambda d, k: statistics.median(d[k]) if k in d else float("nan")
    lines = [
        "## Cost of the walk in BPF, per walk and per frame (`bench/cfi_prog_cost.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. {args.reps} interleaved repetitions, medians. "
        "In BPF per event = run time of the sampling and launch programs "
        "(kernel.bpf_stats_enabled) / samples and launches recorded (it includes the cheap "
        "filter runs for other processes' samples); frames = user frames per event in the "
        "stacks (cfi: as walked in BPF, dwarf: as unwound by xpu-report); complete and "
        "bytes/event from the first repetition. Workloads: `chainN` = `bench/deep_chain N` "
        "(C, no frame pointers; `chain150fp` built with them), `python` = "
        f"`{os.path.basename(args.python)} bench/py_deep.py 40`, `torch` = Debian's python3-torch "
        f"1.13 `bench/torch_deep.py {args.torch_steps}` (CPU autograd), `launch` = "
        "`bench/marker_bench` (a uprobe stack per call)." +
        (f" `cfi@base` = -g cfi of the build in `{args.base_build}`, in the same "
         "repetitions." if args.base_build else ""),
        "",
        "| workload | -g | in BPF per event (us) | frames/event | ns per frame | complete | "
        "bytes/event |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in wl:
        for mode in modes:
            size, n, rate = first[(name, mode)]
            ns, d = med(per_ev, (name, mode)), med(depth, (name, mode))
            lines.append(f"| {name} | {mode} | {ns / 1e3:.2f} | {d:.1f} | "
                         f"{ns / d if d else float('nan'):.0f} | {rate} | "
                         f"{size / n if n else float('nan'):.1f} |")
    if "chain10" in wl and "chain150" in wl:
        lines.append("")
        for mode in modes:
            a, b = (med(per_ev, ("chain10", mode)), med(per_ev, ("chain150", mode)))
            da, db = (med(depth, ("chain10", mode)), med(depth, ("chain150", mode)))
            if db > da:
                slope = (b - a) / (db - da)
                lines.append(f"- `-g {mode}` on the chain: {slope:.0f} ns per frame, "
                             f"{(a - slope * da) / 1e3:.2f} us fixed per walk (intercept).")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("cfi-prog-cost", text)


if __name__ == "__main__":
    main()
