/*
 * tp_measure's stretches (rule 18): what runs under one hold. A batch stretch is a
 * timing record, the calls, a timing record (one sample, the interval over the batch
 * divided by it); a per-call stretch is, per call, (a flush when cold,) a record, the
 * call, a record (one sample per call). The hold is released once the stretch is
 * queued, so its watchdog times the host's submission, not the device's work: it runs
 * out when fn synchronizes the stream, blocks, or fills its queue, or when the host
 * itself stalls past it (a loaded machine). Such a stretch is dropped, its samples
 * never seen, and the next one held again; after two in a row, every later stretch is
 * unheld.
 */
#include "core/measure_run.h"

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
/* The caller's wait_check runs between slices of a wait this long. */
static const int64_t wait_slice_ns = 50 * 1000 * 1000;

int64_t measure_now(void)
{
    return (int64_t)tp_now_ns();
}

bool measure_past_max_time(const measure_run *run)
{
    return measure_now() - run->started_ns >= run->options.max_time_ns;
}

void measure_note(measure_run *run, const char *fmt, ...)
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

/* The sizes are checked: a user's batch of 2^60 wrapped them to 0. */
tp_status measure_events_reserve(measure_run *run, int64_t pairs)
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

void measure_events_free(measure_run *run)
{
    for (int64_t i = 0; i < run->pairs * 2; i++)
        (void)tp_event_destroy(run->events[i]);
    free(run->events);
    free(run->stretch_ns);
}

/* A per-call stretch's pairs, made as its calls reach them (doubling, up to its
 * batch): a batch cut short by max_time never makes the rest (10^8 made 2.5 GB of
 * events). */
static tp_status measure_events_reach(measure_run *run, int64_t pair, int64_t batch)
{
    if (pair < run->pairs)
        return TP_OK;
    int64_t pairs = run->pairs > batch / 2 ? batch : run->pairs * 2;
    return measure_events_reserve(run, pairs > pair ? pairs : pair + 1);
}

/* ------------------------------------------------------------- waiting */

/* A stream held elsewhere would otherwise keep the caller past max_time, and deaf to
 * Ctrl-C. */
tp_status measure_wait(measure_run *run, tp_event *event)
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

/* --------------------------------------------------------------- calls */

/* The floor's least work where the device has none of its own. */
static void measure_host_nothing(void *arg)
{
    (void)arg;
}

tp_status measure_call(measure_run *run, measure_work work, int64_t calls)
{
    bool host = run->options.host_work != NULL;
    if (work == MEASURE_WORK_EMPTY && !host) {
        if (run->stream->backend->stream_launch_empty)
            return run->stream->backend->stream_launch_empty(run->stream);
        return tp_stream_launch_host_fn(run->stream, measure_host_nothing, NULL);
    }
    if (!host)
        return run->fn(run->stream, run->arg);
    return measure_host_launch(run, work == MEASURE_WORK_EMPTY ? 0 : calls);
}

/* ------------------------------------------------------------- stretch */

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

/* A batch in host mode is one host function of `batch` calls; otherwise a call each. */
static tp_status measure_batch_queue(measure_run *run, measure_work work, int64_t batch, int64_t *queued,
                                     double *cpu_ns)
{
    tp_status status = tp_event_record(run->events[0], run->stream);
    if (status == TP_OK && run->options.host_work && work == MEASURE_WORK_FN) {
        *queued = batch;
        status = measure_call(run, work, batch);
    }
    for (int64_t i = 0; status == TP_OK && *queued < batch && !(i > 0 && measure_past_max_time(run)); i++) {
        int64_t called = measure_now();
        status = measure_call(run, work, 1);
        *cpu_ns += (double)(measure_now() - called);
        *queued += status == TP_OK;
    }
    return status == TP_OK ? tp_event_record(run->events[1], run->stream) : status;
}

static tp_status measure_per_call_queue(measure_run *run, measure_work work, int64_t batch, int64_t *queued,
                                        double *cpu_ns)
{
    /* The floor's too, where its flushes are cheap: a cold sample's own cost is after a flush. */
    bool flush = run->cold && (work == MEASURE_WORK_FN || run->floor_flush);
    tp_status status = TP_OK;
    for (int64_t i = 0; i < batch && !(i > 0 && measure_past_max_time(run)); i++) {
        if ((status = measure_events_reach(run, i, batch)) != TP_OK)
            break;
        if (flush && (status = run->stream->backend->stream_flush_cache(run->stream)) != TP_OK)
            break;
        if ((status = tp_event_record(run->events[2 * i], run->stream)) != TP_OK)
            break;
        int64_t called = measure_now();
        status = measure_call(run, work, 1);
        *cpu_ns += (double)(measure_now() - called);
        if (status == TP_OK)
            status = tp_event_record(run->events[2 * i + 1], run->stream);
        if (status != TP_OK)
            break;
        *queued = i + 1;
    }
    return status;
}

/* The stretch's samples, once its last record is reached, as the device timed them;
 * clocked, once the clock's mark after it is passed too (the stream's work), and the
 * stretch's clock. */
static tp_status measure_stretch_read(measure_run *run, measure_shape shape, int64_t queued, double *samples_ns,
                                      bool clocked)
{
    int64_t pairs = shape == MEASURE_SHAPE_PER_CALL ? queued : 1;
    tp_status status = measure_wait(run, clocked ? NULL : run->events[2 * pairs - 1]);
    run->stretch_clock_mhz = 0;
    if (status == TP_OK && clocked)
        measure_clock_read(run);
    for (int64_t i = 0; i < pairs && status == TP_OK; i++) {
        float ms = 0;
        status = tp_event_elapsed_time(run->events[2 * i], run->events[2 * i + 1], &ms);
        samples_ns[i] = (double)ms * 1e6 / (double)(shape == MEASURE_SHAPE_PER_CALL ? 1 : queued);
    }
    return status == TP_OK ? measure_host_status(run) : status;
}

/*
 * A failure (fn's or tpevent's) releases the hold and closes the range first, and keeps
 * the failing call's message. The range is the trace's, not the measurement's: a trace
 * that starts or stops between its push and its pop (fn's, another thread's) makes the
 * pop find no range open, which must not fail the measurement.
 */
tp_status measure_stretch(measure_run *run, measure_work work, measure_shape shape, int64_t batch, double *samples_ns,
                          int64_t *queued, double *cpu_ns, bool *kept)
{
    *kept = false;
    *queued = 0;
    *cpu_ns = 0;
    int64_t began = measure_now();
    tp_hold *hold = NULL;
    run->watchdog_ns = measure_watchdog_ns(run);
    tp_status status = run->holding ? tp_stream_hold(run->stream, run->watchdog_ns, &hold) : TP_OK;
    if (status != TP_OK)
        return status;
    bool pushed = tp_range_push(run->stream, work == MEASURE_WORK_EMPTY ? "tp_measure floor" : "tp_measure") == TP_OK;
    /* The SM clock's marks outside the timed interval, the stretch between them. */
    bool clocked = work == MEASURE_WORK_FN && run->clock && run->clock_on;
    status = clocked ? measure_clock_mark(run, 0) : TP_OK;
    if (status == TP_OK)
        status = shape == MEASURE_SHAPE_PER_CALL ? measure_per_call_queue(run, work, batch, queued, cpu_ns)
                                                 : measure_batch_queue(run, work, batch, queued, cpu_ns);
    if (status == TP_OK && clocked)
        status = measure_clock_mark(run, 1);
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
    return measure_stretch_read(run, shape, *queued, samples_ns, clocked);
}
