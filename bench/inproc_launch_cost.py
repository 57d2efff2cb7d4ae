#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What one launch's stack costs the launching thread, without a GPU (issue 38): the fake CUDA
app (tests/gpu/mock) launches N times from D nested frames built without frame pointers, under
xpu-record with --no-launch-stacks, --launch-walk=bpf, the in-process walk with its walk memo off
(XPU_CUPTI_WALK_MEMO=0) and the default (the in-process walk with its memo),
interleaved in shuffled order. Added cost per launch = (loop time - --no-launch-stacks' loop
time in the same repetition) / N: the stack alone, callbacks and transport being the same in
both. Needs root (BPF) and a build with libxpu-cupti.so.

With --thrash-kib K the app writes a line in every 64 bytes of a K KiB buffer before each launch
(FAKE_CUDA_THRASH_KIB), as a framework's own work between launches evicts what a walk reads;
each mode then also reports the walk's own time, timed by the library on one launch in 16.

  bench/inproc_launch_cost.py [--reps R] [--launches N] [--depth D] [--thrash-kib K] [--write]
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
B = benchlib.BUILD
# name, xpu-record flags, the target's environment
MODES = [("no-launch-stacks", ["--no-launch-stacks"], {}),
         ("bpf-walk", ["--launch-walk=bpf"], {}),
         ("in process, walk memo off", [], {"XPU_CUPTI_WALK_MEMO": "0"}),
         ("default (in process, walk memo)", [], {})]


def build(tmp):
    return benchlib.build_mock_cupti(tmp), benchlib.build_fake_cuda_app(tmp)


def loop_ns(app, mock, flags, extra_env, n, depth, trace, thrash_kib=0):
    env = dict(os.environ, XPU_CUPTI_LIB=mock, FAKE_CUDA_DEPTH=str(depth), **extra_env)
    if thrash_kib:
        env["FAKE_CUDA_THRASH_KIB"] = str(thrash_kib)
    r = subprocess.run([os.path.join(B, "xpu-record"), *flags, "-o", trace, "--", app,
                        os.path.realpath(os.path.join(B, "libxpu-cupti.so")), mock, str(n)],
                       capture_output=True, text=True, env=env)
    m = re.search(r"loop_ns (\d+)", r.stdout)
    if r.returncode or not m:
        raise RuntimeError(f"{flags}: {r.stderr[-800:]}")
    return int(m.group(1)), benchlib.inproc_walk_ns(trace)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--launches", type=int, default=50000)
    ap.add_argument("--depth", type=int, default=40)
    ap.add_argument("--thrash-kib", type=int, default=0)
    ap.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("inproc_launch_cost: needs root (BPF)")
    with tempfile.TemporaryDirectory() as tmp:
        mock, app = build(tmp)
        added = {name: [] for name, _, _ in MODES[1:]}
        walks = {name: [] for name, _, _ in MODES[1:]}
        for _ in range(a.reps):
            order = list(MODES)
            random.shuffle(order)
            t = {name: loop_ns(app, mock, flags, env, a.launches, a.depth,
                               os.path.join(tmp, "t.xpu"), a.thrash_kib)
                 for name, flags, env in order}
            for name in added:
                added[name].append((t[name][0] - t["no-launch-stacks"][0]) / a.launches / 1000)
                if t[name][1] is not None:
                    walks[name].append(t[name][1] / 1000)
    lines = [benchlib.machine_line(),
             f"`fake_cuda_app` (tests/gpu/mock), {a.launches} launches from {a.depth} nested "
             f"frames without frame pointers"
             + (f", {a.thrash_kib} KiB written between launches" if a.thrash_kib else "")
             + f", {a.reps} repetitions in shuffled order. Added cost "
             "per launch against `--no-launch-stacks` in the same repetition, and the in-process "
             "walk's own time (one launch in 16, walk and queueing), us: median [min..max].",
             "", "| launch stacks | added per launch (us) | walk (us) |", "|---|---|---|"]
    for name, v in added.items():
        w = walks[name]
        ws = f"{statistics.median(w):.2f} [{min(w):.2f}..{max(w):.2f}]" if w else "-"
        lines.append(f"| {name} | {statistics.median(v):.2f} [{min(v):.2f}..{max(v):.2f}] | {ws} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        benchlib.write_section("inproc-launch-cost", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
