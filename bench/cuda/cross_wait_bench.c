/*
 * Waits across backends (issue 16, rule 14): "record reached -> the waiting
 * stream's next work starts", p50 and p99 over --samples, each next to its floor,
 * in one run.
 *
 * Usage: tpevent_bench_cross_wait [--device cuda:N] [--samples N] [--max-seconds S]
 *
 * Rows:
 *   cpu->cuda tpevent        a CPU stream's record, pending behind a host function
 *                            that spins on a flag; a CUDA stream waits on it
 *                            (tp_event_wait) and records after. t0: the flag store
 *                            that lets the CPU stream reach the record; t1: the
 *                            spin-query of the CUDA record says done.
 *   cpu->cuda raw waitvalue  the floor: a raw stream held by cuStreamWaitValue32 on
 *                            mapped host memory, then a raw record; t0: the store
 *                            that releases it; t1 as above.
 *   cpu->cuda raw waitvalue64  the same with cuStreamWaitValue64 on a 64-bit word,
 *                            the operation tpevent's holds use.
 *   cpu->cuda tp_stream_hold a CUDA stream held by tp_stream_hold, then a record;
 *                            t0: tp_hold_release from this thread. The GPU half of
 *                            the tpevent row, without the CPU stream's part.
 *   cpu->cuda raw host-fn    a cudaLaunchHostFunc gate spinning on a flag, then a
 *                            raw record: the relay that holds the driver's one
 *                            callback thread; t0: the flag store; t1 as above.
 *   cuda->cpu tpevent        a record on an idle CUDA stream; a CPU stream waits on
 *                            it, then a host function on the CPU stream reads the
 *                            clock. t0: before tp_event_record; t1: that read.
 *   cuda->cpu blocking       the same with a TP_EVENT_BLOCKING event (sleeps).
 *   cuda->cpu raw floor      t0; cudaEventRecord on an idle raw stream; spin on
 *                            cudaEventQuery; t1.
 *   cuda->cpu tp query floor the same through tpevent: tp_event_record on an idle
 *                            CUDA stream, spin on tp_event_query.
 *   cuda->cuda tpevent       the same-backend wait for reference: a CUDA stream
 *                            held by cuStreamWaitValue32 records; another waits
 *                            (tp_event_wait) and records. t0: the releasing store.
 *   cpu->cpu tpevent         the same on the CPU backend: t0: the flag store; t1:
 *                            the host function after the wait reads the clock.
 *
 * Goals (the issue): cpu->cuda tpevent p50 within 1.2x of raw waitvalue; cuda->cpu
 * tpevent p50 within the raw floor + 5 us, blocking at most 50 us. Printed, not
 * asserted: absolute times move between runs on shared machines; compare ratios
 * within one run.
 *
 * Bounded: every wait (flag spins, query spins) has a deadline (1 s); a sample that
 * misses it ends the run with exit 1, after releasing whatever it held. The whole
 * run stops taking samples after --max-seconds (default 60). Exit 77: no usable
 * CUDA device.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_device_wait_mechanism */

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_UNAVAILABLE 77
#define DEADLINE_NS 1000000000ull

typedef CUresult (*wait_value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*wait_value64_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);

static struct {
    const char *device;
    size_t samples;
    double max_seconds;
    uint64_t stop_at_ns; /* no sample starts after this */
    wait_value32_fn wait_value32;
    wait_value64_fn wait_value64;
    volatile uint32_t *flag;   /* mapped host memory: what raw waits compare with */
    volatile uint64_t *flag64; /* the same memory: [1] is the 64-bit waits' word */
    CUdeviceptr flag_device;
    _Atomic uint32_t host_flag; /* what host-function gates spin on */
    uint32_t next;              /* the value the next sample releases with */
} bench = {.device = "cuda:0", .samples = 2000, .max_seconds = 60.0};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "tpevent_bench_cross_wait: %s: %s\n", what, detail);
    exit(1);
}

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK)
        die(what, tp_last_error());
}

static void check_rt(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die(what, cudaGetErrorString(e));
}

/* Lets every gate and every raw wait of this run go: called before giving up, so
 * that nothing stays held when the process exits. */
static void release_everything(void)
{
    /* Far ahead of every value armed, yet within half the 32-bit cycle: raw waits
     * compare cyclically ((int32_t)(*flag - value) >= 0), gates plainly. */
    uint32_t ahead = bench.next + (1u << 30);
    atomic_store(&bench.host_flag, ahead);
    *bench.flag = ahead;
    bench.flag64[1] = ahead;
}

