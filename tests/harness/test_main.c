/*
 * The runner every C test program linked with tpevent_test_harness shares:
 *   prog --list
 *   prog [--device D [--unfinished]] [--peer P] --test NAME
 * With --device, a test whose device cannot be used is skipped (exit 77) with the
 * backend's reason, so that every backend's tests can be registered everywhere.
 * --unfinished is for a backend being written (tests/device_types): a check that
 * fails because that backend refused skips the test, with the refusal, instead.
 * A test still running after TEST_WATCHDOG_SECONDS fails with the main thread's
 * stack; one that crashes prints the crashing thread's (not under a sanitizer).
 */
#define _POSIX_C_SOURCE 200809L

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* A generous bound for "did not hang": far above what any test needs, far below
 * CTest's own timeout, so that a hang reports itself as one. */
#define TEST_WATCHDOG_SECONDS 120

static test_case *registered_tests;

/* --unfinished: the type of the device under test, whose own refusals skip a test
 * rather than fail it (a backend being written: the skeleton); NULL otherwise. */
static const char *unfinished_type;
static char unfinished_type_text[TP_DEVICE_STRING_MAX];

const char *test_unfinished_type(void)
{
    return unfinished_type;
}

/* A failed check on an unfinished backend whose cause is that backend saying no
 * (the thread's last error names it, as its own TP_ERR_UNSUPPORTED messages and the
 * core's for its NULL entries do) is a test that cannot run yet: skipped, with why. */
static void skip_if_unfinished(const char *file, int line)
{
    const char *error = tp_last_error();
    if (unfinished_type == NULL || error == NULL || strstr(error, unfinished_type) == NULL)
        return;
    printf("skipped: the %s backend is unfinished: %s (%s:%d)\n", unfinished_type, error, file, line);
    fflush(stdout);
    fflush(stderr);
    _Exit(TEST_SKIP);
}

void test_register(test_case *test)
{
    test->next = registered_tests;
    registered_tests = test;
}

_Noreturn void check_failed(const char *file, int line, const char *fmt, ...)
{
    va_list args;
    skip_if_unfinished(file, line);
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n  tp_last_error (this thread): \"%s\"\n", tp_last_error());
    fflush(stderr);
    fflush(stdout);
    /* Not exit(): other threads may be blocked on gates the test will never open. */
    _Exit(1);
}

int test_skip_unless_device(const char *device, const char *role)
{
    tp_device parsed;
    const char *reason = NULL;
    int count = 0;

    if (device == NULL) {
        printf("skipped: no %s device given\n", role);
        return TEST_SKIP;
    }
    if (tp_device_parse(device, &parsed) != TP_OK)
        check_failed(__FILE__, __LINE__, "bad %s device \"%s\"", role, device);
    const char *type = tp_device_type_name(parsed.type);
    if (tp_backend_status(type, &reason) != TP_OK) {
        printf("skipped: %s\n", reason ? reason : "(no reason given)");
        return TEST_SKIP;
    }
    if (tp_device_count(type, &count) != TP_OK)
        check_failed(__FILE__, __LINE__, "tp_device_count(\"%s\") failed", type);
    if (parsed.index != TP_DEVICE_INDEX_CURRENT && parsed.index >= count) {
        printf("skipped: %s device %s does not exist (%d %s device%s)\n", role, device, count, type,
               count == 1 ? "" : "s");
        return TEST_SKIP;
    }
    return 0;
}

/* The calling thread's stack, as addresses in their modules (addr2line -e the
 * module reads them): where a crash or a hang was, from a run nobody can attach
 * a debugger to (the GPU machine, a child in new namespaces). */
static void write_backtrace(void)
{
    void *frames[48];
    int count = backtrace(frames, 48);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
}

static void write_text(const char *text)
{
    ssize_t written = write(STDERR_FILENO, text, strlen(text));
    (void)written;
}

