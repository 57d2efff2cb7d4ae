#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of Python frames: slowdown and trace bytes per event, with and without them.

Runs a Python program REPS times in an interleaved order: unprofiled, then under xpu-record in
each mode, each with --no-python and with Python frames. Each profiled time is divided by the
unprofiled time of the same repetition. The program prints its own elapsed time, so interpreter
start-up (and PyTorch's import) is not measured: bench/py_loop.py prints `elapsed_ns N`,
samples/torch_train.py `final loss X in Ys`. Writes the "python-overhead-WORKLOAD" section of
BENCHMARKS.md. Needs root (BPF).

  bench/python_overhead.py [--workload loop|torch] [--reps 7] [--modes 'fp;dwarf,32768,32768']
                           [--python python3] [--no-write]
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def program_ns(out):
    m = re.search(r"elapsed_ns (\d+)", out)
    if m:
        return int(m.group(1))
    m = re.search(r"final loss \S+ in ([0-9.]+)s", out)
    if m:
        return float(m.group(1)) * 1e9
    raise RuntimeError("the program printed no elapsed time:\n" + out[-2000:])


def events(path):
    """CPU samples plus GPU launches, and the events that carried Python frames."""
    r = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=info", path])
    get = lambda k: int(m.group(1)) if (m := re.search(rf"^\s*{k}\s+(\d+)", r.stdout, re.M)) \
        else 0
    return get("cpu_sample") + get("gpu_launch"), get("py_stacks")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=["loop", "torch"], default="loop")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--modes", default="fp;dwarf,32768,32768")
    ap.add_argument("--python", default="python3")
    ap.add_argument("--clean-target-env", action="store_true",
                    help="run the program without LD_LIBRARY_PATH (set only for xpu-record)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("python_overhead: needs root for BPF")
    xrec = os.path.join(benchlib.BUILD, "xpu-record")
    if args.workload == "loop":
        cmd = [args.python, os.path.join(benchlib.ROOT, "bench", "py_loop.py"), "1500"]
        extra = ["--no-gpu"]
    else:
        cmd = [args.python, os.path.join(benchlib.ROOT, "samples", "torch_train.py")]
        extra = []
    if args.clean_target_env:
        cmd = ["env", "-u", "LD_LIBRARY_PATH"] + cmd
    modes = [m for m in args.modes.split(";") if m]
    configs = [(m, py) for m in modes for py in (False, True)]
    tmp = tempfile.mkdtemp(prefix="xpu-pybench-")
    ratios, sizes = {}, {}
    for rep in range(args.reps):
        base = program_ns(benchlib.run(cmd).stdout)
        for mode, py in configs:
            out = os.path.join(tmp, f"t-{len(sizes)}.xpu")
            opts = ["-g", mode] + ([] if py else ["--no-python"]) + extra
            r = benchlib.run([xrec] + opts + ["-o", out, "--"] + cmd)
            if r.returncode:
                sys.exit(f"python_overhead: xpu-record {' '.join(opts)} failed:\n{r.stderr}")
            ratios.setdefault((mode, py), []).append(program_ns(r.stdout) / base)
            if rep == 0:
                n, with_py = events(out)
                sizes[(mode, py)] = (os.path.getsize(out), n, with_py)
            os.unlink(out)
    lines = [f"`bench/python_overhead.py --workload {args.workload}` ({args.reps} interleaved "
             f"repetitions, `{' '.join(cmd[:1] + [os.path.basename(c) for c in cmd[1:]])}`; "
             f"{benchlib.machine_line()}):", "",
             "| `-g` | Python frames | slowdown vs unprofiled, median [min..max] | "
             "trace bytes per event | events with Python frames |", "|---|---|---|---|---|"]
    for mode, py in configs:
        size, n, with_py = sizes[(mode, py)]
        lines.append(f"| `{mode}` | {'yes' if py else 'no (`--no-python`)'} | "
                     f"{benchlib.fmt_ratio(ratios[(mode, py)])} | "
                     f"{size / n if n else 0:.1f} | {with_py} of {n} |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        benchlib.write_section(f"python-overhead-{args.workload}", text)


if __name__ == "__main__":
    main()
