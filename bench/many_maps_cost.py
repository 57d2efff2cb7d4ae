#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The recorder's own CPU time for a target that makes N executable mappings (issue 41).

tests/e2e/maps/many_maps.c maps N files of its own one by one (a page each, or copies of a
library with --src), waiting after each until the recorder has read it. xpu-record records it
(--no-gpu --no-pack) with the default -g (cfi) and with -g fp; its CPU is its own threads'
user and system time (/proc/PID/stat of the exited recorder, read before it is reaped: the
target's and the pack's time are its children's, not counted). Median of --reps runs, the
modes interleaved. Rows: each mode of --modes ("cfi+noag" is -g cfi --no-autograd: what the
autograd probes' BPF programs cost to verify where a recorder loads them whatever the target;
since issue 41's last change they load only when PyTorch is mapped, so it matches cfi), at N
and at 1 mapping (the fixed cost: loading and verifying the BPF programs); with --base-build,
that build's xpu-record (e.g. main's) in the same runs.

  bench/many_maps_cost.py [--n 4000] [--reps 3] [--src LIB] [--build build]
                          [--base-build DIR] [--modes cfi,fp,cfi+noag]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def own_cpu(cmd):
    """(user s, system s) of cmd's own threads, and its exit code."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    with open(f"/proc/{p.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    user, system = int(fields[11]) / tck, int(fields[12]) / tck
    rc = p.wait()
    if rc:
        raise RuntimeError(f"{' '.join(cmd)} exited {rc}: {err[-300:]!r}")
    return user, system


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", default=None, help="map copies of this file (an ELF library)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--base-build", default=None)
    ap.add_argument("--modes", default="cfi,fp,cfi+noag")
    a = ap.parse_args()
    builds = [("", os.path.join(a.build, "xpu-record"))]
    if a.base_build:
        builds.append(("base ", os.path.join(a.base_build, "xpu-record")))
    tmp = tempfile.mkdtemp(prefix="xpu-many-maps-")
    prog = os.path.join(tmp, "many_maps")
    subprocess.run([os.environ.get("CC", "cc"), "-O1", "-o", prog,
                    os.path.join(ROOT, "tests", "e2e", "maps", "many_maps.c")], check=True)
    print(benchlib.machine_line())
    print(f"\nxpu-record's own CPU for a target of N mappings "
          f"({'copies of ' + a.src if a.src else 'a page of zeros each'}), median of {a.reps}:\n")
    print("| build, -g | N | user s | system s | total CPU s (runs) |")
    print("|---|---|---|---|---|")
    rows = [(b, m, n) for n in (a.n, 1) for b in builds for m in a.modes.split(",")]
    res = {r: [] for r in rows}
    try:
        for rep in range(a.reps):
            for (bname, rec), mode, n in rows:
                d = os.path.join(tmp, f"d{rep}")
                os.mkdir(d)
                g = mode.split("+")[0]
                cmd = [rec, "--no-gpu", "--no-pack", "-g", g] + \
                    (["--no-autograd"] if "+noag" in mode else []) + \
                    ["-o", os.path.join(tmp, "t.xpu"), "--", prog, d, str(n)] + ([a.src] if a.src else [])
                res[((bname, rec), mode, n)].append(own_cpu(cmd))
                subprocess.run(["rm", "-rf", d], check=True)
        for (bname, rec), mode, n in rows:
            runs = res[((bname, rec), mode, n)]
            tot = [u + s for u, s in runs]
            label = mode.replace("+noag", " --no-autograd")
            print(f"| {bname}{label} | {n} | {statistics.median(u for u, _ in runs):.2f} | "
                  f"{statistics.median(s for _, s in runs):.2f} | {statistics.median(tot):.2f} "
                  f"({', '.join(f'{t:.2f}' for t in tot)}) |")
    finally:
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
