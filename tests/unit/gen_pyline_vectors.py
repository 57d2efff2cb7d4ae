# SPDX-License-Identifier: MIT
"""Writes line-table test vectors from the running CPython (3.10+) for tests/unit/test_pyline.c.

A first line `# CPython X.Y.Z` names the interpreter (test_pyline_vectors.sh compares only
with the same one), then one line per code object: `kind firstlineno linetable_hex expected`,
where kind is 1 (3.10 co_linetable) or 2 (3.11+ location table) and expected lists
`instr:line` for every instruction (code-unit index) from co_lines(), line -1 where it has
none, and then the first index past the code, which has no line.
  python3.X gen_pyline_vectors.py > tests/unit/data/pyline-3.X.txt

The source is chosen to reach every form of both tables: line deltas beyond a byte (3.10
splits them, 3.11 writes multi-byte varints) in both directions, code runs longer than 254
bytes and 8 code units on one line, columns past 127 and 255, instructions spanning lines,
instructions without a line, and a code object starting past line 65535.
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

def back(n):
    t = 0
    while n > 0:
        t += n
''' + "\n" * 200 + '''
        n -= 1
    return t

def wide(a):
    return [a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10, a + 11, a + 12, a + 13, a + 14, a + 15, a + 16, a + 17, a + 18, a + 19, a + 20, a + 21, a + 22, a + 23, a + 24, a + 25, a + 26, a + 27, a + 28, a + 29, a + 30, a + 31, a + 32, a + 33, a + 34, a + 35, a + 36, a + 37, a + 38, a + 39, a + 40, a + 41, a + 42, a + 43, a + 44, a + 45, a + 46, a + 47, a + 48, a + 49, a + 50, a + 51, a + 52, a + 53, a + 54, a + 55, a + 56, a + 57, a + 58, a + 59, a + 60]

def decorate(*tags):
    def wrap(f):
        f.tags = tags
        return f
    return wrap

@decorate(
    "a",
    "b",
)
@staticmethod
def decorated():
    pass

def gen(n):
    with open("/dev/null") as f:
        for i in range(n):
            yield (i,
                   f)

async def coro(x):
    await x
    async for y in x:
        pass

def shapes(v):
    match v:
        case [a, b]:
            return a
        case {"k": c}:
            return c
        case _:
            return None

def raising(d):
    try:
        return d["missing"]
    except (KeyError,
            IndexError) as e:
        raise ValueError(str(e)) from e
''' + "\n" * 70000 + '''
def late():
    return 1
'''


def codes(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)


def main():
    kind = 1 if sys.version_info[:2] == (3, 10) else 2
    top = compile(SOURCE, "vectors.py", "exec")
    print("# CPython %d.%d.%d" % sys.version_info[:3])
    for co in codes(top):
        lines = {}
        for start, end, line in co.co_lines():
            for b in range(start, end, 2):
                lines[b // 2] = -1 if line is None else line
        lines[len(co.co_code) // 2] = -1
        exp = " ".join(f"{i}:{lines[i]}" for i in sorted(lines))
        print(kind, co.co_firstlineno, co.co_linetable.hex() or "-", exp)


main()
