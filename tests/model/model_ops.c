/* The model test's operations: each made on the backend and on the model, and what
 * each returns checked against what the model expects. */
#define _POSIX_C_SOURCE 200809L

#include "model_runner.h"

static const int op_weights[OP_KIND_COUNT] = {
    [OP_HOST_FN] = 18,         [OP_GATE] = 5,          [OP_RECORD] = 16,        [OP_RECORD_CURRENT] = 4,
    [OP_RECORD_NEW_EVENT] = 2, [OP_WAIT_EVENT] = 10,   [OP_WAIT_STREAM] = 5,    [OP_CREATE_EVENT] = 4,
    [OP_DESTROY_EVENT] = 2,    [OP_CREATE_STREAM] = 2, [OP_DESTROY_STREAM] = 2, [OP_OPEN_GATE] = 3,
    [OP_SET_CURRENT] = 3,      [OP_QUERY_EVENT] = 5,   [OP_SYNC_EVENT] = 4,     [OP_SYNC_STREAM] = 3,
    [OP_SYNC_DEVICE] = 1,      [OP_CHECKPOINT] = 6,
};

op_kind pick_op(runner *r)
{
    int total = 0;
    for (int i = 0; i < OP_KIND_COUNT; i++)
        total += op_weights[i];
    int pick = random_below(r, total);
    for (int i = 0; i < OP_KIND_COUNT; i++) {
        if (pick < op_weights[i])
            return (op_kind)i;
        pick -= op_weights[i];
    }
    return OP_CHECKPOINT;
}

static unsigned random_flags(runner *r)
{
    static const unsigned choices[] = {
        TP_EVENT_DEFAULT,      TP_EVENT_TIMING,
        TP_EVENT_BLOCKING,     TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_TIMING, /* refused, rule 8 */
        TP_EVENT_TIMING,       TP_EVENT_TIMING,
    };
    return choices[random_below(r, (int)(sizeof choices / sizeof choices[0]))];
}

static void launch(runner *r, int stream, int item, int gate)
{
    r->calls[item] = (host_call){.runner = r, .item = item, .gate = gate};
    EXPECT_OK(r, tp_stream_launch_host_fn(r->streams[stream], host_call_run, &r->calls[item]));
}

void create_stream(runner *r, int device)
{
    tp_stream *stream = NULL;
    EXPECT_OK(r, tp_stream_create(&stream, device_name_of(r, device), 0));
    int s = model_add_stream(r->m, device, false);
    r->streams[s] = stream;
    trace(r, "s%d = stream_create(%s)", s, device_name_of(r, device));
}

void create_event(runner *r, int device, unsigned flags)
{
    tp_event *event = NULL;
    int e;
    if ((flags & TP_EVENT_INTERPROCESS) && !(flags & TP_EVENT_TIMING) && r->no_ipc[device]) {
        trace(r, "event_create(%s, flags 0x%x) -> TP_ERR_UNSUPPORTED", device_name_of(r, device), flags);
        EXPECT_STATUS(r, tp_event_create(&event, device_name_of(r, device), flags), TP_ERR_UNSUPPORTED);
        return;
    }
    tp_status want = model_create_event(r->m, device, flags, &e);
    trace(r, "e%d = event_create(%s, flags 0x%x) -> %s", e, device_name_of(r, device), flags, tp_status_name(want));
    EXPECT_STATUS(r, tp_event_create(&event, device_name_of(r, device), flags), want);
    if (want == TP_OK)
        r->events[e] = event;
}

static void op_sync_event(runner *r)
{
    int e = random_event(r);
    if (e < 0)
        return;
    model_settle(r->m);
    if (!may_block_on(r, model_event_done(r->m, e)))
        return;
    trace(r, "event_synchronize(e%d)", e);
    blocking_call(r, "event_synchronize");
    EXPECT_OK(r, tp_event_synchronize(r->events[e]));
    blocking_call_returned(r);
    int clock[MODEL_MAX_STREAMS];
    model_event_clock(r->m, e, clock);
    check_ran_up_to(r, clock, "event_synchronize");
    if (!real_event_done(r, e))
        fail(r, "e%d not done after event_synchronize returned", e);
}

