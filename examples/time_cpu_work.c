/*
 * Times CPU work with events on the "cpu" device, as one would time GPU kernels.
 *
 * The work is a few host functions queued on a CPU stream; events recorded before
 * and after each one mark points in the stream, and tp_event_elapsed_time gives the
 * milliseconds between them. Each piece of work also measures itself with
 * clock_gettime, so that the program can check what the events say: the events
 * bracket the work, so they can never report less time than the work took.
 *
 * Build (installed tpevent):
 *   cmake -S examples -B build-examples -DCMAKE_PREFIX_PATH=<prefix>
 *   cc time_cpu_work.c $(pkg-config --cflags --libs tpevent)
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STAGES 3

typedef struct stage {
    uint64_t rounds;   /* how much work: rounds of the mixing loop */
    uint64_t checksum; /* its result, so that the compiler cannot drop it */
    double inside_ms;  /* how long it took, measured by the work itself */
} stage;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A host function: runs on the stream's worker thread, in stream order. */
static void mix(void *arg)
{
    stage *s = arg;
    double begin = now_ms();
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (uint64_t i = 0; i < s->rounds; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    s->checksum = x;
    s->inside_ms = now_ms() - begin;
}

static int fail(const char *what, tp_status status)
{
    fprintf(stderr, "time_cpu_work: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
    return 1;
}

int main(void)
{
    printf("tpevent %s\n", tp_version_string());

    tp_stream *stream = NULL;
    tp_status status = tp_stream_create(&stream, "cpu", 0);
    if (status != TP_OK)
        return fail("tp_stream_create(\"cpu\")", status);

    /* marks[i] before stage i, marks[STAGES] after the last one. */
    tp_event *marks[STAGES + 1] = {0};
    stage stages[STAGES];
    for (int i = 0; i <= STAGES; i++) {
        status = tp_event_create(&marks[i], "cpu", TP_EVENT_TIMING);
        if (status != TP_OK)
            return fail("tp_event_create", status);
    }

    /* Queue everything first: nothing below waits until tp_event_synchronize. */
    for (int i = 0; i < STAGES; i++) {
        stages[i] = (stage){.rounds = (uint64_t)(i + 1) * 2000000u};
        if ((status = tp_event_record(marks[i], stream)) != TP_OK)
            return fail("tp_event_record", status);
        if ((status = tp_stream_launch_host_fn(stream, mix, &stages[i])) != TP_OK)
            return fail("tp_stream_launch_host_fn", status);
    }
    if ((status = tp_event_record(marks[STAGES], stream)) != TP_OK)
        return fail("tp_event_record", status);

    if ((status = tp_event_synchronize(marks[STAGES])) != TP_OK)
        return fail("tp_event_synchronize", status);

    int errors = 0;
    for (int i = 0; i < STAGES; i++) {
        float ms = 0;
        if ((status = tp_event_elapsed_time(marks[i], marks[i + 1], &ms)) != TP_OK)
            return fail("tp_event_elapsed_time", status);
        printf("stage %d: %9llu rounds  events %8.3f ms  inside %8.3f ms  (checksum %016llx)\n", i,
               (unsigned long long)stages[i].rounds, ms, stages[i].inside_ms, (unsigned long long)stages[i].checksum);
        /* 1 us of slack for rounding the two clocks' readings to float. */
        if ((double)ms + 0.001 < stages[i].inside_ms) {
            fprintf(stderr,
                    "time_cpu_work: stage %d: the events say %.3f ms, less than the %.3f ms "
                    "the work measured itself\n",
                    i, ms, stages[i].inside_ms);
            errors++;
        }
    }
    float total_ms = 0;
    if ((status = tp_event_elapsed_time(marks[0], marks[STAGES], &total_ms)) != TP_OK)
        return fail("tp_event_elapsed_time", status);
    printf("all stages: %.3f ms\n", total_ms);

    for (int i = 0; i <= STAGES; i++)
        tp_event_destroy(marks[i]);
    tp_stream_destroy(stream);
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
