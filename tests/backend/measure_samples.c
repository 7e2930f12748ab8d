/*
 * core/measure_samples.c on its own: the median's confidence interval that
 * tp_measure converges on (rule 18) comes from order statistics, holds the median,
 * narrows as samples accumulate (the samples' spread does not), and is computed by
 * selection, whatever the order the samples came in.
 */
#include "core/measure_samples.h"

#include "check.h"

#include <stdlib.h>

static measure_samples samples_of(const double *values, size_t n)
{
    measure_samples samples = {0};
    for (size_t i = 0; i < n; i++)
        CHECK(measure_samples_add(&samples, values[i]));
    return samples;
}

/* The interval of 1..n in any order: the order statistics j and k of the rule. */
TEST(median_interval_is_the_order_statistics_of_the_rule)
{
    double values[100];
    for (int i = 0; i < 100; i++)
        values[i] = (double)((i * 37) % 100 + 1); /* 1..100, shuffled */
    measure_samples samples = samples_of(values, 100);
    double median, low, high;
    CHECK(measure_samples_median_interval(&samples, TP_MEDIAN_Z_95, &median, &low, &high));
    /* n = 100, z sqrt(n) = 19.6: j = floor(40.2) = 40, k = ceil(60.8) = 61 */
    CHECK(median == 50.5 && low == 40.0 && high == 61.0);
    measure_samples_free(&samples);
    return 0;
}

/* One sample, two, a constant run: the interval is clamped to the samples. */
TEST(median_interval_of_few_or_equal_samples_is_clamped)
{
    double one[] = {7.0}, two[] = {9.0, 3.0}, same[50];
    for (int i = 0; i < 50; i++)
        same[i] = 4.0;
    double median, low, high;
    measure_samples samples = samples_of(one, 1);
    CHECK(measure_samples_median_interval(&samples, TP_MEDIAN_Z_95, &median, &low, &high));
    CHECK(median == 7.0 && low == 7.0 && high == 7.0);
    measure_samples_free(&samples);
    samples = samples_of(two, 2);
    CHECK(measure_samples_median_interval(&samples, TP_MEDIAN_Z_95, &median, &low, &high));
    CHECK(median == 6.0 && low == 3.0 && high == 9.0);
    measure_samples_free(&samples);
    samples = samples_of(same, 50);
    CHECK(measure_samples_median_interval(&samples, TP_MEDIAN_Z_95, &median, &low, &high));
    CHECK(median == 4.0 && low == 4.0 && high == 4.0);
    measure_samples_free(&samples);
    return 0;
}

/* A skewed, heavy-tailed distribution's interval narrows as samples accumulate, while
 * the spread stays (the old stop rule's flaw: 203,456 samples and "not converged"). */
TEST(median_interval_narrows_as_samples_accumulate)
{
    measure_samples samples = {0};
    double widths[3];
    size_t sizes[3] = {100, 10000, 200000};
    unsigned state = 12345;
    size_t taken = 0;
    for (int s = 0; s < 3; s++) {
        for (; taken < sizes[s]; taken++) {
            state = state * 1103515245u + 12345u;
            double u = (double)(state >> 8) / (double)(1u << 24);
            CHECK(measure_samples_add(&samples, 100.0 + (u > 0.9 ? 400.0 * u : 10.0 * u)));
        }
        double median, low, high;
        CHECK(measure_samples_median_interval(&samples, TP_MEDIAN_Z_95, &median, &low, &high));
        CHECK(low <= median && median <= high);
        widths[s] = high - low;
    }
    CHECK(widths[1] < widths[0] / 3 && widths[2] < widths[1] / 3);
    CHECK(measure_samples_noise(&samples) > 0.5); /* the spread did not shrink */
    measure_samples_free(&samples);
    return 0;
}
