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
 * first-call costs such as a JIT compile are not held), the calibration (one held call,
 * untimed: its device time sets the batch), then stretches until the samples converge
 * or max_time passes, with at least one sample kept (a calibration slower than max_time
 * still answers a time, and its note says so).
 */
#include "core/internal.h"
#include "core/measure_options.h"
#include "core/measure_samples.h"

#include "common/clock.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hold's watchdog: at least this, else 10 stretches' expected length (rule 18). */
static const int64_t watchdog_min_ns = 100 * 1000 * 1000;
/* Holds that ran out in a row before the rest is measured unheld. One can be the host's
 * (a process descheduled past 100 ms on a loaded machine), and dropping every later
 * hold for it would time the host's submission from then on; two
 * are fn's (it synchronizes, blocks or fills the queue each call), and a third would
 * cost another watchdog for nothing. */
static const int run_outs_max = 2;
/* A hot sample lasts at least this, and at least this many steps of the device's timer,
 * so that the timer's step is far below max_noise's default of 0.5 %. 1 ms, not less:
 * on the H200 host's CPU streams, host functions busy-waiting 20-100 us in samples of
 * 200 us had a noise of ~5 % (whatever each stretch starts with: the worker's wake-up
 * from the hold, its core's clock), 1 ms samples 0.2 %. */
static const double sample_min_ns = 1000 * 1000;
static const double sample_min_timer_steps = 2000;
/* What tpevent itself queues under one hold besides fn's work (the hold, the range's
 * marks, the timing records and, while a trace runs, their marks), kept out of the
 * window the batch may fill; a cold call adds a flush and two records. */
static const int64_t own_ops_per_hold = 8;
static const int64_t own_ops_per_cold_call = 4;
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
/* The caller's wait_check runs between slices of a wait this long. */
static const int64_t wait_slice_ns = 50 * 1000 * 1000;
/* Device time this many times below the host's time in fn, itself over host_bound_min_ns:
 * the work runs in fn. Not less: a 2 us kernel launched from Python costs 10-25 us on
 * the host, and is on the stream. */
static const double host_bound_ratio = 20.0;
static const double host_bound_min_ns = 20 * 1000;

typedef struct measure_run {
    tp_stream *stream;
    tp_work_fn fn;
    void *arg;
    tp_measure_options options;
    char device[TP_DEVICE_STRING_MAX];
    bool cold;
    bool holding;             /* false with TP_MEASURE_NO_HOLD, or once run_outs_max holds ran out */
    int run_outs;             /* holds that ran out since the last one released in time */
    int64_t dropped;          /* stretches dropped because their hold ran out */
    int64_t ran_out_ns;       /* the watchdog of the last hold that ran out */
    int64_t started_ns;       /* CLOCK_MONOTONIC at the call */
    int64_t wait_deadline_ns; /* when a wait for the device gives up (a stream held elsewhere) */
    bool wait_ran_out;        /* a wait reached wait_deadline_ns */
    int64_t window;           /* tp_stream_hold_window */
    int64_t timer_step_ns;    /* tp_device_clock's resolution; 0 if unknown */
    int64_t batch;
    double stretch_host_ns; /* the last stretch's host time: its watchdog's scale */
    int64_t watchdog_ns;    /* the last hold's */
    tp_event **events;      /* pairs: [2i] before call i (cold) or the batch (hot), [2i + 1] after */
    double *stretch_ns;     /* pairs entries: a stretch's samples */
    int64_t pairs;
    measure_samples samples;
    int64_t calls, timed_ns;
    double cpu_ns; /* in fn, over the timed calls */
    char note[TP_MEASURE_NOTE_MAX];
} measure_run;

/* ---------------------------------------------------------------- note */

/* Adds a sentence to the note ("; " between two). */
static void measure_note(measure_run *run, const char *fmt, ...) TP_PRINTF(2, 3);
static void measure_note(measure_run *run, const char *fmt, ...)
{
    size_t used = strlen(run->note);
    if (used > 0 && used + 2 < sizeof run->note) {
        memcpy(run->note + used, "; ", 3);
        used += 2;
    }
    va_list args;
    va_start(args, fmt);
    (void)vsnprintf(run->note + used, sizeof run->note - used, fmt, args);
    va_end(args);
}

/* --------------------------------------------------------------- events */

/* At least `pairs` pairs of timing events of the stream's device, and as many samples
 * of a stretch. The sizes are checked: a user's batch of 2^60 wrapped them to 0. */
