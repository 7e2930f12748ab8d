/*
 * tpevent's CUDA backend against the raw cudart calls underneath, in one process.
 *
 * Usage: tpevent_bench_cuda [--device cuda:N] [--batch N] [--rounds N] [--check]
 *
 * How it is fair. Each op has a tpevent side and a raw side written alike: a tight
 * loop of --batch calls on objects made beforehand, each call's status checked,
 * timed as a whole with one CLOCK_MONOTONIC read before and one after (so a sample
 * is the mean of a batch, and no clock read falls between calls on either side).
 * The raw side calls cudart directly: the static cudart of the toolkit this was
 * built with, the same library the CUDA module links in (its version is printed),
 * on streams and events made as tpevent makes them (non-blocking streams of
 * priority 0; the same event flags). The two sides alternate batch by batch,
 * --rounds times per op, the order flipping each round, so that clock changes,
 * turbo and cache state fall on both. Before each batch (outside the timing) the
 * whole device is synchronized: with the other side's batch still running, the
 * query op read 3-7x raw (1.3 us against 0.2-0.5 on the H200; 0.16 both once idle).
 *
 * Reported per op: the median batch on each side, and the ratio tpevent/raw as the
 * median of the per-round ratios (each round's two batches ran back to back, so
 * slow drifts cancel), with the spread of those ratios (interquartile range). For
 * create+destroy, the speedup raw/tpevent.
 *
 * Budgets (docs/design.md): each op at most 3% over raw; create+destroy at least 10x
 * faster than cudaEventCreateWithFlags+cudaEventDestroy; two 200 ms host functions
 * on two streams done in under 220 ms (rule 15). Host functions' enqueue cost and
 * round trip are reported beside cudaLaunchHostFunc's, with no budget (tpevent's
 * run on a thread per stream, the raw ones on the driver's one thread). --check
 * makes a missed budget the exit status (3). Exit 77: no usable CUDA device here.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include "bench_rounds.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_UNAVAILABLE 77
#define EXIT_OVER_BUDGET 3

typedef struct options {
    const char *device;
    size_t batch;
    size_t rounds;
    int check;
} options;

/* tpevent's objects for the ops; made once, like a program would. */
typedef struct tp_fixture {
    const char *device;
    tp_stream *stream; /* idle: records on it complete at once */
    tp_stream *other;  /* the stream that waits */
    tp_event *plain;   /* timing off */
    tp_event *timed;   /* timing on */
    tp_event *timed_end;
} tp_fixture;

/* The same, made with cudart directly. */
typedef struct raw_fixture {
    cudaStream_t stream;
    cudaStream_t other;
    cudaEvent_t plain;
    cudaEvent_t timed;
    cudaEvent_t timed_end;
} raw_fixture;

/* BUDGET_NONE: reported side by side, no budget (host functions: tpevent's run on a
 * thread of its own per stream, the raw ones on the driver's one thread). */
typedef enum op_budget { BUDGET_RATIO, BUDGET_SPEEDUP, BUDGET_NONE } op_budget;

typedef struct op {
    const char *name;
    void (*tp_batch)(tp_fixture *f, size_t n);
    void (*raw_batch)(raw_fixture *r, size_t n);
    op_budget budget;
} op;

/* A benchmark that fails measures nothing: stop with the reason. */
static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_cuda: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void check_raw(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "tpevent_bench_cuda: %s: %s: %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
        exit(1);
    }
}

/* ---------------------------------------------------------------- the ops
 *
 * Each pair below is the same loop on the two sides. A failed call stops the run
 * (the check is one compare, on both sides alike).
 */

static void tp_record_plain(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_record(f->plain, f->stream), "tp_event_record");
}

static void raw_record_plain(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaEventRecord(r->plain, r->stream), "cudaEventRecord");
}

static void tp_record_timed(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_record(f->timed, f->stream), "tp_event_record");
}

static void raw_record_timed(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaEventRecord(r->timed, r->stream), "cudaEventRecord");
}

static void tp_query(tp_fixture *f, size_t n)
{
    bool done = false;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_query(f->plain, &done), "tp_event_query");
}

static void raw_query(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaEventQuery(r->plain), "cudaEventQuery");
}

static void tp_synchronize(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_synchronize(f->plain), "tp_event_synchronize");
}

static void raw_synchronize(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaEventSynchronize(r->plain), "cudaEventSynchronize");
}

