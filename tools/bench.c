/*
 * tpevent bench: per-op latency of tpevent's event calls on each device, next to the
 * raw call underneath measured in the same run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_native_sample: the baseline column */

#include "baseline.h"
#include "measure.h"
#include "report.h"
#include "stats.h"
#include "tool.h"

/* A few seconds in all on the CPU: its record+synchronize and condition-variable
 * round trips cost microseconds each, everything else tens of ns. */
#define BENCH_DEFAULT_ITERATIONS 10000u
#define BENCH_MAX_ITERATIONS 10000000u
#define BENCH_MAX_DEVICES (TP_DEVICE_TYPE_COUNT * TP_MAX_DEVICES)

static const char bench_usage[] =
    "Usage: tpevent bench [--device D]... [--iterations N] [--json]\n";

static const char bench_help[] =
    "\n"
    "Measures the latency (median and 99th percentile, in ns) of each event operation\n"
    "of tpevent on each device, next to the raw call underneath measured in the same\n"
    "run, and the ratio of the two medians. Operations: record (timing off), record\n"
    "(timing on), query (completed), synchronize (completed), stream wait, elapsed\n"
    "time, create + destroy, and a record + synchronize round trip.\n"
    "\n"
    "Baselines: on CUDA and HIP the runtime's own call (cudaEventRecord, ...), timed\n"
    "by the backend (tp_native_sample). On the CPU, which has no runtime underneath,\n"
    "clock_gettime(CLOCK_MONOTONIC) for every op and, for the round trip, a pthread\n"
    "condition-variable ping-pong between two threads.\n"
    "\n"
    "Options:\n"
    "  -d, --device D      benchmark device D (cpu, cuda:1, hip:0, ...); repeat for more;\n"
    "                      default: every device of every available backend\n"
    "  -n, --iterations N  timed calls per op and per baseline, 1..10000000\n"
    "                      (default 10000)\n"
    "      --json          print one JSON object instead of the table:\n"
    "                      {\"version\", \"iterations\", \"warmup\", \"devices\": [{\"device\",\n"
    "                      \"name\", \"ops\": [{\"op\", \"median_ns\", \"p99_ns\", \"baseline\",\n"
    "                      \"baseline_kind\", \"baseline_median_ns\", \"baseline_p99_ns\",\n"
    "                      \"ratio\"}]}]}; the fields are described in tools/README.md\n"
    "  -h, --help          show this help\n"
    "\n"
    "While it runs, a progress line goes to stderr when stdout is a terminal.\n"
    "Exit status: 0 on success, 1 on a backend error, 2 on a usage error.\n";

typedef struct bench_options {
    const char *devices[BENCH_MAX_DEVICES];
    size_t device_count;
    size_t iterations;
    bool json;
} bench_options;

/* Strict: decimal digits only, in 1..BENCH_MAX_ITERATIONS. */
static bool parse_iterations(const char *text, size_t *iterations)
{
    size_t value = 0;
    if (text[0] == '\0')
        return false;
    for (const char *c = text; *c != '\0'; c++) {
        if (*c < '0' || *c > '9')
            return false;
        value = value * 10 + (size_t)(*c - '0');
        if (value > BENCH_MAX_ITERATIONS)
            return false;
    }
    if (value == 0)
        return false;
    *iterations = value;
    return true;
}

/* Returns TOOL_EXIT_OK, or the exit code of a usage error already reported. */
static int parse_bench_options(int argc, char **argv, bench_options *options, bool *help)
{
    for (int i = 1; i < argc;) {
        const char *value = NULL;
        if (tool_is_help_option(argv[i])) {
            *help = true;
            return TOOL_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) {
            options->json = true;
            i++;
        } else if (tool_match_option(argc, argv, &i, "--device", &value) ||
                   tool_match_option(argc, argv, &i, "-d", &value)) {
            if (value == NULL)
                return tool_usage_error("bench", bench_usage, "--device needs a value");
            tp_device parsed;
            if (tp_device_parse(value, &parsed) != TP_OK)
                return tool_usage_error("bench", bench_usage, "bad device '%s': %s", value,
                                        tp_last_error());
            if (options->device_count == BENCH_MAX_DEVICES)
                return tool_usage_error("bench", bench_usage, "more than %d devices",
                                        BENCH_MAX_DEVICES);
            options->devices[options->device_count++] = value;
        } else if (tool_match_option(argc, argv, &i, "--iterations", &value) ||
                   tool_match_option(argc, argv, &i, "-n", &value)) {
            if (value == NULL)
                return tool_usage_error("bench", bench_usage, "--iterations needs a value");
            if (!parse_iterations(value, &options->iterations))
                return tool_usage_error("bench", bench_usage,
                                        "bad iteration count '%s' (want 1..%u)", value,
                                        BENCH_MAX_ITERATIONS);
        } else if (argv[i][0] == '-') {
            return tool_usage_error("bench", bench_usage, "unknown option '%s'", argv[i]);
        } else {
            return tool_usage_error("bench", bench_usage, "unexpected argument '%s'", argv[i]);
        }
    }
    return TOOL_EXIT_OK;
}

