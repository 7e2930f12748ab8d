/*
 * What the benchmarks that time tpevent against the raw calls in one process share
 * (bench/cuda/cuda_bench.c, bench/opencl/opencl_bench.c, bench/vulkan/vulkan_bench.c):
 * the clock, the two sides timed in interleaved rounds, the medians and spread of
 * the rounds, and the lines of the table they print.
 */
#ifndef TPEVENT_BENCH_ROUNDS_H
#define TPEVENT_BENCH_ROUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC, in ns. */
uint64_t bench_now_ns(void);

/* The q-quantile (0..1) of values, which it sorts. */
double bench_quantile(double *values, size_t count, double q);

/* A whole number above 0, the whole text; false for anything else. */
bool bench_parse_size(const char *text, size_t *out);

/* A benchmark of a backend's devices: --device (NULL: every device of the
 * backend), --batch, --rounds, --check (a missed budget is the exit status). */
typedef struct bench_options {
    const char *device;
    size_t batch, rounds;
    bool check;
} bench_options;

/* Reads argv over the defaults given; false for anything it does not know. */
bool bench_parse_options(int argc, char **argv, size_t batch, size_t rounds, bench_options *opt);

/* Times one batch of op `op` on one side, settled first: ns per call. */
typedef double (*bench_time_batch)(void *fixture, size_t op, size_t batch);

typedef struct bench_sides {
    bench_time_batch time_tp, time_raw;
    void *tp_fixture, *raw_fixture;
} bench_sides;

/*
 * One round of an op: its two sides' batches back to back, tpevent first in even
 * rounds and raw first in odd ones, so that clock changes, turbo and cache state
 * fall on both.
 */
void bench_time_round(const bench_sides *sides, size_t op, size_t round, size_t batch, double *tp_sample,
                      double *raw_sample);

/* Every op's samples: op o's round r at [o * rounds + r] of each array. */
typedef struct bench_samples {
    size_t op_count, rounds;
    double *tp_ns, *raw_ns; /* a batch's ns per call */
    double *ratios;         /* the round's ratio of its two batches */
} bench_samples;

/* The most rounds a run keeps: a round of each op is a batch of calls on both sides,
 * so a million is hours at the least, and each op's samples 24 MB. */
#define BENCH_ROUNDS_MOST 1000000

/* False, printing why on stderr, where rounds is over BENCH_ROUNDS_MOST or the memory
 * is not there. */
bool bench_samples_alloc(bench_samples *samples, const char *program, size_t op_count, size_t rounds);
void bench_samples_free(bench_samples *samples);

/* Every op timed: a batch of each on both sides first, not kept (the first calls
 * load code and fill pools), then the rounds, every op in turn in each; a round's
 * ratio is tpevent/raw. */
void bench_run_rounds(const bench_sides *sides, size_t batch, bench_samples *samples);

/* One op's rounds: each side's median batch (ns per call), the median of the
 * rounds' ratios and their spread (interquartile range). Sorts the op's samples. */
typedef struct bench_summary {
    double tp_median, raw_median, ratio, iqr;
} bench_summary;

bench_summary bench_summarize(bench_samples *samples, size_t op);

/* The lines above the table; `ratio_meaning` says what a round's ratio is. */
void bench_print_table_head(size_t rounds, size_t batch, const char *ratio_meaning);

/* A row of the table: the op, its summary and what its budget says. */
void bench_print_row(const char *name, const bench_summary *summary, const char *verdict);

/* A row whose budget is a ratio of at most `budget`; whether it is met. */
bool bench_print_ratio_row(const char *name, const bench_summary *summary, double budget);

/* A row whose budget is max(`budget` x raw, raw + `slack_ns`): met where the
 * ratio is within `budget` or tpevent's median within `slack_ns` of raw's (a raw
 * call of a few ns, where a few ns more are many percent); whether it is met. */
bool bench_print_ratio_or_slack_row(const char *name, const bench_summary *summary, double budget, double slack_ns);

/* The table of each device: opt's, or every one of the backend's `count`
 * ("<backend>:N"). The sum of what bench_device returned (ops over budget). */
typedef int (*bench_device_fn)(const char *device, const bench_options *opt, bench_samples *samples);
int bench_each_device(const char *backend, int count, const bench_options *opt, bench_device_fn bench_device,
                      bench_samples *samples);

#endif /* TPEVENT_BENCH_ROUNDS_H */
