/*
 * Rule 13 after a while without timestamps, issue 47's scenario on a real device:
 * on an H100, a process that first ran about 1,250 checks of waits across backends
 * (tens of seconds), then made a new stream and event and took 200 timestamps
 * 100 ms apart, had its first timestamp 391 us before the host time read before its
 * record call (the event clock's drift over the while, extrapolated).
 *
 * Usage: tpevent_gpu_clock_after_idle [--device D] [--idle-seconds S] [--records N]
 *            [--spacing-ms M] [--cross-waits] [--error-growth-us G]
 *
 * The first calibration (tp_device_clock) and one timestamp; then S seconds
 * (default 45) idle, or with --cross-waits spent in waits across backends (a CPU
 * record waited on by the device's stream and the other way round, each
 * synchronized); then a new stream and event and N records (default 200) M ms
 * apart (default 100), each bracketed by CLOCK_MONOTONIC before the record call
 * and after its synchronize. A timestamp is outside when it lies beyond that
 * bracket by more than e, the larger of error_ns after the first calibration and
 * error_ns after the timestamp; error_ns has grown when it is over twice the first
 * calibration's plus G us (default 100; more for a loaded or instrumented run of
 * the fake GPU, whose later brackets may be wide). Prints the counts and the worst distances.
 *
 * Exit 0: none outside and error_ns not grown; 1: some (or a call failed); 77: the
 * device is not usable here.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_UNAVAILABLE 77

typedef struct options {
    const char *device;
    double idle_seconds;
    int records;
    int spacing_ms;
    int cross_waits;
    int error_growth_us;
} options;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Exits the program on a failed call: a check whose calls fail proves nothing. */
static void must(tp_status status, const char *call)
{
    if (status == TP_OK)
        return;
    fprintf(stderr, "clock_after_idle: %s: %s: %s\n", call, tp_status_name(status), tp_last_error());
    exit(1);
}

static int64_t error_ns(const char *device)
{
    tp_clock_info info;
    must(tp_device_clock(device, &info), "tp_device_clock");
    return info.error_ns;
}

/* One wait each way between cpu:0 and the device, both ends synchronized. */
static void wait_across_backends(tp_stream *cpu, tp_event *cpu_event, tp_stream *gpu, tp_event *gpu_event)
{
    must(tp_event_record(cpu_event, cpu), "tp_event_record (cpu)");
    must(tp_stream_wait_event(gpu, cpu_event), "tp_stream_wait_event (device waits on cpu)");
    must(tp_event_record(gpu_event, gpu), "tp_event_record (device)");
    must(tp_event_synchronize(gpu_event), "tp_event_synchronize (device)");
    must(tp_event_record(gpu_event, gpu), "tp_event_record (device)");
    must(tp_stream_wait_event(cpu, gpu_event), "tp_stream_wait_event (cpu waits on device)");
    must(tp_event_record(cpu_event, cpu), "tp_event_record (cpu)");
    must(tp_event_synchronize(cpu_event), "tp_event_synchronize (cpu)");
}

/* The while between the first calibration and the new stream: asks nothing of
 * the device's clock. */
static void spend_while(const options *o)
{
    if (!o->cross_waits) {
        sleep_ms((int)(o->idle_seconds * 1000));
        return;
    }
    tp_stream *cpu, *gpu;
    tp_event *cpu_event, *gpu_event;
    must(tp_stream_create(&cpu, "cpu:0", 0), "tp_stream_create (cpu:0)");
    must(tp_stream_create(&gpu, o->device, 0), "tp_stream_create");
    must(tp_event_create(&cpu_event, "cpu:0", TP_EVENT_DEFAULT), "tp_event_create (cpu:0)");
    must(tp_event_create(&gpu_event, o->device, TP_EVENT_DEFAULT), "tp_event_create");
    const int64_t end = now_ns() + (int64_t)(o->idle_seconds * 1e9);
    long checks = 0;
    for (; now_ns() < end; checks++) {
        wait_across_backends(cpu, cpu_event, gpu, gpu_event);
        sleep_ms(30); /* about 1,250 in 45 s, as the process */
    }
    printf("cross-backend wait checks in the while: %ld\n", checks);
    must(tp_event_destroy(cpu_event), "tp_event_destroy");
    must(tp_event_destroy(gpu_event), "tp_event_destroy");
    must(tp_stream_destroy(cpu), "tp_stream_destroy");
    must(tp_stream_destroy(gpu), "tp_stream_destroy");
}

