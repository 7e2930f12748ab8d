"""The type stubs (tpevent/__init__.pyi, tpevent/_tpevent.pyi) against the module
they describe: the same public names in __all__, in the module and in the stubs,
and the same public methods and attributes in each class. The stubs are read with
ast, from the package that is imported (the build tree's copy, or the installed
one), so that a name added to the C extension or to __init__.py without its stub
fails here."""

import ast
import inspect
import os
import types
import unittest

import tpevent
from tpevent_testing import run

PACKAGE_DIR = os.path.dirname(tpevent.__file__)

# Dunders that are part of a class's interface (protocols), compared like public
# names when the class defines them itself; the others (__repr__, __reduce__, the
# wrappers CPython makes for a slot such as __rsub__ or __lt__) are not.
PROTOCOL_DUNDERS = {"__enter__", "__exit__", "__cuda_stream__", "__sub__", "__eq__", "__hash__", "__call__"}

# Submodules are attributes of the package once imported, not names it exports.
SUBMODULES = {"timeline", "timeit"}


def parse_stub(name):
    with open(os.path.join(PACKAGE_DIR, name), encoding="utf-8") as f:
        return ast.parse(f.read(), filename=name)


def is_public(name):
    return not name.startswith("_")


def stub_names(tree):
    """The names a stub module defines at its top level. A module-level __getattr__
    stands for the namespaces, one per device type, which the stubs do not write out
    (a new type needs no line): it defines the names of tpevent._tpevent._device_types."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            names.update(tpevent._tpevent._device_types)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            # `from ._tpevent import X as X` re-exports X (PEP 484); `import X` alone does not.
            names.update(alias.asname for alias in node.names if alias.asname == alias.name)
    return names


def stub_classes(tree):
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def stub_members(class_node):
    """{name: 'property' | 'method' | 'attribute'} of a stub class."""
    members = {}
    for node in class_node.body:
        if isinstance(node, ast.FunctionDef):
            decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
            members[node.name] = "property" if "property" in decorators else "method"
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            members[node.target.id] = "attribute"
    members.pop("__init__", None)
    return members


def module_members(cls, instance=None):
    """{name: 'method' | 'attribute'} of a class of the module: its public names, the
    protocol dunders it defines itself, and the attributes `instance` was given."""
    names = {n for n in dir(cls) if is_public(n)}
    protocols = {n for n in PROTOCOL_DUNDERS if n in vars(cls)}
    members = {n: "attribute" for n in vars(instance) if is_public(n)} if hasattr(instance, "__dict__") else {}
    for name in names | protocols:
        value = inspect.getattr_static(cls, name)
        routine = inspect.isroutine(value) or isinstance(value, (classmethod, staticmethod))
        # Stream.__cuda_stream__ is an attribute only so that non-CUDA streams lack it.
        members[name] = "method" if routine or name in protocols else "attribute"
    return members


class StubTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.package_stub = parse_stub("__init__.pyi")
        cls.extension_stub = parse_stub("_tpevent.pyi")
        cls.classes = stub_classes(cls.extension_stub) | stub_classes(cls.package_stub)

    def test_all_is_every_public_name_of_the_package(self):
        public = {n for n in dir(tpevent) if is_public(n)} - SUBMODULES
        self.assertEqual(sorted(public - set(tpevent.__all__)), [], "public names missing from __all__")
        self.assertEqual(sorted(set(tpevent.__all__) - public), [], "names in __all__ the package lacks")
        self.assertEqual(len(tpevent.__all__), len(set(tpevent.__all__)), "a name twice in __all__")

    def test_package_stub_has_every_name_of_all(self):
        stubbed = {n for n in stub_names(self.package_stub) if is_public(n)}
        self.assertEqual(sorted(set(tpevent.__all__) - stubbed), [], "in __all__, not in __init__.pyi")
        self.assertEqual(sorted(stubbed - set(tpevent.__all__)), [], "in __init__.pyi, not in __all__")

    def test_extension_stub_has_every_name_of_the_extension(self):
        extension = {n for n in dir(tpevent._tpevent) if is_public(n)}
        stubbed = {n for n in stub_names(self.extension_stub) if is_public(n)}
        self.assertEqual(sorted(extension - stubbed), [], "in tpevent._tpevent, not in _tpevent.pyi")
        self.assertEqual(sorted(stubbed - extension), [], "in _tpevent.pyi, not in tpevent._tpevent")

    def check_class(self, name, cls, instance=None):
        self.assertIn(name, self.classes, f"no stub of class {name}")
        stubbed = stub_members(self.classes[name])
        actual = module_members(cls, instance)
        self.assertEqual(sorted(set(actual) - set(stubbed)), [], f"{name}: members missing from its stub")
        self.assertEqual(sorted(set(stubbed) - set(actual)), [], f"{name}: stubbed members it lacks")
        for member, kind in actual.items():
            with self.subTest(member=f"{name}.{member}"):
                # A property or an annotated attribute of the stub is an attribute here.
                self.assertEqual(kind == "method", stubbed[member] == "method", f"{name}.{member}: {kind}")

    def test_classes(self):
        for name in ("Event", "Stream", "Graph", "range", "Measurement"):
            with self.subTest(cls=name):
                self.check_class(name, getattr(tpevent, name))
        self.check_class("graph", tpevent.graph, tpevent.graph(tpevent.Graph()))

    def test_result_tuples(self):
        # BackendInfo and ClockInfo are struct sequences; the stub's NamedTuple fields
        # are their fields, in order.
        for name in ("BackendInfo", "ClockInfo"):
            with self.subTest(cls=name):
                cls = getattr(tpevent, name)
                fields = [n for n, v in vars(cls).items() if isinstance(v, types.MemberDescriptorType)]
                stubbed = [n.target.id for n in self.classes[name].body if isinstance(n, ast.AnnAssign)]
                self.assertEqual(stubbed, fields)

    def test_errors(self):
        for name in ("Error", "NotRecordedError"):
            with self.subTest(cls=name):
                self.assertIn(name, self.classes)
        self.assertEqual(set(stub_members(self.classes["Error"])), {"status"})
        self.assertIsNone(tpevent.Error("message").status)

    def test_namespaces(self):
        stubbed = set(stub_members(self.classes["_Namespace"]))
        for namespace in (tpevent.cpu, tpevent.cuda, tpevent.hip):
            with self.subTest(namespace=namespace.__name__):
                actual = {n for n in dir(namespace) if is_public(n)}
                self.assertEqual(sorted(actual - stubbed), [], "missing from _Namespace")
                self.assertEqual(sorted(stubbed - actual), [], "in _Namespace, not in the namespace")


if __name__ == "__main__":
    run()
