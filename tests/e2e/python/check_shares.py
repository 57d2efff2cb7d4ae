# SPDX-License-Identifier: MIT
"""Checks a folded CPU profile of shares.py against the shares the program measured.

  check_shares.py FOLDED MEASURED_JSON LABEL

Each work_* function's share of the three (profile: samples whose deepest work_* frame is it)
must be within 5 points of the program's own, or within 4 standard errors of a share of that
many samples where fewer samples make that wider (a loaded machine gives an attach window fewer
of them); every such stack must read
<module> (shares.py);...;driver;step;work_X root first, with no _PyEval_EvalFrameDefault left
between or after them (the evaluator frames that ran them were replaced). Prints one line per
finding; exit 1 on a failure.
"""
import json
import math
import sys

FUNCS = ("work_a", "work_b", "work_c")


def main():
    folded, measured_path, label = sys.argv[1:4]
    measured = json.load(open(measured_path))
    total_m = sum(measured[f] for f in FUNCS)
    weights = dict.fromkeys(FUNCS, 0)
    bad_order = bad_eval = 0
    example = ""
    for line in open(folded):
        stack, _, w = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        hits = [i for i, fr in enumerate(frames) for f in FUNCS if fr == f"{f} (shares.py)"]
        if not hits:
            continue
        leaf = hits[-1]
        func = frames[leaf].split(" ")[0]
        weights[func] += int(float(w))
        names = [fr.split(" (")[0] for fr in frames[:leaf + 1] if fr.endswith("(shares.py)")]
        if names[:1] != ["<module>"] or names[-3:-1] != ["driver", "step"]:
            bad_order += int(float(w))
            example = example or stack
        first_py = next(i for i, fr in enumerate(frames) if fr.endswith("(shares.py)"))
        if "_PyEval_EvalFrameDefault" in frames[first_py:]:
            bad_eval += int(float(w))
            example = example or stack
    total_p = sum(weights.values())
    ok = True
    if total_p < 100:
        print(f"{label}: FAIL only {total_p} samples in work_* functions")
        return 1
    for f in FUNCS:
        mp = 100.0 * measured[f] / total_m
        pp = 100.0 * weights[f] / total_p
        # the sampling error of a share of total_p samples, from this run's own count: a
        # fixed margin would be crossed by chance when few samples fall in the window
        tol = max(5.0, 4 * 100.0 * math.sqrt(mp / 100 * (1 - mp / 100) / total_p))
        good = abs(mp - pp) <= tol
        ok &= good
        print(f"{label}: {f} profile {pp:.1f}% measured {mp:.1f}% (within {tol:.1f}: "
              f"{total_p} samples) {'ok' if good else 'FAIL'}")
    if bad_order or bad_eval:
        ok = False
        print(f"{label}: FAIL {bad_order} samples with callers out of order, {bad_eval} with "
              f"_PyEval_EvalFrameDefault among Python frames; e.g.\n  {example}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
