/*
 * tp_measure on a CPU stream (issue 30), against the truth: host functions that
 * busy-wait d us and log when they start, for d from 0 to 1,000 us.
 *
 * Usage: tpevent_bench_measure_cpu [--device cpu:N] [--rounds N] [--quick]
 * (--quick: 10 ms per measurement and at most 0.2 s, for the smoke test)
 *
 * Per d: the truth is the stream's own start-to-start cadence of back-to-back tasks
 * (the stream held while 64 are queued, then released: the median gap between two
 * logged starts), which is d plus the stream's per-task cost; tp_measure's median
 * per call (defaults: 0.5 s, 0.5 % noise) is printed beside it, with the difference,
 * the goal (within max(1 us, 3 %); 1 % at 200 us and 2 ms, issue 49), its noise,
 * samples x batch and seconds taken. Then tpevent.do_bench's way (cold, one call a
 * sample, 0.1 s of timed time, no noise goal; its mean) against the hot median: the
 * goal is within 3 % from 100 us up (issue 49: do_bench of a 100 us host function).
 * The last line, "measure budgets (CPU): N of M met", is what scripts/gpu-check.sh's
 * summary shows. Printed, not asserted.
 */
#include <tpevent/tpevent.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TRUTH_TASKS = 64, LOG_SIZE = 1 << 16 };

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef struct spin_work {
    int64_t ns;
    int64_t *log; /* start times, LOG_SIZE of them; written by the stream's worker */
    int count;
} spin_work;

static void spin_host_fn(void *arg)
{
    spin_work *work = arg;
    int64_t started = now_ns();
    work->log[work->count++ % LOG_SIZE] = started;
    while (now_ns() - started < work->ns) {
    }
}

static tp_status spin_launch(tp_stream *stream, void *arg)
{
    return tp_stream_launch_host_fn(stream, spin_host_fn, arg);
}

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_measure_cpu: %s: %s\n", what, tp_last_error());
        exit(1);
    }
}

/* do_bench's defaults as tpevent.do_bench passes them: cold, rep = 100 ms of timed
 * device time, max_time max(15 s, 10 rep), no noise goal (its answer is the mean). */
