#include "report.h"

#include <math.h>

#include "json.h"

bool op_ratio(const op_result *result, double *ratio)
{
    if (!result->baseline_native || result->baseline_summary.median_ns <= 0.0)
        return false;
    *ratio = result->tpevent.median_ns / result->baseline_summary.median_ns;
    return true;
}

static double overhead_ns(const op_result *result)
{
    return result->tpevent.median_ns - result->baseline_summary.median_ns;
}

/* Whole ns from 100 ns on, tenths below (batched samples are means). */
static void format_ns(char *out, size_t size, double ns)
{
    snprintf(out, size, fabs(ns) < 100.0 ? "%.1f" : "%.0f", ns);
}

void report_table(FILE *out, const bench_report *report)
{
    const host_info *host = report->host;
    fprintf(out, "tpevent %s bench: %zu timed samples per op after %zu warm-up samples\n", report->version,
            report->iterations, report->warmup);
    fprintf(out, "host: %s %s %s%s%s%s%s\n", host->system, host->release, host->machine, host->libc[0] ? ", " : "",
            host->libc, host->cpu[0] ? ", " : "", host->cpu);
    fprintf(out, "for scale:");
    for (size_t r = 0; r < REFERENCE_COUNT; r++) {
        char median[32];
        format_ns(median, sizeof median, report->references[r].summary.median_ns);
        fprintf(out, "%s %s %s ns", r == 0 ? "" : ";", report->references[r].what, median);
    }
    fprintf(out, "\n\n  %-8s %16s  %s\n", "device", "timer resolution", "name");
    for (size_t d = 0; d < report->device_count; d++) {
        const device_result *device = &report->devices[d];
        char resolution[32] = "all 0";
        if (device->timer_resolution_ns > 0.0)
            snprintf(resolution, sizeof resolution, "%.0f ns", device->timer_resolution_ns);
        fprintf(out, "  %-8s %16s  %s\n", device->device, resolution, device->has_name ? device->name : "-");
    }
    if (report->skipped_count > 0) {
        fprintf(out, "not run:\n");
        for (size_t s = 0; s < report->skipped_count; s++)
            fprintf(out, "  %-8s %s\n", report->skipped[s].backend, report->skipped[s].reason);
    }

    fprintf(out,
            "\nns per call; batch: calls per timed sample (calls under 100 ns are timed in "
            "batches, as their baseline)\n"
            "ratio: tpevent median / the runtime's median; overhead: tpevent median - "
            "baseline median\n"
            "empty_call baseline (no runtime underneath, e.g. the CPU): overhead is the "
            "whole cost of tpevent's call\n");
    /* Two header lines: which measurement, then which column. */
    fprintf(out, "\n%-23s %-7s %5s %17s  %s\n", "", "", "", "tpevent", "baseline");
    fprintf(out, "%-23s %-7s %5s %8s %8s  %-27s %8s %8s %7s %9s\n", "op", "device", "batch", "median", "p99", "call",
            "median", "p99", "ratio", "overhead");
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        for (size_t d = 0; d < report->device_count; d++) {
            const device_result *device = &report->devices[d];
            const op_result *result = &device->ops[op];
            char ratio_text[24] = "-";
            double ratio = 0.0;
            if (op_ratio(result, &ratio))
                snprintf(ratio_text, sizeof ratio_text, ratio < 0.1 ? "%.4f" : "%.2f", ratio);
            char median[32], p99[32], baseline_median[32], baseline_p99[32], overhead[32];
            format_ns(median, sizeof median, result->tpevent.median_ns);
            format_ns(p99, sizeof p99, result->tpevent.p99_ns);
            format_ns(baseline_median, sizeof baseline_median, result->baseline_summary.median_ns);
            format_ns(baseline_p99, sizeof baseline_p99, result->baseline_summary.p99_ns);
            format_ns(overhead, sizeof overhead, overhead_ns(result));
            /* Rows of one op stay together, so that devices read side by side. */
            fprintf(out, "%-23s %-7s %5u %8s %8s  %-27s %8s %8s %7s %9s\n", d == 0 ? bench_op_label((bench_op)op) : "",
                    device->device, result->batch, median, p99, result->baseline, baseline_median, baseline_p99,
                    ratio_text, overhead);
        }
    }
}

