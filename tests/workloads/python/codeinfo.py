# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What each Python frame of a workload must carry in a profile.

describe(path, out) compiles the script at PATH again (as Python compiled
it: the same file name, so the same co_filename) and writes one line per
code object in it, functions, methods, lambdas, generator expressions,
class bodies and the module alike:
  func <co_qualname> <co_firstlineno> <last line> <co_filename>
"""


def _last_line(code):
    if not hasattr(code, "co_lines"):  # before 3.10: co_lnotab's line increments
        line = last = code.co_firstlineno
        tab = code.co_lnotab
        for i in range(1, len(tab), 2):
            line += tab[i] - 256 if tab[i] >= 128 else tab[i]
            last = max(last, line)
        return last
    return max((line for _, _, line in code.co_lines() if line is not None),
               default=code.co_firstlineno)


def describe(path, out):
    with open(path) as f:
        top = compile(f.read(), path, "exec")
    todo, seen = [top], set()
    while todo:
        code = todo.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        # co_qualname came with 3.11: co_name before, as the profile names
        # the frames of older versions
        out.write("func %s %d %d %s\n" % (getattr(code, "co_qualname", code.co_name),
                                          code.co_firstlineno,
                                          _last_line(code), code.co_filename))
        todo += [c for c in code.co_consts if hasattr(c, "co_firstlineno")]
