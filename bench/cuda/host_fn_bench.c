/*
 * Rule 15's latency (issue 53): from the launch of a host function on an idle
 * stream to the first instruction of the function, tpevent's against raw
 * cudaLaunchHostFunc's, measured the same way in one process.
 *
 * Usage: tpevent_bench_host_fn [--device cuda:N] [--samples N] [--check]
 *
 * A sample: the stream is idle (synchronized, outside the timing); optionally a
 * pause; t0 = CLOCK_MONOTONIC; the launch; the function reads CLOCK_MONOTONIC
 * first thing (t1) and returns; the stream is synchronized (t2). Launch to fn
 * start is t1 - t0, the round trip t2 - t0. The two sides alternate sample by
 * sample, the order flipping each time, so that clock changes and load fall on
 * both. Two rows:
 *   back to back   the next launch right after the synchronize (a program that
 *                  launches and waits in turn);
 *   after 1 ms     1 ms asleep before each launch (both sides' threads asleep).
 * Reported per row: the median and p90 of each side, and the ratio of the medians
 * (tpevent / raw) against the budget, 1.3x for launch to fn start (the round trip
 * has none: tpevent's release goes through a stream memory operation, the
 * runtime's through its callback thread).
 *
 * The raw side: the static cudart this was built with, a non-blocking stream of
 * priority 0, as tpevent makes them. --check makes a missed budget the exit status
 * (3). Exit 77: no usable CUDA device here. It asserts nothing about time otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include "bench_rounds.h"

#include <cuda_runtime_api.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_UNAVAILABLE 77
#define EXIT_OVER_BUDGET 3
#define LATENCY_BUDGET 1.3
#define MAX_SAMPLES 100000

typedef struct options {
    const char *device;
    int samples;
    int check;
} options;

static void pause_ns(long ns)
{
    struct timespec left = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&left, &left) != 0) {
    }
}

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_host_fn: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void check_raw(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "tpevent_bench_host_fn: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

static _Atomic uint64_t fn_started;

static void stamp_fn(void *arg)
{
    (void)arg;
    atomic_store_explicit(&fn_started, bench_now_ns(), memory_order_release);
}

typedef struct sides {
    tp_stream *tp;
    cudaStream_t raw;
} sides;

/* One sample of one side: launch to fn start and round trip, in ns. */
static void sample(const sides *s, int raw, long pause, double *start, double *round_trip)
{
    if (pause)
        pause_ns(pause);
    atomic_store_explicit(&fn_started, 0, memory_order_relaxed);
    uint64_t t0 = bench_now_ns();
    if (raw) {
        check_raw(cudaLaunchHostFunc(s->raw, stamp_fn, NULL), "cudaLaunchHostFunc");
        check_raw(cudaStreamSynchronize(s->raw), "cudaStreamSynchronize");
    } else {
        check_tp(tp_stream_launch_host_fn(s->tp, stamp_fn, NULL), "tp_stream_launch_host_fn");
        check_tp(tp_stream_synchronize(s->tp), "tp_stream_synchronize");
    }
    uint64_t t2 = bench_now_ns();
    uint64_t t1 = atomic_load_explicit(&fn_started, memory_order_acquire);
    if (t1 < t0) {
        fprintf(stderr, "tpevent_bench_host_fn: the host function did not run before the synchronize returned\n");
        exit(1);
    }
    *start = (double)(t1 - t0);
    *round_trip = (double)(t2 - t0);
}

static double quantile(double *values, int count, double q)
{
    return bench_quantile(values, (size_t)count, q);
}

