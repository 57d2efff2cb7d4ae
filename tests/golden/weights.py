#!/usr/bin/env python3
"""Folded weights keep every GPU record and the totals (tests/golden/run.sh).

Usage: weights.py XPU-REPORT PIPELINE.xpu SYNTHETIC.xpu

- pipeline.xpu (H100): the default merged view has a [gpu] line for every GPU stack of the
  GPU view, and its GPU lines add up to the GPU time of the text report's tables (to 1 us).
- synthetic.xpu: a 1 us memset (1e-4 of a sample at 99 Hz) survives in every view and weight;
  in time weight the GPU lines add up to the exact 83101 us and the CPU lines to the samples
  times the period, each to within 1; text, info and svg say the unit."""
import re
import subprocess
import sys

REPORT, PIPELINE, SYNTH = sys.argv[1:4]
fails = 0


def run(trace, *args):
    p = subprocess.run([REPORT, "--no-host-files", *args, trace], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"FAIL weights: xpu-report {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def lines(out):
    return [l.rsplit(" ", 1) for l in out.splitlines() if l.strip()]


def check(ok, what):
    global fails
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    fails += not ok


def gpu_lines(out):
    return [(s, int(w)) for s, w in lines(out) if ";[gpu] " in s]


# pipeline: nothing of the GPU dropped from the default view
merged = gpu_lines(run(PIPELINE, "-F", "folded"))
gpu_view = gpu_lines(run(PIPELINE, "-F", "folded", "--view=gpu"))
check(len(merged) > 0 and sorted(s for s, _ in merged) == sorted(s for s, _ in gpu_view),
      f"pipeline: merged view has all {len(gpu_view)} GPU stacks (has {len(merged)})")
text = run(PIPELINE)
exact = 0.0
sect = ""
for l in text.splitlines():
    if l.startswith("#"):
        sect = l
        continue
    f = l.split()
    if sect.startswith("# top gpu kernels") and len(f) > 3 and f[1].isdigit():
        exact += float(f[2])
    if sect.startswith("# gpu copies by direction") and len(f) == 5 and f[1].isdigit():
        exact += float(f[3])
got = sum(w for _, w in merged)
check(abs(got - exact) <= 1, f"pipeline: GPU total {got} us, text tables {exact:.1f} us")
check("# weight:    microseconds" in text, "pipeline: text header says microseconds")

# synthetic: a tiny GPU record survives, totals kept
for args in (["--weight=samples"], ["--view=gpu", "--weight=samples"], [], ["--weight=time"]):
    ms = [w for s, w in gpu_lines(run(SYNTH, "-F", "folded", *args)) if s.endswith("[gpu] memset")]
    check(ms and ms[0] >= 1, f"synthetic {' '.join(args) or '(default)'}: 1 us memset kept ({ms})")
out = run(SYNTH, "-F", "folded", "--weight=time")
g = sum(w for _, w in gpu_lines(out))
check(abs(g - 83101) <= 1, f"synthetic: GPU lines add up to {g} us of 83101")
text = run(SYNTH, "--weight=time")
m = re.search(r"# samples: +(\d+) at (\d+) Hz", text)
n, hz = int(m.group(1)), int(m.group(2))
cpu = sum(int(w) for s, w in lines(out) if ";[gpu] " not in s)
check(abs(cpu - n * 1e6 / hz) <= 1, f"synthetic: CPU lines add up to {cpu} us of {n * 1e6 / hz:.1f}")
check(re.search(r"# weight: +microseconds \(a CPU sample counts its period", text) is not None,
      "synthetic: text header says the unit")
check("text/folded/svg  microseconds" in run(SYNTH, "-F", "info"), "synthetic: info says the unit")
check("weight: microseconds" in run(SYNTH, "-F", "svg"), "synthetic: svg title says the unit")
check("text/folded/svg  samples" in run(SYNTH, "-F", "info", "--view=cpu"),
      "synthetic: the cpu view is weighed in samples")
sys.exit(1 if fails else 0)
