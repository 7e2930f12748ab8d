/*
 * The timeline: named ranges on streams and the trace that collects them
 * (tp_range_push/pop, tp_trace_start/stop; docs/design.md, "The timeline").
 *
 * While no trace runs, every entry here and every hook in event.c and stream.c
 * costs one relaxed load of tp_trace_running_flag and a branch (the ranges a second,
 * of tp_range_tools_flag: with a profiling tool attached, they go to the backend's
 * tool entries too, trace or not). While one runs,
 * everything goes under one lock (trace.lock): a range is two pooled timing
 * records on its stream and an entry on that stream's stack of open ranges.
 *
 * Waits become flows. A record made through tp_event_record while tracing gets a
 * pooled timing mark recorded on its stream just before it (the same point of the
 * stream), remembered in a table keyed by the event; a wait on that event while
 * tracing records a mark on the waiting stream just after the wait, and the flow
 * runs from the one to the other. The record's mark is reached no later than the
 * record, and the waiting stream's no earlier, so a flow never runs backwards on
 * one clock. Waits on records made before the trace started get no flow. An event
 * recorded again before anyone waited on it reuses its mark, so marks number at
 * most the events recorded plus the waits.
 *
 * Memory: pooled events (TP_EVENT_TIMING, per device) are made when a stream first
 * appears in a trace (8 at a time) or when the pool runs dry; the arrays of
 * ranges, marks, flows and tracks, the names and the event table grow by doubling.
 * At stop, the room a trace grew is kept for the next, up to KEPT_RANGES ranges, their
 * events and names, KEPT_MARKS marks and flows and the table of the events they mark (on
 * the CPU 1.9 MB of heap in use after a 100,000-range trace: trace.memory_given_back);
 * what a larger trace grew above that is given back, so that a trace of any size
 * leaves behind what a moderate one would.
 * A trace no larger than the one before allocates nothing on push, pop, record or
 * wait after the first: growing costs a traced call an event creation per new record
 * and array copies, more than the record itself on the CPU (issue 52: record + wait,
 * a flow each, 2 new marks per pair, +188 ns over untraced while growing, +96 within
 * the kept room: tpevent_bench_trace on cpu:0, docs/timeline.md). While running, a trace
 * holds at most max_ranges ranges and as many marks (TPEVENT_TRACE_MAX_RANGES,
 * default 2^20: about 340 MB on the CPU backend): past that, new ranges and new
 * marks are not taken (their pops still match), and the file counts them
 * (otherData: dropped_ranges, dropped_marks).
 *
 * fork(): a child does not inherit a running trace (forget_trace_after_fork).
 */
#include "core/trace.h"
#include "core/wait_across.h"
#include "common/array.h"
#include "common/env.h"

#include <errno.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("hidden"))) atomic_bool tp_trace_running_flag;

enum { IDLE, RUNNING, WRITING };

#define POOL_PREFILL 8u
#define START_RANGES 1024u /* the room tp_trace_start makes */
#define START_MARKS 256u
#define START_NAMES 4096u /* bytes of names */
#define KEPT_RANGES 4096u /* kept at stop (above: all given back) */
#define KEPT_MARKS 4096u
#define KEPT_NAMES (16u * KEPT_RANGES) /* bytes: as many names of 15 characters */
#define MAX_RANGES_DEFAULT ((size_t)1 << 20)
#define TRACE_DROPPED (TRACE_NONE - 1)       /* on a track's stack: a range pushed past the cap */
#define MAX_RANGES_LIMIT (TRACE_DROPPED - 1) /* ranges and marks are numbered in 32 bits */
#define STOP_TIMEOUT_MS_DEFAULT 10000u
#define STOP_TIMEOUT_MS_LIMIT (24u * 3600u * 1000u) /* a day */

static struct {
    pthread_mutex_t lock;
    int state;
    trace_state t;
    trace_pools pools;
    trace_event_map map;    /* event -> its latest record's mark */
    trace_name_index names; /* trace.t.names, interned */
} trace = {.lock = PTHREAD_MUTEX_INITIALIZER};

TP_COLD static tp_status out_of_memory(const char *who)
{
    return tp_fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory for the trace's records", who);
}

/* --------------------------------------------------------------- tracks */

