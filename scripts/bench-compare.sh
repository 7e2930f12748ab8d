#!/usr/bin/env bash
# Before/after on one GPU machine, in one session: builds the CUDA benchmark of
# another source tree (the "before", e.g. `git archive <rev> | tar -x -C before`)
# and of this one, then runs them in turns (before, after, before, after), so that
# both tables come from the same machine minutes apart. Each table is tpevent
# against raw cudart measured in the same process (bench/cuda), so compare the
# ratio columns, not absolute times. A third side, "before-program", runs the
# before tree's benchmark program over this tree's library (a copy of it under the
# before library's soname, its module beside it): the same program on both
# libraries, so that what the programs differ in is not read as the libraries'.
#
# Usage: scripts/bench-compare.sh <before-source-dir> [rounds-of-turns (default 2)]
# Env:   OUT  folder for the logs (default /tmp);  JOBS  build parallelism (default 16)
set -euo pipefail
cd "$(dirname "$0")/.."
before_src=$(cd "$1" && pwd)
turns="${2:-2}"
out="${OUT:-/tmp}"
jobs="${JOBS:-16}"
mkdir -p "$out"

build() { # source dir, build dir
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPEVENT_CUDA=ON -DTPEVENT_HIP=OFF \
        -DTPEVENT_PYTHON=OFF -DBUILD_TESTING=OFF >"$2.configure.log" 2>&1 &&
  cmake --build "$2" -j "$jobs" --target tpevent_bench_cuda tpevent_cuda >"$2.build.log" 2>&1
}
build "$before_src" /tmp/bench-before || { tail -20 /tmp/bench-before.build.log; exit 1; }
build "$PWD" /tmp/bench-after || { tail -20 /tmp/bench-after.build.log; exit 1; }

# This tree's library under the soname the before program asks for.
cross=/tmp/bench-before-program
rm -rf "$cross" && mkdir -p "$cross"
cp -L /tmp/bench-after/lib/libtpevent-cuda.so "$cross/"
for soname in $(objdump -p /tmp/bench-before/bin/tpevent_bench_cuda | awk '/NEEDED +libtpevent/ {print $2}'); do
  cp -L /tmp/bench-after/lib/libtpevent.so "$cross/$soname"
done
run_side() { # side
  case $1 in
    before-program) LD_LIBRARY_PATH="$cross" /tmp/bench-before/bin/tpevent_bench_cuda ;;
    *) /tmp/bench-$1/bin/tpevent_bench_cuda ;;
  esac
}

for turn in $(seq 1 "$turns"); do
  for side in before after before-program; do
    echo "== $side (turn $turn)"
    run_side "$side" >"$out/bench-$side-$turn.log" 2>&1 || echo "(exit status $?)"
    sed -n "/^tpevent CUDA backend/,\$p" "$out/bench-$side-$turn.log"
  done
done
