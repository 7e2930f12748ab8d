/*
 * tpevent: which event backends work on this machine, and what an event costs there.
 *
 *   tpevent devices [--json]
 *   tpevent bench [--device D]... [--iterations N] [--json]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tpevent/tpevent.h>

#include "tool.h"

static const char main_usage[] =
    "Usage: tpevent <command> [options]\n"
    "       tpevent --help | --version\n";

static const char main_help[] =
    "\n"
    "Device events and streams over CUDA, HIP, OpenCL, Vulkan and the CPU: which backends\n"
    "work on this machine, and what each event operation costs there.\n"
    "\n"
    "Commands:\n"
    "  devices   list the backends (cpu, cuda, hip, opencl, vulkan): built, loaded, available or why\n"
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
    "message goes to stderr) or when the output cannot be written, 2 on a usage error.\n";

static int run(int argc, char **argv)
{
    static const struct option options[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    tool_getopt_begin();
    int answer;
    /* '+': the options before the command are the tool's; the rest are the command's. */
    while ((answer = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
        switch (answer) {
        case 'h':
            fputs(main_usage, stdout);
            fputs(main_help, stdout);
            return TOOL_EXIT_OK;
        case 'V':
            printf("tpevent %s\n", tp_version_string());
            return TOOL_EXIT_OK;
        default:
            return tool_getopt_error(NULL, main_usage, answer, argv, options);
        }
    }
    if (optind >= argc)
        return tool_usage_error(NULL, main_usage, "a command is required");

    const char *command = argv[optind];
    int command_argc = argc - optind;
    char **command_argv = argv + optind;
    if (strcmp(command, "devices") == 0)
        return tool_devices_main(command_argc, command_argv);
    if (strcmp(command, "bench") == 0)
        return tool_bench_main(command_argc, command_argv);
    return tool_usage_error(NULL, main_usage, "unknown command '%s'", command);
}

int main(int argc, char **argv)
{
    /* Output in one buffer to the end where it fits, so that a failed write is seen
     * at the fclose below with its errno: a write failed earlier (stdio's 4 kB
     * buffer filled: `bench` over five backends) leaves only ferror, not why. */
    static char output[1 << 16];
    if (!isatty(STDOUT_FILENO)) /* a terminal sees each row as it comes */
        (void)setvbuf(stdout, output, _IOFBF, sizeof output);
    int exit_code = run(argc, argv);
    /* Whatever was written must have reached stdout: a full disk, a closed pipe's
     * EIO, /dev/full make the run fail, not look like a success. */
    bool failed_before = ferror(stdout) != 0;
    errno = 0;
    if (fclose(stdout) != 0 || failed_before) {
        fprintf(stderr, "tpevent: cannot write the output%s%s\n", errno != 0 ? ": " : "",
                errno != 0 ? strerror(errno) : "");
        if (exit_code == TOOL_EXIT_OK)
            exit_code = TOOL_EXIT_FAILURE;
    }
    return exit_code;
}