#if TPEVENT_TOOL_HAVE_CJSON

/* Rounded for print: tenths of ns, ratios to 4 decimals. */
static double tenths(double value)
{
    return round(value * 10.0) / 10.0;
}

static void add_summary(json_doc *doc, cJSON *object, const char *median_name, const char *p99_name,
                        const sample_summary *summary)
{
    json_number(doc, object, median_name, tenths(summary->median_ns));
    json_number(doc, object, p99_name, tenths(summary->p99_ns));
}

static cJSON *add_op(json_doc *doc, cJSON *ops, bench_op op, const op_result *result)
{
    cJSON *object = json_append_object(doc, ops);
    json_string(doc, object, "op", bench_op_key(op));
    json_number(doc, object, "batch", result->batch);
    add_summary(doc, object, "median_ns", "p99_ns", &result->tpevent);
    json_string(doc, object, "baseline", result->baseline);
    json_string(doc, object, "baseline_kind", result->baseline_native ? "native" : "host");
    json_number(doc, object, "baseline_batch", result->baseline_batch);
    add_summary(doc, object, "baseline_median_ns", "baseline_p99_ns", &result->baseline_summary);
    double ratio = 0.0;
    if (op_ratio(result, &ratio))
        json_number(doc, object, "ratio", round(ratio * 10000.0) / 10000.0);
    else
        json_null(doc, object, "ratio");
    json_number(doc, object, "overhead_ns", tenths(overhead_ns(result)));
    return object;
}

static void json_ratio_or_null(json_doc *doc, cJSON *object, const char *name, double over, double under)
{
    if (under > 0.0 && isfinite(over))
        json_number(doc, object, name, round(over / under * 10000.0) / 10000.0);
    else
        json_null(doc, object, name);
}

static void json_ns_or_null(json_doc *doc, cJSON *object, const char *name, double ns)
{
    if (isfinite(ns))
        json_number(doc, object, name, tenths(ns));
    else
        json_null(doc, object, name);
}

/* --trace: what the table "tracing's cost" prints for the op (tools/README.md). */
static void add_tracing_cost(json_doc *doc, cJSON *op_object, const op_result *untraced, const op_result *traced,
                             double raw_after_stop_ns)
{
    cJSON *object = json_object(doc, op_object, "tracing");
    double before = untraced->tpevent.median_ns, after = traced->tpevent.median_ns;
    json_number(doc, object, "untraced_median_ns", tenths(before));
    json_number(doc, object, "added_ns", tenths(after - before));
    json_ratio_or_null(doc, object, "ratio", after, before);
    bool raw = untraced->baseline_native && traced->baseline_native;
    double raw_before = raw ? untraced->baseline_summary.median_ns : NAN;
    double raw_traced = raw ? traced->baseline_summary.median_ns : NAN;
    json_ns_or_null(doc, object, "raw_untraced_ns", raw_before);
    json_ns_or_null(doc, object, "raw_traced_ns", raw_traced);
    json_ratio_or_null(doc, object, "raw_ratio", raw_traced, raw_before);
    json_ns_or_null(doc, object, "raw_after_stop_ns", raw ? raw_after_stop_ns : NAN);
}

/* One entry of the saved results (schema tpevent-results/1, docs/measure.md): an op's
 * host latency per call on the device, with the median's interval, so that
 * python -m tpevent.compare reads two runs' ops against each other. */
