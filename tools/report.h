/* What `tpevent bench` measured, and its two forms: a table and --json. */
#ifndef TPEVENT_TOOL_REPORT_H
#define TPEVENT_TOOL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "measure.h"
#include "stats.h"

#define TOOL_DEVICE_NAME_SIZE 128
#define TOOL_BASELINE_NAME_SIZE 48

typedef struct op_result {
    sample_summary tpevent;
    /* "cudaEventRecord" (native), "clock_gettime" or "pthread_cond_round_trip" (host) */
    char baseline[TOOL_BASELINE_NAME_SIZE];
    bool baseline_native; /* timed by the backend through tp_native_sample */
    sample_summary baseline_summary;
} op_result;

typedef struct device_result {
    char device[TP_DEVICE_STRING_MAX];
    char name[TOOL_DEVICE_NAME_SIZE];
    bool has_name;
    op_result ops[BENCH_OP_COUNT];
} device_result;

typedef struct bench_report {
    const char *version; /* tp_version_string() */
    size_t iterations;   /* timed calls per op and per baseline */
    size_t warmup;       /* untimed calls before them */
    const device_result *devices;
    size_t device_count;
} bench_report;

void report_table(FILE *out, const bench_report *report);

/* One JSON object, the fields documented in tools/README.md, then a newline. */
void report_json(FILE *out, const bench_report *report);

#endif /* TPEVENT_TOOL_REPORT_H */
