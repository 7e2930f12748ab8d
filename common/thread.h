/*
 * Threads of tpevent's own, and what their timed waits wait on.
 */
#ifndef TPEVENT_COMMON_THREAD_H
#define TPEVENT_COMMON_THREAD_H

#include "common/clock.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

/* A detached thread started with every signal blocked (it inherits the mask), so
 * that the application's handlers run on its own threads, never in the middle of
 * tpevent's work. Returns pthread_create's error (0: started). */
static inline int tp_thread_start_detached(void *(*main)(void *), void *arg)
{
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err != 0)
        return err;
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_t thread;
    err = pthread_create(&thread, &attr, main, arg);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attr);
    return err;
}

/* A condition variable whose timed waits run on CLOCK_MONOTONIC, as tp_now_ns: a
 * change of the wall clock neither cuts them short nor stretches them. */
static inline void tp_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

/* Waits on a tp_cond_init_monotonic condition, `lock` held, at most `ns` from now
 * (a signal or a spurious wake-up ends it sooner: callers look again). */
static inline void tp_cond_wait_for_ns(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t ns)
{
    uint64_t until_ns = tp_now_ns() + ns;
    struct timespec until = {(time_t)(until_ns / 1000000000u), (long)(until_ns % 1000000000u)};
    (void)pthread_cond_timedwait(cond, lock, &until);
}

#endif /* TPEVENT_COMMON_THREAD_H */
