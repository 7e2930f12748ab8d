#!/usr/bin/env bash
# The Python way in, offline, as README.md gives it: in a fresh venv of Debian's
# python3 made with --system-site-packages (python3-setuptools, python3-wheel),
# `pip install --no-build-isolation .` of this source tree, then from / with a clean
# environment: the package imports from the venv, loads the libtpevent inside it,
# records and times CPU events, finds the backend modules and the module probe inside
# it; `pip show` knows it; `pip wheel .` gives one self-contained wheel; and
# `pip uninstall -y tpevent` leaves the venv file for file as it was before.
#
#   pip_install_test.sh PYTHON SOURCE_DIR VERSION SOVERSION HAVE_CUDA HAVE_HIP [CMAKE_ARG]...
#
# HAVE_CUDA, HAVE_HIP (1/0): whether the package must have the module, and must not
# where 0 (CMAKE_ARGS passes this build's compiler and TPEVENT_CUDA on; HIP is left out
# unless CMAKE_ARGS asks for it). The wheel's metadata (license, author, Requires-Python)
# and its LICENSE are checked too.
# Exits 77 (skipped) with the reason when the Debian packages it needs are missing,
# unless TPEVENT_REQUIRE_PIP_TEST=1 (set by .ci/run), which makes that a failure.
set -euo pipefail

python=$1
source_dir=$2
version=$3
soversion=$4
have_cuda=$5
have_hip=$6
shift 6
cmake_args=("$@")

work=$(mktemp -d "${TMPDIR:-/tmp}/tpevent-pip-test.XXXXXX")
failed=1
cleanup() {
  if [ "$failed" = 0 ]; then
    rm -rf "$work"
  else
    echo "pip test: FAILED; its files are kept in $work" >&2
  fi
}
trap cleanup EXIT

step() { printf '\n=== %s\n' "$*"; }
fail() { echo "pip test: FAIL: $*" >&2; exit 1; }
note() { echo "pip test: $*"; }
skip() {
  if [ "${TPEVENT_REQUIRE_PIP_TEST:-0}" = 1 ]; then
    fail "$* (TPEVENT_REQUIRE_PIP_TEST=1: this test must run here)"
  fi
  echo "SKIP: $*"
  failed=0
  exit 77
}
run_logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "command failed: $*"
  fi
}

# What runs below finds things by itself: no variable of ours, no library path.
for variable in $(env | sed -n 's/^\(TPEVENT_[A-Za-z0-9_]*\)=.*/\1/p'); do
  [ "$variable" = TPEVENT_REQUIRE_PIP_TEST ] || unset "$variable"
done
unset LD_LIBRARY_PATH PYTHONPATH PYTHONHOME PYTHONDONTWRITEBYTECODE PIP_INDEX_URL PIP_FIND_LINKS

step "prerequisites: $python, venv, setuptools, wheel, Python.h, cmake"
[ -x "$python" ] || skip "no $python (Debian: apt-get install python3)"
venv=$work/venv
if ! "$python" -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1; then
  skip "$python -m venv failed (Debian: apt-get install python3-venv): $(tail -n 3 "$work/venv.log")"
fi
vpython=$venv/bin/python
# setuptools builds wheels itself from 70.1 on; before, with the wheel package.
"$vpython" -c '
try:
    import setuptools.command.bdist_wheel
except ImportError:
    import wheel.bdist_wheel' 2>"$work/import.log" ||
  skip "no setuptools or wheel for $python, which an offline build needs ($(tail -n 1 "$work/import.log"); Debian's python3-setuptools and python3-wheel serve /usr/bin/python3 only)"
"$vpython" -c 'import os, sys, sysconfig
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
  skip "no Python.h for $python (Debian: apt-get install python3-dev)"
