# SPDX-License-Identifier: MIT
"""Per-function self shares, xpu-record/xpu-report against perf record/perf report.

Each workload is recorded by each tool in turn (never both at once, same work), at 999 Hz
with kernel stacks. perf's side is `perf report --no-children --sort dso,sym` (the same
rows as --sort sym, with the file each comes from); ours is the leaf frame of
`xpu-report --format=folded --view=cpu` on a trace recorded with --no-python (native frames,
as perf sees them). For each of perf's top functions the two shares must agree within
--tolerance points.

perf names code no symbol covers by its address, one row per address; xpu-report names it
by the start of the function's .eh_frame FDE. To compare like with like, perf's rows of
such addresses are summed by that same FDE start, read here from the file's .eh_frame_hdr
(an independent reading of the table, with readelf and Python).

Usage: sudo python3 bench/vs_perf_names.py [--workloads=a,b] [--no-write] [--check]
"""
import argparse
import bisect
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter

import benchlib

PYENV_PY = os.path.expanduser("~/.pyenv/versions/3.11.7/bin/python3.11")


def workloads(tmp, scale):
    """name -> (description, argv, env additions)."""
    loop = os.path.join(benchlib.ROOT, "bench", "names_loop.py")
    rounds = str(int(3000 * scale))
    w = {
        "python-debian": ("Debian's stripped /usr/bin/python3.11, bench/names_loop.py",
                          ["/usr/bin/python3.11", loop, rounds], {}),
        "python-pyenv": ("pyenv's python3.11 (symbols, DWARF), bench/names_loop.py",
                         [PYENV_PY, loop, rounds], {}),
        "xz": ("xz -9 -T1 of a generated 6 MiB text file",
               ["xz", "-9", "-T1", "-c", "-k", os.path.join(tmp, "xz.in")], {}),
        "sort": ("sort --parallel=1 of a generated 2M-line file (LC_ALL=C.UTF-8)",
                 ["sort", "--parallel=1", "-S", "512M", "-o", "/dev/null",
                  os.path.join(tmp, "sort.in")], {"LC_ALL": "C.UTF-8"}),
    }
    return w


def make_inputs(tmp, scale):
    import random
    rnd = random.Random(12)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
             for _ in range(5000)]
    with open(os.path.join(tmp, "xz.in"), "w") as f:
        size = 0
        while size < 6 * scale * (1 << 20):
            line = " ".join(rnd.choice(words) for _ in range(12)) + f" {rnd.random()}\n"
            f.write(line)
            size += len(line)
    with open(os.path.join(tmp, "sort.in"), "w") as f:
        for _ in range(int(2_000_000 * scale)):
            f.write(f"{rnd.choice(words)}-{rnd.getrandbits(40):x} {rnd.choice(words)}\n")


# ---- FDE starts, read independently of xpu-report (readelf + .eh_frame_hdr bytes) ----------

_fde_cache = {}


def elf_layout(path):
    """(LOAD segments [(offset, vaddr, filesz)], sorted FDE starts) of an ELF file."""
    if path in _fde_cache:
        return _fde_cache[path]
    segs, starts = [], []
    lw = benchlib.run(["readelf", "-lW", path]).stdout
    for m in re.finditer(r"^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+(0x[0-9a-f]+)",
                         lw, re.M):
        segs.append(tuple(int(x, 16) for x in m.groups()))
    sw = benchlib.run(["readelf", "-SW", path]).stdout
    m = re.search(r"\.eh_frame_hdr\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", sw)
    if m:
        addr, off, size = (int(x, 16) for x in m.groups())
        with open(path, "rb") as f:
            f.seek(off)
            b = f.read(size)
        # version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4
        if len(b) >= 12 and b[0] == 1 and b[2] == 0x03 and b[3] == 0x3b:
            count = struct.unpack_from("<I", b, 8)[0]
            count = min(count, (len(b) - 12) // 8)
            starts = sorted(addr + struct.unpack_from("<i", b, 12 + 8 * i)[0]
                            for i in range(count))
    _fde_cache[path] = (segs, starts)
    return segs, starts


def fde_name(path, off):
    """perf's address of unnamed code (a file offset) as xpu-report names it: FILE+0xSTART."""
    base = os.path.basename(path)
    try:
        segs, starts = elf_layout(path)
    except OSError:
        return f"{base}+{off:#x}"
    v = next((off - o + va for o, va, sz in segs if o <= off < o + sz), None)
    if v is None or not starts:
        return f"{base}+{off:#x}"
    i = bisect.bisect_right(starts, v)
    if not i:
        return f"{base}+{off:#x}"
    start = starts[i - 1]
    so = next((start - va + o for o, va, sz in segs if va <= start < va + sz), start)
    return f"{base}+{so:#x}"


# ---- the two profiles ------------------------------------------------------------------------

PERF_LINE = re.compile(r"^\s*(\d+)\s*;(.*?)\s*;(0x[0-9a-f]+)\s+\S+\s+\[(.)\]\s+(.*?)\s*$")


def record(cmd, env, what):
    """Runs a recorder; the workload's own output (xz writes to stdout) is thrown away."""
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode:
        raise RuntimeError(f"{what} failed: " + r.stderr.decode(errors="replace")[-300:])


def perf_profile(argv, env, tmp):
    data = os.path.join(tmp, "perf.data")
    record(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, "--"] +
           argv, env, "perf record")
    r = benchlib.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym",
                      "--stdio", "-g", "none", "-t", ";", "-F", "sample,dso,sym", "-v"])
    shares = Counter()
    for line in r.stdout.splitlines():
        m = PERF_LINE.match(line)
        if not m:
            continue
        n, dso, addr, _kind, sym = int(m[1]), m[2], int(m[3], 16), m[4], m[5]
        if re.fullmatch(r"0x[0-9a-f]+", sym) and dso.startswith("/"):
            sym = fde_name(dso, addr)
        shares[sym] += n
    return shares


