#!/usr/bin/env python3
"""No list or switch over device types written out by hand outside their list.

    check_device_lists.py <source root> <allow-list>

The device types are cmake/TpeventDeviceTypes.cmake's list (issue 50): the enum's
values, the parser, the registry, the modules, the install and the tests' device
lists all come from it, so that a new type is its folder, one line in the list, its
option and a row in README's table. This check reads the tree's C, CMake, Python and
shell files and reports every line that names device types one by one:

  - two or more types on one code line: "cpu", "cuda" / TP_DEVICE_CPU, TP_DEVICE_CUDA /
    foreach(backend cuda hip) / cpu:0 cuda:0 / (cpu, cuda, hip)
  - `case TP_DEVICE_X:` (a switch over types) and `[TP_DEVICE_X] =` (a table per type)

Comments and strings that are prose are not code: a line that is a comment, and C's
block comments, are skipped. A file may do it on purpose (CUDA-only interop names
cuda; a test of the parser names every type): the allow-list has one line per such
file, `<path> <reason>`, and an entry that no longer matches anything is an error
too, so the list stays true.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".c", ".h", ".py", ".pyi", ".cmake", ".sh", ".in")
ROOTS = ("CMakeLists.txt", "CMakePresets.json", "core", "common", "backends", "include", "python", "tools",
         "bench", "tests", "cmake", "scripts", "examples")


def device_types(root):
    text = open(os.path.join(root, "cmake", "TpeventDeviceTypes.cmake")).read()
    block = re.search(r"set\(TPEVENT_DEVICE_TYPE_LIST(.*?)\)", text, re.S).group(1)
    return re.findall(r'"([a-z][a-z0-9]*) +[0-9]+ +[A-Z_]+"', block)


def source_files(root):
    for top in ROOTS:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield top
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__")
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES) or name == "CMakeLists.txt":
                    yield os.path.relpath(os.path.join(folder, name), root)


def code_lines(path, text):
    """(line number, code) for each line, comments blanked."""
    c_like = path.endswith((".c", ".h"))
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if c_like:
            out = ""
            rest = line
            while rest:
                if in_block:
                    end = rest.find("*/")
                    if end < 0:
                        rest = ""
                    else:
                        in_block, rest = False, rest[end + 2:]
                else:
                    start = rest.find("/*")
                    if start < 0:
                        out, rest = out + rest, ""
                    else:
                        out, rest, in_block = out + rest[:start], rest[start + 2:], True
            line = out.split("//")[0]
            if line.lstrip().startswith("*"):
                continue
        elif line.lstrip().startswith("#"):
            continue
        yield number, line


def findings(path, text, types):
    upper = "|".join(t.upper() for t in types)
    names = "|".join(types)
    constant = re.compile(r"\bTP_DEVICE_(%s)\b" % upper)
    per_type = re.compile(r"(\bcase\s+TP_DEVICE_(%s)\b|\[\s*TP_DEVICE_(%s)\s*\]\s*=)" % (upper, upper))
    quoted = re.compile(r"[\"']((%s)(:[0-9]+)?)[\"']" % names)
    bare = re.compile(r"(?<![\w./-])(%s)(:[0-9]+)?(?![\w./(-])" % names)
    c_like = path.endswith((".c", ".h"))
    for number, line in code_lines(path, text):
        seen = set(m.group(1) for m in constant.finditer(line))
        seen |= set(m.group(2) for m in quoted.finditer(line))
        if not c_like:
            seen |= set(m.group(1) for m in bare.finditer(line))
        seen = {s.lower() for s in seen}
        if len(seen) >= 2 or per_type.search(line):
            yield number, line.strip()


def main():
    root, allow_path = sys.argv[1], sys.argv[2]
    types = device_types(root)
    allowed = {}
    for line in open(allow_path):
        line = line.strip()
        if line and not line.startswith("#"):
            path, _, reason = line.partition(" ")
            if not reason.strip():
                print("%s: %s has no reason" % (allow_path, path))
                return 1
            allowed[path] = reason.strip()
    bad = 0
    matched = set()
    for path in source_files(root):
        if path == "cmake/TpeventDeviceTypes.cmake":
            continue
        try:
            text = open(os.path.join(root, path), encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in findings(path, text, types):
            if path in allowed:
                matched.add(path)
                continue
            print("%s:%d: device types written out by hand (take them from cmake/TpeventDeviceTypes.cmake, "
                  "or allow the file in %s with a reason): %s" % (path, number, os.path.basename(allow_path), line))
            bad += 1
    for path in sorted(set(allowed) - matched):
        print("%s: allows %s, which lists no device types any more: take the line out" % (allow_path, path))
        bad += 1
    print("%d type(s) (%s), %d hand-written list(s) found, %d file(s) allowed" %
          (len(types), ", ".join(types), bad, len(matched)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
