#!/usr/bin/env bash
# Runs the unit and conformance tests under valgrind memcheck and reports leaks.
#
#   scripts/leak-check.sh [BUILD_DIR] [CTEST_ARGS...]     default: build-valgrind
#
# BUILD_DIR is a normal build (no sanitizer: valgrind and ASan/TSan do not mix); it
# is configured (RelWithDebInfo) if it does not exist yet, and built. Every test runs
# under
#   valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1
# so a test fails on a memory error or a definite or indirect leak. Memory "still
# reachable" at exit (a process-lifetime table, a thread's stack) is allowed and
# only counted. The per-test logs stay in BUILD_DIR/Testing/Temporary/MemoryChecker.*.log.
#
# Extra arguments go to ctest, e.g. `-R conformance.cpu:0` for a quick run.
# Environment: JOBS (parallel tests, default 2), VALGRIND (default: valgrind on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build-valgrind}
shift || true
jobs=${JOBS:-2}
valgrind=${VALGRIND:-$(command -v valgrind || true)}
[ -n "$valgrind" ] || { echo "leak-check.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPEVENT_WERROR=ON >/dev/null
fi
sanitize=$(sed -n 's/^TPEVENT_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ -n "$sanitize" ]; then
  echo "leak-check.sh: $build is built with -fsanitize=$sanitize; valgrind needs a build without" >&2
  exit 2
fi
cmake --build "$build" -j"$jobs" >/dev/null

# Suppressions for code that is not ours, as tests/sanitizers/lsan.supp has them for
# LeakSanitizer. ROCm's HIP runtime (Debian's libamdhip64 5.2) allocates its platform
# state in its own static constructors, run by dlopen of the HIP module, and never
# frees it; when the thread that loaded the module has exited (a unit test loads
# backends from racing threads) nothing points at it any more and memcheck calls it
# definitely lost. Any leak whose stack passes through libamdhip64 is its own. Where
# the module was unloaded again before memcheck reports (a backend found unusable
# is dlclose'd), its frames name no object ("???"): the second suppression matches
# an allocation made in any library constructor run by tp_module_load's dlopen
# (tpevent's own modules' constructors allocate nothing; LeakSanitizer still sees
# them in the ASan build).
suppressions=$(mktemp "${TMPDIR:-/tmp}/tpevent-valgrind.XXXXXX.supp")
trap 'rm -f "$suppressions"' EXIT
cat >"$suppressions" <<'SUPP'
{
   rocm-libamdhip64-own-allocations
   Memcheck:Leak
   match-leak-kinds: definite,indirect,possible,reachable
   ...
   obj:*/libamdhip64.so*
}
{
   a-runtime-dlopened-by-tp_module_load-own-constructors-unloaded-since
   Memcheck:Leak
   match-leak-kinds: definite,indirect
   fun:malloc
   ...
   fun:_dl_init
   ...
   fun:tp_module_load
}
SUPP

options="--leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1"
options+=" --show-leak-kinds=definite,indirect --num-callers=40 --track-origins=yes"
options+=" --suppressions=$suppressions"

# The conformance tests of a GPU backend that is not usable here (no driver, no device)
# only say why they skip: they are left out rather than each started under valgrind
# for nothing (about a second a start, 300 starts on a machine without GPUs).
unusable=()
for backend in cuda hip; do
  "$build/bin/tpevent" devices 2>/dev/null | grep -qE "^$backend .*(unavailable|not built)" && unusable+=("$backend")
done
# The fake GPU's fallback variant (fake-runtime-host-fns) runs the suite over the same
# backend code as fake:0, which memcheck runs; only its gates differ. cpu:1 is the CPU
# backend's second virtual device: the same code as cpu:0, which memcheck runs with
# cpu:1 as its peer. LeakSanitizer (the asan preset) runs both whole. Left out here for
# CI's time (about 320 valgrind starts).
# opencl:0 runs PoCL, which dlopens LLVM at its first use: under memcheck a test takes
# ~10 s instead of 0.2 s (167 of them: ~28 min of CI's 45), and glibc's own rpath
# expansion while loading PoCL's libraries reports invalid reads (strncmp in is_dst,
# dl-load.c) that are not tpevent's. LeakSanitizer runs them whole (the asan preset).
# So the fake GPU paired with PoCL (fake-opencl-peer) is left out too, and with lavapipe
# (fake-vulkan-peer).
# vulkan:0 runs lavapipe, which loads LLVM too: ~4 s a test under memcheck instead of
# 0.1 s (230 of them), and the Vulkan loader's and lavapipe's own allocations at
# vkCreateDevice are reported possibly lost at exit. LeakSanitizer runs them whole (asan).
excluded=(fake-runtime-host-fns cpu:1 opencl fake-opencl-peer vulkan fake-vulkan-peer)
if [ ${#unusable[@]} -gt 0 ]; then
  excluded+=("${unusable[@]}")
  echo "leak-check.sh: not under memcheck, their backend unusable here: conformance tests of ${unusable[*]}"
fi
exclude=(-E "^conformance\.($(IFS='|'; echo "${excluded[*]}"))[^.]*(:[0-9]+)?\.")

rm -f "$build"/Testing/Temporary/MemoryChecker.*.log
status=0
ctest --test-dir "$build" -T memcheck -L '^(unit|conformance)$' "${exclude[@]}" -j"$jobs" --timeout 1200 \
  --overwrite "MemoryCheckCommand=$valgrind" \
  --overwrite "MemoryCheckCommandOptions=$options" \
  --output-on-failure "$@" || status=$?

# A summary over the logs: which tests lost memory, how much is still reachable.
logs=("$build"/Testing/Temporary/MemoryChecker.*.log)
[ -e "${logs[0]}" ] || { echo "leak-check.sh: no memcheck logs were written" >&2; exit 1; }
bytes() { sed -n "s/.*$1: \([0-9,]*\) bytes.*/\1/p" "$2" | tr -d , | awk '{s += $1} END {print s + 0}'; }
tests=0 reachable_tests=0 reachable_max=0 leaking=()
for log in "${logs[@]}"; do
  tests=$((tests + 1))
  name=$(sed -n 's/^==[0-9]*== Command: //p' "$log" | head -n 1)
  definite=$(bytes "definitely lost" "$log")
  indirect=$(bytes "indirectly lost" "$log")
  reachable=$(bytes "still reachable" "$log")
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
  if [ "$definite" -gt 0 ] || [ "$indirect" -gt 0 ] || [ "$errors" -gt 0 ]; then
    leaking+=("$name: definitely lost $definite B, indirectly lost $indirect B, $errors errors ($log)")
  fi
  if [ "$reachable" -gt 0 ]; then
    reachable_tests=$((reachable_tests + 1))
    [ "$reachable" -le "$reachable_max" ] || reachable_max=$reachable
  fi
done

echo
echo "leak-check: $tests test processes under memcheck"
echo "  still reachable at exit (allowed): in $reachable_tests of them, at most $reachable_max bytes"
if [ ${#leaking[@]} -eq 0 ]; then
  echo "  no definite or indirect leak, no memory error"
else
  echo "  leaks or memory errors in ${#leaking[@]}:"
  printf '    %s\n' "${leaking[@]}"
  status=1
fi
exit $status
