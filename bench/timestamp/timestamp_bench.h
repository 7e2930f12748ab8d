/* What the timestamp benchmark's parts share: the host clock, percentiles, the
 * table rows (timestamp_common.c), and the CUDA-only part (timestamp_cuda.c, built
 * only with CUDA). */
#ifndef TPEVENT_BENCH_TIMESTAMP_H
#define TPEVENT_BENCH_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

#include <tpevent/tpevent.h>

/* A wait that took this long is a hang: report it and stop, never hang the run. */
#define BENCH_WAIT_LIMIT_NS ((int64_t)5000000000)

int64_t now_ns(void);
void sleep_until_ns(int64_t deadline);

typedef struct summary {
    int64_t p50, p99, max;
    size_t count;
} summary;

/* Sorts `values` in place. An empty array summarizes to zeros. */
summary summarize(int64_t *values, size_t count);

/* "  name   p50   p99   max", in ns, or in us with `in_us`. */
void print_summary(const char *name, summary s, int in_us);

/* Fails (prints, exits 1) unless the call succeeded. */
void must(tp_status status, const char *what);

#ifdef TIMESTAMP_BENCH_CUDA
/* (c) the raw device clock's drift against CLOCK_MONOTONIC over `seconds`, beside
 * tpevent's corrected timestamps; (d) elapsed_time of one CUDA device against
 * cudaEventElapsedTime of raw events recorded beside tpevent's. 0 on success. */
int cuda_drift(const char *device, double seconds);
int cuda_same_device_elapsed(const char *device, int tries);
#endif

#endif /* TPEVENT_BENCH_TIMESTAMP_H */
