/*
 * tpevent bench: per-op latency of tpevent's event calls on each device, next to the
 * raw call underneath measured in the same run; the backends it did not run, and why.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_native_sample: the baseline column */

#include "baseline.h"
#include "host.h"
#include "json.h"
#include "measure.h"
#include "report.h"
#include "stats.h"
#include "tool.h"

/* A few seconds in all on the CPU: its record+synchronize and condition-variable
 * round trips cost microseconds each, everything else tens of ns. */
#define BENCH_DEFAULT_ITERATIONS 10000u
#define BENCH_MAX_ITERATIONS 10000000u
#define BENCH_MAX_DEVICES (TP_DEVICE_TYPE_COUNT * TP_MAX_DEVICES)

/* Calls under BATCH_BELOW_NS are timed BATCH_SPAN_NS at a time (at most BATCH_MAX
 * calls per sample), so that the clock's step and the cost of reading it are spread
 * over the batch; the pilot that decides is PILOT_SAMPLES single calls. */
#define BATCH_BELOW_NS 100.0
#define BATCH_SPAN_NS 2000.0
#define BATCH_MAX 1024u
#define PILOT_SAMPLES 201
/* Tries of the timer resolution, as `tpevent devices` makes them. */
#define RESOLUTION_TRIES 1000

static const char bench_usage[] = "Usage: tpevent bench [--device D]... [--iterations N] [--json] [--trace FILE]\n";

static const char bench_help[] =
    "\n"
    "Measures the latency per call (median and 99th percentile, in ns) of each event\n"
    "operation of tpevent on each device, next to a baseline measured in the same run.\n"
    "Operations: record (timing off), record (timing on), query (completed),\n"
    "synchronize (completed), stream wait, elapsed time, create + destroy, and a\n"
    "record + synchronize round trip.\n"
    "\n"
    "Baselines: on CUDA and HIP the runtime's own call (cudaEventRecord, ...), timed\n"
    "by the backend one call per sample (tp_native_sample); ratio = tpevent's median\n"
    "over the runtime's. On the CPU, which has no runtime underneath, an empty function\n"
    "call timed the same way (empty_call): overhead = tpevent's median minus the\n"
    "baseline's is then what tpevent's call costs. Calls under 100 ns are timed in\n"
    "batches (the batch column) where the tool times both sides.\n"
    "For scale, the host's clock_gettime(CLOCK_MONOTONIC) and a round trip to another\n"
    "thread through a condition variable. Backends that are not run are listed with\n"
    "the reason.\n"
    "\n"
    "Options:\n"
    "  -d, --device D      benchmark device D (cpu, cuda:1, hip:0, ...); repeat for more;\n"
    "                      default: every device of every available backend\n"
    "  -n, --iterations N  timed samples per op and per baseline, 1..10000000\n"
    "                      (default 10000)\n"
    "      --json          print one JSON object instead of the table: the version, the\n"
    "                      host, the references, per device its name, timer resolution\n"
    "                      and ops, and the backends skipped with the reason; the\n"
    "                      fields are described in tools/README.md%s\n"
    "      --trace FILE    also write the run's own timeline to FILE (Chrome trace JSON:\n"
    "                      Perfetto, chrome://tracing, python -m tpevent.timeline): a\n"
    "                      range per device and one per op's measured samples on the\n"
    "                      device's stream. Every op is then measured twice, untraced\n"
    "                      first and then with the trace running; the table and JSON\n"
    "                      give the traced run (each record also records a mark, each\n"
    "                      wait a flow), and a second table, tracing's cost, gives\n"
    "                      both runs side by side with the raw calls of each (to stderr\n"
    "                      with --json, where each op also gets them as \"tracing\");\n"
    "                      tpevent_bench_trace measures the same with\n"
    "                      the two interleaved\n"
    "  -h, --help          show this help\n"
    "\n"
    "While it runs, a progress line goes to stderr when stdout is a terminal.\n"
    "Exit status: 0 on success, 1 on a backend error or when the output cannot be\n"
    "written, 2 on a usage error.\n";

