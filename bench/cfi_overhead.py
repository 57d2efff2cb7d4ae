#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of -g cfi (the in-BPF walk) against -g fp, -g dwarf,32768,32768 and no profiling.

Three workloads, each printing its own elapsed time (start-up is not measured):
  cpu     bench/workload 1600 (C, frame pointers, single thread), CPU samples
  python  bench/py_loop.py under Debian's python3.11 (no frame pointers), CPU samples
  launch  bench/marker_bench LIBXPU_CUPTI N: N calls of the launch marker, each a uprobe hit
          that takes a stack, as once per CUDA launch (no GPU needed)
Per repetition the unprofiled run and every -g mode run in turn (interleaved); slowdown is
profiled / unprofiled of the same repetition, median [min..max]. Added cost per event =
(profiled - unprofiled) / events, median. Bytes per event = whole file / events, complete =
xpu-report --format=info's rate (first repetition). Writes the "cfi-overhead" section of
BENCHMARKS.md. Needs root (BPF).

  bench/cfi_overhead.py [--reps 7] [--workloads cpu,python,launch] [--calls N] [--no-write]
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

MODES = ["fp", "cfi", "dwarf,32768,32768"]


def info(path):
    """Events (CPU samples + launches) and the complete-stack rate of a trace."""
    out = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=info",
                        path]).stdout
    get = lambda k: int(m.group(1)) if (m := re.search(rf"^\s*{k}\s+(\d+)", out, re.M)) else 0
    m = re.search(r"^  complete +(\d+) of (\d+) cpu samples \S+, (\d+) of (\d+) gpu launches",
                  out, re.M)
    rate = "?"
    if m:
        done, tot = int(m.group(1)) + int(m.group(3)), int(m.group(2)) + int(m.group(4))
        rate = f"{100.0 * done / tot:.1f}%" if tot else "?"
    return get("cpu_sample") + get("gpu_launch"), rate


def workloads(args):
    b = benchlib.BUILD
    lib = os.path.join(b, "libxpu-cupti.so")
    w = {
        "cpu": ([os.path.join(b, "bench", "workload"), "1600"], ["--no-gpu"]),
        "python": ([args.python, os.path.join(benchlib.ROOT, "bench", "py_loop.py"), "1500"],
                   ["--no-gpu"]),
        "launch": ([os.path.join(b, "bench", "marker_bench"), lib, str(args.calls)], []),
    }
    out = {}
    for name in args.workloads.split(","):
        if name not in w:
            sys.exit(f"cfi_overhead: unknown workload {name}")
        if name == "launch" and not os.path.exists(lib):
            print("cfi_overhead: no libxpu-cupti.so (CUDA toolkit missing): launch skipped",
                  file=sys.stderr)
            continue
        if name == "python" and not shutil.which(args.python):
            print(f"cfi_overhead: no {args.python}: python skipped", file=sys.stderr)
            continue
        out[name] = w[name]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--workloads", default="cpu,python,launch")
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("cfi_overhead: needs root for BPF")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    tmp = tempfile.mkdtemp(prefix="xpu-cfibench-")
    ratio, added, first, inbpf = {}, {}, {}, {}
    stats_was = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    wl = workloads(args)
    for rep in range(args.reps):
        for name, (cmd, extra) in wl.items():
            base = benchlib.elapsed(benchlib.run(cmd).stdout)
            for mode in MODES:
                out = os.path.join(tmp, "t.xpu")
                r = benchlib.run([xrec, "-v", "-g", mode] + extra + ["-o", out, "--"] + cmd)
                if r.returncode:
                    sys.exit(f"cfi_overhead: xpu-record -g {mode} ({name}) failed:\n{r.stderr}")
                t = benchlib.elapsed(r.stdout)
                n, rate = info(out)
                ratio.setdefault((name, mode), []).append(t / base)
                if n:
                    added.setdefault((name, mode), []).append((t - base) / n)
                    bpf_ns = sum(int(x) for x in re.findall(r"bpf on_\w+: \d+ runs, (\d+) ns",
                                                            r.stderr))
                    if bpf_ns:
                        inbpf.setdefault((name, mode), []).append(bpf_ns / n)
                if rep == 0:
                    first[(name, mode)] = (os.path.getsize(out), n, rate)
                os.unlink(out)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(stats_was)

    lines = [
        "## In-BPF unwinding, -g cfi (`bench/cfi_overhead.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. {args.reps} interleaved repetitions. Workloads: "
        "`cpu` = `bench/workload 1600` (C with frame pointers, one thread, 999 Hz); `python` = "
        f"`{os.path.basename(args.python)} bench/py_loop.py 1500` (the interpreter has no frame "
        "pointers; Python frames on); `launch` = `bench/marker_bench libxpu-cupti.so "
        f"{args.calls}` (one uprobe hit and stack per call, as per CUDA launch). Slowdown = "
        "elapsed under xpu-record / unprofiled in the same repetition, median [min..max]; "
        "added per event = (profiled - unprofiled) / events (samples or launches), median; "
        "in BPF per event = the sample and launch programs' run time (kernel.bpf_stats_enabled) "
        "/ events, median (it includes the filter runs for other processes' samples); "
        "bytes per event = whole file / events and complete stacks = `xpu-report "
        "--format=info`'s rate, first repetition.",
        "",
        "| workload | -g | slowdown vs none | added per event (us) | in BPF per event (us) | "
        "events | complete stacks | bytes/event |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in wl:
        for mode in MODES:
            size, n, rate = first[(name, mode)]
            med = lambda d: f"{statistics.median(d[(name, mode)]) / 1e3:.2f}" \
                if (name, mode) in d else ""
            lines.append(f"| {name} | {mode} | {benchlib.fmt_ratio(ratio[(name, mode)])} | "
                         f"{med(added)} | {med(inbpf)} | {n} | {rate} | "
                         f"{size / n if n else float('nan'):.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("cfi-overhead", text)


if __name__ == "__main__":
    main()