static trace_track *track_find(const tp_stream *stream, uint32_t *index)
{
    for (size_t i = 0; i < trace.t.track_count; i++)
        if (trace.t.tracks[i].stream == stream) {
            *index = (uint32_t)i;
            return &trace.t.tracks[i];
        }
    return NULL;
}

static bool track_reserve(trace_track *track)
{
    if (track->depth + 1 < track->cap)
        return true;
    size_t cap = track->cap;
    if (!tp_array_grow(&track->stack, &cap, (size_t)track->depth + 2, sizeof *track->stack) ||
        !tp_array_resize(&track->last, cap + 1, sizeof *track->last))
        return false;
    track->cap = (uint32_t)cap;
    return true;
}

/* The stream's track, made at its first sight in this trace (a slot's stacks
 * are kept from an earlier trace). */
static tp_status track_of(tp_stream *stream, uint32_t *index)
{
    if (track_find(stream, index))
        return TP_OK;
    size_t old_cap = trace.t.track_cap;
    if (!tp_array_grow(&trace.t.tracks, &trace.t.track_cap, trace.t.track_count + 1, sizeof *trace.t.tracks))
        return out_of_memory("tp_trace");
    memset(trace.t.tracks + old_cap, 0, (trace.t.track_cap - old_cap) * sizeof *trace.t.tracks);
    tp_status status = trace_pool_fill(&trace.pools, stream, POOL_PREFILL);
    if (status != TP_OK)
        return status;
    trace_track *track = &trace.t.tracks[trace.t.track_count];
    track->stream = stream;
    track->backend = stream->backend;
    track->device = stream->device;
    track->native = stream->backend->stream_native ? stream->backend->stream_native(stream) : NULL;
    track->kind = stream->kind;
    track->priority = stream->priority;
    track->number = stream->number;
    track->name = TRACE_NONE;
    track->depth = 0;
    if (!track_reserve(track) || (stream->name && !trace_intern(&trace.names, &trace.t, stream->name, &track->name)))
        return out_of_memory("tp_trace");
    track->last[0] = TRACE_NONE;
    *index = (uint32_t)trace.t.track_count++;
    return TP_OK;
}

/* Ends the track's innermost open range here: a mark, unless the range has no
 * start or the stream captures now (then the range is left out: trace_pool.c). */
static tp_status range_end(trace_track *track)
{
    if (track->stack[track->depth - 1] == TRACE_DROPPED) {
        track->depth--;
        return TP_OK;
    }
    trace_range *range = &trace.t.ranges[track->stack[track->depth - 1]];
    tp_event *end = NULL;
    if (range->start) {
        tp_status status = trace_pool_record(&trace.pools, track->stream, &end);
        if (status != TP_OK)
            return status;
    }
    range->end = end;
    track->depth--;
    return TP_OK;
}

/* ------------------------------------------------------------- ranges */

static tp_status resolve_stream(tp_stream **stream)
{
    if (*stream)
        return TP_OK;
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(NULL, &device, &backend);
    if (status == TP_OK)
        status = tp_stream_current_of(device, backend, stream);
    return status;
}

TP_COLD static tp_status range_push_traced(tp_stream *stream, const char *name)
{
    if (!name)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_range_push: name is NULL");
    tp_status status = resolve_stream(&stream);
    if (status != TP_OK)
        return status;
    if (tp_range_tools_on() && stream->backend->tool_range_push)
        stream->backend->tool_range_push(stream, name);
    if (!tp_trace_on())
        return TP_OK; /* a tool's range alone: no trace lock per range under Nsight */
    pthread_mutex_lock(&trace.lock);
    uint32_t index = 0, name_at = 0;
    if (trace.state != RUNNING)
        goto out; /* stopped meanwhile: nothing to do */
    if ((status = track_of(stream, &index)) != TP_OK)
        goto out;
    trace_track *track = &trace.t.tracks[index];
    if (trace.t.range_count >= trace.t.max_ranges) {
        if (!track_reserve(track)) {
            status = out_of_memory("tp_range_push");
            goto out;
        }
        trace.t.dropped_ranges++;
        track->stack[track->depth++] = TRACE_DROPPED; /* for its pop */
        goto out;
    }
    if (!track_reserve(track) ||
        !tp_array_grow(&trace.t.ranges, &trace.t.range_cap, trace.t.range_count + 1, sizeof *trace.t.ranges) ||
        !trace_intern(&trace.names, &trace.t, name, &name_at)) {
        status = out_of_memory("tp_range_push");
        goto out;
    }
    tp_event *start = NULL;
    if ((status = trace_pool_record(&trace.pools, stream, &start)) != TP_OK)
        goto out;
    uint32_t r = (uint32_t)trace.t.range_count++, depth = track->depth;
    trace.t.ranges[r] = (trace_range){.track = index,
                                      .parent = depth ? track->stack[depth - 1] : TRACE_NONE,
                                      .prev = track->last[depth],
                                      .name = name_at,
                                      .start = start};
    track->last[depth] = r;
    track->last[depth + 1] = TRACE_NONE;
    track->stack[track->depth++] = r;
out:
    pthread_mutex_unlock(&trace.lock);
    return status;
}

