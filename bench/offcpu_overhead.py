#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of xpu-record --off-cpu on a context-switch-heavy program, against no profiling,
plain xpu-record and perf record -e sched:sched_switch -g.

Runs bench/pingpong (two threads passing a byte through pipes: two blocks per round trip; it
prints its own elapsed time) REPS times in an interleaved order, unprofiled and under each
profiler. Each profiled time is divided by the unprofiled time of the same repetition. Two
loads: every block short (the common case: each costs the stamp at sched_switch only), and
one round in 50 with a 2 ms sleep, whose blocks are over the 1 ms minimum and get their stack.
On a shared machine elapsed times are noisy, so the off-CPU programs' own run time per call is
given too (kernel.bpf_stats_enabled, read by xpu-record -v), which load barely moves.
Prints a table and writes the "offcpu-overhead" section of BENCHMARKS.md. Needs root.

  bench/offcpu_overhead.py [--reps N] [--rounds N] [--no-write]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def info_count(path, key):
    r = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=info", path])
    m = re.search(r"^\s*" + re.escape(key) + r"\s+(\d+)", r.stdout, re.M)
    return int(m.group(1)) if m else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=100000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("offcpu_overhead: needs root for BPF and perf")
    prog = os.path.join(benchlib.BUILD, "bench", "pingpong")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    have_perf = shutil.which("perf") is not None
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    loads = [("short blocks only", [str(args.rounds)]),
             ("1 round in 50 sleeps 2 ms", [str(args.rounds // 5), "50"])]
    configs = [
        ("xpu-record -g fp", [xrec, "--no-gpu", "-g", "fp"]),
        ("xpu-record -g fp --off-cpu", [xrec, "--no-gpu", "-g", "fp", "--off-cpu"]),
        ("xpu-record --off-cpu (default -g dwarf)", [xrec, "--no-gpu", "--off-cpu"]),
    ]
    if have_perf:
        configs.append(("perf record -e sched:sched_switch -g",
                        ["perf", "record", "-q", "-e", "sched:sched_switch", "-g"]))
    ratios, sizes, per_call = {}, {}, {}
    stats_was = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    for rep in range(args.reps):
        for li, (_, largs) in enumerate(loads):
            base = benchlib.elapsed(benchlib.run([prog] + largs).stdout)
            for name, cmd in configs:
                perf = cmd[0] == "perf"
                out = os.path.join(tmp, f"{li}.{'data' if perf else 'xpu'}")
                r = benchlib.run(cmd + ([] if perf else ["-v"]) + ["-o", out, "--", prog] + largs)
                for p, runs, ns in re.findall(r"bpf (on_sched_switch|on_sched_waking|"
                                              r"on_sys_exit_offcpu): (\d+) runs, (\d+) ns",
                                              r.stderr):
                    per_call.setdefault((li, name, p), []).append(int(ns) / int(runs))
                ratios.setdefault((li, name), []).append(benchlib.elapsed(r.stdout) / base)
                if rep == 0:
                    blocks = 0 if perf else info_count(out, "off_cpu")
                    sizes[(li, name)] = (os.path.getsize(out), blocks)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write(stats_was)

    lines = [
        "## Off-CPU recording overhead (`bench/offcpu_overhead.py`)",
        "",
        f"Machine: {benchlib.machine_line()}. Workload: `bench/pingpong` (two threads ping-pong "
        f"a byte through pipes; {args.rounds} round trips, or {args.rounds // 5} with a 2 ms "
        f"sleep every 50th), {args.reps} interleaved repetitions. Slowdown = the workload's own "
        "elapsed time under the profiler / unprofiled in the same repetition: median "
        "[min..max]. Blocks = OFF_CPU records in the trace (first repetition); file bytes "
        "likewise.",
        "",
        "| load | profiler | slowdown | blocks | file bytes |",
        "|---|---|---|---|---|",
    ]
    for li, (lname, _) in enumerate(loads):
        for name, _ in configs:
            size, blocks = sizes[(li, name)]
            lines.append(f"| {lname} | {name} | {benchlib.fmt_ratio(ratios[(li, name)])} | "
                         f"{blocks if not name.startswith('perf') else '-'} | {size} |")
    lines += ["", "Run time of the off-CPU programs per call (ns, median [min..max] over the "
              "repetitions): `sched_switch` runs at every switch of any thread, `sched_waking` at "
              "every wakeup, `sys_exit` at every syscall return on the machine.", "",
              "| load | profiler | sched_switch | sched_waking | sys_exit |", "|---|---|---|---|---|"]
    for li, (lname, _) in enumerate(loads):
        for name, _ in configs:
            cells = []
            for p in ("on_sched_switch", "on_sched_waking", "on_sys_exit_offcpu"):
                v = per_call.get((li, name, p))
                if v:
                    med, lo, hi = benchlib.median_spread(v)
                    cells.append(f"{med:.0f} [{lo:.0f}..{hi:.0f}]")
            if cells:
                lines.append(f"| {lname} | {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        benchlib.write_section("offcpu-overhead", text)


if __name__ == "__main__":
    main()