/* One row: returns whether launch to fn start is within the budget. */
static bool report_row(const sides *s, const char *name, long pause, int samples)
{
    double *v = malloc(4 * (size_t)samples * sizeof *v);
    if (!v) {
        fprintf(stderr, "tpevent_bench_host_fn: out of memory\n");
        exit(1);
    }
    double *tp_start = v, *raw_start = v + samples, *tp_trip = v + 2 * samples, *raw_trip = v + 3 * samples;
    for (int i = 0; i < 10; i++) { /* warm-up: the stream's thread, pools, the driver's callback thread */
        double a, b;
        sample(s, 0, 0, &a, &b);
        sample(s, 1, 0, &a, &b);
    }
    for (int i = 0; i < samples; i++) {
        int raw_first = i % 2;
        sample(s, raw_first, pause, raw_first ? &raw_start[i] : &tp_start[i], raw_first ? &raw_trip[i] : &tp_trip[i]);
        sample(s, !raw_first, pause, raw_first ? &tp_start[i] : &raw_start[i], raw_first ? &tp_trip[i] : &raw_trip[i]);
    }
    double ts = quantile(tp_start, samples, 0.5), rs = quantile(raw_start, samples, 0.5);
    double ts90 = quantile(tp_start, samples, 0.9), rs90 = quantile(raw_start, samples, 0.9);
    double tt = quantile(tp_trip, samples, 0.5), rt = quantile(raw_trip, samples, 0.5);
    double ratio = rs > 0 ? ts / rs : 0.0;
    bool within = ratio <= LATENCY_BUDGET;
    printf("| %-14s | %8.2f | %8.2f | %8.2f | %8.2f | %6.2fx %-4s | %9.2f | %9.2f | %6.2fx |\n", name, ts / 1e3,
           ts90 / 1e3, rs / 1e3, rs90 / 1e3, ratio, within ? "ok" : "OVER", tt / 1e3, rt / 1e3, rt > 0 ? tt / rt : 0.0);
    free(v);
    return within;
}

static void usage(void)
{
    fprintf(stderr, "usage: tpevent_bench_host_fn [--device cuda:N] [--samples N (1 to %d)] [--check]\n", MAX_SAMPLES);
    exit(2);
}

int main(int argc, char **argv)
{
    options o = {.device = "cuda:0", .samples = 2000};
    size_t samples = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--check") == 0)
            o.check = 1;
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            o.device = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc && bench_parse_size(argv[i + 1], &samples) &&
                 samples <= MAX_SAMPLES) {
            o.samples = (int)samples;
            i++;
        } else
            usage();
    }
    if (strncmp(o.device, "cuda:", 5) != 0)
        usage();
    if (tp_backend_status("cuda", NULL) != TP_OK) {
        printf("tpevent_bench_host_fn: skipped: the CUDA backend is not usable here: %s\n", tp_last_error());
        return EXIT_UNAVAILABLE;
    }
    int index = atoi(o.device + 5), count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || index >= count) {
        printf("tpevent_bench_host_fn: skipped: no CUDA device %d for the raw side\n", index);
        return EXIT_UNAVAILABLE;
    }
    check_raw(cudaSetDevice(index), "cudaSetDevice");
    sides s = {0};
    check_tp(tp_stream_create(&s.tp, o.device, 0), "tp_stream_create");
    check_raw(cudaStreamCreateWithPriority(&s.raw, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");

    printf("host function latency on an idle %s stream (rule 15, issue 53), %d samples a side; us\n\n", o.device,
           o.samples);
    printf("| %-14s | %8s | %8s | %8s | %8s | %-12s | %9s | %9s | %7s |\n", "row", "tp start", "tp p90", "raw strt",
           "raw p90", "start ratio", "tp trip", "raw trip", "trip");
    printf(
        "|----------------|----------|----------|----------|----------|--------------|-----------|-----------|------"
        "---|\n");
    bool within = report_row(&s, "back to back", 0, o.samples);
    within = report_row(&s, "after 1 ms", 1000000L, o.samples < 500 ? o.samples : 500) && within;
    printf("\nhost fn budget: launch to fn start within %.1fx of raw cudaLaunchHostFunc's (median): %s\n",
           LATENCY_BUDGET, within ? "within" : "OVER");

    check_tp(tp_stream_destroy(s.tp), "tp_stream_destroy");
    check_raw(cudaStreamDestroy(s.raw), "cudaStreamDestroy");
    return o.check && !within ? EXIT_OVER_BUDGET : 0;
}
