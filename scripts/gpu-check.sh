#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: configure with the CUDA backend required, build,
# run the whole CTest suite (the conformance suite on cuda:0, its cross-device rules
# against cuda:1 when there is a second GPU), run the CUDA benchmark, and print a
# short summary last.
#
# Usage: scripts/gpu-check.sh            (from anywhere; builds in build-gpu-check/)
# Env:   OUT      folder for the logs (default /tmp)
#        TEST_TIME_LIMIT  seconds the whole CTest run may take (default 420)
#        CTEST_ARGS  extra arguments for ctest, e.g. "-L cuda" for the CUDA tests only
#        JOBS     build parallelism (default: the number of CPUs, at most 16)
#        TEST_JOBS  tests run at once (default 8: timing tests share the GPUs)
#        BENCH_ARGS  extra arguments for tpevent_bench_cuda
#        CROSS_WAIT_SECONDS  how long the cross-backend wait benchmark samples (default 30)
#        OPENCL_BENCH_ARGS  arguments for tpevent_bench_opencl (default: every OpenCL device)
#        HOLD_BENCH_ARGS  arguments for tpevent_bench_hold (default: 64 launches, 200 rounds)
#        TIMESTAMP_BENCH_ARGS  arguments for tpevent_bench_timestamp_cuda (default:
#                 its short defaults, 200 records over 2 s and 10 s of drift; the
#                 issue's run: "--records 1000 --seconds 60 --drift-seconds 180")
#        MEMCHECK_STRIDE, MEMCHECK_OFFSET, MEMCHECK_SECONDS  the conformance subset run
#                 under compute-sanitizer (scripts/gpu-memcheck.sh: every 8th test,
#                 rotated by the day of the year, in 90 s)
#        VULKAN_DEVICES  the Vulkan devices the Vulkan step runs on (default: every
#                 vulkan:N that is not lavapipe, as `tpevent devices` lists them);
#                 "vulkan:0" runs it on lavapipe, to try the step without a GPU
# Vulkan (issue 56): the GPU machine has NVIDIA's Vulkan driver but no Vulkan loader
# and no package index, so a run must carry the repository's ignored folder .gl/
# (the device tool's `carry: [".gl"]`) holding Debian's libvulkan1 and libvulkan-dev
# (headers too), fetched once on a machine with Debian's index:
#   mkdir -p .gl /tmp/amd64/partial
#   o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .gl && apt-get $o download libvulkan1 libvulkan-dev)
# The script unpacks them into / before configuring (dpkg -x, ldconfig) where no
# libvulkan.so.1 is installed, and points the loader at NVIDIA's manifest where no
# driver manifest is installed. The summary says when Vulkan was not there and why.
# Exit status: 0 when configure, build and every test passed, and compute-sanitizer
# found no memory error; the benchmark's budgets are reported, not enforced.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-/tmp}"
mkdir -p "$out"
build=build-gpu-check
jobs="${JOBS:-$(nproc)}"
[ "$jobs" -gt 16 ] && jobs=16
configure_log="$out/gpu-check-configure.log"
build_log="$out/gpu-check-build.log"
test_log="$out/gpu-check-ctest.log"
bench_log="$out/gpu-check-bench.log"
timestamp_log="$out/gpu-check-timestamp-bench.log"
summary="$out/gpu-check-summary.txt"

step() { printf '== %s\n' "$*"; }