/* Every device of every available backend, cpu first. */
static bool open_default_targets(bench_target *targets, size_t *count)
{
    static const tp_device_type order[] = {TP_DEVICE_CPU, TP_DEVICE_CUDA, TP_DEVICE_HIP};
    *count = 0;
    for (size_t t = 0; t < sizeof order / sizeof order[0]; t++) {
        const char *type = tp_device_type_name(order[t]);
        int devices = 0;
        if (tp_backend_status(type, NULL) != TP_OK)
            continue;
        if (tp_device_count(type, &devices) != TP_OK) {
            fprintf(stderr, "tpevent bench: %s: %s\n", type, tp_last_error());
            return false;
        }
        for (int index = 0; index < devices && *count < BENCH_MAX_DEVICES; index++) {
            char device[TP_DEVICE_STRING_MAX];
            snprintf(device, sizeof device, "%s:%d", type, index);
            if (!bench_target_open(&targets[*count], device)) {
                fprintf(stderr, "tpevent bench: %s\n", targets[*count].error);
                return false;
            }
            ++*count;
        }
    }
    if (*count == 0) {
        fprintf(stderr, "tpevent bench: no backend is available\n");
        return false;
    }
    return true;
}

/* The devices asked for, each once: "cpu" and "cpu:0" are the same device. */
static bool open_chosen_targets(const bench_options *options, bench_target *targets,
                                size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < options->device_count; i++) {
        bench_target *target = &targets[*count];
        if (!bench_target_open(target, options->devices[i])) {
            fprintf(stderr, "tpevent bench: %s\n", target->error);
            return false;
        }
        bool seen = false;
        for (size_t j = 0; j < *count; j++)
            seen = seen || strcmp(targets[j].device, target->device) == 0;
        if (seen)
            bench_target_close(target);
        else
            ++*count;
    }
    return true;
}

typedef struct bench_run {
    size_t iterations;
    size_t warmup;
    uint64_t *samples;             /* iterations of them, reused by every measurement */
    baseline_ping_pong *ping_pong; /* started on first use */
    bool show_progress;
    size_t steps_done;
    size_t step_count;
} bench_run;

static void show_progress(bench_run *run, const bench_target *target, bench_op op)
{
    if (!run->show_progress)
        return;
    run->steps_done++;
    fprintf(stderr, "\rtpevent bench: [%zu/%zu] %-8s %-24s", run->steps_done, run->step_count,
            target->device, bench_op_label(op));
    fflush(stderr);
}

static void clear_progress(const bench_run *run)
{
    if (run->show_progress)
        fprintf(stderr, "\r%72s\r", "");
}

/* The host's floor for an op of a backend with no runtime underneath. */
static bool sample_host_baseline(bench_run *run, bench_op op, op_result *result)
{
    if (op == BENCH_RECORD_SYNCHRONIZE) {
        if (run->ping_pong == NULL)
            run->ping_pong = baseline_ping_pong_start();
        if (run->ping_pong == NULL) {
            fprintf(stderr, "tpevent bench: cannot start a thread: %s\n", strerror(errno));
            return false;
        }
        baseline_ping_pong_sample(run->ping_pong, run->samples, run->warmup);
        baseline_ping_pong_sample(run->ping_pong, run->samples, run->iterations);
        snprintf(result->baseline, sizeof result->baseline, "pthread_cond_round_trip");
    } else {
        baseline_sample_clock(run->samples, run->warmup);
        baseline_sample_clock(run->samples, run->iterations);
        snprintf(result->baseline, sizeof result->baseline, "clock_gettime");
    }
    result->baseline_native = false;
    result->baseline_summary = summarize_samples(run->samples, run->iterations);
    return true;
}

