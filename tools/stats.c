#include "stats.h"

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
    /* The median's interval: [x_(j), x_(k)], 1-based, j = floor((n - z sqrt(n)) / 2),
     * k = ceil(1 + (n + z sqrt(n)) / 2), clamped to the samples. */
    double n = (double)count, spread = 1.959964 * sqrt(n);
    double low_rank = floor((n - spread) / 2), high_rank = ceil(1 + (n + spread) / 2);
    size_t low = low_rank < 1 ? 1 : (size_t)low_rank, high = high_rank > n ? count : (size_t)high_rank;
    double sum = 0, squares = 0;
    for (size_t i = 0; i < count; i++)
        sum += samples[i];
    double mean = sum / n;
    for (size_t i = 0; i < count; i++)
        squares += (samples[i] - mean) * (samples[i] - mean);
    sample_summary summary = {
        .median_ns = samples[count / 2],
        .p99_ns = samples[p99_rank - 1],
        .median_low_ns = samples[low - 1],
        .median_high_ns = samples[high - 1],
        .mean_ns = mean,
        .stdev_ns = count > 1 ? sqrt(squares / (n - 1)) : 0,
        .min_ns = samples[0],
        .max_ns = samples[count - 1],
        .count = count,
    };
    return summary;
}
