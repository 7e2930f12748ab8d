/*
 * tpevent devices: one row per backend (built, loaded, device count, available or
 * why not), then one row per device (timer resolution measured, name, and on a line
 * of its own what holds its streams in a wait on another backend); or all of it,
 * and the host, as one JSON object (--json).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_device_wait_mechanism */

#include "host.h"
#include "json.h"
#include "measure.h"
#include "tool.h"

/* Enough back-to-back pairs to catch the timer's smallest step; ~10 ms on a GPU. */
#define RESOLUTION_TRIES 1000
#define NAME_SIZE 128
#define WAIT_SIZE 256

static const char devices_usage[] = "Usage: tpevent devices [--json]\n";

static const char devices_help[] =
    "\n"
    "Lists the backends (cpu, cuda, hip, opencl, vulkan), one row each:\n"
    "  backend  the backend's name, as in a device string\n"
    "  built    whether it is built in or its module file was found\n"
    "  loaded   whether it is built in or its module was loaded\n"
    "  devices  how many devices it has (0 when unavailable)\n"
    "  status   'available' and where from (built in, or the module's path),\n"
    "           or 'unavailable: ' and the library's reason\n"
    "then the devices of the available backends, one row each:\n"
    "  device            its device string (cpu:0, cuda:1, ...)\n"
    "  timer resolution  the smallest nonzero elapsed time between two timing events\n"
    "                    recorded back to back on an idle stream, over 1000 tries\n"
    "  name              the device's name, as its runtime gives it\n"
    "and under each device, 'cross-backend waits:' and what holds a stream of the\n"
    "device that waits on a record of another backend (rule 14): stream memory\n"
    "operations, or a fallback and why (TPEVENT_GPU_WAIT=host-fn forces it);\n"
    "'hold window:' how many holds and waits tpevent queues on one stream before\n"
    "the next joins the latest instead (tp_stream_hold_window, rule 17); and\n"
    "'host clock:' the step of its event timer and the bound of its calibration\n"
    "against CLOCK_MONOTONIC (tp_device_clock, rule 13)\n"
    "\n"
    "Options:\n"
    "      --json  print one JSON object instead: the version, the host, each backend\n"
    "              and each device (tools/README.md describes the fields)%s\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 on success, 1 on a backend error or when the output cannot be\n"
    "written, 2 on a usage error.\n";

typedef struct backend_row {
    tp_backend_info info;
    bool known; /* tp_backend_get_info answered */
    char error[TOOL_ERROR_SIZE];
} backend_row;

typedef struct device_row {
    char device[TP_DEVICE_STRING_MAX];
    tp_device_type type;
    double resolution_ns; /* 0: every try measured 0 */
    bool measured;
    char name[NAME_SIZE];
    bool has_name;
    char wait[WAIT_SIZE]; /* tp_device_wait_mechanism; "" if it failed */
    tp_clock_info clock;  /* tp_device_clock */
    bool has_clock;
    int64_t hold_window;         /* tp_stream_hold_window of its default stream; 0 if it failed */
    char error[TOOL_ERROR_SIZE]; /* why the resolution or the name is missing */
} device_row;

static const char *yes_no(bool value)
{
    return value ? "yes" : "no";
}

static bool backend_available(const backend_row *row)
{
    return row->known && row->info.status == TP_OK;
}

static void gather_backend(tp_device_type type, backend_row *row)
{
    memset(row, 0, sizeof *row);
    const char *name = tp_device_type_name(type);
    row->known = tp_backend_get_info(name, &row->info) == TP_OK;
    if (!row->known)
        snprintf(row->error, sizeof row->error, "%s", tp_last_error());
}

static void gather_device(tp_device_type type, int index, device_row *row)
{
    memset(row, 0, sizeof *row);
    row->type = type;
    snprintf(row->device, sizeof row->device, "%s:%d", tp_device_type_name(type), index);
    row->measured = measure_timer_resolution(row->device, RESOLUTION_TRIES, &row->resolution_ns, row->error,
                                             sizeof row->error);
    row->has_name = tp_device_name(row->device, row->name, sizeof row->name) == TP_OK;
    if (!row->has_name && row->measured)
        snprintf(row->error, sizeof row->error, "tp_device_name: %s", tp_last_error());
    if (tp_device_wait_mechanism(row->device, row->wait, sizeof row->wait) != TP_OK)
        snprintf(row->wait, sizeof row->wait, "- (%s)", tp_last_error());
    row->has_clock = tp_device_clock(row->device, &row->clock) == TP_OK;
    tp_stream *stream = NULL;
    if (tp_stream_default(row->device, &stream) != TP_OK || tp_stream_hold_window(stream, &row->hold_window) != TP_OK)
        row->hold_window = 0;
}

