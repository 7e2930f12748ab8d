/*
 * Rule 16's graphs without host functions (issue 53): N/2 empty kernels and N/2
 * external records, interleaved, submitted one by one and as a graph, tpevent's
 * (tp_event_record, tp_stream_begin_capture, tp_graph_launch) beside raw CUDA's
 * (cudaEventRecordWithFlags(cudaEventRecordExternal), cudaStreamBeginCapture,
 * cudaGraphLaunch) in one process. The kernels are the same on both sides: one
 * empty kernel, PTX text loaded through the driver API (as hold_bench.c), launched
 * by this program with cuLaunchKernel on the stream's native handle.
 *
 * Usage: tpevent_bench_graph_raw [--device cuda:N] [--n N]... [--rounds R]
 * (N from 2 to 65,536, at most 8 of them; R from 1 to 100,000)
 *
 * A round is the submission (N calls, or one launch) and a synchronize of the
 * stream; the four ways alternate round by round. One row per N (16, 256, 1024
 * unless --n is given): the median round in us each way, and the ratios: tpevent's
 * graph against raw CUDA's graph (the cost of tpevent's launch: its marker), and
 * each side's one by one against its graph (what a graph saves). Then the same for
 * the submission alone. Printed, not asserted. Exit 77: no usable CUDA device.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include "bench_rounds.h"
#include "cu_driver.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_UNAVAILABLE 77
#define EVENTS 8
#define MAX_NS 8
/* Bounds on the user's numbers: N operations are captured into a graph, and
 * 8 * rounds samples are kept. */
#define MAX_N 65536
#define MAX_ROUNDS 100000
#define USAGE "tpevent_bench_graph_raw [--device cuda:N] [--n N (2 to 65536)]... [--rounds R (1 to 100000)]"

static CUfunction empty_kernel;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "tpevent_bench_graph_raw: %s: %s\n", what, detail);
    exit(1);
}

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK)
        die(what, tp_last_error());
}

static void check_raw(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die(what, cudaGetErrorString(e));
}

static void check_cu(CUresult result, const char *what)
{
    if (result != CUDA_SUCCESS)
        die(what, "driver API error");
}

/* The empty kernel, in the current (primary) context; false where no driver. */
static bool kernel_load(void)
{
    if (!bench_cu_load())
        return false;
    CUmodule module;
    check_cu(cu.module_load_data(&module, bench_cu_empty_ptx), "cuModuleLoadData");
    check_cu(cu.module_get_function(&empty_kernel, module, "empty"), "cuModuleGetFunction");
    return true;
}

static void launch_empty(cudaStream_t stream)
{
    check_cu(cu.launch_kernel(empty_kernel, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream, NULL, NULL), "cuLaunchKernel");
}

static double now_us(void)
{
    return (double)bench_now_ns() / 1e3;
}

typedef struct bench {
    tp_stream *tp;
    cudaStream_t tp_native, raw;
    tp_event *tp_events[EVENTS];
    cudaEvent_t raw_events[EVENTS];
    tp_graph *tp_graph;
    cudaGraphExec_t raw_graph;
    int n;
} bench;

/* The sequence, one side, capturing or not: a kernel, a record, a kernel, ... */
static void submit_tp(bench *b)
{
    for (int i = 0; i < b->n; i++)
        if (i % 2 == 0)
            launch_empty(b->tp_native);
        else
            check_tp(tp_event_record(b->tp_events[i % EVENTS], b->tp), "tp_event_record");
}

/* Inside a capture the records are external nodes; outside, plain records (CUDA 13
 * refuses cudaEventRecordExternal outside a capture: "the operation cannot be
 * performed in the present state"). */
static void submit_raw(bench *b, bool capturing)
{
    for (int i = 0; i < b->n; i++)
        if (i % 2 == 0)
            launch_empty(b->raw);
        else
            check_raw(cudaEventRecordWithFlags(b->raw_events[i % EVENTS], b->raw,
                                               capturing ? cudaEventRecordExternal : cudaEventRecordDefault),
                      "cudaEventRecordWithFlags");
}

/* One round of one way (0: tp one by one, 1: tp graph, 2: raw one by one, 3: raw
 * graph): its submission and its whole round, in us. */
static void round_of(bench *b, int way, double *submit, double *whole)
{
    double t0 = now_us();
    if (way == 0)
        submit_tp(b);
    else if (way == 1)
        check_tp(tp_graph_launch(b->tp_graph, b->tp), "tp_graph_launch");
    else if (way == 2)
        submit_raw(b, false);
    else
        check_raw(cudaGraphLaunch(b->raw_graph, b->raw), "cudaGraphLaunch");
    *submit = now_us() - t0;
    if (way < 2)
        check_tp(tp_stream_synchronize(b->tp), "tp_stream_synchronize");
    else
        check_raw(cudaStreamSynchronize(b->raw), "cudaStreamSynchronize");
    *whole = now_us() - t0;
}