static void missed(const char *row)
{
    release_everything();
    fprintf(stderr, "tpevent_bench_cross_wait: %s: a sample missed its 1 s deadline; stopping\n", row);
    exit(1);
}

/* -------------------------------------------------------------- samples */

typedef struct row {
    const char *name;
    uint64_t *ns;
    size_t count;
} row;

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_us(row *r, double p)
{
    if (r->count == 0)
        return 0.0;
    size_t i = (size_t)(p * (double)(r->count - 1) + 0.5);
    return (double)r->ns[i] / 1000.0;
}

static void row_init(row *r, const char *name)
{
    r->name = name;
    r->ns = calloc(bench.samples, sizeof *r->ns);
    r->count = 0;
    if (!r->ns)
        die("calloc", "out of memory");
}

static bool time_left(void)
{
    return now_ns() < bench.stop_at_ns;
}

/* Spin-query until done or the deadline; returns the time it was seen done. */
static uint64_t spin_tp_event(tp_event *event, const char *row_name)
{
    uint64_t deadline = now_ns() + DEADLINE_NS;
    for (;;) {
        bool done = false;
        check_tp(tp_event_query(event, &done), "tp_event_query");
        uint64_t t = now_ns();
        if (done)
            return t;
        if (t > deadline)
            missed(row_name);
    }
}

static uint64_t spin_raw_event(cudaEvent_t event, const char *row_name)
{
    uint64_t deadline = now_ns() + DEADLINE_NS;
    for (;;) {
        cudaError_t e = cudaEventQuery(event);
        uint64_t t = now_ns();
        if (e == cudaSuccess)
            return t;
        if (e != cudaErrorNotReady)
            check_rt(e, "cudaEventQuery");
        if (t > deadline)
            missed(row_name);
    }
}

/* A host function (CPU stream, or cudaLaunchHostFunc) that spins until the flag
 * reaches its value, with a deadline of its own. */
typedef struct spin_gate {
    uint32_t value;
} spin_gate;

static void spin_gate_fn(void *arg)
{
    uint32_t value = ((spin_gate *)arg)->value;
    uint64_t deadline = now_ns() + 2 * DEADLINE_NS;
    while (atomic_load_explicit(&bench.host_flag, memory_order_acquire) < value && now_ns() < deadline) {
    }
}

static void CUDART_CB raw_spin_gate_fn(void *arg)
{
    spin_gate_fn(arg);
}

/* A host function that reads the clock: when the waiting stream's next work starts. */
typedef struct stamp {
    _Atomic uint64_t ns;
} stamp;

static void stamp_fn(void *arg)
{
    atomic_store_explicit(&((stamp *)arg)->ns, now_ns(), memory_order_release);
}

static uint64_t wait_stamp(stamp *s, const char *row_name)
{
    uint64_t deadline = now_ns() + DEADLINE_NS;
    for (;;) {
        uint64_t t = atomic_load_explicit(&s->ns, memory_order_acquire);
        if (t)
            return t;
        if (now_ns() > deadline)
            missed(row_name);
    }
}

/* ------------------------------------------------------------------ rows */

static void cpu_to_cuda_tpevent(row *r, tp_stream *cpu, tp_stream *cuda, tp_event *e, tp_event *after)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        spin_gate gate = {++bench.next};
        check_tp(tp_stream_launch_host_fn(cpu, spin_gate_fn, &gate), "tp_stream_launch_host_fn");
        check_tp(tp_event_record(e, cpu), "tp_event_record (cpu)");
        check_tp(tp_event_wait(e, cuda), "tp_event_wait (cuda stream, cpu event)");
        check_tp(tp_event_record(after, cuda), "tp_event_record (cuda)");
        uint64_t t0 = now_ns();
        atomic_store_explicit(&bench.host_flag, gate.value, memory_order_release);
        r->ns[r->count++] = spin_tp_event(after, r->name) - t0;
        check_tp(tp_stream_synchronize(cpu), "tp_stream_synchronize");
    }
}

static void cpu_to_cuda_raw_wait_value(row *r, cudaStream_t stream, cudaEvent_t after)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        uint32_t value = ++bench.next;
        if (bench.wait_value32((CUstream)stream, bench.flag_device, value, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
            die("cuStreamWaitValue32", "failed");
        check_rt(cudaEventRecord(after, stream), "cudaEventRecord");
        uint64_t t0 = now_ns();
        *bench.flag = value;
        r->ns[r->count++] = spin_raw_event(after, r->name) - t0;
    }
}