# The Vulkan loader and driver (issue 56; the header says what .gl/ holds). Sets
# vulkan_note to what was done or why Vulkan cannot be there; returns 1 then.
nvidia_vulkan_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
vulkan_note=""
vulkan_loader() {
  if ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
    vulkan_note="loader: the machine's own"
  else
    local debs=(.gl/*.deb)
    if [ ! -e "${debs[0]}" ]; then
      vulkan_note="no Vulkan loader (libvulkan.so.1) on the machine and no .gl/*.deb carried (this script's header says how)"
      return 1
    fi
    local deb
    for deb in "${debs[@]}"; do
      if ! dpkg -x "$deb" / 2>&1; then
        vulkan_note="dpkg -x $deb / failed (not root?): no Vulkan loader"
        return 1
      fi
    done
    ldconfig
    if ! ldconfig -p | grep -q 'libvulkan\.so\.1 '; then
      vulkan_note="unpacked ${debs[*]} but ldconfig lists no libvulkan.so.1"
      return 1
    fi
    vulkan_note="loader: unpacked from ${debs[*]}"
  fi
  local manifests
  manifests=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null)
  if [ -z "$manifests" ]; then
    if [ ! -f "$nvidia_vulkan_icd" ]; then
      vulkan_note+="; no driver manifest in /usr/share/vulkan/icd.d, /etc/vulkan/icd.d or $nvidia_vulkan_icd"
      return 1
    fi
    export VK_DRIVER_FILES="$nvidia_vulkan_icd"
    vulkan_note+="; driver: VK_DRIVER_FILES=$nvidia_vulkan_icd"
  elif ! grep -q nvidia <<<"$manifests" && [ -f "$nvidia_vulkan_icd" ]; then
    export VK_ADD_DRIVER_FILES="$nvidia_vulkan_icd" # beside the others (lavapipe)
    vulkan_note+="; drivers: $(tr '\n' ' ' <<<"$manifests")and VK_ADD_DRIVER_FILES=$nvidia_vulkan_icd"
  else
    vulkan_note+="; drivers: $(tr '\n' ' ' <<<"$manifests")"
  fi
}

gpus="$(nvidia-smi -L 2>/dev/null || true)"
gpu_count=$(printf '%s' "$gpus" | grep -c '^GPU ' || true)
step "GPUs: ${gpu_count}"
[ -n "$gpus" ] && printf '%s\n' "$gpus"

step "Vulkan loader and driver"
vulkan_loader
echo "  $vulkan_note"

step "configure ($configure_log)"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPEVENT_WERROR=ON -DTPEVENT_CUDA=ON >"$configure_log" 2>&1; then
  tail -30 "$configure_log"
  echo "gpu-check: configure failed"
  exit 1
fi
grep -E '^-- tpevent:' "$configure_log"

step "build ($build_log)"
build_note=""
if ! cmake --build "$build" -j "$jobs" >"$build_log" 2>&1; then
  # Something failed to build; what the CUDA check needs may still be there, so
  # build that alone and go on, saying so in the summary.
  grep -E 'error' "$build_log" | head -20
  build_note="BUILD INCOMPLETE: some targets failed (see $build_log)"
  if ! cmake --build "$build" -j "$jobs" --target tpevent tpevent_cuda tpevent_bench_cuda \
         tpevent_bench_timestamp tpevent_bench_timestamp_cuda tpevent_bench_cross_wait tpevent_bench_hold tpevent_bench_graph tpevent_bench_graph_raw tpevent_bench_host_fn tpevent_bench_measure_cpu tpevent_bench_compare_cpu tpevent_conformance tpevent_gpu_test_cuda \
         tpevent_gpu_measure_test_cuda tpevent_gpu_clock_after_idle tpevent_bench_trace tpevent_ncu_ranges \
         tpevent_bench_ipc_wait >>"$build_log" 2>&1; then
    echo "gpu-check: the CUDA backend, its tests or its benchmark do not build"
    exit 1
  fi
  # The Vulkan step's own, where the backend was configured (its summary line says
  # what is missing otherwise).
  if grep -q '^-- tpevent: Vulkan backend built' "$configure_log"; then
    cmake --build "$build" -j "$jobs" --target tpevent_vulkan tpevent_tool tpevent_model tpevent_bench_vulkan \
      tpevent_bench_vulkan_cuda_wait >>"$build_log" 2>&1 || build_note+="; the Vulkan step's targets incomplete too"
  fi
fi

step "devices"
"$build/bin/tpevent" devices 2>&1 || true

# The benchmark first, on GPUs nothing else is using.
step "benchmark ($bench_log)"
# shellcheck disable=SC2086 # BENCH_ARGS is a list of words
"$build/bin/tpevent_bench_cuda" ${BENCH_ARGS:-} >"$bench_log" 2>&1
bench_status=$?

# Rule 13's numbers (timestamps against their host bracket, drift, across
# backends), on cuda:0 and, for the CPU's own bracket, cpu:0. Bounded in time.
step "timestamp benchmark ($timestamp_log)"
{
  # shellcheck disable=SC2086 # TIMESTAMP_BENCH_ARGS is a list of words
  timeout 600 "$build/bin/tpevent_bench_timestamp_cuda" ${TIMESTAMP_BENCH_ARGS:---drift-seconds 10}
  echo "exit status $?"
  timeout 120 "$build/bin/tpevent_bench_timestamp" --device cpu:0
  echo "exit status $?"
} >"$timestamp_log" 2>&1

# Rule 13 after a while without timestamps (issue 47, item 6): 45 s of waits across
# backends (CPU <-> cuda:0) after the first calibration, then a new stream and event
# and 200 timestamps 100 ms apart; exit 1 if any lies outside its bracket by more
# than error_ns or error_ns grew (tests/gpu/clock_after_idle.c). About 66 s.
clock_idle_log="$out/gpu-check-clock-after-idle.log"
step "clock after an idle while ($clock_idle_log)"
timeout 120 "$build/bin/tpevent_gpu_clock_after_idle" --device cuda:0 --cross-waits >"$clock_idle_log" 2>&1
echo "exit status $?" >>"$clock_idle_log"

# Rule 14's numbers: record reached -> the waiting stream's next work, across
# backends both ways, next to the raw floors. Bounded in time.
cross_wait_log="$out/gpu-check-cross-wait-bench.log"
step "cross-backend wait benchmark ($cross_wait_log)"
timeout 200 "$build/bin/tpevent_bench_cross_wait" --max-seconds "${CROSS_WAIT_SECONDS:-30}" >"$cross_wait_log" 2>&1
echo "exit status $?" >>"$cross_wait_log"

# Events handed over a Unix socket across containers (issue 57): the namespace test
# (a child, pid 1 of new PID, IPC and mount namespaces with a private /dev/shm,
# receives the event, waits, records back; also in the ctest run as
# conformance.cuda:0.rule08_socket_*), whether the runtime's own IPC event handle
# works in that setup (reported, not asserted), and a wait's latency across
# processes by both paths beside a raw futex wake, on cuda:0 and cpu:0.
ipc_socket_log="$out/gpu-check-ipc-socket.log"
step "events over a Unix socket across namespaces ($ipc_socket_log)"
ipc_socket_run() {
  echo "namespace test on $1:"
  timeout 120 "$build/bin/tpevent_conformance" --device "$1" \
    --test rule08_socket_event_across_pid_ipc_and_mount_namespaces 2>&1 | sed 's/^/  /'
  echo "  exit status ${PIPESTATUS[0]}"
  timeout 60 "$build/bin/tpevent_bench_ipc_wait" --device "$1" --handle-across-namespaces 2>&1
  timeout 120 "$build/bin/tpevent_bench_ipc_wait" --device "$1" --samples 2000 2>&1
  echo "  exit status $?"
}
{
  ipc_socket_run cuda:0
  ipc_socket_run cpu:0
} >"$ipc_socket_log" 2>&1

# Rule 17's number: events around 64 empty launches queued behind a hold, against
# the same unheld and the GPU's own cadence (the kernels' %globaltimer log).
hold_log="$out/gpu-check-hold-bench.log"
step "hold benchmark ($hold_log)"
timeout 120 "$build/bin/tpevent_bench_hold" ${HOLD_BENCH_ARGS:-} >"$hold_log" 2>&1
echo "exit status $?" >>"$hold_log"

# Rule 15's latency (issue 53): launch to fn start on an idle stream, tpevent's
# host functions against raw cudaLaunchHostFunc's, budget 1.3x.
host_fn_log="$out/gpu-check-host-fn-bench.log"
step "host function latency benchmark ($host_fn_log)"
timeout 120 "$build/bin/tpevent_bench_host_fn" >"$host_fn_log" 2>&1
echo "exit status $?" >>"$host_fn_log"

# Rule 16's numbers: a captured sequence of N/2 external records and N/2 host
# functions launched as a graph, against the same submitted one by one, N = 16, 256
# and 1024, on cuda:0 and cpu:0. Bounded: 1 s per device, N and side (12 s), 30 s
# in all; a device that refuses to capture host functions says so in its table.
graph_log="$out/gpu-check-graph-bench.log"
step "graph benchmark ($graph_log)"
graph_devices=()
[ "$gpu_count" -ge 1 ] && graph_devices+=(--device cuda:0)
graph_devices+=(--device cpu:0)
timeout 30 "$build/bin/tpevent_bench_graph" "${graph_devices[@]}" --max-seconds 1 >"$graph_log" 2>&1
echo "exit status $?" >>"$graph_log"
# The same without host functions (issue 53): empty kernels and external records,
# tpevent's graph beside raw CUDA's.
graph_raw_log="$out/gpu-check-graph-raw-bench.log"
timeout 120 "$build/bin/tpevent_bench_graph_raw" --rounds 100 >"$graph_raw_log" 2>&1
echo "exit status $?" >>"$graph_raw_log"

# The tool's view (cpu and cuda side by side) and the Python binding against
# torch.cuda.Event and cupy.cuda.Event, in the same quiet window.
# The OpenCL backend against raw OpenCL, one table per OpenCL device (PoCL and
# NVIDIA's OpenCL where OCL_ICD_FILENAMES lists both).
opencl_bench_log="$out/gpu-check-opencl-bench.log"
step "OpenCL benchmark ($opencl_bench_log)"
if [ -x "$build/bin/tpevent_bench_opencl" ]; then
  timeout 300 "$build/bin/tpevent_bench_opencl" ${OPENCL_BENCH_ARGS:-} >"$opencl_bench_log" 2>&1
  echo "(exit status $?)" >>"$opencl_bench_log"
else
  echo "OpenCL backend not built: no OpenCL benchmark" >"$opencl_bench_log"
fi
tool_bench_log="$out/gpu-check-tool-bench.log"
step "tpevent bench ($tool_bench_log)"
devices=(--device cpu)
[ "$gpu_count" -ge 1 ] && devices+=(--device cuda:0)
"$build/bin/tpevent" bench "${devices[@]}" >"$tool_bench_log" 2>&1

# What a trace costs (issue 52): each op with tracing off and on in alternating rounds,
# and the raw runtime's calls with a trace running and not, in one process
# (bench/trace/trace_bench.c), on cuda:0 and cpu:0; then the tool's own view of the
# same (tpevent bench --trace: untraced run, traced run, side by side).
trace_bench_log="$out/gpu-check-trace-bench.log"
step "trace benchmark ($trace_bench_log)"
trace_devices=()
[ "$gpu_count" -ge 1 ] && trace_devices+=(--device cuda:0)
trace_devices+=(--device cpu:0)
{
  timeout 300 "$build/bin/tpevent_bench_trace" "${trace_devices[@]}"
  echo "exit status $?"
  if [ "$gpu_count" -ge 1 ]; then
    timeout 300 "$build/bin/tpevent" bench --device cuda:0 --trace "$out/gpu-check-bench-trace.json" |
      sed -n "/^tracing's cost/,\$p"
    echo "tpevent bench --trace: exit status ${PIPESTATUS[0]}"
  fi
} >"$trace_bench_log" 2>&1

# tpevent's ranges seen by Nsight Compute (issue 52, item 4): of 4 kernel launches, the
# one inside the tpevent range "in" and only it is profiled under --nvtx-include "in/"
# (ncu's "==PROF== Profiling" lines: exactly 1); then tp_measure under ncu, which
# serializes launches, beside the same without it (docs/timeline.md says what to expect).
ncu_log="$out/gpu-check-ncu.log"
step "ncu sees tpevent's ranges ($ncu_log)"
ncu_bin=$(command -v ncu || { [ -x /usr/local/cuda/bin/ncu ] && echo /usr/local/cuda/bin/ncu; } || true)
ncu_summary=""
if [ "$gpu_count" -lt 1 ]; then
  ncu_summary="skipped: no GPU"
elif [ -z "$ncu_bin" ]; then
  ncu_summary="skipped: ncu not found (neither on PATH nor /usr/local/cuda/bin/ncu)"
elif [ ! -x "$build/bin/tpevent_ncu_ranges" ]; then
  ncu_summary="FAIL: tpevent_ncu_ranges was not built (see $build_log)"
else
  {
    echo "\$ ncu --nvtx --nvtx-include in/ tpevent_ncu_ranges"
    timeout 300 "$ncu_bin" --nvtx --nvtx-include "in/" "$build/bin/tpevent_ncu_ranges"
    echo "exit status $?"
  } >"$ncu_log" 2>&1
  profiled=$(grep -c '==PROF== Profiling' "$ncu_log" || true)
  if grep -q '^launched 4 kernels' "$ncu_log" && [ "$profiled" -eq 1 ]; then
    ncu_summary="PASS: 1 of 4 kernels profiled (the one inside the tpevent range \"in\")"
  else
    ncu_summary="FAIL: $profiled kernel(s) profiled, want 1 of 4 (see $ncu_log)"
  fi
  {
    echo "\$ tpevent_ncu_ranges --measure (no ncu)"
    timeout 120 "$build/bin/tpevent_ncu_ranges" --measure
    echo "exit status $?"
    echo "\$ ncu --nvtx --nvtx-include in/ tpevent_ncu_ranges --measure"
    timeout 300 "$ncu_bin" --nvtx --nvtx-include "in/" "$build/bin/tpevent_ncu_ranges" --measure
    echo "exit status $?"
  } >>"$ncu_log" 2>&1
fi
python_bench_log="$out/gpu-check-python-bench.log"
site=$(ls -d "$build"/lib/python3*/site-packages 2>/dev/null | head -1)
if [ -n "$site" ] && [ -f bench/python/bench_events.py ]; then
  step "python bench ($python_bench_log)"
  PYTHONPATH="$site" timeout 300 python3 bench/python/bench_events.py >"$python_bench_log" 2>&1
else
  echo "python binding not built: no Python benchmark" >"$python_bench_log"
fi

# tp_measure against the truth (issues 30, 48, 49): host functions of known length on the
# CPU; kernels of known length on the GPU beside triton's do_bench, torch's Timer and raw
# events, the cold L2 read, and real kernels against Nsight Compute (its own ~90 s); the
# whole GPU run is meant to take under 4 minutes, the timeout leaves room for a slow start.
measure_cpu_log="$out/gpu-check-measure-cpu-bench.log"
step "measure benchmark, CPU ($measure_cpu_log)"
timeout 200 "$build/bin/tpevent_bench_measure_cpu" >"$measure_cpu_log" 2>&1
# tp_measure_compare's verdicts in trials, and python -m tpevent.timeit against python -m
# timeit (issues 51, 49), on this machine's quieter cores.
timeout 120 "$build/bin/tpevent_bench_compare_cpu" >>"$measure_cpu_log" 2>&1
[ -n "$site" ] && PYTHONPATH="$site" timeout 300 python3 bench/measure/timeit_cpu.py >>"$measure_cpu_log" 2>&1
measure_gpu_log="$out/gpu-check-measure-gpu-bench.log"
if [ -n "$site" ]; then
  step "measure benchmark, GPU ($measure_gpu_log)"
  PYTHONPATH="$site" timeout 480 python3 bench/measure/measure_gpu.py >"$measure_gpu_log" 2>&1
  measure_gpu_status=$?
  [ "$measure_gpu_status" -ne 0 ] && echo "measure_gpu.py: exit status $measure_gpu_status (124: timed out)" >>"$measure_gpu_log"
else
  echo "python binding not built: no GPU measure benchmark" >"$measure_gpu_log"
fi

test_jobs="${TEST_JOBS:-8}"
step "ctest -j $test_jobs ${CTEST_ARGS:-} ($test_log)"
# A bound on the whole run, so that a hang somewhere still leaves a summary.
(cd "$build" && timeout "${TEST_TIME_LIMIT:-420}" ctest -j "$test_jobs" --timeout 300 --output-on-failure ${CTEST_ARGS:-}) \
  >"$test_log" 2>&1
ctest_status=$?

# The conformance suite on cuda:0 under compute-sanitizer's memcheck, a rotated
# subset in a bounded time, after ctest so that the GPU is quiet: no memory error;
# CUDA API errors counted by call (docs/gpu-api-errors.md lists tpevent's own).
memcheck_log="$out/gpu-check-memcheck.log"
memcheck_summary="$out/gpu-check-memcheck-summary.txt"
step "conformance under compute-sanitizer ($memcheck_log)"
memcheck_status=0
if [ "$gpu_count" -ge 1 ]; then
  scripts/gpu-memcheck.sh "$build" "$memcheck_log" "$memcheck_summary"
  memcheck_status=$?
  [ "$memcheck_status" -eq 2 ] && memcheck_status=0 # not run: said in its summary
else
  echo "  no GPU: not run" >"$memcheck_summary"
fi

# The conformance suite and the model, unchanged, on every OpenCL device that is not
# PoCL (ctest runs them on PoCL): NVIDIA's OpenCL on the H200. Its peer is cuda:0, the
# same GPU through the other runtime: the rules across backends (waits, elapsed time
# on one host clock) run both ways, then the model against cuda:0 and cpu:0.
opencl_gpu_log="$out/gpu-check-opencl-gpu.log"
step "conformance and model on OpenCL GPUs ($opencl_gpu_log)"
: >"$opencl_gpu_log"
opencl_gpus=$(env -u POCL_DEVICES "$build/bin/tpevent" devices 2>/dev/null |
              grep -E '^opencl:[0-9]+ ' | grep -v 'Portable Computing Language' | awk '{print $1}')
opencl_gpu_summary=""
for device in $opencl_gpus; do
  peer=cpu:0
  [ "$gpu_count" -ge 1 ] && peer=cuda:0
  for pair in "$device $peer" "$peer $device"; do
    set -- $pair
    passed=0 skipped=0 failed=0 failed_names=""
    names=$("$build/bin/tpevent_conformance" --list)
    # The other way round, only what involves two backends (the rest is cuda:0's own, in ctest).
    [ "$1" != "$device" ] && names=$(printf '%s\n' $names | grep -E 'across_backends|two_backends|rule17_hold_beside|rule17_ten_thousand')
    for name in $names; do
      env -u POCL_DEVICES timeout 120 "$build/bin/tpevent_conformance" --device "$1" --peer "$2" --test "$name" \
        >>"$opencl_gpu_log" 2>&1
      case $? in
        0) passed=$((passed + 1)) ;;
        77) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)); failed_names="$failed_names $name"; echo "FAILED: $1 peer $2: $name" >>"$opencl_gpu_log" ;;
      esac
    done
    opencl_gpu_summary+="  conformance $1 (peer $2): passed $passed  skipped $skipped  failed $failed${failed_names:+ ($failed_names )}"$'\n'
  done
  for model_peer in $peer cpu:0; do
    env -u POCL_DEVICES timeout 300 "$build/bin/tpevent_model" --device "$device" --peer "$model_peer" --sequences 300 \
      >>"$opencl_gpu_log" 2>&1
    opencl_gpu_summary+="  model $device (peer $model_peer): exit status $?"$'\n'
  done
