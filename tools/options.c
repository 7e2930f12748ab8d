/*
 * The tool's option parsing, shared by the tool and its commands: getopt_long()
 * started over on each command's argv, and its answers said as usage errors.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

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

void tool_getopt_begin(void)
{
    opterr = 0;
    optind = 0; /* glibc: start over, on a new argv */
}

/* The long name of a short option, for messages ("--device" for 'd'). */
static const char *long_name(const struct option *options, int value)
{
    for (const struct option *option = options; option->name != NULL; option++) {
        if (option->flag == NULL && option->val == value)
            return option->name;
    }
    return NULL;
}

int tool_getopt_error(const char *command, const char *usage, int answer, char **argv, const struct option *options)
{
    const char *arg = argv[optind - 1];
    bool is_long = strncmp(arg, "--", 2) == 0;
    /* "--iterations=5" names the option "--iterations". */
    int name_length = (int)strcspn(arg, "=");
    if (answer == ':') {
        const char *name = long_name(options, optopt);
        if (!is_long && name != NULL)
            return tool_usage_error(command, usage, "--%s needs a value", name);
        return tool_usage_error(command, usage, "%.*s needs a value", name_length, arg);
    }
    if (is_long && optopt != 0)
        return tool_usage_error(command, usage, "%.*s takes no value", name_length, arg);
    if (!is_long && optopt != 0)
        return tool_usage_error(command, usage, "unknown option '-%c'", optopt);
    return tool_usage_error(command, usage, "unknown option '%s'", arg);
}
