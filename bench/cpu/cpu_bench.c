/*
 * Benchmark of the CPU backend through the public API, next to clock_gettime
 * measured in the same run (the CPU backend has no runtime underneath: the clock is
 * its floor).
 *
 * Usage: tpevent_bench_cpu [--device cpu:N] [--samples N] [--batch N]
 *
 * Fast operations are timed in batches of --batch calls (one clock read costs about
 * as much as the call being timed, so timing each call alone would mostly measure
 * the clock); each sample is a batch's time divided by its size. Round trips through
 * the worker are timed one by one. The table gives the median and the 99th
 * percentile of the samples, in ns. It prints numbers and asserts nothing about them.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    const char *device;
    size_t samples;
    size_t batch;
} options;

typedef struct bench {
    const char *device;
    tp_stream *stream; /* idle: nothing is ever launched on it */
    tp_event *plain;   /* no timing */
    tp_event *timed;
    tp_event *timed_end;
    double *values; /* one per sample */
    size_t samples;
    size_t batch;
} bench;

typedef struct stats {
    double median;
    double p99;
} stats;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A benchmark that fails is no benchmark: stop with the reason. */
static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_cpu: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats summarize(double *values, size_t count)
{
    qsort(values, count, sizeof *values, compare_doubles);
    size_t p99 = (size_t)ceil(0.99 * (double)count);
    stats s = {
        .median = count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2,
        .p99 = values[p99 ? p99 - 1 : 0],
    };
    return s;
}

/* ------------------------------------------------------- batched operations */

typedef void (*batch_fn)(bench *b, size_t count);

static void batch_clock(bench *b, size_t count)
{
    (void)b;
    /* volatile: the compiler must not drop or merge the reads. */
    volatile uint64_t sink = 0;
    for (size_t i = 0; i < count; i++)
        sink += now_ns();
    (void)sink;
}

static void batch_record_plain(bench *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        check(tp_event_record(b->plain, b->stream), "tp_event_record");
}

static void batch_record_timed(bench *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        check(tp_event_record(b->timed, b->stream), "tp_event_record");
}

static void batch_query(bench *b, size_t count)
{
    bool done = false;
    for (size_t i = 0; i < count; i++)
        check(tp_event_query(b->timed, &done), "tp_event_query");
    if (!done)
        check(TP_ERR_NOT_READY, "query of a completed event");
}

static void batch_record_query(bench *b, size_t count)
{
    bool done = false;
    for (size_t i = 0; i < count; i++) {
        check(tp_event_record(b->timed, b->stream), "tp_event_record");
        check(tp_event_query(b->timed, &done), "tp_event_query");
    }
    if (!done)
        check(TP_ERR_NOT_READY, "record+query on an idle stream");
}

static void batch_synchronize(bench *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        check(tp_event_synchronize(b->timed), "tp_event_synchronize");
}

static void batch_wait(bench *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        check(tp_stream_wait_event(b->stream, b->timed), "tp_stream_wait_event");
}

static void batch_elapsed(bench *b, size_t count)
{
    float ms;
    for (size_t i = 0; i < count; i++)
        check(tp_event_elapsed_time(b->timed, b->timed_end, &ms), "tp_event_elapsed_time");
}

static void batch_create_destroy(bench *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        tp_event *event;
        check(tp_event_create(&event, b->device, TP_EVENT_DEFAULT), "tp_event_create");
        check(tp_event_destroy(event), "tp_event_destroy");
    }
}

static stats measure_batches(bench *b, batch_fn fn)
{
    fn(b, b->batch); /* warm-up: caches, lazily made objects */
    for (size_t s = 0; s < b->samples; s++) {
        uint64_t start = now_ns();
        fn(b, b->batch);
        b->values[s] = (double)(now_ns() - start) / (double)b->batch;
    }
    return summarize(b->values, b->samples);
}

/* ------------------------------------------------ round trip through the worker */

typedef struct hold {
    atomic_bool started;
    atomic_bool released;
} hold;

/* Keeps the worker busy until released, so the record after it is queued. */
static void hold_worker(void *arg)
{
    hold *h = arg;
    atomic_store_explicit(&h->started, true, memory_order_release);
    while (!atomic_load_explicit(&h->released, memory_order_acquire))
        ;
}

/* From releasing a busy worker to seeing, through tp_event_synchronize, the record
 * queued behind its host function: the worker finishes the task, reaches the
 * record, stamps it, and the spinning synchronize sees it. */
static stats measure_round_trip(bench *b)
{
    tp_stream *busy;
    tp_event *event;
    check(tp_stream_create(&busy, b->device, 0), "tp_stream_create");
    check(tp_event_create(&event, b->device, TP_EVENT_TIMING), "tp_event_create");
    for (size_t s = 0; s <= b->samples; s++) {
        hold h;
        atomic_init(&h.started, false);
        atomic_init(&h.released, false);
        check(tp_stream_launch_host_fn(busy, hold_worker, &h), "tp_stream_launch_host_fn");
        check(tp_event_record(event, busy), "tp_event_record");
        while (!atomic_load_explicit(&h.started, memory_order_acquire))
            ;
        uint64_t start = now_ns();
        atomic_store_explicit(&h.released, true, memory_order_release);
        check(tp_event_synchronize(event), "tp_event_synchronize");
        uint64_t end = now_ns();
        if (s > 0) /* the first starts the worker */
            b->values[s - 1] = (double)(end - start);
        check(tp_stream_synchronize(busy), "tp_stream_synchronize");
    }
    check(tp_event_destroy(event), "tp_event_destroy");
    check(tp_stream_destroy(busy), "tp_stream_destroy");
    return summarize(b->values, b->samples);
}

