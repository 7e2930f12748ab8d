/* Stress: the random operations, each on handles borrowed from the pool, and the
 * statuses each may answer. */
#define _POSIX_C_SOURCE 200809L

#include "stress.h"

static const unsigned op_weights[OP_KIND_COUNT] = {0,
#define STRESS_OP_WEIGHT(name, text, weight) weight,
                                                   STRESS_OPS(STRESS_OP_WEIGHT)
#undef STRESS_OP_WEIGHT
};

unsigned random_event_flags(uint64_t *rng)
{
    static const unsigned choices[] = {
        TP_EVENT_DEFAULT,      TP_EVENT_TIMING,
        TP_EVENT_BLOCKING,     TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING,
    };
    /* Timing events twice as often: elapsed time needs two of them. */
    unsigned pick = random_below(rng, 8);
    return pick < 6 ? choices[pick] : TP_EVENT_TIMING;
}

tp_event *create_event(worker *w, int device, unsigned flags)
{
    tp_event *event = NULL;
    EXPECT_OK(w, tp_event_create(&event, device_names[device], flags));
    return event;
}

tp_stream *create_stream(worker *w, int device)
{
    tp_stream *stream = NULL;
    int priority = (int)random_below(&w->rng, 5) - 3; /* -3..1: clamped by the backend */
    EXPECT_OK(w, tp_stream_create(&stream, device_names[device], priority));
    return stream;
}

static bool op_event_record(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (!event)
        return false;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (stream) {
        note_event(w, 0, ei, event);
        note_stream(w, 1, si, stream);
        /* Rule 1: exactly when the devices differ. */
        expect_status(w, tp_event_record(event, stream), 1,
                      event_device == stream_device ? TP_OK : TP_ERR_DEVICE_MISMATCH);
        return_stream(&s->streams[si]);
    }
    return_event(&s->events[ei]);
    return stream != NULL;
}

static bool op_event_record_current(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (!stream)
        return false;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (event) {
        note_stream(w, 0, si, stream);
        note_event(w, 1, ei, event);
        /* Rule 11: the current stream of the event's device, which is this stream
         * if it is of that device and the default stream otherwise. Made current
         * only while borrowed: another thread may destroy it afterwards. */
        EXPECT_OK(w, tp_stream_set_current(stream));
        EXPECT_OK(w, tp_event_record(event, NULL));
        tp_stream *default_stream = NULL;
        EXPECT_OK(w, tp_stream_default(device_names[stream_device], &default_stream));
        EXPECT_OK(w, tp_stream_set_current(default_stream));
        return_event(&s->events[ei]);
    }
    return_stream(&s->streams[si]);
    return event != NULL;
}

static bool op_on_event(worker *w, op_kind op)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS);
    int device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &device, &flags);
    if (!event)
        return false;
    note_event(w, 0, ei, event);
    bool done = false;
    if (op == OP_EVENT_QUERY)
        EXPECT_OK(w, tp_event_query(event, &done));
    else
        EXPECT_OK(w, tp_event_synchronize(event));
    return_event(&s->events[ei]);
    return true;
}

static bool op_event_wait(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS), si = (int)random_below(&w->rng, STRESS_STREAMS);
    int event_device, stream_device;
    unsigned flags;
    tp_event *event = borrow_event(&s->events[ei], &event_device, &flags);
    if (!event)
        return false;
    tp_stream *stream = borrow_stream(&s->streams[si], &stream_device);
    if (stream) {
        note_event(w, 0, ei, event);
        note_stream(w, 1, si, stream);
        /* Any stream, of any device, may wait (rule 1); both spellings. */
        if (random_below(&w->rng, 2))
            EXPECT_OK(w, tp_event_wait(event, stream));
        else
            EXPECT_OK(w, tp_stream_wait_event(stream, event));
        return_stream(&s->streams[si]);
    }
    return_event(&s->events[ei]);
    return stream != NULL;
}