static void tp_wait(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_stream_wait_event(f->other, f->plain), "tp_stream_wait_event");
}

static void raw_wait(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaStreamWaitEvent(r->other, r->plain, 0), "cudaStreamWaitEvent");
}

static void tp_elapsed(tp_fixture *f, size_t n)
{
    float ms;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_elapsed_time(f->timed, f->timed_end, &ms), "tp_event_elapsed_time");
}

static void raw_elapsed(raw_fixture *r, size_t n)
{
    float ms;
    for (size_t i = 0; i < n; i++)
        check_raw(cudaEventElapsedTime(&ms, r->timed, r->timed_end), "cudaEventElapsedTime");
}

static void tp_create_destroy(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tp_event *event;
        check_tp(tp_event_create(&event, f->device, TP_EVENT_DEFAULT), "tp_event_create");
        check_tp(tp_event_destroy(event), "tp_event_destroy");
    }
}

/* The same with no device string: NULL is the thread's current device, which the
 * fixture set. */
static void tp_create_destroy_current(tp_fixture *f, size_t n)
{
    (void)f;
    for (size_t i = 0; i < n; i++) {
        tp_event *event;
        check_tp(tp_event_create(&event, NULL, TP_EVENT_DEFAULT), "tp_event_create");
        check_tp(tp_event_destroy(event), "tp_event_destroy");
    }
}

/* What tpevent's TP_EVENT_DEFAULT would cost without its pool. */
static void raw_create_destroy(raw_fixture *r, size_t n)
{
    (void)r;
    for (size_t i = 0; i < n; i++) {
        cudaEvent_t event;
        check_raw(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        check_raw(cudaEventDestroy(event), "cudaEventDestroy");
    }
}

static void tp_record_synchronize(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_tp(tp_event_record(f->plain, f->stream), "tp_event_record");
        check_tp(tp_event_synchronize(f->plain), "tp_event_synchronize");
    }
}

static void raw_record_synchronize(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_raw(cudaEventRecord(r->plain, r->stream), "cudaEventRecord");
        check_raw(cudaEventSynchronize(r->plain), "cudaEventSynchronize");
    }
}

static void noop_host_fn(void *arg)
{
    (void)arg;
}

/* Enqueue cost: the launch alone, on a stream whose earlier host functions may
 * still be running (the batch is drained outside the timing). */
static void tp_host_fn_enqueue(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_stream_launch_host_fn(f->stream, noop_host_fn, NULL), "tp_stream_launch_host_fn");
}

static void raw_host_fn_enqueue(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(cudaLaunchHostFunc(r->stream, noop_host_fn, NULL), "cudaLaunchHostFunc");
}

/* Round trip: a host function on an idle stream, and the stream synchronized. */
static void tp_host_fn_round_trip(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_tp(tp_stream_launch_host_fn(f->stream, noop_host_fn, NULL), "tp_stream_launch_host_fn");
        check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    }
}

static void raw_host_fn_round_trip(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_raw(cudaLaunchHostFunc(r->stream, noop_host_fn, NULL), "cudaLaunchHostFunc");
        check_raw(cudaStreamSynchronize(r->stream), "cudaStreamSynchronize");
    }
}

