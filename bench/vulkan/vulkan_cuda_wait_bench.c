/*
 * Waits across Vulkan and CUDA (issue 56): "record reached -> the waiting stream's
 * next work done", p50 and p99 over --samples, by each path in one run.
 *
 * Usage: tpevent_bench_vulkan_cuda_wait [--vulkan vulkan:N] [--cuda cuda:N] [--samples N]
 *
 * Rows:
 *   vulkan->cuda device  a Vulkan record pending behind a hold (tp_stream_hold); a
 *                        CUDA stream waits on it (tp_event_wait) and records after.
 *                        t0: tp_hold_release; t1: the spin-query of the CUDA record
 *                        says done. The path tp_wait_across_mechanism names: on the
 *                        device where both drivers can (the record's timeline
 *                        semaphore waited on by cudaWaitExternalSemaphoresAsync),
 *                        else the host path, which the line above the table says.
 *   vulkan->cuda host    the same with TPEVENT_WAIT_ACROSS_HOST=1: the CUDA stream
 *                        held by a stream memory operation, let go by the Vulkan
 *                        backend's notifier once the timeline reaches the value.
 *   cuda->vulkan host    a CUDA record pending behind a hold; a Vulkan stream waits
 *                        (always the host path: the Vulkan stream's worker).
 *   vulkan alone         the floor: a Vulkan record behind a hold, t1 its own query
 *                        (the release, the worker's submit and the device's signal).
 *   cuda alone           the same on CUDA.
 *
 * TPEVENT_WAIT_ACROSS_HOST is set between the rows, with every stream idle (no
 * tpevent thread reads the environment then). Printed, not asserted. Bounded: a
 * sample that does not finish within 1 s ends the run with exit 1. Exit 77: Vulkan
 * or CUDA not usable here, saying why.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_wait_across_mechanism */

#include "bench_rounds.h" /* bench_now_ns, bench_quantile, bench_parse_size */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_UNAVAILABLE 77
/* --samples at most: a sample is tens of us at best and there are five rows, so a
 * million is minutes of run, and its buffer 8 MB. */
#define SAMPLES_MOST 1000000

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_vulkan_cuda_wait: %s: %s\n", what, tp_last_error());
        exit(1);
    }
}

/* One sample: a record of `source` behind a hold, waited on by `waiting` (NULL: the
 * record's own query is t1), ns from the release to the later record done. */
static uint64_t sample(tp_stream *source, tp_event *record, tp_stream *waiting, tp_event *after)
{
    tp_hold *hold = NULL;
    check(tp_stream_hold(source, INT64_MAX, &hold), "tp_stream_hold");
    check(tp_event_record(record, source), "tp_event_record");
    tp_event *watched = record;
    if (waiting) {
        check(tp_event_wait(record, waiting), "tp_event_wait");
        check(tp_event_record(after, waiting), "tp_event_record (after)");
        watched = after;
    }
    uint64_t t0 = bench_now_ns();
    check(tp_hold_release(hold), "tp_hold_release");
    bool done = false;
    uint64_t t1 = t0;
    while (!done) {
        check(tp_event_query(watched, &done), "tp_event_query");
        t1 = bench_now_ns();
        if (!done && t1 - t0 > 1000000000) {
            fprintf(stderr, "tpevent_bench_vulkan_cuda_wait: a sample did not finish within 1 s\n");
            exit(1);
        }
    }
    check(tp_stream_synchronize(source), "tp_stream_synchronize");
    if (waiting)
        check(tp_stream_synchronize(waiting), "tp_stream_synchronize");
    return t1 - t0;
}

static void row(const char *name, tp_stream *source, tp_event *record, tp_stream *waiting, tp_event *after, double *ns,
                size_t samples)
{
    for (size_t i = 0; i < 5; i++) /* warm-up: imports, threads, command buffers */
        (void)sample(source, record, waiting, after);
    for (size_t i = 0; i < samples; i++)
        ns[i] = (double)sample(source, record, waiting, after);
    printf("%-22s %10.1f %10.1f %10.1f\n", name, bench_quantile(ns, samples, 0.5) / 1e3,
           bench_quantile(ns, samples, 0.99) / 1e3, bench_quantile(ns, samples, 1.0) / 1e3);
}

