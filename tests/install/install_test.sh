#!/usr/bin/env bash
# The install test: does an installed tpevent work for another project?
#
#   install_test.sh CONFIG_FILE installed   installs this build into a temp prefix
#   install_test.sh CONFIG_FILE static      configures, builds and installs a second
#                                           tree of the sources with TPEVENT_STATIC=ON
# then, against the prefix and from outside the source tree:
#   - checks the files (header, library and SONAME, modules, package files);
#   - checks the CMake package (version, components, a missing component fails);
#   - builds examples/ with find_package and with pkg-config, and runs them;
#   - builds and runs a probe that asks the installed core about each backend (a
#     module must be found next to the installed library, with no TPEVENT_* set);
#   - runs the installed `tpevent devices` and checks its cuda and hip rows;
#   - checks that the Python package was installed, when it is built.
# A piece of the project that does not exist yet (tool, binding) is reported and its
# step left out; everything else still runs. CONFIG_FILE (written by CMakeLists.txt)
# says what this build has.
set -euo pipefail

config_file=$1
mode=$2
# shellcheck source=/dev/null
. "$config_file"

# What runs below must find things by itself: no TPEVENT_* variable, no library path.
for variable in $(env | sed -n 's/^\(TPEVENT_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$variable"
done
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH

work=$(mktemp -d "${TMPDIR:-/tmp}/tpevent-install-test.XXXXXX")
failed=1
cleanup() {
  if [ "$failed" = 0 ]; then
    rm -rf "$work"
  else
    echo "install test: FAILED; its files are kept in $work" >&2
  fi
}
trap cleanup EXIT

step() { printf '\n=== %s\n' "$*"; }
fail() { echo "install test: FAIL: $*" >&2; exit 1; }
note() { echo "install test: $*"; }

# Quiet unless it fails: then the whole output, so that CTest shows why.
run_logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "command failed: $*"
  fi
}

# Compile and link flags for the consumers: a sanitized tpevent needs sanitized
# programs (the runtime must come first).
san_flags=""
if [ -n "$SANITIZE" ]; then
  san_flags="-fsanitize=$SANITIZE -fno-omit-frame-pointer"
fi

cmake_consumer_args=(
  -G "$GENERATOR"
  -DCMAKE_C_COMPILER="$C_COMPILER"
  -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
  "-DCMAKE_C_FLAGS=-Werror $san_flags"
  "-DCMAKE_EXE_LINKER_FLAGS=$san_flags"
)

# ---------------------------------------------------------------- the prefix

build_dir=$BUILD_DIR
static=$STATIC
if [ "$mode" = static ]; then
  step "configure and build a second tree with TPEVENT_STATIC=ON"
  build_dir=$work/static-build
  run_logged "$work/static-configure.log" "$CMAKE" -S "$SOURCE_DIR" -B "$build_dir" \
    -G "$GENERATOR" -DCMAKE_C_COMPILER="$C_COMPILER" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DTPEVENT_STATIC=ON -DBUILD_TESTING=OFF -DTPEVENT_PYTHON=OFF \
    -DTPEVENT_CUDA="$( [ "$HAVE_CUDA" = 1 ] && echo ON || echo OFF )" \
    -DTPEVENT_HIP="$( [ "$HAVE_HIP" = 1 ] && echo ON || echo OFF )" \
    -DTPEVENT_OPENCL="$( [ "$HAVE_OPENCL" = 1 ] && echo ON || echo OFF )" \
    -DTPEVENT_VULKAN="$( [ "$HAVE_VULKAN" = 1 ] && echo ON || echo OFF )" \
    -DTPEVENT_SANITIZE="$SANITIZE" -DTPEVENT_WERROR="$WERROR"
  grep 'tpevent: backends' "$work/static-configure.log" || true
  run_logged "$work/static-build.log" "$CMAKE" --build "$build_dir" --parallel 2
  static=1
elif [ "$mode" != installed ]; then
  fail "unknown mode '$mode' (installed or static)"
