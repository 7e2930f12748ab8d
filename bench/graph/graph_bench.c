/*
 * Rule 16's benchmark: a captured sequence of N operations launched as a graph,
 * against the same N operations submitted one by one, per device, in one run.
 *
 * Usage: tpevent_bench_graph [--device D]... [--n N]... [--rounds R] [--max-seconds S]
 *
 * The sequence is the same on every backend that captures: N/2 records of
 * TP_EVENT_EXTERNAL events (so that a launch makes them too) and N/2 host
 * functions (rule 15's, captured on every backend since #37), interleaved. A
 * round is the submission (N calls, or one launch) and a synchronize of the
 * stream. One table per device, a row per N (16, 256 and 1024 unless --n is
 * given): the median round in us both ways, measured in alternating rounds of
 * the same run (the first of each pair turning round by round), and their ratio (one by one / graph); then the same for the submission
 * alone (the N calls, or the launch: the round's part before the synchronize),
 * which is what a graph is captured to make cheaper; then a budget line (issue 53:
 * the round >= 1.0x at every N, the submission >= 2x from N = 256, ok or OVER,
 * with the least ratio seen). Each launch must have run each host
 * function once: the benchmark fails otherwise. Devices default to cpu:0 and,
 * where usable, cuda:0 and hip:0. Rounds stop at --rounds or after 2 x
 * --max-seconds per device and N. It asserts nothing about time.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include "bench_rounds.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 8
#define MAX_NS 8
#define EVENTS 8
/* Bounds on the user's numbers: N operations are captured into a graph, and four
 * arrays of `rounds` samples are kept. */
#define MAX_N 65536
#define MAX_ROUNDS 100000

typedef struct options {
    const char *devices[MAX_DEVICES];
    int device_count;
    int ns[MAX_NS];
    int n_count;
    int rounds;
    double max_seconds;
} options;

static atomic_long counter;

static void count_host_fn(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
}

static double now_s(void)
{
    return (double)bench_now_ns() / 1e9;
}

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_graph: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void *allocate(size_t size)
{
    void *memory = malloc(size);
    if (!memory) {
        fprintf(stderr, "tpevent_bench_graph: out of memory\n");
        exit(1);
    }
    return memory;
}

static double median(double *values, int count)
{
    return count ? bench_quantile(values, (size_t)count, 0.5) : 0.0;
}

/* The sequence, submitted to `stream` (capturing or not): a record, a host
 * function, a record, ... (n / 2 of each; n is even). */
static tp_status submit_sequence(tp_stream *stream, tp_event **events, int n)
{
    for (int i = 0; i < n; i++) {
        tp_status status = i % 2 == 1 ? tp_stream_launch_host_fn(stream, count_host_fn, NULL)
                                      : tp_event_record(events[i % EVENTS], stream);
        if (status != TP_OK)
            return status;
    }
    return TP_OK;
}

/* Issue 53's budgets, per device: the replay never slower than one by one, its
 * submission at least 2x cheaper from N = 256. */
typedef struct budget {
    double worst_round;  /* the least ratio one by one / graph, every N */
    double worst_submit; /* the same for the submission, N >= 256 */
} budget;

/* One row of the device's table; false (the row says why) where the device
 * refused to capture the sequence. */
static bool bench_n(const char *device, tp_stream *stream, tp_event **events, int n, const options *o, budget *b)
{
    check(tp_stream_begin_capture(stream), "tp_stream_begin_capture");
    tp_status captured = submit_sequence(stream, events, n);
    char why[512];
    snprintf(why, sizeof why, "%s", tp_last_error()); /* before end_capture's own */
    tp_graph *graph = NULL;
    tp_status ended = tp_stream_end_capture(stream, &graph);
    if (captured != TP_OK || ended != TP_OK) {
        tp_status status = captured != TP_OK ? captured : ended;
        printf("| %6d | not captured: %s: %s |\n", n, tp_status_name(status),
               captured != TP_OK ? why : tp_last_error());
        if (ended == TP_OK)
            check(tp_graph_destroy(graph), "tp_graph_destroy");
        fprintf(stderr, "tpevent_bench_graph: %s: the sequence of %d was not captured\n", device, n);
        return false;
    }

    double *eager = allocate((size_t)o->rounds * sizeof *eager);
    double *launched = allocate((size_t)o->rounds * sizeof *launched);
    double *eager_submit = allocate((size_t)o->rounds * sizeof *eager_submit);
    double *launched_submit = allocate((size_t)o->rounds * sizeof *launched_submit);
    /* Warm-up: pools, workers, the graph's first launch. */
    check(submit_sequence(stream, events, n), "the sequence, one by one");
    check(tp_graph_launch(graph, stream), "tp_graph_launch");
    check(tp_stream_synchronize(stream), "tp_stream_synchronize");

    /* The two ways alternate round by round, the first of a pair turning each
     * time, so that load and clock changes on this shared machine fall on both;
     * together they get what each got alone before (2 * max_seconds). */
    int rounds = 0;
    long before = atomic_load(&counter);
    double deadline = now_s() + 2 * o->max_seconds;
    for (; rounds < o->rounds && now_s() < deadline; rounds++)
        for (int k = 0; k < 2; k++) {
            bool as_graph = (rounds + k) % 2 == 1;
            double t0 = now_s();
            if (as_graph)
                check(tp_graph_launch(graph, stream), "tp_graph_launch");
            else
                check(submit_sequence(stream, events, n), "the sequence, one by one");
            double submitted = (now_s() - t0) * 1e6;
            check(tp_stream_synchronize(stream), "tp_stream_synchronize");
            double whole = (now_s() - t0) * 1e6;
            (as_graph ? launched_submit : eager_submit)[rounds] = submitted;
            (as_graph ? launched : eager)[rounds] = whole;
        }
    long ran = atomic_load(&counter) - before;
    long expected = 2L * rounds * (n / 2); /* one by one and launched alike */
    if (ran != expected) {
        fprintf(stderr,
                "tpevent_bench_graph: %s: %ld host functions ran in %d rounds of each way of %d, %ld expected\n",
                device, ran, rounds, n, expected);
        exit(1);
    }
    double e = median(eager, rounds), g = median(launched, rounds);
    double es = median(eager_submit, rounds), gs = median(launched_submit, rounds);
    if (g > 0 && e / g < b->worst_round)
        b->worst_round = e / g;
    if (n >= 256 && gs > 0 && es / gs < b->worst_submit)
        b->worst_submit = es / gs;
    printf("| %6d | %13.2f | %12.2f | %6.2fx | %13.2f | %12.2f | %6.2fx | %17d | %12d |\n", n, e, g,
           g > 0 ? e / g : 0.0, es, gs, gs > 0 ? es / gs : 0.0, rounds, rounds);
    free(launched_submit);
    free(eager_submit);
    free(eager);
    free(launched);
    check(tp_graph_destroy(graph), "tp_graph_destroy");
    return true;
}

