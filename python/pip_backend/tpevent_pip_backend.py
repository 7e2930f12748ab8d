"""pip's build backend for tpevent: setuptools' own, once this Python is known to have it.

pyproject.toml names this module (backend-path) so that a missing build package is
said at once, by name, with the way to get it. Without it pip, offline with
--no-build-isolation (nothing can be fetched), runs setuptools without the wheel
package and ends in "error: invalid command 'bdist_wheel'", or cannot import
setuptools.build_meta at all, and says neither what is missing nor where to get it.
"""
import sys

SETUPTOOLS_MIN = (61, 0)  # the first to read pyproject.toml's [project] table


def missing_package():
    """The build package this Python lacks ("setuptools" or "wheel"), with what it has; None when none."""
    try:
        import setuptools
    except ImportError:
        return "setuptools", "no setuptools"
    version = tuple(int(part) for part in setuptools.__version__.split(".")[:2] if part.isdigit())
    if version < SETUPTOOLS_MIN:
        return "setuptools", f"setuptools {setuptools.__version__}, older than 61"
    # Where setuptools looks for the command: its own entry point from 70.1 on, the wheel
    # distribution's before (an importable wheel module without its metadata is not found).
    from importlib.metadata import entry_points
    points = entry_points()
    commands = points.select(group="distutils.commands") if hasattr(points, "select") else points.get(
        "distutils.commands", [])
    if not any(point.name == "bdist_wheel" for point in commands):
        return "wheel", f"setuptools {setuptools.__version__} but no wheel package"
    return None


def refuse(package, found):
    raise SystemExit(
        f"tpevent: building a wheel needs the Python package '{package}', which {sys.executable} "
        f"does not have ({found}).\n"
        f"  Online: `{sys.executable} -m pip install .` without --no-build-isolation (pip fetches "
        f"setuptools and wheel for the build), or `{sys.executable} -m pip install {package}` first.\n"
        f"  Offline: your distribution's package for this Python (Debian/Ubuntu: `apt-get install "
        f"python3-setuptools python3-wheel`, which serve Debian's /usr/bin/python3 only), then with "
        f"that Python: `/usr/bin/python3 -m venv --system-site-packages venv && "
        f"venv/bin/pip install --no-build-isolation .` (README.md, Python).")


problem = missing_package()
if problem:
    refuse(*problem)

from setuptools.build_meta import *  # noqa: E402,F401,F403  the hooks pip calls
