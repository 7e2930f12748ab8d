/*
 * tpevent's OpenCL backend against the raw OpenCL calls it makes, in one process,
 * one table per OpenCL device (named by its platform: PoCL, NVIDIA's OpenCL, ...).
 *
 * Usage: tpevent_bench_opencl [--device opencl:N] [--batch N] [--rounds N] [--check]
 *
 * How it is fair (as bench/cuda/cuda_bench.c). Each op has a tpevent side and a
 * raw side written alike: a loop of --batch calls on objects made beforehand, each
 * status checked, timed as a whole by one CLOCK_MONOTONIC read before and one
 * after. The raw side calls the ICD loader directly, on queues it makes in the
 * context tpevent made for the device (profiling, in order: as tpevent makes
 * them), and does what the backend does per call:
 *
 *   record       clEnqueueMarkerWithWaitList + clFlush + clReleaseEvent of the
 *                marker it replaces (the backend flushes so that a record is
 *                reached with nobody waiting for it: PoCL keeps unflushed work)
 *   query        clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)
 *   synchronize  clWaitForEvents
 *   stream wait  clEnqueueBarrierWithWaitList + clFlush
 *   elapsed      clGetEventProfilingInfo(CL_PROFILING_COMMAND_END) x2 (the backend
 *                reads a record's END once, after seeing it CL_COMPLETE, and then
 *                keeps it: the raw side is what a caller without that cache pays)
 *
 * The two sides alternate batch by batch, --rounds times per op, the order flipping
 * each round; before each batch (outside the timing) both sides' queues are
 * finished. Reported per op: each side's median batch (ns per call) and the median
 * of the rounds' tpevent/raw ratios with its spread (IQR). Budget (docs/design.md):
 * each op within max(1.03x, raw + 10 ns). --check makes a missed budget the exit
 * status (3).
 * Exit 77: no usable OpenCL device here (the reason is printed).
 *
 * Where 3% cannot be met. A raw program re-records its cl_event from one thread;
 * tpevent's events may be recorded while other threads read them (rule 10), so
 * each read of an event publishes the record it reads in the thread's hazard slot
 * (ocl_readers.c): one locked store per read, query, synchronize and wait, and one
 * fence for elapsed's two, ~6-8 ns uncontended on this machine's class of x86 CPU
 * (the count of readers before it took two atomic adds per event read: ~13 ns on a
 * query, ~18 ns on elapsed). Where the raw call is itself a few ns (PoCL:
 * clGetEventInfo ~16 ns, clGetEventProfilingInfo ~3 ns), those ns are over 3%, so
 * the budget there is raw + 10 ns (issue 53); where it is a driver call of 100 ns
 * or more they are not. Record and wait are dominated by the runtime's flush (us)
 * and vary with the runtime's worker threads. The note printed under each table
 * says so.
 */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120

#include <tpevent/tpevent.h>

#include "bench_rounds.h"

#include <CL/cl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_UNAVAILABLE 77
#define EXIT_OVER_BUDGET 3
#define BUDGET_RATIO 1.03
#define BUDGET_SLACK_NS 10.0 /* max(1.03x, raw + 10 ns): docs/design.md */

typedef struct tp_fixture {
    const char *device;
    tp_stream *stream; /* idle: records on it complete at once */
    tp_stream *other;  /* the stream that waits */
    tp_event *start;
    tp_event *end;
} tp_fixture;

/* The same, made with OpenCL directly; an "event" is its latest marker. */
typedef struct raw_fixture {
    cl_command_queue queue;
    cl_command_queue other;
    cl_event start;
    cl_event end;
} raw_fixture;

typedef struct op {
    const char *name;
    void (*tp_batch)(tp_fixture *f, size_t n);
    void (*raw_batch)(raw_fixture *r, size_t n);
} op;

/* A benchmark that fails measures nothing: stop with the reason. */
static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_opencl: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void check_raw(cl_int error, const char *what)
{
    if (error != CL_SUCCESS) {
        fprintf(stderr, "tpevent_bench_opencl: %s: OpenCL error %d\n", what, (int)error);
        exit(1);
    }
}

/* ---------------------------------------------------------------- the ops */

static void tp_record(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_record(f->start, f->stream), "tp_event_record");
}

/* A record as the backend makes it: the marker, flushed, replacing the last. */
static void raw_record_into(cl_command_queue queue, cl_event *latest)
{
    cl_event marker = NULL;
    check_raw(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker), "clEnqueueMarkerWithWaitList");
    check_raw(clFlush(queue), "clFlush");
    if (*latest)
        check_raw(clReleaseEvent(*latest), "clReleaseEvent");
    *latest = marker;
}

