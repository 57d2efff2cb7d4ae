#!/usr/bin/env python3
"""Where -g cfi walks fall short, against the DWARF unwinding of the same events: reads the
jsonl of one -g cfi,check trace twice (xpu-report --no-unwind -F jsonl: the BPF walk;
xpu-report -F jsonl: the copies unwound offline) and prints, for samples and launches whose
BPF walk did not reach an outermost frame, the frame it stopped at, the caller DWARF found
there, the threads and the seconds since the first event they fall in.

  tests/gpu/cfi_diag.py BPF.jsonl DWARF.jsonl"""
import collections
import json
import re
import sys

OUTERMOST = ("_start", "__libc_start_main", "start_thread", "clone", "clone3", "main")


def load(path):
    ev = {}
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") in ("sample", "launch"):
            ev[(e["type"], e["tid"], e["ts"])] = e
    return ev


PY_FRAME = re.compile(r" \((<frozen [^>]*>|<string>|[^()]*\.py)(:\d+)?\)$")


def native(frames):
    """The native frames: Python ones are spliced in by the report, at the root too."""
    return [f for f in frames if not PY_FRAME.search(f)]


def complete(frames):
    return bool(frames) and frames[0].split("@")[0] in OUTERMOST


def main():
    bpf, dwarf = load(sys.argv[1]), load(sys.argv[2])
    t0 = min(k[2] for k in bpf) if bpf else 0
    stops, callers, secs, tids = (collections.Counter() for _ in range(4))
    n = {"sample": [0, 0, 0], "launch": [0, 0, 0]}
    for k, e in bpf.items():
        fr = native(e.get("frames") or [])
        n[k[0]][0] += 1
        if complete(fr):
            continue
        n[k[0]][1] += 1
        d = native((dwarf.get(k) or {}).get("frames") or [])
        if complete(d):
            n[k[0]][2] += 1
        stop = fr[0] if fr else "[none]"
        stops[(k[0], stop)] += 1
        # the DWARF stack holds the BPF one as its leaf end: the frame outside it is the caller
        # the walk missed
        miss = d[-len(fr) - 1] if fr and len(d) > len(fr) and d[-len(fr):] == fr else "?"
        callers[(stop, miss)] += 1
        secs[int((k[2] - t0) / 1e9)] += 1
        tids["main" if e["tid"] == e["pid"] else "other"] += 1
    for t, (a, b, c) in n.items():
        print(f"{t}: {a} events, {b} BPF walks incomplete, {c} of them complete by DWARF")
    print("incomplete by thread:", dict(tids))
    print("incomplete by second since the first event:", sorted(secs.items()))
    print("stopped at (top 25):")
    for (t, s), c in stops.most_common(25):
        print(f"  {c:6d} {t:6s} {s[:150]}")
    print("stopped at -> caller DWARF found (top 25):")
    for (s, m), c in callers.most_common(25):
        print(f"  {c:6d} {s[:90]} -> {m[:90]}")


if __name__ == "__main__":
    main()
