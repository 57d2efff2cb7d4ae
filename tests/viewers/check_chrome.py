#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Structural check of xpu-report's Trace Event JSON (--format=chrome).

  check_chrome.py FILE.json [--expect-gpu] [--expect-samples] [--range START,END]

Checks: strict UTF-8 and JSON (no NaN); every event has what its phase needs (ph, name, pid,
tid; ts >= 0 except metadata; dur >= 0 for X; id for flows, bp "e" on "f"); B/E balance per
thread; every flow start has exactly one finish, not earlier; slices on CPU tracks nest
(ts/dur compared exactly, as decimals); counter points in time order; every track named.
--range: every event lies within [start+START, start+END] s of otherData.start_realtime_ns
(give or take 1 ms of clock mapping). Prints one line; exit 0 pass, 1 fail.
"""
import collections
import decimal
import json
import sys

GPU_PID_BASE = 2000000000
D = decimal.Decimal


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def no_const(name):
    raise ValueError("non-standard JSON constant " + name)


def main():
    args = sys.argv[1:]
    if not args:
        fail("usage: check_chrome.py FILE.json [--expect-gpu] [--expect-samples] [--range S,E]")
    path = args[0]
    expect_gpu = "--expect-gpu" in args
    expect_samples = "--expect-samples" in args
    rng = None
    if "--range" in args:
        a, b = args[args.index("--range") + 1].split(",")
        rng = (D(a), D(b))
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        fail("%s: not UTF-8 at byte %d" % (path, e.start))
    try:
        doc = json.loads(text, parse_float=D, parse_constant=no_const)
    except ValueError as e:
        fail("%s: not JSON: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array at the top level")
    if not isinstance(doc.get("otherData"), dict):
        fail("no otherData object with the session")
    evs = doc["traceEvents"]
    if not evs:
        fail("no events")

    def num(e, k, i):
        v = e.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, D)):
            fail("event %d (ph %s) has no numeric %s: %s" % (i, e.get("ph"), k, json.dumps(e, default=str)[:200]))
        return D(v)

    counts = collections.Counter()
    flows = {}
    names_p, names_t = set(), set()
    used_p, used_t = set(), set()
    tracks = collections.defaultdict(list)
    be = collections.defaultdict(list)
    counters = {}
    lo = hi = None
    if rng:
        s0 = doc["otherData"].get("start_realtime_ns")
        if not isinstance(s0, int):
            fail("--range needs otherData.start_realtime_ns")
        lo = D(s0) / 1000 + rng[0] * 1000000 - 1000
        hi = D(s0) / 1000 + rng[1] * 1000000 + 1000
    for i, e in enumerate(evs):
        if not isinstance(e, dict):
            fail("event %d is not an object" % i)
        ph = e.get("ph")
        if not isinstance(ph, str) or len(ph) != 1:
            fail("event %d has no ph" % i)
        counts[ph] += 1
        if not isinstance(e.get("name"), str):
            fail("event %d (ph %s) has no name" % (i, ph))
        pid, tid = num(e, "pid", i), num(e, "tid", i)
        for v in (pid, tid):
            if v < 0 or v >= 2 ** 32 or v != int(v):
                fail("event %d: pid/tid %s not a 32-bit id" % (i, v))
        if ph == "M":
            if e["name"] in ("process_name", "thread_name"):
                if not isinstance(e.get("args", {}).get("name"), str):
                    fail("event %d: %s without args.name" % (i, e["name"]))
                (names_p if e["name"] == "process_name" else names_t).add((pid, tid) if e["name"] == "thread_name" else pid)
            continue
        ts = num(e, "ts", i)
        if ts < 0:
            fail("event %d: negative ts %s" % (i, ts))
        if lo is not None and ph in "Xi" and not (ts <= hi and ts + D(e.get("dur", 0)) >= lo):
            fail("event %d (%s) at %s outside --range" % (i, e["name"], ts))
        used_p.add(pid)
        if ph == "X":
            dur = num(e, "dur", i)
            if dur < 0:
                fail("event %d: negative dur" % i)
            used_t.add((pid, tid))
            tracks[(pid, tid)].append((ts, ts + dur, e["name"]))
        elif ph in "BE":
            used_t.add((pid, tid))
            be[(pid, tid)].append((ts, ph, i))
        elif ph == "i" or ph == "I":
            used_t.add((pid, tid))
            if e.get("s", "t") not in ("t", "p", "g"):
                fail("event %d: instant scope %r" % (i, e.get("s")))
        elif ph in "sf":
            if "id" not in e:
                fail("event %d: flow %s without id" % (i, ph))
            if ph == "f" and e.get("bp") != "e":
                fail("event %d: flow finish without bp \"e\"" % i)
            key = (e.get("cat"), e["name"], e["id"])
            fl = flows.setdefault(key, {})
            if ph in fl:
                fail("flow id %s has two %s events" % (e["id"], ph))
            fl[ph] = ts
        elif ph == "C":
            a = e.get("args")
            if not isinstance(a, dict) or not a or not all(isinstance(v, (int, D)) and not isinstance(v, bool) for v in a.values()):
                fail("event %d: counter without numeric args" % i)
            k = (pid, e["name"])
            if k in counters and counters[k] >= ts:
                fail("counter %s of pid %s goes back in time at event %d" % (e["name"], pid, i))
            counters[k] = ts
        else:
            fail("event %d: unexpected phase %r" % (i, ph))
    for key, fl in flows.items():
        if "s" not in fl or "f" not in fl:
            fail("flow id %s has %s but not %s" % (key[2], "".join(fl), "f" if "s" in fl else "s"))
        if fl["f"] < fl["s"]:
            fail("flow id %s ends (%s) before it starts (%s)" % (key[2], fl["f"], fl["s"]))
    for key, lst in be.items():
        depth = 0
        for ts, ph, i in sorted(lst, key=lambda x: (x[0], x[1] == "B")):
            depth += 1 if ph == "B" else -1
            if depth < 0:
                fail("E without B on pid %s tid %s (event %d)" % (key[0], key[1], i))
        if depth:
            fail("%d B events without E on pid %s tid %s" % (depth, key[0], key[1]))
    # Viewers parse times as doubles: a time a double cannot hold is rounded on its own, and
    # slices that nest in the file stop nesting in the viewer (speedscope then fails)
    for i, e in enumerate(evs):
        for f in ("ts", "dur"):
            v = e.get(f)
            if isinstance(v, D) and D(float(v)) != v:
                fail("event %d: %s %s is not exact in a double" % (i, f, v))
        if isinstance(e.get("ts"), D) and isinstance(e.get("dur"), D):
            end = e["ts"] + e["dur"]
            if D(float(e["ts"]) + float(e["dur"])) != end:
                fail("event %d: ts + dur = %s is not exact in a double" % (i, end))
    # CPU tracks must nest: a slice that starts inside another ends inside it
    for (pid, tid), sl in tracks.items():
        if pid >= GPU_PID_BASE:
            continue
        sl.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e, n in sl:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                fail("slices overlap without nesting on pid %s tid %s: %s [%s, %s] and %s [%s, %s]" %
                     (pid, tid, stack[-1][2], stack[-1][0], stack[-1][1], n, s, e))
            stack.append((s, e, n))
    for pid in used_p:
        if pid not in names_p:
            fail("pid %s has events but no process_name" % pid)
    for t in used_t:
        if t not in names_t:
            fail("track pid %s tid %s has events but no thread_name" % t)
    cats = collections.Counter(e.get("cat") for e in evs)
    if expect_gpu:
        for what, ok in (("kernel slices", cats["kernel"]), ("memcpy slices", cats["memcpy"]),
                         ("CUDA API slices", cats["cuda_api"]), ("nvtx events", cats["nvtx"]),
                         ("flows", len(flows)), ("counters", counts["C"])):
            if not ok:
                fail("no " + what)
    if expect_samples and not cats["cpu"]:
        fail("no CPU sample slices")
    n = len(evs)
    print("ok: %d events (%s), %d flows, %d bytes, %.0f bytes/event" %
          (n, " ".join("%s=%d" % kv for kv in sorted(counts.items())), len(flows), len(raw), len(raw) / n))


main()
