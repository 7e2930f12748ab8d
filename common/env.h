/*
 * tpevent's environment variables, one rule for all of them: a variable set to the
 * empty string means the same as one that is unset (its default), as TPEVENT_DEVICE=
 * has always meant. `TPEVENT_CPU_DEVICES= prog` or an `export TPEVENT_DEVICE=` left
 * empty by a script then changes nothing, rather than disabling a backend or failing
 * a parse. Every TPEVENT_* variable is read through tp_env, in the core and in every
 * backend. Header-only, as the rest of common.
 */
#ifndef TPEVENT_COMMON_ENV_H
#define TPEVENT_COMMON_ENV_H

#include <stddef.h>
#include <stdlib.h>

/* The value of the variable `name`; NULL when it is unset or empty. */
static inline const char *tp_env(const char *name)
{
    const char *value = getenv(name);
    return value && value[0] != '\0' ? value : NULL;
}

#endif /* TPEVENT_COMMON_ENV_H */