fi

prefix=$work/prefix
libdir=$prefix/$LIBDIR
step "cmake --install $build_dir --prefix $prefix"
run_logged "$work/install.log" "$CMAKE" --install "$build_dir" --prefix "$prefix" --config "$BUILD_TYPE"
(cd "$prefix" && find . -type f -o -type l | sort | sed 's|^\./|  |' | grep -v '/__pycache__/' | head -60)

# What each backend should look like from the installed tree.
how() {
  local built=$1
  if [ "$built" != 1 ]; then
    echo absent
  elif [ "$static" = 1 ]; then
    echo builtin
  else
    echo module
  fi
}
cuda_how=$(how "$HAVE_CUDA")
hip_how=$(how "$HAVE_HIP")
opencl_how=$(how "$HAVE_OPENCL")
vulkan_how=$(how "$HAVE_VULKAN")
backend_how() {
  case $1 in
    cuda) echo "$cuda_how" ;;
    hip) echo "$hip_how" ;;
    opencl) echo "$opencl_how" ;;
    vulkan) echo "$vulkan_how" ;;
  esac
}
expected_backends=cpu
[ "$HAVE_CUDA" = 1 ] && expected_backends="$expected_backends;cuda"
[ "$HAVE_HIP" = 1 ] && expected_backends="$expected_backends;hip"
[ "$opencl_how" != absent ] && expected_backends="$expected_backends;opencl"
[ "$vulkan_how" != absent ] && expected_backends="$expected_backends;vulkan"
note "expected backends: $expected_backends (cuda: $cuda_how, hip: $hip_how, opencl: $opencl_how, vulkan: $vulkan_how)"

# ----------------------------------------------------------------- the files

step "installed files"
[ -f "$prefix/$INCLUDEDIR/tpevent/tpevent.h" ] || fail "no $INCLUDEDIR/tpevent/tpevent.h"
[ -f "$libdir/cmake/tpevent/tpeventConfig.cmake" ] || fail "no tpeventConfig.cmake"
[ -f "$libdir/cmake/tpevent/tpeventConfigVersion.cmake" ] || fail "no tpeventConfigVersion.cmake"
[ -f "$libdir/cmake/tpevent/tpeventTargets.cmake" ] || fail "no tpeventTargets.cmake"
[ -f "$libdir/pkgconfig/tpevent.pc" ] || fail "no pkgconfig/tpevent.pc"
if [ "$static" = 1 ]; then
  [ -f "$libdir/libtpevent.a" ] || fail "static build: no libtpevent.a"
  [ ! -e "$libdir/libtpevent.so" ] || fail "static build: libtpevent.so installed too"
  for backend in cuda hip opencl vulkan; do
    [ ! -e "$libdir/libtpevent-$backend.so" ] || fail "static build: module libtpevent-$backend.so installed"
  done
else
  real=$libdir/libtpevent.so.$VERSION
  [ -f "$real" ] || fail "no libtpevent.so.$VERSION"
  [ -L "$libdir/libtpevent.so" ] || fail "libtpevent.so is not a link to the versioned file"
  [ -L "$libdir/libtpevent.so.$SOVERSION" ] || fail "no libtpevent.so.$SOVERSION link"
  if command -v readelf >/dev/null 2>&1; then
    soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "libtpevent.so.$SOVERSION" ] || fail "SONAME is '$soname', not libtpevent.so.$SOVERSION"
    note "SONAME $soname"
  else
    note "readelf not found: SONAME not checked"
  fi
  for backend in cuda hip opencl vulkan; do
    if [ "$(backend_how $backend)" = module ]; then
      [ -f "$libdir/libtpevent-$backend.so" ] || fail "module libtpevent-$backend.so not installed next to libtpevent.so"
      note "module libtpevent-$backend.so installed"
    fi
  done
fi

