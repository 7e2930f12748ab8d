#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz) for a while each.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      default: 60 seconds, every target
#
# Configures a clang build in build-fuzz (TPEVENT_FUZZ=ON; the library with
# -fsanitize=fuzzer-no-link,address,undefined, the targets with -fsanitize=fuzzer),
# builds only the fuzz targets, then runs each from its committed seed corpus
# (tests/fuzz/corpus/<target>/, read only: new inputs go to build-fuzz/corpus/<target>/)
# with -max_total_time=SECONDS, and prints how many inputs each executed.
#
# A crash, a leak, a sanitizer report, a check of the target that fails or a hang of
# more than 10 s per input stops the run with a non-zero status; libFuzzer writes the
# input to build-fuzz/artifacts/. Replay it with
#   build-fuzz/bin/tpevent_fuzz_<target> build-fuzz/artifacts/<file>
# and, once the bug is fixed, add the file to tests/fuzz/corpus/<target>/ so that the
# regular build's fuzz.replay.<target> test keeps it fixed.
#
# Environment: CC (default clang), FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS
# (parallel build jobs, default 2), FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(device ipc socket)
build=${FUZZ_BUILD_DIR:-build-fuzz}
cc=${CC:-clang}

case $seconds in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

# No GPU module: a fuzz run exercises the core and the CPU backend, and loading a
# GPU runtime for every "cuda"/"hip" input would only slow it down.
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPEVENT_WERROR=ON \
  -DTPEVENT_FUZZ=ON -DTPEVENT_SANITIZE=fuzzer-no-link,address,undefined \
  -DTPEVENT_CUDA=OFF -DTPEVENT_HIP=OFF -DTPEVENT_PYTHON=OFF >/dev/null
cmake --build "$build" -j"${FUZZ_JOBS:-2}" --target $(printf 'tpevent_fuzz_%s ' "${targets[@]}") >/dev/null

mkdir -p "$build/artifacts"
export TPEVENT_CPU_DEVICES=2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
summary=()
for target in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$target
  work=$build/corpus/$target
  log=$build/fuzz-$target.log
  [ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds" >&2; exit 2; }
  mkdir -p "$work"
  echo "== $target: ${seconds}s (log: $log)"
  # The working corpus first: libFuzzer adds new inputs to the first folder only.
  # shellcheck disable=SC2086
  if "$build/bin/tpevent_fuzz_$target" "$work" "$seeds" \
       -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$target-" ${FUZZ_ARGS:-} >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
    status=1
    tail -n 40 "$log" >&2
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  corpus=$(find "$work" -type f | wc -l)
  summary+=("$(printf '%-8s %s: %s execs (%s/s), %s, %s inputs in %s' \
    "$target" "$result" "${execs:-?}" "${rate:-?}" "${cov:-cov: ?}" "$corpus" "$work")")
done

echo
printf '%s\n' "${summary[@]}"
exit $status
