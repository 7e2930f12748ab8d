/*
 * tpevent devices: one row per backend (built, loaded, device count, available or
 * why not), then one row per device (timer resolution measured, name).
 */
#include <stdio.h>
#include <string.h>

#include <tpevent/tpevent.h>

#include "measure.h"
#include "tool.h"

/* Enough back-to-back pairs to catch the timer's smallest step; ~10 ms on a GPU. */
#define RESOLUTION_TRIES 1000

static const char devices_usage[] = "Usage: tpevent devices\n";

static const char devices_help[] =
    "\n"
    "Lists the backends (cpu, cuda, hip), one row each:\n"
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
    "\n"
    "Options:\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 on success, 1 on a backend error, 2 on a usage error.\n";

static const char *yes_no(bool value)
{
    return value ? "yes" : "no";
}

/* Prints the backend's row; *devices: its device count, 0 when unavailable. */
static bool print_backend_row(tp_device_type type, int *devices)
{
    const char *name = tp_device_type_name(type);
    tp_backend_info info;
    if (tp_backend_get_info(name, &info) != TP_OK) {
        fprintf(stderr, "tpevent devices: %s: %s\n", name, tp_last_error());
        return false;
    }
    bool available = info.status == TP_OK;
    *devices = available ? info.device_count : 0;
    printf("%-8s %-6s %-6s %7d  ", name, yes_no(info.built_in || info.module_found),
           yes_no(info.loaded), *devices);
    if (!available)
        printf("unavailable: %s\n",
               info.reason != NULL && info.reason[0] != '\0' ? info.reason : "(no reason given)");
    else if (info.built_in)
        printf("available (built in)\n");
    else
        printf("available (%s)\n", info.module_path != NULL ? info.module_path : "module");
    return true;
}

static bool print_device_row(const char *device)
{
    char error[TOOL_ERROR_SIZE];
    double resolution_ns = 0.0;
    if (!measure_timer_resolution(device, RESOLUTION_TRIES, &resolution_ns, error,
                                  sizeof error)) {
        fprintf(stderr, "tpevent devices: %s\n", error);
        printf("%-8s %16s  %s\n", device, "error", "-");
        return false;
    }
    char resolution[32] = "all 0";
    if (resolution_ns > 0.0)
        snprintf(resolution, sizeof resolution, "%.0f ns", resolution_ns);
    char name[128] = "-";
    if (tp_device_name(device, name, sizeof name) != TP_OK)
        snprintf(name, sizeof name, "- (%s)", tp_last_error());
    printf("%-8s %16s  %s\n", device, resolution, name);
    return true;
}

int tool_devices_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (tool_is_help_option(argv[i])) {
            fputs(devices_usage, stdout);
            fputs(devices_help, stdout);
            return TOOL_EXIT_OK;
        }
    }
    if (argc > 1) {
        return tool_usage_error("devices", devices_usage, "%s '%s'",
                                argv[1][0] == '-' ? "unknown option" : "unexpected argument",
                                argv[1]);
    }

    int device_counts[TP_DEVICE_TYPE_COUNT] = {0};
    bool all_well = true;
    printf("%-8s %-6s %-6s %7s  %s\n", "backend", "built", "loaded", "devices", "status");
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++)
        all_well = print_backend_row((tp_device_type)type, &device_counts[type]) && all_well;

    printf("\n%-8s %16s  %s\n", "device", "timer resolution", "name");
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++) {
        for (int index = 0; index < device_counts[type]; index++) {
            char device[TP_DEVICE_STRING_MAX];
            snprintf(device, sizeof device, "%s:%d", tp_device_type_name((tp_device_type)type),
                     index);
            all_well = print_device_row(device) && all_well;
        }
    }
    return all_well ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
