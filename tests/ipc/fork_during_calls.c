/*
 * fork() while other threads are inside the library (issue 31, items 1 and 6):
 * the child must never find a lock held for good by a thread it does not have.
 * Item 1: threads push ranges, record and wait while a trace runs (the trace's
 * lock); the child starts with no trace and its own streams work, tracing
 * included. Item 6: threads record and query one event (its spinlock) while the
 * parent forks; the child records, queries and synchronizes that same event on its
 * own stream. And threads that create and destroy events (their structs reused
 * from the thread's cache, listed for the fork handlers all along) while the
 * parent forks: the child's own events work. alarm() bounds each child, so that a
 * hang shows as SIGALRM.
 */
#define _GNU_SOURCE

#include "ipc_support.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_SECONDS 10

#define CHILD_CHECK(expr)                                                                                  \
    do {                                                                                                   \
        if (!(expr)) {                                                                                     \
            fprintf(stderr, "child %s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, #expr, tp_last_error()); \
            _exit(__LINE__ % 250 + 1);                                                                     \
        }                                                                                                  \
    } while (0)

typedef struct busy_threads {
    const char *device;
    tp_event *shared; /* recorded and queried by every thread */
    bool trace;       /* push and pop ranges around the calls */
    bool churn;       /* also create, record, query and destroy an event of their own */
    atomic_bool stop;
    atomic_int rounds;
} busy_threads;

static void *busy_main(void *arg)
{
    busy_threads *b = arg;
    tp_stream *stream = NULL;
    tp_event *own = NULL;
    if (tp_stream_create(&stream, b->device, 0) != TP_OK || tp_event_create(&own, b->device, 0) != TP_OK)
        return NULL;
    while (!atomic_load(&b->stop)) {
        bool done;
        if (b->trace)
            (void)tp_range_push(stream, "busy");
        (void)tp_event_record(b->shared, stream);
        (void)tp_event_query(b->shared, &done);
        if (b->trace) {
            (void)tp_event_record(own, stream);
            (void)tp_stream_wait_event(stream, own);
            (void)tp_range_pop(stream);
        }
        tp_event *fresh = NULL;
        if (b->churn && tp_event_create(&fresh, b->device, 0) == TP_OK) {
            (void)tp_event_record(fresh, stream);
            (void)tp_event_query(fresh, &done);
            (void)tp_event_destroy(fresh);
        }
        atomic_fetch_add(&b->rounds, 1);
    }
    (void)tp_stream_synchronize(stream);
    (void)tp_event_destroy(own);
    (void)tp_stream_destroy(stream);
    return NULL;
}

static void child_main(busy_threads *b)
{
    alarm(CHILD_SECONDS);
    tp_stream *own = NULL;
    bool done = false;
    CHILD_CHECK(tp_stream_create(&own, b->device, 0) == TP_OK);
    CHILD_CHECK(tp_event_record(b->shared, own) == TP_OK); /* idle stream: reached at once */
    CHILD_CHECK(tp_event_query(b->shared, &done) == TP_OK && done);
    CHILD_CHECK(tp_event_synchronize(b->shared) == TP_OK);
    for (int i = 0; b->churn && i < 100; i++) {
        tp_event *fresh = NULL;
        CHILD_CHECK(tp_event_create(&fresh, b->device, 0) == TP_OK);
        CHILD_CHECK(tp_event_record(fresh, own) == TP_OK);
        CHILD_CHECK(tp_event_query(fresh, &done) == TP_OK && done);
        CHILD_CHECK(tp_event_destroy(fresh) == TP_OK);
    }
    if (b->trace) {
        /* No trace came across the fork; a new one works. */
        CHILD_CHECK(tp_trace_stop("/nonexistent-tpevent-dir/x.json") == TP_ERR_INVALID_ARGUMENT);
        CHILD_CHECK(strstr(tp_last_error(), "no trace is running") != NULL);
        CHILD_CHECK(tp_trace_start() == TP_OK);
        CHILD_CHECK(tp_range_push(own, "child") == TP_OK);
        CHILD_CHECK(tp_event_record(b->shared, own) == TP_OK);
        CHILD_CHECK(tp_range_pop(own) == TP_OK);
        CHILD_CHECK(tp_trace_stop("/nonexistent-tpevent-dir/x.json") == TP_ERR_INVALID_ARGUMENT);
    }
    CHILD_CHECK(tp_stream_destroy(own) == TP_OK);
    _exit(0);
}

/* Forks until `forks` children or `seconds` have passed, each child bounded. */
static int fork_while_busy(busy_threads *b, int max_forks, double seconds)
{
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&threads[i], NULL, busy_main, b) == 0);
    while (atomic_load(&b->rounds) < 100)
        sched_yield();
    int forks = 0;
    double stop_at = monotonic_seconds() + seconds;
    for (; forks < max_forks && monotonic_seconds() < stop_at; forks++) {
        fflush(NULL);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0)
            child_main(b);
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        if (WIFSIGNALED(status))
            printf("child %d was killed by signal %d%s\n", forks, WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    atomic_store(&b->stop, true);
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    printf("%d forks while two threads made %d rounds\n", forks, atomic_load(&b->rounds));
    return 0;
}

TEST(cpu_fork_while_threads_trace)
{
    busy_threads b = {.device = env->device, .shared = new_event(env->device, 0), .trace = true};
    CHECK_OK(tp_trace_start());
    fork_while_busy(&b, 10, 1.0);
    CHECK(tp_trace_stop("/nonexistent-tpevent-dir/x.json") == TP_ERR_INVALID_ARGUMENT); /* dropped */
    CHECK_OK(tp_event_destroy(b.shared));
    return 0;
}

TEST(cpu_fork_while_threads_record_one_event)
{
    busy_threads b = {.device = env->device, .shared = new_event(env->device, 0)};
    fork_while_busy(&b, 300, 0.6);
    CHECK_OK(tp_event_destroy(b.shared));
    return 0;
}

TEST(cpu_fork_while_threads_create_and_destroy_events)
{
    busy_threads b = {.device = env->device, .shared = new_event(env->device, 0), .churn = true};
    fork_while_busy(&b, 300, 0.6);
    CHECK_OK(tp_event_destroy(b.shared));
    return 0;
}
