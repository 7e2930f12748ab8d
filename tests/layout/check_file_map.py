#!/usr/bin/env python3
"""A folder's file map names every file of the folder.

    check_file_map.py <header> [<header>...]

A header whose first comment maps its folder's files (backends/gpu/gpu_internal.h:
"The files, each calling only the ones listed before it") is where a reader starts;
a file it leaves out is one the reader never finds (issue 55: the GPU map had left
out 6 of 21). Each file of the header's folder (not hidden, not a build output) must
appear in that first comment by its full name. Fails, naming the header and each
file missing, where one does not.
"""
import os
import re
import sys


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


def main(headers):
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
