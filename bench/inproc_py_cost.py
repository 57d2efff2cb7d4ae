#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a launch's Python frames cost the in-process walk, without a GPU (issue 38).

A Python script launches N times through ctypes (tests/gpu/mock/fake_cuda_py.c, over the fake
libcupti) from D nested Python functions (each its own code object), under xpu-record: the default and --no-python,
interleaved in shuffled order. With --thrash-kib K the script has ctypes'
memset write K KiB before each launch, as a framework's work between launches evicts what a
walk reads. The figure is the library's own timing of its walks (STATS inproc_timed_ns over
inproc_timed: one launch in 16, walk and queueing), median [min..max] over the repetitions;
the Python frames' cost is the default's walk less --no-python's. Needs root (BPF) and a build
with libxpu-cupti.so.

  bench/inproc_py_cost.py [--reps R] [--launches N] [--depth D] [--thrash-kib K] [--python PY]
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
B = benchlib.BUILD
MODES = [("default", [], {}),
         ("--no-python", ["--no-python"], {})]

SCRIPT = r'''
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.fake_cuda_py_launch.restype = ctypes.c_int
n, depth, kib = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
buf = ctypes.create_string_buffer(max(kib, 1) * 1024)
launch, memset = lib.fake_cuda_py_launch, ctypes.memset


def inner(i):
    if kib:
        memset(buf, i & 0xff, kib * 1024)
    return launch()


# depth distinct functions, each its own code object, as a framework's call chain has
src = "def f0(k):\n    for i in range(k):\n        if inner(i) <= 0:\n            raise SystemExit('launch failed')\n"
for d in range(1, depth + 1):
    src += f"def f{d}(k):\n    return f{d - 1}(k)\n"
exec(src)


lib.fake_cuda_py_launch()
globals()[f"f{depth}"](n)
'''


def build(tmp):
    mock = benchlib.build_mock_cupti(tmp)
    fake = os.path.join(tmp, "libfake_cuda_py.so")
    subprocess.run(["cc", "-O2", "-g", "-fomit-frame-pointer", "-shared", "-fPIC",
                    f"-I{benchlib.CUDA}/include", "-o", fake,
                    os.path.join(ROOT, "tests/gpu/mock/fake_cuda_py.c"), "-ldl"], check=True)
    script = os.path.join(tmp, "launches.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    return mock, fake, script


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--thrash-kib", type=int, default=0)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--write", action="store_true",
                    help="write the inproc-py-cost section of BENCHMARKS.md")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("inproc_py_cost: needs root for BPF")
    if not os.path.exists(os.path.join(B, "libxpu-cupti.so")):
        sys.exit("inproc_py_cost: no build/libxpu-cupti.so (CUDA toolkit missing at build time)")
    tmp = tempfile.mkdtemp(prefix="xpu-bench-")
    mock, fake, script = build(tmp)
    out = os.path.join(tmp, "t.xpu")
    walks = {m[0]: [] for m in MODES}
    for rep in range(args.reps):
        order = list(MODES)
        random.shuffle(order)
        for name, flags, env in order:
            e = dict(os.environ, XPU_CUPTI_LIB=mock, **env)
            r = subprocess.run([os.path.join(B, "xpu-record"), "-o", out] + flags +
                               ["--", args.python, script, fake, str(args.launches),
                                str(args.depth), str(args.thrash_kib)],
                               env=e, capture_output=True, text=True)
            if r.returncode:
                sys.exit(f"inproc_py_cost: {name}: xpu-record exited {r.returncode}: {r.stderr[-400:]}")
            w = benchlib.inproc_walk_ns(out)
            if w is not None:
                walks[name].append(w / 1000)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    lines = [f"{benchlib.machine_line()}; {os.path.basename(args.python)}, {args.launches} "
             f"launches from {args.depth} nested Python functions, {args.thrash_kib} KiB written "
             f"between launches, {args.reps} repetitions. The walk's own time (one launch in "
             "16, walk and queueing), us: median [min..max].", "",
             "| mode | walk (us) |", "|---|---|"]
    for name, _, _ in MODES:
        v = walks[name]
        lines.append(f"| {name} | " + (f"{statistics.median(v):.2f} [{min(v):.2f}..{max(v):.2f}] |"
                                       if v else "- |"))
    benchlib.print_and_write("\n".join(lines) + "\n", args.write, "inproc-py-cost",
                             "What a launch's Python frames cost the in-process walk "
                             "(`bench/inproc_py_cost.py`)")


if __name__ == "__main__":
    main()
