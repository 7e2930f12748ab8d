/* The model test's checks: what the backend has done against what the model says it
 * must and must not have done, in order, and the statuses and times it gives. */
#define _POSIX_C_SOURCE 200809L

#include "model_runner.h"

/*
 * What the model says must have happened and has not yet, in words (NULL if
 * nothing): a host function done in the model missing from the log, an event done
 * in the model not done, a stream idle in the model busy.
 */
static bool find_missing(runner *r, char *what, size_t size)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool present[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++)
        present[log[i]] = true;
    for (int i = 0; i < m->item_count; i++) {
        if (item_is_logged(&m->items[i]) && model_item_done(m, i) && !present[i]) {
            char item[80];
            describe_item(m, i, item, sizeof item);
            snprintf(what, size, "%s has not run", item);
            return true;
        }
    }
    for (int e = 0; e < m->event_count; e++) {
        if (m->events[e].alive && model_event_done(m, e) && !real_event_done(r, e)) {
            snprintf(what, size, "event e%d is not done (query false)", e);
            return true;
        }
    }
    for (int s = 0; s < m->stream_count; s++) {
        if (m->streams[s].alive && model_stream_idle(m, s) && !real_stream_idle(r, s)) {
            snprintf(what, size, "stream s%d is not idle (query false)", s);
            return true;
        }
    }
    return false;
}

static void wait_for_what_must_happen(runner *r)
{
    char what[160];
    double deadline = monotonic_seconds() + EVENTUALLY_SECONDS;
    while (find_missing(r, what, sizeof what)) {
        if (monotonic_seconds() > deadline)
            fail(r, "after %.0f s, %s, though the model says nothing blocks it", EVENTUALLY_SECONDS, what);
        sleep_us(200);
    }
}

/*
 * The order: for each host function that ran, the last host function of each
 * stream that must precede it (by its start clock) ran before it. With that
 * checked for every entry, every predecessor, not only the last, ran first.
 */
static void check_order(runner *r, const int *log, int count)
{
    const model *m = r->m;
    int *rank = r->rank;
    for (int i = 0; i < m->item_count; i++)
        rank[i] = -1;
    for (int i = 0; i < count; i++)
        rank[log[i]] = i;
    for (int i = 0; i < count; i++) {
        const model_item *x = &m->items[log[i]];
        for (int t = 0; t < m->stream_count; t++) {
            const model_stream *s = &m->streams[t];
            for (int p = x->start_clock[t] - 1; p >= 0; p--) {
                int y = s->items[p];
                if (!item_is_logged(&m->items[y]))
                    continue;
                if (rank[y] < 0 || rank[y] > i) {
                    char before[80], after[80];
                    describe_item(m, y, before, sizeof before);
                    describe_item(m, log[i], after, sizeof after);
                    fail(r, "%s ran %s %s, which the model says must run first", after,
                         rank[y] < 0 ? "without" : "before", before);
                }
                break; /* the last one suffices: it was checked against its own */
            }
        }
    }
}

/* Nothing ran, or is done, that the model says is blocked; the order is right. */
static void check_nothing_early(runner *r)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool seen[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++) {
        int item = log[i];
        char text[80];
        if (item < 0 || item >= m->item_count || !item_is_logged(&m->items[item]))
            fail(r, "the log holds %d, which is no host function", item);
        describe_item(m, item, text, sizeof text);
        if (seen[item])
            fail(r, "%s ran twice", text);
        seen[item] = true;
        if (!model_item_done(m, item))
            fail(r, "%s ran, but the model says a closed gate blocks it", text);
    }
    check_order(r, log, count);
    for (int e = 0; e < m->event_count; e++)
        if (m->events[e].alive && !model_event_done(m, e) && real_event_done(r, e))
            fail(r, "event e%d is done, but the model says its record (s%d, after %d items) is blocked", e,
                 m->events[e].stream, m->events[e].count);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].alive && !model_stream_idle(m, s) && real_stream_idle(r, s))
            fail(r, "stream s%d is idle, but the model says it has blocked work", s);
}

/* The device's error_ns as it is now (it grows when a GPU's calibration meets a
 * wider anchor), and never less than at the start. */
static int64_t error_ns_now(const runner *r, int device)
{
    tp_clock_info clock = {0, 0};
    if (tp_device_clock(r->devices[device], &clock) == TP_OK && clock.error_ns > r->error_ns[device])
        return clock.error_ns;
    return r->error_ns[device];
}

/* How far, in ms, elapsed_time(a, b) of records in that order may fall below 0:
 * none on one device (its own clock); on the host clock, the two devices' error_ns
 * (rule 13), and a float's step. */
static double order_tolerance_ms(const runner *r, int a, int b, float ms)
{
    const model_event *x = &r->m->events[a], *y = &r->m->events[b];
    if (x->device == y->device)
        return 0.0;
    return (double)(error_ns_now(r, x->device) + error_ns_now(r, y->device)) / 1e6 + fabs((double)ms) * FLT_EPSILON;
}

