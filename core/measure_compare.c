/*
 * tp_measure_compare (rule 18): is B faster than A. Two measurements of one stream on
 * one floor and one batch, then stretches in turn, A then B,
 * so that whatever drifts (a GPU's clock, a neighbour's load, the host's frequency)
 * drifts for both within a pair. Each pair gives one ratio, B's per-call time over
 * A's. The answer is their median, with its order-statistics interval (as the
 * measurement's own, measure_samples.c): it assumes nothing of their distribution, and
 * a stretch slowed by the host (a loaded machine's tail) moves the median little where
 * it moved a mean of ratios by 12 % (A against itself read 1.12-1.15 on this CI's cores).
 *
 * Repeated looks: an interval at 95 % looked at after every pair would, sooner or
 * later, lie wholly on one side by chance. The interval is looked at after 8, 16, 32...
 * pairs, look j spending (1 - confidence) / 2^(j+1) of the error (alpha spending over a
 * doubling schedule, a Bonferroni bound: the looks' errors sum to at most
 * 1 - confidence), so the verdict, whenever it comes, keeps the confidence asked for,
 * at the price of wider intervals at each look.
 */
#include "core/measure_options.h"
#include "core/measure_run.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The first look, after this many pairs; then at every doubling. */
static const int64_t first_look_pairs = 8;

tp_status tp_compare_options_init(tp_compare_options *options)
{
    if (!options)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_compare_options_init: options is NULL");
    *options = (tp_compare_options){.size = sizeof *options, .confidence = 0.95, .min_effect = 0.005};
    tp_measure_options_init(&options->measure);
    options->measure.min_time_ns = 0;
    return TP_OK;
}

/* ------------------------------------------------------------ arithmetic */

/* libtpevent links no libm (measure_samples.c): the natural log by its exponent and
 * 2 atanh((m - 1) / (m + 1)) on the mantissa m in [1, 2). x > 0. */