static const op ops[] = {
    {"record (timing off)", tp_record_plain, raw_record_plain, BUDGET_RATIO},
    {"record (timing on)", tp_record_timed, raw_record_timed, BUDGET_RATIO},
    {"query (completed)", tp_query, raw_query, BUDGET_RATIO},
    {"synchronize (completed)", tp_synchronize, raw_synchronize, BUDGET_RATIO},
    {"stream wait", tp_wait, raw_wait, BUDGET_RATIO},
    {"elapsed time", tp_elapsed, raw_elapsed, BUDGET_RATIO},
    {"create+destroy", tp_create_destroy, raw_create_destroy, BUDGET_SPEEDUP},
    {"create+destroy (NULL dev)", tp_create_destroy_current, raw_create_destroy, BUDGET_SPEEDUP},
    {"record+synchronize (idle)", tp_record_synchronize, raw_record_synchronize, BUDGET_RATIO},
    {"host fn enqueue", tp_host_fn_enqueue, raw_host_fn_enqueue, BUDGET_NONE},
    {"host fn round trip (idle)", tp_host_fn_round_trip, raw_host_fn_round_trip, BUDGET_NONE},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

/* ------------------------------------------------------------- fixtures */

static void tp_fixture_open(tp_fixture *f, const char *device)
{
    f->device = device;
    check_tp(tp_set_device(device), "tp_set_device");
    check_tp(tp_stream_create(&f->stream, device, 0), "tp_stream_create");
    check_tp(tp_stream_create(&f->other, device, 0), "tp_stream_create");
    check_tp(tp_event_create(&f->plain, device, TP_EVENT_DEFAULT), "tp_event_create");
    check_tp(tp_event_create(&f->timed, device, TP_EVENT_TIMING), "tp_event_create");
    check_tp(tp_event_create(&f->timed_end, device, TP_EVENT_TIMING), "tp_event_create");
}

static void tp_fixture_close(tp_fixture *f)
{
    check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
    check_tp(tp_event_destroy(f->timed_end), "tp_event_destroy");
    check_tp(tp_event_destroy(f->timed), "tp_event_destroy");
    check_tp(tp_event_destroy(f->plain), "tp_event_destroy");
    check_tp(tp_stream_destroy(f->other), "tp_stream_destroy");
    check_tp(tp_stream_destroy(f->stream), "tp_stream_destroy");
}

/* Every event recorded once more, in order, and reached: what the query,
 * synchronize, wait and elapsed ops expect. Outside the timing. */
static void tp_fixture_settle(tp_fixture *f)
{
    check_tp(tp_event_record(f->plain, f->stream), "tp_event_record");
    check_tp(tp_event_record(f->timed, f->stream), "tp_event_record");
    check_tp(tp_event_record(f->timed_end, f->stream), "tp_event_record");
    check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
}

static void raw_fixture_open(raw_fixture *r, int index)
{
    check_raw(cudaSetDevice(index), "cudaSetDevice");
    check_raw(cudaStreamCreateWithPriority(&r->stream, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    check_raw(cudaStreamCreateWithPriority(&r->other, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    check_raw(cudaEventCreateWithFlags(&r->plain, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    check_raw(cudaEventCreateWithFlags(&r->timed, cudaEventDefault), "cudaEventCreateWithFlags");
    check_raw(cudaEventCreateWithFlags(&r->timed_end, cudaEventDefault), "cudaEventCreateWithFlags");
}

static void raw_fixture_close(raw_fixture *r)
{
    check_raw(cudaStreamSynchronize(r->stream), "cudaStreamSynchronize");
    check_raw(cudaStreamSynchronize(r->other), "cudaStreamSynchronize");
    check_raw(cudaEventDestroy(r->timed_end), "cudaEventDestroy");
    check_raw(cudaEventDestroy(r->timed), "cudaEventDestroy");
    check_raw(cudaEventDestroy(r->plain), "cudaEventDestroy");
    check_raw(cudaStreamDestroy(r->other), "cudaStreamDestroy");
    check_raw(cudaStreamDestroy(r->stream), "cudaStreamDestroy");
}

static void raw_fixture_settle(raw_fixture *r)
{
    check_raw(cudaEventRecord(r->plain, r->stream), "cudaEventRecord");
    check_raw(cudaEventRecord(r->timed, r->stream), "cudaEventRecord");
    check_raw(cudaEventRecord(r->timed_end, r->stream), "cudaEventRecord");
    check_raw(cudaStreamSynchronize(r->stream), "cudaStreamSynchronize");
    check_raw(cudaStreamSynchronize(r->other), "cudaStreamSynchronize");
}

/* ------------------------------------------------------------------ main */

static double time_tp_batch(void *fixture, size_t index, size_t batch)
{
    tp_fixture *f = fixture;
    tp_fixture_settle(f);
    check_raw(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    uint64_t t0 = bench_now_ns();
    ops[index].tp_batch(f, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

static double time_raw_batch(void *fixture, size_t index, size_t batch)
{
    raw_fixture *r = fixture;
    raw_fixture_settle(r);
    check_raw(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    uint64_t t0 = bench_now_ns();
    ops[index].raw_batch(r, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

/* ------------------------------------------------- host functions at once
 *
 * Rule 15: two 200 ms host functions on two streams, launched back to back and
 * both streams synchronized, timed as a whole: tpevent's run at once (budget:
 * under 220 ms), the raw ones on the driver's one callback thread (400 ms on the
 * H200).
 */
#define SLOW_HOST_FN_MS 200
#define TWO_SLOW_BUDGET_MS 220.0

static void slow_host_fn(void *arg)
{
    (void)arg;
    struct timespec left = {0, SLOW_HOST_FN_MS * 1000000L};
    while (nanosleep(&left, &left) != 0) {
    }
}

static double tp_two_slow_ms(const char *device)
{
    tp_stream *a, *b;
    check_tp(tp_stream_create(&a, device, 0), "tp_stream_create");
    check_tp(tp_stream_create(&b, device, 0), "tp_stream_create");
    /* Their threads started beforehand, as a program's streams would have them. */
    check_tp(tp_stream_launch_host_fn(a, noop_host_fn, NULL), "tp_stream_launch_host_fn");
    check_tp(tp_stream_launch_host_fn(b, noop_host_fn, NULL), "tp_stream_launch_host_fn");
    check_tp(tp_stream_synchronize(a), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(b), "tp_stream_synchronize");
    uint64_t t0 = bench_now_ns();
    check_tp(tp_stream_launch_host_fn(a, slow_host_fn, NULL), "tp_stream_launch_host_fn");
    check_tp(tp_stream_launch_host_fn(b, slow_host_fn, NULL), "tp_stream_launch_host_fn");
    check_tp(tp_stream_synchronize(a), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(b), "tp_stream_synchronize");
    uint64_t t1 = bench_now_ns();
    check_tp(tp_stream_destroy(b), "tp_stream_destroy");
    check_tp(tp_stream_destroy(a), "tp_stream_destroy");
    return (double)(t1 - t0) / 1e6;
}

static double raw_two_slow_ms(void)
{
    cudaStream_t a, b;
    check_raw(cudaStreamCreateWithPriority(&a, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    check_raw(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    uint64_t t0 = bench_now_ns();
    check_raw(cudaLaunchHostFunc(a, slow_host_fn, NULL), "cudaLaunchHostFunc");
    check_raw(cudaLaunchHostFunc(b, slow_host_fn, NULL), "cudaLaunchHostFunc");
    check_raw(cudaStreamSynchronize(a), "cudaStreamSynchronize");
    check_raw(cudaStreamSynchronize(b), "cudaStreamSynchronize");
    uint64_t t1 = bench_now_ns();
    check_raw(cudaStreamDestroy(b), "cudaStreamDestroy");
    check_raw(cudaStreamDestroy(a), "cudaStreamDestroy");
    return (double)(t1 - t0) / 1e6;
}

/* Prints the section; true if tpevent's median missed the budget. */
static bool report_two_slow_host_fns(const char *device, size_t rounds)
{
    enum { max_rounds = 5 };
    double tp_ms[max_rounds], raw_ms[max_rounds];
    size_t n = rounds < max_rounds ? rounds : max_rounds;
    for (size_t i = 0; i < n; i++) {
        if (i % 2 == 0) {
            tp_ms[i] = tp_two_slow_ms(device);
            raw_ms[i] = raw_two_slow_ms();
        } else {
            raw_ms[i] = raw_two_slow_ms();
            tp_ms[i] = tp_two_slow_ms(device);
        }
    }
    double tp_median = bench_quantile(tp_ms, n, 0.5), raw_median = bench_quantile(raw_ms, n, 0.5);
    bool over = tp_median >= TWO_SLOW_BUDGET_MS;
    printf("\ntwo %d ms host functions on two streams, launched together, both synchronized (median of %zu):\n",
           SLOW_HOST_FN_MS, n);
    printf("  tpevent %.1f ms, raw cudaLaunchHostFunc %.1f ms (raw/tpevent %.2fx); budget < %.0f ms: %s\n", tp_median,
           raw_median, raw_median / tp_median, TWO_SLOW_BUDGET_MS, over ? "OVER" : "ok");
    return over;
}

static int parse_options(int argc, char **argv, options *opt)
{
    *opt = (options){.device = "cuda:0", .batch = 200, .rounds = 201, .check = 0};
    for (int i = 1; i < argc; i++) {
        bool has_value = i + 1 < argc;
        /* --samples: the name the batch size had when each sample was one call. */
        if (strcmp(argv[i], "--device") == 0 && has_value)
            opt->device = argv[++i];
        else if ((strcmp(argv[i], "--batch") == 0 || strcmp(argv[i], "--samples") == 0) && has_value)
            opt->batch = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && has_value)
            opt->rounds = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--check") == 0)
            opt->check = 1;
        else
            return -1;
    }
    return opt->batch > 0 && opt->rounds > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    options opt;
    if (parse_options(argc, argv, &opt) != 0) {
        fprintf(stderr, "usage: %s [--device cuda:N] [--batch N] [--rounds N] [--check]\n", argv[0]);
        return 2;
    }
    const char *reason = NULL;
    if (tp_backend_status("cuda", &reason) != TP_OK) {
        printf("skipped: the CUDA backend is not usable here: %s\n", reason);
        return EXIT_UNAVAILABLE;
    }
    tp_device parsed;
    check_tp(tp_device_parse(opt.device, &parsed), "tp_device_parse");
    if (parsed.type != TP_DEVICE_CUDA || parsed.index == TP_DEVICE_INDEX_CURRENT) {
        fprintf(stderr, "tpevent_bench_cuda: %s is not a CUDA device with an index (cuda:N)\n", opt.device);
        return 2;
    }
    char name[256] = "?";
    check_tp(tp_device_name(opt.device, name, sizeof name), "tp_device_name");
    int runtime_version = 0, driver_version = 0;
    check_raw(cudaRuntimeGetVersion(&runtime_version), "cudaRuntimeGetVersion");
    check_raw(cudaDriverGetVersion(&driver_version), "cudaDriverGetVersion");

    size_t rounds = opt.rounds;
    bench_samples samples;
    if (!bench_samples_alloc(&samples, "tpevent_bench_cuda", OP_COUNT, rounds))
        return 1;

    tp_fixture f;
    raw_fixture r;
    tp_fixture_open(&f, opt.device);
    raw_fixture_open(&r, parsed.index);
    /* Two passes: the budgeted ops, then the host functions. Interleaved with the
     * others, a host function's thread still spinning for its next one (TP_SPIN_NS)
     * shares the driver with the next op's tpevent side, and only that side. */
    for (int pass = 0; pass < 2; pass++) {
        bool host_fns = pass == 1;
        /* Warm-up: the first calls load code, fill the pool, settle clocks. */
        for (size_t o = 0; o < OP_COUNT; o++) {
            if ((ops[o].budget == BUDGET_NONE) != host_fns)
                continue;
            (void)time_tp_batch(&f, o, opt.batch);
            (void)time_raw_batch(&r, o, opt.batch);
        }
        bench_sides sides = {time_tp_batch, time_raw_batch, &f, &r};
        for (size_t round = 0; round < rounds; round++) {
            for (size_t o = 0; o < OP_COUNT; o++) {
                if ((ops[o].budget == BUDGET_NONE) != host_fns)
                    continue;
                size_t at = o * rounds + round;
                double *tp_sample = &samples.tp_ns[at], *raw_sample = &samples.raw_ns[at];
                bench_time_round(&sides, o, round, opt.batch, tp_sample, raw_sample);
                samples.ratios[at] = ops[o].budget != BUDGET_SPEEDUP ? *tp_sample / *raw_sample
                                                                     : *raw_sample / *tp_sample;
            }
        }
    }
    raw_fixture_close(&r);
    tp_fixture_close(&f);

    printf("tpevent CUDA backend vs raw cudart on %s (%s)\n", opt.device, name);
    printf("raw side: cudart %d.%d linked into this program (the toolkit the module links), driver %d.%d\n",
           runtime_version / 1000, runtime_version % 1000 / 10, driver_version / 1000, driver_version % 1000 / 10);
    bench_print_table_head(rounds, opt.batch, "median of the rounds' tpevent/raw (speedup: raw/tpevent)");
    int over = 0;
    for (size_t o = 0; o < OP_COUNT; o++) {
        bench_summary s = bench_summarize(&samples, o);
        if (ops[o].budget == BUDGET_NONE) {
            bench_print_row(ops[o].name, &s, "reported, no budget");
        } else if (ops[o].budget == BUDGET_RATIO) {
            over += !bench_print_ratio_row(ops[o].name, &s, 1.03);
        } else {
            int ok = s.ratio >= 10.0;
            char verdict[64];
            snprintf(verdict, sizeof verdict, ">= 10x faster: %s", ok ? "ok" : "SHORT");
            over += !ok;
            printf("%-26s %11.1f %9.1f %7.1fx %8.2f  %s\n", ops[o].name, s.tp_median, s.raw_median, s.ratio, s.iqr,
                   verdict);
        }
    }
    over += report_two_slow_host_fns(opt.device, rounds);
    printf("\n%s\n", over ? "budget: missed (see above)" : "budget: met for every op");
    bench_samples_free(&samples);
    return opt.check && over ? EXIT_OVER_BUDGET : 0;
}