# Everything below builds from copies, so that nothing can reach into the sources.
cp -R "$SOURCE_DIR/examples" "$work/examples"
cp -R "$SOURCE_DIR/tests/install/probe" "$work/probe"
cp -R "$SOURCE_DIR/tests/install/components" "$work/components"

# ----------------------------------------------------------- CMake package

step "find_package: version, components, variables"
run_logged "$work/components.log" "$CMAKE" -S "$work/components" -B "$work/components-build" \
  "${cmake_consumer_args[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DMODE=variables \
  "-DEXPECT_BACKENDS=$expected_backends" -DEXPECT_VERSION="$VERSION" -DEXPECT_STATIC="$static"
grep 'components check passed' "$work/components.log"

for backend in cpu cuda hip opencl vulkan; do
  out=$work/required-$backend
  if "$CMAKE" -S "$work/components" -B "$out" "${cmake_consumer_args[@]}" \
      -DCMAKE_PREFIX_PATH="$prefix" -DMODE=required -DWANT=$backend >"$out.log" 2>&1; then
    case ";$expected_backends;" in
      *";$backend;"*) note "REQUIRED COMPONENTS $backend: found" ;;
      *) cat "$out.log" >&2; fail "REQUIRED COMPONENTS $backend was found, but $backend was not built" ;;
    esac
  else
    case ";$expected_backends;" in
      *";$backend;"*) cat "$out.log" >&2; fail "REQUIRED COMPONENTS $backend failed, but $backend was built" ;;
    esac
    # CMake wraps the message; join its lines before looking for it.
    message=$(tr -s ' \n' '  ' <"$out.log" | grep -o "does not have the backend(s) asked for: $backend\..*It was built with: [a-z, ]*" || true)
    [ -n "$message" ] ||
      { cat "$out.log" >&2; fail "REQUIRED COMPONENTS $backend failed without tpevent's message"; }
    note "REQUIRED COMPONENTS $backend: fails cleanly: $message"
  fi
done

# ----------------------------------------------------------------- examples

step "examples with find_package"
run_logged "$work/examples-configure.log" "$CMAKE" -S "$work/examples" -B "$work/examples-cmake" \
  "${cmake_consumer_args[@]}" -DCMAKE_PREFIX_PATH="$prefix"
grep -E 'tpevent [0-9]|CUDA toolkit not found' "$work/examples-configure.log" || true
run_logged "$work/examples-build.log" "$CMAKE" --build "$work/examples-cmake" --parallel 2
"$work/examples-cmake/time_cpu_work" || fail "time_cpu_work (CMake build) failed"
if [ "$static" = 1 ] && command -v readelf >/dev/null 2>&1; then
  needed=$(readelf -d "$work/examples-cmake/time_cpu_work")
  if grep -q 'NEEDED.*libtpevent' <<<"$needed"; then
    fail "static build: time_cpu_work needs libtpevent.so"
  fi
  note "static build: time_cpu_work needs no libtpevent.so"
fi
if [ -x "$work/examples-cmake/time_cuda_copy" ]; then
  output=$("$work/examples-cmake/time_cuda_copy") || fail "time_cuda_copy failed: $output"
  echo "$output"
  if ! grep -Eq '^cuda unavailable: .+|host->device: .* GB/s' <<<"$output"; then
    fail "time_cuda_copy printed neither 'cuda unavailable: <reason>' nor a copy rate"
  fi
elif [ "$HAVE_CUDA" = 1 ]; then
  fail "tpevent has CUDA but the example project did not build time_cuda_copy (CUDA toolkit not found?)"
else
  note "time_cuda_copy not built: no CUDA toolkit for the example project"
fi

step "examples with pkg-config"
if [ -z "$PKG_CONFIG" ] || [ -z "$MAKE" ]; then
  fail "pkg-config or make not found at configure time: install pkg-config and make"
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_version=$("$PKG_CONFIG" --modversion tpevent) || fail "pkg-config does not find tpevent"
[ "$pc_version" = "$VERSION" ] || fail "pkg-config says version $pc_version, not $VERSION"
note "pkg-config: tpevent $pc_version; --cflags: $("$PKG_CONFIG" --cflags tpevent);" \
  "--libs: $("$PKG_CONFIG" --libs tpevent); --static --libs: $("$PKG_CONFIG" --static --libs tpevent)"
