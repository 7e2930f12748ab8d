/*
 * The hold (rule 17, issue 29): CUDA events around a batch of empty kernel launches,
 * the stream held by tp_stream_hold while the batch is queued and released after,
 * against the same without a hold, and against the GPU's own cadence.
 *
 * Usage: tpevent_bench_hold [--device cuda:N] [--launches N] [--rounds N]
 *
 * The kernel is one thread that writes %globaltimer (ns) into a log at its index and
 * returns; it is PTX text loaded through the driver API (cuModuleLoadData), so the
 * build needs no kernel compiler. Per round and per side, the launches go on one
 * tpevent stream between two timing records:
 *   held     tp_stream_hold; record; N launches; record; tp_hold_release
 *   unheld   record; N launches; record (the host's launch rate is in the interval)
 * and per side it prints the median over rounds of: events per launch (elapsed / N)
 * and the GPU's cadence per launch (the log's last start minus its first over N-1).
 * Goal (the issue): held events per launch within 0.1 us of the cadence. Printed,
 * not asserted. Exit 77: no usable CUDA device.
 */
#include <tpevent/tpevent.h>

#include "bench_rounds.h"
#include "cu_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char stamp_ptx[] =
    ".version 7.8\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry stamp(.param .u64 log, .param .u32 index)\n"
    "{\n"
    "    .reg .b64 %rd<5>;\n"
    "    .reg .b32 %r<2>;\n"
    "    mov.u64 %rd1, %globaltimer;\n"
    "    ld.param.u64 %rd2, [log];\n"
    "    ld.param.u32 %r1, [index];\n"
    "    mul.wide.u32 %rd3, %r1, 8;\n"
    "    add.s64 %rd4, %rd2, %rd3;\n"
    "    st.u64 [%rd4], %rd1;\n"
    "    ret;\n"
    "}\n";

typedef struct side {
    const char *name;
    double *events_us; /* per launch, per round */
    double *cadence_us;
} side;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "tpevent_bench_hold: %s: %s\n", what, detail);
    exit(1);
}

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK)
        die(what, tp_last_error());
}

static void check_cu(CUresult result, const char *what)
{
    if (result != CUDA_SUCCESS)
        die(what, bench_cu_error_name(result));
}

/* Bounds on the user's numbers, which size the log and the samples: launches also
 * at most the stream's hold window (checked once the stream is made). */
#define MAX_LAUNCHES 100000
#define MAX_ROUNDS 100000

static double median(double *values, int count)
{
    return bench_quantile(values, (size_t)count, 0.5);
}

/* One round of one side: the batch between two records, held or not. */
static void run_round(const char *device, tp_stream *stream, CUfunction stamp, CUdeviceptr log, uint64_t *host_log,
                      int launches, bool held, double *events_us, double *cadence_us)
{
    tp_event *start = NULL, *end = NULL;
    check_tp(tp_event_create(&start, device, TP_EVENT_TIMING), "tp_event_create");
    check_tp(tp_event_create(&end, device, TP_EVENT_TIMING), "tp_event_create");
    void *native = NULL;
    check_tp(tp_stream_native(stream, &native), "tp_stream_native");
    tp_hold *hold = NULL;
    if (held)
        check_tp(tp_stream_hold(stream, 10LL * 1000000000, &hold), "tp_stream_hold");
    check_tp(tp_event_record(start, stream), "tp_event_record");
    for (int i = 0; i < launches; i++) {
        unsigned index = (unsigned)i;
        void *params[] = {&log, &index};
        check_cu(cu.launch_kernel(stamp, 1, 1, 1, 1, 1, 1, 0, (CUstream)native, params, NULL), "cuLaunchKernel");
    }
    check_tp(tp_event_record(end, stream), "tp_event_record");
    if (held)
        check_tp(tp_hold_release(hold), "tp_hold_release");
    check_tp(tp_stream_synchronize(stream), "tp_stream_synchronize");
    float ms = 0;
    check_tp(tp_event_elapsed_time(start, end, &ms), "tp_event_elapsed_time");
    check_cu(cu.memcpy_dtoh(host_log, log, sizeof(uint64_t) * (size_t)launches), "cuMemcpyDtoH");
    *events_us = (double)ms * 1000.0 / launches;
    *cadence_us = (double)(host_log[launches - 1] - host_log[0]) / 1000.0 / (launches - 1);
    tp_event_destroy(start);
    tp_event_destroy(end);
}

