#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small CPU-bound Python program for the demo and the README's Python quick start: a word
counter whose three phases take different shares of the time (tokenize about half, count and
rank the rest), so a profile shows which Python function costs what. Runs about SECS seconds."""
import sys
import time

TEXT = ("the quick brown fox jumps over the lazy dog while profilers watch the stack " * 40).split()


def tokenize(words):
    return [w.strip(".,").lower() for w in words for _ in range(3)]


def count(tokens):
    seen = {}
    for t in tokens:
        seen[t] = seen.get(t, 0) + 1
    return seen


def rank(counts):
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]


def main(secs):
    end = time.monotonic() + secs
    rounds = 0
    while time.monotonic() < end:
        top = rank(count(tokenize(TEXT)))
        rounds += 1
    print(f"{rounds} rounds, top word {top[0][0]!r}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
