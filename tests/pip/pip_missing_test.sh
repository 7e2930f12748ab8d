#!/usr/bin/env bash
# pip.missing_build_packages: offline (`pip install --no-build-isolation --no-index .`),
# a Python without the wheel package, then without setuptools, is stopped at once by
# python/pip_backend with a message that names the missing package and says how to get
# it (online and offline); no CMake build starts. Each PYTHON given gets a venv of its
# own made without the system's site-packages (so without Debian's python3-wheel; a
# venv's ensurepip brings setuptools up to Python 3.11 only: after, the wheel step is
# skipped with the reason and the setuptools step runs).
#
#   pip_missing_test.sh SOURCE_DIR PYTHON...
#
# Exits 77 (skipped) with the reason when no PYTHON makes a venv with pip, unless
# TPEVENT_REQUIRE_PIP_TEST=1 (set by .ci/run), which makes that a failure.
set -euo pipefail

source_dir=$1
shift

work=$(mktemp -d "${TMPDIR:-/tmp}/tpevent-pip-missing.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset PYTHONPATH PYTHONHOME PIP_INDEX_URL PIP_FIND_LINKS

fail() { echo "pip missing test: FAIL: $*" >&2; exit 1; }
note() { echo "pip missing test: $*"; }

# Runs the offline install in `venv`; it must fail at once, naming `package`.
expect_refusal() {
  local venv=$1 package=$2 log=$work/install.log
  if (cd / && timeout 120 "$venv/bin/python" -m pip install --no-build-isolation --no-index --no-cache-dir \
      --disable-pip-version-check "$source_dir") >"$log" 2>&1; then
    cat "$log"
    fail "pip install succeeded in a venv without $package"
  fi
  grep -q "needs the Python package '$package'" "$log" || { cat "$log"; fail "no message naming '$package'"; }
  grep -q "Online: .*pip install" "$log" || { cat "$log"; fail "the message says nothing of the online way"; }
  grep -q "Offline: .*python3-$package" "$log" || { cat "$log"; fail "the message says nothing of the offline way"; }
  ! grep -q "invalid command 'bdist_wheel'\|setup.py: cmake" "$log" || { cat "$log"; fail "the build went on"; }
  note "$(basename "$venv"): refused, naming '$package':"
  sed -n "s/^ *\(tpevent: building a wheel.*\)/  \1/p" "$log"
}

ran=0
for python in "$@"; do
  [ -x "$python" ] || { note "$python: not found, not tried"; continue; }
  venv=$work/venv-$ran-$(basename "$python")
  if ! "$python" -m venv "$venv" >"$work/venv.log" 2>&1 || [ ! -x "$venv/bin/pip" ]; then
    note "$python: no venv with pip (Debian: apt-get install python3-venv), not tried"
    continue
  fi
  "$venv/bin/python" -m pip uninstall -y -q wheel >/dev/null 2>&1 || true
  if "$venv/bin/python" -c 'import setuptools, sys
try:
    import setuptools.command.bdist_wheel
except ImportError:
    sys.exit(0)
sys.exit(1)' 2>/dev/null; then
    expect_refusal "$venv" wheel
  else
    note "$python: its venv has no setuptools, or one that builds wheels itself: the wheel case is not tried"
  fi
  "$venv/bin/python" -m pip uninstall -y -q setuptools >/dev/null 2>&1 || true
  expect_refusal "$venv" setuptools
  ran=$((ran + 1))
done

if [ "$ran" = 0 ]; then
  [ "${TPEVENT_REQUIRE_PIP_TEST:-0}" = 1 ] && fail "no Python of '$*' makes a venv with pip"
  echo "SKIP: no Python of '$*' makes a venv with pip (Debian: apt-get install python3-venv)"
  exit 77
fi
printf '\npip missing test: passed (%d Python%s)\n' "$ran" "$([ "$ran" = 1 ] || echo s)"
