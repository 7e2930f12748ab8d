/*
 * tp_trace_stop against what round three's red team did to it (issue 31), one
 * check per run, each fast:
 *
 *   trace_hardening stop_in_host_fn DEV DIR   a stop from a host function on a stream
 *       with a range open is refused at once, and the trace goes on (item 2)
 *   trace_hardening stop_timeout DEV DIR      a record held back by a host function
 *       fails the stop after TPEVENT_TRACE_STOP_TIMEOUT_MS, leaves no file, and the
 *       next trace works (item 8)
 *   trace_hardening symlink DIR               a symbolic link at the path is replaced,
 *       its target left alone (item 7)
 *   trace_hardening memory DIR                a large trace gives its memory back at
 *       stop (item 9; glibc's mallinfo2, where the allocator is glibc's)
 *   trace_hardening room DIR                  a second trace as large as the first
 *       allocates nothing in its traced calls (issue 52)
 *   trace_hardening room_events DIR           the same for a trace of 1000 events
 *       recorded once each (the table of events' marks is kept too)
 *   trace_hardening room_names DIR            the same for a trace of 1000 ranges of
 *       names of their own (the names and their index are kept too)
 *   trace_hardening max_ranges DIR            TPEVENT_TRACE_MAX_RANGES=4: the ranges
 *       past the cap are dropped, their pops still match, the file counts them (item 9)
 *   trace_hardening names DIR                 names that are not UTF-8 (Latin-1, a cut
 *       sequence, a surrogate, an overlong) are written with \ufffd per bad byte (item 3)
 */
#define _GNU_SOURCE

#include <tpevent/tpevent.h>

#include <dirent.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void one_range(tp_stream *s, const char *name)
{
    CHECK_OK(tp_range_push(s, name));
    CHECK_OK(tp_range_pop(s));
}

/* ------------------------------------------------------------- item 2 */

typedef struct stop_call {
    const char *path;
    tp_status status;
    char message[512];
} stop_call;

static void stop_from_host_fn(void *arg)
{
    stop_call *call = arg;
    call->status = tp_trace_stop(call->path);
    snprintf(call->message, sizeof call->message, "%s", tp_last_error());
}

static int stop_in_host_fn(const char *dev, const char *dir)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, dev, 0));
    stop_call call = {.path = path_in(dir, "stop_in_host_fn.json")};
    unlink(call.path);
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "open"));
    CHECK_OK(tp_stream_launch_host_fn(s, stop_from_host_fn, &call));
    CHECK_OK(tp_stream_synchronize(s)); /* before: never returned on a GPU stream */
    printf("stop from the host function: %s: %s\n", tp_status_name(call.status), call.message);
    CHECK(call.status == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(call.message, "host function"));
    CHECK(tp_trace_start() == TP_ERR_INVALID_ARGUMENT); /* still running */
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_trace_stop(call.path));
    CHECK(access(call.path, F_OK) == 0);
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* ------------------------------------------------------------- item 8 */

static void hold_until_released(void *arg)
{
    atomic_bool *released = arg;
    struct timespec ms = {0, 1000000};
    while (!atomic_load(released))
        nanosleep(&ms, NULL);
}

static int no_temporary_files(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d);
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        found += strstr(e->d_name, "stop_timeout.json.") != NULL;
    closedir(d);
    return found == 0;
}

static int stop_timeout(const char *dev, const char *dir)
{
    CHECK(setenv("TPEVENT_TRACE_STOP_TIMEOUT_MS", "100", 1) == 0);
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, dev, 0));
    const char *path = path_in(dir, "stop_timeout.json");
    unlink(path);
    atomic_bool released = false;
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "held"));
    CHECK_OK(tp_stream_launch_host_fn(s, hold_until_released, &released));
    CHECK_OK(tp_range_pop(s));
    double start = now_s();
    tp_status status = tp_trace_stop(path);
    double took = now_s() - start;
    printf("stop behind a held stream: %s after %.3f s: %s\n", tp_status_name(status), took, tp_last_error());
    CHECK(status == TP_ERR_NOT_READY);
    CHECK(strstr(tp_last_error(), "TPEVENT_TRACE_STOP_TIMEOUT_MS"));
    CHECK(took >= 0.09 && took < 5.0);
    CHECK(access(path, F_OK) != 0 && no_temporary_files(dir));
    atomic_store(&released, true);
    CHECK_OK(tp_stream_synchronize(s));
    CHECK_OK(tp_trace_start()); /* usable again */
    one_range(s, "after");
    CHECK_OK(tp_trace_stop(path));
    CHECK(access(path, F_OK) == 0);
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* ------------------------------------------------------------- item 7 */

