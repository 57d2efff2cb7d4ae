# SPDX-License-Identifier: MIT
"""Known per-function CPU shares for tests/e2e/test_python_frames.sh.

driver() calls step() in rounds; step() runs work_a, work_b and work_c for 5, 3 and 2 slices of
pure-Python arithmetic. Each function's own CPU time is measured with process_time and
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


def work_a(t):
    t0 = time.process_time()
    spin(5 * SLICE)
    t["work_a"] += time.process_time() - t0


def work_b(t):
    t0 = time.process_time()
    spin(3 * SLICE)
    t["work_b"] += time.process_time() - t0


def work_c(t):
    t0 = time.process_time()
    spin(2 * SLICE)
    t["work_c"] += time.process_time() - t0


def step(t):
    work_a(t)
    work_b(t)
    work_c(t)


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def driver(seconds):
    t = {"work_a": 0.0, "work_b": 0.0, "work_c": 0.0}
    end = time.process_time() + seconds
    try:
        while time.process_time() < end:
            step(t)
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