static tp_status measure_events_reserve(measure_run *run, int64_t pairs)
{
    if (pairs <= run->pairs)
        return TP_OK;
    if ((uint64_t)pairs > SIZE_MAX / (2 * sizeof *run->events))
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: %" PRId64 " pairs of timing events do not fit in memory",
                       pairs);
    double *stretch_ns = realloc(run->stretch_ns, (size_t)pairs * sizeof *stretch_ns);
    if (stretch_ns)
        run->stretch_ns = stretch_ns;
    tp_event **events = stretch_ns ? realloc(run->events, (size_t)pairs * 2 * sizeof *events) : NULL;
    if (!events)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory for %" PRId64 " pairs of timing events", pairs);
    run->events = events;
    for (int64_t i = run->pairs * 2; i < pairs * 2; i++) {
        /* Sleeping, not spinning, until a sample's end: the wait is outside what is
         * timed, and a spinning thread would take a core from the work itself when
         * that runs on the host (the CPU backend). */
        tp_status status = tp_event_create(&run->events[i], run->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
        if (status != TP_OK) {
            for (int64_t j = run->pairs * 2; j < i; j++)
                (void)tp_event_destroy(run->events[j]);
            return status;
        }
    }
    run->pairs = pairs;
    return TP_OK;
}

static void measure_events_free(measure_run *run)
{
    for (int64_t i = 0; i < run->pairs * 2; i++)
        (void)tp_event_destroy(run->events[i]);
    free(run->events);
    free(run->stretch_ns);
}

/* A cold stretch's pairs, made as its calls reach them (doubling, up to its batch): a
 * batch cut short by max_time never makes the rest (10^8 made 2.5 GB of events). */
static tp_status measure_events_reach(measure_run *run, int64_t pair, int64_t batch)
{
    if (pair < run->pairs)
        return TP_OK;
    int64_t pairs = run->pairs > batch / 2 ? batch : run->pairs * 2;
    return measure_events_reserve(run, pairs > pair ? pairs : pair + 1);
}

/* ------------------------------------------------------------- stretch */

static int64_t measure_now(void)
{
    return (int64_t)tp_now_ns();
}

static bool measure_past_max_time(const measure_run *run)
{
    return measure_now() - run->started_ns >= run->options.max_time_ns;
}

/* Waits for the event's latest record (NULL: the stream's work) until the wait's
 * deadline, in slices between which the caller's wait_check runs: a stream held
 * elsewhere would otherwise keep the caller past max_time, and deaf to Ctrl-C. */
static tp_status measure_wait(measure_run *run, tp_event *event)
{
    for (;;) {
        int64_t left = run->wait_deadline_ns - measure_now();
        int64_t slice = left < wait_slice_ns ? (left > 0 ? left : 0) : wait_slice_ns;
        tp_status status = event ? tp_event_synchronize_for(event, slice)
                                 : tp_stream_synchronize_for(run->stream, slice);
        if (status != TP_ERR_NOT_READY)
            return status;
        if (run->options.wait_check && (status = run->options.wait_check(run->arg)) != TP_OK)
            return tp_fail(status, "tp_measure: options->wait_check answered %s while waiting for the device",
                           tp_status_name(status));
        if (left <= slice) {
            run->wait_ran_out = true;
            return tp_fail(TP_ERR_NOT_READY,
                           "tp_measure: the %s stream's work was not done %.3g s after the call (max_time %.3g s "
                           "and a grace): is the stream held elsewhere?",
                           run->device, (double)(measure_now() - run->started_ns) / 1e9,
                           (double)run->options.max_time_ns / 1e9);
        }
    }
}

/* The watchdog of a stretch's hold: 10 stretches' expected length, at least 100 ms,
 * and no later than max_time unless that leaves less than 100 ms. */
static int64_t measure_watchdog_ns(const measure_run *run)
{
    double expected = run->stretch_host_ns;
    int64_t timeout = expected * 10 > (double)watchdog_min_ns ? (int64_t)(expected * 10) : watchdog_min_ns;
    int64_t left = run->options.max_time_ns - (measure_now() - run->started_ns);
    if (timeout > left)
        timeout = left > watchdog_min_ns ? left : watchdog_min_ns;
    return timeout;
}

/* Lets the stream go; *ran_out when the watchdog had: the stretch is dropped, and
 * after run_outs_max in a row the rest is measured without a hold. */
static tp_status measure_release(measure_run *run, tp_hold *hold, bool *ran_out)
{
    *ran_out = false;
    if (!hold)
        return TP_OK;
    tp_status status = tp_hold_release(hold);
    if (status != TP_ERR_NOT_READY) {
        run->run_outs = 0;
        return status;
    }
    *ran_out = true;
    run->dropped++;
    run->ran_out_ns = run->watchdog_ns;
    if (++run->run_outs < run_outs_max)
        return TP_OK;
    run->holding = false;
    measure_note(run,
                 "%d holds in a row ran out after %" PRId64
                 " ms (fn synchronized, blocked or filled the queue): measured "
                 "without a hold",
                 run->run_outs, run->ran_out_ns / 1000000);
    return TP_OK;
}

