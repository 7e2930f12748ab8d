#!/usr/bin/env python3
"""The shape of the source tree, checked on what the compiler built.

  check_layers.py calls <group-name> <object files...>
      Fails if two files of the group call each other in a loop, directly or
      through others: each file's undefined symbols that another file of the
      group defines are its calls (read with nm, so only real references count,
      not comments or declarations).
  check_layers.py lines <max> <source files...>
      Fails if a source file has more than <max> lines.
"""
import subprocess
import sys
from pathlib import Path


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], check=True, capture_output=True, text=True).stdout
    defined = {line.split()[-1] for line in out.splitlines()
               if len(line.split()) == 3 and line.split()[1] in "TDBRVW"}
    out = subprocess.run(["nm", "--undefined-only", obj], check=True, capture_output=True, text=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.split()}
    return defined, undefined


def source_name(obj):
    name = Path(obj).name
    for suffix in (".o", ".obj"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def find_cycle(graph):
    """A list of nodes forming a cycle, or None (depth-first, colouring)."""
    colour = {node: 0 for node in graph}
    stack = []

    def visit(node):
        colour[node] = 1
        stack.append(node)
        for succ in sorted(graph[node]):
            if colour[succ] == 1:
                return stack[stack.index(succ):] + [succ]
            if colour[succ] == 0:
                found = visit(succ)
                if found:
                    return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if colour[node] == 0:
            found = visit(node)
            if found:
                return found
    return None


def check_calls(group, objects):
    if len(objects) < 2:
        print(f"{group}: fewer than two object files given ({objects}): nothing was built?")
        return 1
    table = {source_name(o): symbols(o) for o in objects}
    owner = {}
    for name, (defined, _) in table.items():
        for sym in defined:
            owner[sym] = name
    graph = {name: set() for name in table}
    why = {}
    for name, (_, undefined) in table.items():
        for sym in undefined:
            callee = owner.get(sym)
            if callee and callee != name:
                graph[name].add(callee)
                why.setdefault((name, callee), sym)
    for name in sorted(graph):
        print(f"{group}: {name} -> {', '.join(sorted(graph[name])) or '(nothing of the group)'}")
    cycle = find_cycle(graph)
    if cycle:
        steps = [f"{a} ({why[(a, b)]})" for a, b in zip(cycle, cycle[1:])]
        print(f"{group}: FAIL: files call each other in a loop: {' -> '.join(steps)} -> {cycle[-1]}")
        return 1
    print(f"{group}: no loop among {len(graph)} files")
    return 0


def check_lines(limit, files):
    over = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            n = sum(1 for _ in fh)
        if n > limit:
            over.append((n, f))
    for n, f in sorted(over, reverse=True):
        print(f"FAIL: {f}: {n} lines (at most {limit})")
    print(f"{len(files)} files, {len(over)} over {limit} lines")
    return 1 if over else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "calls":
        return check_calls(argv[2], argv[3:])
    if len(argv) >= 3 and argv[1] == "lines":
        return check_lines(int(argv[2]), argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
