#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xpu-report speed and peak memory, against perf report / perf script on equivalent data.

1. Records samples/cpu_burn (three threads, two processes, stacks up to ~45 frames deep; it
   keeps both CPUs busy) once with `xpu-record --no-gpu -F HZ` and once with
   `perf record -g -F HZ -e cpu-clock`, each long enough for about SAMPLES samples, and counts
   the samples of each file exactly (`xpu-report --format=info`, `perf script` lines).
2. Times, REPS times in an interleaved order (each command once per repetition, after one
   warm-up run of each): xpu-report (text) and --format=folded on the .xpu file; perf report
   --stdio --no-children -g none, perf report --stdio --no-children (default callchain graph),
   perf report --stdio (perf's default: children and callchains) and perf script on the
   perf.data. Output goes to /dev/null. Each run is a fresh child: wall time from fork to exit,
   peak RSS from wait4()'s rusage.
3. Writes a trace of GEN_SAMPLES samples (default 10M) with bench/gen_trace (4000 stacks of
   depth 10..40 over the functions of xpu-report, libc, libdw and libzstd) and times
   xpu-report alone on it: perf has no perf.data generator to match it.

Rates are samples / wall second. A ratio is xpu-report's time per sample / perf's time per
sample for the same repetition (below 1: xpu-report faster), median [min..max] over the
repetitions. Prints a table and writes the "report-speed" section of BENCHMARKS.md. Needs
root (BPF, perf record).

With --baseline OLD (another build's xpu-report), OLD runs the same xpu-report commands in the
same repetitions, and a table gives this build's time and peak RSS over OLD's (below 1: this
build is faster or smaller): a change's cost, measured in one run on one machine.

  bench/report_speed.py [--samples N] [--freq HZ] [--reps R] [--gen-samples M]
                        [--baseline OLD] [--no-write]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

TARGET_MIN_RATE = 2e6	# events/s on one thread, from the brief


def count_xpu_samples(path):
    r = benchlib.run([os.path.join(benchlib.BUILD, "xpu-report"), "--format=info", path])
    m = re.search(r"^\s*cpu_sample\s+(\d+)", r.stdout, re.M)
    return int(m.group(1)) if m else 0


def count_perf_samples(path):
    n = 0
    with subprocess.Popen(["perf", "script", "-i", path, "-F", "time"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as p:
        for line in p.stdout:
            if line.strip():
                n += 1
    return n


def measure(cmd):
    """Wall seconds and peak RSS (KiB) of one fresh run of cmd, output to /dev/null."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=null, stderr=null)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode}")
    return wall, ru.ru_maxrss


def record(tmp, samples, freq, ncpu):
    """Records cpu_burn under each recorder for about `samples` samples: a second, longer
    recording when the first holds under 85% of them (a busy machine gives the target less
    CPU time, hence fewer cpu-clock samples)."""
    burn = os.path.join(benchlib.BUILD, "samples", "cpu_burn")
    xpu = os.path.join(tmp, "burn.xpu")
    perf = os.path.join(tmp, "burn.perf.data")
    recorders = {
        "xpu": (lambda sec: [os.path.join(benchlib.BUILD, "xpu-record"), "--no-gpu", "-F",
                             str(freq), "-o", xpu, "--", burn, str(sec)], count_xpu_samples, xpu),
        "perf": (lambda sec: ["perf", "record", "-q", "-g", "-F", str(freq), "-e", "cpu-clock",
                              "-o", perf, "--", burn, str(sec)], count_perf_samples, perf),
    }
    # cpu_burn keeps every CPU busy (3 threads on 2 CPUs); cpu-clock fires per busy CPU
    first = max(1, round(samples / (freq * min(ncpu, 3)) * 1.05))
    out = {}
    for name, (argv, count, path) in recorders.items():
        sec = first
        for attempt in range(2):
            t0 = time.time()
            r = benchlib.run(argv(sec))
            if r.returncode:
                sys.exit(f"{name} record failed:\n" + r.stderr)
            n = count(path)
            print(f"{name}: cpu_burn {sec} s, {n} samples, {time.time() - t0:.0f} s",
                  file=sys.stderr)
            if n >= 0.85 * samples or attempt:
                break
            sec = max(sec + 1, round(sec * samples / max(n, 1) * 1.05))
        out[name] = (path, n, sec)
    return out


def time_commands(cmds, reps):
    """cmds: {name: argv}. One warm-up run each, then reps interleaved rounds."""
    for argv in cmds.values():
        measure(argv)
    res = {name: [] for name in cmds}
    for rep in range(reps):
        for name, argv in cmds.items():
            res[name].append(measure(argv))
        print(f"  rep {rep + 1}/{reps}: " +
              ", ".join(f"{n} {res[n][-1][0]:.2f}s" for n in cmds), file=sys.stderr)
    return res


def fmt_rate(walls, n):
    rates = sorted(n / w for w in walls)
    med, lo, hi = benchlib.median_spread(rates)
    return f"{med / 1e6:.2f}M [{lo / 1e6:.2f}..{hi / 1e6:.2f}]"


def fmt_time(walls):
    med, lo, hi = benchlib.median_spread(walls)
    return f"{med:.3f} (best {lo:.3f})"


def fmt_x(values):
    med, lo, hi = benchlib.median_spread(values)
    return f"{med:.2f} [{lo:.2f}..{hi:.2f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000,
                    help="about this many samples in each recorded file")
    ap.add_argument("--freq", type=int, default=40000, help="sampling Hz for both recorders")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gen-samples", type=int, default=10_000_000,
                    help="samples in the generated trace (0: skip it)")
    ap.add_argument("--baseline", help="another xpu-report, timed beside this build's")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.baseline and not os.access(args.baseline, os.X_OK):
        sys.exit(f"report_speed: {args.baseline}: not an executable")
    if os.geteuid() != 0:
        sys.exit("report_speed: needs root for BPF and perf record")
    if not shutil.which("perf"):
        sys.exit("report_speed: needs perf (linux-perf)")
    report = os.path.join(benchlib.BUILD, "xpu-report")
    gen = os.path.join(benchlib.BUILD, "bench", "gen_trace")
    tmp = tempfile.mkdtemp(prefix="xpu-report-speed-")
    try:
        load = os.getloadavg()[0]
        rec = record(tmp, args.samples, args.freq, os.cpu_count() or 1)
        (xpu, n_xpu, sec_xpu), (perf, n_perf, sec_perf) = rec["xpu"], rec["perf"]
        sizes = (os.path.getsize(xpu), os.path.getsize(perf))
        print(f"samples: xpu {n_xpu}, perf {n_perf}", file=sys.stderr)
        cmds = {
            "xpu-text": [report, xpu],
            "xpu-folded": [report, "--format=folded", xpu],
            "perf-report-none": ["perf", "report", "-i", perf, "--stdio", "--no-children",
                                 "-g", "none"],
            "perf-report-graph": ["perf", "report", "-i", perf, "--stdio", "--no-children"],
            "perf-report-default": ["perf", "report", "-i", perf, "--stdio"],
            "perf-script": ["perf", "script", "-i", perf],
        }
        if args.baseline:
            cmds["base-text"] = [args.baseline, xpu]
            cmds["base-folded"] = [args.baseline, "--format=folded", xpu]
        res = time_commands(cmds, args.reps)
        gen_res = None
        if args.gen_samples:
            big = os.path.join(tmp, "gen.xpu")
            libs = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libdw.so.1",
                    "/lib/x86_64-linux-gnu/libzstd.so.1"]
            r = benchlib.run([gen, big, str(args.gen_samples), "4000", report] +
                             [lib for lib in libs if os.path.exists(lib)])
            if r.returncode:
                sys.exit("gen_trace failed:\n" + r.stderr)
            n_gen = count_xpu_samples(big)
            gen_size = os.path.getsize(big)
            gen_cmds = {"xpu-text": [report, big],
                        "xpu-folded": [report, "--format=folded", big]}
            if args.baseline:
                gen_cmds["base-text"] = [args.baseline, big]
                gen_cmds["base-folded"] = [args.baseline, "--format=folded", big]
            gen_res = time_commands(gen_cmds, args.reps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def per_sample(name, n):
        return [w / n for w, _ in res[name]]

    def ratio(xname, pname):
        xs, ps = per_sample(xname, n_xpu), per_sample(pname, n_perf)
        return fmt_x([x / p for x, p in zip(xs, ps)])

    def row(tool, name, n, results, file_kind):
        walls = [w for w, _ in results[name]]
        rss = max(m for _, m in results[name])
        return (f"| {tool} | {file_kind} | {n} | {fmt_time(walls)} | {fmt_rate(walls, n)} | "
                f"{rss / 1024:.0f} |")

    lines = [
        "## Report speed and memory (`bench/report_speed.py`)",
        "",
        f"Machine: {benchlib.machine_line()}; load average {load:.1f} at the start. Recorded: "
        "`samples/cpu_burn SECONDS` (3 threads, 2 processes, both CPUs busy) under "
        f"`xpu-record --no-gpu -F {args.freq}` ({sec_xpu} s, {sizes[0]} bytes) and under "
        f"`perf record -g -F {args.freq} -e cpu-clock` ({sec_perf} s, {sizes[1]} bytes), "
        "each long enough for about the same sample count; samples counted exactly in each "
        "file (`--format=info`, `perf script` lines). Each command "
        f"ran {args.reps} times, interleaved, after one warm-up run, output to /dev/null, as a "
        "fresh process: wall time fork to exit, median (best) in seconds; rate = samples / "
        "wall second, median [min..max]; peak RSS (`wait4` rusage), largest of the runs.",
        "",
        "| command | file | samples | wall s | samples/s | peak RSS MiB |",
        "|---|---|---|---|---|---|",
        row("`xpu-report` (text)", "xpu-text", n_xpu, res, ".xpu"),
        row("`xpu-report --format=folded`", "xpu-folded", n_xpu, res, ".xpu"),
        row("`perf report --stdio --no-children -g none`", "perf-report-none", n_perf, res,
            "perf.data"),
        row("`perf report --stdio --no-children` (callchain graph)", "perf-report-graph",
            n_perf, res, "perf.data"),
        row("`perf report --stdio` (perf's default: children, callchains)",
            "perf-report-default", n_perf, res, "perf.data"),
        row("`perf script`", "perf-script", n_perf, res, "perf.data"),
    ]
    if gen_res:
        lines += [
            row("`xpu-report` (text)", "xpu-text", n_gen, gen_res,
                f"generated .xpu ({gen_size} bytes)"),
            row("`xpu-report --format=folded`", "xpu-folded", n_gen, gen_res,
                "generated .xpu"),
        ]
    lines += [
        "",
        "Time per sample, xpu-report / perf, same repetition (below 1: xpu-report is faster), "
        "median [min..max]:",
        "",
        "| pair | ratio |",
        "|---|---|",
        f"| text / `perf report --no-children -g none` | {ratio('xpu-text', 'perf-report-none')} |",
        f"| text / `perf report --no-children` | {ratio('xpu-text', 'perf-report-graph')} |",
        f"| text / `perf report` (default) | {ratio('xpu-text', 'perf-report-default')} |",
        f"| folded / `perf script` | {ratio('xpu-folded', 'perf-script')} |",
        "",
    ]
    if gen_res:
        lines.append(
            f"The generated trace (`bench/gen_trace`, {n_gen} samples over 4000 stacks of depth "
            "10..40 in the functions of xpu-report, libc, libdw and libzstd, symbolized from "
            "those files) measures xpu-report alone at that scale: there is no perf.data "
            "generator to give perf the same input. xpu-report holds every sample of the file "
            "in memory: peak RSS grows by about "
            f"{(max(m for _, m in gen_res['xpu-text']) - max(m for _, m in res['xpu-text'])) * 1024 / max(n_gen - n_xpu, 1):.0f}"
            " bytes per sample between the recorded and the generated trace.")
    best = {}
    for label, n, rr in (("recorded", n_xpu, res), ("generated", n_gen if gen_res else 0,
                                                      gen_res)):
        if not rr:
            continue
        for name in ("xpu-text", "xpu-folded"):
            best[(label, name)] = n / benchlib.median_spread([w for w, _ in rr[name]])[0]
    slow = [f"{name} on the {label} trace ({v / 1e6:.2f}M/s)"
            for (label, name), v in best.items() if v < TARGET_MIN_RATE]
    lines.append(
        f"Target: at least {TARGET_MIN_RATE / 1e6:.0f}M samples/s on one thread (median): " +
        ("met by every xpu-report row." if not slow else "missed by " + ", ".join(slow) + "."))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.baseline:
        print(baseline_table(args.baseline, res, gen_res))
    if not args.no_write:
        benchlib.write_section("report-speed", text)


def baseline_table(baseline, res, gen_res):
    """This build over the baseline, per repetition: wall time median [min..max], and the
    largest peak RSS of each."""
    out = [f"This build / {baseline}, same repetitions (below 1: this build faster, smaller):",
           "", "| command | trace | wall ratio | peak RSS MiB (baseline -> this) |",
           "|---|---|---|---|"]
    for label, rr in (("recorded", res), ("generated", gen_res)):
        if not rr:
            continue
        for name, cmd in (("text", "`xpu-report`"), ("folded", "`xpu-report -F folded`")):
            new, old = rr["xpu-" + name], rr["base-" + name]
            walls = fmt_x([n[0] / o[0] for n, o in zip(new, old)])
            rss = (max(m for _, m in old) / 1024, max(m for _, m in new) / 1024)
            out.append(f"| {cmd} | {label} | {walls} | {rss[0]:.0f} -> {rss[1]:.0f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
