#!/usr/bin/env bash
# The conformance suite on cuda:0 under compute-sanitizer's memcheck (issue 47, item
# 9): a rotated subset that fits a time budget, so that successive runs of
# scripts/gpu-check.sh cover the whole suite. Fails on any memory error; CUDA API
# errors are reported apart, counted by call and error, since some are tpevent's
# own on purpose (docs/gpu-api-errors.md).
#
# Usage: scripts/gpu-memcheck.sh BUILD_DIR LOG SUMMARY
#          runs the subset, the sanitizer's output into LOG, a few lines for
#          gpu-check's summary into SUMMARY; exit 0: no memory error (API errors
#          and tests failing under the sanitizer, slowed tenfold, are reported),
#          1: memory errors, 2: not run (no compute-sanitizer, no conformance binary).
#        scripts/gpu-memcheck.sh --dry-run BUILD_DIR
#          prints the subset's command lines, runs nothing (no GPU needed).
#        scripts/gpu-memcheck.sh --parse LOG
#          prints the counts of a sanitizer log as the summary would.
# Env:   COMPUTE_SANITIZER  the sanitizer (default /usr/local/cuda/bin/compute-sanitizer,
#                   else the one on PATH)
#        MEMCHECK_STRIDE  every Nth conformance test (default 16: on the H100 each test took
#                 about 10 s under memcheck, and 150 s ran 14 of them)
#        MEMCHECK_OFFSET  which of the N (default: the day of the year, so that N
#                   days' runs cover every test)
#        MEMCHECK_SECONDS  the budget: no test starts after it, and each is killed
#                   at it (default 150)
#        MEMCHECK_DEVICE, MEMCHECK_PEER  (default cuda:0, cuda:1)
set -uo pipefail

stride="${MEMCHECK_STRIDE:-16}"
offset="${MEMCHECK_OFFSET:-$((10#$(date +%j) % stride))}"
budget="${MEMCHECK_SECONDS:-150}"
device="${MEMCHECK_DEVICE:-cuda:0}"
peer="${MEMCHECK_PEER:-cuda:1}"

# A memory error is any error memcheck reports that is not an API call's failure.
# "========= Program hit cudaErrorInvalidValue (error 1) due to "invalid argument"
#  on CUDA API call to cudaEventQuery." is an API error; "========= ERROR SUMMARY:
# 3 errors" counts both, per process. The print limit is lifted so that every API
# error is printed, and the difference is the memory errors.
api_error_lines() { grep -E '^========= Program hit .* on CUDA API call to ' "$1" || true; }
total_errors() {
  grep -oE '^========= ERROR SUMMARY: [0-9]+ error' "$1" | awk '{sum += $4} END {print sum + 0}'
}
api_error_count() { api_error_lines "$1" | wc -l | tr -d ' '; }

# "  N x cudaEventQuery: cudaErrorInvalidValue", most frequent first.
api_error_table() {
  api_error_lines "$1" |
    sed -E 's/^========= Program hit ([A-Za-z_0-9]+).* on CUDA API call to ([A-Za-z_0-9]+).*/\2: \1/' |
    sort | uniq -c | sort -rn | awk '{count = $1; $1 = ""; printf "    %5d x%s\n", count, $0}'
}

# The subset: every stride-th test from offset, in --list order.
subset() { # conformance binary
  "$1" --list | awk -v stride="$stride" -v offset="$offset" '(NR - 1) % stride == offset'
}

sanitizer_command() { # sanitizer, conformance binary, test
  printf '%s\n' "$1" --tool memcheck --error-exitcode 86 --report-api-errors explicit --show-backtrace host \
    --print-limit 1000000 "$2" --device "$device" --peer "$peer" --test "$3"
}

memory_error_count() { # log
  local total api
  total=$(total_errors "$1")
  api=$(api_error_count "$1")
  echo $((total > api ? total - api : 0))
}

parse_report() { # log
  local api
  api=$(api_error_count "$1")
  echo "  memory errors: $(memory_error_count "$1")"
  echo "  CUDA API errors: $api"
  api_error_table "$1"
}

if [ "${1:-}" = "--parse" ]; then
  parse_report "$2"
  exit 0
fi

dry_run=false
if [ "${1:-}" = "--dry-run" ]; then
  dry_run=true
  shift
fi
build="$1"
conformance="$build/bin/tpevent_conformance"
if [ ! -x "$conformance" ]; then
  echo "gpu-memcheck: $conformance not built" >&2
  exit 2
fi
sanitizer="${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}"
[ -x "$sanitizer" ] || sanitizer=$(command -v compute-sanitizer || true)
if $dry_run; then
  echo "# stride $stride, offset $offset, budget ${budget}s, $device (peer $peer)"
  for name in $(subset "$conformance"); do
    echo "timeout <budget left> $(sanitizer_command "${sanitizer:-compute-sanitizer}" "$conformance" "$name" | tr '\n' ' ')"
  done
  exit 0
fi

log="$2"
summary="$3"
if [ -z "$sanitizer" ]; then
  echo "  not run: no compute-sanitizer (COMPUTE_SANITIZER, /usr/local/cuda/bin, PATH)" >"$summary"
  exit 2
fi

: >"$log"
one_log=$(mktemp)
trap 'rm -f "$one_log"' EXIT
passed=0 skipped=0 failed=0 timed_out=0 not_started=0 failed_names="" memory_names=""
names=$(subset "$conformance")
start=$SECONDS
for name in $names; do
  left=$((budget - (SECONDS - start)))
  if [ "$left" -le 0 ]; then
    not_started=$((not_started + 1))
    continue
  fi
  mapfile -t command < <(sanitizer_command "$sanitizer" "$conformance" "$name")
  timeout --kill-after 5 "$left" "${command[@]}" >"$one_log" 2>&1
  status=$?
  # 86: the sanitizer reported errors, which may be API errors alone.
  [ "$status" -eq 86 ] && [ "$(memory_error_count "$one_log")" -eq 0 ] && status=0
  { echo "=== $name (exit status $status)"; cat "$one_log"; } >>"$log"
  case $status in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    124 | 137) timed_out=$((timed_out + 1)) ;;
    86) memory_names="$memory_names $name" ;;
    *) failed=$((failed + 1)); failed_names="$failed_names $name" ;;
  esac
done

{
  echo "  $device, tests $offset, $((offset + stride)), ... of every $stride (MEMCHECK_OFFSET, MEMCHECK_STRIDE), ${budget}s:"
  echo "  passed $passed  skipped $skipped  failed $failed${failed_names:+ ($failed_names )}" \
       " cut by the budget $timed_out  not started $not_started"
  parse_report "$log"
  [ -n "$memory_names" ] && echo "  MEMORY ERRORS in:$memory_names"
} >"$summary"
[ "$(memory_error_count "$log")" -eq 0 ] && [ -z "$memory_names" ]
