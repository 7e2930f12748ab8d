#!/usr/bin/env bash
# Before/after in instructions per call: builds the core and the fake GPU module of
# another source tree (the "before", e.g. `git archive <rev> | tar -x -C before`) and
# of this one, runs bench/callgrind's program over each under valgrind's callgrind
# and prints, per device, a table of Ir per call (before, after, difference) and the
# split of each side into tpevent's own code and the fake driver's. Counts do not
# depend on the machine's load, so this runs on any machine, CI's included.
#
# The program is this tree's bench/callgrind/instructions_bench.c for both sides
# (public API only), compiled alike against each tree's include/ and linked to its
# core, so a tree older than the program measures too. A tree from before the fake
# GPU runtime (tests/gpu_fake, round two) gets its GPU backend (backends/gpu/*.c)
# built over this tree's fake driver, its CUDA mapping header replaced by this
# tree's runtime_fake.h: the same driver on both sides. Where that does not
# compile, cuda:0 is measured on this tree alone.
# record+synchronize (idle) includes the caller's polling while the runtime's thread
# runs: the one row that is not deterministic.
#
# Usage: scripts/instructions-compare.sh <before-source-dir> [device ...]  (default: cuda:0 cpu:0)
# Env:   OUT  folder for builds, dumps and logs (default /tmp/instructions);  CALLS  N (default 2000);
#        JOBS  build parallelism (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
after_src=$PWD
before_src=$(cd "$1" && pwd)
shift
devices=("$@")
[ ${#devices[@]} -gt 0 ] || devices=(cuda:0 cpu:0)
out="${OUT:-/tmp/instructions}"
calls="${CALLS:-2000}"
jobs="${JOBS:-2}"
command -v valgrind >/dev/null || { echo "instructions-compare: valgrind is not installed" >&2; exit 1; }
mkdir -p "$out"

cc=(${CC:-cc} -std=c11 -O2 -g -DNDEBUG) # as CMake's RelWithDebInfo

build() { # source dir, build dir
    local targets=(tpevent)
    [ -f "$1/tests/gpu_fake/CMakeLists.txt" ] && targets+=(tpevent_gpu_fake)
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPEVENT_CUDA=OFF -DTPEVENT_HIP=OFF \
        -DTPEVENT_PYTHON=OFF -DBUILD_TESTING=ON >"$2.configure.log" 2>&1 &&
        cmake --build "$2" -j "$jobs" --target "${targets[@]}" >"$2.build.log" 2>&1 &&
        "${cc[@]}" -DTPEVENT_HAVE_CALLGRIND_H -I"$1/include" "$after_src/bench/callgrind/instructions_bench.c" \
            -L"$2/lib" -ltpevent -o "$2/tpevent_bench_instructions" >>"$2.build.log" 2>&1
}

# A tree without tests/gpu_fake: its GPU backend over this tree's fake driver, in
# <build>/gpu-fake beside a copy of its core, as tests/gpu_fake lays them out.
build_over_this_fake_driver() { # source dir, build dir
    local objects="$2/fake-objects" shim="$2/fake-shim/backends/gpu"
    rm -rf "$objects" "$2/fake-shim" && mkdir -p "$objects" "$shim" "$2/gpu-fake"
    echo '#include "tests/gpu_fake/runtime_fake.h" /* instructions-compare.sh: the fake driver */' >"$shim/runtime_cuda.h"
    local f
    for f in "$after_src"/tests/gpu_fake/runtime_fake*.c; do
        "${cc[@]}" -fPIC -fvisibility=hidden -DTPEVENT_GPU_FAKE -I"$after_src/include" -I"$after_src" -c "$f" \
            -o "$objects/driver_$(basename "$f" .c).o" || return 1
    done
    for f in "$1"/backends/gpu/*.c; do
        "${cc[@]}" -fPIC -fvisibility=hidden -DTPEVENT_GPU_CUDA -DTPEVENT_GPU_MODULE -I"$2/fake-shim" -I"$1/include" -I"$1" \
            -I"$after_src" -c "$f" -o "$objects/backend_$(basename "$f" .c).o" || return 1
    done
    "${cc[@]}" -shared -o "$2/gpu-fake/libtpevent-cuda.so" "$objects"/*.o -Wl,-z,defs -Wl,-Bsymbolic -lpthread &&
        cp -P "$2"/lib/libtpevent.so.* "$2/gpu-fake/"
}

# The environment of the tests on the fake module (tests/gpu_fake/CMakeLists.txt):
# the core beside the fake module first, no other module path, no default device.
measure() { # build dir, device, dump folder
    local libs="$1/gpu-fake"
    [ -d "$libs" ] || libs="$1/lib"
    if [ "${2%%:*}" != cpu ] && [ ! -f "$1/gpu-fake/libtpevent-cuda.so" ]; then
        echo "  (no fake GPU module in $1: $2 not measured)"
        return 1
    fi
    rm -rf "$3" && mkdir -p "$3"
    env -u TPEVENT_BACKEND_PATH -u TPEVENT_DEVICE LD_LIBRARY_PATH="$libs" TPEVENT_CPU_DEVICES=2 \
        valgrind --tool=callgrind --collect-atstart=no --separate-threads=yes \
        --callgrind-out-file="$3/cg.out" "$1/tpevent_bench_instructions" "$2" "$calls" >"$3.log" 2>&1 ||
        { tail -5 "$3.log"; return 1; }
}

for side in before after; do
    src=$before_src
    [ $side = after ] && src=$after_src
    echo "== building $side ($src) in $out/$side"
    build "$src" "$out/$side" || { tail -20 "$out/$side.build.log"; exit 1; }
    if [ ! -f "$src/tests/gpu_fake/CMakeLists.txt" ]; then
        echo "   no fake GPU runtime in $src: its GPU backend built over this tree's fake driver"
        build_over_this_fake_driver "$src" "$out/$side" >>"$out/$side.build.log" 2>&1 ||
            { echo "   (that did not build: $out/$side.build.log)"; rm -f "$out/$side/gpu-fake/libtpevent-cuda.so"; }
    fi
done

for device in "${devices[@]}"; do
    echo
    echo "== $device: Ir per call over $calls and $((2 * calls)) calls (callgrind, calling thread only)"
    measure "$out/after" "$device" "$out/dumps-after-${device/:/}" || continue
    if measure "$out/before" "$device" "$out/dumps-before-${device/:/}"; then
        python3 bench/callgrind/instructions_table.py "$before_src:$out/dumps-before-${device/:/}" \
            "$after_src:$out/dumps-after-${device/:/}"
    else
        python3 bench/callgrind/instructions_table.py "$after_src:$out/dumps-after-${device/:/}"
    fi
done
