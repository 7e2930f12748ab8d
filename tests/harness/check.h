/*
 * The tests' harness: a registry of named tests and CHECK macros.
 *
 * Each test runs in its own process (`prog --test NAME`), so a failed check prints
 * where and why and ends the process at once: a failure may leave gates closed and
 * threads blocked that nothing would ever open, and ending the process is the one
 * clean way out of that.
 */
#ifndef TPEVENT_TESTS_CHECK_H
#define TPEVENT_TESTS_CHECK_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include <tpevent/tpevent.h>

/* What a test runs with: --device and --peer, NULL when not given. */
typedef struct test_env {
    const char *device;
    const char *peer;
} test_env;

typedef struct test_case {
    const char *name;
    int (*run)(const test_env *env);
    struct test_case *next;
} test_case;

/* Exit code of a test that cannot run here (CTest's SKIP_RETURN_CODE). */
#define TEST_SKIP 77

void test_register(test_case *test);

/* Prints "file:line: FAILED: <message>" and the thread's tp_last_error, then ends
 * the process with status 1. */
_Noreturn void check_failed(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* With --unfinished (a backend being written), the type of the device under test,
 * whose own refusals skip a test instead of failing it; NULL otherwise. */
const char *test_unfinished_type(void);

/* Returns TEST_SKIP after printing "skipped: <why>" unless `device` can be used:
 * its backend is available and the index exists. 0 if it can. */
int test_skip_unless_device(const char *device, const char *role);

/*
 * Defines a test; the name is what `--test` takes and what CMake registers (it reads
 * the names from the sources, so keep `TEST(name)` at the start of a line).
 * The body returns 0 for success or TEST_SKIP.
 */
#define TEST(name)                                                  \
    static int test_##name(const test_env *env);                    \
    static test_case test_case_##name = {#name, test_##name, NULL}; \
    __attribute__((constructor)) static void register_##name(void)  \
    {                                                               \
        test_register(&test_case_##name);                           \
    }                                                               \
    static int test_##name(const test_env *env __attribute__((unused)))

#define CHECK(expr)                                               \
    do {                                                          \
        if (!(expr))                                              \
            check_failed(__FILE__, __LINE__, "CHECK(%s)", #expr); \
    } while (0)

#define CHECK_STATUS(call, expected)                                                                        \
    do {                                                                                                    \
        tp_status got_ = (call);                                                                            \
        tp_status want_ = (expected);                                                                       \
        if (got_ != want_)                                                                                  \
            check_failed(__FILE__, __LINE__, "%s\n  returned %s, expected %s", #call, tp_status_name(got_), \
                         tp_status_name(want_));                                                            \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, TP_OK)

#define CHECK_CONTAINS(haystack, needle)                                                               \
    do {                                                                                               \
        const char *hay_ = (haystack);                                                                 \
        const char *needle_ = (needle);                                                                \
        if (hay_ == NULL || strstr(hay_, needle_) == NULL)                                             \
            check_failed(__FILE__, __LINE__, "%s does not contain \"%s\": \"%s\"", #haystack, needle_, \
                         hay_ ? hay_ : "(null)");                                                      \
    } while (0)

/* The calling thread's last error contains `text`, exactly. */
#define CHECK_ERROR_MENTIONS(text) CHECK_CONTAINS(tp_last_error(), text)

/* The calling thread's last error contains the word, in any case: messages are for
 * people, and "interprocess" says the same as "INTERPROCESS". */
#define CHECK_ERROR_MENTIONS_WORD(word)                                                          \
    do {                                                                                         \
        if (!check_contains_ignoring_case(tp_last_error(), (word)))                              \
            check_failed(__FILE__, __LINE__, "tp_last_error() does not mention \"%s\"", (word)); \
    } while (0)

static inline bool check_contains_ignoring_case(const char *haystack, const char *needle)
{
    size_t length = strlen(needle);
    for (; *haystack != '\0'; haystack++) {
        size_t i = 0;
        while (i < length && haystack[i] != '\0' &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == length)
            return true;
    }
    return length == 0;
}

/* Skips the test, saying why, unless the peer device (--peer) can be used. */
#define REQUIRE_PEER(env)                                      \
    do {                                                       \
        if (test_skip_unless_device((env)->peer, "peer") != 0) \
            return TEST_SKIP;                                  \
    } while (0)

#endif /* TPEVENT_TESTS_CHECK_H */
