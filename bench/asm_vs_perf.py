#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hand-written assembly (x264): xpu-record's wall slowdown and trace size against perf record -g.

x264's SIMD kernels are assembly without CFI or a frame pointer: a CFI walk stops in them. It
used to send a stack copy for every such walk (2.2x slower, 1.75 MiB against perf's 267 KiB,
issue 43), copies the report's own walk could do nothing with; now a copy goes only where the
report can do better (bpf/cfi_walk.bpf.h copy_pays). Encodes random 640x360 frames REPS
times, interleaved: unprofiled, xpu-record (default), xpu-record -g cfi,nocopy, perf record -g.
Each profiled wall time is divided by the unprofiled one of the same repetition. Prints a
table and writes the "asm-vs-perf" section of BENCHMARKS.md. Needs root and x264 (Debian:
apt-get install x264).

  bench/asm_vs_perf.py [--reps N] [--frames N] [--no-write]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def complete_share(path):
    r = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), path])
    m = re.search(r"^# stacks: +([0-9.]+)% of samples complete", r.stdout, re.M)
    return float(m.group(1)) if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("asm_vs_perf: needs root for BPF and perf")
    x264 = shutil.which("x264")
    if not x264 or not shutil.which("perf"):
        sys.exit("asm_vs_perf: needs x264 and perf (apt-get install x264 linux-perf)")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    yuv = os.path.join(tmp, "in.yuv")
    with open(yuv, "wb") as f:
        f.write(os.urandom(640 * 360 * 3 // 2 * args.frames))
    enc = [x264, "--quiet", "--preset", "medium", "--input-res", "640x360", "--fps", "25",
           "-o", os.path.join(tmp, "out.264"), yuv]
    runs = {
        "xpu-record": lambda out: [xrec, "--no-gpu", "-o", out, "--"] + enc,
        "xpu-record -g cfi,nocopy": lambda out: [xrec, "--no-gpu", "-g", "cfi,nocopy", "-o", out,
                                                 "--"] + enc,
        "perf record -g": lambda out: ["perf", "record", "-q", "-g", "-o", out, "--"] + enc,
    }
    ratios, sizes, shares = {}, {}, {}
    for rep in range(args.reps):
        base = benchlib.wall_time(enc)
        for name, cmd in runs.items():
            out = os.path.join(tmp, re.sub(r"[^a-z]", "_", name) + ".out")
            ratios.setdefault(name, []).append(benchlib.wall_time(cmd(out)) / base)
            if rep == 0:
                sizes[name] = os.path.getsize(out)
                if name.startswith("xpu"):
                    shares[name] = complete_share(out)
        print(f"rep {rep + 1}/{args.reps} done (unprofiled {base:.2f} s)", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        "## Hand-written assembly: x264 against perf (`bench/asm_vs_perf.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. Workload: x264 --preset medium, {args.frames} "
        f"random 640x360 frames, {args.reps} interleaved repetitions. Slowdown = wall time "
        "under the profiler / unprofiled in the same repetition: median [min..max]. File "
        "bytes and complete stacks from the first repetition.",
        "",
        "| profiler | slowdown | file bytes | complete stacks |",
        "|---|---|---|---|",
    ]
    for name in runs:
        share = f"{shares[name]:.1f}%" if name in shares else "-"
        lines.append(f"| {name} | {benchlib.fmt_ratio(ratios[name])} | {sizes[name]} | {share} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("asm-vs-perf", text)


if __name__ == "__main__":
    main()
