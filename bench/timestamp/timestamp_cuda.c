/*
 * The timestamp benchmark's CUDA-only parts, against raw cudart (the toolkit's
 * static cudart, as bench/cuda does).
 *
 * Drift: the raw event clock needs a reference to mean anything on the host, so a
 * raw event is recorded at the start on an idle stream and bracketed by the host
 * (t0 before cudaEventRecord, t1 once a spinning cudaEventQuery sees it reached;
 * the tightest of several tries, its host time the bracket's middle). Every second
 * after, the same for a new raw event: cudaEventElapsedTime from the reference,
 * against the host's interval between the two middles, is the raw clock's offset
 * without correction (ppm and total us). Beside it, a tpevent record on an idle
 * stream bracketed the same way: how far its timestamp falls from its bracket's
 * middle, and outside the bracket, is tpevent's error with correction.
 */
#define _POSIX_C_SOURCE 200809L

#include "timestamp_bench.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { tries_per_bracket = 5 };

static int cuda_failed(cudaError_t error, const char *what)
{
    fprintf(stderr, "tpevent_bench_timestamp: %s: %s\n", what, cudaGetErrorString(error));
    return 1;
}

#define CUDA_OR_FAIL(call)                     \
    do {                                       \
        cudaError_t error_ = (call);           \
        if (error_ != cudaSuccess)             \
            return cuda_failed(error_, #call); \
    } while (0)

typedef struct bracketed {
    int64_t t0, t1;
} bracketed;

/* Records each of `events` in turn on the idle `stream` and spins until it is
 * reached, bounded by time; *best is the one of the tightest bracket, which is
 * the one to measure with (each try has its own event, so it keeps its record). */
static int raw_bracket(cudaEvent_t events[tries_per_bracket], cudaStream_t stream, int *best, bracketed *out)
{
    out->t0 = 0;
    out->t1 = INT64_MAX;
    for (int i = 0; i < tries_per_bracket; i++) {
        const int64_t t0 = now_ns();
        CUDA_OR_FAIL(cudaEventRecord(events[i], stream));
        cudaError_t status;
        while ((status = cudaEventQuery(events[i])) == cudaErrorNotReady)
            if (now_ns() - t0 > BENCH_WAIT_LIMIT_NS)
                return cuda_failed(status, "cudaEventQuery (a hang?)");
        const int64_t t1 = now_ns();
        CUDA_OR_FAIL(status);
        if (t1 - t0 < out->t1 - out->t0) {
            *out = (bracketed){t0, t1};
            *best = i;
        }
    }
    return 0;
}

static int create_events(cudaEvent_t events[tries_per_bracket])
{
    for (int i = 0; i < tries_per_bracket; i++)
        CUDA_OR_FAIL(cudaEventCreate(&events[i]));
    return 0;
}

static int destroy_events(cudaEvent_t events[tries_per_bracket])
{
    for (int i = 0; i < tries_per_bracket; i++)
        CUDA_OR_FAIL(cudaEventDestroy(events[i]));
    return 0;
}

static int64_t middle(bracketed b)
{
    return b.t0 + (b.t1 - b.t0) / 2;
}

int cuda_drift(const char *device, double seconds)
{
    tp_device parsed;
    must(tp_device_parse(device, &parsed), "tp_device_parse");
    CUDA_OR_FAIL(cudaSetDevice(parsed.index));
    cudaStream_t raw_stream;
    cudaEvent_t references[tries_per_bracket], samples[tries_per_bracket];
    CUDA_OR_FAIL(cudaStreamCreateWithFlags(&raw_stream, cudaStreamNonBlocking));
    if (create_events(references) != 0 || create_events(samples) != 0)
        return 1;
    tp_stream *stream;
    tp_event *event;
    must(tp_stream_create(&stream, device, 0), "tp_stream_create");
    must(tp_event_create(&event, device, TP_EVENT_TIMING), "tp_event_create");
    tp_clock_info clock;
    must(tp_device_clock(device, &clock), "tp_device_clock");

    bracketed ref;
    int reference = 0;
    if (raw_bracket(references, raw_stream, &reference, &ref) != 0)
        return 1;
    printf(
        "drift of %s's event clock against CLOCK_MONOTONIC over %.0f s (reference bracket %.3f us; "
        "tpevent error_ns %lld)\n",
        device, seconds, (double)(ref.t1 - ref.t0) / 1e3, (long long)clock.error_ns);
    printf("  %6s %14s %10s %12s %16s %16s\n", "t (s)", "raw offset us", "raw ppm", "raw width us", "tpevent ts-mid us",
           "outside [t0,t1] us");
    const int64_t start = middle(ref);
    for (int second = 1; second <= (int)seconds; second++) {
        sleep_until_ns(start + (int64_t)second * 1000000000);
        bracketed raw;
        int sample = 0;
        if (raw_bracket(samples, raw_stream, &sample, &raw) != 0)
            return 1;
        float device_ms = 0.0f;
        CUDA_OR_FAIL(cudaEventElapsedTime(&device_ms, references[reference], samples[sample]));
        const int64_t host_ns = middle(raw) - start;
        const double offset_ns = (double)device_ms * 1e6 - (double)host_ns;

        const int64_t t0 = now_ns();
        must(tp_event_record(event, stream), "tp_event_record");
        must(tp_event_synchronize_for(event, BENCH_WAIT_LIMIT_NS), "tp_event_synchronize_for (a hang?)");
        const int64_t t1 = now_ns();
        int64_t ts = 0;
        must(tp_event_timestamp(event, &ts), "tp_event_timestamp");
        const int64_t outside = ts < t0 ? t0 - ts : ts > t1 ? ts - t1 : 0;
        printf("  %6d %14.3f %10.3f %12.3f %16.3f %16.3f\n", second, offset_ns / 1e3, offset_ns / (double)host_ns * 1e6,
               (double)(raw.t1 - raw.t0) / 1e3, (double)(ts - (t0 + (t1 - t0) / 2)) / 1e3, (double)outside / 1e3);
        fflush(stdout);
    }
    must(tp_event_destroy(event), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    if (destroy_events(samples) != 0 || destroy_events(references) != 0)
        return 1;
    CUDA_OR_FAIL(cudaStreamDestroy(raw_stream));
    return 0;
}

/* tpevent exposes no native event of a record (tp_event_native is not in this
 * release), so raw events are recorded right beside tpevent's, on the same native
 * stream: the two intervals differ only by the enqueue time between the pairs. */
int cuda_same_device_elapsed(const char *device, int tries)
{
    tp_stream *stream;
    tp_event *start, *end;
    must(tp_stream_create(&stream, device, 0), "tp_stream_create");
    must(tp_event_create(&start, device, TP_EVENT_TIMING), "tp_event_create");
    must(tp_event_create(&end, device, TP_EVENT_TIMING), "tp_event_create");
    void *native = NULL;
    must(tp_stream_native(stream, &native), "tp_stream_native");
    cudaEvent_t raw_start, raw_end;
    CUDA_OR_FAIL(cudaEventCreate(&raw_start));
    CUDA_OR_FAIL(cudaEventCreate(&raw_end));
    int64_t *gap = calloc((size_t)tries, sizeof(int64_t));
    if (!gap)
        must(TP_ERR_OUT_OF_MEMORY, "gap array");
    for (int i = 0; i < tries; i++) {
        must(tp_event_record(start, stream), "tp_event_record");
        CUDA_OR_FAIL(cudaEventRecord(raw_start, (cudaStream_t)native));
        sleep_until_ns(now_ns() + 1000000); /* 1 ms: the records land apart */
        must(tp_event_record(end, stream), "tp_event_record");
        CUDA_OR_FAIL(cudaEventRecord(raw_end, (cudaStream_t)native));
        must(tp_event_synchronize_for(end, BENCH_WAIT_LIMIT_NS), "tp_event_synchronize_for (a hang?)");
        CUDA_OR_FAIL(cudaEventSynchronize(raw_end));
        float tp_ms = NAN, raw_ms = NAN;
        must(tp_event_elapsed_time(start, end, &tp_ms), "tp_event_elapsed_time");
        CUDA_OR_FAIL(cudaEventElapsedTime(&raw_ms, raw_start, raw_end));
        gap[i] = llabs(llround(((double)tp_ms - (double)raw_ms) * 1e6));
    }
    printf(
        "elapsed_time on one device (%s) against cudaEventElapsedTime of raw events recorded beside "
        "(not the same native events: tp_event_native is not available), %d tries\n",
        device, tries);
    printf("  %-26s %12s %12s %12s\n", "(us)", "p50", "p99", "max");
    print_summary("|tpevent - raw|", summarize(gap, (size_t)tries), 1);
    free(gap);
    CUDA_OR_FAIL(cudaEventDestroy(raw_end));
    CUDA_OR_FAIL(cudaEventDestroy(raw_start));
    must(tp_event_destroy(end), "tp_event_destroy");
    must(tp_event_destroy(start), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    return 0;
}
