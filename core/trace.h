/*
 * What core/trace.c (collecting a trace), core/trace_tables.c and core/trace_pool.c
 * (its tables and events) and core/trace_json.c (writing it) share. Internal to them.
 */
#ifndef TPEVENT_CORE_TRACE_H
#define TPEVENT_CORE_TRACE_H

#include "core/internal.h"

#include <stdint.h>
#include <stdio.h>

#define TRACE_NONE UINT32_MAX

/* One range: two pooled timing records on its stream. parent: the range open on
 * the stream when it was pushed; prev: the range pushed before it with the same
 * parent on the same stream (its previous sibling). end is NULL while open. */
/* start or end NULL: not written (pushed or popped inside a capture, where a mark
 * would be part of the graph; or still open when its stream was destroyed). */
typedef struct trace_range {
    uint32_t track, parent, prev, name; /* name: offset into trace_state.names */
    tp_event *start, *end;
} trace_range;

/* A pooled timing record that a flow starts or ends at. parent and prev: its place
 * among the track's ranges when recorded (the range open on the stream, and the
 * range pushed before it with that parent), so that the writer puts the slice the
 * flow binds to inside the one and after the other. */
typedef struct trace_mark {
    uint32_t track, parent, prev;
    uint32_t waiter; /* the track of the latest wait that flows from it, or TRACE_NONE */
    bool in_flow;    /* a flow refers to it: not re-recorded */
    tp_event *event;
} trace_mark;

/* A wait while tracing: from the mark just before the record waited for (on the
 * recording stream) to the mark just after the wait (on the waiting stream). */
typedef struct trace_flow {
    uint32_t from, to;
} trace_flow;

/* One stream seen in the trace. What the writer needs is copied at first sight,
 * so that the stream may be destroyed before the trace is written. */
typedef struct trace_track {
    tp_stream *stream; /* NULL once destroyed */
    const tp_backend *backend;
    tp_device device;
    void *native;
    unsigned kind;
    int priority;
    uint32_t number;     /* tp_stream.number */
    uint32_t name;       /* offset into trace_state.names of the stream's name; TRACE_NONE: none given */
    uint32_t depth, cap; /* the open ranges' stack */
    uint32_t *stack;     /* cap entries */
    uint32_t *last;      /* cap + 1 entries: the last range pushed at each depth */
} trace_track;

typedef struct trace_state {
    trace_range *ranges;
    trace_mark *marks;
    trace_flow *flows;
    trace_track *tracks;
    char *names;
    size_t range_count, range_cap, mark_count, mark_cap, flow_count, flow_cap;
    size_t track_count, track_cap, names_len, names_cap;
    size_t max_ranges;                    /* the cap (core/trace.c), for ranges and for marks */
    uint64_t stop_timeout_ns;             /* tp_trace_stop's limit for records and a FIFO's reader */
    size_t dropped_ranges, dropped_marks; /* past the cap: not recorded, counted in the file */
} trace_state;

/* -------------------------------------------------- trace_pool.c */

typedef struct trace_event_pool {
    tp_event **items;
    uint32_t count, cap;
} trace_event_pool;

typedef struct trace_pools {
    trace_event_pool of[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES];
} trace_pools;

/* Makes the stream's device's pool hold `count` events at least. */
tp_status trace_pool_fill(trace_pools *pools, const tp_stream *stream, uint32_t count);
/* `event` (the trace's own) recorded on the stream now, unless the stream captures
 * (*captured: then nothing is recorded); the stream asked once (rule 16). */
tp_status trace_record_uncaptured(tp_event *event, tp_stream *stream, bool *captured);
/* A pooled event recorded on the stream now (the pool refilled when dry); *out is
 * NULL, and TP_OK returned, where the stream captures (trace_record_uncaptured). */
tp_status trace_pool_record(trace_pools *pools, tp_stream *stream, tp_event **out);
/* Back to its device's pool: room was made for it by trace_pools_reserve. */
void trace_pool_put(trace_pools *pools, tp_event *event);
/* Room in each pool for every event of the trace, so that trace_pool_put has it. */
void trace_pools_reserve(trace_pools *pools, const trace_state *t);
/* Pools above `keep` events shrink to it (the rest destroyed). */
void trace_pools_trim(trace_pools *pools, size_t keep);

/* ------------------------------------------------ trace_tables.c */

/* Event -> the mark of its latest record while tracing. */
typedef struct trace_map_entry {
    tp_event *event; /* NULL: empty; TRACE_MAP_TOMBSTONE: forgotten */
    uint32_t mark;
} trace_map_entry;
#define TRACE_MAP_TOMBSTONE ((tp_event *)(uintptr_t)1)

typedef struct trace_event_map {
    trace_map_entry *entries;
    size_t cap, used;
} trace_event_map;

trace_map_entry *trace_map_find(const trace_event_map *map, const tp_event *event);
/* Room for one more insert; false when out of memory. */
bool trace_map_reserve(trace_event_map *map);
/* After trace_map_reserve: an entry for an event not in the map. */
trace_map_entry *trace_map_insert(trace_event_map *map, tp_event *event);
void trace_map_clear(trace_event_map *map);
/* Frees the table if it has more than `keep` entries (the next reserve makes it). */
void trace_map_release(trace_event_map *map, size_t keep);

/* Interned range names: offsets into trace_state.names. */
typedef struct trace_name_index {
    uint32_t *table; /* offset + 1; 0: empty */
    size_t cap, used;
} trace_name_index;

bool trace_names_ready(trace_name_index *index, const trace_state *t);
bool trace_intern(trace_name_index *index, trace_state *t, const char *name, uint32_t *offset);
void trace_names_clear(trace_name_index *index);
/* Frees the index if it has more than `keep` slots (trace_names_ready makes it). */
void trace_names_release(trace_name_index *index, size_t keep);

/* Waits for every record the file needs, until deadline_ns (CLOCK_MONOTONIC) at
 * most (trace_json.c). TP_OK, or the failure of a record (with its message). */
tp_status tp_trace_wait_records(const trace_state *trace, uint64_t deadline_ns);

/* Waits for every record of the trace, until deadline_ns (CLOCK_MONOTONIC) at
 * most, and writes it to `f` (trace_json.c). TP_OK, or the failure of a record
 * (with its message). Does not close f. */
tp_status tp_trace_write_json(const trace_state *trace, FILE *f, uint64_t deadline_ns);

/* Writes the trace at `path`, as what is there calls for: a regular file replaced,
 * a FIFO or a character device written into, anything else refused (trace_file.c). */
tp_status tp_trace_write_file(const trace_state *trace, const char *path);

#endif /* TPEVENT_CORE_TRACE_H */
