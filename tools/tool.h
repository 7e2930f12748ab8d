/*
 * The tpevent command-line tool: shared pieces of its subcommands.
 * Written on the public API only (tpevent/tpevent.h), and for bench's baseline
 * column on tp_native_sample (tpevent/tpevent_diagnostics.h).
 */
#ifndef TPEVENT_TOOL_TOOL_H
#define TPEVENT_TOOL_TOOL_H

#include <stdbool.h>

/* Exit codes, as documented in --help and tools/README.md. */
enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_FAILURE = 1, /* a backend or runtime error; the library's message on stderr */
    TOOL_EXIT_USAGE = 2,   /* a bad option, value or device string; usage on stderr */
};

int tool_devices_main(int argc, char **argv);
int tool_bench_main(int argc, char **argv);

/* True for "--help" and "-h". */
bool tool_is_help_option(const char *arg);

/*
 * Matches argv[*index] against a long option that takes a value, in either form
 * "--name value" or "--name=value". On a match stores the value (NULL when the
 * value is missing) and advances *index past what it consumed.
 */
bool tool_match_option(int argc, char **argv, int *index, const char *name,
                       const char **value);

/* Prints "tpevent <command>: <message>", the usage line and a hint to stderr and
 * returns TOOL_EXIT_USAGE. */
int tool_usage_error(const char *command, const char *usage, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* TPEVENT_TOOL_TOOL_H */
