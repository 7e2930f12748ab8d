/*
 * The trace's pooled timing events, per device (core/trace.c's, under its lock):
 * ranges and marks are records of these, made when a stream first appears in a
 * trace or when a pool runs dry, and put back after the trace is written.
 */
#include "core/trace.h"
#include "common/array.h"

#define POOL_REFILL 8u

static trace_event_pool *pool_of(trace_pools *pools, tp_device device)
{
    return &pools->of[device.type][device.index];
}

tp_status trace_pool_fill(trace_pools *pools, const tp_stream *stream, uint32_t count)
{
    trace_event_pool *pool = pool_of(pools, stream->device);
    size_t cap = pool->cap;
    if (!tp_array_grow(&pool->items, &cap, (size_t)pool->count + count, sizeof *pool->items))
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_trace: out of memory for the trace's records");
    pool->cap = (uint32_t)cap;
    while (pool->count < count) {
        tp_event *event = NULL;
        tp_status status = stream->backend->event_create(stream->device.index, TP_EVENT_TIMING, &event);
        if (status != TP_OK)
            return status;
        pool->items[pool->count++] = event;
    }
    return TP_OK;
}

/* Rule 16: a mark recorded on a capturing stream would be part of the graph, not
 * a record of this run (and never reached before a launch), so the trace takes
 * none there: ranges pushed or popped inside a capture, and flows from records or
 * to waits made inside one, are left out of the file. The stream is asked once:
 * by the backend's event_record_uncaptured where it has one (on a wrapped GPU
 * stream the question is a runtime call, and event_record would ask it again). */
tp_status trace_record_uncaptured(tp_event *event, tp_stream *stream, bool *captured)
{
    if (event->backend->event_record_uncaptured)
        return event->backend->event_record_uncaptured(event, stream, captured);
    bool yes = false;
    *captured = stream->backend->stream_is_capturing && stream->backend->stream_is_capturing(stream, &yes) == TP_OK &&
                yes;
    return *captured ? TP_OK : stream->backend->event_record(event, stream);
}

tp_status trace_pool_record(trace_pools *pools, tp_stream *stream, tp_event **out)
{
    trace_event_pool *pool = pool_of(pools, stream->device);
    if (TP_UNLIKELY(!pool->count)) {
        tp_status status = trace_pool_fill(pools, stream, POOL_REFILL);
        if (status != TP_OK)
            return status;
    }
    tp_event *event = pool->items[--pool->count];
    bool captured = false;
    tp_status status = trace_record_uncaptured(event, stream, &captured);
    if (status != TP_OK || captured)
        pool->count++;
    *out = status == TP_OK && !captured ? event : NULL;
    return status;
}

/* Through the table: the trace is not running here, so there is nothing for
 * tp_event_destroy to tell it. */
void trace_pool_put(trace_pools *pools, tp_event *event)
{
    trace_event_pool *pool = pool_of(pools, event->device);
    if (pool->count < pool->cap)
        pool->items[pool->count++] = event;
    else
        (void)event->backend->event_destroy(event);
}

void trace_pools_reserve(trace_pools *pools, const trace_state *t)
{
    size_t need[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES] = {{0}};
    for (size_t i = 0; i < t->range_count; i++) {
        tp_device device = t->tracks[t->ranges[i].track].device;
        need[device.type][device.index] += 2;
    }
    for (size_t i = 0; i < t->mark_count; i++)
        need[t->marks[i].event->device.type][t->marks[i].event->device.index]++;
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++)
        for (int index = 0; index < TP_MAX_DEVICES; index++) {
            trace_event_pool *pool = &pools->of[type][index];
            size_t cap = pool->cap;
            if (need[type][index] &&
                tp_array_grow(&pool->items, &cap, pool->count + need[type][index], sizeof *pool->items))
                pool->cap = (uint32_t)cap;
        }
}

void trace_pools_trim(trace_pools *pools, size_t keep)
{
    for (int type = 0; type < TP_DEVICE_TYPE_COUNT; type++)
        for (int index = 0; index < TP_MAX_DEVICES; index++) {
            trace_event_pool *pool = &pools->of[type][index];
            if (pool->cap <= keep)
                continue;
            while (pool->count > keep) {
                tp_event *event = pool->items[--pool->count];
                (void)event->backend->event_destroy(event);
            }
            if (tp_array_resize(&pool->items, keep, sizeof *pool->items))
                pool->cap = (uint32_t)keep;
        }
}