/* Rule 17: how much tpevent queues on a held stream before it joins instead. */
static void print_hold_window_line(const device_row *row)
{
    if (row->hold_window == INT64_MAX)
        printf("%-8s hold window: unbounded (a stream's queue has no limit)\n", "");
    else if (row->hold_window > 0)
        printf("%-8s hold window: %lld operations per stream\n", "", (long long)row->hold_window);
    else
        printf("%-8s hold window: -\n", "");
}

/* Rule 13: what tp_event_timestamp's times stand on. */
static void print_clock_line(const device_row *row)
{
    if (row->has_clock)
        printf("%-8s host clock: timer step %lld ns, calibration error bound %.1f us\n", "",
               (long long)row->clock.resolution_ns, (double)row->clock.error_ns / 1000.0);
    else
        printf("%-8s host clock: -\n", "");
}

static void print_backend_row(const backend_row *row, const char *name)
{
    const tp_backend_info *info = &row->info;
    bool available = backend_available(row);
    printf("%-8s %-6s %-6s %7d  ", name, yes_no(info->built_in || info->module_found), yes_no(info->loaded),
           available ? info->device_count : 0);
    if (!available)
        printf("unavailable: %s\n",
               info->reason != NULL && info->reason[0] != '\0' ? info->reason : "(no reason given)");
    else if (info->built_in)
        printf("available (built in)\n");
    else
        printf("available (%s)\n", info->module_path != NULL ? info->module_path : "module");
}

static void print_device_row(const device_row *row)
{
    if (!row->measured) {
        printf("%-8s %16s  %s\n", row->device, "error", "-");
        printf("%-8s cross-backend waits: %s\n", "", row->wait);
        print_hold_window_line(row);
        print_clock_line(row);
        return;
    }
    char resolution[32] = "all 0";
    if (row->resolution_ns > 0.0)
        snprintf(resolution, sizeof resolution, "%.0f ns", row->resolution_ns);
    char name[NAME_SIZE + TOOL_ERROR_SIZE];
    if (row->has_name)
        snprintf(name, sizeof name, "%s", row->name);
    else
        snprintf(name, sizeof name, "- (%s)", row->error);
    printf("%-8s %16s  %s\n", row->device, resolution, name);
    printf("%-8s cross-backend waits: %s\n", "", row->wait);
    print_hold_window_line(row);
    print_clock_line(row);
}

#if TPEVENT_TOOL_HAVE_CJSON

static const char *nonempty_or_null(const char *text)
{
    return text != NULL && text[0] != '\0' ? text : NULL;
}