command -v cmake >/dev/null || fail "cmake is not on PATH"
site=$("$vpython" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
note "venv $venv, site-packages $site, $("$vpython" -m pip --version)"

snapshot() { (cd "$venv" && find . -print | LC_ALL=C sort); }
snapshot >"$work/before.txt"
touch "$work/stamp"

export TPEVENT_PYTHON_BUILD_DIR=$work/build
export CMAKE_ARGS="${cmake_args[*]}"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
# --no-index: nothing may come from a package index (there is none here).
pip_offline=(--no-build-isolation --no-index --no-cache-dir --disable-pip-version-check)

step "pip install --no-build-isolation $source_dir (CMAKE_ARGS: $CMAKE_ARGS)"
run_logged "$work/pip-install.log" "$vpython" -m pip install "${pip_offline[@]}" "$source_dir"
grep -E '^(setup.py:|Successfully)' "$work/pip-install.log"

# Everything pip and setuptools wrote went to TPEVENT_PYTHON_BUILD_DIR and the venv, but
# the bytecode of pyproject.toml's in-tree backend, which Python writes as it imports it
# (git ignores __pycache__).
written=$(cd "$source_dir" && find . \( -path ./.git -o -path './build*' -o -path ./python/pip_backend/__pycache__ \) \
  -prune -o ! -path ./python/pip_backend -newer "$work/stamp" -print | head -n 20)
[ -z "$written" ] || fail "pip install wrote into the source tree: $written"

step "pip show"
"$vpython" -m pip show -f tpevent >"$work/show.txt" || fail "pip show tpevent failed"
cat "$work/show.txt"
grep -qx 'Name: tpevent' "$work/show.txt" || fail "pip show: no 'Name: tpevent'"
grep -qx "Version: $version" "$work/show.txt" || fail "pip show: version is not $version"
grep -qx "Location: $site" "$work/show.txt" || fail "pip show: not installed in $site"
expected_files=(tpevent/__init__.py tpevent/__init__.pyi tpevent/_tpevent.pyi tpevent/py.typed
                "tpevent/lib/libtpevent.so.$soversion"
                tpevent/libexec/tpevent/tpevent-module-probe)
[ "$have_cuda" = 1 ] && expected_files+=(tpevent/lib/libtpevent-cuda.so)
[ "$have_hip" = 1 ] && expected_files+=(tpevent/lib/libtpevent-hip.so)
for file in "${expected_files[@]}"; do
  grep -qx "  $file" "$work/show.txt" || fail "pip show -f does not list $file"
  [ -f "$site/$file" ] || fail "$file is listed but not in $site"
done
grep -qE '^  tpevent/_tpevent\..*\.so$' "$work/show.txt" || fail "pip show -f lists no extension"
for backend in cuda hip; do
  have=$have_cuda
  [ "$backend" = hip ] && have=$have_hip
  if [ "$have" != 1 ] && [ -e "$site/tpevent/lib/libtpevent-$backend.so" ]; then
    fail "the package has a $backend module, which it should not have (HAVE_${backend^^}=0)"
  fi
done

step "the package is self-contained"
package=$site/tpevent
links=$(find "$package" -type l)
[ -z "$links" ] || fail "links in the package (a wheel stores copies): $links"
if command -v readelf >/dev/null 2>&1; then
  extension=$(ls "$package"/_tpevent.*.so)
  runpath=$(readelf -d "$extension" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p;s/.*(RPATH).*\[\(.*\)\]/\1/p')
  [ "$runpath" = '$ORIGIN/lib' ] || fail "the extension's run path is '$runpath', not \$ORIGIN/lib"
  # No runtime dependency to bundle: the C library and the loader only (libpthread,
  # libdl and libm on a glibc older than 2.34). The CUDA module links its runtime
  # statically and finds the driver at run time; HIP's module needs ROCm's runtime, and
  # OpenCL's the ICD loader (libOpenCL.so.1), which comes with every OpenCL driver.
  for library in "$package"/lib/*.so*; do
    needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    note "$(basename "$library") needs: $needed"
    for dependency in $needed; do
      case $dependency in
        libc.so.* | ld-linux*.so.* | libpthread.so.* | libdl.so.* | libm.so.* | librt.so.*) ;;
        libamdhip64.so.*) [[ $library == */libtpevent-hip.so ]] || fail "$library needs $dependency" ;;
        libOpenCL.so.*) [[ $library == */libtpevent-opencl.so ]] || fail "$library needs $dependency" ;;
        libvulkan.so.*) [[ $library == */libtpevent-vulkan.so ]] || fail "$library needs $dependency" ;;
        *) fail "$(basename "$library") needs $dependency, which the package does not bundle" ;;
      esac
    done
  done
else
  note "readelf not found: run path and dependencies not checked"
fi

step "import from /, clean environment"
check_import='
import os, sys, tpevent
site = sys.argv[1]
package = os.path.join(site, "tpevent")
assert tpevent.__file__ == os.path.join(package, "__init__.py"), tpevent.__file__
assert tpevent.__version__ == sys.argv[2], tpevent.__version__
stream = tpevent.Stream("cpu")
start = stream.record_event()
stream.synchronize()
end = tpevent.Event("cpu", enable_timing=True)
end.record(stream)
end.synchronize()
assert start.query() and end.query()
ms = start.elapsed_time(end)
assert isinstance(ms, float) and ms >= 0.0, ms
with open("/proc/self/maps") as maps:
    loaded = {line.split()[-1] for line in maps if "/libtpevent" in line}