/* Rule 13: one event's timestamp answers as elapsed_time(e, e) does (rule 7's
 * errors), and is written only on success. */
static void check_timestamp(runner *r, int a, bool settled, int64_t *ns)
{
    tp_status want = model_elapsed(r->m, a, a);
    *ns = INT64_MIN;
    tp_status got = tp_event_timestamp(r->events[a], ns);
    if (!(got == want || (!settled && got == TP_ERR_NOT_READY && want == TP_OK)))
        fail(r, "timestamp(e%d) returned %s, the model expects %s", a, tp_status_name(got), tp_status_name(want));
    if (got != TP_OK && *ns != INT64_MIN)
        fail(r, "timestamp(e%d) returned %s but wrote %" PRId64, a, tp_status_name(got), *ns);
    if (got != TP_OK)
        *ns = INT64_MIN;
}

static void check_elapsed(runner *r, bool settled)
{
    const model *m = r->m;
    int64_t timestamps[MODEL_MAX_EVENTS];
    for (int a = 0; a < m->event_count; a++)
        if (m->events[a].alive)
            check_timestamp(r, a, settled, &timestamps[a]);
    for (int a = 0; a < m->event_count; a++) {
        for (int b = 0; b < m->event_count; b++) {
            if (!m->events[a].alive || !m->events[b].alive)
                continue;
            float ms = NAN;
            tp_status want = model_elapsed(m, a, b);
            tp_status got = tp_event_elapsed_time(r->events[a], r->events[b], &ms);
            /* Unsettled (a gate closed on a backend that may hold other host
             * functions back with it): a record the model calls reached may not be
             * yet. */
            bool allowed = got == want || (!settled && got == TP_ERR_NOT_READY && want == TP_OK);
            if (!allowed)
                fail(r, "elapsed_time(e%d, e%d) returned %s, the model expects %s", a, b, tp_status_name(got),
                     tp_status_name(want));
            if (got != TP_OK)
                continue;
            if (!isfinite(ms))
                fail(r, "elapsed_time(e%d, e%d) = %g ms", a, b, (double)ms);
            /* A record that must follow another (on its stream, or through waits)
             * cannot be earlier in time, on either clock. */
            if (model_record_precedes(m, a, b) && (double)ms < -order_tolerance_ms(r, a, b, ms))
                fail(r, "elapsed_time(e%d, e%d) = %g ms, though e%d's record follows e%d's (on s%d after s%d)", a, b,
                     (double)ms, b, a, m->events[b].stream, m->events[a].stream);
            if (a == b && ms != 0.0f)
                fail(r, "elapsed_time(e%d, e%d) = %g ms, not 0", a, a, (double)ms);
            /* Two devices: the difference of the two timestamps (rule 13). */
            if (m->events[a].device != m->events[b].device && timestamps[a] != INT64_MIN &&
                timestamps[b] != INT64_MIN) {
                double diff = (double)(timestamps[b] - timestamps[a]) / 1e6;
                if (fabs(ms - diff) > fabs(diff) * FLT_EPSILON)
                    fail(r, "elapsed_time(e%d, e%d) = %.9f ms across devices, but the timestamps differ by %.9f ms", a,
                         b, (double)ms, diff);
            }
        }
    }
}

void checkpoint(runner *r)
{
    model_settle(r->m);
    bool settled = r->independent_host_threads || !model_gate_pending(r->m);
    trace(r, "-- checkpoint (%s)", settled ? "done and not done" : "not done only: a gate holds the host thread");
    if (settled)
        wait_for_what_must_happen(r);
    check_nothing_early(r);
    check_elapsed(r, settled);
}

/* Everything with a clock below `clock` has run: after a synchronize (rule 5). */
void check_ran_up_to(runner *r, const int clock[MODEL_MAX_STREAMS], const char *what)
{
    const model *m = r->m;
    int *log = r->snapshot;
    bool present[MODEL_MAX_ITEMS] = {false};
    int count = snapshot_log(r, log);
    for (int i = 0; i < count; i++)
        present[log[i]] = true;
    for (int t = 0; t < m->stream_count; t++) {
        for (int p = 0; p < clock[t]; p++) {
            int item = m->streams[t].items[p];
            if (item_is_logged(&m->items[item]) && !present[item]) {
                char text[80];
                describe_item(m, item, text, sizeof text);
                fail(r, "%s returned before %s ran", what, text);
            }
        }
    }
}

/* A call that blocks may be made if the model says it returns: the CPU always
 * runs unblocked work; other backends only with no gate closed on a queued item. */
bool may_block_on(runner *r, bool done_in_model)
{
    return done_in_model && (r->independent_host_threads || !model_gate_pending(r->m));
}
