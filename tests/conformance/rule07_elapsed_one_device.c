/* Conformance, rule 7 on one device, what rule07_elapsed.c leaves open: the answer is
 * in milliseconds (bounded on both sides, so that microseconds or seconds fail) and
 * negative when end was reached first. Two streams of the device, so that the device's
 * own clock times both records (across devices and backends, the host's clock:
 * rule13_clock_across_devices.c). */
#include "support.h"

#include <math.h>

enum { sleep_between_ms = 20 };

/* Slack for CI's scheduling and the device's timer: the records are bracketed by host
 * times, so it only covers a thread preempted inside a bracket and a timer's step. */
static const double slack_ms = 2.0;

/* Records `first` on an idle stream, sleeps 20 ms, records `second` on another idle
 * stream of the device; the host's brackets of the two records come back in ns. */
static void record_around_sleep(const test_env *env, tp_event *first, tp_event *second, int64_t before[2],
                                int64_t after[2])
{
    tp_stream *one = new_stream(env->device);
    tp_stream *two = new_stream(env->device);
    record_reached(first, one, &before[0], &after[0]);
    sleep_ms(sleep_between_ms);
    record_reached(second, two, &before[1], &after[1]);
    CHECK_OK(tp_stream_destroy(two));
    CHECK_OK(tp_stream_destroy(one));
}

TEST(rule07_elapsed_is_milliseconds_within_the_host_bracket)
{
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    int64_t before[2], after[2];
    record_around_sleep(env, start, end, before, after);
    float ms = NAN;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    const double shortest = (double)(before[1] - after[0]) / 1e6 - slack_ms;
    const double longest = (double)(after[1] - before[0]) / 1e6 + slack_ms;
    if (!(ms >= shortest && ms <= longest))
        check_failed(__FILE__, __LINE__, "elapsed %.6f ms around a %d ms sleep on %s; host bracket [%.6f, %.6f] ms",
                     (double)ms, sleep_between_ms, env->device, shortest, longest);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}

TEST(rule07_elapsed_negative_when_end_reached_first)
{
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    int64_t before[2], after[2];
    record_around_sleep(env, end, start, before, after);
    float ms = NAN;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    /* end - start lies in [-(after[1] - before[0]), -(before[1] - after[0])]. */
    const double closest = -(double)(before[1] - after[0]) / 1e6 + slack_ms;
    const double farthest = -(double)(after[1] - before[0]) / 1e6 - slack_ms;
    if (!(ms < 0.0f && ms <= closest && ms >= farthest))
        check_failed(__FILE__, __LINE__,
                     "elapsed %.6f ms from start to end on %s, whose end was reached %d ms first; expected "
                     "[%.6f, %.6f] ms",
                     (double)ms, env->device, sleep_between_ms, farthest, closest);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}
