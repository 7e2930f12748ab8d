/*
 * tp_measure (rule 18): the user's work timed as the device sees it, built on the
 * public hold (core/hold.c), timing events and ranges; no backend entry of its own but
 * the cache flush of cold measurements.
 *
 * A stretch is what runs under one hold: hot, a timing record, `batch` calls, a timing
 * record (one sample, the interval over the batch divided by it); cold, `batch` times a
 * flush, a record, one call, a record (one sample per call). The hold is released once
 * the stretch is queued, so its watchdog times the host's submission, not the device's
 * work: it runs out when fn synchronizes the stream, blocks, or fills its queue, or when
 * the host itself stalls past it (a loaded machine). Such a stretch is dropped, its
 * samples never seen, and the next one held again; after two in a row, every later
 * stretch is unheld.
 *
 * The order of a call: the arguments, the warm-up (one call, unheld and untimed, so that
 * first-call costs such as a JIT compile are not held), the floor (measure_floor.c), the
 * calibration (one held call, untimed: its device time sets the batch; hot host work
 * grows it), then stretches until the median's interval converges or max_time passes,
 * with at least one sample kept (a calibration slower than max_time still answers a
 * time, and its note says so). The stretches themselves are measure_stretch.c's.
 */
#include "core/measure_options.h"
#include "core/measure_run.h"
#include "core/measure_window.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hot sample lasts at least this, and at least this many steps of the device's timer,
 * so that the timer's step is far below max_noise's default of 0.5 %. 1 ms, not less:
 * on the H200 host's CPU streams, host functions busy-waiting 20-100 us in samples of
 * 200 us had a noise of ~5 % (whatever each stretch starts with: the worker's wake-up
 * from the hold, its core's clock), 1 ms samples 0.2 %. */
static const double sample_min_ns = 1000 * 1000;
static const double sample_min_timer_steps = 2000;
/* The host's time to submit one stretch stays below this (a tenth of the watchdog's
 * least), so that slow submission alone never makes a hold run out, even on a host
 * whose cores are shared several times over. */
static const double stretch_host_max_ns = 10 * 1000 * 1000;
/* The batch on a stream with an unbounded window (the CPU). */
static const int64_t batch_max = 1 << 16;
/* A wait for the device ends this long after max_time at least (max_time itself if
 * longer): a stream held elsewhere never ends, while a slow first call (a cold flush
 * filling its 64 MB under TSan took 3.5-9.5 s) must still give its one sample. */
static const int64_t wait_grace_min_ns = 10LL * 1000 * 1000 * 1000;
/* Device time this many times below the host's time in fn, itself over host_bound_min_ns:
 * the work runs in fn. Not less: a 2 us kernel launched from Python costs 10-25 us on
 * the host, and is on the stream. */
static const double host_bound_ratio = 20.0;
static const double host_bound_min_ns = 20 * 1000;
/* Device time this many times below the host's time in fn ends the measurement as no
 * work (the note above only says so): an empty kernel launched from Python, about 2 us
 * against 10-40 us on the host, is work. */
static const double no_work_host_ratio = 1000.0;
/* The first stretches that may each find that fn put no work on the stream: any one
 * of them, since a host that stalls between a sample's two records (a loaded CI)
 * makes one read as work; none of work does read as nothing. */
static const int64_t no_work_stretches = 3;
/* The SM clock's warm-up lasts at most this (and a quarter of max_time). */
static const int64_t clock_warm_up_max_ns = 1000 * 1000 * 1000;

/* ----------------------------------------------------------- the batch */

/* The caller's batch, cut to the stream's window (rule 17: past it, the runtime's queue
 * may block this thread behind the stretch's own hold, until the watchdog lets it go)
 * where the window has room for a stretch at all (the fake GPU's 10 is passed at batch
 * 1 whatever is asked), and to what the calibration says fits in the time left before
 * max_time (a cold batch of 4,000 with max_time 0.5 s ran 5.6-10 s of flushes). */
static int64_t measure_batch_fit(measure_run *run, double call_ns)
{
    int64_t batch = run->options.batch;
    bool one_host_fn = run->options.host_work && !run->cold;
    int64_t per_call = run->cold ? measure_ops_per_call(true) : 1;
    bool window_kept = !one_host_fn && run->window >= MEASURE_OWN_OPS_PER_HOLD + per_call;
    int64_t room = window_kept ? measure_window_batch(run->window, run->cold) : INT64_MAX;
    if (batch > room) {
        measure_note(run,
                     "batch %" PRId64 " cut to %" PRId64 ": the stream's window holds %" PRId64
                     " operations behind a hold (tp_stream_hold_window)",
                     batch, room, run->window);
        batch = room;
    }
    double left = (double)(run->options.max_time_ns - (measure_now() - run->started_ns));
    if (call_ns * (double)batch <= left)
        return batch;
    double calls = left / call_ns;
    int64_t fits = calls >= (double)batch ? batch : calls >= 1.0 ? (int64_t)calls : 1;
    measure_note(run, "batch %" PRId64 " cut to %" PRId64 ": its calls would run %.3g s, past max_time", batch, fits,
                 call_ns * (double)batch / 1e9);
    return fits;
}

/* The batch, from a call's work (its device time, the floor aside) and host time: a
 * hot sample lasts sample_min_ns and sample_min_timer_steps of the device's timer, a
 * cold hold as long, within the stream's window (not in hot host mode: a sample is
 * one host function) and stretch_host_max_ns of submission. */
static int64_t measure_batch_choose(const measure_run *run, double work_ns, double host_ns)
{
    double target = sample_min_ns;
    if ((double)run->timer_step_ns * sample_min_timer_steps > target)
        target = (double)run->timer_step_ns * sample_min_timer_steps;
    double wanted = target / (work_ns > 1.0 ? work_ns : 1.0) + 1.0;
    bool one_host_fn = run->options.host_work && !run->cold;
    int64_t room = one_host_fn ? batch_max : measure_window_batch(run->window, run->cold);
    if (room > batch_max)
        room = batch_max;
    if (host_ns * (double)room > stretch_host_max_ns)
        room = (int64_t)(stretch_host_max_ns / host_ns);
    if (room < 1)
        room = 1;
    return wanted < (double)room ? (int64_t)wanted : room;
}

/* ------------------------------------------------------------- samples */

/* A sample as answered: the floor's share taken off, never below 0. */
static double measure_answered(const measure_run *run, double raw_ns)
{
    double ns = raw_ns - measure_floor_share(run);
    return ns > 0 ? ns : 0;
}

/* Keeps a stretch's samples (as the device timed them), its `batch` calls and their
 * host time; the caller's samples_ns gets them as answered. */
static tp_status measure_keep(measure_run *run, const double *samples_ns, int64_t batch, double cpu_ns)
{
    int64_t count = run->cold ? batch : 1;
    for (int64_t i = 0; i < count; i++) {
        size_t index = run->samples.count;
        if (!measure_samples_add(&run->samples, samples_ns[i]))
            return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
        if (index < run->options.samples_capacity)
            run->options.samples_ns[index] = measure_answered(run, samples_ns[i]);
        run->timed_ns += (int64_t)(samples_ns[i] * (double)(run->cold ? 1 : batch));
    }
    run->calls += batch;
    run->cpu_ns += cpu_ns;
    return TP_OK;
}

/* The median and its interval, as answered; false when out of memory. */
static bool measure_interval(measure_run *run, double *median, double *low, double *high)
{
    if (!measure_samples_median_interval(&run->samples, TP_MEDIAN_Z_95, median, low, high))
        return false;
    *median = measure_answered(run, *median);
    *low = measure_answered(run, *low);
    *high = measure_answered(run, *high);
    return true;
}

/* After min_samples and min_time, the median's interval within max_noise of it. */
static bool measure_converged(measure_run *run)
{
    double median = 0, low = 0, high = 0;
    return (int64_t)run->samples.count >= run->options.min_samples && run->timed_ns >= run->options.min_time_ns &&
           measure_interval(run, &median, &low, &high) && (high - low) / 2 <= run->options.max_noise * median;
}

/*
 * fn put no work on the stream: an early stretch whose samples, the floor taken off, are
 * within the floor's noise and below half the least work's time per call (the least a
 * call on the stream can be), or far below fn's own time on the host. Said in the note:
 * the measurement ends there instead of running to max_time on a time of nothing.
 */
static bool measure_found_no_work(measure_run *run, const double *samples_ns, int64_t queued, double cpu_ns)
{
    if (run->host)
        return false; /* host work runs on the stream by construction */
    int64_t count = run->cold ? queued : 1, calls = run->cold ? 1 : queued;
    double sample = 0;
    for (int64_t i = 0; i < count; i++)
        sample += samples_ns[i] * (double)calls / (double)count;
    double work = sample - run->floor_ns;
    /* Or: the device's time per call far below fn's own on the host (a CPU stream's two
     * records with nothing between read 1.7 us under ASan, a no-op host function 39 ns
     * a call, so the floor alone does not tell 49 calls of nothing from 49 of it). */
    double host_per_call = cpu_ns / (double)(queued > 0 ? queued : 1);
    bool host_bound = host_per_call > host_bound_min_ns && sample / (double)calls * no_work_host_ratio < host_per_call;
    if (work > 3 * run->floor_stdev_ns + 0.5 * run->empty_ns * (double)calls && !host_bound)
        return false;
    measure_note(run,
                 "fn put no work on the %s stream: a sample's device time, %.3g us, is within the floor's %.3g us "
                 "(+- %.2g): queue the work on that stream, or time host work with host_work (Python: host=True)",
                 run->device, sample / 1e3, run->floor_ns / 1e3, run->floor_stdev_ns / 1e3);
    return true;
}

/* ----------------------------------------------------------- the call */

/* The warm-up: the floor's least work and one call, unheld and untimed (first-call
 * costs such as a JIT compile are never held); cold, a flush first, timed by a pair of records (*flush_ns: a cold
 * hold lasts as long as its calls and their flushes), which also makes the flush's
 * buffer (tens of ms) before anything is held. */
static tp_status measure_warm_up(measure_run *run, double *flush_ns)
{
    int64_t began = measure_now();
    tp_status status = TP_OK;
    if (run->cold && (status = tp_event_record(run->events[0], run->stream)) == TP_OK &&
        (status = run->stream->backend->stream_flush_cache(run->stream)) == TP_OK)
        status = tp_event_record(run->events[1], run->stream);
    if (status == TP_OK)
        status = measure_call(run, MEASURE_WORK_FN, 1);
    if (status == TP_OK)
        status = measure_wait(run, NULL);
    /* Then the floor's least work, unheld, on a stream known to be idle: its first
     * launch on a device makes it, which may wait for the device's streams (a CUDA
     * kernel's load synchronizes the context), a held one too: behind a stream held
     * elsewhere the wait above ends the call first. */
    if (status == TP_OK && (status = measure_call(run, MEASURE_WORK_EMPTY, 0)) == TP_OK)
        status = measure_wait(run, NULL);
    if (status == TP_OK)
        status = measure_host_status(run);
    float ms = 0;
    if (status == TP_OK && run->cold)
        status = tp_event_elapsed_time(run->events[0], run->events[1], &ms);
    *flush_ns = (double)ms * 1e6;
    run->stretch_host_ns = (double)(measure_now() - began);
    return status;
}

/*
 * One held stretch of `calls` calls (a batch, or one cold call), untimed: *work_ns, a
 * call's work, the floor aside, at least a quarter of the call's whole time (the floor
 * is a median, a host function's noisy: a batch chosen too large would be one host
 * function running for seconds); *whole_ns, a call's whole time.
 */
static tp_status measure_calibration_stretch(measure_run *run, int64_t calls, double *work_ns, double *whole_ns,
                                             double *host_ns)
{
    bool kept = false;
    int64_t queued = 0;
    double sample_ns = 0;
    measure_shape shape = run->cold ? MEASURE_SHAPE_PER_CALL : MEASURE_SHAPE_BATCH;
    tp_status status = TP_OK;
    while (!kept && status == TP_OK) /* run_outs_max + 1 times at most: then the stretch is unheld */
        status = measure_stretch(run, MEASURE_WORK_FN, shape, calls, &sample_ns, &queued, host_ns, &kept);
    double work = sample_ns - run->floor_ns / (double)(queued > 0 ? queued : 1);
    *work_ns = work > sample_ns / 4 ? work : sample_ns / 4;
    *whole_ns = sample_ns;
    *host_ns /= (double)(queued > 0 ? queued : 1);
    return status;
}

/* The calibration. Hot host work grows its one host function fourfold until the
 * lesser of two stretches lasts a sample (a host function's launch is noisy: the fake
 * GPU's start up to 1 ms late), so that the calls' estimate is not the floor's noise;
 * other work is timed once, one call. */
static tp_status measure_calibration(measure_run *run, double *work_ns, double *whole_ns, double *host_ns)
{
    if (!run->options.host_work || run->cold)
        return measure_calibration_stretch(run, 1, work_ns, whole_ns, host_ns);
    tp_status status = TP_OK;
    for (int64_t calls = 1; status == TP_OK; calls *= 4) {
        double work = 0, whole = 0;
        status = measure_calibration_stretch(run, calls, work_ns, whole_ns, host_ns);
        if (status == TP_OK && (status = measure_calibration_stretch(run, calls, &work, &whole, host_ns)) == TP_OK &&
            whole < *whole_ns) {
            *work_ns = work;
            *whole_ns = whole;
        }
        if (*whole_ns * (double)calls >= sample_min_ns || calls >= batch_max / 4 || measure_past_max_time(run))
            break;
    }
    return status;
}

/*
 * The SM clock's warm-up (measure_clock.c): an idle GPU's clock ramps up under work (the
 * H100 here idles at 345 MHz), so the first stretches of fn whose clock is below the
 * threshold of a known maximum are not kept, for at most a quarter of max_time and a
 * second: the first kept sample runs at the clock the rest will. True when the
 * stretch just read is such a warm-up stretch; the clock's note says how many there
 * were. Without a known maximum there is nothing to wait for.
 */
static bool measure_clock_warming(measure_run *run)
{
    if (!run->clock || run->clock_warm)
        return false;
    double mhz = run->stretch_clock_mhz;
    int64_t budget = run->options.max_time_ns / 4 < clock_warm_up_max_ns ? run->options.max_time_ns / 4
                                                                         : clock_warm_up_max_ns;
    bool low = measure_clock_low(run, mhz), waited = measure_now() - run->clock_on_ns >= budget;
    if (low && !waited) {
        if (run->clock_warm_ups++ == 0)
            run->clock_warm_from_mhz = mhz;
        return true;
    }
    run->clock_warm = true;
    if (run->clock_warm_ups == 0)
        return false;
    size_t used = strlen(run->clock_note);
    int written = snprintf(run->clock_note + used, sizeof run->clock_note - used,
                           "%swarm-up: the SM clock went from %.0f to %.0f MHz after %" PRId64
                           " stretches not kept (%.3g ms)%s",
                           used ? "; " : "", run->clock_warm_from_mhz, mhz, run->clock_warm_ups,
                           (double)(measure_now() - run->clock_on_ns) / 1e6, low ? ", still low" : "");
    (void)written; /* a long note is cut */
    return false;
}

tp_status measure_run_calibrate(measure_run *run)
{
    double flush_ns = 0, work_ns = 0, whole_ns = 0, host_ns = 0;
    tp_status status = measure_warm_up(run, &flush_ns);
    run->flush_ns = flush_ns;
    if (status == TP_OK) /* the stream's first work done: a reader may load a kernel */
        measure_clock_open(run);
    if (status == TP_OK && !run->floor_given)
        status = measure_floor(run);
    if (status == TP_OK)
        status = measure_calibration(run, &work_ns, &whole_ns, &host_ns);
    if (status != TP_OK)
        return status;
    run->batch = run->options.batch > 0 ? measure_batch_fit(run, whole_ns + flush_ns)
                                        : measure_batch_choose(run, work_ns + flush_ns, host_ns);
    /* A chosen batch's events are all made here, outside any hold; a larger one's
     * beyond batch_max as its calls reach them. */
    status = measure_events_reserve(run, run->cold ? (run->batch < batch_max ? run->batch : batch_max) : 1);
    run->clock_on = run->clock != NULL; /* the stretches of fn from here on */
    run->clock_on_ns = measure_now();
    return status;
}

tp_status measure_run_step(measure_run *run, int64_t *kept)
{
    measure_shape shape = run->cold ? MEASURE_SHAPE_PER_CALL : MEASURE_SHAPE_BATCH;
    double cpu_ns = 0;
    bool stretch_kept = false, early = run->stretches_kept < no_work_stretches;
    int64_t queued = 0;
    *kept = 0;
    tp_status status = measure_stretch(run, MEASURE_WORK_FN, shape, run->batch, run->stretch_ns, &queued, &cpu_ns,
                                       &stretch_kept);
    if (status != TP_OK || !stretch_kept)
        return status;
    /* The SM clock's warm-up, not kept; a stretch at a low clock, dropped when asked; at
     * least one sample is kept. */
    if (measure_clock_warming(run))
        return TP_OK;
    if (measure_clock_keep(run) && !(run->samples.count == 0 && measure_past_max_time(run)))
        return TP_OK;
    if ((status = measure_keep(run, run->stretch_ns, queued, cpu_ns)) != TP_OK)
        return status;
    *kept = run->cold ? queued : 1;
    run->stretches_kept++;
    if (early)
        run->no_work = measure_found_no_work(run, run->stretch_ns, queued, cpu_ns);
    return TP_OK;
}

tp_status measure_run_dropped_last(measure_run *run, tp_status status)
{
    if (status != TP_ERR_NOT_READY || !run->wait_ran_out || run->samples.count == 0)
        return status;
    measure_note(run, "the last stretch was not done %.3g s after the call (is the stream held elsewhere?): dropped",
                 (double)(measure_now() - run->started_ns) / 1e9);
    return TP_OK;
}

static tp_status measure_loop(measure_run *run)
{
    tp_status status = TP_OK;
    int64_t kept = 0;
    while (run->samples.count == 0 || !measure_past_max_time(run)) {
        if ((status = measure_run_step(run, &kept)) != TP_OK || run->no_work || (kept && measure_converged(run)))
            break;
    }
    return measure_run_dropped_last(run, status);
}

/* Why max_time came first: the first of min_samples, min_time and max_noise not met. */
static void measure_note_max_time(measure_run *run, double median, double low, double high)
{
    double max_time_s = (double)run->options.max_time_ns / 1e9;
    if ((int64_t)run->samples.count < run->options.min_samples)
        measure_note(run, "max_time %.3g s passed after %zu of min_samples %" PRId64 " samples", max_time_s,
                     run->samples.count, run->options.min_samples);
    else if (run->timed_ns < run->options.min_time_ns)
        measure_note(run, "max_time %.3g s passed after %.3g of min_time %.3g s timed", max_time_s,
                     (double)run->timed_ns / 1e9, (double)run->options.min_time_ns / 1e9);
    else
        measure_note(run, "max_time %.3g s passed with the median's interval at +-%.3g %% (max_noise %.3g %%)",
                     max_time_s, median > 0 ? (high - low) / 2 / median * 100 : 100.0, run->options.max_noise * 100);
}

/* The notes of what the samples say of fn. */
static void measure_note_samples(measure_run *run, double median, bool converged)
{
    double cpu_per_call = run->calls ? run->cpu_ns / (double)run->calls : 0;
    if (!run->no_work && run->calls > 0 && cpu_per_call > host_bound_min_ns && median * host_bound_ratio < cpu_per_call)
        measure_note(run,
                     "device time %.3g us per call, far below fn's %.3g us on the host: work run inside fn is "
                     "not on the stream",
                     median / 1e3, cpu_per_call / 1e3);
    if (run->samples.count > 0 && !converged && run->cold &&
        median < (double)run->timer_step_ns * sample_min_timer_steps)
        measure_note(run,
                     "a cold sample is one call, %.0f steps of the device's timer: its noise stays near the step's",
                     median / (double)run->timer_step_ns);
    if (run->dropped > 0 && run->holding)
        measure_note(run,
                     "%" PRId64 " stretch%s dropped: %s hold ran out after %" PRId64
                     " ms (fn or the host stalled), the next held again",
                     run->dropped, run->dropped > 1 ? "es" : "", run->dropped > 1 ? "each one's" : "its",
                     run->ran_out_ns / 1000000);
}

/* A reader whose stretches all went unread (no mark written): "clock unknown" before
 * what the clock's note said, cut to fit. */
static void measure_note_clock_unread(measure_run *run)
{
    static const char unknown[] = "clock unknown: no stretch's clock was read";
    char *note = run->clock_note;
    size_t length = strlen(note), head = sizeof unknown - 1 + (length ? 2 : 0);
    if (head + length >= sizeof run->clock_note)
        length = sizeof run->clock_note - 1 - head;
    memmove(note + head, note, length);
    memcpy(note, unknown, sizeof unknown - 1);
    if (length)
        memcpy(note + sizeof unknown - 1, "; ", 2);
    note[head + length] = '\0';
}

/* The stretches flagged for their SM clock, in the note; why the clock was low, in the clock's. */
static void measure_note_clock(measure_run *run)
{
    if (run->clock_low == 0)
        return;
    bool drop = run->options.flags & TP_MEASURE_DROP_LOW_CLOCK;
    measure_note(run,
                 "%" PRId64
                 " of %zu stretches ran below %.0f %% of the %.0f MHz maximum SM clock (the lowest at "
                 "%.0f MHz): %s",
                 run->clock_low, run->clock_mhz.count, run->options.sm_clock_threshold * 100, run->clock_max_mhz,
                 run->clock_low_min_mhz,
                 drop ? "dropped"
                      : "flagged, kept (TP_MEASURE_DROP_LOW_CLOCK, Python drop_low_clock=True, drops them)");
    measure_clock_explain(run);
}

tp_status measure_run_answer(measure_run *run, tp_measurement *out)
{
    measure_stats stats, clock;
    double median = 0, low = 0, high = 0;
    if (!measure_samples_stats(&run->samples, &stats) || !measure_interval(run, &median, &low, &high) ||
        !measure_samples_stats(&run->clock_mhz, &clock))
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    bool converged = run->samples.count > 0 && !run->no_work && measure_converged(run);
    measure_note_samples(run, median, converged);
    measure_note_clock(run);
    if (run->samples.count > 0 && !converged && !run->no_work)
        measure_note_max_time(run, median, low, high);
    double mean = measure_answered(run, stats.mean);
    tp_measurement full = {
        .size = out->size,
        .calls = run->calls,
        .samples = (int64_t)run->samples.count,
        .batch = run->batch,
        .median_ns = median,
        .mean_ns = mean,
        .min_ns = measure_answered(run, stats.min),
        .max_ns = measure_answered(run, stats.max),
        .stdev_ns = stats.stdev,
        .noise = mean > 0 ? stats.stdev / mean : 0,
        .cpu_ns = run->calls ? run->cpu_ns / (double)run->calls : 0,
        .held = run->holding && run->samples.count > 0,
        .converged = converged,
        .cold = run->cold,
        .floor_ns = run->floor_ns,
        .floor_stdev_ns = run->floor_stdev_ns,
        .raw_median_ns = stats.median,
        .median_low_ns = low,
        .median_high_ns = high,
        .sm_clock_mhz = clock.median,
        .sm_clock_max_mhz = run->clock_max_mhz,
        .sm_clock_stretches = (int64_t)run->clock_mhz.count,
        .sm_clock_low = run->clock_low,
    };
    memcpy(full.note, run->note, sizeof full.note);
    if (clock.median <= 0 && strncmp(run->clock_note, "clock unknown", 13) != 0)
        measure_note_clock_unread(run);
    memcpy(full.sm_clock_note, run->clock_note, sizeof full.sm_clock_note);
    memcpy(out, &full, out->size < sizeof full ? out->size : sizeof full);
    return TP_OK;
}

/* The stream to measure on and the checks made before fn is first called. */
static tp_status measure_start(measure_run *run, tp_stream *stream)
{
    tp_status status = stream ? TP_OK : tp_stream_current(NULL, &stream);
    if (status != TP_OK)
        return status;
    run->stream = stream;
    tp_device_str(stream->device, run->device);
    bool capturing = false;
    if (stream->backend->stream_is_capturing && stream->backend->stream_is_capturing(stream, &capturing) == TP_OK &&
        capturing)
        return tp_fail(TP_ERR_CAPTURING,
                       "tp_measure: the %s stream is capturing: a measurement runs its work and waits for it, "
                       "which a capture cannot hold",
                       run->device);
    if (run->cold && !stream->backend->stream_flush_cache)
        return tp_unsupported(stream->backend, "flushing the device's cache (tp_measure with TP_MEASURE_COLD)");
    run->holding = !(run->options.flags & TP_MEASURE_NO_HOLD) && stream->backend->stream_hold;
    if (!(run->options.flags & TP_MEASURE_NO_HOLD) && !run->holding)
        measure_note(run, "the %s backend cannot hold a stream: measured without a hold", stream->backend->name);
    tp_clock_info clock = {0};
    run->timer_step_ns = tp_device_clock(run->device, &clock) == TP_OK ? clock.resolution_ns : 0;
    if (run->holding && (status = tp_stream_hold_window(stream, &run->window)) != TP_OK)
        return status;
    if (!run->holding)
        run->window = INT64_MAX;
    return measure_events_reserve(run, 1);
}

tp_status measure_run_open(measure_run *run, tp_stream *stream, tp_work_fn fn, void *arg,
                           const tp_measure_options *options, int64_t started_ns)
{
    *run = (measure_run){.fn = fn, .arg = arg, .started_ns = started_ns, .batch = 1};
    tp_status status = measure_options_read(options, &run->options);
    if (status != TP_OK)
        return status;
    if (!fn && !run->options.host_work)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: fn is NULL (and options->host_work too)");
    int64_t grace = run->options.max_time_ns > wait_grace_min_ns ? run->options.max_time_ns : wait_grace_min_ns;
    run->wait_deadline_ns = run->options.max_time_ns > INT64_MAX - started_ns - grace
                                ? INT64_MAX
                                : started_ns + run->options.max_time_ns + grace;
    run->cold = run->options.flags & TP_MEASURE_COLD;
    if (run->options.host_work && (status = measure_host_open(run)) != TP_OK)
        return status;
    return measure_start(run, stream);
}

void measure_run_close(measure_run *run)
{
    measure_clock_close(run);
    measure_host_close(run);
    measure_events_free(run);
    measure_samples_free(&run->samples);
}

tp_status tp_measure(tp_stream *stream, tp_work_fn fn, void *arg, const tp_measure_options *options,
                     tp_measurement *out)
{
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: out is NULL");
    if (out->size < offsetof(tp_measurement, calls) + sizeof out->calls)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: out->size is %zu: set it to sizeof(tp_measurement)",
                       out->size);
    measure_run run;
    tp_status status = measure_run_open(&run, stream, fn, arg, options, measure_now());
    if (status == TP_OK && (status = measure_run_calibrate(&run)) == TP_OK)
        status = measure_loop(&run);
    char message[512] = "";
    if (status != TP_OK)
        snprintf(message, sizeof message, "%s", tp_last_error());
    tp_status answered = run.stream ? measure_run_answer(&run, out) : TP_OK;
    measure_run_close(&run);
    if (status != TP_OK)
        return tp_fail(status, "%s", message);
    return answered;
}