static tp_measure_options do_bench_options(const tp_measure_options *hot)
{
    tp_measure_options cold = *hot;
    cold.flags |= TP_MEASURE_COLD;
    cold.min_time_ns = hot->min_time_ns < 100 * 1000 * 1000 ? hot->min_time_ns : 100 * 1000 * 1000;
    cold.max_noise = 1e300;
    return cold;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median start-to-start gap of TRUTH_TASKS tasks queued behind a hold. */
static double truth_ns(tp_stream *stream, spin_work *work)
{
    tp_hold *hold;
    check(tp_stream_hold(stream, INT64_MAX, &hold), "tp_stream_hold");
    int first = work->count;
    for (int i = 0; i < TRUTH_TASKS; i++)
        check(spin_launch(stream, work), "tp_stream_launch_host_fn");
    check(tp_hold_release(hold), "tp_hold_release");
    check(tp_stream_synchronize(stream), "tp_stream_synchronize");
    double gaps[TRUTH_TASKS - 1];
    for (int i = 0; i < TRUTH_TASKS - 1; i++)
        gaps[i] = (double)(work->log[(first + i + 1) % LOG_SIZE] - work->log[(first + i) % LOG_SIZE]);
    qsort(gaps, TRUTH_TASKS - 1, sizeof gaps[0], compare_doubles);
    return gaps[(TRUTH_TASKS - 1) / 2];
}

int main(int argc, char **argv)
{
    const char *device = "cpu:0";
    int rounds = 3;
    tp_measure_options options;
    tp_measure_options_init(&options);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0) {
            options.min_time_ns = 10 * 1000 * 1000;
            options.max_time_ns = 200 * 1000 * 1000;
        } else {
            fprintf(stderr, "usage: tpevent_bench_measure_cpu [--device cpu:N] [--rounds N] [--quick]\n");
            return 2;
        }
    }
    if (rounds < 1)
        rounds = 1;
    tp_stream *stream;
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");
    spin_work work = {.log = calloc(LOG_SIZE, sizeof(int64_t))};
    if (!work.log)
        return 1;
    printf("tp_measure on %s: host functions that busy-wait d us (per call, us; median of %d rounds' truth)\n", device,
           rounds);
    printf("%8s %10s %10s %9s %8s %7s %8s %16s %7s %10s %8s %7s %10s\n", "d", "truth", "measure", "diff", "goal",
           "within", "noise", "samples x batch", "seconds", "do_bench", "vs hot", "within", "its median");
    const int64_t lengths_us[] = {0, 2, 5, 20, 100, 200, 1000, 2000};
    const tp_measure_options cold_options = do_bench_options(&options);
    int met = 0, budgets = 0;
    double floor_ns = 0, floor_stdev_ns = 0;
    for (size_t k = 0; k < sizeof lengths_us / sizeof lengths_us[0]; k++) {
        work.ns = lengths_us[k] * 1000;
        double truths[16];
        int n = rounds < 16 ? rounds : 16;
        for (int r = 0; r < n; r++)
            truths[r] = truth_ns(stream, &work);
        qsort(truths, (size_t)n, sizeof truths[0], compare_doubles);
        double truth = truths[n / 2];
        tp_measurement m = {.size = sizeof m}, cold = {.size = sizeof cold};
        int64_t began = now_ns();
        check(tp_measure(stream, spin_launch, &work, &options, &m), "tp_measure");
        double seconds = (double)(now_ns() - began) / 1e9;
        /* Below 100 us (no budget) do_bench's 0.1 s of timed time takes 15 s of flushes: 2 s here. */
        tp_measure_options cold_here = cold_options;
        if (lengths_us[k] < 100 && cold_here.max_time_ns > 2000 * 1000 * 1000)
            cold_here.max_time_ns = 2000 * 1000 * 1000;
        check(tp_measure(stream, spin_launch, &work, &cold_here, &cold), "tp_measure (cold)");
        double diff = m.median_ns - truth;
        floor_ns = m.floor_ns;
        floor_stdev_ns = m.floor_stdev_ns;
        /* issue 49: 1 % at 200 us and 2 ms; issue 30: max(1 us, 3 %) elsewhere */
        double share = (lengths_us[k] == 200 || lengths_us[k] == 2000) ? 0.01 : 0.03;
        double goal = truth * share > 1000 ? truth * share : 1000;
        bool within = diff < goal && diff > -goal;
        double cold_ratio = m.median_ns > 0 ? cold.mean_ns / m.median_ns : 0;
        bool cold_budget = lengths_us[k] >= 100, cold_within = cold_ratio > 0.97 && cold_ratio < 1.03;
        met += within + (cold_budget && cold_within);
        budgets += 1 + cold_budget;
        printf("%8lld %10.3f %10.3f %+9.3f %8.3f %7s %7.2f%% %8lld x %-6lld %7.2f %10.3f %8.4f %7s %10.3f%s%s\n",
               (long long)lengths_us[k], truth / 1e3, m.median_ns / 1e3, diff / 1e3, goal / 1e3, within ? "yes" : "NO",
               m.noise * 100, (long long)m.samples, (long long)m.batch, seconds, cold.mean_ns / 1e3, cold_ratio,
               cold_budget ? (cold_within ? "yes" : "NO") : "-", cold.median_ns / 1e3, m.note[0] ? "  note: " : "",
               m.note);
        if (cold.note[0])
            printf("%8s do_bench's note: %s\n", "", cold.note);
    }
    printf("floor on %s (the last measurement's): %.3f us +- %.3f per sample\n", device, floor_ns / 1e3,
           floor_stdev_ns / 1e3);
    printf("measure budgets (CPU): %d of %d met\n", met, budgets);
    check(tp_stream_destroy(stream), "tp_stream_destroy");
    free(work.log);
    return 0;
}
