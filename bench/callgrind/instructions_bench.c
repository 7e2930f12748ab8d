/*
 * Instructions per call of tpevent's hot paths, counted by valgrind's callgrind: a
 * count that does not depend on the machine's load, so that two trees can be
 * compared on CI's machine (the fake GPU module there stands for CUDA).
 *
 * Usage: tpevent_bench_instructions <device> <calls> [op ...]
 *   e.g. valgrind --tool=callgrind --collect-atstart=no --separate-threads=yes \
 *        tpevent_bench_instructions cuda:0 2000
 *
 * Public API only, so that the same source measures an older tree's library. Each
 * op runs on objects made beforehand (streams idle, events' records completed),
 * first <calls> times uncounted (warm-up), then <calls> times and 2 x <calls> times
 * with collection on, each run dumped as "<op>/<count>" (CALLGRIND_DUMP_STATS_AT).
 * Instructions per call = (Ir(2N) - Ir(N)) / N: the toggles, the loop's entry and
 * any one-time cost cancel. Collection is toggled by the calling thread and callgrind
 * keeps that state per thread, so the runtime's own threads (the fake GPU's stream
 * threads, the CPU backend's workers) count nothing; --separate-threads=yes keeps
 * them out of the main thread's dump all the same. scripts/instructions-compare.sh
 * reads the dumps.
 *
 * Not under valgrind it just runs every op (the smoke test). Exit 77: built without
 * valgrind/callgrind.h (nothing could be measured), or the device is not usable.
 */
#include <tpevent/tpevent.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TPEVENT_HAVE_CALLGRIND_H)
#include <valgrind/callgrind.h>
#endif

#define EXIT_UNAVAILABLE 77

typedef struct fixture {
    const char *device;
    tp_stream *stream; /* idle: records on it complete as soon as its thread runs */
    tp_stream *other;  /* the stream that waits */
    tp_event *plain;   /* timing off */
    tp_event *timed;   /* timing on */
    tp_event *timed_end;
} fixture;

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_instructions: %s: %s (%s)\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

/* Each op has a function of its own, named for it, so that callgrind's per-function
 * output (and --toggle-collect, where the markers are missing) can find it. */
static void instructions_record_plain(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(tp_event_record(f->plain, f->stream), "tp_event_record");
}

static void instructions_record_timed(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(tp_event_record(f->timed, f->stream), "tp_event_record");
}

static void instructions_query_completed(fixture *f, size_t n)
{
    bool done = false;
    for (size_t i = 0; i < n; i++)
        check(tp_event_query(f->plain, &done), "tp_event_query");
}

static void instructions_synchronize_completed(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(tp_event_synchronize(f->plain), "tp_event_synchronize");
}

static void instructions_stream_wait(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(tp_stream_wait_event(f->other, f->plain), "tp_stream_wait_event");
}

static void instructions_elapsed_time(fixture *f, size_t n)
{
    float ms = 0;
    for (size_t i = 0; i < n; i++)
        check(tp_event_elapsed_time(f->timed, f->timed_end, &ms), "tp_event_elapsed_time");
}

static void instructions_create_destroy(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tp_event *event = NULL;
        check(tp_event_create(&event, f->device, TP_EVENT_DEFAULT), "tp_event_create");
        check(tp_event_destroy(event), "tp_event_destroy");
    }
}

/* The one op that waits for the runtime's thread: its count includes the caller's
 * polling, which depends on when that thread runs (not deterministic). */
static void instructions_record_synchronize_idle(fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check(tp_event_record(f->plain, f->stream), "tp_event_record");
        check(tp_event_synchronize(f->plain), "tp_event_synchronize");
    }
}

typedef struct op {
    const char *name;
    void (*run)(fixture *f, size_t n);
} op;

