#!/usr/bin/env python3
"""Doxygen's INPUT_FILTER for include/tpevent/*.h: the headers' comments, written as
plain C comments (the house style), read as the documentation of what follows them.

- the file's first comment is its @file page;
- a comment of its own line(s) documents the declaration after it; one that is
  followed by several declarations with no blank line between them documents each
  (a member group, DISTRIBUTE_GROUP_DOC);
- a comment after code on the same line documents that member (/**< */), or each
  name of a line that declares several;
- a section rule (/* ---- streams */) is left out;
- a backslash in a comment is the character itself ("\\ufffd"), not a command.

Only comments change, line for line, so Doxygen's line numbers are the header's.
"""

import re
import sys

RULE = re.compile(r"^\s*/\* -{3,}")
OWN_LINE = re.compile(r"^(\s*)/\*(?![*!])")
TRAILING = re.compile(r"^(\s*\S.*?\s)/\*(?![*!<])")
DECLARATION = re.compile(r"^\s*(TP_API\b|#define\s)")


def declarations_after(lines, start):
    """How many declarations follow line `start`, up to the next blank line or comment."""
    count = 0
    for line in lines[start:]:
        if not line.strip() or line.lstrip().startswith("/*"):
            break
        if DECLARATION.match(line):
            count += 1
    return count


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    first = True
    in_comment = False
    group_end = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if group_end is not None and (not line.strip() or line.lstrip().startswith("/*")):
            out[-1] += " /**@}*/"
            group_end = None
        if in_comment:
            line = line.replace("\\", "\\\\")
            out.append(line)
            if "*/" in line:
                in_comment = False
                count = declarations_after(lines, i + 1)
                if count > 1:
                    out[-1] += " /**@{*/"
                    group_end = True
            i += 1
            continue
        if RULE.match(line):
            out.append("")
            i += 1
            continue
        own = OWN_LINE.match(line)
        if own:
            opener = "/** @file " if first else "/** "
            first = False
            line = own.group(1) + opener + line[own.end():].lstrip(" ").replace("\\", "\\\\")
            out.append(line)
            if "*/" in line:
                if declarations_after(lines, i + 1) > 1:
                    out[-1] += " /**@{*/"
                    group_end = True
            else:
                in_comment = True
            i += 1
            continue
        trailing = TRAILING.match(line)
        if trailing and "," in trailing.group(1) and "(" not in trailing.group(1) and "*/" in line:
            # `int64_t a, b; /* doc */`: the comment documents every name of the line
            code, comment = trailing.group(1), line[trailing.end():].lstrip(" ")
            indent = code[: len(code) - len(code.lstrip())]
            line = indent + "/** " + comment + " /**@{*/ " + code.strip() + " /**@}*/"
        elif trailing and (not line.lstrip().startswith("#") or line.lstrip().startswith("#define")):
            line = trailing.group(1) + "/**< " + line[trailing.end():].lstrip(" ")
        out.append(line)
        i += 1
    if group_end is not None:
        out[-1] += " /**@}*/"
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
