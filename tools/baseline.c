#include "baseline.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/clock.h"

/* Called through a volatile pointer, so that the compiler can neither inline nor
 * drop the call: what is left is the call itself. */
__attribute__((noinline)) static void empty_call(void)
{
    __asm__ volatile("" ::: "memory");
}
static void (*volatile empty_function)(void) = empty_call;

void baseline_sample_empty(double *samples, size_t count, unsigned batch)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch; b++)
            empty_function();
        uint64_t after = tp_now_ns();
        samples[i] = (double)(after - before) / batch;
    }
}

void baseline_sample_clock(double *samples, size_t count, unsigned batch)
{
    for (size_t i = 0; i < count; i++) {
        struct timespec ignored;
        uint64_t before = tp_now_ns();
        for (unsigned b = 0; b < batch; b++)
            clock_gettime(CLOCK_MONOTONIC, &ignored);
        uint64_t after = tp_now_ns();
        samples[i] = (double)(after - before) / batch;
    }
}

struct baseline_ping_pong {
    pthread_t partner;
    pthread_mutex_t lock;
    pthread_cond_t pinged;
    pthread_cond_t ponged;
    uint64_t pings; /* sent by the caller */
    uint64_t pongs; /* answered by the partner */
    bool stopping;
};

static void *answer_pings(void *arg)
{
    baseline_ping_pong *ping_pong = arg;
    pthread_mutex_lock(&ping_pong->lock);
    for (;;) {
        while (ping_pong->pongs == ping_pong->pings && !ping_pong->stopping)
            pthread_cond_wait(&ping_pong->pinged, &ping_pong->lock);
        if (ping_pong->stopping)
            break;
        ping_pong->pongs = ping_pong->pings;
        pthread_cond_signal(&ping_pong->ponged);
    }
    pthread_mutex_unlock(&ping_pong->lock);
    return NULL;
}

baseline_ping_pong *baseline_ping_pong_start(void)
{
    baseline_ping_pong *ping_pong = calloc(1, sizeof *ping_pong);
    if (ping_pong == NULL)
        return NULL;
    pthread_mutex_init(&ping_pong->lock, NULL);
    pthread_cond_init(&ping_pong->pinged, NULL);
    pthread_cond_init(&ping_pong->ponged, NULL);
    int error = pthread_create(&ping_pong->partner, NULL, answer_pings, ping_pong);
    if (error != 0) {
        pthread_cond_destroy(&ping_pong->ponged);
        pthread_cond_destroy(&ping_pong->pinged);
        pthread_mutex_destroy(&ping_pong->lock);
        free(ping_pong);
        errno = error;
        return NULL;
    }
    return ping_pong;
}

void baseline_ping_pong_sample(baseline_ping_pong *ping_pong, double *samples, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t before = tp_now_ns();
        pthread_mutex_lock(&ping_pong->lock);
        uint64_t ping = ++ping_pong->pings;
        pthread_cond_signal(&ping_pong->pinged);
        while (ping_pong->pongs != ping)
            pthread_cond_wait(&ping_pong->ponged, &ping_pong->lock);
        pthread_mutex_unlock(&ping_pong->lock);
        uint64_t after = tp_now_ns();
        samples[i] = (double)(after - before);
    }
}

void baseline_ping_pong_stop(baseline_ping_pong *ping_pong)
{
    if (ping_pong == NULL)
        return;
    pthread_mutex_lock(&ping_pong->lock);
    ping_pong->stopping = true;
    pthread_cond_signal(&ping_pong->pinged);
    pthread_mutex_unlock(&ping_pong->lock);
    pthread_join(ping_pong->partner, NULL);
    pthread_cond_destroy(&ping_pong->ponged);
    pthread_cond_destroy(&ping_pong->pinged);
    pthread_mutex_destroy(&ping_pong->lock);
    free(ping_pong);
}