static void cpu_to_cuda_raw_wait_value64(row *r, cudaStream_t stream, cudaEvent_t after)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        uint32_t value = ++bench.next;
        if (bench.wait_value64((CUstream)stream, bench.flag_device + 8, value, CU_STREAM_WAIT_VALUE_GEQ) !=
            CUDA_SUCCESS)
            die("cuStreamWaitValue64", "failed");
        check_rt(cudaEventRecord(after, stream), "cudaEventRecord");
        uint64_t t0 = now_ns();
        bench.flag64[1] = value;
        r->ns[r->count++] = spin_raw_event(after, r->name) - t0;
    }
}

static void cpu_to_cuda_tp_hold(row *r, tp_stream *cuda, tp_event *after)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        tp_hold *hold = NULL;
        check_tp(tp_stream_hold(cuda, (int64_t)DEADLINE_NS, &hold), "tp_stream_hold");
        check_tp(tp_event_record(after, cuda), "tp_event_record (cuda)");
        uint64_t t0 = now_ns();
        check_tp(tp_hold_release(hold), "tp_hold_release");
        r->ns[r->count++] = spin_tp_event(after, r->name) - t0;
    }
}

static void cuda_to_cpu_tp_query_floor(row *r, tp_stream *cuda, tp_event *e)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        uint64_t t0 = now_ns();
        check_tp(tp_event_record(e, cuda), "tp_event_record (cuda)");
        r->ns[r->count++] = spin_tp_event(e, r->name) - t0;
    }
}

static void cpu_to_cuda_raw_host_fn(row *r, cudaStream_t stream, cudaEvent_t after)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        spin_gate gate = {++bench.next};
        check_rt(cudaLaunchHostFunc(stream, raw_spin_gate_fn, &gate), "cudaLaunchHostFunc");
        check_rt(cudaEventRecord(after, stream), "cudaEventRecord");
        uint64_t t0 = now_ns();
        atomic_store_explicit(&bench.host_flag, gate.value, memory_order_release);
        r->ns[r->count++] = spin_raw_event(after, r->name) - t0;
        check_rt(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
}

static void cuda_to_cpu_tpevent(row *r, tp_stream *cuda, tp_stream *cpu, tp_event *e)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        stamp s = {0};
        uint64_t t0 = now_ns();
        check_tp(tp_event_record(e, cuda), "tp_event_record (cuda)");
        check_tp(tp_event_wait(e, cpu), "tp_event_wait (cpu stream, cuda event)");
        check_tp(tp_stream_launch_host_fn(cpu, stamp_fn, &s), "tp_stream_launch_host_fn");
        r->ns[r->count++] = wait_stamp(&s, r->name) - t0;
        check_tp(tp_stream_synchronize(cpu), "tp_stream_synchronize");
    }
}

static void cuda_to_cpu_raw_floor(row *r, cudaStream_t stream, cudaEvent_t e)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        uint64_t t0 = now_ns();
        check_rt(cudaEventRecord(e, stream), "cudaEventRecord");
        r->ns[r->count++] = spin_raw_event(e, r->name) - t0;
    }
}

static void cuda_to_cuda_tpevent(row *r, tp_stream *held, tp_stream *waiting, tp_event *e, tp_event *after)
{
    void *native = NULL;
    check_tp(tp_stream_native(held, &native), "tp_stream_native");
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        uint32_t value = ++bench.next;
        if (bench.wait_value32((CUstream)native, bench.flag_device, value, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
            die("cuStreamWaitValue32", "failed");
        check_tp(tp_event_record(e, held), "tp_event_record");
        check_tp(tp_event_wait(e, waiting), "tp_event_wait (same backend)");
        check_tp(tp_event_record(after, waiting), "tp_event_record");
        uint64_t t0 = now_ns();
        *bench.flag = value;
        r->ns[r->count++] = spin_tp_event(after, r->name) - t0;
    }
}

static void cpu_to_cpu_tpevent(row *r, tp_stream *source, tp_stream *waiting, tp_event *e)
{
    for (size_t i = 0; i < bench.samples && time_left(); i++) {
        spin_gate gate = {++bench.next};
        stamp s = {0};
        check_tp(tp_stream_launch_host_fn(source, spin_gate_fn, &gate), "tp_stream_launch_host_fn");
        check_tp(tp_event_record(e, source), "tp_event_record");
        check_tp(tp_event_wait(e, waiting), "tp_event_wait");
        check_tp(tp_stream_launch_host_fn(waiting, stamp_fn, &s), "tp_stream_launch_host_fn");
        uint64_t t0 = now_ns();
        atomic_store_explicit(&bench.host_flag, gate.value, memory_order_release);
        r->ns[r->count++] = wait_stamp(&s, r->name) - t0;
        check_tp(tp_stream_synchronize(waiting), "tp_stream_synchronize");
    }
}

/* ------------------------------------------------------------------ main */

static void parse(int argc, char **argv)
{
    /* Options come in pairs: name, value. */
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--device") == 0 && value)
            bench.device = value;
        else if (strcmp(argv[i], "--samples") == 0 && value && atol(value) > 0)
            bench.samples = (size_t)atol(value);
        else if (strcmp(argv[i], "--max-seconds") == 0 && value && atof(value) > 0)
            bench.max_seconds = atof(value);
        else {
            fprintf(stderr, "usage: %s [--device cuda:N] [--samples N] [--max-seconds S]\n", argv[0]);
            exit(2);
        }
    }
}

