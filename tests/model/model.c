#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void model_overflow(const char *what)
{
    fprintf(stderr, "model: too many %s for the model's fixed tables\n", what);
    abort();
}

void model_init(model *m, int gate_count)
{
    memset(m, 0, sizeof *m);
    if (gate_count > MODEL_MAX_GATES)
        model_overflow("gates");
    m->gate_count = gate_count;
    m->current[0] = m->current[1] = -1;
}

int model_add_stream(model *m, int device, bool is_default)
{
    if (m->stream_count == MODEL_MAX_STREAMS)
        model_overflow("streams");
    int index = m->stream_count++;
    model_stream *s = &m->streams[index];
    s->device = device;
    s->alive = true;
    s->is_default = is_default;
    if (is_default && m->current[device] < 0)
        m->current[device] = index;
    return index;
}

void model_destroy_stream(model *m, int stream)
{
    model_stream *s = &m->streams[stream];
    s->alive = false;
    /* The caller makes the default stream current again before destroying the
     * current stream, as a program must. */
    if (m->current[s->device] == stream) {
        for (int i = 0; i < m->stream_count; i++)
            if (m->streams[i].is_default && m->streams[i].device == s->device)
                m->current[s->device] = i;
    }
}

tp_status model_create_event(model *m, int device, unsigned flags, int *event)
{
    *event = -1;
    if ((flags & TP_EVENT_INTERPROCESS) && (flags & TP_EVENT_TIMING))
        return TP_ERR_INVALID_ARGUMENT;
    if (m->event_count == MODEL_MAX_EVENTS)
        model_overflow("events");
    *event = m->event_count++;
    m->events[*event] = (model_event){.alive = true, .device = device, .flags = flags};
    return TP_OK;
}

void model_destroy_event(model *m, int event)
{
    m->events[event].alive = false;
}

static void clock_max(int into[MODEL_MAX_STREAMS], const int other[MODEL_MAX_STREAMS])
{
    for (int i = 0; i < MODEL_MAX_STREAMS; i++)
        if (other[i] > into[i])
            into[i] = other[i];
}

/* What has completed once `stream` has completed its first `count` items. */
static const int *clock_after(const model *m, int stream, int count)
{
    static const int none[MODEL_MAX_STREAMS];
    if (count == 0)
        return none;
    return m->items[m->streams[stream].items[count - 1]].end_clock;
}

static int append(model *m, int stream, model_item item)
{
    if (m->item_count == MODEL_MAX_ITEMS)
        model_overflow("items");
    model_stream *s = &m->streams[stream];
    int index = m->item_count++;
    item.stream = stream;
    item.position = s->length;
    memcpy(item.start_clock, s->clock, sizeof item.start_clock);
    memcpy(item.end_clock, s->clock, sizeof item.end_clock);
    item.end_clock[stream] = item.position + 1;
    if (item.kind == MODEL_WAIT)
        clock_max(item.end_clock, clock_after(m, item.wait_stream, item.wait_count));
    m->items[index] = item;
    s->items[s->length++] = index;
    memcpy(s->clock, item.end_clock, sizeof s->clock);
    return index;
}

int model_host_fn(model *m, int stream)
{
    return append(m, stream, (model_item){.kind = MODEL_HOST_FN});
}

int model_gate(model *m, int stream, int gate)
{
    return append(m, stream, (model_item){.kind = MODEL_GATE, .gate = gate});
}

tp_status model_record(model *m, int event, int stream)
{
    model_event *e = &m->events[event];
    if (e->device != m->streams[stream].device)
        return TP_ERR_DEVICE_MISMATCH;
    append(m, stream, (model_item){.kind = MODEL_RECORD, .event = event});
    e->recorded = true;
    e->stream = stream;
    e->count = m->streams[stream].length;
    return TP_OK;
}

void model_wait_event(model *m, int stream, int event)
{
    const model_event *e = &m->events[event];
    if (!e->recorded)
        return; /* rule 6: waiting on a never-recorded event does nothing */
    append(m, stream, (model_item){.kind = MODEL_WAIT, .wait_stream = e->stream, .wait_count = e->count});
}

void model_wait_stream(model *m, int stream, int other)
{
    if (stream == other)
        return;
    append(m, stream, (model_item){.kind = MODEL_WAIT, .wait_stream = other, .wait_count = m->streams[other].length});
}

void model_open_gate(model *m, int gate)
{
    m->gate_open[gate] = true;
}

static bool can_complete(const model *m, const model_item *item)
{
    switch (item->kind) {
    case MODEL_HOST_FN:
    case MODEL_RECORD:
        return true;
    case MODEL_GATE:
        return m->gate_open[item->gate];
    case MODEL_WAIT:
        return m->streams[item->wait_stream].completed >= item->wait_count;
    }
    return false;
}

void model_settle(model *m)
{
    bool progress = true;
    while (progress) {
        progress = false;
        for (int i = 0; i < m->stream_count; i++) {
            model_stream *s = &m->streams[i];
            while (s->completed < s->length && can_complete(m, &m->items[s->items[s->completed]])) {
                s->completed++;
                progress = true;
            }
        }
    }
}

bool model_item_done(const model *m, int item)
{
    const model_item *it = &m->items[item];
    return m->streams[it->stream].completed > it->position;
}

bool model_event_done(const model *m, int event)
{
    const model_event *e = &m->events[event];
    return !e->recorded || m->streams[e->stream].completed >= e->count;
}

bool model_stream_idle(const model *m, int stream)
{
    return m->streams[stream].completed == m->streams[stream].length;
}

bool model_gate_pending(const model *m)
{
    for (int i = 0; i < m->item_count; i++)
        if (m->items[i].kind == MODEL_GATE && !m->gate_open[m->items[i].gate] && !model_item_done(m, i))
            return true;
    return false;
}

tp_status model_elapsed(const model *m, int start, int end)
{
    const model_event *a = &m->events[start], *b = &m->events[end];
    if (!(a->flags & b->flags & TP_EVENT_TIMING))
        return TP_ERR_TIMING_DISABLED;
    if (!a->recorded || !b->recorded)
        return TP_ERR_NOT_RECORDED;
    if (!model_event_done(m, start) || !model_event_done(m, end))
        return TP_ERR_NOT_READY;
    return TP_OK; /* two devices or backends too: on the host clock (rule 13) */
}

bool model_record_precedes(const model *m, int first, int then)
{
    const model_event *a = &m->events[first], *b = &m->events[then];
    if (!a->recorded || !b->recorded)
        return false;
    /* The record is an item of its stream, so b's clock counts a's record item
     * exactly when a's record must have completed before b's could. */
    return clock_after(m, b->stream, b->count)[a->stream] >= a->count;
}

void model_event_clock(const model *m, int event, int clock[MODEL_MAX_STREAMS])
{
    const model_event *e = &m->events[event];
    const int *after = e->recorded ? clock_after(m, e->stream, e->count) : clock_after(m, 0, 0);
    memcpy(clock, after, sizeof(int) * MODEL_MAX_STREAMS);
}
