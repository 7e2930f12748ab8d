/* Conformance, rule 13 across devices and backends: elapsed time of events of two
 * devices or two backends is the difference of their timestamps on the one clock:
 * within the host's bracket of the interval, negative when end was reached first. */
#include "device_pair.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

enum { sleep_between_ms = 20 };

/* Slack for CI's scheduling on top of the two error_ns: the records are bracketed
 * by host times, so it only covers a thread preempted inside a bracket. The tight
 * figure (20 us on the H200) is the benchmark's, not a test's. */
static const int64_t slack_ns = 2000000;

/* events[first] recorded (on an idle stream, bracketed) 20 ms of host sleep
 * before events[1 - first]. `before`/`after` are the brackets, by event. */
static void record_around_sleep(pair *p, int first, int64_t before[2], int64_t after[2])
{
    record_reached(p->events[first], p->streams[first], &before[first], &after[first]);
    sleep_ms(sleep_between_ms);
    record_reached(p->events[1 - first], p->streams[1 - first], &before[1 - first], &after[1 - first]);
}

/* elapsed(start, end) around the sleep lies in the host's bracket of the interval,
 * widened by both devices' error_ns and the slack. */
static void check_elapsed_within_host_interval(const char *a, const char *b)
{
    const int64_t error_ns = device_error_ns(a) + device_error_ns(b);
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING);
    int64_t before[2], after[2];
    record_around_sleep(&p, 0, before, after);
    float ms = NAN;
    CHECK_OK(tp_event_elapsed_time(p.events[0], p.events[1], &ms));
    const double shortest = (double)(before[1] - after[0] - error_ns - slack_ns) / 1e6;
    const double longest = (double)(after[1] - before[0] + error_ns + slack_ns) / 1e6;
    if (!(ms >= shortest && ms <= longest))
        check_failed(__FILE__, __LINE__,
                     "elapsed %.6f ms from %s to %s around a %d ms sleep; host bracket "
                     "[%.6f, %.6f] ms (error_ns %lld in all, slack %lld ns)",
                     (double)ms, a, b, sleep_between_ms, shortest, longest, (long long)error_ns, (long long)slack_ns);
    pair_destroy(&p);
}

/* End (of b) reached 20 ms before start (of a): elapsed is negative. */
static void check_elapsed_negative_when_end_first(const char *a, const char *b)
{
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING);
    int64_t before[2], after[2];
    record_around_sleep(&p, 1, before, after);
    float ms = NAN;
    CHECK_OK(tp_event_elapsed_time(p.events[0], p.events[1], &ms));
    if (!(ms < 0.0f))
        check_failed(__FILE__, __LINE__, "elapsed %.6f ms from %s to %s, whose end was reached %d ms first", (double)ms,
                     a, b, sleep_between_ms);
    pair_destroy(&p);
}

/* The milliseconds are the difference of the two timestamps, to a float's step. */
static void check_elapsed_is_difference_of_timestamps(const char *a, const char *b)
{
    pair p = pair_create(a, b, TP_EVENT_TIMING, TP_EVENT_TIMING);
    int64_t before[2], after[2];
    record_around_sleep(&p, 0, before, after);
    float forward = NAN, backward = NAN;
    CHECK_OK(tp_event_elapsed_time(p.events[0], p.events[1], &forward));
    CHECK_OK(tp_event_elapsed_time(p.events[1], p.events[0], &backward));
    const double want = (double)(timestamp_of(p.events[1]) - timestamp_of(p.events[0])) / 1e6;
    const double step = fabs(want) * FLT_EPSILON;
    if (!(fabs(forward - want) <= step && fabs(backward + want) <= step))
        check_failed(__FILE__, __LINE__,
                     "elapsed %.9f ms (and %.9f back) from %s to %s; timestamps differ by "
                     "%.9f ms",
                     (double)forward, (double)backward, a, b, want);
    pair_destroy(&p);
}

TEST(rule13_two_devices_elapsed_within_host_interval)
{
    return on_peer(env, check_elapsed_within_host_interval);
}

TEST(rule13_two_devices_elapsed_negative_when_end_reached_first)
{
    return on_peer(env, check_elapsed_negative_when_end_first);
}

TEST(rule13_two_devices_elapsed_is_difference_of_timestamps)
{
    return on_peer(env, check_elapsed_is_difference_of_timestamps);
}

TEST(rule13_two_backends_elapsed_within_host_interval)
{
    return on_other_backend(env, check_elapsed_within_host_interval);
}

TEST(rule13_two_backends_elapsed_negative_when_end_reached_first)
{
    return on_other_backend(env, check_elapsed_negative_when_end_first);
}

TEST(rule13_two_backends_elapsed_is_difference_of_timestamps)
{
    return on_other_backend(env, check_elapsed_is_difference_of_timestamps);
}