static const op ops[] = {
    {"record_timing_off", instructions_record_plain},
    {"record_timing_on", instructions_record_timed},
    {"query_completed", instructions_query_completed},
    {"synchronize_completed", instructions_synchronize_completed},
    {"stream_wait", instructions_stream_wait},
    {"elapsed_time", instructions_elapsed_time},
    {"create_destroy", instructions_create_destroy},
    {"record_synchronize_idle", instructions_record_synchronize_idle},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

static void fixture_open(fixture *f, const char *device)
{
    f->device = device;
    check(tp_stream_create(&f->stream, device, 0), "tp_stream_create");
    check(tp_stream_create(&f->other, device, 0), "tp_stream_create");
    check(tp_event_create(&f->plain, device, TP_EVENT_DEFAULT), "tp_event_create");
    check(tp_event_create(&f->timed, device, TP_EVENT_TIMING), "tp_event_create");
    check(tp_event_create(&f->timed_end, device, TP_EVENT_TIMING), "tp_event_create");
}

/* Every event recorded and reached, both streams idle: the state each op starts in. */
static void fixture_settle(fixture *f)
{
    check(tp_event_record(f->plain, f->stream), "tp_event_record");
    check(tp_event_record(f->timed, f->stream), "tp_event_record");
    check(tp_event_record(f->timed_end, f->stream), "tp_event_record");
    check(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    check(tp_stream_synchronize(f->other), "tp_stream_synchronize");
}

static void fixture_close(fixture *f)
{
    fixture_settle(f);
    check(tp_event_destroy(f->timed_end), "tp_event_destroy");
    check(tp_event_destroy(f->timed), "tp_event_destroy");
    check(tp_event_destroy(f->plain), "tp_event_destroy");
    check(tp_stream_destroy(f->other), "tp_stream_destroy");
    check(tp_stream_destroy(f->stream), "tp_stream_destroy");
}

#if defined(TPEVENT_HAVE_CALLGRIND_H)
/* One counted run, dumped under "<op>/<n>"; the caller's thread only. */
static void counted_run(const op *o, fixture *f, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "%s/%zu", o->name, n);
    CALLGRIND_TOGGLE_COLLECT;
    o->run(f, n);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(name);
}
#endif

static void measure(const op *o, fixture *f, size_t n)
{
    fixture_settle(f);
    o->run(f, n); /* warm-up: first-use paths, pools, the allocator's free lists */
#if defined(TPEVENT_HAVE_CALLGRIND_H)
    if (!RUNNING_ON_VALGRIND)
        return;
    fixture_settle(f);
    counted_run(o, f, n);
    fixture_settle(f);
    counted_run(o, f, 2 * n);
#endif
}

static bool selected(const op *o, int argc, char **argv)
{
    if (argc <= 3)
        return true;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], o->name) == 0)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    size_t n = argc >= 3 ? strtoul(argv[2], NULL, 10) : 0;
    if (n == 0) {
        fprintf(stderr, "usage: %s <device> <calls> [op ...]\nops:", argv[0]);
        for (size_t o = 0; o < OP_COUNT; o++)
            fprintf(stderr, " %s", ops[o].name);
        fprintf(stderr, "\n");
        return 2;
    }
    const char *device = argv[1];
    int count = 0;
    char type[16] = "";
    snprintf(type, sizeof type, "%.*s", (int)strcspn(device, ":"), device);
    if (tp_device_count(type, &count) != TP_OK || count == 0) {
        printf("skipped: no %s device here (%s)\n", type, tp_last_error());
        return EXIT_UNAVAILABLE;
    }
    fixture f;
    fixture_open(&f, device);
    for (size_t o = 0; o < OP_COUNT; o++) {
        if (selected(&ops[o], argc, argv))
            measure(&ops[o], &f, n);
    }
    fixture_close(&f);
#if defined(TPEVENT_HAVE_CALLGRIND_H)
    printf("%s: %zu and %zu calls of each op%s\n", device, n, 2 * n,
           RUNNING_ON_VALGRIND ? ", dumped by callgrind" : " (not under valgrind: nothing counted)");
    return 0;
#else
    printf("skipped: built without valgrind/callgrind.h, so nothing can be counted (the ops ran)\n");
    return EXIT_UNAVAILABLE;
#endif
}