TP_API tp_status tp_range_push(tp_stream *stream, const char *name)
{
    if (TP_LIKELY(!tp_trace_on() && !tp_range_tools_on()))
        return TP_OK;
    return range_push_traced(stream, name);
}

TP_COLD static tp_status range_pop_traced(tp_stream *stream)
{
    tp_status status = resolve_stream(&stream);
    if (status != TP_OK)
        return status;
    if (tp_range_tools_on() && stream->backend->tool_range_pop)
        stream->backend->tool_range_pop(stream);
    if (!tp_trace_on())
        return TP_OK;
    pthread_mutex_lock(&trace.lock);
    uint32_t index = 0;
    trace_track *track = trace.state == RUNNING ? track_find(stream, &index) : NULL;
    if (trace.state == RUNNING && (!track || track->depth == 0)) {
        char text[TP_DEVICE_STRING_MAX];
        status = tp_fail(TP_ERR_INVALID_ARGUMENT,
                         "tp_range_pop: no range is open on this stream of %s in the running trace (a push "
                         "made before tp_trace_start recorded nothing)",
                         tp_device_str(stream->device, text));
    } else if (track) {
        status = range_end(track);
    }
    pthread_mutex_unlock(&trace.lock);
    return status;
}

TP_API tp_status tp_range_pop(tp_stream *stream)
{
    if (TP_LIKELY(!tp_trace_on() && !tp_range_tools_on()))
        return TP_OK;
    return range_pop_traced(stream);
}

/* ------------------------------------------------------- records, waits */

/* The mark's place among its track's ranges now (a range pushed past the cap has none). */
static void mark_place(trace_mark *mark, uint32_t track)
{
    const trace_track *t = &trace.t.tracks[track];
    uint32_t top = t->depth ? t->stack[t->depth - 1] : TRACE_NONE;
    mark->track = track;
    mark->parent = top == TRACE_DROPPED ? TRACE_NONE : top;
    mark->prev = t->last[t->depth];
}

/* A new mark for a flow on the stream: a pooled event recorded there; none where
 * the stream captures (*captured), whose track is then not made either. */
static tp_status mark_record(tp_stream *stream, uint32_t *mark, bool in_flow, bool *captured)
{
    *captured = false;
    if (trace.t.mark_count >= trace.t.max_ranges) {
        trace.t.dropped_marks++;
        return TP_ERR_NOT_READY; /* the trace's loss only: counted, no message */
    }
    if (!tp_array_grow(&trace.t.marks, &trace.t.mark_cap, trace.t.mark_count + 1, sizeof *trace.t.marks))
        return out_of_memory("tp_trace");
    tp_event *event = NULL;
    uint32_t track = 0;
    tp_status status = trace_pool_record(&trace.pools, stream, &event);
    *captured = status == TP_OK && !event;
    if (status != TP_OK || !event)
        return status;
    if ((status = track_of(stream, &track)) != TP_OK) {
        trace_pool_put(&trace.pools, event);
        return status;
    }
    *mark = (uint32_t)trace.t.mark_count++;
    trace.t.marks[*mark] = (trace_mark){.waiter = TRACE_NONE, .in_flow = in_flow, .event = event};
    mark_place(&trace.t.marks[*mark], track);
    return TP_OK;
}

/* The mark a flow from this record of `event` would start at: the event's own when
 * it has one no flow refers to yet, recorded again; else a new one. */
