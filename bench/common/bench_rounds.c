#define _POSIX_C_SOURCE 200809L

#include "bench_rounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(double *values, size_t count, double q)
{
    qsort(values, count, sizeof *values, compare_double);
    double position = q * (double)(count - 1);
    size_t below = (size_t)position;
    if (below + 1 >= count)
        return values[count - 1];
    double weight = position - (double)below;
    return values[below] * (1 - weight) + values[below + 1] * weight;
}

bool bench_parse_size(const char *text, size_t *out)
{
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (!*text || *end || value == 0)
        return false;
    *out = (size_t)value;
    return true;
}

bool bench_parse_options(int argc, char **argv, size_t batch, size_t rounds, bench_options *opt)
{
    *opt = (bench_options){.device = NULL, .batch = batch, .rounds = rounds, .check = false};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            opt->device = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && bench_parse_size(value, &opt->batch))
            i++;
        else if (strcmp(argv[i], "--rounds") == 0 && bench_parse_size(value, &opt->rounds))
            i++;
        else if (strcmp(argv[i], "--check") == 0)
            opt->check = true;
        else
            return false;
    }
    return true;
}

void bench_time_round(const bench_sides *sides, size_t op, size_t round, size_t batch, double *tp_sample,
                      double *raw_sample)
{
    if (round % 2 == 0) {
        *tp_sample = sides->time_tp(sides->tp_fixture, op, batch);
        *raw_sample = sides->time_raw(sides->raw_fixture, op, batch);
    } else {
        *raw_sample = sides->time_raw(sides->raw_fixture, op, batch);
        *tp_sample = sides->time_tp(sides->tp_fixture, op, batch);
    }
}

bool bench_samples_alloc(bench_samples *samples, const char *program, size_t op_count, size_t rounds)
{
    /* --rounds is the user's: op_count * rounds doubles must not wrap around. */
    if (rounds > BENCH_ROUNDS_MOST) {
        fprintf(stderr, "%s: --rounds %zu: at most %d\n", program, rounds, BENCH_ROUNDS_MOST);
        return false;
    }
    size_t count = op_count * rounds;
    *samples = (bench_samples){.op_count = op_count,
                               .rounds = rounds,
                               .tp_ns = malloc(count * sizeof(double)),
                               .raw_ns = malloc(count * sizeof(double)),
                               .ratios = malloc(count * sizeof(double))};
    if (samples->tp_ns && samples->raw_ns && samples->ratios)
        return true;
    fprintf(stderr, "%s: out of memory for %zu rounds\n", program, rounds);
    bench_samples_free(samples);
    return false;
}

void bench_samples_free(bench_samples *samples)
{
    free(samples->ratios);
    free(samples->raw_ns);
    free(samples->tp_ns);
}

void bench_run_rounds(const bench_sides *sides, size_t batch, bench_samples *samples)
{
    for (size_t op = 0; op < samples->op_count; op++) {
        (void)sides->time_tp(sides->tp_fixture, op, batch);
        (void)sides->time_raw(sides->raw_fixture, op, batch);
    }
    for (size_t round = 0; round < samples->rounds; round++) {
        for (size_t op = 0; op < samples->op_count; op++) {
            size_t at = op * samples->rounds + round;
            bench_time_round(sides, op, round, batch, &samples->tp_ns[at], &samples->raw_ns[at]);
            samples->ratios[at] = samples->tp_ns[at] / samples->raw_ns[at];
        }
    }
}

bench_summary bench_summarize(bench_samples *samples, size_t op)
{
    size_t rounds = samples->rounds, first = op * rounds;
    double *ratios = samples->ratios + first;
    bench_summary summary;
    summary.tp_median = bench_quantile(samples->tp_ns + first, rounds, 0.5);
    summary.raw_median = bench_quantile(samples->raw_ns + first, rounds, 0.5);
    summary.ratio = bench_quantile(ratios, rounds, 0.5);
    summary.iqr = bench_quantile(ratios, rounds, 0.75) - bench_quantile(ratios, rounds, 0.25);
    return summary;
}

void bench_print_table_head(size_t rounds, size_t batch, const char *ratio_meaning)
{
    printf(
        "%zu interleaved rounds per op; a sample is one batch of %zu calls timed as a whole (ns per call);\n"
        "medians per side; ratio: %s, IQR its spread\n\n",
        rounds, batch, ratio_meaning);
    printf("%-26s %11s %9s %8s %8s  %s\n", "op", "tpevent ns", "raw ns", "ratio", "IQR", "budget");
}

void bench_print_row(const char *name, const bench_summary *summary, const char *verdict)
{
    printf("%-26s %11.1f %9.1f %8.3f %8.3f  %s\n", name, summary->tp_median, summary->raw_median, summary->ratio,
           summary->iqr, verdict);
}

bool bench_print_ratio_row(const char *name, const bench_summary *summary, double budget)
{
    bool ok = summary->ratio <= budget;
    char verdict[64];
    snprintf(verdict, sizeof verdict, "<= %.2f: %s", budget, ok ? "ok" : "OVER");
    bench_print_row(name, summary, verdict);
    return ok;
}

bool bench_print_ratio_or_slack_row(const char *name, const bench_summary *summary, double budget, double slack_ns)
{
    bool within_ratio = summary->ratio <= budget;
    bool within_slack = summary->tp_median <= summary->raw_median + slack_ns;
    char verdict[64];
    snprintf(verdict, sizeof verdict, "<= %.2f or raw + %.0f ns: %s", budget, slack_ns,
             within_ratio   ? "ok"
             : within_slack ? "ok (raw + ns)"
                            : "OVER");
    bench_print_row(name, summary, verdict);
    return within_ratio || within_slack;
}

int bench_each_device(const char *backend, int count, const bench_options *opt, bench_device_fn bench_device,
                      bench_samples *samples)
{
    if (opt->device)
        return bench_device(opt->device, opt, samples);
    int over = 0;
    for (int index = 0; index < count; index++) {
        char device[32];
        snprintf(device, sizeof device, "%s:%d", backend, index);
        over += bench_device(device, opt, samples);
    }
    return over;
}