/* The device's table: a row per N, on one stream and one set of events. */
static bool bench_device(const char *device, const options *o)
{
    tp_stream *stream = NULL;
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");
    tp_event *events[EVENTS];
    for (int i = 0; i < EVENTS; i++)
        check(tp_event_create(&events[i], device, TP_EVENT_EXTERNAL), "tp_event_create");

    printf("\n%s: N/2 external records and N/2 host functions, interleaved; median round (submit + synchronize)\n\n",
           device);
    printf(
        "|      N | one by one us |     graph us |   ratio | submit 1 by 1 | submit graph |  ratio "
        "| rounds one by one | rounds graph |\n");
    printf(
        "|--------|---------------|--------------|---------|---------------|--------------|--------"
        "-|-------------------|--------------|\n");
    bool captured = true;
    budget b = {1e9, 1e9};
    for (int i = 0; i < o->n_count; i++)
        captured = bench_n(device, stream, events, o->ns[i], o, &b) && captured;
    if (b.worst_round >= 1e9)
        printf("\ngraph budget (issue 53) on %s: no row measured", device);
    else
        printf("\ngraph budget (issue 53) on %s: replay >= 1.00x one by one at every N: %s (least %.2fx)", device,
               b.worst_round >= 1.0 ? "ok" : "OVER", b.worst_round);
    if (b.worst_submit < 1e9)
        printf("; submit >= 2.00x cheaper at N >= 256: %s (least %.2fx)", b.worst_submit >= 2.0 ? "ok" : "OVER",
               b.worst_submit);
    printf("\n");

    for (int i = 0; i < EVENTS; i++)
        check(tp_event_destroy(events[i]), "tp_event_destroy");
    check(tp_stream_destroy(stream), "tp_stream_destroy");
    return captured;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: tpevent_bench_graph [--device D]... [--n N]... [--rounds R] [--max-seconds S]\n"
            "  N even, from 2 to %d (at most %d of them); R from 1 to %d; S above 0\n",
            MAX_N, MAX_NS, MAX_ROUNDS);
    exit(2);
}

int main(int argc, char **argv)
{
    options o = {.rounds = 200, .max_seconds = 5.0};
    size_t value = 0;
    if (argc % 2 == 0)
        usage(); /* every option takes a value */
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *name = argv[i], *text = argv[i + 1];
        if (strcmp(name, "--device") == 0 && o.device_count < MAX_DEVICES)
            o.devices[o.device_count++] = text;
        else if (strcmp(name, "--n") == 0 && o.n_count < MAX_NS && bench_parse_size(text, &value) && value <= MAX_N)
            o.ns[o.n_count++] = (int)value;
        else if (strcmp(name, "--rounds") == 0 && bench_parse_size(text, &value) && value <= MAX_ROUNDS)
            o.rounds = (int)value;
        else if (strcmp(name, "--max-seconds") == 0)
            o.max_seconds = atof(text);
        else
            usage();
    }
    for (int i = 0; i < o.n_count; i++)
        if (o.ns[i] < 2 || o.ns[i] > MAX_N || o.ns[i] % 2 != 0)
            usage(); /* half records, half host functions */
    if (o.rounds < 1 || o.rounds > MAX_ROUNDS || !(o.max_seconds > 0))
        usage();
    if (o.n_count == 0) {
        static const int default_ns[] = {16, 256, 1024};
        for (size_t i = 0; i < sizeof default_ns / sizeof default_ns[0]; i++)
            o.ns[o.n_count++] = default_ns[i];
    }
    if (o.device_count == 0) {
        static const char *const defaults[][2] = {{"cpu", "cpu:0"}, {"cuda", "cuda:0"}, {"hip", "hip:0"}};
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            if (tp_backend_status(defaults[i][0], NULL) == TP_OK)
                o.devices[o.device_count++] = defaults[i][1];
    }
    bool captured = true;
    for (int i = 0; i < o.device_count; i++)
        captured = bench_device(o.devices[i], &o) && captured;
    return captured ? 0 : 1;
}