static void mark_before_record(tp_event *event, tp_stream *stream)
{
    trace_map_entry *entry = trace_map_find(&trace.map, event);
    trace_mark *mark = entry ? &trace.t.marks[entry->mark] : NULL;
    bool captured = false;
    uint32_t track = 0, m = 0;
    tp_status status;
    if (mark && !mark->in_flow && mark->event->device.type == stream->device.type &&
        mark->event->device.index == stream->device.index) {
        status = trace_record_uncaptured(mark->event, stream, &captured); /* reused */
        if (status == TP_OK && !captured && (status = track_of(stream, &track)) == TP_OK)
            mark_place(mark, track);
    } else if ((status = mark_record(stream, &m, false, &captured)) == TP_OK && !captured) {
        (entry ? entry : trace_map_insert(&trace.map, event))->mark = m;
    }
    if (entry && (status != TP_OK || captured))
        entry->event = TRACE_MAP_TOMBSTONE; /* its latest record is the graph's, or unmarked: no flow from it */
}

tp_status tp_trace_record(tp_event *event, tp_stream *stream)
{
    pthread_mutex_lock(&trace.lock);
    if (trace.state == RUNNING && trace_map_reserve(&trace.map))
        mark_before_record(event, stream);
    /* The mark's failure is the trace's loss, not the caller's: the record goes on. */
    tp_status status = event->backend->event_record(event, stream);
    pthread_mutex_unlock(&trace.lock);
    return status;
}

tp_status tp_trace_wait(tp_event *event, tp_stream *stream)
{
    tp_status status = tp_event_wait_on(event, stream);
    if (status != TP_OK)
        return status;
    /* Waiting again on the same record from the same stream orders nothing new: no
     * second flow (a loop of waits on one record, as tpevent bench's, draws one).
     * Whether the stream captures is asked last, by the mark's record, only of a
     * wait that would draw a flow: on a wrapped stream that question is a runtime
     * call. */
    pthread_mutex_lock(&trace.lock);
    trace_map_entry *entry = trace.state == RUNNING ? trace_map_find(&trace.map, event) : NULL;
    uint32_t track = 0, to = 0;
    bool again = entry && track_find(stream, &track) && trace.t.marks[entry->mark].waiter == track, captured;
    if (entry && !again &&
        tp_array_grow(&trace.t.flows, &trace.t.flow_cap, trace.t.flow_count + 1, sizeof *trace.t.flows) &&
        mark_record(stream, &to, true, &captured) == TP_OK && !captured) {
        trace.t.marks[entry->mark].in_flow = true;
        trace.t.marks[entry->mark].waiter = trace.t.marks[to].track;
        trace.t.flows[trace.t.flow_count++] = (trace_flow){.from = entry->mark, .to = to};
    }
    pthread_mutex_unlock(&trace.lock);
    return TP_OK;
}

void tp_trace_forget_event(tp_event *event)
{
    pthread_mutex_lock(&trace.lock);
    trace_map_entry *entry = trace.state == RUNNING ? trace_map_find(&trace.map, event) : NULL;
    if (entry)
        entry->event = TRACE_MAP_TOMBSTONE;
    pthread_mutex_unlock(&trace.lock);
}

tp_status tp_trace_name_stream(tp_stream *stream, const char *name)
{
    char *copy = name[0] ? strndup(name, TP_STREAM_NAME_MAX - 1) : NULL;
    if (name[0] && !copy)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_set_name: out of memory");
    pthread_mutex_lock(&trace.lock);
    char *old = stream->name;
    stream->name = copy;
    uint32_t index;
    trace_track *track = trace.state == RUNNING ? track_find(stream, &index) : NULL;
    if (track && !(copy && trace_intern(&trace.names, &trace.t, copy, &track->name)))
        track->name = TRACE_NONE; /* forgotten, or no memory for it: "stream N" */
    pthread_mutex_unlock(&trace.lock);
    free(old);
    return TP_OK;
}

tp_status tp_trace_destroy_stream(tp_stream *stream)
{
    pthread_mutex_lock(&trace.lock);
    tp_status status = stream->backend->stream_destroy(stream);
    uint32_t index;
    trace_track *track = status == TP_OK && trace.state == RUNNING ? track_find(stream, &index) : NULL;
    if (track)
        track->stream = NULL; /* its open ranges are dropped; the rest is written */
    pthread_mutex_unlock(&trace.lock);
    return status;
}

