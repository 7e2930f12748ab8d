/*
 * The samples of one tp_measure call and their statistics (core/measure.c's). Internal.
 */
#ifndef TPEVENT_CORE_MEASURE_SAMPLES_H
#define TPEVENT_CORE_MEASURE_SAMPLES_H

#include "common/median_interval.h" /* TP_MEDIAN_Z_95, the ranks */

#include <stdbool.h>
#include <stddef.h>

typedef struct measure_samples {
    double *values; /* per-call ns, in the order taken */
    size_t count, capacity;
    /* Welford's running mean and sum of squared deviations: the noise after each
     * sample without a pass over all of them. */
    double mean, m2;
    double *scratch; /* count entries: the order statistics' selection */
    size_t scratch_capacity;
} measure_samples;

/* The square root of x (0 for x <= 0 or NaN): Newton's iteration, since libtpevent links
 * no libm (a static link of it would have to add -lm, and gcc calls sqrt at -O0). */
double measure_square_root(double x);

/* Appends one sample; false when out of memory. */
bool measure_samples_add(measure_samples *samples, double ns);

/* The relative standard deviation so far (0 with fewer than two samples). */
double measure_samples_noise(const measure_samples *samples);

typedef struct measure_stats {
    double median, mean, min, max, stdev, noise;
} measure_stats;

/* Statistics of every sample; all zero when there is none. Sorts a copy: false when
 * out of memory. */
bool measure_samples_stats(const measure_samples *samples, measure_stats *out);

/*
 * The median of the samples and its confidence interval at `z` (TP_MEDIAN_Z_95), from
 * order statistics (common/median_interval.h). O(n) (selection on a scratch copy), so
 * that it can be asked after every stretch. All zero without a sample; false when out
 * of memory.
 */
bool measure_samples_median_interval(measure_samples *samples, double z, double *median, double *low, double *high);

void measure_samples_free(measure_samples *samples);

#endif /* TPEVENT_CORE_MEASURE_SAMPLES_H */