core = [path for path in loaded if "/libtpevent.so" in path]
assert core == [os.path.join(package, "lib", "libtpevent.so." + sys.argv[3])], loaded
for info in tpevent.backends():
    if info.name == "cpu":
        assert info.available and info.built_in, info
    elif os.path.exists(os.path.join(package, "lib", "libtpevent-%s.so" % info.name)):
        assert info.module_path == os.path.join(package, "lib", "libtpevent-%s.so" % info.name), info
        assert "TPEVENT_PROBE_MODULES is set but" not in (info.reason or ""), info
    print("backend %s: available %s, %s" % (info.name, info.available, info.reason or info.module_path))
print("cpu events recorded and timed: %.6f ms; libtpevent from %s" % (ms, core[0]))
'
clean_env=(env -i "PATH=$PATH" "HOME=${HOME:-/}" LANG=C.UTF-8)
(cd / && "${clean_env[@]}" "$vpython" -c "$check_import" "$site" "$version" "$soversion") ||
  fail "the installed package does not work from /"
# The module probe in the package is found where the core looks for it.
(cd / && "${clean_env[@]}" TPEVENT_PROBE_MODULES=1 "$vpython" -c "$check_import" "$site" "$version" "$soversion") >/dev/null ||
  fail "the installed package does not work from / with TPEVENT_PROBE_MODULES=1"
mkdir -p "$work/elsewhere"
(cd "$work/elsewhere" && "${clean_env[@]}" "$vpython" -c 'import tpevent; tpevent.Stream("cpu").synchronize()') ||
  fail "the installed package does not import from $work/elsewhere"

step "pip wheel --no-build-isolation $source_dir"
run_logged "$work/pip-wheel.log" "$vpython" -m pip wheel "${pip_offline[@]}" --no-deps -w "$work/wheels" "$source_dir"
wheels=("$work"/wheels/tpevent-"$version"-*.whl)
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || fail "pip wheel made no single tpevent-$version wheel: $(ls "$work/wheels")"
"$vpython" - "${wheels[0]}" "$soversion" "$have_cuda" "$have_hip" <<'EOF' || fail "the wheel is not what it should be"
import sys, zipfile
wheel, soversion, have_cuda, have_hip = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
print("wheel:", wheel.rsplit("/", 1)[-1])
for name in names:
    print("  " + name)
outside = [n for n in names if not (n.startswith("tpevent/") or n.startswith("tpevent-"))]
assert not outside, f"files outside the package: {outside}"
expected = {"tpevent/__init__.py", "tpevent/__init__.pyi", "tpevent/_tpevent.pyi", "tpevent/py.typed",
            f"tpevent/lib/libtpevent.so.{soversion}",
            "tpevent/libexec/tpevent/tpevent-module-probe"}
if have_cuda == "1":
    expected.add("tpevent/lib/libtpevent-cuda.so")
if have_hip == "1":
    expected.add("tpevent/lib/libtpevent-hip.so")
missing = expected - set(names)
assert not missing, f"missing from the wheel: {missing}"
assert [n for n in names if n.startswith("tpevent/_tpevent.") and n.endswith(".so")], "no extension"
assert len(names) == len(set(names)), "a file twice"
licenses = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
assert licenses, "no LICENSE in the wheel's .dist-info"
metadata = zipfile.ZipFile(wheel).read([n for n in names if n.endswith(".dist-info/METADATA")][0]).decode()
fields = [line for line in metadata.splitlines() if ": " in line]
for wanted in ("Author: tpevent developers", "Requires-Python: >=3.9",
               "Classifier: License :: OSI Approved :: Apache Software License"):
    assert wanted in fields, f"the METADATA has no '{wanted}'"
assert [f for f in fields if f in ("License: Apache-2.0", "License-Expression: Apache-2.0")], "no license in METADATA"
print("metadata:", "; ".join(f for f in fields if f.split(":")[0] in ("License", "License-Expression", "Author", "Requires-Python")))
EOF

step "pip uninstall -y tpevent"
run_logged "$work/pip-uninstall.log" "$vpython" -m pip uninstall -y tpevent
cat "$work/pip-uninstall.log"
snapshot >"$work/after.txt"
if ! diff -u "$work/before.txt" "$work/after.txt"; then
  fail "pip uninstall left the venv different from before the install (diff above)"
fi
if (cd / && "${clean_env[@]}" "$vpython" -c 'import tpevent' 2>/dev/null); then
  fail "tpevent still imports after pip uninstall"
fi
note "every file installed was removed"

failed=0
printf '\npip test: passed\n'