def xpu_profile(argv, env, tmp):
    trace = os.path.join(tmp, "x.xpu")
    rec = [os.path.join(benchlib.BUILD, "xpu-record"), "--no-gpu", "--no-python",
           "--kernel-stacks", "-F", "999", "-o", trace, "--"]
    record(rec + argv, env, "xpu-record")
    r = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=folded",
                      "--view=cpu", trace])
    shares = Counter()
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        leaf = stack.rsplit(";", 1)[-1]
        if leaf.endswith("_[k]"):
            leaf = leaf[:-4]
        shares[leaf] += int(n)
    return shares


def pct(c):
    total = sum(c.values()) or 1
    return {k: 100.0 * v / total for k, v in c.items()}, total


def compare(name, desc, perf, xpu, top, tol, names_only=False):
    p, pn = pct(perf)
    x, xn = pct(xpu)
    rows, worst, missing = [], 0.0, []
    for fn, _ in sorted(p.items(), key=lambda kv: -kv[1])[:top]:
        d = x.get(fn, 0.0) - p[fn]
        worst = max(worst, abs(d))
        # a name perf gives 1% or more of the samples must be one xpu-report gives too
        if p[fn] >= 1.0 and not xpu.get(fn):
            missing.append(fn)
        rows.append(f"| {fn} | {p[fn]:.1f} | {x.get(fn, 0.0):.1f} | {d:+.1f} |")
    ok = not missing if names_only else worst <= tol
    if missing:
        rows.append(f"\nnames perf gives that xpu-report never does: {', '.join(missing)}")
    head = (f"**{name}**: {desc}. perf {pn} samples, xpu {xn} samples; largest difference "
            f"{worst:.1f} points ({'within' if ok else 'OVER'} {tol:g}).\n\n"
            "| function (perf's top %d) | perf self %% | xpu self %% | diff |\n|---|---|---|---|\n"
            % top)
    return ok, head + "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="python-debian,python-pyenv,xz,sort")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--tolerance", type=float, default=2.0)
    ap.add_argument("--scale", type=float, default=1.0, help="work per run (1: about 3 s)")
    ap.add_argument("--runs", type=int, default=2, help="runs per tool, samples summed")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 when a share is over")
    ap.add_argument("--names-only", action="store_true",
                    help="with --check: fail only when a name of perf's top (1%% or more) "
                         "is absent from xpu-report's output; shares are only shown (separate "
                         "runs of a busy machine differ by more than any fixed margin)")
    args = ap.parse_args()
    if os.geteuid():
        sys.exit("vs_perf_names: needs root (BPF and perf)")
    if not shutil.which("perf"):
        sys.exit("vs_perf_names: perf is not installed (Debian package linux-perf)")
    tmp = tempfile.mkdtemp(prefix="xpu-vs-perf-")
    try:
        make_inputs(tmp, args.scale)
        ws = workloads(tmp, args.scale)
        sections, all_ok = [], True
        for i, name in enumerate(args.workloads.split(",")):
            desc, argv, extra = ws[name]
            if not os.path.exists(argv[0]) and not shutil.which(argv[0]):
                print(f"{name}: {argv[0]} not found, skipped")
                continue
            env = dict(os.environ, **extra)
            perf, xpu = Counter(), Counter()
            # interleaved, alternating which tool goes first: a burst of load from elsewhere
            # (this machine is shared) then lands on both tools' samples alike
            for r in range(args.runs):
                if (i + r) % 2:
                    xpu += xpu_profile(argv, env, tmp)
                    perf += perf_profile(argv, env, tmp)
                else:
                    perf += perf_profile(argv, env, tmp)
                    xpu += xpu_profile(argv, env, tmp)
            ok, text = compare(name, desc, perf, xpu, args.top, args.tolerance, args.names_only)
            all_ok &= ok
            print(text)
            sections.append(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.no_write and sections:
        body = ("## Function names against perf (bench/vs_perf_names.py)\n\n"
                f"Self share of perf's top {args.top} functions (`perf report --no-children "
                "--sort sym`) and xpu-report's share of the same name, each tool recording "
                f"the same work in turn ({args.runs} runs each, interleaved, samples summed) at 999 Hz "
                "with kernel stacks. perf's per-address rows of "
                "code without a symbol are summed by FDE start, as xpu-report names them. "
                f"Machine: {benchlib.machine_line()}.\n\n" + "\n".join(sections))
        benchlib.write_section("vs-perf-names", body)
    if args.check and not all_ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