/* Queues the stretch's records and calls, no call past max_time but the first;
 * *queued: the calls; *cpu_ns: the host time in fn. */
static tp_status measure_stretch_queue(measure_run *run, int64_t batch, int64_t *queued, double *cpu_ns)
{
    tp_status status = TP_OK;
    *cpu_ns = 0;
    int64_t i = 0;
    for (; i < batch && !(i > 0 && measure_past_max_time(run)); i++) {
        if (run->cold && (status = measure_events_reach(run, i, batch)) != TP_OK)
            break;
        tp_event *before = run->events[run->cold ? 2 * i : 0];
        if (run->cold && (status = run->stream->backend->stream_flush_cache(run->stream)) != TP_OK)
            break;
        if ((run->cold || i == 0) && (status = tp_event_record(before, run->stream)) != TP_OK)
            break;
        int64_t called = measure_now();
        status = run->fn(run->stream, run->arg);
        *cpu_ns += (double)(measure_now() - called);
        if (status == TP_OK && run->cold)
            status = tp_event_record(run->events[2 * i + 1], run->stream);
        if (status != TP_OK)
            break;
    }
    *queued = i;
    if (status == TP_OK && !run->cold)
        status = tp_event_record(run->events[1], run->stream);
    return status;
}

/* The stretch's samples, once its last record is reached. */
static tp_status measure_stretch_read(measure_run *run, int64_t batch, double *samples_ns)
{
    int64_t pairs = run->cold ? batch : 1;
    tp_status status = measure_wait(run, run->events[2 * pairs - 1]);
    for (int64_t i = 0; i < pairs && status == TP_OK; i++) {
        float ms = 0;
        status = tp_event_elapsed_time(run->events[2 * i], run->events[2 * i + 1], &ms);
        samples_ns[i] = (double)ms * 1e6 / (double)(run->cold ? 1 : batch);
    }
    return status;
}

/*
 * One stretch of up to `batch` calls, *queued of them. *kept: its samples (one hot,
 * *queued cold) are in samples_ns; false when its hold ran out. A failure (fn's or
 * tpevent's) releases the hold and closes the range first, and keeps the failing call's
 * message. The range is the trace's, not the measurement's: a trace that starts or
 * stops between its push and its pop (fn's, another thread's) makes the pop find no
 * range open, which must not fail the measurement.
 */
static tp_status measure_stretch(measure_run *run, int64_t batch, double *samples_ns, int64_t *queued, double *cpu_ns,
                                 bool *kept)
{
    *kept = false;
    *queued = 0;
    int64_t began = measure_now();
    tp_hold *hold = NULL;
    run->watchdog_ns = measure_watchdog_ns(run);
    tp_status status = run->holding ? tp_stream_hold(run->stream, run->watchdog_ns, &hold) : TP_OK;
    if (status != TP_OK)
        return status;
    bool pushed = tp_range_push(run->stream, "tp_measure") == TP_OK;
    status = measure_stretch_queue(run, batch, queued, cpu_ns);
    char message[512] = "";
    if (status != TP_OK)
        snprintf(message, sizeof message, "%s", tp_last_error());
    if (pushed)
        (void)tp_range_pop(run->stream);
    bool ran_out = false;
    tp_status released = measure_release(run, hold, &ran_out);
    if (!ran_out) /* a stretch that ran out lasted its watchdog: the next one's would grow tenfold */
        run->stretch_host_ns = (double)(measure_now() - began);
    if (status != TP_OK)
        return tp_fail(status, "%s", message);
    if (released != TP_OK)
        return released;
    if (ran_out)
        return TP_OK;
    *kept = true;
    return measure_stretch_read(run, *queued, samples_ns);
}

/* ----------------------------------------------------------- the call */

/* The caller's batch, cut to what the calibration says fits in the time left before
 * max_time (a cold batch of 4,000 with max_time 0.5 s ran 5.6-10 s of flushes). */
static int64_t measure_batch_fit(measure_run *run, double call_ns)
{
    int64_t batch = run->options.batch;
    double left = (double)(run->options.max_time_ns - (measure_now() - run->started_ns));
    if (call_ns * (double)batch <= left)
        return batch;
    double calls = left / call_ns;
    int64_t fits = calls >= (double)batch ? batch : calls >= 1.0 ? (int64_t)calls : 1;
    measure_note(run, "batch %" PRId64 " cut to %" PRId64 ": its calls would run %.3g s, past max_time", batch, fits,
                 call_ns * (double)batch / 1e9);
    return fits;
}

