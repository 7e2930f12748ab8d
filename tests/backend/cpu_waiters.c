/*
 * The CPU backend's worker and the threads that sleep on its progress: a thread
 * that waits for a record sleeps until that record is reached, and is not woken by
 * every task the stream completes before it. Each such wake-up took the queue's
 * lock from the worker between two tasks only to sleep again: 200 host functions
 * ran 5-9 % slower while a thread waited, and tp_measure always waits.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */

#include "check.h"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#define TASKS 200
#define TASK_NS 100000 /* long enough for the waiter to be past its spin, asleep */

static void spin_one_task(void *unused)
{
    (void)unused;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < TASK_NS);
}

typedef struct waiter {
    tp_event *event;
    tp_status status;
    long voluntary_switches; /* the waiter thread's, during its synchronize */
} waiter;

static void *synchronize_and_count_switches(void *arg)
{
    waiter *w = arg;
    struct rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    w->status = tp_event_synchronize(w->event);
    getrusage(RUSAGE_THREAD, &after);
    w->voluntary_switches = after.ru_nvcsw - before.ru_nvcsw;
    return NULL;
}

static int waiter_sleeps_through_tasks_before_its_record(unsigned flags)
{
    tp_stream *stream;
    waiter w = {0};
    CHECK_OK(tp_stream_create(&stream, "cpu:0", 0));
    CHECK_OK(tp_event_create(&w.event, "cpu:0", flags));
    for (int i = 0; i < TASKS; i++)
        CHECK_OK(tp_stream_launch_host_fn(stream, spin_one_task, NULL));
    CHECK_OK(tp_event_record(w.event, stream));

    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, synchronize_and_count_switches, &w) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_OK(w.status);
    /* Woken once per task before the fix: about TASKS switches; now a handful
     * (its one sleep, and whatever the scheduler does to a loaded machine). */
    if (w.voluntary_switches >= TASKS / 4)
        check_failed(__FILE__, __LINE__, "the waiter switched out %ld times during %d tasks", w.voluntary_switches,
                     TASKS);

    CHECK_OK(tp_event_destroy(w.event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(cpu_plain_waiter_is_not_woken_by_tasks_before_its_record)
{
    return waiter_sleeps_through_tasks_before_its_record(0);
}

TEST(cpu_blocking_waiter_is_not_woken_by_tasks_before_its_record)
{
    return waiter_sleeps_through_tasks_before_its_record(TP_EVENT_BLOCKING);
}
