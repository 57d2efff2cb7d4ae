#!/usr/bin/env python3
"""--format=jsonl of committed traces, checked line by line (tests/golden/test_jsonl.sh).

  jsonl_check.py XPU_REPORT TRACE [KERNELS]

Every line must be one JSON object with the fields format-spec/JSONL.md requires of its type,
with the types it gives them; lines must be in time order, so each thread's samples, launches
and API calls are too; the count of each type must equal what --format=info counts of the
record behind it; KERNELS, when given, is the expected kernel count. A --pid filter must keep
only that process's lines, and a --time-range only lines that overlap it."""
import json
import re
import subprocess
import sys

REPORT, TRACE = sys.argv[1], sys.argv[2]
KERNELS = int(sys.argv[3]) if len(sys.argv) > 3 else None

COMMON = {"type": str, "ts": int, "pid": int, "tid": int}
STR_OR_NULL = (str, type(None))
FIELDS = {
    "sample": {"cpu": int, "frames": list},
    "launch": {"correlation_id": int, "cbid": int, "domain": str, "frames": list},
    "api": {"dur": int, "name": STR_OR_NULL, "domain": str, "cbid": int, "correlation_id": int,
            "return_code": int},
    "kernel": {"dur": int, "name": STR_OR_NULL, "device": int, "context": int, "stream": int,
               "correlation_id": int, "grid": list, "block": list,
               "registers_per_thread": int, "static_smem_bytes": int,
               "dynamic_smem_bytes": int, "graph_id": int},
    "memcpy": {"dur": int, "device": int, "context": int, "stream": int, "correlation_id": int,
               "kind": str, "bytes": int, "src_device": int, "dst_device": int,
               "src_kind": str, "dst_kind": str},
    "memset": {"dur": int, "device": int, "context": int, "stream": int, "correlation_id": int,
               "bytes": int, "value": int, "mem_kind": str},
    "sync": {"dur": int, "kind": str, "context": int, "correlation_id": int},
    "nvtx": {"dur": int, "name": STR_OR_NULL, "domain": STR_OR_NULL, "kind": str},
    "ioctl": {"dur": int, "request": int, "request_name": STR_OR_NULL, "file": STR_OR_NULL,
              "fd": int, "ret": int},
    "memory": {"op": str, "address": int, "bytes": int, "device": int, "context": int,
               "correlation_id": int, "mem_kind": str, "async": bool},
}
# the info record name behind each line type
INFO = {"sample": "cpu_sample", "launch": "gpu_launch", "api": "gpu_api", "kernel": "gpu_kernel",
        "memcpy": "gpu_memcpy", "memset": "gpu_memset", "sync": "gpu_sync", "nvtx": "nvtx",
        "ioctl": "driver_ioctl", "memory": "gpu_memory"}


def run(*args):
    p = subprocess.run([REPORT, "--no-host-files", *args, TRACE], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit(f"FAIL: xpu-report {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def parse(out):
    lines = []
    for n, l in enumerate(out.splitlines(), 1):
        try:
            o = json.loads(l)
        except ValueError as e:
            sys.exit(f"FAIL: line {n} is not JSON ({e}): {l[:200]}")
        if not isinstance(o, dict):
            sys.exit(f"FAIL: line {n} is not an object: {l[:200]}")
        lines.append((n, o))
    return lines


def check_line(n, o, errs):
    t = o.get("type")
    if t not in FIELDS:
        errs.append(f"line {n}: unknown type {t!r}")
        return
    for k, ty in {**COMMON, **FIELDS[t]}.items():
        # bool is an int in Python: an int field must not be a bool
        if k not in o or not isinstance(o[k], ty) or (ty is int and isinstance(o[k], bool)):
            errs.append(f"line {n} ({t}): field {k!r} missing or not {ty}: {o.get(k)!r}")
    if t in ("sample", "launch") and not all(isinstance(f, str) for f in o.get("frames", [])):
        errs.append(f"line {n} ({t}): a frame is not a string")
    # a launch with a stack names its site and op (report/model/user_code.h), both or neither
    if t == "launch" and ("site" in o or "op" in o) and not (
            isinstance(o.get("site"), str) and isinstance(o.get("op"), str)
            and isinstance(o.get("site_own"), bool)):
        errs.append(f"line {n} (launch): site, op and site_own not all there: {o.get('site')!r}")
    if o.get("dur", 0) < 0 or o["ts"] < 10**18:
        errs.append(f"line {n} ({t}): ts {o['ts']} is not realtime ns, or dur < 0")


def main():
    errs = []
    lines = parse(run("-F", "jsonl"))
    counts = {}
    last = None
    last_thread = {}
    for n, o in lines:
        check_line(n, o, errs)
        if errs:
            break
        counts[o["type"]] = counts.get(o["type"], 0) + 1
        if last is not None and o["ts"] < last:
            errs.append(f"line {n}: ts {o['ts']} before the previous line's {last}")
        last = o["ts"]
        if o["type"] in ("sample", "launch", "api"):
            key = (o["type"], o["pid"], o["tid"])
            if o["ts"] < last_thread.get(key, 0):
                errs.append(f"line {n}: {key} goes back in time")
            last_thread[key] = o["ts"]
    info = run("-F", "info")
    for t, rec in INFO.items():
        m = re.search(r"^  %s +(\d+)$" % rec, info, re.M)
        want = int(m.group(1)) if m else 0
        if counts.get(t, 0) != want:
            errs.append(f"{t}: {counts.get(t, 0)} lines, info counts {want} {rec} records")
    if KERNELS is not None and counts.get("kernel", 0) != KERNELS:
        errs.append(f"kernel: {counts.get('kernel', 0)} lines, want {KERNELS}")
    # filters: one process, and a time window
    pid = lines[0][1]["pid"] if lines else 0
    sub = parse(run("-F", "jsonl", f"--pid={pid}"))
    if not sub or any(o["pid"] != pid for _, o in sub):
        errs.append(f"--pid={pid}: lines of other processes, or none")
    sub = parse(run("-F", "jsonl", "--time-range=0.1,0.2"))
    if not 0 < len(sub) < len(lines):
        errs.append(f"--time-range=0.1,0.2: {len(sub)} of {len(lines)} lines kept")
    for e in errs[:20]:
        print("FAIL", e)
    print(f"{'FAIL' if errs else 'ok  '} {TRACE.rsplit('/', 1)[-1]}: {len(lines)} lines, {counts}")
    sys.exit(1 if errs else 0)


main()
