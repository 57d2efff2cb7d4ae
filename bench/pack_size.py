#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Symbol pack size and cost against the trace and the whole-file archive (`--elf`).

Records three programs with the defaults (a C program with a dlopen'ed plugin and a child,
tests/e2e/pack; Debian's python3 on a JSON loop; the stripped xz), then for each: the trace's
size, the pack xpu-record wrote at the end, the time and peak memory of `xpu-report archive`
run again on the trace, and the size, time and peak memory of `xpu-report archive --elf`.
Prints a Markdown table (the "symbol-pack" section of BENCHMARKS.md). Needs root (BPF).

  bench/pack_size.py [--build build]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def run_measured(cmd, env=None):
    """Runs cmd, output dropped: (seconds, peak RSS MiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return time.monotonic() - t0, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rec = os.path.join(root, a.build, "xpu-record")
    rep = os.path.join(root, a.build, "xpu-report")
    with tempfile.TemporaryDirectory() as tmp:
        cc = os.environ.get("CC", "gcc")
        plugin, prog = os.path.join(tmp, "libplugin.so"), os.path.join(tmp, "pack_main")
        subprocess.run([cc, "-O1", "-g", "-fPIC", "-shared", "-o", plugin,
                        os.path.join(root, "tests/e2e/pack/plugin.c")], check=True)
        subprocess.run([cc, "-O1", "-g", "-o", prog,
                        os.path.join(root, "tests/e2e/pack/pack_main.c"), "-ldl"], check=True)
        script = os.path.join(tmp, "work.py")
        with open(script, "w") as f:
            f.write("import json\nprint(sum(len(json.dumps(list(range(i % 50)))) "
                    "for i in range(60000)))\n")
        data = os.path.join(tmp, "data")
        with open(data, "wb") as f:
            f.write(os.urandom(4 << 20))
        programs = [("C, dlopen'ed plugin and a child", [prog, plugin, "0.6"]),
                    ("python3 (Debian)", ["/usr/bin/python3", script]),
                    ("xz (stripped)", ["xz", "-k", "-T1", "-6", "-f", data])]
        print("| program | trace | pack | pack/trace | archive again | --elf archive | "
              "--elf time, memory |")
        print("|---|---|---|---|---|---|---|")
        for i, (name, cmd) in enumerate(programs):
            trace = os.path.join(tmp, f"t{i}.xpu")
            subprocess.run([rec, "--no-gpu", "-o", trace, "--"] + cmd, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            size = os.path.getsize(trace)
            pack = os.path.getsize(trace + ".xpa")
            t, mem = run_measured([rep, "archive", "-o", os.path.join(tmp, "again.xpa"), trace])
            elf = os.path.join(tmp, "elf.xpa")
            te, meme = run_measured([rep, "archive", "--elf", "-o", elf, trace])
            print(f"| {name} | {size / 1024:.1f} KiB | {pack / 1024:.1f} KiB | "
                  f"{pack / size:.2f} | {t:.2f} s, {mem:.0f} MiB | "
                  f"{os.path.getsize(elf) / 1024:.1f} KiB | {te:.2f} s, {meme:.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
