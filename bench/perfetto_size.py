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
3. For each generated trace of at most --decode-max samples: its perfetto output written to a
   file once more and decoded whole with protoc against format-spec/perfetto_subset.proto, in
   runs of whole packets of about 16 MiB (a Trace is its packets: any run of them decodes as
   one, and protoc's memory stays bounded), every run decoding without a word on stderr; its
   PerfSample packets counted and checked equal to the trace's samples (`-F info`).

Prints markdown for BENCHMARKS.md.

  bench/perfetto_size.py [--reps 3] [--gen 10000000,128000000] [--decode-max 20000000]
                         [--build build]
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
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


def packet_runs(path, size):
    """Runs of whole top-level packets (field 1, length-delimited) of about size bytes."""
    with open(path, "rb") as f:
        buf = f.read()
    mv, n, i, start = memoryview(buf), len(buf), 0, 0
    while i < n:
        if buf[i] != 0x0A:
            raise RuntimeError(f"{path}: byte {i} does not start a packet")
        j, ln, sh = i + 1, 0, 0
        while True:
            b = buf[j]
            j += 1
            ln |= (b & 0x7F) << sh
            sh += 7
            if b < 0x80:
                break
        i = j + ln
        if i > n:
            raise RuntimeError(f"{path}: its last packet is cut")
        if i - start >= size:
            yield mv[start:i]
            start = i
    if start < n:
        yield mv[start:n]


def decode_count(path):
    """(PerfSample packets, packet runs, wall s) of protoc's decoding of the whole file, its
    compressed chunks inflated first (tests/unit/perfetto_unpack.py)."""
    proto = os.path.join(ROOT, "format-spec", "perfetto_subset.proto")
    t0 = time.monotonic()
    samples = runs = 0
    raw = path + ".raw"
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "unit", "perfetto_unpack.py"),
                    path, raw], check=True, stdout=subprocess.DEVNULL)
    for run_ in packet_runs(raw, 16 << 20):
        runs += 1
        p = subprocess.Popen(["protoc", "--decode=perfetto.protos.Trace", "-I" + os.path.dirname(proto),
                              proto], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        # protoc reads all its input before it writes: no deadlock in writing it first
        p.stdin.write(run_)
        p.stdin.close()
        for line in p.stdout:
            if line == b"  perf_sample {\n":
                samples += 1
        err = p.stderr.read()
        if p.wait() != 0 or err:
            raise RuntimeError(f"protoc: run {runs} of {path}: {err[:200]!r}")
    return samples, runs, time.monotonic() - t0


def info_samples(report, path):
    out = subprocess.run([report, "-F", "info", "--max-records=0", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == "cpu_sample":
            return int(f[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--gen", default="10000000")
    ap.add_argument("--decode-max", type=int, default=20000000)
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
        decoded = []
        for n in (int(x) for x in a.gen.split(",") if x):
            g = os.path.join(tmp, "gen.xpu")
            subprocess.run([os.path.join(a.build, "bench", "gen_trace"), g, str(n), "4000", sym] + libs,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t = os.path.getsize(g)
            reps = a.reps if n <= 20000000 else 1
            p = measure([report, "-F", "perfetto", "--max-output=0", "--max-records=0", g], reps)
            x = measure([report, "--max-records=0", g], reps)
            print(f"| {n} | {t} | {p[0]} ({p[0] / t:.2f}x) | {p[1]:.1f} | {x[1]:.1f} | {p[2]:.0f} | {x[2]:.0f} |")
            if n <= a.decode_max:
                pf = os.path.join(tmp, "gen.pftrace")
                subprocess.run([report, "-F", "perfetto", "--max-output=0", "--max-records=0", "-o", pf, g],
                               check=True, stderr=subprocess.DEVNULL)
                want = info_samples(report, g)
                got, runs, secs = decode_count(pf)
                decoded.append((n, os.path.getsize(pf), runs, secs, got, want))
                os.unlink(pf)
                os.unlink(pf + ".raw")
                if got != want:
                    raise RuntimeError(f"{n}: {got} PerfSample packets decoded, {want} samples in the trace")
            os.unlink(g)
        for n, size, runs, secs, got, want in decoded:
            print(f"\n{n} samples: the perfetto output ({size} bytes) decoded whole by protoc in {runs} "
                  f"runs of whole packets, {secs:.0f} s, nothing on stderr: {got} PerfSample "
                  f"packets, the trace's `-F info` cpu_sample {want}.")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