static const char *usable(const char *device)
{
    char type[32];
    snprintf(type, sizeof type, "%.*s", (int)strcspn(device, ":"), device);
    const char *reason = NULL;
    return tp_backend_status(type, &reason) == TP_OK ? NULL : (reason ? reason : "unavailable");
}

int main(int argc, char **argv)
{
    const char *vulkan = "vulkan:0"; /* the pair's two defaults */
    const char *cuda = "cuda:0";
    size_t samples = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--vulkan") == 0 && i + 1 < argc)
            vulkan = argv[++i];
        else if (strcmp(argv[i], "--cuda") == 0 && i + 1 < argc)
            cuda = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc && bench_parse_size(argv[i + 1], &samples) &&
                 samples <= SAMPLES_MOST)
            i++;
        else {
            fprintf(stderr, "usage: %s [--vulkan vulkan:N] [--cuda cuda:N] [--samples N (1 to %d)]\n", argv[0],
                    SAMPLES_MOST);
            return 2;
        }
    }
    const char *device_names[2] = {vulkan, cuda};
    for (int i = 0; i < 2; i++) {
        const char *why = usable(device_names[i]);
        if (why) {
            printf("skipped: %s is not usable here: %s\n", device_names[i], why);
            return EXIT_UNAVAILABLE;
        }
    }
    char first[1024] = "", how[1024] = "";
    check(tp_wait_across_mechanism(vulkan, cuda, first, sizeof first), "tp_wait_across_mechanism");
    printf("wait mechanism %s -> %s: %s\n", vulkan, cuda, first);
    check(tp_wait_across_mechanism(cuda, vulkan, how, sizeof how), "tp_wait_across_mechanism");
    printf("wait mechanism %s -> %s: %s\n", cuda, vulkan, how);

    tp_stream *vk_source, *vk_waiting, *cu_source, *cu_waiting;
    tp_event *vk_record, *vk_after, *cu_record, *cu_after;
    check(tp_stream_create(&vk_source, vulkan, 0), "tp_stream_create");
    check(tp_stream_create(&vk_waiting, vulkan, 0), "tp_stream_create");
    check(tp_stream_create(&cu_source, cuda, 0), "tp_stream_create");
    check(tp_stream_create(&cu_waiting, cuda, 0), "tp_stream_create");
    check(tp_event_create(&vk_record, vulkan, TP_EVENT_DEFAULT), "tp_event_create");
    check(tp_event_create(&vk_after, vulkan, TP_EVENT_DEFAULT), "tp_event_create");
    check(tp_event_create(&cu_record, cuda, TP_EVENT_DEFAULT), "tp_event_create");
    check(tp_event_create(&cu_after, cuda, TP_EVENT_DEFAULT), "tp_event_create");
    double *ns = malloc(samples * sizeof *ns);
    if (!ns) {
        fprintf(stderr, "tpevent_bench_vulkan_cuda_wait: out of memory for %zu samples\n", samples);
        return 1;
    }

    printf("\n%zu samples per row, us from the release to the later record done\n", samples);
    printf("%-22s %10s %10s %10s\n", "row", "p50", "p99", "max");
    /* The pair's own path: the device's where both drivers can, else the host's
     * (the mechanism line says why). */
    row(strncmp(first, "device: ", 8) == 0 ? "vulkan->cuda device" : "vulkan->cuda (host)", vk_source, vk_record,
        cu_waiting, cu_after, ns, samples);
    setenv("TPEVENT_WAIT_ACROSS_HOST", "1", 1); /* every stream idle: see the top */
    row("vulkan->cuda host", vk_source, vk_record, cu_waiting, cu_after, ns, samples);
    row("cuda->vulkan host", cu_source, cu_record, vk_waiting, vk_after, ns, samples);
    row("vulkan alone", vk_source, vk_record, NULL, NULL, ns, samples);
    row("cuda alone", cu_source, cu_record, NULL, NULL, ns, samples);

    free(ns);
    tp_event *events[] = {vk_record, vk_after, cu_record, cu_after};
    for (size_t i = 0; i < 4; i++)
        check(tp_event_destroy(events[i]), "tp_event_destroy");
    tp_stream *streams[] = {vk_source, vk_waiting, cu_source, cu_waiting};
    for (size_t i = 0; i < 4; i++)
        check(tp_stream_destroy(streams[i]), "tp_stream_destroy");
    return 0;
}
