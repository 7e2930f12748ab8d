#define _POSIX_C_SOURCE 200809L

#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>

#include <tpevent/tpevent.h>

_Noreturn void fuzz_violation(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz target: violated: %s\n  tp_last_error: \"%s\"\n", file, line, what, tp_last_error());
    fflush(stderr);
    abort();
}

void fuzz_prepare_environment(void)
{
    /* Two virtual CPU devices, so that "cpu:1" exists and "cpu:2" does not; the
     * caller's own setting wins. */
    setenv("TPEVENT_CPU_DEVICES", "2", 0);
}

bool fuzz_status_is_known(tp_status status)
{
    return (unsigned)status < TP_STATUS_COUNT;
}