done
[ -z "$opencl_gpus" ] && opencl_gpu_summary="  no OpenCL device other than PoCL"$'\n'

# The conformance suite, the model and bench/vulkan on every Vulkan device that is
# not lavapipe (ctest runs vulkan:N, whichever driver that is): NVIDIA's Vulkan
# (issue 56). Pairings: cuda:0 and cpu:0 as the peer, the whole suite on the device
# with cuda:0, and each way only what involves two backends otherwise; the waits
# across backends say which mechanism they used (device: an external timeline
# semaphore; host: the fallback, and why), gathered into the summary.
vulkan_gpu_log="$out/gpu-check-vulkan-gpu.log"
vulkan_bench_log="$out/gpu-check-vulkan-bench.log"
step "conformance, model and benchmark on Vulkan GPUs ($vulkan_gpu_log, $vulkan_bench_log)"
: >"$vulkan_gpu_log"
: >"$vulkan_bench_log"
vulkan_devices_line=$("$build/bin/tpevent" devices 2>&1 | grep -E '^vulkan' || true)
vulkan_gpus=${VULKAN_DEVICES:-$("$build/bin/tpevent" devices 2>/dev/null | grep -E '^vulkan:[0-9]+ ' |
                               grep -viE 'llvmpipe|lavapipe' | awk '{print $1}')}
