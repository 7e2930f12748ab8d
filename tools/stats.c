#include "stats.h"

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
    sample_summary summary = {
        .median_ns = samples[count / 2],
        .p99_ns = samples[p99_rank - 1],
    };
    return summary;
}
