# SPDX-License-Identifier: MIT
"""Writes line-table test vectors from the running CPython (3.10+) for tests/unit/test_pyline.c.

One line per code object: `kind firstlineno linetable_hex expected`, where kind is 1 (3.10
co_linetable) or 2 (3.11+ location table) and expected lists `instr:line` for every instruction
(code-unit index) from co_lines(), line -1 where it has none.
  python3.X gen_pyline_vectors.py > tests/unit/data/pyline-3.X.txt
"""
import sys

SOURCE = '''
def loop(n):
    s = 0
    for i in range(n):
        if i % 3:
            s += i
        else:
            s -= 1
    return s

def multi(a,
          b):
    x = (a +
         b *
         2)
    try:
        y = 1 / a
    except ZeroDivisionError:
        y = 0
    finally:
        x += 1
    return [v * 2 for v in range(x) if v > y]

def far():
    a = 1
''' + "\n" * 300 + '''
    b = 2
''' + "\n" * 40 + '''
    return a + b

@staticmethod
def deco(x):
    return lambda y: x + y

class K:
    def method(self):
        return {k: k for k in range(3)}
'''


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


def main():
    kind = 1 if sys.version_info[:2] == (3, 10) else 2
    top = compile(SOURCE, "vectors.py", "exec")
    for co in codes(top):
        lines = {}
        for start, end, line in co.co_lines():
            for b in range(start, end, 2):
                lines[b // 2] = -1 if line is None else line
        exp = " ".join(f"{i}:{lines[i]}" for i in sorted(lines))
        print(kind, co.co_firstlineno, co.co_linetable.hex() or "-", exp)


main()