static void bench_n(bench *b, int n, int rounds)
{
    b->n = n;
    check_tp(tp_stream_begin_capture(b->tp), "tp_stream_begin_capture");
    submit_tp(b);
    check_tp(tp_stream_end_capture(b->tp, &b->tp_graph), "tp_stream_end_capture");
    cudaGraph_t graph;
    check_raw(cudaStreamBeginCapture(b->raw, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    submit_raw(b, true);
    check_raw(cudaStreamEndCapture(b->raw, &graph), "cudaStreamEndCapture");
    check_raw(cudaGraphInstantiate(&b->raw_graph, graph, 0), "cudaGraphInstantiate");
    check_raw(cudaGraphDestroy(graph), "cudaGraphDestroy");

    double *v = malloc(8 * (size_t)rounds * sizeof *v);
    if (!v)
        die("out of memory", "");
    double *submit[4], *whole[4];
    for (int w = 0; w < 4; w++) {
        submit[w] = v + (size_t)w * rounds;
        whole[w] = v + (size_t)(4 + w) * rounds;
    }
    double ignored_submit, ignored_whole;
    for (int w = 0; w < 4; w++) /* warm-up */
        round_of(b, w, &ignored_submit, &ignored_whole);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 4; k++) {
            int w = (r + k) % 4; /* the order turns round by round */
            round_of(b, w, &submit[w][r], &whole[w][r]);
        }
    double m[4], s[4];
    for (int w = 0; w < 4; w++) {
        m[w] = bench_quantile(whole[w], (size_t)rounds, 0.5);
        s[w] = bench_quantile(submit[w], (size_t)rounds, 0.5);
    }
    printf("| %5d | %9.2f | %9.2f | %9.2f | %9.2f | %9.3f | %9.2fx | %9.2fx | %9.2f | %9.2f | %9.3f |\n", n, m[0], m[1],
           m[2], m[3], m[1] / m[3], m[0] / m[1], m[2] / m[3], s[1], s[3], s[1] / s[3]);
    free(v);
    check_tp(tp_graph_destroy(b->tp_graph), "tp_graph_destroy");
    check_raw(cudaGraphExecDestroy(b->raw_graph), "cudaGraphExecDestroy");
}

int main(int argc, char **argv)
{
    const char *device = "cuda:0";
    int ns[MAX_NS], n_count = 0, rounds = 200;
    if (argc % 2 == 0)
        die("usage", USAGE);
    for (int i = 1; i + 1 < argc; i += 2) {
        size_t value = 0;
        if (strcmp(argv[i], "--device") == 0)
            device = argv[i + 1];
        else if (strcmp(argv[i], "--n") == 0 && n_count < MAX_NS && bench_parse_size(argv[i + 1], &value) &&
                 value >= 2 && value <= MAX_N)
            ns[n_count++] = (int)value & ~1;
        else if (strcmp(argv[i], "--rounds") == 0 && bench_parse_size(argv[i + 1], &value) && value <= MAX_ROUNDS)
            rounds = (int)value;
        else
            die("usage", USAGE);
    }
    if (n_count == 0) {
        ns[n_count++] = 16;
        ns[n_count++] = 256;
        ns[n_count++] = 1024;
    }
    if (strncmp(device, "cuda:", 5) != 0 || tp_backend_status("cuda", NULL) != TP_OK) {
        printf("tpevent_bench_graph_raw: skipped: no usable CUDA device %s: %s\n", device, tp_last_error());
        return EXIT_UNAVAILABLE;
    }
    check_raw(cudaSetDevice(atoi(device + 5)), "cudaSetDevice");
    check_raw(cudaFree(NULL), "cudaFree(NULL)"); /* the primary context, current for the driver API too */
    if (!kernel_load()) {
        printf("tpevent_bench_graph_raw: skipped: libcuda.so.1's module calls not found\n");
        return EXIT_UNAVAILABLE;
    }
    bench b = {0};
    check_tp(tp_stream_create(&b.tp, device, 0), "tp_stream_create");
    check_tp(tp_stream_native(b.tp, (void **)&b.tp_native), "tp_stream_native");
    check_raw(cudaStreamCreateWithPriority(&b.raw, cudaStreamNonBlocking, 0), "cudaStreamCreateWithPriority");
    for (int i = 0; i < EVENTS; i++) {
        check_tp(tp_event_create(&b.tp_events[i], device, TP_EVENT_EXTERNAL), "tp_event_create");
        check_raw(cudaEventCreateWithFlags(&b.raw_events[i], cudaEventDisableTiming), "cudaEventCreateWithFlags");
    }
    printf(
        "%s: N/2 empty kernels and N/2 external records, interleaved, %d rounds; median round (submit + "
        "synchronize) in us\n\n",
        device, rounds);
    printf(
        "|     N | tp 1by1   | tp graph  | raw 1by1  | raw graph | tp/raw gr | tp 1by1/g | raw 1by1/g"
        " | tp submit | rawsubmit | tp/raw sb |\n");
    printf(
        "|-------|-----------|-----------|-----------|-----------|-----------|------------|------------|-"
        "----------|-----------|-----------|\n");
    for (int i = 0; i < n_count; i++)
        bench_n(&b, ns[i], rounds);
    for (int i = 0; i < EVENTS; i++) {
        check_tp(tp_event_destroy(b.tp_events[i]), "tp_event_destroy");
        check_raw(cudaEventDestroy(b.raw_events[i]), "cudaEventDestroy");
    }
    check_tp(tp_stream_destroy(b.tp), "tp_stream_destroy");
    check_raw(cudaStreamDestroy(b.raw), "cudaStreamDestroy");
    return 0;
}