static void raw_record(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        raw_record_into(r->queue, &r->start);
}

static void tp_query(tp_fixture *f, size_t n)
{
    bool done = false;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_query(f->start, &done), "tp_event_query");
}

static void raw_query(raw_fixture *r, size_t n)
{
    cl_int state = CL_QUEUED;
    for (size_t i = 0; i < n; i++)
        check_raw(clGetEventInfo(r->start, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL),
                  "clGetEventInfo");
}

static void tp_synchronize(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_synchronize(f->start), "tp_event_synchronize");
}

static void raw_synchronize(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_raw(clWaitForEvents(1, &r->start), "clWaitForEvents");
}

static void tp_wait(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_stream_wait_event(f->other, f->start), "tp_stream_wait_event");
}

static void raw_wait(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_raw(clEnqueueBarrierWithWaitList(r->other, 1, &r->start, NULL), "clEnqueueBarrierWithWaitList");
        check_raw(clFlush(r->other), "clFlush");
    }
}

static void tp_elapsed(tp_fixture *f, size_t n)
{
    float ms;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_elapsed_time(f->start, f->end, &ms), "tp_event_elapsed_time");
}

static void raw_elapsed(raw_fixture *r, size_t n)
{
    cl_ulong start = 0, end = 0;
    volatile float ms = 0;
    for (size_t i = 0; i < n; i++) {
        check_raw(clGetEventProfilingInfo(r->start, CL_PROFILING_COMMAND_END, sizeof start, &start, NULL),
                  "clGetEventProfilingInfo");
        check_raw(clGetEventProfilingInfo(r->end, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL),
                  "clGetEventProfilingInfo");
        ms = (float)((double)(int64_t)(end - start) / 1e6);
    }
    (void)ms;
}

static void tp_record_synchronize(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_tp(tp_event_record(f->start, f->stream), "tp_event_record");
        check_tp(tp_event_synchronize(f->start), "tp_event_synchronize");
    }
}

static void raw_record_synchronize(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        raw_record_into(r->queue, &r->start);
        check_raw(clWaitForEvents(1, &r->start), "clWaitForEvents");
    }
}

static const op ops[] = {
    {"record", tp_record, raw_record},
    {"query (completed)", tp_query, raw_query},
    {"synchronize (completed)", tp_synchronize, raw_synchronize},
    {"stream wait", tp_wait, raw_wait},
    {"elapsed time", tp_elapsed, raw_elapsed},
    {"record+synchronize (idle)", tp_record_synchronize, raw_record_synchronize},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

/* ------------------------------------------------------------- fixtures */

static void tp_fixture_open(tp_fixture *f, const char *device)
{
    f->device = device;
    check_tp(tp_stream_create(&f->stream, device, 0), "tp_stream_create");
    check_tp(tp_stream_create(&f->other, device, 0), "tp_stream_create");
    check_tp(tp_event_create(&f->start, device, TP_EVENT_TIMING), "tp_event_create");
    check_tp(tp_event_create(&f->end, device, TP_EVENT_TIMING), "tp_event_create");
}

static void tp_fixture_close(tp_fixture *f)
{
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
    check_tp(tp_event_destroy(f->end), "tp_event_destroy");
    check_tp(tp_event_destroy(f->start), "tp_event_destroy");
    check_tp(tp_stream_destroy(f->other), "tp_stream_destroy");
    check_tp(tp_stream_destroy(f->stream), "tp_stream_destroy");
}

/* Both events recorded once more, in order, and reached; outside the timing. */
static void tp_fixture_settle(tp_fixture *f)
{
    check_tp(tp_event_record(f->start, f->stream), "tp_event_record");
    check_tp(tp_event_record(f->end, f->stream), "tp_event_record");
    check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
}

/* The raw queues in the context and on the device of tpevent's stream. */
static void raw_fixture_open(raw_fixture *r, tp_stream *stream, char *platform, size_t platform_size)
{
    void *native = NULL;
    check_tp(tp_stream_native(stream, &native), "tp_stream_native");
    cl_context context = NULL;
    cl_device_id device = NULL;
    cl_platform_id platform_id = NULL;
    check_raw(clGetCommandQueueInfo(native, CL_QUEUE_CONTEXT, sizeof context, &context, NULL), "clGetCommandQueueInfo");
    check_raw(clGetCommandQueueInfo(native, CL_QUEUE_DEVICE, sizeof device, &device, NULL), "clGetCommandQueueInfo");
    check_raw(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform_id, &platform_id, NULL), "clGetDeviceInfo");
    check_raw(clGetPlatformInfo(platform_id, CL_PLATFORM_VERSION, platform_size, platform, NULL), "clGetPlatformInfo");
    cl_int error = CL_SUCCESS;
    r->queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
    check_raw(error, "clCreateCommandQueue");
    r->other = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
    check_raw(error, "clCreateCommandQueue");
    r->start = r->end = NULL;
}

