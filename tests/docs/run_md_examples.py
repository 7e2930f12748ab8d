#!/usr/bin/env python3
"""The Python examples of the Markdown documents, run (issue 55: "Python examples
through doctest"; the docstrings' are tests/python's python.doctest.<type>).

    run_md_examples.py <source root> <device type>

Every ```python block of README.md, docs/*.md and python/README.md runs on the
device type given (CI: cpu), in a fresh namespace and an empty folder of its own
(an example may write its trace there):

  - a block of `>>>` lines is a doctest: its outputs are checked (ELLIPSIS on);
  - any other block runs whole, as a script, and must not raise.

The examples are written for a GPU ("cuda", "cuda:1", tpevent.cuda): a device
string or namespace of another type of the list (tpevent._tpevent._device_types,
which the one list of types makes) is read as the same of the tested type, with
its index ("cpu:1": TPEVENT_CPU_DEVICES=2). Not run, and said so, with the reason:

  - a block that imports a module not installed here (torch, cupy);
  - a block of docs/ that uses names it does not define (a fragment of the text
    around it, such as `a @ b` on two tensors the text made). README.md's examples
    are whole programs: a fragment there fails.

Exits 1 if a block failed, if README.md has a fragment, or if no block ran.
"""

import ast
import builtins
import contextlib
import doctest
import glob
import importlib.util
import io
import os
import re
import sys
import tempfile
import traceback

import tpevent

BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)


def blocks(root):
    """(path relative to root, line of the block's first line of code, code)."""
    paths = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    paths.append(os.path.join("python", "README.md"))
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        for match in BLOCK.finditer(text):
            yield path, text.count("\n", 0, match.start(1)) + 1, match.group(1)


def on_device(code, device_type):
    """The code with every other type's device strings and namespaces read as device_type's."""
    others = [t for t in tpevent._tpevent._device_types if t != device_type]
    if not others:
        return code
    names = "|".join(sorted(others, key=len, reverse=True))
    code = re.sub(r"([\"'])(%s)((?::[0-9]+)?)\1" % names, lambda m: m.group(1) + device_type + m.group(3) + m.group(1),
                  code)
    return re.sub(r"\btpevent\.(%s)\b" % names, "tpevent." + device_type, code)


def missing_modules(tree):
    missing = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        missing.update(top for top in tops if importlib.util.find_spec(top) is None)
    return sorted(missing)


def free_names(tree):
    """Names the block reads and never binds (nor are builtins): what it takes from its context."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(read - bound - set(dir(builtins)) - {"tpevent"})


def run_block(code, name):
    """None if it ran as it should, else what went wrong."""
    globs = {"tpevent": tpevent, "__name__": "__main__"}
    with tempfile.TemporaryDirectory() as folder:
        here = os.getcwd()
        os.chdir(folder)
        try:
            tpevent.set_stream(None)
            if ">>>" in code:
                parser = doctest.DocTestParser()
                test = parser.get_doctest(code, globs, name, name, 0)
                out = io.StringIO()
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
                result = runner.run(test, out=out.write)
                return out.getvalue() if result.failed else None
            output = io.StringIO()
            try:
                with contextlib.redirect_stdout(output):
                    exec(compile(code, name, "exec"), globs)
            except Exception:
                return traceback.format_exc()
            return None
        finally:
            os.chdir(here)


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    root, device_type = argv[1], argv[2]
    if device_type not in tpevent._tpevent._device_types:
        print(f"unknown device type {device_type!r}: the list has {tpevent._tpevent._device_types}")
        return 2
    ran = failed = 0
    for path, line, code in blocks(root):
        name = f"{path}:{line}"
        source = on_device(code, device_type)
        try:
            tree = ast.parse(doctest.script_from_examples(source) if ">>>" in source else source)
        except SyntaxError as e:
            print(f"FAIL: {name}: not Python: {e}")
            failed += 1
            continue
        missing = missing_modules(tree)
        if missing:
            print(f"{name}: not run: needs {', '.join(missing)}, not installed here")
            continue
        context = free_names(tree)
        if context:
            if path == "README.md":
                print(f"FAIL: {name}: README.md's examples are whole programs; this one uses {', '.join(context)}"
                      " without defining it")
                failed += 1
            else:
                print(f"{name}: not run: a fragment, it uses {', '.join(context)} from the text around it")
            continue
        problem = run_block(source, name)
        ran += 1
        if problem:
            print(f"FAIL: {name} on {device_type}:\n{problem}")
            failed += 1
        else:
            print(f"{name}: ran on {device_type}")
    print(f"{ran} examples ran on {device_type}, {failed} failed")
    if ran == 0:
        print("FAIL: no example ran")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