int main(int argc, char **argv)
{
    const char *device = "cuda:0";
    int launches = 64, rounds = 200;
    size_t value = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = argv[++i];
        else if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc && bench_parse_size(argv[i + 1], &value) &&
                 value <= MAX_LAUNCHES) {
            launches = (int)value;
            i++;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && bench_parse_size(argv[i + 1], &value) &&
                   value <= MAX_ROUNDS) {
            rounds = (int)value;
            i++;
        } else {
            fprintf(stderr,
                    "usage: tpevent_bench_hold [--device cuda:N] [--launches N (2 to the stream's hold window)] "
                    "[--rounds N (1 to %d)]\n",
                    MAX_ROUNDS);
            return 2;
        }
    }
    if (launches < 2 || rounds < 1) {
        fprintf(stderr, "tpevent_bench_hold: --launches must be at least 2 and --rounds at least 1\n");
        return 2;
    }
    if (!bench_cu_load()) {
        printf("skipped: the CUDA driver API (libcuda.so.1) cannot be loaded\n");
        return 77;
    }
    tp_stream *stream = NULL;
    if (tp_set_device(device) != TP_OK || tp_stream_create(&stream, device, 0) != TP_OK) {
        printf("skipped: %s: %s\n", device, tp_last_error());
        return 77;
    }
    /* The device's primary context, the one tpevent's streams are of, current here
     * for the driver calls below. */
    const char *failed_call = NULL;
    CUresult current = bench_cu_primary_context_current(device, &failed_call);
    check_cu(current, failed_call);
    CUmodule module;
    CUfunction stamp;
    CUdeviceptr log;
    check_cu(cu.module_load_data(&module, stamp_ptx), "cuModuleLoadData");
    check_cu(cu.module_get_function(&stamp, module, "stamp"), "cuModuleGetFunction");
    check_cu(cu.mem_alloc(&log, sizeof(uint64_t) * (size_t)launches), "cuMemAlloc");
    uint64_t *host_log = calloc((size_t)launches, sizeof *host_log);
    side sides[2] = {{"held (tp_stream_hold)", NULL, NULL}, {"unheld", NULL, NULL}};
    for (int s = 0; s < 2; s++) {
        sides[s].events_us = calloc((size_t)rounds, sizeof(double));
        sides[s].cadence_us = calloc((size_t)rounds, sizeof(double));
        if (!sides[s].events_us || !sides[s].cadence_us || !host_log)
            die("calloc", "out of memory");
    }
    int64_t window = 0;
    check_tp(tp_stream_hold_window(stream, &window), "tp_stream_hold_window");
    if (launches > window) {
        /* Launches past the window block the launching thread, this one, which
         * releases the hold only after them: a deadlock. */
        fprintf(stderr,
                "tpevent_bench_hold: --launches %d: at most the %s stream's hold window, %lld: more behind the hold "
                "would block this thread, which releases it\n",
                launches, device, (long long)window);
        return 2;
    }
    for (int warm = 0; warm < 5; warm++)
        run_round(device, stream, stamp, log, host_log, launches, warm % 2 == 0, &sides[0].events_us[0],
                  &sides[0].cadence_us[0]);
    for (int r = 0; r < rounds; r++) /* interleaved, so that both see the same machine */
        for (int s = 0; s < 2; s++)
            run_round(device, stream, stamp, log, host_log, launches, s == 0, &sides[s].events_us[r],
                      &sides[s].cadence_us[r]);

    printf(
        "tpevent hold benchmark: %s, %d empty one-thread launches between two timing records, %d rounds, "
        "medians (hold window %lld)\n",
        device, launches, rounds, (long long)window);
    printf("%-24s %18s %18s %12s\n", "side", "events/launch us", "cadence/launch us", "events-GPU");
    double held_gap = 0;
    for (int s = 0; s < 2; s++) {
        double events = median(sides[s].events_us, rounds), cadence = median(sides[s].cadence_us, rounds);
        printf("%-24s %18.3f %18.3f %+12.3f\n", sides[s].name, events, cadence, events - cadence);
        if (s == 0)
            held_gap = events - cadence;
    }
    printf("\nheld: events per launch - GPU cadence per launch = %+.3f us (goal: within 0.1 us)\n", held_gap);
    cu.mem_free(log);
    cu.module_unload(module);
    free(host_log);
    for (int s = 0; s < 2; s++) {
        free(sides[s].events_us);
        free(sides[s].cadence_us);
    }
    tp_stream_destroy(stream);
    return 0;
}