static void setup_raw(int index)
{
    check_rt(cudaSetDevice(index), "cudaSetDevice");
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    void *fn = NULL;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &found);
#else
    cudaError_t e = cudaGetDriverEntryPoint("cuStreamWaitValue32", &fn, cudaEnableDefault, &found);
#endif
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn)
        die("cudaGetDriverEntryPoint(cuStreamWaitValue32)", "not found");
    bench.wait_value32 = (wait_value32_fn)fn;
    fn = NULL;
#if CUDART_VERSION >= 12050
    e = cudaGetDriverEntryPointByVersion("cuStreamWaitValue64", &fn, 12000, cudaEnableDefault, &found);
#else
    e = cudaGetDriverEntryPoint("cuStreamWaitValue64", &fn, cudaEnableDefault, &found);
#endif
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn)
        die("cudaGetDriverEntryPoint(cuStreamWaitValue64)", "not found");
    bench.wait_value64 = (wait_value64_fn)fn;
    void *host = NULL, *device = NULL;
    check_rt(cudaHostAlloc(&host, 64, cudaHostAllocMapped), "cudaHostAlloc");
    check_rt(cudaHostGetDevicePointer(&device, host, 0), "cudaHostGetDevicePointer");
    bench.flag = host;
    bench.flag64 = host;
    *bench.flag = 0;
    bench.flag64[1] = 0;
    bench.flag_device = (CUdeviceptr)(uintptr_t)device;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    tp_device parsed;
    if (tp_device_parse(bench.device, &parsed) != TP_OK || parsed.type != TP_DEVICE_CUDA)
        die("--device", "expects cuda:N");
    if (tp_backend_status("cuda", NULL) != TP_OK) {
        printf("skipped: %s\n", tp_last_error());
        return EXIT_UNAVAILABLE;
    }
    setup_raw(parsed.index);
    char mechanism[256] = "";
    check_tp(tp_device_wait_mechanism(bench.device, mechanism, sizeof mechanism), "tp_device_wait_mechanism");
    printf("device %s; cross-backend waits: %s\n", bench.device, mechanism);

    tp_stream *cpu_a, *cpu_b, *cuda_a, *cuda_b;
    check_tp(tp_stream_create(&cpu_a, "cpu:0", 0), "tp_stream_create");
    check_tp(tp_stream_create(&cpu_b, "cpu:0", 0), "tp_stream_create");
    check_tp(tp_stream_create(&cuda_a, bench.device, 0), "tp_stream_create");
    check_tp(tp_stream_create(&cuda_b, bench.device, 0), "tp_stream_create");
    tp_event *cpu_event, *cuda_event, *cuda_blocking, *cuda_after;
    check_tp(tp_event_create(&cpu_event, "cpu:0", TP_EVENT_DEFAULT), "tp_event_create");
    check_tp(tp_event_create(&cuda_event, bench.device, TP_EVENT_DEFAULT), "tp_event_create");
    check_tp(tp_event_create(&cuda_blocking, bench.device, TP_EVENT_BLOCKING), "tp_event_create");
    check_tp(tp_event_create(&cuda_after, bench.device, TP_EVENT_DEFAULT), "tp_event_create");
    cudaStream_t raw;
    cudaEvent_t raw_event;
    check_rt(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check_rt(cudaEventCreateWithFlags(&raw_event, cudaEventDisableTiming), "cudaEventCreateWithFlags");

    enum { ROWS = 11 };
    row rows[ROWS];
    row_init(&rows[0], "cpu->cuda tpevent");
    row_init(&rows[1], "cpu->cuda raw cuStreamWaitValue32");
    row_init(&rows[2], "cpu->cuda raw cudaLaunchHostFunc gate");
    row_init(&rows[3], "cuda->cpu tpevent");
    row_init(&rows[4], "cuda->cpu tpevent, TP_EVENT_BLOCKING");
    row_init(&rows[5], "cuda->cpu raw record+spin-query floor");
    row_init(&rows[6], "cuda->cuda tpevent (same backend)");
    row_init(&rows[7], "cpu->cpu tpevent (same backend)");
    row_init(&rows[8], "cpu->cuda raw cuStreamWaitValue64");
    row_init(&rows[9], "cpu->cuda tp_stream_hold, released here");
    row_init(&rows[10], "cuda->cpu tp record+spin-query floor");

    /* Interleaved in rounds, so that drifts fall on every row alike. */
    bench.stop_at_ns = now_ns() + (uint64_t)(bench.max_seconds * 1e9);
    size_t total = bench.samples;
    size_t per_round = total < 100 ? total : 100;
    for (size_t done = 0; done < total && time_left(); done += per_round) {
        bench.samples = per_round;
        cpu_to_cuda_tpevent(&rows[0], cpu_a, cuda_a, cpu_event, cuda_after);
        cpu_to_cuda_raw_wait_value(&rows[1], raw, raw_event);
        cpu_to_cuda_raw_host_fn(&rows[2], raw, raw_event);
        cuda_to_cpu_tpevent(&rows[3], cuda_a, cpu_a, cuda_event);
        cuda_to_cpu_tpevent(&rows[4], cuda_a, cpu_a, cuda_blocking);
        cuda_to_cpu_raw_floor(&rows[5], raw, raw_event);
        cuda_to_cuda_tpevent(&rows[6], cuda_a, cuda_b, cuda_event, cuda_after);
        cpu_to_cpu_tpevent(&rows[7], cpu_a, cpu_b, cpu_event);
        cpu_to_cuda_raw_wait_value64(&rows[8], raw, raw_event);
        cpu_to_cuda_tp_hold(&rows[9], cuda_a, cuda_after);
        cuda_to_cpu_tp_query_floor(&rows[10], cuda_a, cuda_event);
    }
    check_tp(tp_stream_synchronize(cuda_b), "tp_stream_synchronize");

    printf("%-42s %8s %10s %10s\n", "record reached -> next work starts", "samples", "p50 us", "p99 us");
    for (int i = 0; i < ROWS; i++) {
        qsort(rows[i].ns, rows[i].count, sizeof *rows[i].ns, compare_u64);
        printf("%-42s %8zu %10.2f %10.2f\n", rows[i].name, rows[i].count, percentile_us(&rows[i], 0.5),
               percentile_us(&rows[i], 0.99));
    }
    double ratio = percentile_us(&rows[0], 0.5) / percentile_us(&rows[1], 0.5);
    double over_floor = percentile_us(&rows[3], 0.5) - percentile_us(&rows[5], 0.5);
    printf("\ncpu->cuda p50 / raw cuStreamWaitValue32 p50: %.2fx (goal <= 1.2x)\n", ratio);
    printf("cuda->cpu p50 - raw floor p50: %+.2f us (goal <= +5 us)\n", over_floor);
    printf("cuda->cpu blocking p50: %.2f us (goal <= 50 us)\n", percentile_us(&rows[4], 0.5));

    for (int i = 0; i < ROWS; i++)
        free(rows[i].ns);
    check_rt(cudaEventDestroy(raw_event), "cudaEventDestroy");
    check_rt(cudaStreamDestroy(raw), "cudaStreamDestroy");
    check_tp(tp_event_destroy(cuda_after), "tp_event_destroy");
    check_tp(tp_event_destroy(cuda_blocking), "tp_event_destroy");
    check_tp(tp_event_destroy(cuda_event), "tp_event_destroy");
    check_tp(tp_event_destroy(cpu_event), "tp_event_destroy");
    check_tp(tp_stream_destroy(cuda_b), "tp_stream_destroy");
    check_tp(tp_stream_destroy(cuda_a), "tp_stream_destroy");
    check_tp(tp_stream_destroy(cpu_b), "tp_stream_destroy");
    check_tp(tp_stream_destroy(cpu_a), "tp_stream_destroy");
    return 0;
}
