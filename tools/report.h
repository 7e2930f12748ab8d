/* What `tpevent bench` measured, and its two forms: a table and --json. */
#ifndef TPEVENT_TOOL_REPORT_H
#define TPEVENT_TOOL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "host.h"
#include "measure.h"
#include "stats.h"

#define TOOL_DEVICE_NAME_SIZE 128
#define TOOL_BASELINE_NAME_SIZE 48

typedef struct op_result {
    sample_summary tpevent; /* ns per call */
    unsigned batch;         /* calls per sample, tpevent's and a host baseline's alike */
    /* "cudaEventRecord" (native, timed by the backend one call per sample) or
     * "empty_call" (host: the tool's own, where no runtime is underneath) */
    char baseline[TOOL_BASELINE_NAME_SIZE];
    bool baseline_native;
    unsigned baseline_batch;
    sample_summary baseline_summary;
} op_result;

typedef struct device_result {
    char device[TP_DEVICE_STRING_MAX];
    char name[TOOL_DEVICE_NAME_SIZE];
    bool has_name;
    double timer_resolution_ns; /* 0: every try measured 0 */
    op_result ops[BENCH_OP_COUNT];
} device_result;

/* A backend the run did not benchmark, and why. */
typedef struct skipped_backend {
    const char *backend; /* "cuda" */
    char reason[TOOL_ERROR_SIZE];
} skipped_backend;

/* A host measurement given for scale, not compared with anything. */
typedef struct reference_result {
    const char *what; /* "clock_gettime", "pthread_cond_round_trip" */
    unsigned batch;
    sample_summary summary;
} reference_result;

#define REFERENCE_COUNT 2

typedef struct bench_report {
    const char *version; /* tp_version_string() */
    size_t iterations;   /* timed samples per op and per baseline */
    size_t warmup;       /* untimed samples before them */
    const host_info *host;
    const reference_result *references; /* REFERENCE_COUNT of them */
    const device_result *devices;
    size_t device_count;
    const skipped_backend *skipped;
    size_t skipped_count;
    /* --trace only (else NULL): each op's untraced run, the table's being the traced
     * one, and the raw call's median once more after the trace stopped (ns, per
     * device and op, NAN where no runtime is underneath). */
    const device_result *untraced;
    const double *raw_after_stop;
} bench_report;

/* tpevent's median over a native baseline's; false for a host baseline or one of 0 ns. */
bool op_ratio(const op_result *result, double *ratio);

void report_table(FILE *out, const bench_report *report);

/* One JSON object, the fields documented in tools/README.md, then a newline. False
 * if the document could not be made (out of memory); a failed write is seen by the
 * caller through ferror(out). */
bool report_json(FILE *out, const bench_report *report);

#endif /* TPEVENT_TOOL_REPORT_H */
