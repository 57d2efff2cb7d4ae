#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whether the writer keeps up with launch-bound ranks, without a GPU (issue 40).

P processes (tests/gpu/mock/fake_cuda_app over the fake libcupti, FAKE_CUDA_DEPTH frames deep,
as a framework's launch stack is) launch N kernels each as fast as the launch path allows, all
under one xpu-record: every launch gives a launch record with its stack, an API record and a
kernel record, far more per second than a real rank (one launch every 35-40 us). Per walk mode
(in process, BPF) and writer setting: the launch rate each process kept, the records the writer
dropped (`lost writer`) and CUPTI's (the fake libcupti reports 5 a process, once, to exercise
that path), the kernels and launches in the trace against
those made, trace bytes a kernel, the frames the writer compressed at a faster level for its
backlog (writer_frames_fast), the recording's wall time; the stack-copy run once more with the
level fixed (XPU_WRITER_FIXED_LEVEL=1, the writer before 2026-12-08) as its baseline. Needs root (BPF) and a build with
libxpu-cupti.so.

  bench/writer_ranks.py [--reps R] [--procs P] [--launches N] [--depth D] [--write]
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
B = benchlib.BUILD
MODES = [("in-process walk", [], {}),
         ("BPF walk", ["--launch-walk=bpf"], {}),
         # every launch with a copy of its stack, the records the attach of issue 40 flooded
         # the writer with when its tables came late
         ("-g dwarf (stack copies)", ["-g", "dwarf"], {}),
         # the same with the writer's zstd level fixed whatever its backlog (as before 2026-12-08)
         ("-g dwarf, fixed level", ["-g", "dwarf"], {"XPU_WRITER_FIXED_LEVEL": "1"})]


def build(tmp):
    return benchlib.build_mock_cupti(tmp), benchlib.build_fake_cuda_app(
        tmp, ("-O1", "-g", "-fno-omit-frame-pointer"))


def lost(text, what):
    m = re.search(r"^# lost: .*\b" + what + r" (\d+)", text, re.M)
    return int(m.group(1)) if m else None


def one(args, tmp, mock, app, flags, extra_env):
    out = os.path.join(tmp, "t.xpu")
    lib = os.path.realpath(os.path.join(B, "libxpu-cupti.so"))
    logs = [os.path.join(tmp, f"app{i}.out") for i in range(args.procs)]
    sh = " ".join(f"{app} {lib} {mock} {args.launches} >{log} &" for log in logs) + " wait"
    env = dict(os.environ, XPU_CUPTI_LIB=mock, FAKE_CUDA_DEPTH=str(args.depth), **extra_env)
    t = time.monotonic()
    r = subprocess.run([os.path.join(B, "xpu-record"), "--no-pack", "-o", out] + flags +
                       ["--", "sh", "-c", sh], env=env, capture_output=True, text=True)
    wall = time.monotonic() - t
    if r.returncode:
        sys.exit(f"writer_ranks: xpu-record exited {r.returncode}: {r.stderr[-400:]}")
    rates = []
    for log in logs:
        text = open(log).read()
        n, ns = re.search(r"launches (\d+)", text), re.search(r"loop_ns (\d+)", text)
        rates.append(int(n.group(1)) / (int(ns.group(1)) / 1e9))
    st = benchlib.info_stats(out)
    rep = subprocess.run([os.path.join(B, "xpu-report"), out], capture_output=True, text=True).stdout
    info = subprocess.run([os.path.join(B, "xpu-report"), "-F", "info", out],
                          capture_output=True, text=True).stdout
    rec = {k: int(v) for k, v in re.findall(r"^  (gpu_kernel|gpu_launch) +(\d+)$", info, re.M)}
    made = args.procs * args.launches
    return {"rate": statistics.mean(rates), "writer": lost(rep, "writer"), "cupti": lost(rep, "cupti"),
            "kernels": rec.get("gpu_kernel", 0) / made, "launches": rec.get("gpu_launch", 0) / made,
            "bytes": os.path.getsize(out) / max(rec.get("gpu_kernel", 0), 1), "wall": wall,
            "raw": st.get("writer_bytes_raw", 0) / max(rec.get("gpu_kernel", 0), 1),
            "fast": st.get("writer_frames_fast", 0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--depth", type=int, default=40)
    ap.add_argument("--write", action="store_true",
                    help="write the writer-ranks section of BENCHMARKS.md")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("writer_ranks: needs root for BPF")
    if not os.path.exists(os.path.join(B, "libxpu-cupti.so")):
        sys.exit("writer_ranks: no build/libxpu-cupti.so (CUDA toolkit missing at build time)")
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    mock, app = build(tmp)
    res = {m[0]: [] for m in MODES}
    for rep in range(args.reps):
        order = list(MODES)
        random.shuffle(order)
        for name, flags, env in order:
            res[name].append(one(args, tmp, mock, app, flags, env))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)

    def med(name, k, fmt):
        v = [r[k] for r in res[name] if r[k] is not None]
        return fmt.format(statistics.median(v)) + (f" [{fmt.format(min(v))}..{fmt.format(max(v))}]"
                                                     if len(v) > 1 else "") if v else "-"
    lines = [f"{benchlib.machine_line()}; {args.procs} processes under one xpu-record, "
             f"{args.launches} launches each from {args.depth} frames deep, {args.reps} repetitions "
             "(median [min..max]).", "",
             "| walk | launches/s a process | lost writer | cupti dropped | kernels in trace | "
             "launches in trace | bytes a kernel (raw) | fast frames | recording s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, _, _ in MODES:
        lines.append(f"| {name} | {med(name, 'rate', '{:.0f}')} | {med(name, 'writer', '{:.0f}')} | "
                     f"{med(name, 'cupti', '{:.0f}')} | {med(name, 'kernels', '{:.1%}')} | "
                     f"{med(name, 'launches', '{:.1%}')} | {med(name, 'bytes', '{:.1f}')} "
                     f"({med(name, 'raw', '{:.0f}')}) | {med(name, 'fast', '{:.0f}')} | {med(name, 'wall', '{:.1f}')} |")
    benchlib.print_and_write("\n".join(lines) + "\n", args.write, "writer-ranks",
                             "The writer and launch-bound ranks (`bench/writer_ranks.py`)")


if __name__ == "__main__":
    main()
