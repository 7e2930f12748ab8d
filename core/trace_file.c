/*
 * The trace's file (tp_trace_stop, core/trace.c): written to a new file next to
 * the path and renamed onto it, so that whatever is at the path (a symbolic link
 * to another of the user's files, in a shared temporary folder) is replaced, never
 * followed and truncated, and a reader never sees half a trace. The new file is
 * created with O_EXCL | O_NOFOLLOW, mode 0666 less the umask, as fopen would.
 *
 * The write waits for the trace's records, all of them within one limit,
 * TPEVENT_TRACE_STOP_TIMEOUT_MS (default 10000): a record that a host function
 * that never returns holds back fails the stop with TP_ERR_NOT_READY instead of
 * hanging it, and the trace is dropped, the path left as it was.
 */
#include "core/trace.h"
#include "common/clock.h"
#include "common/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STOP_TIMEOUT_MS_DEFAULT 10000

static uint64_t stop_deadline(void)
{
    const char *text = tp_env("TPEVENT_TRACE_STOP_TIMEOUT_MS");
    long ms = text ? strtol(text, NULL, 10) : 0;
    return tp_now_ns() + (uint64_t)(ms > 0 ? ms : STOP_TIMEOUT_MS_DEFAULT) * 1000000u;
}

TP_COLD static tp_status cannot_write(const char *path, const char *what, int error)
{
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "tp_trace_stop: cannot write the trace to \"%s\": %s: %s (the trace is stopped and its "
                   "records dropped)",
                   path, what, strerror(error));
}

/* A new file next to `path`, named after it; -1 with errno. */
static int create_next_to(const char *path, char *temp, size_t temp_size)
{
    static atomic_uint counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned n = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
        if ((size_t)snprintf(temp, temp_size, "%s.%ld.%u.tmp", path, (long)getpid(), n) >= temp_size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

tp_status tp_trace_write_file(const trace_state *trace, const char *path)
{
    size_t temp_size = strlen(path) + 64;
    char *temp = malloc(temp_size);
    if (!temp)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_trace_stop: out of memory writing the trace");
    int fd = create_next_to(path, temp, temp_size);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int error = errno;
        if (fd >= 0)
            close(fd), unlink(temp);
        free(temp);
        return cannot_write(path, "creating a new file next to it", error);
    }
    tp_status status = tp_trace_write_json(trace, f, stop_deadline());
    int failed = ferror(f), error = errno;
    if (fclose(f) != 0 && !failed)
        failed = 1, error = errno;
    if (status == TP_OK && failed)
        status = cannot_write(path, "writing", error);
    if (status == TP_OK && rename(temp, path) != 0)
        status = cannot_write(path, "renaming the new file onto it", errno);
    if (status != TP_OK)
        unlink(temp);
    free(temp);
    return status;
}