typedef struct bench_options {
    const char *devices[BENCH_MAX_DEVICES];
    size_t device_count;
    size_t iterations;
    bool json;
    const char *trace; /* --trace FILE, or NULL */
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

/* Why tp_trace_stop could not write `path` at the end of the run, found before
 * the run: its folder missing, not a folder or not writable, or the path a folder,
 * a socket or a block device. A FIFO or a character device (or a link to one, as
 * /dev/stdout) is written into, its folder untouched. NULL when it looks writable. */
static const char *trace_path_problem(const char *path, char *why, size_t why_size)
{
    struct stat st;
    if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
        return NULL;
    if (lstat(path, &st) == 0 && (S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode))) {
        snprintf(why, why_size, "cannot write '%s': it is a %s", path,
                 S_ISSOCK(st.st_mode) ? "socket" : "block device");
        return why;
    }
    const char *slash = strrchr(path, '/');
    char folder[4096];
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else
        snprintf(folder, sizeof folder, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    const char *problem = NULL;
    if (stat(folder, &st) != 0)
        problem = errno == ENOENT ? "does not exist" : strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        problem = "is not a folder";
    else if (access(folder, W_OK | X_OK) != 0)
        problem = strerror(errno);
    if (problem) {
        snprintf(why, why_size, "cannot write '%s': its folder '%s' %s", path, folder, problem);
        return why;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "cannot write '%s': it is a folder", path);
        return why;
    }
    return NULL;
}

/* Returns TOOL_EXIT_OK, or the exit code of a usage error already reported. */
static int parse_bench_options(int argc, char **argv, bench_options *options, bool *help)
{
    static const struct option long_options[] = {
        {"device", required_argument, NULL, 'd'}, {"iterations", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},         {"trace", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    tool_getopt_begin();
    int answer;
    while ((answer = getopt_long(argc, argv, ":d:n:h", long_options, NULL)) != -1) {
        switch (answer) {
        case 'h':
            *help = true;
            return TOOL_EXIT_OK;
        case 'j':
            options->json = true;
            break;
        case 't':
            options->trace = optarg;
            break;
        case 'd': {
            tp_device parsed;
            if (tp_device_parse(optarg, &parsed) != TP_OK)
                return tool_usage_error("bench", bench_usage, "bad device '%s': %s", optarg, tp_last_error());
            if (options->device_count == BENCH_MAX_DEVICES)
                return tool_usage_error("bench", bench_usage, "more than %d devices", BENCH_MAX_DEVICES);
            options->devices[options->device_count++] = optarg;
            break;
        }
        case 'n':
            if (!parse_iterations(optarg, &options->iterations))
                return tool_usage_error("bench", bench_usage, "bad iteration count '%s' (want 1..%u)", optarg,
                                        BENCH_MAX_ITERATIONS);
            break;
        default:
            return tool_getopt_error("bench", bench_usage, answer, argv, long_options);
        }
    }
    if (optind < argc)
        return tool_usage_error("bench", bench_usage, "unexpected argument '%s'", argv[optind]);
    char why[4200];
    if (options->trace && trace_path_problem(options->trace, why, sizeof why))
        return tool_usage_error("bench", bench_usage, "--trace: %s", why);
    return TOOL_EXIT_OK;
}

typedef struct bench_plan {
    bench_target *targets; /* BENCH_MAX_DEVICES of them */
    size_t target_count;
    skipped_backend skipped[TP_DEVICE_TYPE_COUNT];
    size_t skipped_count;
} bench_plan;

/* The reason is `what` followed by `detail`. */
static void skip_backend(bench_plan *plan, tp_device_type type, const char *what, const char *detail)
{
    skipped_backend *skipped = &plan->skipped[plan->skipped_count++];
    skipped->backend = tp_device_type_name(type);
    snprintf(skipped->reason, sizeof skipped->reason, "%s%s", what, detail);
}

/* Every device of every available backend, by tp_device_type (cpu first); the others
 * are skipped with the library's reason. */
static bool open_default_targets(bench_plan *plan)
{
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        const char *type = tp_device_type_name((tp_device_type)t);
        tp_backend_info info;
        if (tp_backend_get_info(type, &info) != TP_OK) {
            fprintf(stderr, "tpevent bench: %s: %s\n", type, tp_last_error());
            return false;
        }
        if (info.status != TP_OK) {
            skip_backend(plan, (tp_device_type)t, "unavailable: ",
                         info.reason != NULL && info.reason[0] != '\0' ? info.reason : "(no reason given)");
            continue;
        }
        if (info.device_count <= 0) {
            skip_backend(plan, (tp_device_type)t, "available, but it has no device", "");
            continue;
        }
        for (int index = 0; index < info.device_count && plan->target_count < BENCH_MAX_DEVICES; index++) {
            char device[TP_DEVICE_STRING_MAX];
            snprintf(device, sizeof device, "%s:%d", type, index);
            bench_target *target = &plan->targets[plan->target_count];
            if (!bench_target_open(target, device)) {
                fprintf(stderr, "tpevent bench: %s\n", target->error);
                return false;
            }
            plan->target_count++;
        }
    }
    if (plan->target_count == 0) {
        fprintf(stderr, "tpevent bench: no backend is available\n");
        for (size_t s = 0; s < plan->skipped_count; s++)
            fprintf(stderr, "  %s: %s\n", plan->skipped[s].backend, plan->skipped[s].reason);
        return false;
    }
    return true;
}

/* The devices asked for, each once: "cpu" and "cpu:0" are the same device. The
 * backends none of them is of are skipped, without being loaded. */
static bool open_chosen_targets(const bench_options *options, bench_plan *plan)
{
    bool asked[TP_DEVICE_TYPE_COUNT] = {false};
    for (size_t i = 0; i < options->device_count; i++) {
        bench_target *target = &plan->targets[plan->target_count];
        if (!bench_target_open(target, options->devices[i])) {
            fprintf(stderr, "tpevent bench: %s\n", target->error);
            return false;
        }
        asked[target->type] = true;
        bool seen = false;
        for (size_t j = 0; j < plan->target_count; j++)
            seen = seen || strcmp(plan->targets[j].device, target->device) == 0;
        if (seen)
            bench_target_close(target);
        else
            plan->target_count++;
    }
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++) {
        if (!asked[type])
            skip_backend(plan, (tp_device_type)type, "not asked for (--device)", "");
    }
    return true;
}