static bool sample_baseline(bench_run *run, const bench_target *target, bench_op op,
                            op_result *result)
{
    tp_native_op native = bench_op_native(op);
    tp_status status = tp_native_sample(target->device, native, run->samples, run->warmup);
    if (status == TP_OK)
        status = tp_native_sample(target->device, native, run->samples, run->iterations);
    if (status == TP_ERR_UNSUPPORTED)
        return sample_host_baseline(run, op, result);
    if (status != TP_OK) {
        fprintf(stderr, "tpevent bench: %s: tp_native_sample: %s (%s)\n", target->device,
                tp_last_error(), tp_status_name(status));
        return false;
    }
    snprintf(result->baseline, sizeof result->baseline, "%s%s",
             tp_device_type_name(target->type), bench_op_native_call(op));
    result->baseline_native = true;
    result->baseline_summary = summarize_samples(run->samples, run->iterations);
    return true;
}

static bool bench_device(bench_run *run, bench_target *target, device_result *result)
{
    memset(result, 0, sizeof *result);
    snprintf(result->device, sizeof result->device, "%s", target->device);
    /* A backend without names is no reason to stop the run: JSON null, table "-". */
    result->has_name = tp_device_name(target->device, result->name, sizeof result->name) == TP_OK;
    for (int op = 0; op < BENCH_OP_COUNT; op++) {
        show_progress(run, target, (bench_op)op);
        if (!bench_target_sample(target, (bench_op)op, run->samples, run->iterations,
                                 run->warmup)) {
            clear_progress(run);
            fprintf(stderr, "tpevent bench: %s\n", target->error);
            return false;
        }
        result->ops[op].tpevent = summarize_samples(run->samples, run->iterations);
        if (!sample_baseline(run, target, (bench_op)op, &result->ops[op])) {
            clear_progress(run);
            return false;
        }
    }
    return true;
}

static int run_bench(const bench_options *options, bench_target *targets, size_t target_count)
{
    device_result *results = calloc(target_count, sizeof *results);
    bench_run run = {
        .iterations = options->iterations,
        /* Enough to fault in pools and wake the workers, never more than the run. */
        .warmup = options->iterations / 10 > 10 ? options->iterations / 10 : 10,
        .samples = calloc(options->iterations, sizeof(uint64_t)),
        .show_progress = isatty(STDOUT_FILENO) == 1,
        .step_count = target_count * BENCH_OP_COUNT,
    };
    if (run.warmup > run.iterations)
        run.warmup = run.iterations;
    if (results == NULL || run.samples == NULL) {
        fprintf(stderr, "tpevent bench: out of memory for %zu samples\n", options->iterations);
        free(results);
        free(run.samples);
        return TOOL_EXIT_FAILURE;
    }

    bool measured = true;
    for (size_t t = 0; t < target_count && measured; t++)
        measured = bench_device(&run, &targets[t], &results[t]);
    clear_progress(&run);
    baseline_ping_pong_stop(run.ping_pong);

    if (measured) {
        bench_report report = {
            .version = tp_version_string(),
            .iterations = run.iterations,
            .warmup = run.warmup,
            .devices = results,
            .device_count = target_count,
        };
        if (options->json)
            report_json(stdout, &report);
        else
            report_table(stdout, &report);
    }
    free(results);
    free(run.samples);
    return measured ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}

int tool_bench_main(int argc, char **argv)
{
    bench_options options = {.iterations = BENCH_DEFAULT_ITERATIONS};
    bool help = false;
    int exit_code = parse_bench_options(argc, argv, &options, &help);
    if (exit_code != TOOL_EXIT_OK)
        return exit_code;
    if (help) {
        fputs(bench_usage, stdout);
        fputs(bench_help, stdout);
        return TOOL_EXIT_OK;
    }

    bench_target *targets = calloc(BENCH_MAX_DEVICES, sizeof *targets);
    if (targets == NULL) {
        fprintf(stderr, "tpevent bench: out of memory\n");
        return TOOL_EXIT_FAILURE;
    }
    /* Every device is opened before anything is timed, so that a device that cannot
     * be used fails the run at once. */
    size_t target_count = 0;
    bool opened = options.device_count > 0
                      ? open_chosen_targets(&options, targets, &target_count)
                      : open_default_targets(targets, &target_count);
    if (opened)
        exit_code = run_bench(&options, targets, target_count);
    else
        exit_code = TOOL_EXIT_FAILURE;
    for (size_t t = 0; t < target_count; t++)
        bench_target_close(&targets[t]);
    free(targets);
    return exit_code;
}
