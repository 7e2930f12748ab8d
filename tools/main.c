/*
 * tpevent: which event backends work on this machine, and what an event costs there.
 *
 *   tpevent devices
 *   tpevent bench [--device D]... [--iterations N] [--json]
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tpevent/tpevent.h>

#include "tool.h"

static const char main_usage[] = "Usage: tpevent <command> [options]\n"
                                 "       tpevent --help | --version\n";

static const char main_help[] =
    "\n"
    "Device events and streams over CUDA, HIP and the CPU: which backends work on\n"
    "this machine, and what each event operation costs there.\n"
    "\n"
    "Commands:\n"
    "  devices   list the backends (cpu, cuda, hip): built, loaded, available or why\n"
    "            not, their devices, each device's name and measured timer resolution\n"
    "  bench     per-op latency (median, p99) of tpevent's event calls next to the\n"
    "            raw call underneath, measured in the same run\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this help\n"
    "      --version  show the version of the tpevent library in use\n"
    "\n"
    "Run 'tpevent <command> --help' for a command's options.\n"
    "\n"
    "Exit status: 0 on success, 1 on a backend or runtime error (the library's\n"
    "message goes to stderr), 2 on a usage error.\n";

bool tool_is_help_option(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

bool tool_match_option(int argc, char **argv, int *index, const char *name,
                       const char **value)
{
    const char *arg = argv[*index];
    size_t name_length = strlen(name);
    if (strncmp(arg, name, name_length) != 0)
        return false;
    if (arg[name_length] == '=') {
        *value = arg + name_length + 1;
        *index += 1;
        return true;
    }
    if (arg[name_length] != '\0')
        return false;
    *value = *index + 1 < argc ? argv[*index + 1] : NULL;
    *index += *value != NULL ? 2 : 1;
    return true;
}

int tool_usage_error(const char *command, const char *usage, const char *format, ...)
{
    va_list args;
    fprintf(stderr, "tpevent%s%s: ", command != NULL ? " " : "", command != NULL ? command : "");
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n%sTry 'tpevent%s%s --help'.\n", usage, command != NULL ? " " : "",
            command != NULL ? command : "");
    return TOOL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tool_usage_error(NULL, main_usage, "a command is required");

    const char *command = argv[1];
    if (tool_is_help_option(command)) {
        fputs(main_usage, stdout);
        fputs(main_help, stdout);
        return TOOL_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("tpevent %s\n", tp_version_string());
        return TOOL_EXIT_OK;
    }
    if (strcmp(command, "devices") == 0)
        return tool_devices_main(argc - 1, argv + 1);
    if (strcmp(command, "bench") == 0)
        return tool_bench_main(argc - 1, argv + 1);
    if (command[0] == '-')
        return tool_usage_error(NULL, main_usage, "unknown option '%s'", command);
    return tool_usage_error(NULL, main_usage, "unknown command '%s'", command);
}