mkdir -p "$work/examples-make"
run_logged "$work/examples-make.log" "$MAKE" -C "$work/examples-make" -f "$work/examples/Makefile" \
  PKG_CONFIG="$PKG_CONFIG" CC="$C_COMPILER" "CFLAGS=-O2 -g -Werror $san_flags" "LDFLAGS=$san_flags"
cat "$work/examples-make.log"
unset PKG_CONFIG_PATH
"$work/examples-make/time_cpu_work" || fail "time_cpu_work (pkg-config build) failed"

# ---------------------------------------------------- what the core finds

step "backend probe (find_package), no TPEVENT_* variable set"
run_logged "$work/probe-configure.log" "$CMAKE" -S "$work/probe" -B "$work/probe-build" \
  "${cmake_consumer_args[@]}" -DCMAKE_PREFIX_PATH="$prefix"
run_logged "$work/probe-build.log" "$CMAKE" --build "$work/probe-build"
"$work/probe-build/backend_probe" "$libdir" cpu=builtin cuda="$cuda_how" hip="$hip_how" opencl="$opencl_how" ||
  fail "the installed core does not see the backends as built"

step "installed tpevent devices, no TPEVENT_* variable set"
if [ "$HAVE_TOOL" != 1 ]; then
  note "step left out: there is no tpevent_tool target in this build yet"
elif [ ! -x "$prefix/$BINDIR/tpevent" ]; then
  fail "tpevent_tool is built but $BINDIR/tpevent was not installed"
else
  status=0
  output=$("$prefix/$BINDIR/tpevent" devices 2>&1) || status=$?
  echo "$output"
  # Exit 1 is a backend error (a device that fails its timer check), not a missing
  # module; the rows below are what this test is about.
  [ "$status" -le 1 ] || fail "tpevent devices exited with $status"
  for backend in cuda hip opencl vulkan; do
    row=$(grep -E "^$backend " <<<"$output" | head -n 1) || true
    [ -n "$row" ] || fail "tpevent devices has no $backend row"
    if [ "$(backend_how $backend)" = absent ]; then
      continue
    fi
    # backend  built  loaded  devices  status
    awk '{ exit !($2 == "yes") }' <<<"$row" ||
      fail "tpevent devices: $backend is built, but its row says it was not found: $row"
    grep -Eq 'available \(|unavailable: .+' <<<"$row" ||
      fail "tpevent devices: $backend: neither available nor a reason: $row"
    if grep -q 'module not found' <<<"$row"; then
      fail "tpevent devices: $backend: the installed core did not find its module: $row"
    fi
    note "tpevent devices: $backend found by the installed core"
  done
fi

# ---------------------------------------------------------------- Python

step "Python package"
if [ "$mode" = static ]; then
  note "step left out: the static tree is configured with TPEVENT_PYTHON=OFF"
elif [ -z "$PYTHON" ]; then
  note "step left out: this build has no Python binding (no tpevent_python target)"