static bool print_json(const backend_row *backends, const device_row *devices, size_t device_count)
{
    host_info host;
    host_info_get(&host);
    json_doc doc;
    cJSON *root = json_begin(&doc);
    json_string(&doc, root, "version", tp_version_string());
    json_add_host(&doc, root, &host);
    cJSON *backend_array = json_array(&doc, root, "backends");
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++) {
        const backend_row *row = &backends[type];
        const tp_backend_info *info = &row->info;
        bool available = backend_available(row);
        cJSON *object = json_append_object(&doc, backend_array);
        json_string(&doc, object, "backend", tp_device_type_name((tp_device_type)type));
        json_bool(&doc, object, "built", info->built_in || info->module_found);
        json_bool(&doc, object, "built_in", info->built_in);
        json_bool(&doc, object, "module_found", info->module_found);
        json_bool(&doc, object, "loaded", info->loaded);
        json_bool(&doc, object, "available", available);
        json_string(&doc, object, "status", row->known ? tp_status_name(info->status) : "TP_ERR_BACKEND_UNAVAILABLE");
        json_string(&doc, object, "reason",
                    available    ? NULL
                    : row->known ? (nonempty_or_null(info->reason) ? info->reason : "(no reason given)")
                                 : row->error);
        json_string(&doc, object, "module_path", info->built_in ? NULL : nonempty_or_null(info->module_path));
        json_number(&doc, object, "device_count", available ? info->device_count : 0);
        json_add_versions(&doc, object);
    }
    cJSON *device_array = json_array(&doc, root, "devices");
    for (size_t d = 0; d < device_count; d++) {
        const device_row *row = &devices[d];
        cJSON *object = json_append_object(&doc, device_array);
        json_string(&doc, object, "device", row->device);
        json_string(&doc, object, "backend", tp_device_type_name(row->type));
        json_string(&doc, object, "name", row->has_name ? row->name : NULL);
        if (row->measured && row->resolution_ns > 0.0)
            json_number(&doc, object, "timer_resolution_ns", round(row->resolution_ns * 10.0) / 10.0);
        else
            json_null(&doc, object, "timer_resolution_ns");
        json_string(&doc, object, "cross_backend_wait", row->wait);
        if (row->hold_window > 0 && row->hold_window != INT64_MAX)
            json_number(&doc, object, "hold_window", (double)row->hold_window);
        else
            json_null(&doc, object, "hold_window"); /* unbounded (the CPU), or unknown */
        if (row->has_clock) {
            json_number(&doc, object, "clock_resolution_ns", (double)row->clock.resolution_ns);
            json_number(&doc, object, "clock_error_ns", (double)row->clock.error_ns);
        } else {
            json_null(&doc, object, "clock_resolution_ns");
            json_null(&doc, object, "clock_error_ns");
        }
        json_string(&doc, object, "error", nonempty_or_null(row->error));
    }
    if (!json_end(&doc, stdout)) {
        fprintf(stderr, "tpevent devices: out of memory for the JSON output\n");
        return false;
    }
    return true;
}

#else

static bool print_json(const backend_row *backends, const device_row *devices, size_t device_count)
{
    (void)backends;
    (void)devices;
    (void)device_count;
    return false; /* refused before anything is gathered */
}

#endif

int tool_devices_main(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    tool_getopt_begin();
    int answer;
    while ((answer = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (answer) {
        case 'h':
            fputs(devices_usage, stdout);
            printf(devices_help, TPEVENT_TOOL_HAVE_CJSON ? ""
                                                         : "\n              (not in this build: "
                                                           "it was built without cJSON)");
            return TOOL_EXIT_OK;
        case 'j':
            json = true;
            break;
        default:
            return tool_getopt_error("devices", devices_usage, answer, argv, options);
        }
    }
    if (optind < argc)
        return tool_usage_error("devices", devices_usage, "unexpected argument '%s'", argv[optind]);
    if (json && !TPEVENT_TOOL_HAVE_CJSON)
        return tool_json_unavailable("devices");

    backend_row backends[TP_DEVICE_TYPE_COUNT];
    static device_row devices[TP_DEVICE_TYPE_COUNT * TP_MAX_DEVICES];
    size_t device_count = 0;
    bool all_well = true;
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++) {
        gather_backend((tp_device_type)type, &backends[type]);
        if (!backends[type].known) {
            fprintf(stderr, "tpevent devices: %s: %s\n", tp_device_type_name((tp_device_type)type),
                    backends[type].error);
            all_well = false;
        }
    }
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++) {
        if (!backend_available(&backends[type]))
            continue;
        for (int index = 0; index < backends[type].info.device_count && index < TP_MAX_DEVICES; index++) {
            device_row *row = &devices[device_count++];
            gather_device((tp_device_type)type, index, row);
            if (!row->measured) {
                fprintf(stderr, "tpevent devices: %s\n", row->error);
                all_well = false;
            }
        }
    }

    if (json) {
        if (!print_json(backends, devices, device_count))
            return TOOL_EXIT_FAILURE;
    } else {
        printf("%-8s %-6s %-6s %7s  %s\n", "backend", "built", "loaded", "devices", "status");
        for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++)
            print_backend_row(&backends[type], tp_device_type_name((tp_device_type)type));
        printf("\n%-8s %16s  %s\n", "device", "timer resolution", "name");
        for (size_t d = 0; d < device_count; d++)
            print_device_row(&devices[d]);
    }
    return all_well ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
