#!/usr/bin/env bash
# Every build type with every compiler, warnings as errors (TPEVENT_WERROR=ON): what CI
# checks so that `cmake -S . -B build -DCMAKE_BUILD_TYPE=<any>` builds as the install
# guide says, whatever the type.
#
# Usage: scripts/build-types.sh [compiler]...      (default: gcc clang)
# Env:   BUILD_TYPES  the types (default: Debug Release RelWithDebInfo MinSizeRel none);
#                     "none" is an empty CMAKE_BUILD_TYPE: no flags of CMake's own
#                     (what Debian's "None" gives too)
#        BUILD_ROOT   where the trees go (default: build-types/, one per compiler and type)
#        JOBS         build parallelism (default 2)
# Exit status: 0 when every tree configured and built with no warning in its log (a
# target outside tpevent_strict, the linker and CMake count too); 1 otherwise, after
# trying them all. A summary line per tree; the logs are kept next to the trees.
set -uo pipefail
cd "$(dirname "$0")/.."

compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(gcc clang)
read -r -a types <<<"${BUILD_TYPES:-Debug Release RelWithDebInfo MinSizeRel none}"
root=${BUILD_ROOT:-build-types}
jobs=${JOBS:-2}
mkdir -p "$root"

failed=0
for cc in "${compilers[@]}"; do
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build-types: $cc: not found"
    failed=1
    continue
  fi
  for type in "${types[@]}"; do
    build_type=$type
    [ "$type" = none ] && build_type=""
    dir=$root/$cc-$type
    log=$root/$cc-$type.log
    start=$SECONDS
    rm -rf "$dir"
    if ! cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" "-DCMAKE_BUILD_TYPE=$build_type" \
           -DTPEVENT_WERROR=ON >"$log" 2>&1; then
      result="configure FAILED"
    elif ! cmake --build "$dir" -j"$jobs" >>"$log" 2>&1; then
      result="build FAILED"
    elif grep -qi 'warning' "$log"; then
      result="built, but with warnings"
    else
      result="ok"
    fi
    cached=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$dir/CMakeCache.txt" 2>/dev/null)
    if [ "$result" = ok ] && [ "$cached" != "$build_type" ]; then
      result="built as '$cached', not '$build_type'"
    fi
    printf 'build-types: %-5s %-14s %-26s %3ds  (%s)\n' "$cc" "$type" "$result" \
      $((SECONDS - start)) "$log"
    if [ "$result" != ok ]; then
      grep -iE 'warning|error' "$log" | head -20
      failed=1
    fi
  done
done
exit $failed