typedef struct bench_run {
    size_t iterations;
    size_t warmup;
    double *samples;          /* iterations of them, reused by every measurement */
    uint64_t *native_samples; /* the same, for tp_native_sample */
    double call_floor_ns;     /* an empty call timed alone: a clock read and the call */
    bool show_progress;
    size_t steps_done;
    size_t step_count;
} bench_run;

static void show_progress(bench_run *run, const char *device, const char *what)
{
    if (!run->show_progress)
        return;
    run->steps_done++;
    fprintf(stderr, "\rtpevent bench: [%zu/%zu] %-8s %-24s", run->steps_done, run->step_count, device, what);
    fflush(stderr);
}

static void clear_progress(const bench_run *run)
{
    if (run->show_progress)
        fprintf(stderr, "\r%72s\r", "");
}

static double median_of(double *samples, size_t count)
{
    return summarize_samples(samples, count).median_ns;
}

/* How many calls of `op` one sample times, when the tool times both sides: a pilot
 * of single calls, less what timing an empty call costs, decides. */
static bool choose_batch(bench_run *run, bench_target *target, bench_op op, unsigned *batch)
{
    double pilot[PILOT_SAMPLES];
    if (!bench_target_sample(target, op, pilot, PILOT_SAMPLES, PILOT_SAMPLES / 4, 1))
        return false;
    double cost = median_of(pilot, PILOT_SAMPLES) - run->call_floor_ns;
    if (cost >= BATCH_BELOW_NS) {
        *batch = 1;
        return true;
    }
    double calls = ceil(BATCH_SPAN_NS / (cost > 1.0 ? cost : 1.0));
    *batch = calls < 2.0 ? 2u : calls > BATCH_MAX ? BATCH_MAX : (unsigned)calls;
    return true;
}