/* The batch, from one call's device and host times: a hot sample lasts sample_min_ns
 * and sample_min_timer_steps of the device's timer, a cold hold as long, within the
 * stream's window and stretch_host_max_ns of submission. */
static int64_t measure_batch_choose(measure_run *run, double call_ns, double host_ns)
{
    if (run->options.batch > 0)
        return measure_batch_fit(run, call_ns);
    double target = sample_min_ns;
    if ((double)run->timer_step_ns * sample_min_timer_steps > target)
        target = (double)run->timer_step_ns * sample_min_timer_steps;
    double wanted = target / (call_ns > 1.0 ? call_ns : 1.0) + 1.0;
    int64_t room = run->window == INT64_MAX ? batch_max : run->window - own_ops_per_hold;
    if (run->cold)
        room /= own_ops_per_cold_call;
    if (room > batch_max)
        room = batch_max;
    if (host_ns * (double)room > stretch_host_max_ns)
        room = (int64_t)(stretch_host_max_ns / host_ns);
    if (room < 1)
        room = 1;
    return wanted < (double)room ? (int64_t)wanted : room;
}

/* Keeps a stretch's samples, its `batch` calls and their host time. */
static tp_status measure_keep(measure_run *run, const double *samples_ns, int64_t batch, double cpu_ns)
{
    int64_t count = run->cold ? batch : 1;
    for (int64_t i = 0; i < count; i++) {
        size_t index = run->samples.count;
        if (!measure_samples_add(&run->samples, samples_ns[i]))
            return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
        if (index < run->options.samples_capacity)
            run->options.samples_ns[index] = samples_ns[i];
        run->timed_ns += (int64_t)(samples_ns[i] * (double)(run->cold ? 1 : batch));
    }
    run->calls += batch;
    run->cpu_ns += cpu_ns;
    return TP_OK;
}

static bool measure_converged(const measure_run *run)
{
    return (int64_t)run->samples.count >= run->options.min_samples && run->timed_ns >= run->options.min_time_ns &&
           measure_samples_noise(&run->samples) <= run->options.max_noise;
}

/* The warm-up: one call, unheld and untimed (first-call costs such as a JIT compile
 * are never held); cold, a flush first, timed by a pair of records (*flush_ns: a cold
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
        status = run->fn(run->stream, run->arg);
    if (status == TP_OK)
        status = measure_wait(run, NULL);
    float ms = 0;
    if (status == TP_OK && run->cold)
        status = tp_event_elapsed_time(run->events[0], run->events[1], &ms);
    *flush_ns = (double)ms * 1e6;
    run->stretch_host_ns = (double)(measure_now() - began);
    return status;
}

/* The warm-up and the calibration (one held call, untimed): the batch. */
static tp_status measure_calibrate(measure_run *run)
{
    double flush_ns = 0, call_ns = 0, cpu_ns = 0;
    tp_status status = measure_warm_up(run, &flush_ns);
    if (status != TP_OK)
        return status;
    bool kept = false;
    int64_t queued = 0;
    while (!kept) /* run_outs_max + 1 times at most: then the stretch is unheld */
        if ((status = measure_stretch(run, 1, &call_ns, &queued, &cpu_ns, &kept)) != TP_OK)
            return status;
    run->batch = measure_batch_choose(run, call_ns + flush_ns, cpu_ns);
    /* A chosen batch's events are all made here, outside any hold; a larger one's
     * beyond batch_max as its calls reach them. */
    return measure_events_reserve(run, run->cold ? (run->batch < batch_max ? run->batch : batch_max) : 1);
}

static tp_status measure_loop(measure_run *run)
{
    tp_status status = TP_OK;
    while (run->samples.count == 0 || !measure_past_max_time(run)) {
        double cpu_ns = 0;
        bool kept = false;
        int64_t queued = 0;
        if ((status = measure_stretch(run, run->batch, run->stretch_ns, &queued, &cpu_ns, &kept)) != TP_OK)
            break;
        if (kept && (status = measure_keep(run, run->stretch_ns, queued, cpu_ns)) != TP_OK)
            break;
        if (measure_converged(run))
            break;
    }
    if (status == TP_ERR_NOT_READY && run->wait_ran_out && run->samples.count > 0) {
        measure_note(run,
                     "the last stretch was not done %.3g s after the call (is the stream held elsewhere?): "
                     "dropped",
                     (double)(measure_now() - run->started_ns) / 1e9);
        status = TP_OK;
    }
    return status;
}

