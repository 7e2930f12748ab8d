"""pip's way in: `pip install .` / `pip wheel .` build the Python package with CMake.

setuptools (pyproject.toml's build backend, which Debian packages) drives the
project's own CMake build, so that the package is built exactly as `cmake --build`
builds it: one configure of the source tree in Release with TPEVENT_PYTHON_BUNDLE=ON,
the target tpevent_python_all (the extension, libtpevent, the backend modules found
on this machine, the module probe), then `cmake --install --component python` into
setuptools' build folder. The result is one self-contained package (see
python/CMakeLists.txt for its layout): the extension finds tpevent/lib/libtpevent.so.*
through $ORIGIN, the core finds the modules next to itself.

The HIP module is left out unless asked for (CMAKE_ARGS="-DTPEVENT_HIP=ON"): it needs
ROCm's libamdhip64.so.5 at run time, which a build machine may have and the machines
the wheel goes to mostly do not. The CUDA module links its runtime statically and needs
only the NVIDIA driver, so it goes in whenever the CUDA toolkit is found (AUTO).
The check that setuptools and wheel are there is python/pip_backend's, before this runs.

Environment:
  CMAKE_ARGS                  extra configure arguments, after (so over) this file's
                              (e.g. "-DTPEVENT_HIP=ON -DTPEVENT_CUDA=OFF
                              -DCMAKE_C_COMPILER=clang"), split like a shell does
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: the number of CPUs)
  TPEVENT_PYTHON_BUILD_DIR    where setuptools and CMake build (default: build-python/
                              in the source tree)
Needs CMake >= 3.25 and a C compiler on PATH, and the interpreter's headers
(Debian: python3-dev).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = Path(__file__).resolve().parent
BUILD_DIR = Path(os.environ.get("TPEVENT_PYTHON_BUILD_DIR") or SOURCE_DIR / "build-python").resolve()


def project_version():
    """The version in CMakeLists.txt's project(), the one source of it."""
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*tpevent\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    if not match:
        sys.exit("setup.py: no project(tpevent VERSION x.y.z) in CMakeLists.txt")
    return match.group(1)


class CMakeExtension(Extension):
    """The extension tpevent._tpevent, built by CMake rather than by setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def run(self):
        if shutil.which("cmake") is None:
            sys.exit("setup.py: cmake not found on PATH (CMake >= 3.25; Debian: apt-get install cmake)")
        super().run()

    def build_extension(self, ext):
        if self.inplace:
            sys.exit("setup.py: editable installs are not supported; use `pip install .`, or the "
                     "CMake build tree's package (PYTHONPATH=build/lib/python3.X/site-packages)")
        # build/lib.<platform>/tpevent/_tpevent.<soabi>.so: the package's parent is the
        # prefix the python component is installed into.
        package_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        prefix = package_dir.parent
        cmake_dir = Path(self.build_temp).resolve() / "cmake"
        self.forget_other_interpreter(cmake_dir)

        configure = [
            "cmake", "-S", str(SOURCE_DIR), "-B", str(cmake_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_TESTING=OFF",
            "-DTPEVENT_PYTHON=ON",
            "-DTPEVENT_PYTHON_BUNDLE=ON",
            "-DTPEVENT_HIP=OFF",
            # STRING: a relative PATH on the command line would be made absolute.
            "-DTPEVENT_PYTHON_INSTALL_DIR:STRING=.",
            f"-DPython3_EXECUTABLE={sys.executable}",
            *shlex.split(os.environ.get("CMAKE_ARGS", "")),
        ]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        build = ["cmake", "--build", str(cmake_dir), "--target", "tpevent_python_all",
                 "--parallel", jobs]
        install = ["cmake", "--install", str(cmake_dir), "--component", "python",
                   "--prefix", str(prefix)]
        for command in (configure, build, install):
            print("setup.py:", shlex.join(command), flush=True)
            subprocess.run(command, check=True)

        # A wheel stores a link as a copy of its file: there must be none.
        links = [str(path) for path in package_dir.rglob("*") if path.is_symlink()]
        if links:
            sys.exit(f"setup.py: links in the package, which a wheel would duplicate: {links}")
        ext_file = Path(self.get_ext_fullpath(ext.name))
        if not ext_file.is_file():
            sys.exit(f"setup.py: CMake did not install {ext_file}")

    @staticmethod
    def forget_other_interpreter(cmake_dir):
        """A build folder configured for another interpreter (another venv) starts over."""
        cache = cmake_dir / "CMakeCache.txt"
        if not cache.is_file():
            return
        match = re.search(r"^Python3_EXECUTABLE:[A-Z]+=(.*)$", cache.read_text(), re.M)
        if match and match.group(1) != sys.executable:
            shutil.rmtree(cmake_dir)


# egg_info wants its folder to exist.
BUILD_DIR.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    license="Apache-2.0",
    license_files=["LICENSE"],
    packages=["tpevent"],
    package_dir={"tpevent": "python/tpevent"},
    ext_modules=[CMakeExtension("tpevent._tpevent")],
    cmdclass={"build_ext": CMakeBuild},
    # Everything setuptools writes goes under one folder, never into the sources.
    options={
        "build": {"build_base": str(BUILD_DIR)},
        "egg_info": {"egg_base": str(BUILD_DIR)},
    },
    zip_safe=False,
)
