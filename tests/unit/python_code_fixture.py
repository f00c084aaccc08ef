#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
What CPython itself says of its code objects, for tests/unit/test_python_code.c.
Run by the test with python3.11 (the location table format and the layout are
3.11's).  One line per fact, space-separated; strings as "x" + hex of UTF-8:

  version 0x30b02f0
  fn NAME CODE FIRSTLINENO FILENAME QUALNAME xQUALNAME xFILENAME xLINETABLE
  lines N L0 .. LN-1        PyCode_Addr2Line() of each code unit (-1: no line)

Usage:
  python_code_fixture.py lines         every code object of a few stdlib
                                       modules and of this file, then exit
  python_code_fixture.py live DIR      write and run DIR/größe.py: its
                                       functions (CODE, FILENAME, QUALNAME are
                                       addresses: id()), "pid", "types" (the
                                       addresses of PyCode_Type, PyUnicode_Type,
                                       PyBytes_Type), "notcode ADDR" (a str),
                                       then "ready"; live until the reader
                                       closes the pipe (60 s at most)
"""
import ctypes
import os
import sys
import time

MAX_NAME = 1024      # PYTHON_CODE_MAX_NAME
MAX_FILENAME = 4096  # PYTHON_CODE_MAX_FILENAME

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int


def expect(s, bound):
    """the contract: NUL and surrogates as U+FFFD, cut at bound with U+2026"""
    t = "".join("\ufffd" if c == "\0" or 0xD800 <= ord(c) <= 0xDFFF else c for c in s[:bound])
    if len(s) > bound:
        t += "\u2026"
    return "x" + t.encode("utf-8").hex()


def emit(name, code):
    print("fn", name, id(code), code.co_firstlineno, id(code.co_filename), id(code.co_qualname),
          expect(code.co_qualname, MAX_NAME), expect(code.co_filename, MAX_FILENAME),
          "x" + code.co_linetable.hex())
    n = len(code.co_code) // 2
    print("lines", n, *(addr2line(code, 2 * i) for i in range(n)))


def walk(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, type(code)):
            yield from walk(c)


SNIPPET = '''
def far(a):
    x = a



    y = (x +
         a)










































































    return [i for i in range(y) if i > x]
def wide(a):
    return a                                                                                                                                            + 1
def handlers(a):
    try:
        with open(a) as f:
            return f.read()
    except OSError as e:
        raise ValueError(a) from e
    finally:
        a = None
async def coro(a):
    async for x in a:
        yield x
'''


def lines():
    import argparse, dis, typing  # noqa: E401
    print("version", hex(sys.hexversion))
    sources = [(m.__file__, open(m.__file__, encoding="utf-8").read())
               for m in (argparse, dis, typing)]
    sources.append(("<snippet>", SNIPPET))
    for path, text in sources:
        for code in walk(compile(text, path, "exec")):
            emit(code.co_name, code)


LIVE = '''
class Klass:
    def method(self):
        return 1

lam = lambda x: x

def größe():
    return 2

def 数据():
    return 3

def 𐌰𐌱():
    return 4

exec("def " + "a" * 1500 + "(): return 5")
'''


def live(directory):
    path = os.path.join(directory, "größe.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(LIVE)
    ns = {}
    exec(compile(open(path, encoding="utf-8").read(), path, "exec"), ns)
    codes = [("method", ns["Klass"].method.__code__), ("lambda", ns["lam"].__code__),
             ("latin1", ns["größe"].__code__), ("ucs2", ns["数据"].__code__),
             ("ucs4", ns["𐌰𐌱"].__code__), ("long", ns["a" * 1500].__code__)]
    # names no compiler makes: a NUL, a lone surrogate (surrogateescape)
    odd = ns["größe"].__code__.replace(co_qualname="nul\0here",
                                       co_filename="/tmp/bad\udcff.py")
    codes.append(("odd", odd))
    print("version", hex(sys.hexversion))
    print("pid", os.getpid())
    print("types", id(type(odd)), id(str), id(bytes))
    print("notcode", id(odd.co_filename))
    for name, code in codes:
        emit(name, code)
    print("ready", flush=True)
    # the objects stay alive while the test reads them: until a write finds
    # the pipe closed (pclose()), then out without a traceback
    try:
        for _ in range(600):
            time.sleep(0.1)
            print(flush=True)
    except BrokenPipeError:
        pass
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1] == "lines":
        lines()
    else:
        live(sys.argv[2])
