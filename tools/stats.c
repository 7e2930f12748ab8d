#include "stats.h"

#include "common/median_interval.h"

#include <math.h>
#include <stdlib.h>

static int compare_samples(const void *left, const void *right)
{
    double a = *(const double *)left;
    double b = *(const double *)right;
    return (a > b) - (a < b);
}

sample_summary summarize_samples(double *samples, size_t count)
{
    qsort(samples, count, sizeof *samples, compare_samples);
    /* Nearest rank: ceil(0.99 * count), 1-based. */
    size_t p99_rank = (count * 99 + 99) / 100;
    size_t low, high; /* tp_measure's interval */
    tp_median_interval_ranks(count, TP_MEDIAN_Z_95 * sqrt((double)count), &low, &high);
    double n = (double)count;
    double sum = 0, squares = 0;
    for (size_t i = 0; i < count; i++)
        sum += samples[i];
    double mean = sum / n;
    for (size_t i = 0; i < count; i++)
        squares += (samples[i] - mean) * (samples[i] - mean);
    /* The mean of the two middle samples of an even count, as tp_measure's and
     * bench_quantile's: a saved result's median means one thing whoever wrote it. */
    double median = count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
    sample_summary summary = {
        .median_ns = median,
        .p99_ns = samples[p99_rank - 1],
        .median_low_ns = samples[low],
        .median_high_ns = samples[high],
        .mean_ns = mean,
        .stdev_ns = count > 1 ? sqrt(squares / (n - 1)) : 0,
        .min_ns = samples[0],
        .max_ns = samples[count - 1],
        .count = count,
    };
    return summary;
}