static void on_watchdog(int signo)
{
    (void)signo;
    write_text("FAILED: test still running after the watchdog's limit; something hangs. The main thread:\n");
    write_backtrace();
    _exit(1);
}

static void start_watchdog(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_watchdog;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, NULL);
    alarm(TEST_WATCHDOG_SECONDS);
}

/* Under a sanitizer its own report of a crash is better: no handler of ours. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TEST_UNDER_SANITIZER 1
#endif
#endif

#ifndef TEST_UNDER_SANITIZER
/* A crash says where, then ends the process by the same signal. */
static void on_crash(int signo)
{
    write_text(signo == SIGSEGV  ? "FAILED: SIGSEGV; the crashing thread:\n"
               : signo == SIGBUS ? "FAILED: SIGBUS; the crashing thread:\n"
                                 : "FAILED: a fatal signal; the crashing thread:\n");
    write_backtrace();
    signal(signo, SIG_DFL);
    raise(signo);
}
#endif

static void report_crashes(void)
{
#ifndef TEST_UNDER_SANITIZER
    void *warm[1];
    (void)backtrace(warm, 1); /* loads what backtrace needs now, not in a handler */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_crash;
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &action, NULL);
#endif
}

static int compare_names(const void *a, const void *b)
{
    const test_case *const *x = a;
    const test_case *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

static void list_tests(void)
{
    size_t count = 0;
    for (test_case *t = registered_tests; t != NULL; t = t->next)
        count++;
    test_case **sorted = calloc(count ? count : 1, sizeof *sorted);
    if (sorted == NULL)
        abort();
    size_t i = 0;
    for (test_case *t = registered_tests; t != NULL; t = t->next)
        sorted[i++] = t;
    qsort(sorted, count, sizeof *sorted, compare_names);
    for (i = 0; i < count; i++)
        printf("%s\n", sorted[i]->name);
    free(sorted);
}

static int usage(const char *program)
{
    fprintf(stderr, "usage: %s --list\n       %s [--device D [--unfinished]] [--peer P] --test NAME\n", program,
            program);
    return 2;
}

int main(int argc, char **argv)
{
    test_env env = {NULL, NULL};
    const char *name = NULL;
    bool list = false;
    bool unfinished = false;

    for (int i = 1; i < argc; i++) {
        bool has_value = i + 1 < argc;
        if (strcmp(argv[i], "--list") == 0)
            list = true;
        else if (strcmp(argv[i], "--device") == 0 && has_value)
            env.device = argv[++i];
        else if (strcmp(argv[i], "--peer") == 0 && has_value)
            env.peer = argv[++i];
        else if (strcmp(argv[i], "--unfinished") == 0)
            unfinished = true;
        else if (strcmp(argv[i], "--test") == 0 && has_value)
            name = argv[++i];
        else
            return usage(argv[0]);
    }
    if (list) {
        list_tests();
        return 0;
    }
    if (name == NULL)
        return usage(argv[0]);

    test_case *test = registered_tests;
    while (test != NULL && strcmp(test->name, name) != 0)
        test = test->next;
    if (test == NULL) {
        fprintf(stderr, "no test named \"%s\" (see --list)\n", name);
        return 2;
    }
    if (unfinished && env.device == NULL)
        return usage(argv[0]);
    if (unfinished) {
        tp_device parsed;
        if (tp_device_parse(env.device, &parsed) != TP_OK)
            check_failed(__FILE__, __LINE__, "bad test device \"%s\"", env.device);
        snprintf(unfinished_type_text, sizeof unfinished_type_text, "%s", tp_device_type_name(parsed.type));
        unfinished_type = unfinished_type_text;
    }
    start_watchdog();
    report_crashes();
    /* Only a test run on a device asks the library anything before the test does:
     * unit tests see the library exactly as a fresh process would. */
    if (env.device != NULL && test_skip_unless_device(env.device, "test") != 0)
        return TEST_SKIP;
    int result = test->run(&env);
    if (result == 0)
        printf("passed: %s\n", name);
    return result;
}