static bool bench_op_on(bench_run *run, bench_target *target, bench_op op, op_result *result)
{
    /* The runtime's own call where the backend has one (its warm-up tells); it is
     * timed one call per sample, so tpevent's call is too, alike. */
    tp_native_op native = bench_op_native(op);
    tp_status status = tp_native_sample(target->device, native, run->native_samples, run->warmup);
    result->baseline_native = status == TP_OK;
    if (status != TP_OK && status != TP_ERR_UNSUPPORTED) {
        fprintf(stderr, "tpevent bench: %s: tp_native_sample: %s (%s)\n", target->device, tp_last_error(),
                tp_status_name(status));
        return false;
    }
    result->batch = 1;
    if (!result->baseline_native && !choose_batch(run, target, op, &result->batch)) {
        fprintf(stderr, "tpevent bench: %s\n", target->error);
        return false;
    }
    /* The op's measured samples, as a range on the device's stream (--trace). */
    (void)tp_range_push(target->stream, bench_op_label(op));
    bool sampled = bench_target_sample(target, op, run->samples, run->iterations, run->warmup, result->batch);
    (void)tp_range_pop(target->stream);
    if (!sampled) {
        fprintf(stderr, "tpevent bench: %s\n", target->error);
        return false;
    }
    result->tpevent = summarize_samples(run->samples, run->iterations);

    if (result->baseline_native) {
        status = tp_native_sample(target->device, native, run->native_samples, run->iterations);
        if (status != TP_OK) {
            fprintf(stderr, "tpevent bench: %s: tp_native_sample: %s (%s)\n", target->device, tp_last_error(),
                    tp_status_name(status));
            return false;
        }
        for (size_t i = 0; i < run->iterations; i++)
            run->samples[i] = (double)run->native_samples[i];
        snprintf(result->baseline, sizeof result->baseline, "%s%s", tp_device_type_name(target->type),
                 bench_op_native_call(op));
        result->baseline_batch = 1;
    } else {
        baseline_sample_empty(run->samples, run->warmup, result->batch);
        baseline_sample_empty(run->samples, run->iterations, result->batch);
        snprintf(result->baseline, sizeof result->baseline, "empty_call");
        result->baseline_batch = result->batch;
    }
    result->baseline_summary = summarize_samples(run->samples, run->iterations);
    return true;
}

static bool bench_device(bench_run *run, bench_target *target, device_result *result)
{
    memset(result, 0, sizeof *result);
    snprintf(result->device, sizeof result->device, "%s", target->device);
    /* A backend without names is no reason to stop the run: JSON null, table "-". */
    result->has_name = tp_device_name(target->device, result->name, sizeof result->name) == TP_OK;
    show_progress(run, target->device, "timer resolution");
    char error[TOOL_ERROR_SIZE];
    if (!measure_timer_resolution(target->device, RESOLUTION_TRIES, &result->timer_resolution_ns, error,
                                  sizeof error)) {
        clear_progress(run);
        fprintf(stderr, "tpevent bench: %s\n", error);
        return false;
    }
    (void)tp_range_push(target->stream, target->device);
    bool ok = true;
    for (int op = 0; op < BENCH_OP_COUNT && ok; op++) {
        show_progress(run, target->device, bench_op_label((bench_op)op));
        ok = bench_op_on(run, target, (bench_op)op, &result->ops[op]);
    }
    (void)tp_range_pop(target->stream);
    if (!ok)
        clear_progress(run);
    return ok;
}

/* --trace (issue 52): each op untraced and traced, and the raw call beside it in the
 * same two runs, which shows both what a traced op costs and whether anything of the
 * trace slows the runtime's own calls. The runs follow each other (the untraced one
 * first), so drift between them, and what the run did before (thousands of records
 * queued by each op), count too: the raw call is timed once more after the trace
 * stopped (after_stop, ns per call, per device and op), and bench/trace interleaves
 * traced and untraced phases, with a place after such a burst. */