static bool op_event_elapsed(worker *w)
{
    stress *s = w->stress;
    int ai = (int)random_below(&w->rng, STRESS_EVENTS), bi = (int)random_below(&w->rng, STRESS_EVENTS);
    int a_device, b_device;
    unsigned a_flags, b_flags;
    tp_event *start = borrow_event(&s->events[ai], &a_device, &a_flags);
    if (!start)
        return false;
    tp_event *end = borrow_event(&s->events[bi], &b_device, &b_flags);
    if (end) {
        note_event(w, 0, ai, start);
        note_event(w, 1, bi, end);
        float ms = NAN;
        tp_status status = tp_event_elapsed_time(start, end, &ms);
        /* Rule 7: TIMING_DISABLED first, and exactly when a flag is missing; the
         * others depend on what the other threads did meanwhile. Two devices are
         * timed too, on the host clock (rule 13). */
        if (!(a_flags & b_flags & TP_EVENT_TIMING))
            expect_status(w, status, 1, TP_ERR_TIMING_DISABLED);
        else
            expect_status(w, status, 3, TP_OK, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY);
        if (status == TP_OK && (!isfinite(ms) || (start == end && ms != 0.0f)))
            fail("thread %d: elapsed time of event slots %d and %d is %g ms", w->index, ai, bi, (double)ms);
        /* The timestamp behind it (rule 13), while other threads record the event. */
        int64_t ns = 0;
        status = tp_event_timestamp(start, &ns);
        if (!(a_flags & TP_EVENT_TIMING))
            expect_status(w, status, 1, TP_ERR_TIMING_DISABLED);
        else
            expect_status(w, status, 3, TP_OK, TP_ERR_NOT_RECORDED, TP_ERR_NOT_READY);
        return_event(&s->events[bi]);
    }
    return_event(&s->events[ai]);
    return end != NULL;
}

static bool op_event_replace(worker *w)
{
    stress *s = w->stress;
    int ei = (int)random_below(&w->rng, STRESS_EVENTS);
    tp_event *old = take_event(&s->events[ei]);
    if (!old)
        return false;
    note_event(w, 0, ei, old);
    /* Often with a record still pending (rule 9): the slot's event was just in use. */
    EXPECT_OK(w, tp_event_destroy(old));
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    unsigned flags = random_event_flags(&w->rng);
    tp_event *event = create_event(w, device, flags);
    note_event(w, 1, ei, event);
    put_event(&s->events[ei], event, device, flags);
    return true;
}

static tp_status launch_host_fn(worker *w, tp_stream *stream)
{
    stress *s = w->stress;
    void (*fn)(void *) = random_below(&w->rng, 4) == 0 ? host_busy : host_count;
    tp_status status = tp_stream_launch_host_fn(stream, fn, s);
    if (status == TP_OK)
        atomic_fetch_add_explicit(&s->host_fns_launched, 1, memory_order_relaxed);
    return status;
}

static bool op_on_stream(worker *w, op_kind op)
{
    stress *s = w->stress;
    int si = (int)random_below(&w->rng, STRESS_STREAMS);
    int device;
    tp_stream *stream = borrow_stream(&s->streams[si], &device);
    if (!stream)
        return false;
    note_stream(w, 0, si, stream);
    bool idle = false;
    tp_event *event = NULL;
    switch (op) {
    case OP_HOST_FN:
        EXPECT_OK(w, launch_host_fn(w, stream));
        break;
    case OP_STREAM_QUERY:
        EXPECT_OK(w, tp_stream_query(stream, &idle));
        break;
    case OP_STREAM_SYNCHRONIZE:
        EXPECT_OK(w, tp_stream_synchronize(stream));
        break;
    case OP_STREAM_RECORD_NEW_EVENT:
        EXPECT_OK(w, tp_stream_record_event(stream, &event));
        note_event(w, 1, -1, event);
        if (random_below(&w->rng, 2))
            EXPECT_OK(w, tp_event_synchronize(event));
        EXPECT_OK(w, tp_event_destroy(event));
        break;
    default:
        fail("op_on_stream: %s", op_names[op]);
    }
    return_stream(&s->streams[si]);
    return true;
}

