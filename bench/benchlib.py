# SPDX-License-Identifier: MIT
"""Shared helpers for the benchmarks: statistics and BENCHMARKS.md sections."""
import os
import re
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))


def median_spread(values):
    """Median and (min, max) of a list of numbers."""
    return statistics.median(values), min(values), max(values)


def fmt_ratio(values):
    med, lo, hi = median_spread(values)
    return f"{(med - 1) * 100:+.1f}% [{(lo - 1) * 100:+.1f}..{(hi - 1) * 100:+.1f}]"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def elapsed(out):
    """The elapsed_ns a workload printed."""
    m = re.search(r"elapsed_ns (\d+)", out)
    if not m:
        raise RuntimeError("workload printed no elapsed_ns:\n" + out)
    return int(m.group(1))


def wall_time(cmd, env=None):
    """Seconds cmd took, its output thrown away; raises with its stderr's end if it failed."""
    t = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"{cmd[0]} exited {r.returncode}: {r.stderr[-400:]}")
    return time.monotonic() - t


def info_stats(path):
    """A trace's STATS, name -> value, from xpu-report --format=info."""
    r = run([os.path.join(BUILD, "xpu-report"), "--format=info", path])
    m = re.search(r"^stats\n((?:  .*\n)*)", r.stdout, re.M)
    return {k: int(v) for k, v in re.findall(r"^  (\S+) +(\d+)$", m.group(1), re.M)} if m else {}


def inproc_walk_ns(path):
    """The library's own timing of its walks (STATS inproc_timed, inproc_timed_ns), ns a walk."""
    st = info_stats(path)
    n = st.get("inproc_timed", 0)
    return st.get("inproc_timed_ns", 0) / n if n else None


def count_xpu_samples(path):
    """CPU samples in a trace, from xpu-report --format=info."""
    r = run([os.path.join(BUILD, "xpu-report"), "--format=info", path])
    m = re.search(r"^\s*cpu_sample\s+(\d+)", r.stdout, re.M)
    return int(m.group(1)) if m else 0


CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")


def build_mock_cupti(tmp):
    """tests/gpu/mock/mock_cupti.c, the fake libcupti, built into tmp; its path."""
    mock = os.path.join(tmp, "libmockcupti.so")
    subprocess.run(["cc", "-O1", "-g", "-shared", "-fPIC", f"-I{CUDA}/include", "-o", mock,
                    os.path.join(ROOT, "tests/gpu/mock/mock_cupti.c"), "-lpthread"], check=True)
    return mock


def build_fake_cuda_app(tmp, cflags=("-O2", "-fomit-frame-pointer")):
    """tests/gpu/mock/fake_cuda_app.c built into tmp with cflags; its path."""
    app = os.path.join(tmp, "fake_cuda_app")
    subprocess.run(["cc", *cflags, f"-I{CUDA}/include", "-o", app,
                    os.path.join(ROOT, "tests/gpu/mock/fake_cuda_app.c"), "-ldl", "-lpthread"],
                   check=True)
    return app


def print_and_write(text, write, section, heading):
    """Prints a benchmark's table; with write, puts it in BENCHMARKS.md under heading."""
    print(text)
    if write:
        write_section(section, f"## {heading}\n\n" + text)


def machine_line():
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs, {cpu}, kernel {os.uname().release}"


def write_section(name, text):
    """Replaces (or appends) the section between <!-- name --> markers in BENCHMARKS.md."""
    path = os.path.join(ROOT, "BENCHMARKS.md")
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = ("# Benchmarks\n\nEvery figure is a ratio against a baseline measured in the same "
               "run, repeated; the median is given with the [min..max] spread. Regenerate a "
               "section by running its script (named in the section).\n")
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc,
                     flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)