vulkan_gpu_summary=""
# conformance_pair DEVICE PEER WHICH: WHICH "all" runs every test, "across" only those
# that involve two backends; appends a line to vulkan_gpu_summary.
conformance_pair() {
  local passed=0 skipped=0 failed=0 failed_names="" names name
  names=$("$build/bin/tpevent_conformance" --list)
  [ "$3" = across ] && names=$(grep -E 'across_backends|two_backends|rule17_hold_beside|rule17_ten_thousand' <<<"$names")
  for name in $names; do
    timeout 120 "$build/bin/tpevent_conformance" --device "$1" --peer "$2" --test "$name" >>"$vulkan_gpu_log" 2>&1
    case $? in
      0) passed=$((passed + 1)) ;;
      77) skipped=$((skipped + 1)) ;;
      *) failed=$((failed + 1)); failed_names="$failed_names $name"; echo "FAILED: $1 peer $2: $name" >>"$vulkan_gpu_log" ;;
    esac
  done
  vulkan_gpu_summary+="  conformance $1 (peer $2, $3): passed $passed  skipped $skipped  failed $failed${failed_names:+ ($failed_names )}"$'\n'
}
if ! grep -q '^-- tpevent: Vulkan backend built' "$configure_log"; then
  vulkan_gpu_summary="  NOT RUN: the Vulkan backend was not built: $(grep -E '^-- tpevent: Vulkan' "$configure_log" | sed 's/^-- tpevent: //')"$'\n'
