#!/usr/bin/env python3
"""The shape of the source tree, checked on what the compiler built.

  check_layers.py calls <group-name> <object files...>
      Fails if two files of the group call each other in a loop, directly or
      through others: each file's undefined symbols that another file of the
      group defines are its calls (read with nm, so only real references count,
      not comments or declarations). Inline helpers count too: a header of the
      group's folders that an object was built from (its compiler's depfile,
      <object>.d) is a file of its own, which calls what its `static inline`
      functions call (a symbol another file defines, another header's inline
      function) and is called by each file that calls one of them (read from the
      source, comments and strings left out). Every circle is reported: its
      files, and one loop through them.
  check_layers.py lines <max> <source files...>
      Fails if a source file has more than <max> lines.
  check_layers.py includes <root> <source files...>
      Fails if a source file outside tests/ includes a header under tests/: test
      code never lies on the production path.
"""
import re
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


def depfile_sources(obj):
    """The files the compiler read to build `obj` (its depfile, <obj>.d), the source
    first; None where there is no depfile."""
    path = Path(obj + ".d")
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    _, _, prerequisites = text.partition(": ")
    return [Path(word) for word in prerequisites.split() if word != "\\"]


def strip_code(text):
    """C text without comments, strings and character constants."""
    pattern = r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\''
    return re.sub(pattern, " ", text, flags=re.S)


CALL = re.compile(r"(?<![\w.>])(\w+)\s*\(")  # a name called, not a member through . or ->
INLINE = re.compile(r"\bstatic\s+inline\b[^;{}]*?\b(\w+)\s*\([^;{}]*\)[^;{}]*\{")


def inline_functions(text):
    """{name: the names its body calls} of a header's `static inline` functions."""
    found = {}
    for match in INLINE.finditer(text):
        depth, end = 1, match.end()
        while depth and end < len(text):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        found[match.group(1)] = set(CALL.findall(text[match.end():end]))
    return found


def add_inline_helpers(graph, why, owner, objects):
    """The group's headers with inline functions, as files of the graph (see the
    module's doc). Returns False where the objects have no depfiles."""
    sources = {}
    for o in objects:
        read = depfile_sources(o)
        if read is None:
            return False
        sources[source_name(o)] = read
    folders = {read[0].parent for read in sources.values() if read}
    headers = {}
    for read in sources.values():
        for path in read[1:]:
            if path.suffix == ".h" and path.parent in folders and path.name not in headers:
                headers[path.name] = inline_functions(strip_code(path.read_text(encoding="utf-8")))
    inline_owner = {}
    for header, functions in headers.items():
        for name in functions:
            inline_owner.setdefault(name, header)
    for header, functions in headers.items():
        if not functions:
            continue
        graph.setdefault(header, set())
        for name in sorted(functions):
            for called in sorted(functions[name]):
                callee = inline_owner.get(called) or owner.get(called)
                if callee and callee != header:
                    graph[header].add(callee)
                    why.setdefault((header, callee), f"{name} calls {called}")
    for name, read in sources.items():
        if not read:
            continue
        included = {path.name for path in read[1:]}
        for called in set(CALL.findall(strip_code(read[0].read_text(encoding="utf-8")))):
            header = inline_owner.get(called)
            if header and header in included and headers[header]:
                graph[name].add(header)
                why.setdefault((name, header), called)
    return True


def circles(graph):
    """The groups of files that call each other in a loop: the strongly connected
    components of more than one file (Tarjan), each sorted, in sorted order."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def loop_through(graph, members):
    """One loop inside a circle, from its first file back to it (breadth-first, so the shortest)."""
    first = members[0]
    came_from = {first: None}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for succ in sorted(graph[node] & set(members)):
            if succ == first:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return list(reversed(path)) + [first]
            if succ not in came_from:
                came_from[succ] = node
                queue.append(succ)
    return [first]


def check_calls(group, objects):
    if len(objects) < 2:
        print(f"{group}: fewer than two object files given ({objects}): nothing was built?")
        return 1
    missing = [o for o in objects if not Path(o).is_file()]
    if missing:
        print(f"{group}: not built yet: {', '.join(missing)}")
        return 1
    # A file built into several targets of the group (two builds of one benchmark,
    # the core built twice for a static library) counts once, with what any build
    # of it defines or needs.
    table = {}
    for o in objects:
        defined, undefined = symbols(o)
        known = table.setdefault(source_name(o), (set(), set()))
        known[0].update(defined)
        known[1].update(undefined)
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
    if not add_inline_helpers(graph, why, owner, objects):
        print(f"{group}: no depfiles (<object>.d) beside the objects: inline helpers not checked")
    for name in sorted(graph):
        print(f"{group}: {name} -> {', '.join(sorted(graph[name])) or '(nothing of the group)'}")
    found = circles(graph)
    for members in found:
        loop = loop_through(graph, members)
        steps = [f"{a} ({why[(a, b)]})" for a, b in zip(loop, loop[1:])]
        print(f"{group}: FAIL: files call each other in a loop: {' -> '.join(steps)} -> {loop[-1]}"
              f" (in the circle: {', '.join(members)})")
    if found:
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


def check_includes(root, files):
    root = Path(root).resolve()
    found = []
    for f in files:
        relative = Path(f).resolve().relative_to(root)
        if relative.parts[0] == "tests":
            continue
        with open(f, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                words = line.replace("#", "# ", 1).split()
                if words[:2] == ["#", "include"] and len(words) > 2 and words[2].strip('"<').startswith("tests/"):
                    found.append(f"{relative}:{number}: {line.strip()}")
    for line in found:
        print(f"FAIL: {line}")
    print(f"{len(files)} files, {len(found)} includes of test code outside tests/")
    return 1 if found else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "calls":
        return check_calls(argv[2], argv[3:])
    if len(argv) >= 3 and argv[1] == "lines":
        return check_lines(int(argv[2]), argv[3:])
    if len(argv) >= 3 and argv[1] == "includes":
        return check_includes(argv[2], argv[3:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
