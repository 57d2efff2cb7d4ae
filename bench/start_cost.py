#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Start-up with many libraries: xpu-record's wall time on a short command against perf's.

xpu-record holds the command's start until the unwind tables of the files it links are in the
BPF maps (the first samples then walk exactly). Each table goes into a map of maps, and each
write to one waits for an RCU grace period; written one at a time, x264's 137 libraries held
its start 1.3 s on the 2-CPU VM. The loader now writes the tables that are ready in one batch
(record/cfi/cfi_loader.c, publisher()); XPU_CFI_PUBLISH=single writes them one by one, the old
way, as the baseline of the same run. The table cache is warm (a first run fills it), so the
figures are the publish and not the build. Runs CMD (default: x264 --version, else python3 -c
pass) REPS times interleaved: unprofiled, xpu-record, xpu-record with XPU_CFI_PUBLISH=single,
perf record -g; prints wall seconds (median [min..max]) and the held start
(cfi_start_wait_ns, median) and writes the "start-cost" section of BENCHMARKS.md.

  bench/start_cost.py [--reps N] [--no-write] [-- CMD...]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("cmd", nargs="*")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("start_cost: needs root for BPF and perf")
    cmd = args.cmd or ([shutil.which("x264"), "--version"] if shutil.which("x264")
                       else [sys.executable, "-c", "pass"])
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    out = os.path.join(tmp, "t.xpu")
    single = dict(os.environ, XPU_CFI_PUBLISH="single")
    runs = {
        "unprofiled": (cmd, None),
        "xpu-record (batched publish)": ([xrec, "--no-gpu", "-o", out, "--"] + cmd, None),
        "xpu-record, XPU_CFI_PUBLISH=single": ([xrec, "--no-gpu", "-o", out, "--"] + cmd, single),
    }
    if shutil.which("perf"):
        runs["perf record -g"] = (["perf", "record", "-q", "-g", "-o",
                                   os.path.join(tmp, "p.data"), "--"] + cmd, None)
    benchlib.wall_time(runs["xpu-record (batched publish)"][0])	# fills the table cache
    walls, waits = {}, {}
    for rep in range(args.reps):
        for name, (c, env) in runs.items():
            walls.setdefault(name, []).append(benchlib.wall_time(c, env))
            if name.startswith("xpu"):
                waits.setdefault(name, []).append(benchlib.info_stats(out).get("cfi_start_wait_ns", float("nan")) / 1e6)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    libs = subprocess.run(["ldd", cmd[0]], capture_output=True, text=True).stdout.count("=>")
    shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        "## Start-up with many libraries (`bench/start_cost.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. Command: "
        f"`{' '.join([os.path.basename(cmd[0])] + cmd[1:])}` "
        f"({libs} libraries linked), {args.reps} interleaved repetitions, table cache warm. "
        "Wall seconds of the whole command: median [min..max]; held start = the time "
        "xpu-record held the command for its tables (`cfi_start_wait_ns`), median.",
        "",
        "| run | wall s | held start ms |",
        "|---|---|---|",
    ]
    for name in runs:
        med, lo, hi = benchlib.median_spread(walls[name])
        wait = f"{statistics.median(waits[name]):.0f}" if name in waits else "-"
        lines.append(f"| {name} | {med:.2f} [{lo:.2f}..{hi:.2f}] | {wait} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("start-cost", text)


if __name__ == "__main__":
    main()