static void add_result(json_doc *doc, cJSON *results, const char *device, bench_op op, const op_result *result)
{
    const sample_summary *summary = &result->tpevent;
    cJSON *object = json_append_object(doc, results);
    json_string(doc, object, "name", bench_op_key(op));
    json_string(doc, object, "device", device);
    json_string(doc, object, "kind", "host");
    json_number(doc, object, "median_ns", summary->median_ns);
    json_number(doc, object, "median_low_ns", summary->median_low_ns);
    json_number(doc, object, "median_high_ns", summary->median_high_ns);
    json_number(doc, object, "confidence", 0.95);
    json_number(doc, object, "mean_ns", summary->mean_ns);
    json_number(doc, object, "min_ns", summary->min_ns);
    json_number(doc, object, "max_ns", summary->max_ns);
    json_number(doc, object, "stdev_ns", summary->stdev_ns);
    json_number(doc, object, "noise", summary->mean_ns > 0 ? summary->stdev_ns / summary->mean_ns : 0);
    json_number(doc, object, "n", (double)summary->count);
    json_number(doc, object, "calls", (double)summary->count * result->batch);
    json_number(doc, object, "batch", result->batch);
    json_number(doc, object, "p99_ns", summary->p99_ns);
    json_null(doc, object, "floor_ns"); /* host latency: no device floor */
    json_null(doc, object, "sm_clock_mhz");
}

bool report_json(FILE *out, const bench_report *report)
{
    json_doc doc;
    cJSON *root = json_begin(&doc);
    json_string(&doc, root, "schema", "tpevent-results/1");
    json_string(&doc, root, "tpevent_version", report->version);
    json_string(&doc, root, "producer", "tpevent bench");
    json_string(&doc, root, "version", report->version);
    json_add_host(&doc, root, report->host);
    json_number(&doc, root, "iterations", (double)report->iterations);
    json_number(&doc, root, "warmup", (double)report->warmup);

    cJSON *references = json_array(&doc, root, "references");
    for (size_t r = 0; r < REFERENCE_COUNT; r++) {
        cJSON *reference = json_append_object(&doc, references);
        json_string(&doc, reference, "what", report->references[r].what);
        json_number(&doc, reference, "batch", report->references[r].batch);
        add_summary(&doc, reference, "median_ns", "p99_ns", &report->references[r].summary);
    }

    cJSON *devices = json_array(&doc, root, "devices");
    for (size_t d = 0; d < report->device_count; d++) {
        const device_result *device = &report->devices[d];
        cJSON *object = json_append_object(&doc, devices);
        json_string(&doc, object, "device", device->device);
        json_string(&doc, object, "name", device->has_name ? device->name : NULL);
        if (device->timer_resolution_ns > 0.0)
            json_number(&doc, object, "timer_resolution_ns", tenths(device->timer_resolution_ns));
        else
            json_null(&doc, object, "timer_resolution_ns");
        json_add_versions(&doc, object);
        cJSON *ops = json_array(&doc, object, "ops");
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            cJSON *op_object = add_op(&doc, ops, (bench_op)op, &device->ops[op]);
            if (report->untraced)
                add_tracing_cost(&doc, op_object, &report->untraced[d].ops[op], &device->ops[op],
                                 report->raw_after_stop[d * BENCH_OP_COUNT + (size_t)op]);
        }
    }

    cJSON *results = json_array(&doc, root, "results");
    for (size_t d = 0; d < report->device_count; d++) {
        for (int op = 0; op < BENCH_OP_COUNT; op++)
            add_result(&doc, results, report->devices[d].device, (bench_op)op, &report->devices[d].ops[op]);
    }

    cJSON *skipped = json_array(&doc, root, "skipped");
    for (size_t s = 0; s < report->skipped_count; s++) {
        cJSON *object = json_append_object(&doc, skipped);
        json_string(&doc, object, "backend", report->skipped[s].backend);
        json_string(&doc, object, "reason", report->skipped[s].reason);
    }
    return json_end(&doc, out);
}

#else

bool report_json(FILE *out, const bench_report *report)
{
    (void)out;
    (void)report;
    return false; /* refused before anything is measured (tool_json_unavailable) */
}

#endif