static void report_trace_cost(FILE *out, const device_result *untraced, const device_result *traced,
                              const double *after_stop, size_t count)
{
    fprintf(out,
            "\ntracing's cost (--trace): each op untraced, then traced; the raw call in the same two runs, "
            "and once more after the trace stopped\n");
    for (size_t d = 0; d < count; d++) {
        fprintf(out, "%s\n  %-24s %11s %11s %9s %7s   %-32s %11s %11s %7s %11s\n", traced[d].device, "op",
                "untraced ns", "traced ns", "+ns", "ratio", "raw call", "untraced ns", "traced ns", "ratio",
                "after stop");
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            const op_result *u = &untraced[d].ops[op], *t = &traced[d].ops[op];
            double a = u->tpevent.median_ns, b = t->tpevent.median_ns;
            fprintf(out, "  %-24s %11.1f %11.1f %9.1f %7.3f", bench_op_label((bench_op)op), a, b, b - a,
                    a > 0 ? b / a : NAN);
            if (u->baseline_native && t->baseline_native) {
                double ra = u->baseline_summary.median_ns, rb = t->baseline_summary.median_ns;
                fprintf(out, "   %-32s %11.1f %11.1f %7.3f %11.1f\n", t->baseline, ra, rb, ra > 0 ? rb / ra : NAN,
                        after_stop[d * BENCH_OP_COUNT + (size_t)op]);
            } else {
                fprintf(out, "   (no runtime underneath)\n");
            }
        }
    }
}

/* The raw calls once more, the trace stopped (report_trace_cost); NAN where none. */
static void sample_raw_after_stop(bench_run *run, const bench_plan *plan, double *after_stop)
{
    for (size_t d = 0; d < plan->target_count; d++)
        for (int op = 0; op < BENCH_OP_COUNT; op++) {
            tp_native_op native = bench_op_native((bench_op)op);
            double *median = &after_stop[d * BENCH_OP_COUNT + (size_t)op];
            *median = NAN;
            if (tp_native_sample(plan->targets[d].device, native, run->native_samples, run->iterations) != TP_OK)
                continue; /* no runtime underneath: nothing to compare */
            for (size_t i = 0; i < run->iterations; i++)
                run->samples[i] = (double)run->native_samples[i];
            *median = median_of(run->samples, run->iterations);
        }
}

/* The host measurements given for scale. */
static bool measure_references(bench_run *run, reference_result *references)
{
    show_progress(run, "host", "clock_gettime");
    double pilot[PILOT_SAMPLES];
    baseline_sample_clock(pilot, PILOT_SAMPLES, 1);
    double cost = median_of(pilot, PILOT_SAMPLES);
    unsigned batch = cost >= BATCH_BELOW_NS ? 1u : (unsigned)ceil(BATCH_SPAN_NS / (cost > 1.0 ? cost : 1.0));
    baseline_sample_clock(run->samples, run->warmup, batch);
    baseline_sample_clock(run->samples, run->iterations, batch);
    references[0] = (reference_result){
        .what = "clock_gettime",
        .batch = batch,
        .summary = summarize_samples(run->samples, run->iterations),
    };

    show_progress(run, "host", "thread round trip");
    baseline_ping_pong *ping_pong = baseline_ping_pong_start();
    if (ping_pong == NULL) {
        clear_progress(run);
        fprintf(stderr, "tpevent bench: cannot start a thread: %s\n", strerror(errno));
        return false;
    }
    baseline_ping_pong_sample(ping_pong, run->samples, run->warmup);
    baseline_ping_pong_sample(ping_pong, run->samples, run->iterations);
    baseline_ping_pong_stop(ping_pong);
    references[1] = (reference_result){
        .what = "pthread_cond_round_trip",
        .batch = 1,
        .summary = summarize_samples(run->samples, run->iterations),
    };
    return true;
}