elif [ -z "$vulkan_gpus" ]; then
  vulkan_gpu_summary="  NOT RUN: no Vulkan device other than lavapipe: ${vulkan_devices_line:-tpevent devices lists no vulkan line}"$'\n'
else
  # The peers: cuda:0 where there is a GPU, then cpu:0.
  peers=()
  [ "$gpu_count" -ge 1 ] && peers+=(cuda:0)
  peers+=(cpu:0)
  for device in $vulkan_gpus; do
    for peer in "${peers[@]}"; do
      if [ "$peer" = "${peers[0]}" ]; then conformance_pair "$device" "$peer" all; else conformance_pair "$device" "$peer" across; fi
      conformance_pair "$peer" "$device" across
    done
    for peer in "${peers[@]}"; do
      timeout 300 "$build/bin/tpevent_model" --device "$device" --peer "$peer" --sequences 300 >>"$vulkan_gpu_log" 2>&1
      vulkan_gpu_summary+="  model $device (peer $peer): exit status $?"$'\n'
    done
    if [ -x "$build/bin/tpevent_bench_vulkan" ]; then
      timeout 300 "$build/bin/tpevent_bench_vulkan" --device "$device" >>"$vulkan_bench_log" 2>&1
      echo "(exit status $?)" >>"$vulkan_bench_log"
    else
      echo "tpevent_bench_vulkan was not built (see $build_log)" >>"$vulkan_bench_log"
    fi
    # Waits Vulkan <-> CUDA: the device's path (an exported timeline semaphore) beside
    # the host's and each backend's floor, in one run (issue 56).
    if [ "$gpu_count" -ge 1 ] && [ -x "$build/bin/tpevent_bench_vulkan_cuda_wait" ]; then
      timeout 120 "$build/bin/tpevent_bench_vulkan_cuda_wait" --vulkan "$device" --cuda cuda:0 --samples 500 \
        >>"$vulkan_bench_log" 2>&1
      echo "(exit status $?)" >>"$vulkan_bench_log"
    fi
  done
  mechanisms=$(grep -hE '^wait mechanism ' "$vulkan_gpu_log" "$vulkan_bench_log" | sort | uniq -c | sed 's/^ */    /')
  vulkan_gpu_summary+="  waits across backends, by mechanism (count, pair, what it used):"$'\n'"${mechanisms:-    none reported}"$'\n'
