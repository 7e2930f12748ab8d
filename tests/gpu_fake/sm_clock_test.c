/*
 * tp_measure's SM clock on the fake GPU, whose clock is modelled (runtime_fake.h, "SM
 * clock"): run once per setting, by the case named in argv[1], each with the fake's
 * environment its CTest entry sets:
 *   flagged   TPEVENT_FAKE_SM_CLOCK_LOW_EVERY=3: a third of the stretches run at 345 MHz
 *             against a 1,980 MHz maximum: flagged, counted in the note, kept
 *   dropped   the same with TP_MEASURE_DROP_LOW_CLOCK: counted, dropped
 *   ramp      TPEVENT_FAKE_SM_CLOCK_RAMP=3: the first three pairs low, as a clock ramping
 *             up from idle: the warm-up absorbs them, none is flagged
 *   no_max    TPEVENT_FAKE_SM_CLOCK_MAX_MHZ=0 (no NVML): the clock read, none flagged,
 *             the note saying why
 *   max_once  two measurements: the maximum clock (NVML's on CUDA) was asked once, for
 *             the device, and both say it
 * Work: a host function that busy-waits 100 us a call, on cuda:0 (the fake).
 */
#define _POSIX_C_SOURCE 200809L
#include <tpevent/tpevent.h>

#include "tests/conformance/native_runtime.h" /* fake_gpu_symbol */
#include "tests/gpu_fake/probe_calls.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "expect.h"

static void busy(void *arg)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long ns = *(const long *)arg;
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < ns);
}

static tp_status work(tp_stream *stream, void *arg)
{
    return tp_stream_launch_host_fn(stream, busy, arg);
}

static tp_measurement measure(unsigned flags)
{
    tp_stream *stream = NULL;
    tp_measurement m = {.size = sizeof m};
    long ns = 100 * 1000;
    tp_measure_options options;
    tp_measure_options_init(&options);
    options.min_time_ns = 0;
    options.min_samples = 12;
    options.max_noise = 1e9;
    options.max_time_ns = 20LL * 1000 * 1000 * 1000;
    options.flags = flags;
    if (tp_stream_create(&stream, "cuda:0", 0) != TP_OK || tp_measure(stream, work, &ns, &options, &m) != TP_OK) {
        printf("FAIL: tp_measure on the fake cuda:0: %s\n", tp_last_error());
        failures++;
    }
    if (stream)
        tp_stream_destroy(stream);
    printf("clock %.0f MHz (max %.0f), %lld stretches, %lld low, %lld samples\n  note: %s\n  clock: %s\n",
           m.sm_clock_mhz, m.sm_clock_max_mhz, (long long)m.sm_clock_stretches, (long long)m.sm_clock_low,
           (long long)m.samples, m.note, m.sm_clock_note);
    return m;
}

/* The median clock is the full one: the lowered stretches are a third. */
static void expect_full_clock(const tp_measurement *m)
{
    EXPECT(m->sm_clock_mhz > 1980 * 0.95 && m->sm_clock_mhz < 1980 * 1.05);
    EXPECT(m->sm_clock_stretches >= 12);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "flagged") == 0 || strcmp(which, "dropped") == 0) {
        bool drop = strcmp(which, "dropped") == 0;
        tp_measurement m = measure(drop ? TP_MEASURE_DROP_LOW_CLOCK : 0);
        expect_full_clock(&m);
        EXPECT(m.sm_clock_max_mhz == 1980);
        /* Pairs 2, 5, 8... are low (pair 0 the first kept). */
        /* (A stretch whose hold ran out on a loaded machine is not read, its pair still counted.) */
        EXPECT(m.sm_clock_low >= 1 && m.sm_clock_low >= m.sm_clock_stretches / 3 - 2 &&
               m.sm_clock_low <= m.sm_clock_stretches / 3 + 2);
        EXPECT(strstr(m.note, "stretches ran below 75 % of the 1980 MHz maximum SM clock") != NULL);
        EXPECT(strstr(m.note, drop ? "dropped" : "flagged, kept") != NULL);
        EXPECT(strstr(m.sm_clock_note, "TPEVENT_FAKE_SM_CLOCK_LOW_EVERY") != NULL); /* the reasons */
        /* Kept: every clocked stretch is a sample; dropped: the low ones are not. */
        EXPECT(drop ? m.samples == m.sm_clock_stretches - m.sm_clock_low : m.samples == m.sm_clock_stretches);
    } else if (strcmp(which, "ramp") == 0) {
        tp_measurement m = measure(0);
        expect_full_clock(&m);
        EXPECT(m.sm_clock_low == 0);
        EXPECT(strstr(m.sm_clock_note, "warm-up: the SM clock went from 345 to 1980 MHz after 3 stretches not kept") !=
               NULL);
    } else if (strcmp(which, "no_max") == 0) {
        tp_measurement m = measure(0);
        expect_full_clock(&m);
        EXPECT(m.sm_clock_max_mhz == 0 && m.sm_clock_low == 0);
        EXPECT(strstr(m.sm_clock_note, "maximum SM clock unknown") != NULL);
    } else if (strcmp(which, "max_once") == 0) {
        tp_measurement first = measure(0), second = measure(0);
        const probe_calls *probes = fake_gpu_symbol(PROBE_CALLS_FAKE_SYMBOL);
        EXPECT(probes != NULL);
        unsigned long queries = probes ? probes->sm_clock_max_queries() : 0;
        printf("maximum clock asked %lu times for two measurements\n", queries);
        EXPECT(queries == 1);
        EXPECT(first.sm_clock_max_mhz == 1980 && second.sm_clock_max_mhz == 1980);
        /* The second says where its maximum came from as the first did. */
        EXPECT(strstr(first.sm_clock_note, "maximum SM clock 1980 MHz (the fake GPU's)") != NULL);
        EXPECT(strstr(second.sm_clock_note, "maximum SM clock 1980 MHz (the fake GPU's)") != NULL);
    } else {
        printf("FAIL: which case? flagged, dropped, ramp, no_max or max_once, not '%s'\n", which);
        return 2;
    }
    printf("%s: %s\n", failures ? "FAIL" : "ok", which);
    return failures ? 1 : 0;
}