/* ---------------------------------------------------------- start, stop */

/* The trace's settings, read at its start: a value out of range is refused there,
 * rather than a trace collected for nothing and lost at its stop. */
static tp_status read_settings(trace_state *t)
{
    uint64_t ranges = 0, timeout_ms = 0;
    char message[160];
    if (!tp_env_count("TPEVENT_TRACE_MAX_RANGES", 1, MAX_RANGES_LIMIT, MAX_RANGES_DEFAULT, &ranges, message,
                      sizeof message) ||
        !tp_env_count("TPEVENT_TRACE_STOP_TIMEOUT_MS", 1, STOP_TIMEOUT_MS_LIMIT, STOP_TIMEOUT_MS_DEFAULT, &timeout_ms,
                      message, sizeof message))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_trace_start: %s (no trace started)", message);
    t->max_ranges = (size_t)ranges;
    t->stop_timeout_ns = timeout_ms * 1000000u;
    return TP_OK;
}

TP_API tp_status tp_trace_start(void)
{
    pthread_mutex_lock(&trace.lock);
    tp_status status = TP_OK;
    if (trace.state != IDLE) {
        status = tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_trace_start: a trace is %s already (one at a time)",
                         trace.state == RUNNING ? "running" : "being written by tp_trace_stop");
    } else if (!tp_array_grow(&trace.t.ranges, &trace.t.range_cap, START_RANGES, sizeof *trace.t.ranges) ||
               !tp_array_grow(&trace.t.marks, &trace.t.mark_cap, START_MARKS, sizeof *trace.t.marks) ||
               !tp_array_grow(&trace.t.flows, &trace.t.flow_cap, START_MARKS, sizeof *trace.t.flows) ||
               !tp_array_grow(&trace.t.names, &trace.t.names_cap, START_NAMES, 1) || !trace_map_reserve(&trace.map) ||
               !trace_names_ready(&trace.names, &trace.t)) {
        status = out_of_memory("tp_trace_start");
    } else if ((status = read_settings(&trace.t)) == TP_OK) {
        trace.t.dropped_ranges = trace.t.dropped_marks = 0;
        trace.state = RUNNING;
        atomic_store_explicit(&tp_trace_running_flag, true, memory_order_relaxed);
    }
    pthread_mutex_unlock(&trace.lock);
    return status;
}

/* After the write: every pooled event back to its pool, the arrays emptied (their
 * room kept). Pools get room for all at once first, so that pool_put has it. */
static void recycle(void)
{
    trace_state *t = &trace.t;
    for (size_t i = 0; i < t->range_count; i++) {
        if (t->ranges[i].start)
            trace_pool_put(&trace.pools, t->ranges[i].start);
        if (t->ranges[i].end)
            trace_pool_put(&trace.pools, t->ranges[i].end);
    }
    for (size_t i = 0; i < t->mark_count; i++)
        trace_pool_put(&trace.pools, t->marks[i].event);
    t->range_count = t->mark_count = t->flow_count = t->track_count = t->names_len = 0;
    trace_map_clear(&trace.map);
    trace_names_clear(&trace.names);
}

/* What a trace larger than the room kept made, given back (after recycle): arrays
 * above it freed (start makes them again), pooled events above what its ranges and
 * marks use destroyed. */
static bool release_excess(void)
{
    trace_state *t = &trace.t;
    bool large = t->range_cap > KEPT_RANGES || t->mark_cap > KEPT_MARKS;
    if (t->range_cap > KEPT_RANGES)
        free(t->ranges), t->ranges = NULL, t->range_cap = 0;
    if (t->mark_cap > KEPT_MARKS)
        free(t->marks), t->marks = NULL, t->mark_cap = 0;
    if (t->flow_cap > KEPT_MARKS)
        free(t->flows), t->flows = NULL, t->flow_cap = 0;
    if (t->names_cap > KEPT_NAMES)
        free(t->names), t->names = NULL, t->names_cap = 0;
    trace_map_release(&trace.map, KEPT_MARKS * 4);      /* as many events as marks, at its load of 1/4 */
    trace_names_release(&trace.names, 4 * KEPT_RANGES); /* KEPT_RANGES names and more (it grows past half full) */
    trace_pools_trim(&trace.pools, 2 * KEPT_RANGES + KEPT_MARKS);
    return large;
}

