#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peak memory of xpu-report on -g dwarf traces, against -g fp traces of the same program.

Records tests/e2e/dwarf's chain program with a 45 KiB deep stack (no frame pointers) for SECONDS
at 999 Hz, with -g fp and with -g dwarf,SIZE for each size, then runs `xpu-report
--format=folded` on each trace and takes its peak RSS (wait4). Stack copies are streamed from
the file while unwinding, so the dwarf report should not grow with the bytes the copies hold
(shown as "copied MiB"). Writes the "report-memory" section of BENCHMARKS.md. Needs root (BPF).

  bench/report_memory.py [--seconds S] [--sizes 8192,65536] [--no-write]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def peak_rss_mib(cmd):
    """Runs cmd (output discarded) and returns its peak resident set in MiB."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}")
    return ru.ru_maxrss / 1024.0


def copied_mib(report, path):
    r = benchlib.run([report, "--format=info", path])
    m = re.search(r"^\s+dwarf\s+(\d+) copies \((\d+) bytes each\)", r.stdout, re.M)
    return int(m.group(1)) * int(m.group(2)) / 2**20 if m else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--sizes", default="8192,65536")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("report_memory: needs root for BPF")

    rec = os.path.join(benchlib.BUILD, "xpu-record")
    rep = os.path.join(benchlib.BUILD, "xpu-report")
    src = os.path.join(benchlib.ROOT, "tests", "e2e", "dwarf")
    tmp = tempfile.mkdtemp(prefix="xpu-repmem-")
    nofp = ["-O2", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"]
    subprocess.run(["gcc"] + nofp + ["-fPIC", "-shared", "-o", f"{tmp}/libdwchain.so",
                                     f"{src}/chain_lib.c"], check=True)
    subprocess.run(["gcc"] + nofp + ["-o", f"{tmp}/dwchain", f"{src}/chain_main.c",
                                     f"-L{tmp}", "-ldwchain", f"-Wl,-rpath,{tmp}"], check=True)

    rows = []
    for mode in ["fp"] + [f"dwarf,{s}" for s in args.sizes.split(",")]:
        out = os.path.join(tmp, mode.replace(",", "-") + ".xpu")
        r = benchlib.run([rec, "--no-gpu", "-F", "999", "-g", mode, "-o", out, "--",
                          f"{tmp}/dwchain", str(args.seconds), "45"])
        if r.returncode != 0:
            sys.exit(f"report_memory: xpu-record -g {mode} failed:\n{r.stderr[-2000:]}")
        rss = peak_rss_mib([rep, "--format=folded", out])
        rows.append((mode, benchlib.count_xpu_samples(out), os.path.getsize(out) / 2**20,
                     copied_mib(rep, out), rss))
    base = rows[0][4]
    lines = ["## xpu-report peak memory on -g dwarf traces (`bench/report_memory.py`)", "",
             f"Machine: {benchlib.machine_line()}. `tests/e2e/dwarf` chain program with a 45 KiB "
             f"stack, {args.seconds:g} s at 999 Hz; peak RSS of `xpu-report --format=folded` "
             "(wait4), single runs. Copied MiB = the stack bytes the trace's copies hold "
             "uncompressed.", "",
             "| -g | samples | file MiB | copied MiB | report peak MiB | vs -g fp |",
             "|---|---|---|---|---|---|"]
    for mode, n, fmib, cmib, rss in rows:
        lines.append(f"| {mode} | {n} | {fmib:.2f} | {cmib:.0f} | {rss:.1f} | "
                     f"{rss / base:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("report-memory", text)


if __name__ == "__main__":
    main()
