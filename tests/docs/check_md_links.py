#!/usr/bin/env python3
"""docs.md_references: every Markdown file the tree names exists in it.

Reads every text file of the source tree (C, headers, Python, CMake, shell, Markdown,
TOML; build folders, .git and the fuzz corpus left out) and takes each token that
names a `.md` file ("docs/semantics.md", "../README.md"). A token
resolves when the file exists relative to the referring file's folder or to the
top of the tree; an address (a token right after ':' or '/' of a URL) is someone
else's and is not checked. Prints each one that does not resolve, with its file
and line, and exits 1. The old name of docs/design.md, a design document that
was never in the tree, is refused as a bare word too ("see <old name>, pitfalls").

In the Markdown files, every source path they name ("backends/gpu/gpu_hold.c",
"tpevent/measure.h", "scripts/gpu-check.sh": a token with a folder and a source
suffix) exists too: relative to the referring file's folder or one above it, to
include/ (a header as users include it), or to the build folder or its generated/
(core/device_types.h). A folder named "xyz" is the docs' placeholder for a
new backend and is not checked.

    check_md_links.py <source dir> [<build dir>]
"""

import os
import re
import sys

TEXT_SUFFIXES = (".c", ".h", ".py", ".pyi", ".md", ".txt", ".cmake", ".sh", ".toml", ".in", ".json", ".cfg")
TEXT_NAMES = ("run",)  # .ci/run
SKIPPED_FOLDERS = (".git", "corpus", "__pycache__", "node_modules")
OLD_DESIGN_NAME = re.compile(r"\bDES" + r"IGN\b(?!\.md)")
TOKEN = re.compile(r"(?<![A-Za-z0-9_./:-])([A-Za-z0-9_][A-Za-z0-9_./-]*\.md)(?![A-Za-z0-9_])")
SOURCE_SUFFIXES = "c|h|py|pyi|sh|cmake|txt|json|toml|in|comp|glsl"
SOURCE_PATH = re.compile(r"(?<![\w./:~$*-])((?:[\w.-]+/)+[\w.-]+\.(?:" + SOURCE_SUFFIXES + r"))(?![\w*])")
PLACEHOLDER_FOLDER = "xyz/"


def is_build_folder(path):
    return os.path.exists(os.path.join(path, "CMakeCache.txt"))


def text_files(top, build):
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name not in SKIPPED_FOLDERS
            and (name == ".ci" or not name.startswith("."))  # a checkout's own hidden folders are not the tree's
            and not is_build_folder(os.path.join(folder, name))
            and os.path.realpath(os.path.join(folder, name)) != build
        )
        for name in sorted(files):
            if name.endswith(TEXT_SUFFIXES) or name in TEXT_NAMES:
                yield os.path.join(folder, name)


def resolves(token, referrer, top):
    token = token.split("#", 1)[0]
    for base in (os.path.dirname(referrer), top):
        if os.path.isfile(os.path.normpath(os.path.join(base, token))):
            return True
    return False


def source_path_resolves(token, referrer, top, build):
    if PLACEHOLDER_FOLDER in token:
        return True
    bases = [os.path.join(top, "include")] + ([build, os.path.join(build, "generated")] if build else [])
    folder = os.path.dirname(os.path.realpath(referrer))
    while True:  # the referrer's folder and each one above it, up to the top
        bases.append(folder)
        if folder == top or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    return any(os.path.exists(os.path.normpath(os.path.join(base, token))) for base in bases)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    top = os.path.realpath(sys.argv[1])
    build = os.path.realpath(sys.argv[2]) if len(sys.argv) == 3 else ""
    missing = []
    checked = 0
    for path in text_files(top, build):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            for token in TOKEN.findall(line):
                checked += 1
                if not resolves(token, path, top):
                    missing.append(f"{os.path.relpath(path, top)}:{number}: {token}")
            if path.endswith(".md"):
                for token in SOURCE_PATH.findall(line):
                    checked += 1
                    if not source_path_resolves(token, path, top, build):
                        missing.append(f"{os.path.relpath(path, top)}:{number}: {token}")
            if OLD_DESIGN_NAME.search(line):
                missing.append(f"{os.path.relpath(path, top)}:{number}: the design is docs/design.md")
    for line in missing:
        print(f"no such file in the tree: {line}")
    print(f"{checked} references to Markdown files and, in them, to source files; {len(missing)} to a file not in the tree")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
