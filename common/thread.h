/*
 * A detached thread of tpevent's own, started with every signal blocked (it
 * inherits the mask), so that the application's handlers run on its own threads,
 * never in the middle of tpevent's work. Returns pthread_create's error (0: started).
 */
#ifndef TPEVENT_COMMON_THREAD_H
#define TPEVENT_COMMON_THREAD_H

#include <pthread.h>
#include <signal.h>

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

#endif /* TPEVENT_COMMON_THREAD_H */
