# SPDX-License-Identifier: MIT
# tests/walker/test_walker.c runs this under ptrace: it stops itself (SIGSTOP) twice, each time
# right after writing its Python stack, innermost first, to argv[1] as "co_name co_firstlineno"
# lines. The walk of bpf/py_walk.bpf.h over the snapshot taken at the stop must find exactly
# these frames.
import os
import signal
import sys


def stop():
    f = sys._getframe(0)
    with open(sys.argv[1], "w") as out:
        while f:
            out.write(f"{f.f_code.co_name} {f.f_code.co_firstlineno}\n")
            f = f.f_back
    os.kill(os.getpid(), signal.SIGSTOP)


def leaf():
    stop()


def chain(n):
    return leaf() if n == 0 else chain(n - 1)


class Walker:
    def method(self, n):
        return chain(n)


def through_c(n):
    # map() is C code: the lambda runs in an evaluator call of its own (an entry frame)
    return list(map(lambda _: Walker().method(n), [0]))[0]


def main():
    through_c(30)
    chain(150)      # deeper than the 128 frames a walk sends: it must say it truncated


main()