else
  init=$(find "$prefix" -path '*/site-packages/tpevent/__init__.py' | head -n 1)
  [ -n "$init" ] || fail "the Python binding is built but no site-packages/tpevent/__init__.py was installed"
  site=${init%/tpevent/__init__.py}
  # The interpreter is not sanitized: a sanitized extension needs the runtimes
  # preloaded, and the interpreter's own allocations are not ours to judge.
  python_env=()
  python=$PYTHON
  if [ -n "$SANITIZE" ]; then
    # The interpreter itself, not a wrapper script (a pyenv shim is bash, which
    # does not survive a preloaded TSan runtime).
    python=$("$PYTHON" -c 'import sys; print(sys.executable)')
    preload=""
    for sanitizer in address:libasan.so undefined:libubsan.so thread:libtsan.so; do
      case ",$SANITIZE," in
        *",${sanitizer%%:*},"*) preload="$preload:$("$C_COMPILER" -print-file-name="${sanitizer#*:}")" ;;
      esac
    done
    python_env=("LD_PRELOAD=${preload#:}" "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
  fi
  # Imported from the prefix only (-s: no user site; run from $work), it must load
  # the installed libtpevent.so through its own run path.
  output=$(cd "$work" && env "${python_env[@]}" PYTHONPATH="$site" "$python" -s -c '
import sys, tpevent
print("tpevent package:", tpevent.__file__)
with open("/proc/self/maps") as maps:
    libs = sorted({line.split()[-1] for line in maps if "/libtpevent.so" in line})
print("libtpevent loaded:", " ".join(libs))
') || fail "the installed Python package does not import: $output"
  echo "$output"
  grep -q "^tpevent package: $site/tpevent/" <<<"$output" ||
    fail "python imported tpevent from somewhere else than $site"
  loaded=$(sed -n 's/^libtpevent loaded: //p' <<<"$output")
  if [ "$static" = 1 ]; then
    [ -z "$loaded" ] || fail "static build: the Python package loaded $loaded"
  elif [ -z "$loaded" ] || [ "$(realpath "$loaded")" != "$(realpath "$libdir/libtpevent.so.$VERSION")" ]; then
    fail "the installed Python package loaded '$loaded', not the installed libtpevent.so"
  fi

  # The python component alone is enough: it brings the library, the modules and
  # the probe the package loads (issue 13: it used to install a package that could
  # not find libtpevent.so).
  step "cmake --install --component python, alone, into a fresh prefix"
  python_prefix=$work/python-prefix
  run_logged "$work/install-python.log" "$CMAKE" --install "$build_dir" --prefix "$python_prefix" \
    --config "$BUILD_TYPE" --component python
  (cd "$python_prefix" && find . -type f -o -type l | sort | sed 's|^\./|  |' | grep -v '/__pycache__/')
  python_site=$python_prefix/${site#"$prefix"/}
  output=$(cd "$work" && env "${python_env[@]}" PYTHONPATH="$python_site" TPEVENT_PROBE_MODULES=1 "$python" -s -c '
import os, sys, tpevent
s = tpevent.Stream("cpu"); a = s.record_event(); b = s.record_event()
print("elapsed:", a.elapsed_time(b))
print("tpevent package:", tpevent.__file__)
with open("/proc/self/maps") as maps:
    libs = sorted({line.split()[-1] for line in maps if "/libtpevent.so" in line})
print("libtpevent loaded:", " ".join(libs))
for info in tpevent.backends():
    if info.module_path:
        print("module folder:", info.name, os.path.realpath(os.path.dirname(info.module_path)))
        assert "TPEVENT_PROBE_MODULES is set but" not in (info.reason or ""), info.reason
') || fail "the python component alone does not import: $output"
  echo "$output"
  grep -q "^tpevent package: $python_site/tpevent/" <<<"$output" ||
    fail "python imported tpevent from somewhere else than $python_site"
  loaded=$(sed -n 's/^libtpevent loaded: //p' <<<"$output")
  python_libdir=$(realpath "$python_prefix/$LIBDIR")
  if [ "$static" != 1 ]; then
    [ -n "$loaded" ] && [ "$(realpath "$loaded")" = "$(realpath "$python_libdir/libtpevent.so.$VERSION")" ] ||
      fail "the python component's package loaded '$loaded', not $python_libdir/libtpevent.so.$VERSION"
    for backend in cuda hip opencl vulkan; do
      [ "$(backend_how $backend)" = module ] || continue
      grep -qx "module folder: $backend $python_libdir" <<<"$output" ||
        fail "the python component's core does not find the $backend module in $python_libdir"
    done
  fi
fi

failed=0
printf '\ninstall test (%s): passed\n' "$mode"
