/* What both builds of the timestamp benchmark share (timestamp_bench.h): the host
 * clock, percentiles and their table rows, and failing on a failed call. */
#define _POSIX_C_SOURCE 200809L

#include "timestamp_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void sleep_until_ns(int64_t deadline)
{
    struct timespec at = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    }
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

summary summarize(int64_t *values, size_t count)
{
    summary s = {0, 0, 0, count};
    if (count == 0)
        return s;
    qsort(values, count, sizeof *values, compare_int64);
    s.p50 = values[count / 2];
    s.p99 = values[(size_t)((double)(count - 1) * 0.99)];
    s.max = values[count - 1];
    return s;
}

void print_summary(const char *name, summary s, int in_us)
{
    const double scale = in_us ? 1e3 : 1.0;
    printf("  %-26s %12.3f %12.3f %12.3f\n", name, (double)s.p50 / scale, (double)s.p99 / scale, (double)s.max / scale);
}

void must(tp_status status, const char *what)
{
    if (status == TP_OK)
        return;
    fprintf(stderr, "tpevent_bench_timestamp: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
    exit(1);
}
