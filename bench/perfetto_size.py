#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Size, speed and peak memory of xpu-report --format=perfetto against --format=chrome.

1. Each committed trace (samples/traces/*.xpu): the bytes of the trace, of its perfetto and
   chrome outputs (and their ratio to the trace), wall seconds and peak RSS of each, median of
   REPS runs.
2. Generated CPU traces (bench/gen_trace: 8 threads at 20 kHz, 4000 stacks of depth 10..40 in
   the functions of a copy of xpu-report, libc, libdw and libzstd) of each size in --gen (sample
   counts): the perfetto output's bytes, wall seconds and peak RSS against the text report's on
   the same trace, whose RSS is what the report holds anyway (the trace in memory): what the
   perfetto output adds is its own memory. Outputs are counted through a pipe, never stored.

Prints markdown for BENCHMARKS.md.

  bench/perfetto_size.py [--reps 3] [--gen 10000000,128000000] [--build build]
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """(output bytes, wall s, peak RSS MiB) of cmd, its stdout counted through a pipe."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        n += len(b)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return n, wall, ru.ru_maxrss / 1024


def measure(cmd, reps):
    r = [run(cmd) for _ in range(reps)]
    return r[0][0], statistics.median(x[1] for x in r), max(x[2] for x in r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--gen", default="10000000")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    report = os.path.join(a.build, "xpu-report")
    print(f"Machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start; "
          f"median of {a.reps} runs, output counted through a pipe.\n")
    print("| trace | trace bytes | perfetto bytes (x trace) | chrome bytes (x trace) | "
          "perfetto / chrome | perfetto s | chrome s | perfetto RSS MiB | chrome RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for f in sorted(glob.glob(os.path.join(ROOT, "samples", "traces", "*.xpu"))):
        t = os.path.getsize(f)
        p = measure([report, "-F", "perfetto", "--max-output=0", f], a.reps)
        c = measure([report, "-F", "chrome", "--max-output=0", f], a.reps)
        print(f"| {os.path.basename(f)} | {t} | {p[0]} ({p[0] / t:.2f}x) | {c[0]} ({c[0] / t:.1f}x) "
              f"| {p[0] / c[0]:.3f} | {p[1]:.2f} | {c[1]:.2f} | {p[2]:.0f} | {c[2]:.0f} |")
    tmp = tempfile.mkdtemp(prefix="xpu-perfetto-size-")
    try:
        # the frames' files must not change while the traces are in use: a copy of the report
        sym = os.path.join(tmp, "xpu-report")
        shutil.copy(report, sym)
        libs = [x for x in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libdw.so.1",
                            "/lib/x86_64-linux-gnu/libzstd.so.1") if os.path.exists(x)]
        print("\n| generated samples | trace bytes | perfetto bytes (x trace) | perfetto s | "
              "text s | perfetto RSS MiB | text RSS MiB |")
        print("|---|---|---|---|---|---|---|")
        for n in (int(x) for x in a.gen.split(",") if x):
            g = os.path.join(tmp, "gen.xpu")
            subprocess.run([os.path.join(a.build, "bench", "gen_trace"), g, str(n), "4000", sym] + libs,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t = os.path.getsize(g)
            reps = a.reps if n <= 20000000 else 1
            p = measure([report, "-F", "perfetto", "--max-output=0", "--max-records=0", g], reps)
            x = measure([report, "--max-records=0", g], reps)
            print(f"| {n} | {t} | {p[0]} ({p[0] / t:.2f}x) | {p[1]:.1f} | {x[1]:.1f} | {p[2]:.0f} | {x[2]:.0f} |")
            os.unlink(g)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
