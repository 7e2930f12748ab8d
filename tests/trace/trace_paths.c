/*
 * tp_trace_stop at paths that are not regular files, and tp_trace_start's settings
 * (issue 47, items 1 and 4), one check per run:
 *
 *   trace_paths fifo DIR             a FIFO with a reader, and a symbolic link to it (as
 *       /dev/stdout is to a pipe): the reader gets the whole trace, the FIFO stays one
 *   trace_paths fifo_no_reader DIR   a FIFO nobody opens: TP_ERR_NOT_READY after the
 *       stop timeout (TPEVENT_TRACE_STOP_TIMEOUT_MS), still a FIFO
 *   trace_paths fifo_reader_gone DIR a reader that leaves before the trace is written:
 *       the stop fails with EPIPE, and SIGPIPE does not end the process
 *   trace_paths device DIR           a character device: /dev/null, still one after
 *       (as root, a copy of its node in DIR first, so that a stop that would rename
 *       over it never reaches the machine's own)
 *   trace_paths refused DIR          a directory and a socket: refused at once, left as
 *       they were, even with a record held back (no wait for it)
 *   trace_paths settings DIR         TPEVENT_TRACE_STOP_TIMEOUT_MS and
 *       TPEVENT_TRACE_MAX_RANGES out of range: tp_trace_start refuses, naming them
 */
#define _GNU_SOURCE

#include <tpevent/tpevent.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CHECK(expr)                                                                                               \
    do {                                                                                                          \
        if (!(expr)) {                                                                                            \
            fprintf(stderr, "%s:%d: FAILED: %s\n  last error: %s\n", __FILE__, __LINE__, #expr, tp_last_error()); \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)
#define CHECK_OK(call) CHECK((call) == TP_OK)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *path_in(const char *dir, const char *name)
{
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", dir, name);
    return path;
}

static tp_stream *stream;

/* A trace of `ranges` ranges on the stream, stopped at `path`. */
static tp_status trace_to(const char *path, int ranges)
{
    CHECK_OK(tp_trace_start());
    for (int i = 0; i < ranges; i++) {
        CHECK_OK(tp_range_push(stream, "range"));
        CHECK_OK(tp_range_pop(stream));
    }
    return tp_trace_stop(path);
}

static mode_t type_of(const char *path)
{
    struct stat st;
    CHECK(lstat(path, &st) == 0);
    return st.st_mode & S_IFMT;
}

static const char *fresh_fifo(const char *dir, const char *name)
{
    const char *path = path_in(dir, name);
    unlink(path);
    CHECK(mkfifo(path, 0600) == 0);
    return path;
}

/* ------------------------------------------------------------- FIFOs */

typedef struct reader {
    const char *path;
    bool leave_at_once; /* close without reading */
    char text[1 << 16];
    size_t length;
    pthread_t thread;
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    int fd = open(r->path, O_RDONLY | O_CLOEXEC); /* waits for the writer */
    CHECK(fd >= 0);
    ssize_t n = 0;
    while (!r->leave_at_once && (n = read(fd, r->text + r->length, sizeof r->text - 1 - r->length)) > 0)
        r->length += (size_t)n;
    r->text[r->length] = '\0';
    close(fd);
    return NULL;
}

static void reader_start(reader *r, const char *path, bool leave_at_once)
{
    r->path = path, r->leave_at_once = leave_at_once, r->length = 0;
    CHECK(pthread_create(&r->thread, NULL, read_all, r) == 0);
}

/* Joins the reader, first letting it out of its open if no writer ever came. */
static void reader_join(reader *r)
{
    int fd = open(r->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    CHECK(pthread_join(r->thread, NULL) == 0);
}

static int fifo(const char *dir)
{
    const char *path = fresh_fifo(dir, "trace.fifo"), *link = path_in(dir, "trace.fifo.link");
    unlink(link);
    CHECK(symlink(path, link) == 0);
    const char *targets[] = {path, link};
    for (int i = 0; i < 2; i++) {
        static reader r;
        reader_start(&r, path, false);
        tp_status status = trace_to(targets[i], 3);
        reader_join(&r);
        printf("%s: %s, the reader got %zu bytes\n", targets[i], tp_status_name(status), r.length);
        CHECK_OK(status);
        CHECK(strncmp(r.text, "{\"displayTimeUnit\":\"ns\"", 23) == 0 && strstr(r.text, "\n]}\n"));
        CHECK(strstr(r.text, "\"name\":\"range\""));
        CHECK(type_of(path) == S_IFIFO && type_of(link) == S_IFLNK);
    }
    return 0;
}

static int fifo_no_reader(const char *dir)
{
    const char *path = fresh_fifo(dir, "unread.fifo");
    CHECK(setenv("TPEVENT_TRACE_STOP_TIMEOUT_MS", "200", 1) == 0);
    double start = now_s();
    tp_status status = trace_to(path, 1);
    double took = now_s() - start;
    printf("a FIFO nobody reads: %s after %.3f s: %s\n", tp_status_name(status), took, tp_last_error());
    CHECK(status == TP_ERR_NOT_READY);
    CHECK(strstr(tp_last_error(), "TPEVENT_TRACE_STOP_TIMEOUT_MS") && strstr(tp_last_error(), path));
    CHECK(took >= 0.19 && took < 10.0);
    CHECK(type_of(path) == S_IFIFO);
    return 0;
}

static int fifo_reader_gone(const char *dir)
{
    const char *path = fresh_fifo(dir, "gone.fifo");
    static reader r;
    reader_start(&r, path, true);
    /* More than a pipe holds (64 KiB): the writer meets the closed end, whenever it closes. */
    tp_status status = trace_to(path, 3000);
    reader_join(&r);
    printf("a reader that left: %s: %s\n", tp_status_name(status), tp_last_error());
    CHECK(status == TP_ERR_INVALID_ARGUMENT && strstr(tp_last_error(), strerror(EPIPE)));
    CHECK(type_of(path) == S_IFIFO);
    CHECK_OK(trace_to(path_in(dir, "after_gone.json"), 1)); /* still alive, and usable */
    return 0;
}

/* ----------------------------------------------------- character devices */

static void trace_to_device(const char *path)
{
    tp_status status = trace_to(path, 3);
    printf("%s: %s%s%s\n", path, tp_status_name(status), status ? ": " : "", status ? tp_last_error() : "");
    CHECK_OK(status);
    CHECK(type_of(path) == S_IFCHR);
}

static int device(const char *dir)
{
    if (geteuid() == 0) {
        struct stat null;
        const char *copy = path_in(dir, "null.node");
        unlink(copy);
        CHECK(stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode));
        if (mknod(copy, S_IFCHR | 0666, null.st_rdev) != 0) {
            printf("skipped: root, but mknod of a copy of /dev/null in %s failed: %s\n", dir, strerror(errno));
            return 77;
        }
        trace_to_device(copy); /* fails here, before /dev/null, were it renamed over */
        unlink(copy);
    }
    trace_to_device("/dev/null");
    return 0;
}

/* ------------------------------------------------------------- refused */

static void hold_until_released(void *arg)
{
    atomic_bool *released = arg;
    while (!atomic_load(released))
        usleep(1000);
}

/* The stop is refused before it waits for a record, here held back past the timeout. */
static void refused_at(const char *path, const char *what)
{
    atomic_bool released = false;
    CHECK(setenv("TPEVENT_TRACE_STOP_TIMEOUT_MS", "3000", 1) == 0);
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(stream, "held"));
    CHECK_OK(tp_stream_launch_host_fn(stream, hold_until_released, &released));
    CHECK_OK(tp_range_pop(stream));
    tp_status status = tp_trace_stop(path);
    printf("%s: %s: %s\n", path, tp_status_name(status), tp_last_error());
    atomic_store(&released, true);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(status == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), what) && strstr(tp_last_error(), path));
}