static int run_bench(const bench_options *options, const bench_plan *plan)
{
    device_result *results = calloc(plan->target_count, sizeof *results);
    device_result *untraced = options->trace ? calloc(plan->target_count, sizeof *untraced) : NULL;
    double *after_stop = options->trace ? calloc(plan->target_count * BENCH_OP_COUNT, sizeof *after_stop) : NULL;
    bench_run run = {
        .iterations = options->iterations,
        /* Enough to fault in pools and wake the workers, never more than the run. */
        .warmup = options->iterations / 10 > 10 ? options->iterations / 10 : 10,
        .samples = calloc(options->iterations > PILOT_SAMPLES ? options->iterations : PILOT_SAMPLES, sizeof(double)),
        .native_samples = calloc(options->iterations, sizeof(uint64_t)),
        .show_progress = isatty(STDOUT_FILENO) == 1,
        .step_count = 2 + plan->target_count * (BENCH_OP_COUNT + 1) * (options->trace ? 2 : 1),
    };
    if (run.warmup > run.iterations)
        run.warmup = run.iterations;
    if (results == NULL || run.samples == NULL || run.native_samples == NULL ||
        (options->trace && (!untraced || !after_stop))) {
        fprintf(stderr, "tpevent bench: out of memory for %zu samples\n", options->iterations);
        free(results);
        free(untraced);
        free(after_stop);
        free(run.samples);
        free(run.native_samples);
        return TOOL_EXIT_FAILURE;
    }
    baseline_sample_empty(run.samples, PILOT_SAMPLES, 1);
    run.call_floor_ns = median_of(run.samples, PILOT_SAMPLES);

    reference_result references[REFERENCE_COUNT];
    bool measured = measure_references(&run, references);
    for (size_t t = 0; t < plan->target_count && measured && untraced; t++)
        measured = bench_device(&run, &plan->targets[t], &untraced[t]);
    if (measured && options->trace && tp_trace_start() != TP_OK) {
        fprintf(stderr, "tpevent bench: --trace: %s\n", tp_last_error());
        measured = false;
    }
    for (size_t t = 0; t < plan->target_count && measured; t++)
        measured = bench_device(&run, &plan->targets[t], &results[t]);
    clear_progress(&run);
    if (options->trace && tp_trace_stop(options->trace) != TP_OK && measured) {
        fprintf(stderr, "tpevent bench: --trace: %s\n", tp_last_error());
        measured = false;
    }
    if (measured && options->trace)
        sample_raw_after_stop(&run, plan, after_stop);

    int exit_code = measured ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
    if (measured) {
        host_info host;
        host_info_get(&host);
        bench_report report = {
            .version = tp_version_string(),
            .iterations = run.iterations,
            .warmup = run.warmup,
            .host = &host,
            .references = references,
            .devices = results,
            .device_count = plan->target_count,
            .skipped = plan->skipped,
            .skipped_count = plan->skipped_count,
            .untraced = untraced,
            .raw_after_stop = untraced ? after_stop : NULL,
        };
        if (!options->json) {
            report_table(stdout, &report);
        } else if (!report_json(stdout, &report)) {
            fprintf(stderr, "tpevent bench: out of memory for the JSON output\n");
            exit_code = TOOL_EXIT_FAILURE;
        }
        if (untraced)
            report_trace_cost(options->json ? stderr : stdout, untraced, results, after_stop, plan->target_count);
    }
    free(results);
    free(untraced);
    free(after_stop);
    free(run.samples);
    free(run.native_samples);
    return exit_code;
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
        printf(bench_help, TPEVENT_TOOL_HAVE_CJSON ? ""
                                                   : "\n                      (not in this "
                                                     "build: it was built without cJSON)");
        return TOOL_EXIT_OK;
    }
    if (options.json && !TPEVENT_TOOL_HAVE_CJSON)
        return tool_json_unavailable("bench");

    bench_plan plan = {.targets = calloc(BENCH_MAX_DEVICES, sizeof(bench_target))};
    if (plan.targets == NULL) {
        fprintf(stderr, "tpevent bench: out of memory\n");
        return TOOL_EXIT_FAILURE;
    }
    /* Every device is opened before anything is timed, so that a device that cannot
     * be used fails the run at once. */
    bool opened = options.device_count > 0 ? open_chosen_targets(&options, &plan) : open_default_targets(&plan);
    exit_code = opened ? run_bench(&options, &plan) : TOOL_EXIT_FAILURE;
    for (size_t t = 0; t < plan.target_count; t++)
        bench_target_close(&plan.targets[t]);
    free(plan.targets);
    return exit_code;
}
