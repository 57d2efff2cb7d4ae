#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build time and memory of the -g cfi unwind tables, per file.

Runs bench/cfi_tables (record/cfi_build.c, what xpu-record's worker thread runs) once per
file as a fresh process, building the table REPS times after one untimed build (the page
cache is warm, as for a library a process has just mapped). Prints per file: code size (executable
segments), unwind section size, rows, table bytes (what the BPF maps hold), build time
median (best), and how far the builds raised the builder process's peak RSS (VmHWM). Any file list works, so the GPU machine can run it on libtorch_cuda.so,
libcublasLt.so, libcudnn*.so; without files it takes the biggest .so files under the usual
library directories. Writes the "cfi-tables" section of BENCHMARKS.md (--section to rename).

  bench/cfi_tables.py [--reps 5] [--top 8] [--section NAME] [--no-write] [FILE...]
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib"]


def biggest(n):
    seen, files = set(), []
    for d in LIB_DIRS:
        for p in glob.glob(os.path.join(d, "*.so*")):
            try:
                st = os.stat(p)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen or not os.path.isfile(p):
                continue
            seen.add((st.st_dev, st.st_ino))
            files.append((st.st_size, p))
    return [p for _, p in sorted(files, reverse=True)[:n]]


def run_one(tool, path, reps):
    """The fields one fresh cfi_tables process prints."""
    return subprocess.run([tool, "-r", str(reps), path], capture_output=True,
                          text=True).stdout.split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--section", default="cfi-tables")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    tool = os.path.join(benchlib.BUILD, "bench", "cfi_tables")
    if not os.access(tool, os.X_OK):
        sys.exit(f"cfi_tables: {tool} missing: run make")
    files = args.files or biggest(args.top)
    rows = []
    tot_ns = tot_bytes = 0
    for path in files:
        run_one(tool, path, 1)          # warms the page cache, as a mapping has
        f = run_one(tool, path, args.reps)
        name = os.path.basename(path)
        if len(f) < 9 or f[1] == "error":
            rows.append(f"| {name} | {' '.join(f[2:]) or 'failed'} | | | | | |")
            continue
        exe, eh, nrows, tbytes, _, best, med, peak = (int(x) for x in f[1:9])
        tot_ns += med
        tot_bytes += tbytes
        rows.append(f"| {name} | {exe / 1e6:.1f} | {eh / 1e6:.2f} | {nrows} | "
                    f"{tbytes / 1e6:.2f} | {med / 1e6:.1f} ({best / 1e6:.1f}) | "
                    f"{peak / 1024:.1f} |")
        print(rows[-1], file=sys.stderr)
    lines = [
        "## -g cfi unwind tables: build time and memory (`bench/cfi_tables.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. Each file built {args.reps} times (after one "
        "untimed build: page cache warm) by `bench/cfi_tables`, the builder xpu-record's "
        "worker thread runs; build ms = median (best); table MB = rows x 8 bytes, what the "
        "BPF maps hold for the file (xpu-record bounds the sum at 512 MiB and reports it in "
        "`cfi_table_bytes`); builder peak = how far building raised the process's peak RSS "
        "(transient: rows before merging, the unwind section read through mmap). The BPF map load "
        "that xpu-record adds is in its `cfi_build_ns` stat.",
        "",
        "| file | code MB | unwind section MB | rows | table MB | build ms | builder peak MiB |",
        "|---|---|---|---|---|---|---|",
    ] + rows + ["", f"All {len(files)} files: {tot_ns / 1e6:.0f} ms of building, "
                    f"{tot_bytes / 1e6:.1f} MB of tables."]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section(args.section, text)


if __name__ == "__main__":
    main()