static int symlink_at_path(const char *dir)
{
    const char *target = path_in(dir, "symlink_target.txt"), *link = path_in(dir, "symlink_trace.json");
    const char *dangling = path_in(dir, "dangling_trace.json"), *would_create = path_in(dir, "dangling_target.txt");
    unlink(link), unlink(dangling), unlink(would_create);
    FILE *f = fopen(target, "w");
    CHECK(f && fputs("keep\n", f) >= 0 && fclose(f) == 0);
    CHECK(symlink(target, link) == 0);
    CHECK(symlink(would_create, dangling) == 0);
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tp_trace_start());
        one_range(s, "linked");
        CHECK_OK(tp_trace_stop(i ? dangling : link));
    }
    char text[16] = "";
    f = fopen(target, "r");
    CHECK(f && fgets(text, sizeof text, f));
    fclose(f);
    CHECK(strcmp(text, "keep\n") == 0);
    CHECK(access(would_create, F_OK) != 0);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(lstat(dangling, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* ------------------------------------------------------------- item 9 */

static int memory_given_back(const char *dir)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    const char *path = path_in(dir, "memory.json");
    CHECK_OK(tp_trace_start()); /* a small trace first: what every trace keeps */
    one_range(s, "small");
    CHECK_OK(tp_trace_stop(path));
    size_t before = mallinfo2().uordblks;
    CHECK_OK(tp_trace_start());
    for (int i = 0; i < 100000; i++)
        one_range(s, "large");
    size_t during = mallinfo2().uordblks;
    CHECK_OK(tp_trace_stop(path));
    size_t after = mallinfo2().uordblks;
    printf("heap in use: %zu before, %zu during, %zu after a trace of 100000 ranges\n", before, during, after);
    /* Stop keeps room for a next trace of moderate size (core/trace.c, KEPT_*: 12288
     * pooled events, ~1.9 MB of CPU events), and gives back the rest (~29 MB here). */
    CHECK(after < before + (4u << 20));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* --------------------------------------------------------- issue 52 */

/* The traced calls of a trace no larger than the one before allocate nothing: stop
 * keeps the room (pooled events, arrays) that trace grew. Before, each trace gave
 * back all above 1024 ranges and 256 marks and grew it again, call by call: a
 * record + wait, a flow each, cost twice the CPU's marks themselves. */
static size_t traced_growth(tp_stream *s, tp_stream *w, tp_event *e, const char *path)
{
    CHECK_OK(tp_trace_start());
    size_t before = mallinfo2().uordblks;
    for (int i = 0; i < 1500; i++) {
        CHECK_OK(tp_event_record(e, s));
        CHECK_OK(tp_stream_wait_event(w, e));
        one_range(s, "r");
    }
    size_t grown = mallinfo2().uordblks - before;
    CHECK_OK(tp_stream_synchronize(w));
    CHECK_OK(tp_trace_stop(path));
    return grown;
}

/* A trace that records each of `count` events once: the heap its traced calls grew. */
static size_t traced_growth_of_events(tp_stream *s, tp_event **events, int count, const char *path)
{
    CHECK_OK(tp_trace_start());
    size_t before = mallinfo2().uordblks;
    for (int i = 0; i < count; i++)
        CHECK_OK(tp_event_record(events[i], s));
    size_t grown = mallinfo2().uordblks - before;
    CHECK_OK(tp_stream_synchronize(s));
    CHECK_OK(tp_trace_stop(path));
    return grown;
}

/* Marks are kept for KEPT_MARKS (core/trace.c); so must the table that finds an
 * event's mark be, or a second trace of as many events regrows it record by record. */
static int room_kept_for_many_events(const char *dir)
{
    enum { EVENTS = 1000 };
    static tp_event *events[EVENTS];
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    for (int i = 0; i < EVENTS; i++)
        CHECK_OK(tp_event_create(&events[i], "cpu:0", TP_EVENT_DEFAULT));
    const char *path = path_in(dir, "room_events.json");
    size_t first = traced_growth_of_events(s, events, EVENTS, path);
    size_t second = traced_growth_of_events(s, events, EVENTS, path);
    printf("heap grown by records of %d events: %zu bytes in a first trace, %zu in a second as large\n", EVENTS, first,
           second);
    CHECK(first > 0 || mallinfo2().uordblks == 0); /* 0 in all: not glibc's heap (a sanitizer's) */
    CHECK(second < 4096);
    for (int i = 0; i < EVENTS; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* A trace of `count` ranges named "range <i>" on `s`: the heap its traced calls grew. */
static size_t traced_growth_of_names(tp_stream *s, int count, const char *path)
{
    static char names[1000][24];
    for (int i = 0; i < count; i++)
        snprintf(names[i], sizeof names[i], "range %d", i);
    CHECK_OK(tp_trace_start());
    size_t before = mallinfo2().uordblks;
    for (int i = 0; i < count; i++)
        one_range(s, names[i]);
    size_t grown = mallinfo2().uordblks - before;
    CHECK_OK(tp_stream_synchronize(s));
    CHECK_OK(tp_trace_stop(path));
    return grown;
}

/* Ranges are kept for KEPT_RANGES (core/trace.c); so must their names be, or a second
 * trace of as many names regrows the names and their index push by push. */
static int room_kept_for_many_names(const char *dir)
{
    enum { NAMES = 1000 };
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    const char *path = path_in(dir, "room_names.json");
    size_t first = traced_growth_of_names(s, NAMES, path), second = traced_growth_of_names(s, NAMES, path);
    printf("heap grown by %d ranges of names of their own: %zu bytes in a first trace, %zu in a second as large\n",
           NAMES, first, second);
    CHECK(first > 0 || mallinfo2().uordblks == 0); /* 0 in all: not glibc's heap (a sanitizer's) */
    CHECK(second < 4096);
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

static int room_kept(const char *dir)
{
    tp_stream *s, *w;
    tp_event *e;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    CHECK_OK(tp_stream_create(&w, "cpu:0", 0));
    CHECK_OK(tp_event_create(&e, "cpu:0", TP_EVENT_DEFAULT));
    const char *path = path_in(dir, "room.json");
    size_t first = traced_growth(s, w, e, path), second = traced_growth(s, w, e, path);
    printf(
        "heap grown by 1500 traced records + waits and 1500 ranges: %zu bytes in a first trace, %zu in a "
        "second as large\n",
        first, second);
    CHECK(first > 0 || mallinfo2().uordblks == 0); /* 0 in all: not glibc's heap (a sanitizer's) */
    CHECK(second < 4096);
    CHECK_OK(tp_event_destroy(e));
    CHECK_OK(tp_stream_destroy(w));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

/* ------------------------------------------------------ items 3 and 9 */

static char *read_file(const char *path)
{
    static char buffer[1 << 16];
    FILE *f = fopen(path, "r");
    CHECK(f);
    size_t n = fread(buffer, 1, sizeof buffer - 1, f);
    fclose(f);
    buffer[n] = '\0';
    return buffer;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, what)); at += strlen(what))
        n++;
    return n;
}

static int max_ranges(const char *dir)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    const char *path = path_in(dir, "max_ranges.json");
    CHECK(setenv("TPEVENT_TRACE_MAX_RANGES", "4", 1) == 0);
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "outer"));
    for (int i = 0; i < 5; i++) /* 3 fit, 2 are dropped */
        one_range(s, "inner");
    CHECK_OK(tp_range_pop(s)); /* outer's own pop, not a dropped one's */
    one_range(s, "dropped");
    CHECK(tp_range_pop(s) == TP_ERR_INVALID_ARGUMENT); /* nothing open */
    CHECK_OK(tp_trace_stop(path));
    const char *text = read_file(path);
    CHECK(strstr(text, "\"max_ranges\":4,\"dropped_ranges\":3,"));
    CHECK(count_of(text, "\"ph\":\"X\"") == 4 && count_of(text, "\"name\":\"inner\"") == 3);
    CHECK(count_of(text, "\"name\":\"dropped\"") == 0);
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

static int names(const char *dir)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    const char *path = path_in(dir, "names.json");
    const char *bad[] = {"latin1-caf\xe9", "cut-\xc3", "surrogate-\xed\xa0\x80", "overlong-\xc0\xaf", "ok-caf\xc3\xa9"};
    const char *written[] = {"\"latin1-caf\\ufffd\"", "\"cut-\\ufffd\"", "\"surrogate-\\ufffd\\ufffd\\ufffd\"",
                             "\"overlong-\\ufffd\\ufffd\"", "\"ok-caf\xc3\xa9\""};
    CHECK_OK(tp_trace_start());
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        one_range(s, bad[i]);
    CHECK_OK(tp_trace_stop(path));
    const char *text = read_file(path);
    for (size_t i = 0; i < sizeof written / sizeof *written; i++)
        if (!strstr(text, written[i])) {
            fprintf(stderr, "%s not in %s\n", written[i], path);
            return 1;
        }
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    tp_stream *probe = NULL;
    if (argc == 4 && tp_stream_default(argv[2], &probe) != TP_OK) {
        printf("skipped: %s: %s\n", argv[2], tp_last_error()); /* a GPU not usable here */
        return 77;
    }
    if (argc == 4 && strcmp(argv[1], "stop_in_host_fn") == 0)
        return stop_in_host_fn(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "stop_timeout") == 0)
        return stop_timeout(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "symlink") == 0)
        return symlink_at_path(argv[2]);
    if (argc == 3 && strcmp(argv[1], "memory") == 0)
        return memory_given_back(argv[2]);
    if (argc == 3 && strcmp(argv[1], "room") == 0)
        return room_kept(argv[2]);
    if (argc == 3 && strcmp(argv[1], "room_events") == 0)
        return room_kept_for_many_events(argv[2]);
    if (argc == 3 && strcmp(argv[1], "room_names") == 0)
        return room_kept_for_many_names(argv[2]);
    if (argc == 3 && strcmp(argv[1], "max_ranges") == 0)
        return max_ranges(argv[2]);
    if (argc == 3 && strcmp(argv[1], "names") == 0)
        return names(argv[2]);
    fprintf(stderr,
            "usage: %s stop_in_host_fn DEV DIR | stop_timeout DEV DIR | symlink DIR | memory DIR | room DIR | "
            "room_events DIR | room_names DIR | max_ranges DIR | names DIR\n",
            argv[0]);
    return 2;
}
