/*
 * The simulated device's event clock (the time of a reached record): like the
 * H200's (8.7 ppm fast; -1.4 ppm on another day), but 40 ppm fast and far from the
 * host's, so that the GPU backend's conversion to CLOCK_MONOTONIC (gpu_clock.c) has
 * something to correct in CI. TPEVENT_FAKE_CLOCK_DRIFT_PPM sets another drift, fast
 * or slow ("-1000": 1000 ppm slow): exaggerated, it makes a drift that takes a GPU
 * tens of seconds to show in a test of a second or two (rule 13's
 * conformance.fake-drifting variant).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, for common/clock.h */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "common/clock.h"
#include "common/env.h" /* empty means unset, as for every TPEVENT_* variable */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define FAKE_CLOCK_DRIFT_PPM 40
#define FAKE_CLOCK_DRIFT_MAX_PPM 100000 /* 10 %: the clock still rises */
#define FAKE_CLOCK_OFFSET_NS UINT64_C(987654321000)

static double clock_drift; /* device ns gained per host ns */
static pthread_once_t clock_drift_once = PTHREAD_ONCE_INIT;

/* A setting that does not parse fails the process at once: a fake that ran on
 * another drift than the test asked would pass or fail for the wrong reason. Signed,
 * so not tp_env_count's. */
static void clock_drift_read(void)
{
    const char *text = tp_env("TPEVENT_FAKE_CLOCK_DRIFT_PPM");
    long ppm = FAKE_CLOCK_DRIFT_PPM;
    if (text) {
        char *end = NULL;
        errno = 0;
        ppm = strtol(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0' || ppm < -FAKE_CLOCK_DRIFT_MAX_PPM ||
            ppm > FAKE_CLOCK_DRIFT_MAX_PPM) {
            fprintf(stderr, "fake GPU: TPEVENT_FAKE_CLOCK_DRIFT_PPM=\"%.40s\": expected a whole number from %d to %d\n",
                    text, -FAKE_CLOCK_DRIFT_MAX_PPM, FAKE_CLOCK_DRIFT_MAX_PPM);
            abort();
        }
    }
    clock_drift = (double)ppm * 1e-6;
}

uint64_t fake_device_now_ns(void)
{
    pthread_once(&clock_drift_once, clock_drift_read);
    int64_t host = (int64_t)tp_now_ns(); /* CLOCK_MONOTONIC */
    /* A double holds the drift of a host time of days to the ns. */
    return FAKE_CLOCK_OFFSET_NS + (uint64_t)host + (uint64_t)(int64_t)((double)host * clock_drift);
}
