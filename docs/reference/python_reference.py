#!/usr/bin/env python3
"""The Python API's reference: one pydoc page per module of the tpevent package, into
<output dir>, and a failure for every public name without a docstring (a module's
names without a leading underscore, and their classes' public methods; data
attributes are documented in their class's docstring).

    python_reference.py <site-packages of the build> <output dir>
"""

import importlib
import inspect
import os
import pydoc
import sys

MODULES = ("tpevent", "tpevent.timeit", "tpevent.timeline")


def public(names):
    return [name for name in names if not name.startswith("_")]


def undocumented(module):
    missing = []
    for name in public(dir(module)):
        value = getattr(module, name)
        if inspect.ismodule(value):
            continue
        if not isinstance(value, (type,)) and not callable(value):
            continue  # constants: documented where the module's docstring lists them
        if not inspect.getdoc(value):
            missing.append(f"{module.__name__}.{name}")
        if isinstance(value, type) and value.__module__.startswith("tpevent"):
            for attribute in public(vars(value)):
                member = inspect.getattr_static(value, attribute)
                if callable(member) or isinstance(member, (classmethod, staticmethod)):  # methods; slots are the class's
                    doc = getattr(member, "__doc__", None)
                    if not doc or not doc.strip():
                        missing.append(f"{module.__name__}.{name}.{attribute}")
    return missing


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    output = sys.argv[2]
    os.makedirs(output, exist_ok=True)
    tpevent = importlib.import_module("tpevent")
    names = list(MODULES) + [f"tpevent.{n}" for n in public(dir(tpevent)) if inspect.ismodule(getattr(tpevent, n))]
    missing = []
    for name in names:
        module = importlib.import_module(name) if name in MODULES else eval(name, {"tpevent": tpevent})
        missing += undocumented(module)
        page = pydoc.html.page(pydoc.describe(module), pydoc.html.document(module, name))
        with open(os.path.join(output, name + ".html"), "w", encoding="utf-8") as f:
            f.write(page)
    for name in sorted(set(missing)):
        print(f"python_reference.py: warning: {name} has no docstring")
    print(f"python_reference.py: {len(names)} modules written to {output}, {len(set(missing))} names undocumented")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
