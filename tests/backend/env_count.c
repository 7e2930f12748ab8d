/*
 * common/env.h's tp_env_count, tested on its own: every numeric TPEVENT_* variable
 * goes through it, so that a value past its range, one that would wrap a computation
 * made from it, or one that is not a number is refused with the variable's name and
 * range, never taken.
 */
#define _POSIX_C_SOURCE 200809L

#include "common/env.h"

#include "check.h"

#include <string.h>

#define NAME "TPEVENT_TEST_ENV_COUNT"

static bool count_of(const char *text, uint64_t *out, char *message, size_t size)
{
    if (text)
        setenv(NAME, text, 1);
    else
        unsetenv(NAME);
    return tp_env_count(NAME, 1, 1000, 7, out, message, size);
}

TEST(env_count_reads_a_number_in_its_range)
{
    uint64_t n = 0;
    CHECK(count_of("1", &n, NULL, 0) && n == 1);
    CHECK(count_of("1000", &n, NULL, 0) && n == 1000);
    CHECK(count_of("0042", &n, NULL, 0) && n == 42);
    return 0;
}

TEST(env_count_unset_or_empty_is_the_default)
{
    uint64_t n = 0;
    CHECK(count_of(NULL, &n, NULL, 0) && n == 7);
    CHECK(count_of("", &n, NULL, 0) && n == 7);
    return 0;
}

TEST(env_count_refuses_values_outside_the_range_with_the_name_and_range)
{
    const char *bad[] = {"0",
                         "1001",
                         "1152921504606846976",
                         "4611686018427387904",
                         "18446744073709551616",
                         "-1",
                         "+5",
                         " 5",
                         "5 ",
                         "5ms",
                         "0x10",
                         "1e3",
                         "abc"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t n = 0;
        char message[160] = "";
        CHECK(!count_of(bad[i], &n, message, sizeof message));
        CHECK(n == 7); /* left at the default, never the refused value */
        CHECK(strstr(message, NAME) != NULL);
        CHECK(strstr(message, "from 1 to 1000") != NULL);
    }
    return 0;
}