static void raw_fixture_close(raw_fixture *r)
{
    check_raw(clFinish(r->queue), "clFinish");
    check_raw(clFinish(r->other), "clFinish");
    check_raw(clReleaseEvent(r->start), "clReleaseEvent");
    check_raw(clReleaseEvent(r->end), "clReleaseEvent");
    check_raw(clReleaseCommandQueue(r->other), "clReleaseCommandQueue");
    check_raw(clReleaseCommandQueue(r->queue), "clReleaseCommandQueue");
}

static void raw_fixture_settle(raw_fixture *r)
{
    raw_record_into(r->queue, &r->start);
    raw_record_into(r->queue, &r->end);
    check_raw(clFinish(r->queue), "clFinish");
    check_raw(clFinish(r->other), "clFinish");
}

/* ------------------------------------------------------------------ main */

static double time_tp_batch(void *fixture, size_t index, size_t batch)
{
    tp_fixture *f = fixture;
    tp_fixture_settle(f);
    uint64_t t0 = bench_now_ns();
    ops[index].tp_batch(f, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

static double time_raw_batch(void *fixture, size_t index, size_t batch)
{
    raw_fixture *r = fixture;
    raw_fixture_settle(r);
    uint64_t t0 = bench_now_ns();
    ops[index].raw_batch(r, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

/* One device's table; the number of ops over budget. */
static int bench_device(const char *device, const bench_options *opt, bench_samples *samples)
{
    char name[256] = "?", platform[256] = "?";
    check_tp(tp_device_name(device, name, sizeof name), "tp_device_name");
    tp_fixture f;
    raw_fixture r;
    tp_fixture_open(&f, device);
    raw_fixture_open(&r, f.stream, platform, sizeof platform);
    bench_sides sides = {time_tp_batch, time_raw_batch, &f, &r};
    bench_run_rounds(&sides, opt->batch, samples);
    raw_fixture_close(&r);
    tp_fixture_close(&f);

    printf("tpevent OpenCL backend vs raw OpenCL on %s: %s\n", device, name);
    printf("platform: %s\n", platform);
    bench_print_table_head(opt->rounds, opt->batch, "median of the rounds' tpevent/raw");
    int over = 0;
    for (size_t o = 0; o < OP_COUNT; o++) {
        bench_summary summary = bench_summarize(samples, o);
        over += !bench_print_ratio_or_slack_row(ops[o].name, &summary, BUDGET_RATIO, BUDGET_SLACK_NS);
    }
    printf("\n%s\n", over ? "budget: missed (see above)" : "budget: met for every op");
    printf(
        "note: each read of an event costs one locked store (a hazard slot: rule 10's concurrent record and\n"
        "read, opencl_bench.c's top comment): ~6-8 ns on query/synchronize/wait/elapsed, over 3%% wherever the\n"
        "raw call takes under a few hundred ns (there the budget is raw + 10 ns)\n\n");
    return over;
}

int main(int argc, char **argv)
{
    bench_options opt;
    if (!bench_parse_options(argc, argv, 100, 101, &opt)) {
        fprintf(stderr, "usage: %s [--device opencl:N] [--batch N] [--rounds N] [--check]\n", argv[0]);
        return 2;
    }
    const char *reason = NULL;
    if (tp_backend_status("opencl", &reason) != TP_OK) {
        printf("skipped: the OpenCL backend is not usable here: %s\n", reason);
        return EXIT_UNAVAILABLE;
    }
    int count = 0;
    check_tp(tp_device_count("opencl", &count), "tp_device_count");
    bench_samples samples;
    if (!bench_samples_alloc(&samples, "tpevent_bench_opencl", OP_COUNT, opt.rounds))
        return 1;
    int over = bench_each_device("opencl", count, &opt, bench_device, &samples);
    bench_samples_free(&samples);
    return opt.check && over ? EXIT_OVER_BUDGET : 0;
}
