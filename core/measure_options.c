/*
 * tp_measure's options: tp_measure_options_init and the checks of the caller's.
 */
#include "core/measure_options.h"

#include <inttypes.h>
#include <string.h>

tp_status measure_options_read(const tp_measure_options *given, tp_measure_options *out)
{
    tp_measure_options_init(out);
    if (!given)
        return TP_OK;
    if (given->size < sizeof given->size)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: options->size is %zu: set it with tp_measure_options_init",
                       given->size);
    memcpy(out, given, given->size < sizeof *out ? given->size : sizeof *out);
    out->size = sizeof *out;
    if (out->min_time_ns < 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: min_time_ns is %" PRId64 ": it must be >= 0",
                       out->min_time_ns);
    if (out->max_time_ns <= 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: max_time_ns is %" PRId64 ": it must be > 0",
                       out->max_time_ns);
    if (!(out->max_noise >= 0.0)) /* NaN too */
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: max_noise is %g: it must be >= 0", out->max_noise);
    if (out->min_samples < 1)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: min_samples is %" PRId64 ": it must be >= 1",
                       out->min_samples);
    if (out->batch < 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: batch is %" PRId64 ": it must be >= 0 (0: chosen)",
                       out->batch);
    if (out->flags & ~(unsigned)TP_MEASURE_FLAGS_ALL)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: unknown flag bits 0x%x",
                       out->flags & ~(unsigned)TP_MEASURE_FLAGS_ALL);
    if (!(out->sm_clock_threshold >= 0.0 && out->sm_clock_threshold <= 1.0)) /* NaN too */
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: sm_clock_threshold is %g: it must be in [0, 1]",
                       out->sm_clock_threshold);
    if (!out->samples_ns && out->samples_capacity > 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: samples_ns is NULL with samples_capacity %zu",
                       out->samples_capacity);
    return TP_OK;
}

tp_status tp_measure_options_init(tp_measure_options *options)
{
    if (!options)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure_options_init: options is NULL");
    *options = (tp_measure_options){
        .size = sizeof *options,
        .min_time_ns = 500 * 1000 * 1000,
        .max_time_ns = 15LL * 1000 * 1000 * 1000,
        .max_noise = 0.005,
        .min_samples = 10,
        .sm_clock_threshold = 0.75, /* nvbench's: a stretch below 75 % of the maximum clock */
    };
    return TP_OK;
}
