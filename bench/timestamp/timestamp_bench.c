/*
 * Rule 13 measured: how far tp_event_timestamp falls from the host's bracket of a
 * record, what the call costs, and elapsed time across backends against the host.
 *
 * Usage: tpevent_bench_timestamp[_cuda] [--device D] [--peer P] [--records N]
 *            [--seconds S] [--cost N] [--drift-seconds S]
 *
 * (a) bracket: N records (default 200) on an idle stream, spread evenly over S
 *     seconds (default 2) so that the GPU's conversion crosses anchors and drift;
 *     for each, t0 = CLOCK_MONOTONIC before the record, synchronize, t1 after, ts =
 *     the timestamp. Reported: p50/p99/max of the distance outside [t0, t1] (0
 *     inside), of ts - t0 and t1 - ts, and of the width t1 - t0; how many fell
 *     outside by more than error_ns; whether any went backwards on the stream.
 * (b) cost: tp_event_timestamp's first call on a fresh record (the conversion), and
 *     a repeated call (the kept value), in ns; a pair of clock reads beside it.
 * (d) across backends (the device and --peer, default cpu:0 for a GPU device): a
 *     record on the peer, 20 ms of host sleep, a record on the device's idle stream
 *     and its synchronize; elapsed_time against the host's interval from before the
 *     first record to after the synchronize.
 * The _cuda build adds (c) --drift-seconds S (default 0: off), the raw event
 * clock's drift against CLOCK_MONOTONIC beside tpevent's corrected timestamps, and
 * (d) one CUDA device's elapsed_time against cudaEventElapsedTime.
 *
 * Every loop is bounded by time (BENCH_WAIT_LIMIT_NS per wait). It prints numbers
 * and asserts nothing about time. Exit 77: the device is unusable here.
 */
#define _POSIX_C_SOURCE 200809L

#include "timestamp_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_UNAVAILABLE 77

typedef struct options {
    const char *device;
    const char *peer;
    int records;
    double seconds;
    int cost;
    double drift_seconds;
} options;

static void synchronize_bounded(tp_event *event)
{
    must(tp_event_synchronize_for(event, BENCH_WAIT_LIMIT_NS), "tp_event_synchronize_for (a hang?)");
}

/* ------------------------------------------------------------ (a) bracket */