static void op_sync_stream(runner *r)
{
    int s = random_stream(r, -1, true);
    if (s < 0)
        return;
    model_settle(r->m);
    if (!may_block_on(r, model_stream_idle(r->m, s)))
        return;
    trace(r, "stream_synchronize(s%d)", s);
    blocking_call(r, "stream_synchronize");
    EXPECT_OK(r, tp_stream_synchronize(r->streams[s]));
    blocking_call_returned(r);
    check_ran_up_to(r, r->m->streams[s].clock, "stream_synchronize");
    if (!real_stream_idle(r, s))
        fail(r, "s%d not idle after stream_synchronize returned", s);
}

/* Every stream of the device, destroyed ones included: their work is the
 * device's work too. */
static void op_sync_device(runner *r)
{
    int device = random_below(r, device_count(r));
    model *m = r->m;
    model_settle(m);
    bool idle = true;
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].device == device && !model_stream_idle(m, s))
            idle = false;
    if (!may_block_on(r, idle))
        return;
    trace(r, "device_synchronize(%s)", device_name_of(r, device));
    blocking_call(r, "device_synchronize");
    EXPECT_OK(r, tp_device_synchronize(device_name_of(r, device)));
    blocking_call_returned(r);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].device == device)
            check_ran_up_to(r, m->streams[s].clock, "device_synchronize");
}

static void op_query_event(runner *r)
{
    int e = random_event(r);
    if (e < 0)
        return;
    model_settle(r->m);
    bool want = model_event_done(r->m, e);
    trace(r, "event_query(e%d) -> %s", e, want ? "done (eventually)" : "not done");
    if (!want) {
        if (real_event_done(r, e))
            fail(r, "e%d is done, but the model says its record is blocked", e);
        return;
    }
    if (!may_block_on(r, true))
        return;
    double deadline = monotonic_seconds() + EVENTUALLY_SECONDS;
    while (!real_event_done(r, e)) {
        if (monotonic_seconds() > deadline)
            fail(r, "e%d not done after %.0f s, though the model says nothing blocks it", e, EVENTUALLY_SECONDS);
        sleep_us(200);
    }
}

static void op_record(runner *r, op_kind op)
{
    model *m = r->m;
    int e = random_event(r);
    if (e < 0)
        return;
    if (op == OP_RECORD_CURRENT) {
        /* NULL stream: the thread's current stream of the event's device (rule 11). */
        int s = m->current[m->events[e].device];
        tp_status want = model_record(m, e, s);
        trace(r, "event_record(e%d, NULL = current s%d) -> %s", e, s, tp_status_name(want));
        EXPECT_STATUS(r, tp_event_record(r->events[e], NULL), want);
        return;
    }
    int s = random_stream(r, -1, true);
    tp_status want = model_record(m, e, s);
    trace(r, "event_record(e%d, s%d) -> %s", e, s, tp_status_name(want));
    EXPECT_STATUS(r, tp_event_record(r->events[e], r->streams[s]), want);
}

static void op_record_new_event(runner *r)
{
    model *m = r->m;
    if (m->event_count == MODEL_MAX_EVENTS)
        return;
    int s = random_stream(r, -1, true);
    tp_event *event = NULL;
    EXPECT_OK(r, tp_stream_record_event(r->streams[s], &event));
    int e;
    /* A new event is created with timing (the seed's record_event()). */
    EXPECT_STATUS(r, model_create_event(m, m->streams[s].device, TP_EVENT_TIMING, &e), TP_OK);
    EXPECT_OK(r, model_record(m, e, s));
    r->events[e] = event;
    unsigned flags = 0;
    EXPECT_OK(r, tp_event_flags(event, &flags));
    if (!(flags & TP_EVENT_TIMING))
        fail(r, "stream_record_event made an event without TP_EVENT_TIMING (flags 0x%x)", flags);
    trace(r, "e%d = stream_record_event(s%d, new)", e, s);
}

/* Whether a stream of device `a` waiting on device `b` spans two backends. Such a
 * wait means what a wait on one backend means (rules 6, 14), except on an
 * interprocess event: refused with TP_ERR_UNSUPPORTED, and the model then does
 * nothing. */
static bool across_backends(const runner *r, int a, int b)
{
    return r->types[a] != r->types[b];
}

