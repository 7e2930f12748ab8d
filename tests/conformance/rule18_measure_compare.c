/* Conformance, rule 18: tp_measure_compare, is B faster than A. A against itself is
 * never called faster or slower (more than once in a few trials: the verdict keeps its
 * confidence, and a loaded CI machine slows A and B alike, the stretches interleaved);
 * A against a B twice as long is slower, against one half as long faster; the interval
 * holds the ratio; max_time first answers undecided. Work of known length: host
 * functions that busy-wait. Each test says one thing. */
#include "support.h"

#include <stdio.h>
#include <string.h>

static tp_status spin_fn(tp_stream *stream, void *ns)
{
    return tp_stream_launch_host_fn(stream, busy_host_fn, ns);
}

static tp_compare_options compare_options(double min_effect, int64_t max_time_ms)
{
    tp_compare_options options;
    tp_compare_options_init(&options);
    options.min_effect = min_effect;
    options.measure.max_time_ns = max_time_ms * 1000 * 1000;
    return options;
}

static tp_comparison compare(const char *device, int64_t a_ns, int64_t b_ns, const tp_compare_options *options)
{
    tp_stream *stream = new_stream(device);
    tp_comparison c;
    memset(&c, 0, sizeof c);
    c.size = sizeof c;
    CHECK_OK(tp_measure_compare(stream, spin_fn, &a_ns, spin_fn, &b_ns, options, &c));
    printf("a %.1f us, b %.1f us: ratio %.4f in [%.4f, %.4f] after %lld pairs, verdict %d\n", c.a.median_ns / 1e3,
           c.b.median_ns / 1e3, c.ratio, c.ratio_low, c.ratio_high, (long long)c.pairs, c.verdict);
    CHECK_OK(tp_stream_destroy(stream));
    return c;
}

/* A against itself: same or undecided, wrongly decided at most once in three trials. */
TEST(rule18_compare_of_a_with_itself_is_never_faster_or_slower)
{
    tp_compare_options options = compare_options(0.02, 3000);
    options.confidence = 0.99;
    int wrong = 0;
    for (int trial = 0; trial < 3; trial++) {
        tp_comparison c = compare(env->device, 200 * 1000, 200 * 1000, &options);
        wrong += c.verdict == TP_FASTER || c.verdict == TP_SLOWER;
    }
    CHECK(wrong <= 1);
    return 0;
}

/* B twice as long is slower; the interval holds the ratio, wholly above 1 + min_effect.
 * (Not 30 %: the fake GPU sees a host function end up to a poll later, 0.5 ms past
 * 1 ms under load, and read 1 ms and 1.3 ms alike.) */
TEST(rule18_compare_of_a_longer_b_is_slower)
{
    tp_compare_options options = compare_options(0.02, 10000);
    tp_comparison c = compare(env->device, 1000 * 1000, 2000 * 1000, &options);
    CHECK(c.verdict == TP_SLOWER);
    CHECK(c.ratio_low <= c.ratio && c.ratio <= c.ratio_high && c.ratio_low > 1.02);
    CHECK(c.pairs >= 8 && c.confidence == 0.95);
    CHECK(c.a.samples > 0 && c.b.samples > 0 && c.b.median_ns > c.a.median_ns);
    return 0;
}

/* B half as long is faster. */
TEST(rule18_compare_of_a_shorter_b_is_faster)
{
    tp_compare_options options = compare_options(0.02, 10000);
    tp_comparison c = compare(env->device, 2000 * 1000, 1000 * 1000, &options);
    CHECK(c.verdict == TP_FASTER);
    CHECK(c.ratio_high < 0.98);
    return 0;
}

/* max_time before the first look: undecided, and both sides still answered. */
TEST(rule18_compare_out_of_time_is_undecided)
{
    tp_compare_options options = compare_options(0.02, 30);
    tp_comparison c = compare(env->device, 2 * 1000 * 1000, 2 * 1000 * 1000, &options);
    CHECK(c.verdict == TP_UNDECIDED);
    CHECK(c.a.samples > 0 || c.b.samples > 0 || c.pairs == 0);
    return 0;
}

/* Bad arguments: refused before anything runs. */
TEST(rule18_compare_rejects_bad_arguments)
{
    tp_stream *stream = new_stream(env->device);
    int64_t ns = 1000;
    tp_comparison c;
    memset(&c, 0, sizeof c);
    c.size = sizeof c;
    tp_compare_options options = compare_options(0.02, 1000);
    CHECK_STATUS(tp_measure_compare(stream, NULL, &ns, spin_fn, &ns, &options, &c), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("fn_a");
    options.confidence = 1.0;
    CHECK_STATUS(tp_measure_compare(stream, spin_fn, &ns, spin_fn, &ns, &options, &c), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("confidence");
    options = compare_options(0.0, 1000);
    CHECK_STATUS(tp_measure_compare(stream, spin_fn, &ns, spin_fn, &ns, &options, &c), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("min_effect");
    c.size = 8;
    CHECK_STATUS(tp_measure_compare(stream, spin_fn, &ns, spin_fn, &ns, NULL, &c), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
