/*
 * The median's confidence interval from order statistics, the one rule tp_measure
 * (core/measure_samples.c) and the tool's saved results (tools/stats.c) both state as
 * "median_low", "median_high": [x_(j), x_(k)], 1-based, j = floor((n - z sqrt(n)) / 2),
 * k = ceil(1 + (n + z sqrt(n)) / 2), clamped to the samples. It assumes nothing of
 * the samples' distribution (GPU times are skewed, with a tail).
 */
#ifndef TPEVENT_COMMON_MEDIAN_INTERVAL_H
#define TPEVENT_COMMON_MEDIAN_INTERVAL_H

#include <stddef.h>

/* z of a two-sided 95 % interval. */
#define TP_MEDIAN_Z_95 1.959964

/* The interval's ends as 0-based indices of n > 0 sorted samples. `z_sqrt_n` is
 * z * sqrt(n), the caller's square root (libtpevent links no libm). */
static inline void tp_median_interval_ranks(size_t n, double z_sqrt_n, size_t *low, size_t *high)
{
    double j = ((double)n - z_sqrt_n) / 2.0, k = 1.0 + ((double)n + z_sqrt_n) / 2.0;
    *low = j < 1.0 ? 0 : (size_t)j - 1;                                       /* floor, 1-based to 0-based */
    *high = k >= (double)n ? n - 1 : (size_t)k + ((double)(size_t)k < k) - 1; /* ceil, likewise */
}

#endif /* TPEVENT_COMMON_MEDIAN_INTERVAL_H */
