/* Conformance, rule 7 across devices and backends: elapsed_time of events of two
 * devices (the device and its peer: cpu:0 and cpu:1, cuda:0 and cuda:1) or of two
 * backends answers TIMING_DISABLED, NOT_RECORDED, NOT_READY in rule 7's order, and
 * once both records are reached, a number on the host clock, never
 * TP_ERR_DEVICE_MISMATCH.
 *
 * The other backend: the CPU for a GPU device; for a CPU device, the first GPU
 * backend usable here. On a machine with none these tests skip, saying so (the fake
 * GPU's runs, cuda:0 against cpu:0, are the ones that run them in CI); the core's
 * sequencing is the one that events of two CPU devices go through too. */
#include "device_pair.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

/* Both recorded and reached: timing is still what is refused first. */
static void check_timing_disabled_first(const char *a, const char *b)
{
    pair p = pair_create(a, b, TP_EVENT_DEFAULT, TP_EVENT_TIMING);
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_TIMING_DISABLED);
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tp_event_record(p.events[i], p.streams[i]));
        CHECK_OK(tp_event_synchronize(p.events[i]));
    }
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_TIMING_DISABLED);
    expect_elapsed_refused(p.events[1], p.events[0], TP_ERR_TIMING_DISABLED);
    pair_destroy(&p);
}

static void check_not_recorded_before_not_ready(const char *a, const char *b)
{
    gate g;
    gate_init(&g);
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING);
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_NOT_RECORDED);
    /* The recorded one is not reached either: NOT_RECORDED still comes first. */
    gate_launch(&g, p.streams[0]);
    CHECK_OK(tp_event_record(p.events[0], p.streams[0]));
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_NOT_RECORDED);
    expect_elapsed_refused(p.events[1], p.events[0], TP_ERR_NOT_RECORDED);
    CHECK_ERROR_MENTIONS("never recorded");
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(p.events[0]));
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_NOT_RECORDED);
    pair_destroy(&p);
    gate_destroy(&g);
}

static void check_not_ready_until_both_reached(const char *a, const char *b)
{
    gate g;
    gate_init(&g);
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING);
    gate_launch(&g, p.streams[0]);
    CHECK_OK(tp_event_record(p.events[0], p.streams[0]));
    CHECK_OK(tp_event_record(p.events[1], p.streams[1]));
    CHECK_OK(tp_event_synchronize(p.events[1]));
    expect_elapsed_refused(p.events[0], p.events[1], TP_ERR_NOT_READY);
    expect_elapsed_refused(p.events[1], p.events[0], TP_ERR_NOT_READY);
    CHECK_ERROR_MENTIONS("not reached");
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(p.events[0]));
    float ms = 0.0f;
    CHECK_OK(tp_event_elapsed_time(p.events[0], p.events[1], &ms));
    pair_destroy(&p);
    gate_destroy(&g);
}

/* Both reached: a number, and the same one negated the other way round. */
static void check_timed_on_host_clock(const char *a, const char *b)
{
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tp_event_record(p.events[i], p.streams[i]));
        CHECK_OK(tp_event_synchronize(p.events[i]));
    }
    float forward = NAN, backward = NAN;
    CHECK_OK(tp_event_elapsed_time(p.events[0], p.events[1], &forward));
    CHECK_OK(tp_event_elapsed_time(p.events[1], p.events[0], &backward));
    CHECK(isfinite(forward) && forward == -backward);
    pair_destroy(&p);
}

TEST(rule07_two_devices_timing_disabled_first)
{
    return on_peer(env, check_timing_disabled_first);
}

TEST(rule07_two_devices_not_recorded_before_not_ready)
{
    return on_peer(env, check_not_recorded_before_not_ready);
}

TEST(rule07_two_devices_not_ready_until_both_reached)
{
    return on_peer(env, check_not_ready_until_both_reached);
}

TEST(rule07_two_devices_timed_on_host_clock)
{
    return on_peer(env, check_timed_on_host_clock);
}

TEST(rule07_two_backends_timing_disabled_first)
{
    return on_other_backend(env, check_timing_disabled_first);
}

TEST(rule07_two_backends_not_recorded_before_not_ready)
{
    return on_other_backend(env, check_not_recorded_before_not_ready);
}

TEST(rule07_two_backends_not_ready_until_both_reached)
{
    return on_other_backend(env, check_not_ready_until_both_reached);
}

TEST(rule07_two_backends_timed_on_host_clock)
{
    return on_other_backend(env, check_timed_on_host_clock);
}
