#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Overhead of -g dwarf against -g fp and against no profiling, with trace sizes.

Runs bench/workload (fixed work, single thread; it prints its own elapsed time) REPS times in
an interleaved order: unprofiled, xpu-record -g fp, xpu-record -g dwarf (default 8 KiB copy)
and -g dwarf,SIZE for the other sizes asked for (or the -g modes of --modes). Each profiled time is divided by the
unprofiled time of the same repetition (machine noise longer than one repetition cancels);
dwarf is also divided by fp of the same repetition. Prints a table and writes the
"dwarf-overhead" section of BENCHMARKS.md. Needs root (BPF).

  bench/dwarf_overhead.py [--reps N] [--freq HZ] [--sizes 8192,65536] [--work M] [--no-write]
                          [--modes 'dwarf,8192;dwarf,8192,16384'] [--stack-kib K] [--section NAME]

--stack-kib puts a K KiB frame under the work (bench/workload's second argument), so that the
copy does not reach the stack top and -g dwarf,SIZE,TOP copies its window on every sample.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def report_seconds(path):
    t = time.monotonic()
    benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=folded", path])
    return time.monotonic() - t


def complete_rate(path):
    """The complete-stack rate of CPU samples that xpu-report --format=info prints."""
    out = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=info", path]).stdout
    m = re.search(r"^  complete +\d+ of \d+ cpu samples \(([\d.]+)%\)", out, re.M)
    return f"{m.group(1)}%" if m else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--freq", type=int, default=999)
    ap.add_argument("--sizes", default="8192,65536")
    ap.add_argument("--work", type=int, default=1600, help="million iterations (~1.3 ns each)")
    ap.add_argument("--modes", default="", help="';'-separated -g modes after fp")
    ap.add_argument("--stack-kib", type=int, default=0)
    ap.add_argument("--section", default="dwarf-overhead")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("dwarf_overhead: needs root for BPF")
    workload = os.path.join(benchlib.BUILD, "bench", "workload")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    modes = ["fp"] + ([m for m in args.modes.split(";") if m] if args.modes else
                      [f"dwarf,{s}" for s in args.sizes.split(",")])
    cmd = [workload, str(args.work)] + ([str(args.stack_kib)] if args.stack_kib else [])
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    vs_base, vs_fp, sizes = {}, {}, {}
    for rep in range(args.reps):
        base = benchlib.elapsed(benchlib.run(cmd).stdout)
        times = {}
        for mode in modes:
            out = os.path.join(tmp, mode.replace(",", "-") + ".xpu")
            r = benchlib.run([xrec, "--no-gpu", "-F", str(args.freq), "-g", mode, "-o", out,
                              "--"] + cmd)
            times[mode] = benchlib.elapsed(r.stdout)
            vs_base.setdefault(mode, []).append(times[mode] / base)
            if mode != "fp":
                vs_fp.setdefault(mode, []).append(times[mode] / times["fp"])
            if rep == 0:
                sizes[mode] = (os.path.getsize(out), benchlib.count_xpu_samples(out),
                               report_seconds(out), complete_rate(out))
        print(f"rep {rep + 1}/{args.reps} done (baseline {base / 1e9:.2f} s)", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)

    lines = [
        "## DWARF stack copies (`bench/dwarf_overhead.py`" +
        (f", {args.stack_kib} KiB below the work" if args.stack_kib else "") + ")",
        "",
        f"Machine: {benchlib.machine_line()}. Workload: `{' '.join(['bench/workload'] + cmd[1:])}` "
        f"(single thread, fixed work) at {args.freq} Hz, {args.reps} interleaved repetitions. "
        "Slowdown = the workload's own elapsed time under xpu-record / unprofiled (and / under "
        "`-g fp`) in the same repetition: median [min..max]. Bytes per sample = whole "
        "compressed file / samples (first repetition); complete stacks = `xpu-report "
        "--format=info`'s rate (first repetition; with -g fp the workload, built with frame "
        "pointers, unwinds fully); report = `xpu-report --format=folded` wall time, unwinding "
        "included.",
        "",
        "| -g | slowdown vs none | vs -g fp | samples | complete stacks | file bytes | bytes/sample | report s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode in modes:
        size, n, rs, rate = sizes[mode]
        rel = benchlib.fmt_ratio(vs_fp[mode]) if mode in vs_fp else "1"
        lines.append(f"| {mode} | {benchlib.fmt_ratio(vs_base[mode])} | {rel} | {n} | {rate} | {size} | "
                     f"{size / n if n else float('nan'):.1f} | {rs:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section(args.section, text)


if __name__ == "__main__":
    main()
