#!/usr/bin/env python3
"""A folder's file map names every file of the folder, and its order is the calls'.

    check_file_map.py <header> [<header>...]
    check_file_map.py <header> --objects <object files of the folder's sources...>

A header whose first comment maps its folder's files (backends/gpu/gpu_internal.h:
"The files, each calling only the ones listed before it") is where a reader starts;
a file it leaves out is one the reader never finds (issue 55: the GPU map had left
out 6 of 21). Each file of the header's folder (not hidden, not a build output) must
appear in that first comment by its full name. Fails, naming the header and each
file missing, where one does not.

With --objects, the map's order is checked too: its entries are the lines
" *   name.c ..." (two names on one line share a place), and no file may call one
listed after it. A file's calls are the undefined symbols of its object that
another object defines (nm, as layout.calls reads them). Fails naming the call.
"""
import os
import re
import sys

from check_layers import source_name, symbols  # nm's defined and undefined symbols, as layout.calls reads them

ENTRY = re.compile(r"^ \*   ([\w.+-]+\.c)(?:, ([\w.+-]+\.c))?(?:\s|$)", re.M)


def first_comment(text):
    match = re.search(r"/\*.*?\*/", text, re.S)
    return match.group(0) if match else ""


def missing_from_map(header):
    folder = os.path.dirname(os.path.abspath(header))
    with open(header, encoding="utf-8") as f:
        comment = first_comment(f.read())
    named = set(re.findall(r"[\w.+-]+", comment))
    files = sorted(name for name in os.listdir(folder)
                   if not name.startswith(".") and os.path.isfile(os.path.join(folder, name)))
    return files, [name for name in files if name not in named]


def map_order(comment):
    """{file: its place in the map} of the map's entry lines."""
    order = {}
    for place, match in enumerate(ENTRY.finditer(comment)):
        for name in match.groups():
            if name:
                order.setdefault(name, place)
    return order


def order_problems(header, objects):
    with open(header, encoding="utf-8") as f:
        order = map_order(first_comment(f.read()))
    table = {source_name(o): symbols(o) for o in objects}
    owner = {sym: name for name, (defined, _) in table.items() for sym in defined}
    problems = []
    for name, (_, undefined) in sorted(table.items()):
        if name not in order:
            problems.append(f"{name} is built but is no entry of the map")
            continue
        for sym in sorted(undefined):
            callee = owner.get(sym)
            if callee and callee != name and callee in order and order[callee] > order[name]:
                problems.append(f"{name} calls {sym} of {callee}, which the map lists after it")
    return problems, len(table)


def main(argv):
    if "--objects" in argv:
        split = argv.index("--objects")
        headers, objects = argv[:split], argv[split + 1:]
        if len(headers) != 1 or not objects:
            print(__doc__)
            return 2
        missing = [o for o in objects if not os.path.isfile(o)]
        if missing:
            print(f"{headers[0]}: not built yet: {', '.join(missing)}")
            return 1
        problems, count = order_problems(headers[0], objects)
        for problem in problems:
            print(f"FAIL: {headers[0]}: {problem}")
        print(f"{headers[0]}: {count} objects, {len(problems)} calls against the map's order")
        return main(headers) or (1 if problems else 0)
    headers = argv
    if not headers:
        print(__doc__)
        return 2
    bad = 0
    for header in headers:
        files, missing = missing_from_map(header)
        for name in missing:
            print(f"FAIL: {header}: its file map does not name {name} (of its folder)")
        bad += len(missing)
        print(f"{header}: {len(files) - len(missing)} of {len(files)} files of its folder named")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