/* Rule 15: a track with a range open on a stream whose host function is the caller:
 * the range's end record would come after the caller, which would wait for it. */
static const trace_track *track_behind_caller(void)
{
    for (size_t i = 0; i < trace.t.track_count; i++) {
        const trace_track *track = &trace.t.tracks[i];
        tp_stream *stream = track->stream;
        if (stream && track->depth && stream->backend->stream_waits_for_itself &&
            stream->backend->stream_waits_for_itself(stream))
            return track;
    }
    return NULL;
}

TP_API tp_status tp_trace_stop(const char *path)
{
    if (!path)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_trace_stop: path is NULL (the trace goes on)");
    pthread_mutex_lock(&trace.lock);
    if (trace.state != RUNNING) {
        int state = trace.state;
        pthread_mutex_unlock(&trace.lock);
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_trace_stop: no trace is running%s",
                       state == WRITING ? " (another thread's tp_trace_stop is writing it)" : "");
    }
    const trace_track *behind = track_behind_caller();
    if (behind) {
        char text[TP_DEVICE_STRING_MAX];
        tp_status refused = tp_fail(TP_ERR_INVALID_ARGUMENT,
                                    "tp_trace_stop: called from a host function on a stream of %s with %u range(s) "
                                    "open, whose end records would come after this call and never be reached while "
                                    "it waits: stop the trace from another thread (the trace goes on)",
                                    tp_device_str(behind->device, text), (unsigned)behind->depth);
        pthread_mutex_unlock(&trace.lock);
        return refused;
    }
    /* Ranges still open end here, on streams that still exist. The flag is cleared
     * after that, with release: a stream destroyed meanwhile either still sees the
     * trace on (and waits for this lock to forget its track) or sees it off and,
     * through tp_trace_on_for_destroy's acquire, after these records. */
    for (size_t i = 0; i < trace.t.track_count; i++) {
        trace_track *track = &trace.t.tracks[i];
        while (track->stream && track->depth)
            if (range_end(track) != TP_OK)
                break;
    }
    atomic_store_explicit(&tp_trace_running_flag, false, memory_order_release);
    trace.state = WRITING; /* from here on nobody else touches trace.t */
    pthread_mutex_unlock(&trace.lock);

    tp_status status = tp_trace_write_file(&trace.t, path);
    pthread_mutex_lock(&trace.lock);
    trace_pools_reserve(&trace.pools, &trace.t);
    recycle();
    bool released = release_excess();
    trace.state = IDLE;
    pthread_mutex_unlock(&trace.lock);
#ifdef __GLIBC__
    /* The events freed are small blocks all over the heap, which glibc keeps
     * mapped: a trace's worth of them goes back to the system here. */
    if (released)
        (void)malloc_trim(0);
#endif
    return status;
}

/* --------------------------------------------------------------- fork */

/* The child's only thread is the one that forked. A lock another thread held at
 * that moment stays held for good, over tables it may have been changing: those
 * are left as they are (reachable from `abandoned`, never used again). */
static void forget_trace_after_fork(void)
{
    static struct {
        trace_state t;
        trace_event_map map;
        trace_name_index names;
        trace_pools pools;
    } abandoned;
    if (pthread_mutex_trylock(&trace.lock) != 0) {
        abandoned.t = trace.t, abandoned.map = trace.map, abandoned.names = trace.names;
        memcpy(&abandoned.pools, &trace.pools, sizeof trace.pools);
        trace.t = (trace_state){0};
        trace.map = (trace_event_map){0};
        trace.names = (trace_name_index){0};
        memset(&trace.pools, 0, sizeof trace.pools);
    } else {
        trace.t.range_count = trace.t.mark_count = trace.t.flow_count = trace.t.track_count = 0;
        trace.t.names_len = 0;
        trace_map_clear(&trace.map);
        trace_names_clear(&trace.names);
    }
    (void)pthread_mutex_init(&trace.lock, NULL);
    trace.state = IDLE;
    atomic_store_explicit(&tp_trace_running_flag, false, memory_order_relaxed);
}

__attribute__((constructor)) static void register_trace_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, forget_trace_after_fork);
}
