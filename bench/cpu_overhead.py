#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU sampling overhead and trace size, against an unprofiled run and perf record -g.

Runs bench/workload (fixed work, single thread; it prints its own elapsed time) REPS times in
an interleaved order: unprofiled, then under xpu-record and perf record -g at each frequency.
Each profiled time is divided by the unprofiled time of the same repetition, so machine noise
that lasts longer than one repetition cancels. Prints a table and writes the "cpu-overhead"
section of BENCHMARKS.md. Needs root (BPF, perf).

  bench/cpu_overhead.py [--reps N] [--freqs 99,999,4999] [--work MILLIONS] [--no-write]
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def count_perf_samples(path):
    r = benchlib.run(["perf", "script", "-i", path, "-F", "time"])
    return sum(1 for line in r.stdout.splitlines() if line.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--freqs", default="99,999,4999")
    ap.add_argument("--work", type=int, default=1600, help="million iterations (~1.3 ns each)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    freqs = [int(f) for f in args.freqs.split(",")]
    workload = os.path.join(benchlib.BUILD, "bench", "workload")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    if os.geteuid() != 0:
        sys.exit("cpu_overhead: needs root for BPF and perf")
    have_perf = shutil.which("perf") is not None
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    ratios = {}
    sizes = {}
    for rep in range(args.reps):
        base = benchlib.elapsed(benchlib.run([workload, str(args.work)]).stdout)
        for f in freqs:
            out = os.path.join(tmp, f"x{f}.xpu")
            r = benchlib.run([xrec, "--no-gpu", "-F", str(f), "-o", out, "--", workload,
                              str(args.work)])
            ratios.setdefault(("xpu", f), []).append(benchlib.elapsed(r.stdout) / base)
            if rep == 0:
                sizes[("xpu", f)] = (os.path.getsize(out), benchlib.count_xpu_samples(out))
            if have_perf:
                out = os.path.join(tmp, f"p{f}.data")
                r = benchlib.run(["perf", "record", "-q", "-g", "-F", str(f), "-o", out, "--",
                                  workload, str(args.work)])
                ratios.setdefault(("perf", f), []).append(benchlib.elapsed(r.stdout) / base)
                if rep == 0:
                    sizes[("perf", f)] = (os.path.getsize(out), count_perf_samples(out))
        print(f"rep {rep + 1}/{args.reps} done (baseline {base / 1e9:.2f} s)", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        "## CPU sampling overhead (`bench/cpu_overhead.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. Workload: `bench/workload {args.work}` "
        f"(single thread, fixed work), {args.reps} interleaved repetitions. Slowdown = the "
        "workload's own elapsed time under the profiler / unprofiled in the same repetition: "
        "median [min..max]. Bytes per sample = whole file / samples in it (first repetition).",
        "",
        "| profiler | Hz | slowdown | samples | file bytes | bytes/sample |",
        "|---|---|---|---|---|---|",
    ]
    for tool in ("xpu", "perf"):
        for f in freqs:
            if (tool, f) not in ratios:
                continue
            size, n = sizes.get((tool, f), (0, 0))
            name = "xpu-record" if tool == "xpu" else "perf record -g"
            lines.append(f"| {name} | {f} | {benchlib.fmt_ratio(ratios[(tool, f)])} | {n} | "
                         f"{size} | {size / n if n else float('nan'):.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("cpu-overhead", text)


if __name__ == "__main__":
    main()
