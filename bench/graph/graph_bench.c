/*
 * Rule 16's benchmark: a captured sequence of N operations launched as a graph,
 * against the same N operations submitted one by one, per device, in one run.
 *
 * Usage: tpevent_bench_graph [--device D]... [--n N] [--rounds R] [--max-seconds S]
 *
 * The sequence: records of TP_EVENT_EXTERNAL events (so that a launch makes them
 * too), and on the CPU, where host functions are the captured unit of work, host
 * functions between them (half of the N each); on CUDA and HIP host functions
 * are refused inside a capture (rule 16), so the sequence is N records. A round
 * is the submission (N calls, or one launch) and a synchronize of the stream;
 * the table gives the median round in us for both and their ratio (one by one /
 * graph). Devices default to cpu:0 and, where usable, cuda:0 and hip:0. Rounds
 * stop at --max-seconds per device and side. It asserts nothing about time.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 8
#define EVENTS 8

typedef struct options {
    const char *devices[MAX_DEVICES];
    int device_count;
    int n;
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
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_graph: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count ? values[count / 2] : 0.0;
}

/* The sequence, submitted to `stream` (capturing or not). */
static void submit_sequence(tp_stream *stream, tp_event **events, int n, bool host_fns)
{
    for (int i = 0; i < n; i++) {
        if (host_fns && i % 2 == 1)
            check(tp_stream_launch_host_fn(stream, count_host_fn, NULL), "tp_stream_launch_host_fn");
        else
            check(tp_event_record(events[i % EVENTS], stream), "tp_event_record");
    }
}

static void bench_device(const char *device, const options *o)
{
    bool host_fns = strncmp(device, "cpu", 3) == 0;
    tp_stream *stream = NULL;
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");
    tp_event *events[EVENTS];
    for (int i = 0; i < EVENTS; i++)
        check(tp_event_create(&events[i], device, TP_EVENT_EXTERNAL), "tp_event_create");

    check(tp_stream_begin_capture(stream), "tp_stream_begin_capture");
    submit_sequence(stream, events, o->n, host_fns);
    tp_graph *graph = NULL;
    check(tp_stream_end_capture(stream, &graph), "tp_stream_end_capture");

    double *eager = malloc((size_t)o->rounds * sizeof *eager);
    double *launched = malloc((size_t)o->rounds * sizeof *launched);
    if (!eager || !launched) {
        fprintf(stderr, "tpevent_bench_graph: out of memory\n");
        exit(1);
    }
    /* Warm-up: pools, workers, the graph's first launch. */
    submit_sequence(stream, events, o->n, host_fns);
    check(tp_graph_launch(graph, stream), "tp_graph_launch");
    check(tp_stream_synchronize(stream), "tp_stream_synchronize");

    int eager_rounds = 0, graph_rounds = 0;
    double deadline = now_s() + o->max_seconds;
    for (; eager_rounds < o->rounds && now_s() < deadline; eager_rounds++) {
        double t0 = now_s();
        submit_sequence(stream, events, o->n, host_fns);
        check(tp_stream_synchronize(stream), "tp_stream_synchronize");
        eager[eager_rounds] = (now_s() - t0) * 1e6;
    }
    long before = atomic_load(&counter);
    deadline = now_s() + o->max_seconds;
    for (; graph_rounds < o->rounds && now_s() < deadline; graph_rounds++) {
        double t0 = now_s();
        check(tp_graph_launch(graph, stream), "tp_graph_launch");
        check(tp_stream_synchronize(stream), "tp_stream_synchronize");
        launched[graph_rounds] = (now_s() - t0) * 1e6;
    }
    long ran = atomic_load(&counter) - before;
    long expected = host_fns ? (long)graph_rounds * (o->n / 2) : 0;
    if (ran != expected) {
        fprintf(stderr, "tpevent_bench_graph: %s: %ld host functions ran in the launches, %ld expected\n", device, ran,
                expected);
        exit(1);
    }
    double e = median(eager, eager_rounds), g = median(launched, graph_rounds);
    printf("| %-8s | %6d | %-22s | %12.2f | %12.2f | %6.2fx | %6d |\n", device, o->n,
           host_fns ? "records + host fns" : "records", e, g, g > 0 ? e / g : 0.0, graph_rounds);
    free(eager);
    free(launched);
    check(tp_graph_destroy(graph), "tp_graph_destroy");
    for (int i = 0; i < EVENTS; i++)
        check(tp_event_destroy(events[i]), "tp_event_destroy");
    check(tp_stream_destroy(stream), "tp_stream_destroy");
}

static void usage(void)
{
    fprintf(stderr, "usage: tpevent_bench_graph [--device D]... [--n N] [--rounds R] [--max-seconds S]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    options o = {.n = 256, .rounds = 200, .max_seconds = 5.0};
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "--device") == 0 && o.device_count < MAX_DEVICES)
            o.devices[o.device_count++] = argv[++i];
        else if (strcmp(argv[i], "--n") == 0)
            o.n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0)
            o.rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-seconds") == 0)
            o.max_seconds = atof(argv[++i]);
        else
            usage();
    }
    if (o.n < 2 || o.rounds < 1 || o.max_seconds <= 0)
        usage();
    if (o.device_count == 0) {
        static const char *const defaults[][2] = {{"cpu", "cpu:0"}, {"cuda", "cuda:0"}, {"hip", "hip:0"}};
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            if (tp_backend_status(defaults[i][0], NULL) == TP_OK)
                o.devices[o.device_count++] = defaults[i][1];
    }
    printf("| device   |      N | sequence               | one by one us | graph us     | ratio   | rounds |\n");
    printf("|----------|--------|------------------------|--------------|--------------|---------|--------|\n");
    for (int i = 0; i < o.device_count; i++)
        bench_device(o.devices[i], &o);
    return 0;
}
