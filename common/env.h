/*
 * tpevent's environment variables, one rule for all of them: a variable set to the
 * empty string means the same as one that is unset (its default), as TPEVENT_DEVICE=
 * has always meant. `TPEVENT_CPU_DEVICES= prog` or an `export TPEVENT_DEVICE=` left
 * empty by a script then changes nothing, rather than disabling a backend or failing
 * a parse. Every TPEVENT_* variable is read through tp_env, in the core and in every
 * backend; every numeric one through tp_env_count, which never lets a value outside
 * its range (or one that would overflow what is computed from it) through silently.
 * Header-only, as the rest of common.
 */
#ifndef TPEVENT_COMMON_ENV_H
#define TPEVENT_COMMON_ENV_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The value of the variable `name`; NULL when it is unset or empty. */
static inline const char *tp_env(const char *name)
{
    const char *value = getenv(name);
    return value && value[0] != '\0' ? value : NULL;
}

/*
 * The whole number in the variable `name`, in [min, max] (min <= max, both >= 0):
 * `fallback` when it is unset or empty. A value that is not a whole decimal number
 * (signs, spaces, suffixes, hex) or lies outside the range answers false, with a
 * message that names the variable, its value and the range in `message` (which may
 * be NULL), and leaves *out at `fallback`: the caller reports it where it can (a
 * backend's reason, a call's error) and never goes on with a value it did not check.
 */
static inline bool tp_env_count(const char *name, uint64_t min, uint64_t max, uint64_t fallback, uint64_t *out,
                                char *message, size_t message_size)
{
    *out = fallback;
    const char *text = tp_env(name);
    if (text == NULL)
        return true;
    bool digits_only = true;
    for (const char *c = text; *c != '\0'; c++)
        digits_only = digits_only && *c >= '0' && *c <= '9';
    errno = 0;
    char *end = NULL;
    unsigned long long value = digits_only ? strtoull(text, &end, 10) : 0;
    if (digits_only && errno == 0 && end != NULL && *end == '\0' && value >= min && value <= max) {
        *out = value;
        return true;
    }
    if (message != NULL && message_size > 0)
        snprintf(message, message_size, "%s=\"%.40s\": expected a whole number from %" PRIu64 " to %" PRIu64, name,
                 text, min, max);
    return false;
}

#endif /* TPEVENT_COMMON_ENV_H */
