# SPDX-License-Identifier: MIT
"""Known per-function CPU shares for tests/e2e/test_python_frames.sh.

driver() calls step() in rounds; step() runs work_a, work_b and work_c for 5, 3 and 2 slices of
pure-Python arithmetic, a slice's length changing pseudo-randomly from round to round (1,000 to
3,000 iterations): rounds of one fixed length beat against the sampling period (a round near
a millisecond at 999 Hz), so that the samples kept to a few phases of the round and a share
came out 5 points off, beside two busy loops. Each function's own CPU time is measured with process_time and
printed as JSON at the end, so the test compares the profile with what the program measured,
not with the 50/30/20 it aims at. Usage: shares.py SECONDS [READY_FILE]; SIGTERM ends it early.
"""
import json
import signal
import sys
import time

SLICE = 2000


def spin(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def work_a(t, u):
    t0 = time.process_time()
    spin(5 * u)
    t["work_a"] += time.process_time() - t0


def work_b(t, u):
    t0 = time.process_time()
    spin(3 * u)
    t["work_b"] += time.process_time() - t0


def work_c(t, u):
    t0 = time.process_time()
    spin(2 * u)
    t["work_c"] += time.process_time() - t0


def step(t, u):
    work_a(t, u)
    work_b(t, u)
    work_c(t, u)


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def driver(seconds):
    t = {"work_a": 0.0, "work_b": 0.0, "work_c": 0.0}
    end = time.process_time() + seconds
    seed = 12345
    try:
        while time.process_time() < end:
            seed = (seed * 1103515245 + 12345) % 2147483648   # any sequence will do
            step(t, SLICE // 2 + seed % SLICE)
    except Stop:
        # SIGTERM ends the run early with the shares measured so far (the attach test's
        # program runs until its recording is over, however long the recorder took to start)
        pass
    return t


if __name__ == "__main__":
    # SIGTERM, not SIGINT: a job started in the background by a script ignores SIGINT
    signal.signal(signal.SIGTERM, stop)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("ready\n")
    print(json.dumps(driver(float(sys.argv[1]))))
