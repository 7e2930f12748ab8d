#include "stats.h"

#include <stdlib.h>

static int compare_samples(const void *left, const void *right)
{
    uint64_t a = *(const uint64_t *)left;
    uint64_t b = *(const uint64_t *)right;
    return (a > b) - (a < b);
}

sample_summary summarize_samples(uint64_t *samples, size_t count)
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
