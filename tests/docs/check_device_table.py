#!/usr/bin/env python3
"""docs.device_lists: the device types the user's documents list are the one list's
(cmake/TpeventDeviceTypes.cmake, passed in by CMake): the README's device table has a
row per public type and no other, its example message says "known: <every type>",
and docs/devices.md's device strings name every type.

    check_device_table.py <source dir> <type>...
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


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top, types = sys.argv[1], sys.argv[2:]
    failures = []
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
