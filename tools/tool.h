/*
 * The tpevent command-line tool: shared pieces of its subcommands.
 * Written on the public API only (tpevent/tpevent.h), and for bench's baseline
 * column on tp_native_sample (tpevent/tpevent_diagnostics.h).
 */
#ifndef TPEVENT_TOOL_TOOL_H
#define TPEVENT_TOOL_TOOL_H

#include <getopt.h>

/* Exit codes, as documented in --help and tools/README.md. */
enum {
    TOOL_EXIT_OK = 0,
    TOOL_EXIT_FAILURE = 1, /* a backend or runtime error, the library's message on stderr;
                            * or the output could not be written */
    TOOL_EXIT_USAGE = 2,   /* a bad option, value or device string; usage on stderr */
};

/* Each takes its own argv: argv[0] is the command's name ("bench"). */
int tool_devices_main(int argc, char **argv);
int tool_bench_main(int argc, char **argv);

/* Prints "tpevent <command>: <message>", the usage line and a hint to stderr and
 * returns TOOL_EXIT_USAGE. command NULL: the tool itself. */
int tool_usage_error(const char *command, const char *usage, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * Starts a getopt_long() parse of a command's argv (its argv[0] is the command's
 * name): resets getopt's state and keeps it from printing messages of its own.
 */
void tool_getopt_begin(void);

/*
 * For what getopt_long() answered with an optstring that starts with ':': '?' (an
 * unknown option, or a value given to an option that takes none) or ':' (a value
 * missing). Reports it as a usage error and returns TOOL_EXIT_USAGE.
 */
int tool_getopt_error(const char *command, const char *usage, int answer, char **argv, const struct option *options);

#endif /* TPEVENT_TOOL_TOOL_H */
