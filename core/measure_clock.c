/*
 * tp_measure's SM clock (rule 18): the clock the device's SMs ran at while each stretch
 * of fn ran, as nvbench reads it, through the backend's reader (core/backend.h,
 * tp_sm_clock_ops: on CUDA a kernel recording %clock64 and %globaltimer before and
 * after the stretch). NVML's clock is one instant; this is the stretch's own.
 *
 * Why: GPU clocks move (the H100 lent to this project idles at 345 MHz against a
 * 1,980 MHz maximum), and a stretch run at a lowered clock (a ramp not finished, a
 * power or thermal cap) is slower for a reason that is not the work's. A stretch below
 * the threshold of the maximum (default 0.75, nvbench's) is flagged, counted in the
 * note, and dropped when the options ask. Where the backend has no reader (the CPU,
 * OpenCL) or cannot read its clock (HIP), the measurement says "clock unknown" and
 * why: never a guess.
 */
#include "core/measure_run.h"

#include <stdio.h>
#include <string.h>

void measure_clock_open(measure_run *run)
{
    const tp_backend *backend = run->stream->backend;
    run->clock_ops = backend->sm_clock;
    run->clock = NULL;
    if (!run->clock_ops) {
        snprintf(run->clock_note, sizeof run->clock_note,
                 "clock unknown: the %s backend has no SM clock to read (only CUDA's is read)", backend->name);
        return;
    }
    char note[TP_MEASURE_NOTE_MAX] = "";
    double max_mhz = 0;
    tp_status status = run->clock_ops->open(run->stream, &run->clock, &max_mhz, note, sizeof note);
    if (status != TP_OK) {
        run->clock = NULL;
        static const char prefix[] = "clock unknown: ";
        /* A long reason is cut to the room left, said in the precision (gcc -Os's
         * -Wformat-truncation reads an unbounded %s as a truncation). */
        snprintf(run->clock_note, sizeof run->clock_note, "%s%.*s", prefix,
                 (int)(sizeof run->clock_note - sizeof prefix), note[0] ? note : tp_last_error());
        return;
    }
    run->clock_max_mhz = max_mhz > 0 ? max_mhz : 0;
    int written = snprintf(run->clock_note, sizeof run->clock_note, "%s", note);
    (void)written;
}

tp_status measure_clock_mark(measure_run *run, int which)
{
    run->clock_pending = true; /* until a read after the stream passed it */
    return run->clock_ops->mark(run->clock, run->stream, which);
}

void measure_clock_read(measure_run *run)
{
    run->stretch_clock_mhz = run->clock_ops->read(run->clock);
    run->clock_pending = false;
}

bool measure_clock_low(const measure_run *run, double mhz)
{
    return mhz > 0 && run->clock_max_mhz > 0 && mhz < run->options.sm_clock_threshold * run->clock_max_mhz;
}

bool measure_clock_keep(measure_run *run)
{
    double mhz = run->stretch_clock_mhz;
    if (mhz <= 0)
        return false; /* not read: nothing to keep, nothing to drop for */
    if (!measure_samples_add(&run->clock_mhz, mhz))
        return false; /* out of memory: the clock's median misses one stretch */
    if (!measure_clock_low(run, mhz))
        return false;
    if (run->clock_low == 0 || mhz < run->clock_low_min_mhz)
        run->clock_low_min_mhz = mhz;
    run->clock_low++;
    return (run->options.flags & TP_MEASURE_DROP_LOW_CLOCK) != 0;
}

void measure_clock_explain(measure_run *run)
{
    if (!run->clock || !run->clock_ops->explain)
        return;
    char why[TP_MEASURE_NOTE_MAX] = "";
    run->clock_ops->explain(run->clock, why, sizeof why);
    size_t used = strlen(run->clock_note);
    if (!why[0])
        return;
    int written = snprintf(run->clock_note + used, sizeof run->clock_note - used, "%s%s", used ? "; " : "", why);
    (void)written; /* a long note is cut */
}

void measure_clock_close(measure_run *run)
{
    if (run->clock)
        run->clock_ops->close(run->clock, !run->clock_pending);
    run->clock = NULL;
    measure_samples_free(&run->clock_mhz);
}
