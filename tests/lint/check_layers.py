#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
The collector's folders are layers (docs/ARCHITECTURE.md, the line that
starts "Layers, bottom to top:"): a file of user/ may include headers of its
own layer or below, never above, and no two modules (x.c with x.h) may depend
on each other, directly or through others.  A runtime's home,
user/runtimes/NAME/, is in the layer of "runtimes".  Prints each violation and exits
1; prints a one-line summary and exits 0 when there is none.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
USER = os.path.join(ROOT, "user")
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:runtimes/)?[a-z_]+)/([a-z_0-9]+)\.h"', re.M)


def folders():
    """user/'s folders, each runtime's home (runtimes/NAME) one of its own"""
    for folder in sorted(os.listdir(USER)):
        if not os.path.isdir(os.path.join(USER, folder)):
            continue
        if folder != "runtimes":
            yield folder
            continue
        for name in sorted(os.listdir(os.path.join(USER, folder))):
            if os.path.isdir(os.path.join(USER, folder, name)):
                yield f"{folder}/{name}"


def layer(rank, folder):
    return rank.get(folder.split("/")[0] if folder.startswith("runtimes/") else folder)


def layers():
    text = open(os.path.join(ROOT, "docs", "ARCHITECTURE.md")).read()
    m = re.search(r"^Layers, bottom to top: (.+)$", text, re.M)
    if not m:
        sys.exit("check_layers: docs/ARCHITECTURE.md has no 'Layers, bottom to top:' line")
    rank = {}
    for i, group in enumerate(m.group(1).strip(" .`").split("<")):
        for folder in group.split(","):
            rank[folder.strip(" `")] = i
    return rank


def main():
    rank = layers()
    errors = []
    deps = {}
    for folder in folders():
        path = os.path.join(USER, folder)
        if layer(rank, folder) is None:
            errors.append(f"user/{folder}/: in no layer of docs/ARCHITECTURE.md")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            module = f"{folder}/{name[:-2]}"
            src = open(os.path.join(path, name)).read()
            for inc_folder, inc_name in INCLUDE.findall(src):
                target = f"{inc_folder}/{inc_name}"
                if layer(rank, inc_folder) is None:
                    continue
                if layer(rank, inc_folder) > layer(rank, folder):
                    errors.append(f"user/{folder}/{name}: includes {target}.h, a layer above")
                if target != module:
                    deps.setdefault(module, set()).add(target)
    # module cycles: a depth-first search for a back edge
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(deps.get(m, ())):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                errors.append("modules depend on each other: " + " -> ".join(cycle))
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(deps):
        if m not in state:
            visit(m)
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"layers: {len(deps)} modules of user/ follow the {len(set(rank.values()))} layers, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
