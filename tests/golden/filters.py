#!/usr/bin/env python3
"""One filter, every format: for each filter, the CPU samples and GPU records that text,
folded, chrome, svg and info show must be the same set (tests/golden/test_filters.sh).

Counted per format: CPU samples from folded --view=cpu (weights), svg --view=cpu (the root's
title), text (the per-process table), chrome (the samples of each thread's outermost frames)
and info (its filter section); GPU records from text (launch matching), chrome (kernel, memcpy
and memset events) and info, and GPU time from folded and svg --view=gpu --weight=time
against chrome's durations."""
import json
import re
import subprocess
import sys

REPORT, TRACE = sys.argv[1], sys.argv[2]
FILTERS = [
    [],
    ["--pid=442"],
    ["--pid=1"],
    ["--tid=444"],
    ["--comm=cuda-EvtHandlr"],
    ["--comm=nothing,cuda_pipeline"],
    ["--time-range=0.1,0.3"],
    ["--time-range=0.269,0.2705"],
    ["--tid=442", "--time-range=0.2,0.27"],
]


def run(*args):
    p = subprocess.run([REPORT, "--no-host-files", *args, TRACE], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit(f"FAIL: xpu-report {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def folded_total(out):
    return sum(float(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l.strip())


def svg_total(out):
    m = re.search(r"<title>all \(([\d,.]+) (samples?|us|µs)", out)
    return float(m.group(1).replace(",", "")) if m else 0.0


def chrome_counts(out):
    ev = json.loads(out)["traceEvents"]
    gpu = [e for e in ev if e.get("cat") in ("kernel", "memcpy", "memset")]
    cpu = {}
    for e in ev:
        if e.get("cat") == "cpu" and e.get("ph") == "X":
            cpu.setdefault((e["pid"], e["tid"]), []).append(e)
    samples = 0
    for evs in cpu.values():	# outermost frames: not inside the previous outermost one
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = None
        for e in evs:
            if end is None or e["ts"] >= end - 1e-3:
                samples += e["args"]["samples"]
                end = e["ts"] + e["dur"]
    return samples, len(gpu), sum(e["dur"] for e in gpu)


def text_counts(out):
    cpu = 0
    sect = None
    gpu = 0
    for l in out.splitlines():
        if l.startswith("#"):
            sect = l
            continue
        f = l.split()
        if sect and sect.startswith("# cpu samples by process") and len(f) >= 3 and f[1].isdigit():
            cpu += int(f[1])
        if sect and sect.startswith("# gpu launch matching") and len(f) == 4 and f[1].isdigit():
            gpu += int(f[1])
    return cpu, gpu


def info_counts(out, total_cpu, total_gpu):
    m = re.search(r"cpu samples +(\d+) of", out)
    g = re.search(r"gpu records +(\d+) of", out)
    return (int(m.group(1)) if m else total_cpu), (int(g.group(1)) if g else total_gpu)


fails = 0
base = None
for flt in FILTERS:
    cpu = {
        "folded": round(folded_total(run("-F", "folded", "--view=cpu", *flt))),
        "svg": round(svg_total(run("-F", "svg", "--view=cpu", *flt))),
    }
    t_cpu, t_gpu = text_counts(run(*flt))
    c_cpu, c_gpu, c_us = chrome_counts(run("-F", "chrome", *flt))
    cpu["text"], cpu["chrome"] = t_cpu, c_cpu
    gpu = {"text": t_gpu, "chrome": c_gpu}
    if base is None:
        base = (cpu["folded"], c_gpu)
    i_cpu, i_gpu = info_counts(run("-F", "info", *flt), *base)
    cpu["info"], gpu["info"] = i_cpu, i_gpu
    f_us = folded_total(run("-F", "folded", "--view=gpu", "--weight=time", *flt))
    s_us = svg_total(run("-F", "svg", "--view=gpu", "--weight=time", *flt))
    # folded rounds each line to a microsecond: allow that much per record
    us_ok = abs(f_us - c_us) <= c_gpu + 1 and abs(s_us - f_us) <= 1 + c_gpu
    ok = len(set(cpu.values())) == 1 and len(set(gpu.values())) == 1 and us_ok
    print(f"{'ok  ' if ok else 'FAIL'} {' '.join(flt) or '(none)':40} cpu {cpu} gpu {gpu} "
          f"gpu_us folded {f_us:.0f} svg {s_us:.0f} chrome {c_us:.0f}")
    fails += not ok
    if flt and flt not in (["--pid=442"], ["--comm=nothing,cuda_pipeline"],
                           ["--time-range=0.1,0.3"]) and cpu["folded"] + gpu["text"] >= sum(base):
        print(f"FAIL {' '.join(flt)}: filters nothing out, so it tests nothing")
        fails += 1
sys.exit(1 if fails else 0)