static int refused(const char *dir)
{
    const char *folder = path_in(dir, "a_folder");
    CHECK(mkdir(folder, 0700) == 0 || errno == EEXIST);
    refused_at(folder, "it is a directory, not a regular file");
    CHECK(type_of(folder) == S_IFDIR);

    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if ((size_t)snprintf(address.sun_path, sizeof address.sun_path, "%s", path_in(dir, "socket")) >=
        sizeof address.sun_path) {
        printf("the socket case is left out: %s is too long a folder for a socket's path\n", dir);
        return 0;
    }
    unlink(address.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&address, sizeof address) == 0);
    refused_at(address.sun_path, "it is a socket");
    CHECK(type_of(address.sun_path) == S_IFSOCK);
    close(fd);
    unlink(address.sun_path);
    return 0;
}

/* ------------------------------------------------------------ settings */

static void start_refused(const char *dir, const char *name, const char *value, const char *range)
{
    CHECK(setenv(name, value, 1) == 0);
    tp_status status = tp_trace_start();
    printf("%s=%s: %s: %s\n", name, value, tp_status_name(status), status ? tp_last_error() : "");
    if (status == TP_OK)
        (void)tp_trace_stop(path_in(dir, "not_refused.json")); /* none left running for the next check */
    CHECK(status == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), name) && strstr(tp_last_error(), range));
    CHECK(unsetenv(name) == 0);
}

static int settings(const char *dir)
{
    const char *timeout_range = "from 1 to 86400000", *ranges_range = "from 1 to 4294967293";
    /* 2^64 / 10^6 ms and more: ms * 1000000 wrapped, and the stop dropped the trace at once. */
    const char *bad_timeouts[] = {
        "18446744073710", "9223372036854775807", "99999999999999999999999", "0", "-5", "abc", "10s", "86400001"};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof *bad_timeouts; i++)
        start_refused(dir, "TPEVENT_TRACE_STOP_TIMEOUT_MS", bad_timeouts[i], timeout_range);
    const char *bad_ranges[] = {"0", "-1", "4294967294", "18446744073709551616", "12x", " 5"};
    for (size_t i = 0; i < sizeof bad_ranges / sizeof *bad_ranges; i++)
        start_refused(dir, "TPEVENT_TRACE_MAX_RANGES", bad_ranges[i], ranges_range);
    /* The largest of each is taken, and a trace under them is written. */
    CHECK(setenv("TPEVENT_TRACE_STOP_TIMEOUT_MS", "86400000", 1) == 0);
    CHECK(setenv("TPEVENT_TRACE_MAX_RANGES", "4294967293", 1) == 0);
    const char *path = path_in(dir, "settings.json");
    CHECK_OK(trace_to(path, 2));
    CHECK(type_of(path) == S_IFREG);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        fprintf(stderr, "usage: %s fifo|fifo_no_reader|fifo_reader_gone|device|refused|settings DIR\n", argv[0]);
        return 2;
    }
    CHECK_OK(tp_stream_create(&stream, "cpu:0", 0));
    static const struct {
        const char *name;
        int (*run)(const char *dir);
    } cases[] = {{"fifo", fifo},
                 {"fifo_no_reader", fifo_no_reader},
                 {"fifo_reader_gone", fifo_reader_gone},
                 {"device", device},
                 {"refused", refused},
                 {"settings", settings}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            int result = cases[i].run(argv[2]);
            CHECK_OK(tp_stream_destroy(stream));
            return result;
        }
    fprintf(stderr, "unknown case '%s'\n", argv[1]);
    return 2;
}