static bool op_stream_wait_stream(worker *w)
{
    stress *s = w->stress;
    int ai = (int)random_below(&w->rng, STRESS_STREAMS), bi = (int)random_below(&w->rng, STRESS_STREAMS);
    int a_device, b_device;
    tp_stream *waiter = borrow_stream(&s->streams[ai], &a_device);
    if (!waiter)
        return false;
    tp_stream *other = borrow_stream(&s->streams[bi], &b_device);
    if (other) {
        note_stream(w, 0, ai, waiter);
        note_stream(w, 1, bi, other);
        EXPECT_OK(w, tp_stream_wait_stream(waiter, other));
        return_stream(&s->streams[bi]);
    }
    return_stream(&s->streams[ai]);
    return other != NULL;
}

static bool op_stream_replace(worker *w)
{
    stress *s = w->stress;
    int si = (int)random_below(&w->rng, STRESS_STREAMS);
    tp_stream *old = take_stream(&s->streams[si]);
    if (!old)
        return false;
    note_stream(w, 0, si, old);
    /* Work still pending when it goes (rule 9): it must run all the same. */
    EXPECT_OK(w, launch_host_fn(w, old));
    EXPECT_OK(w, tp_stream_destroy(old));
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    tp_stream *stream = create_stream(w, device);
    note_stream(w, 1, si, stream);
    put_stream(&s->streams[si], stream, device);
    return true;
}

static bool op_device_synchronize(worker *w)
{
    int device = (int)random_below(&w->rng, STRESS_DEVICES);
    atomic_store(&w->activity.device, device);
    EXPECT_OK(w, tp_device_synchronize(device_names[device]));
    return true;
}

static op_kind pick_op(uint64_t *rng)
{
    unsigned total = 0;
    for (int op = 0; op < OP_KIND_COUNT; op++)
        total += op_weights[op];
    unsigned pick = random_below(rng, total);
    for (int op = 1; op < OP_KIND_COUNT; op++) {
        if (pick < op_weights[op])
            return (op_kind)op;
        pick -= op_weights[op];
    }
    return OP_EVENT_QUERY;
}

static bool perform(worker *w, op_kind op)
{
    switch (op) {
    case OP_EVENT_RECORD:
        return op_event_record(w);
    case OP_EVENT_RECORD_CURRENT:
        return op_event_record_current(w);
    case OP_EVENT_QUERY:
    case OP_EVENT_SYNCHRONIZE:
        return op_on_event(w, op);
    case OP_EVENT_WAIT:
        return op_event_wait(w);
    case OP_EVENT_ELAPSED:
        return op_event_elapsed(w);
    case OP_EVENT_REPLACE:
        return op_event_replace(w);
    case OP_HOST_FN:
    case OP_STREAM_QUERY:
    case OP_STREAM_SYNCHRONIZE:
    case OP_STREAM_RECORD_NEW_EVENT:
        return op_on_stream(w, op);
    case OP_STREAM_WAIT_STREAM:
        return op_stream_wait_stream(w);
    case OP_STREAM_REPLACE:
        return op_stream_replace(w);
    case OP_DEVICE_SYNCHRONIZE:
        return op_device_synchronize(w);
    case OP_IDLE:
    case OP_KIND_COUNT:
        break;
    }
    fail("perform: operation %d", (int)op);
}

void *worker_main(void *arg)
{
    worker *w = arg;
    while (!atomic_load_explicit(&w->stress->stop, memory_order_relaxed)) {
        op_kind op = pick_op(&w->rng);
        begin_op(w, op);
        end_op(w, op, perform(w, op));
    }
    return NULL;
}