/* Why max_time came first: the first of min_samples, min_time and max_noise not met. */
static void measure_note_max_time(measure_run *run, const measure_stats *stats)
{
    double max_time_s = (double)run->options.max_time_ns / 1e9;
    if ((int64_t)run->samples.count < run->options.min_samples)
        measure_note(run, "max_time %.3g s passed after %zu of min_samples %" PRId64 " samples", max_time_s,
                     run->samples.count, run->options.min_samples);
    else if (run->timed_ns < run->options.min_time_ns)
        measure_note(run, "max_time %.3g s passed after %.3g of min_time %.3g s timed", max_time_s,
                     (double)run->timed_ns / 1e9, (double)run->options.min_time_ns / 1e9);
    else
        measure_note(run, "max_time %.3g s passed at noise %.3g %% (max_noise %.3g %%)", max_time_s, stats->noise * 100,
                     run->options.max_noise * 100);
}

/* What was measured, into the caller's struct up to its size. */
static tp_status measure_answer(measure_run *run, tp_measurement *out)
{
    measure_stats stats;
    if (!measure_samples_stats(&run->samples, &stats))
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    bool converged = run->samples.count > 0 && measure_converged(run);
    double cpu_per_call = run->calls ? run->cpu_ns / (double)run->calls : 0;
    if (run->calls > 0 && cpu_per_call > host_bound_min_ns && stats.median * host_bound_ratio < cpu_per_call)
        measure_note(run,
                     "device time %.3g us per call, far below fn's %.3g us on the host: work run inside fn is "
                     "not on the stream",
                     stats.median / 1e3, cpu_per_call / 1e3);
    if (run->samples.count > 0 && !converged && run->cold &&
        stats.median < (double)run->timer_step_ns * sample_min_timer_steps)
        measure_note(run,
                     "a cold sample is one call, %.0f steps of the device's timer: its noise stays near the step's",
                     stats.median / (double)run->timer_step_ns);
    if (run->dropped > 0 && run->holding)
        measure_note(run,
                     "%" PRId64 " stretch%s dropped: %s hold ran out after %" PRId64
                     " ms (fn or the host stalled), the next held again",
                     run->dropped, run->dropped > 1 ? "es" : "", run->dropped > 1 ? "each one's" : "its",
                     run->ran_out_ns / 1000000);
    if (run->samples.count > 0 && !converged)
        measure_note_max_time(run, &stats);
    tp_measurement full = {
        .size = out->size,
        .calls = run->calls,
        .samples = (int64_t)run->samples.count,
        .batch = run->batch,
        .median_ns = stats.median,
        .mean_ns = stats.mean,
        .min_ns = stats.min,
        .max_ns = stats.max,
        .stdev_ns = stats.stdev,
        .noise = stats.noise,
        .cpu_ns = cpu_per_call,
        .held = run->holding && run->samples.count > 0,
        .converged = converged,
        .cold = run->cold,
    };
    memcpy(full.note, run->note, sizeof full.note);
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

tp_status tp_measure(tp_stream *stream, tp_work_fn fn, void *arg, const tp_measure_options *options,
                     tp_measurement *out)
{
    if (!fn || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: %s is NULL", fn ? "out" : "fn");
    if (out->size < offsetof(tp_measurement, calls) + sizeof out->calls)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_measure: out->size is %zu: set it to sizeof(tp_measurement)",
                       out->size);
    measure_run run = {.fn = fn, .arg = arg, .started_ns = measure_now(), .batch = 1};
    tp_status status = measure_options_read(options, &run.options);
    if (status != TP_OK)
        return status;
    int64_t grace = run.options.max_time_ns > wait_grace_min_ns ? run.options.max_time_ns : wait_grace_min_ns;
    run.wait_deadline_ns = run.options.max_time_ns > INT64_MAX - run.started_ns - grace
                               ? INT64_MAX
                               : run.started_ns + run.options.max_time_ns + grace;
    run.cold = run.options.flags & TP_MEASURE_COLD;
    if ((status = measure_start(&run, stream)) == TP_OK && (status = measure_calibrate(&run)) == TP_OK)
        status = measure_loop(&run);
    char message[512] = "";
    if (status != TP_OK)
        snprintf(message, sizeof message, "%s", tp_last_error());
    tp_status answered = run.stream ? measure_answer(&run, out) : TP_OK;
    measure_events_free(&run);
    measure_samples_free(&run.samples);
    if (status != TP_OK)
        return tp_fail(status, "%s", message);
    return answered;
}
