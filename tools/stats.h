/* Summaries of latency samples. */
#ifndef TPEVENT_TOOL_STATS_H
#define TPEVENT_TOOL_STATS_H

#include <stddef.h>

typedef struct sample_summary {
    double median_ns; /* the middle sample; the mean of the two middle ones of an even count */
    double p99_ns;    /* nearest rank: the smallest sample >= 99% of the samples */
    /* The median's 95 % confidence interval from order statistics, as tp_measure's
     * (common/median_interval.h): the saved results' "median_low_ns", "median_high_ns". */
    double median_low_ns, median_high_ns;
    double mean_ns, stdev_ns, min_ns, max_ns;
    size_t count;
} sample_summary;

/* Sorts samples[0..count) in place; count > 0. */
sample_summary summarize_samples(double *samples, size_t count);

#endif /* TPEVENT_TOOL_STATS_H */
