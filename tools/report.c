#include "report.h"

#include <inttypes.h>

/* tpevent median / baseline median; false when the baseline measured 0. */
static bool ratio_of(const op_result *result, double *ratio)
{
    if (result->baseline_summary.median_ns == 0)
        return false;
    *ratio = (double)result->tpevent.median_ns / (double)result->baseline_summary.median_ns;
    return true;
}

void report_table(FILE *out, const bench_report *report)
{
    fprintf(out, "tpevent %s bench: %zu timed calls per op after %zu warm-up calls\n",
            report->version, report->iterations, report->warmup);
    fprintf(out, "latency in ns; ratio = tpevent median / baseline median\n\n");
    for (size_t d = 0; d < report->device_count; d++) {
        const device_result *device = &report->devices[d];
        fprintf(out, "  %-8s %s\n", device->device, device->has_name ? device->name : "-");
    }

    /* Two header lines: which measurement, then which column. */
    fprintf(out, "\n%-23s %-7s %17s  %s\n", "", "", "tpevent", "baseline");
    fprintf(out, "%-23s %-7s %8s %8s  %-27s %8s %8s %7s\n", "op", "device", "median", "p99",
            "call", "median", "p99", "ratio");
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        for (size_t d = 0; d < report->device_count; d++) {
            const device_result *device = &report->devices[d];
            const op_result *result = &device->ops[op];
            char ratio_text[24] = "-";
            double ratio = 0.0;
            if (ratio_of(result, &ratio))
                snprintf(ratio_text, sizeof ratio_text, ratio < 0.1 ? "%.4f" : "%.2f", ratio);
            /* Rows of one op stay together, so that devices read side by side. */
            fprintf(out, "%-23s %-7s %8" PRIu64 " %8" PRIu64 "  %-27s %8" PRIu64 " %8" PRIu64
                         " %7s\n",
                    d == 0 ? bench_op_label((bench_op)op) : "", device->device,
                    result->tpevent.median_ns, result->tpevent.p99_ns, result->baseline,
                    result->baseline_summary.median_ns, result->baseline_summary.p99_ns,
                    ratio_text);
        }
    }
}

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void json_op(FILE *out, bench_op op, const op_result *result)
{
    fprintf(out, "{\"op\":");
    json_string(out, bench_op_key(op));
    fprintf(out, ",\"median_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"baseline\":",
            result->tpevent.median_ns, result->tpevent.p99_ns);
    json_string(out, result->baseline);
    fprintf(out,
            ",\"baseline_kind\":\"%s\",\"baseline_median_ns\":%" PRIu64
            ",\"baseline_p99_ns\":%" PRIu64 ",\"ratio\":",
            result->baseline_native ? "native" : "host", result->baseline_summary.median_ns,
            result->baseline_summary.p99_ns);
    double ratio = 0.0;
    if (ratio_of(result, &ratio))
        fprintf(out, "%.4f}", ratio);
    else
        fprintf(out, "null}");
}

void report_json(FILE *out, const bench_report *report)
{
    fprintf(out, "{\"version\":");
    json_string(out, report->version);
    fprintf(out, ",\"iterations\":%zu,\"warmup\":%zu,\"devices\":[", report->iterations,
            report->warmup);
    for (size_t d = 0; d < report->device_count; d++) {
        const device_result *device = &report->devices[d];
        fprintf(out, "%s{\"device\":", d == 0 ? "" : ",");
        json_string(out, device->device);
        fprintf(out, ",\"name\":");
        if (device->has_name)
            json_string(out, device->name);
        else
            fprintf(out, "null");
        fprintf(out, ",\"ops\":[");
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            fprintf(out, "%s", op == 0 ? "" : ",");
            json_op(out, (bench_op)op, &device->ops[op]);
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]}\n");
}
