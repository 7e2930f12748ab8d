/*
 * The trace's file (tp_trace_stop, core/trace.c). What is at the path decides how
 * it is written:
 *
 *   - nothing, a regular file, or a symbolic link that leads anywhere but to a FIFO
 *     or a character device: to a new file next to the path, renamed onto it, so
 *     that whatever is at the path (a symbolic link to another of the user's files,
 *     in a shared temporary folder) is replaced, never followed and truncated, and a
 *     reader never sees half a trace. The new file is created with O_EXCL |
 *     O_NOFOLLOW, mode 0666 less the umask, as fopen would.
 *   - a FIFO or a character device (/dev/null, a terminal), or a symbolic link to
 *     one (/dev/stdout, /dev/fd/N): into it, as it is. Renaming over it would put a
 *     regular file in its place (run as root, over the machine's /dev/full).
 *   - a directory, a socket, a block device: refused at once.
 *
 * Everything waits within one limit, the trace's stop timeout
 * (TPEVENT_TRACE_STOP_TIMEOUT_MS, read by tp_trace_start, default 10000): first the
 * trace's records, all of them, before anything at the path is opened, then a
 * FIFO's reader. A record that a host function that never returns holds back, or a
 * FIFO nobody reads, fails the stop with TP_ERR_NOT_READY instead of hanging it, and
 * the trace is dropped, the path left as it was.
 */
#include "core/trace.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum path_kind { PATH_FILE, PATH_FIFO, PATH_DEVICE } path_kind;

TP_COLD static tp_status cannot_write(const char *path, const char *what, int error)
{
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "tp_trace_stop: cannot write the trace to \"%s\": %s: %s (the trace is stopped and its "
                   "records dropped)",
                   path, what, strerror(error));
}

static bool is_stream(mode_t mode)
{
    return S_ISFIFO(mode) || S_ISCHR(mode);
}

static const char *type_name(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISSOCK(mode) ? "a socket" : S_ISBLK(mode) ? "a block device" : "special";
}

/* How to write at `path`, or a refusal. A path lstat cannot see is a new file:
 * creating it says why it cannot be. */
static tp_status path_kind_of(const char *path, path_kind *kind)
{
    struct stat st;
    *kind = PATH_FILE;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
        return TP_OK;
    if (S_ISLNK(st.st_mode) && (stat(path, &st) != 0 || !is_stream(st.st_mode)))
        return TP_OK; /* replaced, as a link to a regular file always was */
    if (is_stream(st.st_mode)) {
        *kind = S_ISFIFO(st.st_mode) ? PATH_FIFO : PATH_DEVICE;
        return TP_OK;
    }
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "tp_trace_stop: cannot write the trace to \"%s\": it is %s, not a regular file, a FIFO or a "
                   "character device (the trace is stopped and its records dropped)",
                   path, type_name(st.st_mode));
}

/* ------------------------------------------------------ a regular file */

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

/* Writes the JSON to f and closes it; TP_OK or why not (naming `path`). */
static tp_status write_and_close(const trace_state *trace, FILE *f, const char *path, uint64_t deadline_ns)
{
    tp_status status = tp_trace_write_json(trace, f, deadline_ns);
    int failed = ferror(f), error = errno;
    if (fclose(f) != 0 && !failed)
        failed = 1, error = errno;
    if (status == TP_OK && failed)
        status = cannot_write(path, "writing", error);
    return status;
}

static tp_status write_regular_file(const trace_state *trace, const char *path, uint64_t deadline_ns)
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
    tp_status status = write_and_close(trace, f, path, deadline_ns);
    if (status == TP_OK && rename(temp, path) != 0)
        status = cannot_write(path, "renaming the new file onto it", errno);
    if (status != TP_OK)
        unlink(temp);
    free(temp);
    return status;
}

/* ------------------------------------------ a FIFO or a character device */

/* Opens it for writing. A FIFO's plain open would wait for a reader for good: it is
 * tried without waiting (ENXIO: no reader yet) until the deadline. -1 with errno
 * (ETIMEDOUT: no reader came). */
static int open_stream(const char *path, path_kind kind, uint64_t deadline_ns)
{
    uint64_t pause_ns = 1000000;
    for (;;) {
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0) {
            int flags = fcntl(fd, F_GETFL);
            if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0)
                return fd;
            int error = errno;
            close(fd);
            errno = error;
            return -1;
        }
        if (errno != ENXIO || kind != PATH_FIFO)
            return -1;
        uint64_t now = tp_now_ns();
        if (now >= deadline_ns) {
            errno = ETIMEDOUT;
            return -1;
        }
        tp_sleep_ns(pause_ns < deadline_ns - now ? pause_ns : deadline_ns - now);
        pause_ns = pause_ns < 10000000 ? pause_ns * 2 : pause_ns;
    }
}

/* A FIFO whose reader has gone raises SIGPIPE at the write, which would end the
 * process: it is blocked in this thread while writing, and the one a write raised
 * is taken back, so that the stop fails with EPIPE instead. */
typedef struct pipe_guard {
    sigset_t old;
    bool was_pending;
} pipe_guard;

static void sigpipe_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGPIPE);
}

static void pipe_guard_begin(pipe_guard *guard)
{
    sigset_t pipe, pending;
    sigpipe_set(&pipe);
    pthread_sigmask(SIG_BLOCK, &pipe, &guard->old);
    guard->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

static void pipe_guard_end(pipe_guard *guard, bool broke)
{
    sigset_t pipe;
    sigpipe_set(&pipe);
    struct timespec now = {0, 0};
    if (broke && !guard->was_pending)
        while (sigtimedwait(&pipe, NULL, &now) == SIGPIPE)
            ;
    pthread_sigmask(SIG_SETMASK, &guard->old, NULL);
}

static tp_status write_stream(const trace_state *trace, const char *path, path_kind kind, uint64_t deadline_ns)
{
    int fd = open_stream(path, kind, deadline_ns);
    if (fd < 0 && errno == ETIMEDOUT)
        return tp_fail(TP_ERR_NOT_READY,
                       "tp_trace_stop: no reader opened the FIFO \"%s\" within the time allowed "
                       "(TPEVENT_TRACE_STOP_TIMEOUT_MS): the trace is dropped",
                       path);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !is_stream(st.st_mode))) {
        close(fd); /* replaced since it was looked at: nothing written to it */
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_trace_stop: \"%s\" is no longer a FIFO or a character device (the trace is stopped "
                       "and its records dropped)",
                       path);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int error = errno;
        if (fd >= 0)
            close(fd);
        return cannot_write(path, "opening it", error);
    }
    pipe_guard guard;
    pipe_guard_begin(&guard);
    tp_status status = write_and_close(trace, f, path, deadline_ns);
    pipe_guard_end(&guard, status != TP_OK);
    return status;
}

tp_status tp_trace_write_file(const trace_state *trace, const char *path)
{
    uint64_t deadline_ns = tp_now_ns() + trace->stop_timeout_ns;
    path_kind kind;
    tp_status status = path_kind_of(path, &kind);
    if (status == TP_OK)
        status = tp_trace_wait_records(trace, deadline_ns);
    if (status != TP_OK)
        return status;
    return kind == PATH_FILE ? write_regular_file(trace, path, deadline_ns)
                             : write_stream(trace, path, kind, deadline_ns);
}