fi

# --------------------------------------------------------------- summary
# One line per test in CTest's log: "  n/N Test  #k: name ....   Passed   0.1 sec".
count() { grep -cE "Test +#[0-9]+: $1 .*$2" "$test_log" || true; }
group_line() { # label, name pattern
  printf '  %-34s passed %4s  skipped %4s  failed %4s\n' "$1" \
    "$(count "$2" ' Passed')" "$(count "$2" '\*\*\*Skipped')" \
    "$(count "$2" '\*\*\*(Failed|Timeout|Exception|Not Run)')"
}
{
  echo
  echo "================ gpu-check summary ================"
  echo "machine: ${gpu_count} GPU(s); $(printf '%s' "$gpus" | head -1 | sed 's/ (UUID.*//')"
  [ -n "$build_note" ] && echo "$build_note"
  grep -E 'tests passed' "$test_log" || echo "ctest did not finish (status $ctest_status)"
  group_line "all tests" '[^ ]+'
  group_line "conformance on cuda:0" 'conformance\.cuda:0\.[^ ]+'
  group_line "  of them rules 7 and 13 (clock)" 'conformance\.cuda:0\.rule(07|13)_[^ ]+'
  group_line "gpu tests (cuda)" 'gpu\.cuda\.[^ ]+'
  group_line "conformance on cpu" 'conformance\.cpu:[01]\.[^ ]+'
  echo "conformance under compute-sanitizer (memcheck):"
  cat "$memcheck_summary"
  echo "OpenCL GPUs (not PoCL), conformance and model:"
  printf '%s' "$opencl_gpu_summary"
  echo "Vulkan (issue 56): $vulkan_note"
  echo "  tpevent devices:"
  printf '%s\n' "${vulkan_devices_line:-no vulkan line}" | sed 's/^/    /'
  group_line "conformance on vulkan (ctest)" 'conformance\.vulkan:[0-9]+\.[^ ]+'
  group_line "every test naming vulkan (ctest)" '[^ ]*vulkan[^ ]*'
  echo "Vulkan GPUs (not lavapipe), conformance, model and bench/vulkan:"
  printf '%s' "$vulkan_gpu_summary"
  if [ "$gpu_count" -lt 2 ]; then
    echo "  one GPU only: the cross-device rules on cuda:0/cuda:1 skipped (no peer)"
  fi
  failed=$(grep -E 'Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception|Not Run)' "$test_log" |
           sed -E 's/.*Test +#[0-9]+: ([^ ]+).*\*\*\*([A-Za-z ]+).*/    \1 (\2)/')
  [ -n "$failed" ] && { echo "  failed:"; echo "$failed"; }
  skipped_cuda=$(grep -E 'Test +#[0-9]+: (conformance\.cuda|gpu\.cuda)[^ ]* .*\*\*\*Skipped' "$test_log" |
                 sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/    \1/')
  if [ -n "$skipped_cuda" ]; then
    echo "  skipped CUDA tests, with their reason:"
    for name in $(echo "$skipped_cuda" | head -10); do
      reason=$(cd "$build" && ctest -R "^${name//./\\.}\$" -V 2>&1 | grep -m1 -oE 'skipped: .*')
      echo "    $name: ${reason:-?}" | cut -c1-200
    done
    [ "$(echo "$skipped_cuda" | wc -l)" -gt 10 ] && echo "    ... ($(echo "$skipped_cuda" | wc -l) in all)"
  fi
  echo
  echo "benchmark (exit status $bench_status):"
  sed -n '/^tpevent CUDA backend/,$p' "$bench_log"
  [ "$bench_status" -ne 0 ] && tail -5 "$bench_log"
  echo
  echo "timestamp benchmark:"
  grep -vE '^tpevent timestamp benchmark' "$timestamp_log"
  echo
  echo "clock after an idle while:"
  cat "$clock_idle_log"
  echo
  echo "cross-backend wait benchmark:"
  cat "$cross_wait_log"
  echo
  echo "events over a Unix socket across namespaces (issue 57):"
  cat "$ipc_socket_log"
  echo
  echo "hold benchmark:"
  cat "$hold_log"
  echo
  echo "graph benchmark:"
  cat "$graph_log"
  echo
  echo "graph of kernels and records, tpevent against raw CUDA graphs (issue 53):"
  cat "$graph_raw_log"
  echo
  echo "host function latency (issue 53: launch to fn start within 1.3x of raw):"
  cat "$host_fn_log"
  echo
  echo "OpenCL benchmark:"
  cat "$opencl_bench_log"
  echo
  echo "Vulkan benchmark (issue 56: each op within 1.03x of raw Vulkan; waits Vulkan <-> CUDA by both paths):"
  if [ -s "$vulkan_bench_log" ]; then cat "$vulkan_bench_log"; else echo "  not run: see the Vulkan lines above"; fi
  echo
  echo "tpevent bench:"
  cat "$tool_bench_log"
  echo
  echo "trace benchmark (issue 52: traced - untraced per op within its 'allowed +ns'; raw calls under a trace within 3 %):"
  cat "$trace_bench_log"
  echo
  echo "ncu check (issue 52): $ncu_summary"
  grep -E '^tp_measure:' "$ncu_log" 2>/dev/null | sed 's/^/  /'
  echo
  echo "python bench:"
  cat "$python_bench_log"
  echo
  echo "measure benchmark, CPU:"
  cat "$measure_cpu_log"
  echo
  echo "measure benchmark, GPU:"
  cat "$measure_gpu_log"
  echo
  echo "measure budgets (issues 48, 49):"
  grep -hE '^(measure|compare|timeit) budgets' "$measure_cpu_log" "$measure_gpu_log" || echo "  no budget line (see $measure_gpu_log)"
  sed -n '/^ncu reference/,/^$/p' "$measure_gpu_log"
  echo
  echo "trace budgets (issue 52):"
  grep -E '^trace budget' "$trace_bench_log" || echo "  no budget line (see $trace_bench_log)"
  echo "  ncu check: $ncu_summary"
} | tee "$summary"

[ "$ctest_status" -eq 0 ] && [ "$memcheck_status" -eq 0 ]
