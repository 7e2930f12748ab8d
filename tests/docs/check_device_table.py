#!/usr/bin/env python3
"""docs.device_lists: the device types the user's documents list are the one list's
(cmake/TpeventDeviceTypes.cmake, passed in by CMake): the README's device table has a
row per public type and no other, its example message says "known: <every type>",
docs/devices.md's device strings name every type, the one-line descriptions that
enumerate the backends (the project's, the package's, the header's, the tool's help:
ENUMERATIONS) name every type, and the listings of installed files name every
module's file (MODULE_LISTINGS). These were the places issue 55 found without OpenCL.

    check_device_table.py <source dir> <type>... --modules <module type>...
"""

import os
import re
import sys


def read(top, path):
    with open(os.path.join(top, path), encoding="utf-8") as f:
        return f.read()


def section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


# (file, text of the line that starts the enumeration): the line and the next must
# name every public type, as a word in any case ("OpenCL" for opencl).
ENUMERATIONS = (
    ("CMakeLists.txt", 'DESCRIPTION "'),  # the project's: tpevent.pc, the reference's brief
    ("pyproject.toml", "description = "),
    ("include/tpevent/tpevent.h", "tpevent: device events and streams over"),
    ("python/tpevent/__init__.py", "tpevent: device events and streams over"),
    ("README.md", "Device events and streams with one C API over"),
    ("tools/main.c", "Device events and streams over"),
    ("tools/main.c", "devices   list the backends ("),
    ("tools/devices.c", "Lists the backends ("),
    ("docs/semantics.md", "any two of"),
    ("examples/README.md", "**Components** are the backends:"),
    ("README.md", "| `torch.cuda.Event` |"),  # how it compares: "one API over ..."
    ("docs/design.md", "Today's public types:"),
)

# (file, text of a line of the listing): each module's file, libtpevent-<type>.so,
# appears in the file (the installed files, the wheel's).
MODULE_LISTINGS = (
    ("examples/README.md", "lib/libtpevent-"),
    ("python/README.md", "tpevent/lib/libtpevent-"),
    ("docs/python.md", "`tpevent/lib/libtpevent-"),  # the wheel's table
)


def enumeration_failures(top, types, modules):
    failures = []
    for path, marker in ENUMERATIONS:
        lines = read(top, path).split("\n")
        found = [i for i, line in enumerate(lines) if marker in line]
        if not found:
            failures.append(f"{path}: no line with {marker!r} (the enumeration moved? update ENUMERATIONS)")
            continue
        for i in found:
            text = " ".join(lines[i : i + 2]).lower()
            lacking = [t for t in types if not re.search(r"(?<![a-z0-9])%s(?![a-z0-9])" % re.escape(t), text)]
            if lacking:
                failures.append(f"{path}:{i + 1}: names the backends without {', '.join(lacking)}: {lines[i].strip()}")
    for path, marker in MODULE_LISTINGS:
        text = read(top, path)
        if marker not in text:
            failures.append(f"{path}: no listing with {marker!r} (it moved? update MODULE_LISTINGS)")
            continue
        for name in modules:
            if f"libtpevent-{name}.so" not in text:
                failures.append(f"{path}: its listing of files lacks libtpevent-{name}.so")
    return failures


def main():
    if len(sys.argv) < 3 or "--modules" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--modules")
    top, types, modules = sys.argv[1], sys.argv[2:split], sys.argv[split + 1 :]
    failures = enumeration_failures(top, types, modules)
    readme = read(top, "README.md")
    table = section(readme, "\n## Devices\n")
    rows = re.findall(r"(?m)^\| `([a-z0-9]+)` \|", table)
    if rows != types:
        failures.append(f"README.md's device table lists {rows}, the list has {types}")
    known = "known: " + ", ".join(types) + ")"
    if known not in readme:
        failures.append(f"README.md's example message lacks \"{known}\"")
    strings = section(read(top, "docs/devices.md"), "\n## Device strings\n")
    for name in types:
        if f"`{name}`" not in strings:
            failures.append(f"docs/devices.md's device strings do not name `{name}`")
    for line in failures:
        print(line)
    print(f"{len(types)} device types, {len(failures)} documents out of step")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