/* ------------------------------------------------------------- resolution */

/* Smallest nonzero step between two clock reads in a row. */
static double clock_step_ns(size_t tries)
{
    uint64_t best = UINT64_MAX;
    for (size_t i = 0; i < tries; i++) {
        uint64_t a = now_ns(), c = now_ns();
        if (c > a && c - a < best)
            best = c - a;
    }
    return best == UINT64_MAX ? 0 : (double)best;
}

/* Smallest nonzero step between the timestamps of two records in a row, as
 * tp_event_elapsed_time reports it. */
static double event_step_ns(bench *b, size_t tries)
{
    double best = INFINITY;
    for (size_t i = 0; i < tries; i++) {
        float ms;
        check(tp_event_record(b->timed, b->stream), "tp_event_record");
        check(tp_event_record(b->timed_end, b->stream), "tp_event_record");
        check(tp_event_elapsed_time(b->timed, b->timed_end, &ms), "tp_event_elapsed_time");
        double ns = (double)ms * 1e6;
        if (ns > 0 && ns < best)
            best = ns;
    }
    return isinf(best) ? 0 : best;
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *to)
{
    fprintf(to, "usage: tpevent_bench_cpu [--device cpu:N] [--samples N] [--batch N]\n");
}

static bool parse_size(const char *text, size_t *out)
{
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || value == 0 || text[0] == '-')
        return false;
    *out = (size_t)value;
    return true;
}

static bool parse_options(int argc, char **argv, options *opt)
{
    int i = 1;
    while (i < argc) {
        const char *name = argv[i];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc)
            return false;
        const char *value = argv[i + 1];
        if (strcmp(name, "--device") == 0)
            opt->device = value;
        else if (strcmp(name, "--samples") == 0) {
            if (!parse_size(value, &opt->samples))
                return false;
        } else if (strcmp(name, "--batch") == 0) {
            if (!parse_size(value, &opt->batch))
                return false;
        } else {
            return false;
        }
        i += 2;
    }
    return true;
}

static void print_row(const char *name, stats s)
{
    printf("%-44s %10.1f %10.1f\n", name, s.median, s.p99);
}

int main(int argc, char **argv)
{
    options opt = {.device = "cpu", .samples = 2000, .batch = 200};
    if (!parse_options(argc, argv, &opt)) {
        usage(stderr);
        return 2;
    }
    tp_device device;
    check(tp_device_parse(opt.device, &device), "device");
    if (device.type != TP_DEVICE_CPU) {
        fprintf(stderr, "tpevent_bench_cpu: %s is not a cpu device\n", opt.device);
        return 2;
    }

    bench b = {.device = opt.device, .samples = opt.samples, .batch = opt.batch};
    b.values = malloc(b.samples * sizeof *b.values);
    if (!b.values) {
        fprintf(stderr, "tpevent_bench_cpu: out of memory for %zu samples\n", b.samples);
        return 1;
    }
    check(tp_stream_create(&b.stream, opt.device, 0), "tp_stream_create");
    check(tp_event_create(&b.plain, opt.device, TP_EVENT_DEFAULT), "tp_event_create");
    check(tp_event_create(&b.timed, opt.device, TP_EVENT_TIMING), "tp_event_create");
    check(tp_event_create(&b.timed_end, opt.device, TP_EVENT_TIMING), "tp_event_create");
    check(tp_event_record(b.timed, b.stream), "tp_event_record");
    check(tp_event_record(b.timed_end, b.stream), "tp_event_record");

    printf("tpevent %s, CPU backend on %s: %zu samples, batches of %zu calls (ns per call)\n", tp_version_string(),
           opt.device, b.samples, b.batch);
    printf("%-44s %10s %10s\n", "operation", "median", "p99");
    print_row("clock_gettime(CLOCK_MONOTONIC) (the floor)", measure_batches(&b, batch_clock));
    print_row("record, timing off, idle stream", measure_batches(&b, batch_record_plain));
    print_row("record, timing on, idle stream", measure_batches(&b, batch_record_timed));
    print_row("query, completed", measure_batches(&b, batch_query));
    print_row("record+query, idle stream", measure_batches(&b, batch_record_query));
    print_row("synchronize, completed", measure_batches(&b, batch_synchronize));
    print_row("stream wait, completed event", measure_batches(&b, batch_wait));
    print_row("elapsed time, completed", measure_batches(&b, batch_elapsed));
    print_row("create+destroy", measure_batches(&b, batch_create_destroy));
    print_row("record+synchronize through a busy worker", measure_round_trip(&b));

    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    size_t tries = b.samples * 10;
    printf("\ntimer resolution (ns)\n");
    printf("%-44s %10.1f\n", "clock_getres(CLOCK_MONOTONIC)", (double)res.tv_sec * 1e9 + (double)res.tv_nsec);
    printf("%-44s %10.1f\n", "smallest step, clock_gettime", clock_step_ns(tries));
    printf("%-44s %10.1f\n", "smallest step, event timestamps", event_step_ns(&b, tries));

    check(tp_event_destroy(b.timed_end), "tp_event_destroy");
    check(tp_event_destroy(b.timed), "tp_event_destroy");
    check(tp_event_destroy(b.plain), "tp_event_destroy");
    check(tp_stream_destroy(b.stream), "tp_stream_destroy");
    free(b.values);
    return 0;
}