static void bracket(const options *o, const tp_clock_info *clock)
{
    const size_t n = (size_t)o->records;
    int64_t *outside = calloc(n, sizeof(int64_t)), *after_t0 = calloc(n, sizeof(int64_t));
    int64_t *before_t1 = calloc(n, sizeof(int64_t)), *width = calloc(n, sizeof(int64_t));
    if (!outside || !after_t0 || !before_t1 || !width)
        must(TP_ERR_OUT_OF_MEMORY, "bracket arrays");
    tp_stream *stream;
    tp_event *event;
    must(tp_stream_create(&stream, o->device, 0), "tp_stream_create");
    must(tp_event_create(&event, o->device, TP_EVENT_TIMING), "tp_event_create");
    const int64_t start = now_ns(), spacing = (int64_t)(o->seconds * 1e9) / (int64_t)n;
    int64_t previous = INT64_MIN;
    size_t backwards = 0, beyond_error = 0;
    for (size_t i = 0; i < n; i++) {
        sleep_until_ns(start + (int64_t)i * spacing);
        const int64_t t0 = now_ns();
        must(tp_event_record(event, stream), "tp_event_record");
        synchronize_bounded(event);
        const int64_t t1 = now_ns();
        int64_t ts = 0;
        must(tp_event_timestamp(event, &ts), "tp_event_timestamp");
        outside[i] = ts < t0 ? t0 - ts : ts > t1 ? ts - t1 : 0;
        after_t0[i] = ts - t0;
        before_t1[i] = t1 - ts;
        width[i] = t1 - t0;
        backwards += ts < previous;
        beyond_error += outside[i] > clock->error_ns;
        previous = ts;
    }
    printf("timestamp bracket on %s: %zu records over %.1f s; error_ns %lld, resolution_ns %lld\n", o->device, n,
           (double)(now_ns() - start) / 1e9, (long long)clock->error_ns, (long long)clock->resolution_ns);
    printf("  %-26s %12s %12s %12s\n", "(us)", "p50", "p99", "max");
    print_summary("outside [t0, t1]", summarize(outside, n), 1);
    print_summary("ts - t0", summarize(after_t0, n), 1);
    print_summary("t1 - ts", summarize(before_t1, n), 1);
    print_summary("bracket width t1 - t0", summarize(width, n), 1);
    printf("  outside by more than error_ns: %zu of %zu; went backwards on the stream: %zu\n", beyond_error, n,
           backwards);
    must(tp_event_destroy(event), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    free(outside), free(after_t0), free(before_t1), free(width);
}

/* --------------------------------------------------------------- (b) cost */

static void cost(const options *o)
{
    enum { repeats = 1000 };
    const size_t n = (size_t)o->cost;
    int64_t *first = calloc(n, sizeof(int64_t)), *again = calloc(n, sizeof(int64_t));
    int64_t *clock_pair = calloc(n, sizeof(int64_t));
    if (!first || !again || !clock_pair)
        must(TP_ERR_OUT_OF_MEMORY, "cost arrays");
    tp_stream *stream;
    tp_event *event;
    must(tp_stream_create(&stream, o->device, 0), "tp_stream_create");
    must(tp_event_create(&event, o->device, TP_EVENT_TIMING), "tp_event_create");
    const int64_t deadline = now_ns() + 10 * (int64_t)1000000000;
    size_t done = 0;
    for (; done < n && now_ns() < deadline; done++) {
        must(tp_event_record(event, stream), "tp_event_record");
        synchronize_bounded(event);
        int64_t ts;
        /* The first call converts (on a GPU); the clock reads around it are
         * measured beside it, to subtract by eye. */
        int64_t t0 = now_ns();
        must(tp_event_timestamp(event, &ts), "tp_event_timestamp");
        first[done] = now_ns() - t0;
        t0 = now_ns();
        for (int k = 0; k < repeats; k++)
            must(tp_event_timestamp(event, &ts), "tp_event_timestamp");
        again[done] = (now_ns() - t0) / repeats;
        t0 = now_ns();
        clock_pair[done] = now_ns() - t0;
    }
    printf("tp_event_timestamp cost on %s: %zu records\n", o->device, done);
    printf("  %-26s %12s %12s %12s\n", "(ns)", "p50", "p99", "max");
    print_summary("first call (fresh record)", summarize(first, done), 0);
    print_summary("repeated call", summarize(again, done), 0);
    print_summary("two clock reads (overhead)", summarize(clock_pair, done), 0);
    must(tp_event_destroy(event), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    free(first), free(again), free(clock_pair);
}

/* --------------------------------------------------- (d) across backends */

static void across(const options *o, int tries)
{
    if (!o->peer) {
        printf("across backends: skipped (no --peer; a GPU device's default is cpu:0)\n");
        return;
    }
    enum { sleep_ms = 20 };
    int64_t *gap = calloc((size_t)tries, sizeof(int64_t)), *host_minus = calloc((size_t)tries, sizeof(int64_t));
    if (!gap || !host_minus)
        must(TP_ERR_OUT_OF_MEMORY, "across arrays");
    tp_stream *first_stream, *stream;
    tp_event *first, *then;
    must(tp_stream_create(&first_stream, o->peer, 0), "tp_stream_create (peer)");
    must(tp_stream_create(&stream, o->device, 0), "tp_stream_create");
    must(tp_event_create(&first, o->peer, TP_EVENT_TIMING), "tp_event_create (peer)");
    must(tp_event_create(&then, o->device, TP_EVENT_TIMING), "tp_event_create");
    int i = 0;
    for (; i < tries; i++) {
        const int64_t t0 = now_ns();
        must(tp_event_record(first, first_stream), "tp_event_record (peer)");
        synchronize_bounded(first);
        sleep_until_ns(now_ns() + sleep_ms * 1000000);
        must(tp_event_record(then, stream), "tp_event_record");
        synchronize_bounded(then);
        const int64_t host = now_ns() - t0;
        float ms = NAN;
        must(tp_event_elapsed_time(first, then, &ms), "tp_event_elapsed_time");
        host_minus[i] = host - (int64_t)llround((double)ms * 1e6);
        gap[i] = llabs(host_minus[i]);
    }
    printf("elapsed_time %s -> %s around a %d ms host sleep, against the host's interval (%d tries)\n", o->peer,
           o->device, sleep_ms, i);
    printf("  %-26s %12s %12s %12s\n", "(us)", "p50", "p99", "max");
    print_summary("|host - elapsed|", summarize(gap, (size_t)i), 1);
    print_summary("host - elapsed", summarize(host_minus, (size_t)i), 1);
    must(tp_event_destroy(then), "tp_event_destroy");
    must(tp_event_destroy(first), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    must(tp_stream_destroy(first_stream), "tp_stream_destroy");
    free(gap), free(host_minus);
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr,
            "usage: tpevent_bench_timestamp [--device D] [--peer P] [--records N] [--seconds S] "
            "[--cost N] [--drift-seconds S]\n");
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {NULL, NULL, 200, 2.0, 2000, 0.0};
    for (int i = 1; i < argc; i += 2) { /* name, value */
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value)
            usage();
        if (strcmp(argv[i], "--device") == 0)
            o.device = value;
        else if (strcmp(argv[i], "--peer") == 0)
            o.peer = value;
        else if (strcmp(argv[i], "--records") == 0)
            o.records = atoi(value);
        else if (strcmp(argv[i], "--seconds") == 0)
            o.seconds = atof(value);
        else if (strcmp(argv[i], "--cost") == 0)
            o.cost = atoi(value);
        else if (strcmp(argv[i], "--drift-seconds") == 0)
            o.drift_seconds = atof(value);
        else
            usage();
    }
    if (o.records < 1 || o.cost < 1 || !(o.seconds >= 0.0) || !(o.drift_seconds >= 0.0))
        usage();
    return o;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
#ifdef TIMESTAMP_BENCH_CUDA
    if (!o.device)
        o.device = "cuda:0";
#else
    if (!o.device)
        o.device = "cpu:0";
#endif
    tp_device parsed;
    must(tp_device_parse(o.device, &parsed), "tp_device_parse");
    if (!o.peer && parsed.type != TP_DEVICE_CPU)
        o.peer = "cpu:0";
    const char *reason = NULL;
    if (tp_backend_status(tp_device_type_name(parsed.type), &reason) != TP_OK) {
        printf("skipped: %s is unusable here: %s\n", o.device, reason ? reason : "(no reason given)");
        return EXIT_UNAVAILABLE;
    }
    tp_clock_info clock;
    must(tp_device_clock(o.device, &clock), "tp_device_clock");
    printf("tpevent timestamp benchmark (%s)\n", tp_version_string());
    bracket(&o, &clock);
    cost(&o);
    across(&o, 20);
    int status = 0;
#ifdef TIMESTAMP_BENCH_CUDA
    status |= cuda_same_device_elapsed(o.device, 20);
    if (o.drift_seconds > 0.0)
        status |= cuda_drift(o.device, o.drift_seconds);
    else
        printf("drift: off (--drift-seconds S to measure)\n");
#endif
    return status;
}
