/* Status names and the per-thread message of the last failure. */
#include "core/internal.h"

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a device string, a module path and a runtime's error text. */
#define TP_MESSAGE_SIZE 1024

static _Thread_local char thread_message[TP_MESSAGE_SIZE];

static const struct {
    const char *name;
    const char *description;
} status_table[TP_STATUS_COUNT] = {
    [TP_OK] = {"TP_OK", "success"},
    [TP_ERR_INVALID_ARGUMENT] = {"TP_ERR_INVALID_ARGUMENT", "invalid argument"},
    [TP_ERR_INVALID_DEVICE] = {"TP_ERR_INVALID_DEVICE", "invalid device string or index"},
    [TP_ERR_BACKEND_UNAVAILABLE] = {"TP_ERR_BACKEND_UNAVAILABLE", "backend unavailable"},
    [TP_ERR_NOT_RECORDED] = {"TP_ERR_NOT_RECORDED", "event was never recorded"},
    [TP_ERR_NOT_READY] = {"TP_ERR_NOT_READY", "event's record not reached yet"},
    [TP_ERR_TIMING_DISABLED] = {"TP_ERR_TIMING_DISABLED", "event created without timing"},
    [TP_ERR_DEVICE_MISMATCH] = {"TP_ERR_DEVICE_MISMATCH", "objects of different devices"},
    [TP_ERR_UNSUPPORTED] = {"TP_ERR_UNSUPPORTED", "operation not supported by the backend"},
    [TP_ERR_OUT_OF_MEMORY] = {"TP_ERR_OUT_OF_MEMORY", "out of memory"},
    [TP_ERR_BACKEND] = {"TP_ERR_BACKEND", "the device runtime failed"},
    [TP_ERR_CAPTURING] = {"TP_ERR_CAPTURING", "not allowed while a graph capture is open"},
};

const char *tp_status_name(tp_status status)
{
    if ((unsigned)status >= TP_STATUS_COUNT)
        return "TP_ERR_UNKNOWN";
    return status_table[status].name;
}

const char *tp_status_description(tp_status status)
{
    if ((unsigned)status >= TP_STATUS_COUNT)
        return "unknown status";
    return status_table[status].description;
}

const char *tp_last_error(void)
{
    return thread_message;
}

static tp_status fail_v(tp_status status, const char *fmt, va_list args)
{
    vsnprintf(thread_message, sizeof thread_message, fmt, args);
    return status;
}

tp_status tp_fail(tp_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fail_v(status, fmt, args);
    va_end(args);
    return status;
}

TP_COLD tp_status tp_fail_within(tp_status status, const char *operation, const char *context)
{
    char inner[TP_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", thread_message);
    return tp_fail(status, "%s: %s%s", operation, context, inner);
}

TP_COLD tp_status tp_unsupported(const tp_backend *backend, const char *operation)
{
    return tp_fail(TP_ERR_UNSUPPORTED, "the %s backend does not support %s", backend->name, operation);
}

const char *tp_version_string(void)
{
    return TPEVENT_VERSION_STRING;
}
