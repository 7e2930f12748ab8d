/* Conformance, rule 18: a measurement's SM clock. Every device says its clock or why
 * it cannot (never a guess): CUDA (the fake GPU too) reads it around each stretch;
 * the others say "clock unknown" and why. The threshold's range is
 * checked. A caller built before the clock's fields gets the fields it has and
 * nothing past them, from tp_measure and tp_measure_compare alike (their structs only
 * grow). Each test says one thing. */
#include "support.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static tp_status spin_fn(tp_stream *stream, void *ns)
{
    return tp_stream_launch_host_fn(stream, busy_host_fn, ns);
}

/* The clock, or "clock unknown" and why; CUDA's is read. */
TEST(rule18_measure_says_its_clock_or_why_not)
{
    tp_stream *stream = new_stream(env->device);
    int64_t ns = 200 * 1000;
    tp_measure_options options = quick_measure_options();
    tp_measurement m = {.size = sizeof m};
    CHECK_OK(tp_measure(stream, spin_fn, &ns, &options, &m));
    printf("%s: SM clock %.0f MHz (max %.0f), %lld stretches, %lld low; note '%s'\n", env->device, m.sm_clock_mhz,
           m.sm_clock_max_mhz, (long long)m.sm_clock_stretches, (long long)m.sm_clock_low, m.sm_clock_note);
    bool unknown = strncmp(m.sm_clock_note, "clock unknown: ", 15) == 0;
    CHECK(unknown == (m.sm_clock_mhz == 0));
    CHECK(unknown ? strlen(m.sm_clock_note) > 20 : m.sm_clock_stretches >= 1);
    CHECK(unknown ? m.sm_clock_stretches == 0 && m.sm_clock_low == 0 : m.sm_clock_low <= m.sm_clock_stretches);
    /* CUDA's is read (the fake GPU's too); no other backend has a reader yet. */
    CHECK(unknown == (strncmp(env->device, "cuda", 4) != 0));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The clock by the measurement contract's names, clock_mhz, clock_max_mhz and
 * throttled: the same fields as sm_clock_mhz, sm_clock_max_mhz and sm_clock_low. */
TEST(rule18_measure_clock_by_the_contracts_names)
{
    CHECK(offsetof(tp_measurement, clock_mhz) == offsetof(tp_measurement, sm_clock_mhz));
    CHECK(offsetof(tp_measurement, clock_max_mhz) == offsetof(tp_measurement, sm_clock_max_mhz));
    CHECK(offsetof(tp_measurement, throttled) == offsetof(tp_measurement, sm_clock_low));
    tp_stream *stream = new_stream(env->device);
    int64_t ns = 200 * 1000;
    tp_measure_options options = quick_measure_options();
    tp_measurement m = {.size = sizeof m};
    CHECK_OK(tp_measure(stream, spin_fn, &ns, &options, &m));
    CHECK(m.clock_mhz == m.sm_clock_mhz && m.clock_max_mhz == m.sm_clock_max_mhz && m.throttled == m.sm_clock_low);
    CHECK(m.throttled >= 0 && m.throttled <= m.sm_clock_stretches);
    CHECK((m.clock_mhz > 0) == (strncmp(m.sm_clock_note, "clock unknown", 13) != 0));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule18_measure_clock_threshold_out_of_range_is_refused)
{
    tp_stream *stream = new_stream(env->device);
    int64_t ns = 1000;
    const double bad[] = {-0.1, 1.5, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tp_measure_options options = quick_measure_options();
        options.sm_clock_threshold = bad[i];
        tp_measurement m = {.size = sizeof m};
        CHECK_STATUS(tp_measure(stream, spin_fn, &ns, &options, &m), TP_ERR_INVALID_ARGUMENT);
        CHECK_ERROR_MENTIONS("sm_clock_threshold");
    }
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A measurement the size it had before the clock's fields: filled up to it, and the
 * bytes past it left alone. */
TEST(rule18_measure_writes_no_field_a_caller_lacks)
{
    tp_stream *stream = new_stream(env->device);
    int64_t ns = 100 * 1000;
    tp_measure_options options = quick_measure_options();
    size_t old_size = offsetof(tp_measurement, sm_clock_mhz);
    unsigned char buffer[sizeof(tp_measurement)];
    memset(buffer, 0xa5, sizeof buffer);
    tp_measurement *m = (tp_measurement *)buffer;
    m->size = old_size;
    CHECK_OK(tp_measure(stream, spin_fn, &ns, &options, m));
    CHECK(m->samples > 0 && m->median_ns > 0 && m->median_high_ns >= m->median_ns);
    for (size_t i = old_size; i < sizeof buffer; i++)
        CHECK(buffer[i] == 0xa5);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A comparison whose two measurements are of that smaller size: each side where the
 * caller's size puts it (the measurements are last, half of what is left each). */
TEST(rule18_compare_writes_sides_of_the_callers_size)
{
    tp_stream *stream = new_stream(env->device);
    int64_t a_ns = 200 * 1000, b_ns = 600 * 1000;
    tp_compare_options options;
    tp_compare_options_init(&options);
    options.min_effect = 0.02;
    options.measure.max_time_ns = 10LL * 1000 * 1000 * 1000;
    size_t side = offsetof(tp_measurement, sm_clock_mhz), sides_at = offsetof(tp_comparison, a);
    unsigned char buffer[sizeof(tp_comparison)];
    memset(buffer, 0xa5, sizeof buffer);
    tp_comparison *c = (tp_comparison *)buffer;
    c->size = sides_at + 2 * side;
    CHECK_OK(tp_measure_compare(stream, spin_fn, &a_ns, spin_fn, &b_ns, &options, c));
    tp_measurement a, b;
    memcpy(&a, buffer + sides_at, side);
    memcpy(&b, buffer + sides_at + side, side);
    printf("old-size sides: a %.1f us, b %.1f us, verdict %d\n", a.median_ns / 1e3, b.median_ns / 1e3, c->verdict);
    CHECK(a.size == side && b.size == side);
    CHECK(a.samples > 0 && b.samples > 0 && b.median_ns > a.median_ns);
    for (size_t i = sides_at + 2 * side; i < sizeof buffer; i++)
        CHECK(buffer[i] == 0xa5);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