static int parse(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--cross-waits") == 0) {
            o->cross_waits = 1;
        } else if (value && strcmp(argv[i], "--device") == 0) {
            o->device = value, i++;
        } else if (value && strcmp(argv[i], "--idle-seconds") == 0) {
            o->idle_seconds = atof(value), i++;
        } else if (value && strcmp(argv[i], "--records") == 0) {
            o->records = atoi(value), i++;
        } else if (value && strcmp(argv[i], "--spacing-ms") == 0) {
            o->spacing_ms = atoi(value), i++;
        } else if (value && strcmp(argv[i], "--error-growth-us") == 0) {
            o->error_growth_us = atoi(value), i++;
        } else {
            fprintf(stderr, "clock_after_idle: unknown or incomplete argument \"%s\"\n", argv[i]);
            return 0;
        }
    }
    if (o->idle_seconds < 0 || o->idle_seconds > 3600 || o->records < 1 || o->records > 100000 || o->spacing_ms < 0 ||
        o->spacing_ms > 60000 || o->error_growth_us < 0 || o->error_growth_us > 1000000) {
        fprintf(stderr,
                "clock_after_idle: --idle-seconds in [0, 3600], --records in [1, 100000], "
                "--spacing-ms in [0, 60000], --error-growth-us in [0, 1000000]\n");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    options o = {"cuda:0", 45.0, 200, 100, 0, 100};
    if (!parse(argc, argv, &o))
        return 2;
    const char *type = strcmp(o.device, "cpu:0") == 0 ? "cpu" : "cuda";
    const char *reason = NULL;
    if (strncmp(o.device, type, strlen(type)) == 0 && tp_backend_status(type, &reason) != TP_OK) {
        printf("clock_after_idle: %s unusable here: %s\n", o.device, reason ? reason : "(no reason)");
        return EXIT_UNAVAILABLE;
    }
    tp_stream *stream;
    tp_event *event;
    must(tp_stream_create(&stream, o.device, 0), "tp_stream_create");
    must(tp_event_create(&event, o.device, TP_EVENT_TIMING), "tp_event_create");
    const int64_t first_error = error_ns(o.device);
    int64_t ns;
    must(tp_event_record(event, stream), "tp_event_record");
    must(tp_event_synchronize(event), "tp_event_synchronize");
    must(tp_event_timestamp(event, &ns), "tp_event_timestamp");

    spend_while(&o);

    tp_stream *later_stream;
    tp_event *later_event;
    must(tp_stream_create(&later_stream, o.device, 0), "tp_stream_create");
    must(tp_event_create(&later_event, o.device, TP_EVENT_TIMING), "tp_event_create");
    int outside = 0, grown = 0;
    int64_t worst_outside = 0, largest_error = first_error, first_before = 0, first_after = 0;
    for (int i = 0; i < o.records; i++) {
        const int64_t t0 = now_ns();
        must(tp_event_record(later_event, later_stream), "tp_event_record");
        must(tp_event_synchronize(later_event), "tp_event_synchronize");
        const int64_t t1 = now_ns();
        must(tp_event_timestamp(later_event, &ns), "tp_event_timestamp");
        const int64_t error = error_ns(o.device);
        const int64_t e = error > first_error ? error : first_error;
        const int64_t beyond = ns < t0 ? t0 - ns : ns > t1 ? ns - t1 : 0;
        if (i == 0)
            first_before = t0 - ns, first_after = t1 - ns;
        outside += beyond > e;
        grown += error > 2 * first_error + (int64_t)o.error_growth_us * 1000;
        worst_outside = beyond > worst_outside ? beyond : worst_outside;
        largest_error = error > largest_error ? error : largest_error;
        if (o.spacing_ms > 0)
            sleep_ms(o.spacing_ms);
    }
    printf("device %s, %.1f s %s after the first calibration, %d records %d ms apart\n", o.device, o.idle_seconds,
           o.cross_waits ? "of cross-backend waits" : "idle", o.records, o.spacing_ms);
    printf("first record after the while: t0 %+lld ns, t1 %+lld ns from its timestamp\n", (long long)first_before,
           (long long)first_after);
    printf("outside [t0 - e, t1 + e]: %d of %d (worst beyond the bare bracket: %lld ns)\n", outside, o.records,
           (long long)worst_outside);
    printf("error_ns: %lld after the first calibration, at most %lld after; grown past 2x + %d us: %d of %d\n",
           (long long)first_error, (long long)largest_error, o.error_growth_us, grown, o.records);
    must(tp_event_destroy(later_event), "tp_event_destroy");
    must(tp_stream_destroy(later_stream), "tp_stream_destroy");
    must(tp_event_destroy(event), "tp_event_destroy");
    must(tp_stream_destroy(stream), "tp_stream_destroy");
    return outside == 0 && grown == 0 ? 0 : 1;
}
