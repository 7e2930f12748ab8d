/*
 * tools/stats.c on its own: the summary that `tpevent bench` prints in its table, its
 * --json and its ratios. Its median is the one tp_measure and bench_quantile answer:
 * the middle sample of an odd count, the mean of the two middle ones of an even count,
 * so that a saved result's median_ns means the same whichever program wrote it.
 */
#include "tools/stats.h"

#include "check.h"

/* Four samples in no order: the median is the mean of the second and third. */
TEST(median_of_an_even_count_is_the_mean_of_the_two_middle)
{
    double samples[] = {40.0, 10.0, 30.0, 20.0};
    sample_summary summary = summarize_samples(samples, 4);
    CHECK(summary.median_ns == 25.0);
    CHECK(summary.median_low_ns <= summary.median_ns && summary.median_ns <= summary.median_high_ns);
    double two[] = {300.0, 100.0};
    CHECK(summarize_samples(two, 2).median_ns == 200.0);
    return 0;
}

/* An odd count's median is its middle sample; one sample is its own median. */
TEST(median_of_an_odd_count_is_the_middle_sample)
{
    double samples[] = {5.0, 1.0, 9.0, 3.0, 7.0};
    sample_summary summary = summarize_samples(samples, 5);
    CHECK(summary.median_ns == 5.0 && summary.min_ns == 1.0 && summary.max_ns == 9.0 && summary.count == 5);
    double one[] = {42.0};
    CHECK(summarize_samples(one, 1).median_ns == 42.0);
    return 0;
}