static void op_wait(runner *r, op_kind op)
{
    int s = random_stream(r, -1, true);
    if (op == OP_WAIT_STREAM) {
        int other = random_stream(r, -1, true);
        trace(r, "stream_wait_stream(s%d, s%d)%s", s, other,
              across_backends(r, r->m->streams[s].device, r->m->streams[other].device) ? " across backends" : "");
        model_wait_stream(r->m, s, other);
        EXPECT_OK(r, tp_stream_wait_stream(r->streams[s], r->streams[other]));
        return;
    }
    int e = random_event(r);
    if (e < 0)
        return;
    bool across = across_backends(r, r->m->streams[s].device, r->m->events[e].device);
    trace(r, "event_wait(e%d, s%d)%s", e, s, across ? " across backends" : "");
    if (across && (r->m->events[e].flags & TP_EVENT_INTERPROCESS)) {
        EXPECT_STATUS(r, tp_event_wait(r->events[e], r->streams[s]), TP_ERR_UNSUPPORTED);
        return;
    }
    model_wait_event(r->m, s, e);
    if (random_below(r, 2))
        EXPECT_OK(r, tp_event_wait(r->events[e], r->streams[s]));
    else
        EXPECT_OK(r, tp_stream_wait_event(r->streams[s], r->events[e]));
}

static void op_destroy_stream(runner *r)
{
    model *m = r->m;
    int s = random_stream(r, -1, false);
    if (s < 0)
        return;
    int device = m->streams[s].device;
    if (m->current[device] == s)
        EXPECT_OK(r, tp_stream_set_current(r->streams[default_stream_of(r, device)]));
    trace(r, "stream_destroy(s%d)%s", s, model_stream_idle(m, s) ? "" : " with work pending");
    model_destroy_stream(m, s);
    EXPECT_OK(r, tp_stream_destroy(r->streams[s]));
    r->streams[s] = NULL;
}

void perform(runner *r, op_kind op)
{
    model *m = r->m;
    int s, e, g, item;
    switch (op) {
    case OP_HOST_FN:
        s = random_stream(r, -1, true);
        item = model_host_fn(m, s);
        trace(r, "launch_host_fn(s%d) = #%d", s, item);
        launch(r, s, item, -1);
        break;
    case OP_GATE:
        s = random_stream(r, -1, true);
        /* Mostly a closed gate: an open one is a plain host function. */
        g = random_gate(r, random_below(r, 8) != 0);
        if (g < 0)
            g = random_gate(r, false);
        item = model_gate(m, s, g);
        trace(r, "launch_host_fn(s%d, gate g%d%s) = #%d", s, g, m->gate_open[g] ? ", open" : "", item);
        launch(r, s, item, g);
        break;
    case OP_RECORD:
    case OP_RECORD_CURRENT:
        op_record(r, op);
        break;
    case OP_RECORD_NEW_EVENT:
        op_record_new_event(r);
        break;
    case OP_WAIT_EVENT:
    case OP_WAIT_STREAM:
        op_wait(r, op);
        break;
    case OP_CREATE_EVENT:
        if (m->event_count < MODEL_MAX_EVENTS)
            create_event(r, random_below(r, device_count(r)), random_flags(r));
        break;
    case OP_DESTROY_EVENT:
        e = random_event(r);
        if (e < 0)
            break;
        trace(r, "event_destroy(e%d)%s", e, model_event_done(m, e) ? "" : " with its record pending");
        model_destroy_event(m, e);
        EXPECT_OK(r, tp_event_destroy(r->events[e]));
        r->events[e] = NULL;
        break;
    case OP_CREATE_STREAM:
        if (m->stream_count < MODEL_MAX_STREAMS)
            create_stream(r, random_below(r, device_count(r)));
        break;
    case OP_DESTROY_STREAM:
        op_destroy_stream(r);
        break;
    case OP_OPEN_GATE:
        g = random_gate(r, true);
        if (g < 0)
            break;
        trace(r, "open gate g%d", g);
        model_open_gate(m, g);
        gate_open(&r->gates[g]);
        break;
    case OP_SET_CURRENT:
        s = random_stream(r, -1, true);
        trace(r, "stream_set_current(s%d)", s);
        EXPECT_OK(r, tp_stream_set_current(r->streams[s]));
        m->current[m->streams[s].device] = s;
        break;
    case OP_QUERY_EVENT:
        op_query_event(r);
        break;
    case OP_SYNC_EVENT:
        op_sync_event(r);
        break;
    case OP_SYNC_STREAM:
        op_sync_stream(r);
        break;
    case OP_SYNC_DEVICE:
        op_sync_device(r);
        break;
    case OP_CHECKPOINT:
    case OP_KIND_COUNT:
        checkpoint(r);
        break;
    }
}
