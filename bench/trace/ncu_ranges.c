/*
 * tpevent's ranges seen by a real profiler (issue 52, item 4), for
 * scripts/gpu-check.sh: under `ncu --nvtx --nvtx-include "in/"` (Nsight Compute, whose
 * NVTX injection makes tp_range_push/pop NVTX ranges: docs/timeline.md), this
 * program's 4 kernel launches, one of them inside the tpevent range "in", must be
 * profiled exactly once (gpu-check counts ncu's "==PROF== Profiling" lines).
 *
 * Usage: tpevent_ncu_ranges [--device cuda:N] [--measure]
 *   (default)  the 4 launches: out, in, out, out; prints what it did
 *   --measure  tp_measure of one launch per call, outside any range, and prints what
 *              it answered (held, converged, samples, note) and its wall time: under
 *              ncu, which serializes launches, a launch queued behind tp_measure's hold
 *              waits for the hold's watchdog (docs/timeline.md says what then happens)
 * Exit 77: no usable CUDA device or driver.
 *
 * The kernel is PTX text loaded through the driver API (as bench/cuda/hold_bench.c's),
 * so the build needs no kernel compiler.
 */
#define _POSIX_C_SOURCE 200809L
#include <tpevent/tpevent.h>

#include "cu_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct launch {
    CUfunction kernel;
    CUstream stream;
} launch;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "tpevent_ncu_ranges: %s: %s\n", what, detail);
    exit(1);
}

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK)
        die(what, tp_last_error());
}

static CUresult launch_once(const launch *l)
{
    return cu.launch_kernel(l->kernel, 1, 1, 1, 1, 1, 1, 0, l->stream, NULL, NULL);
}

static void check_launch(const launch *l)
{
    CUresult result = launch_once(l);
    if (result != CUDA_SUCCESS)
        die("cuLaunchKernel", bench_cu_error_name(result));
}

/* tp_measure's work: one launch per call. */
static tp_status launch_work(tp_stream *stream, void *arg)
{
    (void)stream; /* the launch's stream is the native of the one measured */
    return launch_once(arg) == CUDA_SUCCESS ? TP_OK : TP_ERR_BACKEND;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void measure(tp_stream *stream, launch *l)
{
    tp_measure_options options;
    check_tp(tp_measure_options_init(&options), "tp_measure_options_init");
    options.max_time_ns = 5000000000; /* 5 s: bounded under ncu too */
    tp_measurement m = {.size = sizeof m};
    double start = seconds_now();
    tp_status status = tp_measure(stream, launch_work, l, &options, &m);
    double wall = seconds_now() - start;
    printf(
        "tp_measure: status %s, %.2f s wall; median %.1f ns per launch, samples %lld, batch %lld, held %s, "
        "converged %s; note: %s\n",
        tp_status_name(status), wall, m.median_ns, (long long)m.samples, (long long)m.batch, m.held ? "yes" : "no",
        m.converged ? "yes" : "no", m.note[0] ? m.note : "(none)");
}

int main(int argc, char **argv)
{
    const char *device = "cuda:0";
    bool measuring = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = argv[++i];
        else if (strcmp(argv[i], "--measure") == 0)
            measuring = true;
        else {
            fprintf(stderr, "usage: tpevent_ncu_ranges [--device cuda:N] [--measure]\n");
            return 2;
        }
    }
    if (!bench_cu_load()) {
        printf("skipped: the CUDA driver API (libcuda.so.1) cannot be loaded\n");
        return 77;
    }
    tp_stream *stream = NULL;
    if (strncmp(device, "cuda", 4) != 0 || tp_set_device(device) != TP_OK ||
        tp_stream_create(&stream, device, 0) != TP_OK) {
        printf("skipped: %s: %s\n", device, tp_last_error());
        return 77;
    }
    CUmodule module;
    launch l = {0};
    const char *failed_call = NULL;
    void *native = NULL;
    check_tp(tp_stream_native(stream, &native), "tp_stream_native");
    l.stream = native;
    if (bench_cu_primary_context_current(device, &failed_call) != CUDA_SUCCESS ||
        cu.module_load_data(&module, bench_cu_empty_ptx) != CUDA_SUCCESS ||
        cu.module_get_function(&l.kernel, module, "empty") != CUDA_SUCCESS)
        die("the driver API", "cannot load the empty kernel on the device's primary context");

    if (measuring) {
        measure(stream, &l);
    } else {
        check_launch(&l);
        check_tp(tp_range_push(stream, "in"), "tp_range_push");
        check_launch(&l);
        check_tp(tp_range_pop(stream), "tp_range_pop");
        check_launch(&l);
        check_launch(&l);
        check_tp(tp_stream_synchronize(stream), "tp_stream_synchronize");
        printf("launched 4 kernels on %s, the second inside the tpevent range \"in\"\n", device);
    }
    tp_stream_destroy(stream);
    return 0;
}
