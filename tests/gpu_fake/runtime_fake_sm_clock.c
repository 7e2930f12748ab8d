/*
 * The simulated device's SM clock (runtime_fake.h, "SM clock"), for tp_measure's reader
 * (backends/gpu/gpu_sm_clock.c): a counter of cycles that the marks read with the
 * device's event clock (runtime_fake_clock.c), as a kernel reads %clock64 and
 * %globaltimer. Between two marks the counter runs at TPEVENT_FAKE_SM_CLOCK_MHZ, or at
 * TPEVENT_FAKE_SM_CLOCK_LOW_MHZ inside the pairs that are lowered: every
 * TPEVENT_FAKE_SM_CLOCK_LOW_EVERY-th pair and the first TPEVENT_FAKE_SM_CLOCK_RAMP
 * ones (marks come in pairs, before and after a stretch, counted over the process).
 * A mark is a runtime host function: it runs in stream order, which is all a mark
 * needs. A setting that does not parse fails the process at once, as the clock's do.
 */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "common/env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define FAKE_SM_CLOCK_MHZ 1980    /* an H100's maximum */
#define FAKE_SM_CLOCK_LOW_MHZ 345 /* its idle clock */
#define FAKE_SM_CLOCK_MAX_MHZ 100000

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    uint64_t mhz, low_mhz, max_mhz, low_every, ramp;
    uint64_t marks;   /* marks written so far, under lock */
    uint64_t last_ns; /* the last mark's time, under lock */
    double cycles;    /* the counter, under lock */
} sm_clock = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t setting(const char *name, uint64_t max, uint64_t fallback)
{
    char message[160];
    uint64_t value = fallback;
    if (!tp_env_count(name, 0, max, fallback, &value, message, sizeof message)) {
        fprintf(stderr, "fake GPU: %s\n", message);
        abort();
    }
    return value;
}

static void settings_read(void)
{
    sm_clock.mhz = setting("TPEVENT_FAKE_SM_CLOCK_MHZ", FAKE_SM_CLOCK_MAX_MHZ, FAKE_SM_CLOCK_MHZ);
    sm_clock.low_mhz = setting("TPEVENT_FAKE_SM_CLOCK_LOW_MHZ", FAKE_SM_CLOCK_MAX_MHZ, FAKE_SM_CLOCK_LOW_MHZ);
    sm_clock.max_mhz = setting("TPEVENT_FAKE_SM_CLOCK_MAX_MHZ", FAKE_SM_CLOCK_MAX_MHZ, sm_clock.mhz);
    sm_clock.low_every = setting("TPEVENT_FAKE_SM_CLOCK_LOW_EVERY", 1000000, 0);
    sm_clock.ramp = setting("TPEVENT_FAKE_SM_CLOCK_RAMP", 1000000, 0);
}

static atomic_ulong max_queries;

unsigned long fake_sm_clock_max_queries(void)
{
    return atomic_load(&max_queries);
}

double fake_sm_clock_max_mhz(void)
{
    atomic_fetch_add(&max_queries, 1);
    pthread_once(&sm_clock.once, settings_read);
    return (double)sm_clock.max_mhz;
}

/* Whether the pair of marks that `mark` ends (an odd mark) runs at the low clock. */
static bool pair_lowered(uint64_t mark)
{
    uint64_t pair = mark / 2;
    return mark % 2 == 1 && (pair < sm_clock.ramp || (sm_clock.low_every && (pair + 1) % sm_clock.low_every == 0));
}

static void mark_write(void *arg)
{
    uint64_t *mark = arg;
    pthread_mutex_lock(&sm_clock.lock);
    uint64_t now = fake_device_now_ns(), index = sm_clock.marks++;
    if (sm_clock.last_ns) {
        uint64_t mhz = pair_lowered(index) ? sm_clock.low_mhz : sm_clock.mhz;
        sm_clock.cycles += (double)(now - sm_clock.last_ns) * (double)mhz / 1000.0;
    }
    sm_clock.last_ns = now;
    mark[0] = (uint64_t)sm_clock.cycles;
    mark[1] = now;
    pthread_mutex_unlock(&sm_clock.lock);
}

rt_error fake_sm_clock_launch(rt_stream s, uint64_t *mark)
{
    pthread_once(&sm_clock.once, settings_read);
    return fake_launch_host_fn(s, mark_write, mark);
}