static double compare_log(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int exponent = (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ~(0x7ffULL << 52)) | (1023ULL << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    double y = (m - 1.0) / (m + 1.0), y2 = y * y, term = y, sum = 0;
    for (int k = 1; k < 60; k += 2, term *= y2)
        sum += term / k;
    return 2.0 * sum + exponent * 0.69314718055994530942;
}

/* The upper p quantile of the standard normal, p in (0, 0.5]: Acklam's rational
 * approximation of its tail (relative error below 1.2e-9). */
static double normal_upper_quantile(double p)
{
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                               1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                               6.680131188771972e+01, -1.328068155288572e+01};
    if (p < 0.02425) {
        double q = measure_square_root(-2.0 * compare_log(p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double q = 0.5 - p, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

/* ---------------------------------------------------------------- pairs */

typedef struct compare_state {
    measure_run a, b;
    tp_compare_options options;
    int64_t pairs, next_look, looks;
    measure_samples ratios; /* one a pair: B's per-call time over A's */
    double median, low, high;
    tp_verdict verdict;
} compare_state;

/* A stretch's per-call time as answered (its samples' mean, the floor's share off). */
static double compare_stretch_ns(const measure_run *run, int64_t kept)
{
    double sum = 0;
    for (int64_t i = 0; i < kept; i++)
        sum += run->stretch_ns[i];
    double ns = sum / (double)kept - measure_floor_share(run);
    return ns > 0 ? ns : 0;
}

/* One stretch of the run, retried while its hold runs out; *ns its per-call time. */
static tp_status compare_stretch(measure_run *run, double *ns)
{
    int64_t kept = 0;
    tp_status status = TP_OK;
    while (status == TP_OK && kept == 0 && !measure_past_max_time(run))
        status = measure_run_step(run, &kept);
    *ns = kept > 0 ? compare_stretch_ns(run, kept) : 0;
    return kept > 0 || status != TP_OK ? status : TP_ERR_NOT_READY;
}

/* The look after state->pairs pairs: the median ratio's interval at the look's share
 * of the error, and, when `decide`, the verdict it allows (the last interval of an
 * undecided comparison is reported at the next look's level, deciding nothing). */
static tp_status compare_look(compare_state *state, bool decide)
{
    double alpha = (1.0 - state->options.confidence) / (double)(2LL << state->looks);
    state->looks++;
    if (!measure_samples_median_interval(&state->ratios, normal_upper_quantile(alpha / 2.0), &state->median,
                                         &state->low, &state->high))
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure_compare: out of memory");
    double effect = state->options.min_effect;
    if (!decide)
        return TP_OK;
    if (state->low >= 1.0 - effect && state->high <= 1.0 + effect)
        state->verdict = TP_SAME;
    else if (state->high < 1.0 - effect)
        state->verdict = TP_FASTER;
    else if (state->low > 1.0 + effect)
        state->verdict = TP_SLOWER;
    return TP_OK;
}

static tp_status compare_pairs(compare_state *state)
{
    tp_status status = TP_OK;
    state->next_look = first_look_pairs;
    while (status == TP_OK && state->verdict == TP_UNDECIDED && !measure_past_max_time(&state->a)) {
        double a_ns = 0, b_ns = 0;
        if ((status = compare_stretch(&state->a, &a_ns)) != TP_OK ||
            (status = compare_stretch(&state->b, &b_ns)) != TP_OK)
            break;
        if (state->a.no_work || state->b.no_work)
            break; /* said in that side's note */
        if (!measure_samples_add(&state->ratios, a_ns > 0 ? b_ns / a_ns : 1.0))
            return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure_compare: out of memory");
        if (++state->pairs == state->next_look) {
            status = compare_look(state, true);
            state->next_look *= 2;
        }
    }
    if (status == TP_OK && state->verdict == TP_UNDECIDED && state->pairs > 0)
        status = compare_look(state, false);
    if (status == TP_ERR_NOT_READY && measure_past_max_time(&state->a) &&
        (state->verdict != TP_UNDECIDED || state->pairs == 0 || compare_look(state, false) == TP_OK))
        status = TP_OK; /* max_time came in a stretch: undecided */
    return status;
}

/* ------------------------------------------------------------- the call */

/* B on A's floor (one stream, one least work: two floors' noise would be a bias
 * between the sides), then both at the lesser batch (so that the floor's share taken
 * off is the same: A against itself at batches 5 and 2 read 1.17 on OpenCL). */
static tp_status compare_calibrate_b(compare_state *state)
{
    state->b.floor_ns = state->a.floor_ns;
    state->b.floor_stdev_ns = state->a.floor_stdev_ns;
    state->b.empty_ns = state->a.empty_ns;
    state->b.floor_given = true;
    tp_status status = measure_run_calibrate(&state->b);
    int64_t batch = state->a.batch < state->b.batch ? state->a.batch : state->b.batch;
    state->a.batch = state->b.batch = batch;
    return status;
}

/* The caller's options, `measure` last (measure.h): its size is what the caller's
 * `size` leaves, read as tp_measure reads options of that size. */
static tp_status compare_options_read(const tp_compare_options *given, tp_compare_options *out)
{
    tp_compare_options_init(out);
    if (!given)
        return TP_OK;
    size_t measure_at = offsetof(tp_compare_options, measure);
    if (given->size < measure_at + sizeof given->measure.size)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_measure_compare: options->size is %zu: set it with tp_compare_options_init", given->size);
    if (given->measure.size > given->size - measure_at)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_measure_compare: options->measure.size is %zu, past options->size %zu: set both with "
                       "tp_compare_options_init",
                       given->measure.size, given->size);
    out->confidence = given->confidence;
    out->min_effect = given->min_effect;
    tp_status status = measure_options_read(&given->measure, &out->measure);
    if (status != TP_OK)
        return status;
    if (!(out->confidence > 0.0 && out->confidence < 1.0))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_compare: confidence is %g: it must be in (0, 1)",
                       out->confidence);
    if (!(out->min_effect > 0.0 && out->min_effect < 1.0))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_compare: min_effect is %g: it must be in (0, 1)",
                       out->min_effect);
    out->measure.samples_ns = NULL;
    out->measure.samples_capacity = 0;
    return TP_OK;
}

/* The least of a caller's tp_comparison: its fields before the measurements, and two
 * measurements of the least size tp_measure takes. */
#define COMPARISON_SIDES_AT offsetof(tp_comparison, a)
#define MEASUREMENT_LEAST (offsetof(tp_measurement, calls) + sizeof(int64_t))

/* Into the caller's struct: the fields before the measurements, then each side as
 * tp_measure answers one of half the size left (measure.h: the sides are last). */
static tp_status compare_answer(compare_state *state, tp_comparison *out)
{
    tp_comparison full = {
        .size = out->size,
        .ratio = state->median,
        .ratio_low = state->low,
        .ratio_high = state->high,
        .confidence = state->options.confidence,
        .pairs = state->pairs,
        .verdict = state->verdict,
    };
    memcpy(out, &full, COMPARISON_SIDES_AT);
    size_t side_size = (out->size - COMPARISON_SIDES_AT) / 2;
    tp_measurement *a = (tp_measurement *)((char *)out + COMPARISON_SIDES_AT);
    tp_measurement *b = (tp_measurement *)((char *)a + side_size);
    a->size = b->size = side_size;
    tp_status status = measure_run_answer(&state->a, a);
    if (status == TP_OK)
        status = measure_run_answer(&state->b, b);
    return status;
}

tp_status tp_measure_compare(tp_stream *stream, tp_work_fn fn_a, void *arg_a, tp_work_fn fn_b, void *arg_b,
                             const tp_compare_options *options, tp_comparison *out)
{
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_compare: out is NULL");
    if (out->size < COMPARISON_SIDES_AT + 2 * MEASUREMENT_LEAST)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_compare: out->size is %zu: set it to sizeof(tp_comparison)",
                       out->size);
    compare_state state = {.verdict = TP_UNDECIDED};
    tp_status status = compare_options_read(options, &state.options);
    if (status != TP_OK)
        return status;
    if ((!fn_a || !fn_b) && !state.options.measure.host_work)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_compare: %s is NULL (and options->measure.host_work too)",
                       !fn_a ? "fn_a" : "fn_b");
    int64_t started = measure_now();
    if ((status = measure_run_open(&state.a, stream, fn_a, arg_a, &state.options.measure, started)) == TP_OK)
        status = measure_run_open(&state.b, state.a.stream, fn_b, arg_b, &state.options.measure, started);
    if (status == TP_OK && (status = measure_run_calibrate(&state.a)) == TP_OK)
        status = compare_calibrate_b(&state);
    if (status == TP_OK)
        status = compare_pairs(&state);
    char message[512] = "";
    if (status != TP_OK)
        snprintf(message, sizeof message, "%s", tp_last_error());
    tp_status answered = status == TP_OK ? compare_answer(&state, out) : TP_OK;
    measure_run_close(&state.a); /* both zeroed or opened: closing either is safe */
    measure_run_close(&state.b);
    measure_samples_free(&state.ratios);
    if (status != TP_OK)
        return tp_fail(status, "%s", message);
    return answered;
}
