/*
 * Rule 16 on CUDA and HIP: what the GPU backend's files share of captures. Two
 * files above gpu_sample.c in gpu_internal.h's list, below gpu_backend.c:
 * gpu_graph.c (records, waits and the rest inside a capture, wrapping the
 * entries below it) and gpu_graph_exec.c (tpevent's own captures, graphs,
 * launches). Included after gpu_internal.h; gpu_pool.c's pins are here too.
 *
 * A capture's token says whether it is still open: tpevent's own capture until
 * tp_stream_end_capture; a capture someone else began on a wrapped stream
 * (torch.cuda.graph) while the runtime says the stream captures. An event whose
 * latest record was made inside a capture points at a mark (the token, and where
 * in the capture the record was made, for joins); its `recorded` is false
 * meanwhile, so that the hot paths, which look at `recorded` alone, never touch
 * its native event, and the entries of gpu_graph.c answer TP_ERR_CAPTURING while
 * the capture is open. Marks are read and replaced under gpu_graph.c's lock only.
 */
#ifndef TPEVENT_BACKENDS_GPU_GRAPH_H
#define TPEVENT_BACKENDS_GPU_GRAPH_H

#include "backends/gpu/gpu_internal.h"

typedef struct gpu_capture {
    atomic_uint refs;
    atomic_bool open;                /* tpevent's own capture */
    atomic_bool launched;            /* its graph was launched: external records were made */
    bool foreign;                    /* someone else's: open while the runtime says so */
    rt_stream foreign_stream;        /* the wrapped stream it was seen on */
    struct gpu_capture_build *build; /* tpevent's own, while open (under the lock) */
} gpu_capture;

typedef struct gpu_capture_mark {
    gpu_capture *token; /* a reference */
    gpu_stream *branch; /* the stream the record was made on */
    uint64_t pos;       /* its position on that stream's branch */
} gpu_capture_mark;

/* What gpu_graph.c keeps of a capture tpevent began, while it is open; under
 * gpu_capture_lock. */
typedef struct build_branch {
    gpu_stream *stream; /* NULL once destroyed */
    rt_stream native;   /* for messages */
    uint64_t ops, covered;
} build_branch;

typedef struct pinned_list {
    rt_event *items;
    bool *external;
    size_t count, capacity;
} pinned_list;

/* Nodes of host functions captured (gpu_host_fn_graph.c), the graph's to free. */
typedef struct host_fn_list {
    gpu_host_fn_node **items;
    size_t count, capacity;
} host_fn_list;

typedef struct gpu_capture_build {
    build_branch *branches; /* [0]: the origin */
    size_t branch_count, branch_capacity;
    pinned_list natives;
    host_fn_list host_fns;
    bool out_of_memory;
} gpu_capture_build;

/* gpu_graph.c's, for gpu_graph_exec.c: the lock of every capture's state; a
 * token's references and whether it is open; whether a stream captures (asking
 * the runtime for a wrapped one); a capture's branches; a stream entering a
 * capture (under the lock). */
extern pthread_mutex_t gpu_capture_lock;
void gpu_capture_token_unref(gpu_capture *token);
bool gpu_capture_token_open(const gpu_capture *token);
bool gpu_stream_captures(gpu_stream *stream);
bool gpu_capture_add_branch(gpu_capture_build *build, gpu_stream *stream, uint64_t ops);
build_branch *gpu_capture_branch_of(gpu_capture_build *build, gpu_stream *stream);
void gpu_capture_enter(gpu_stream *stream, gpu_capture *token);

/* The capture layer's tests (gpu_entries.h, CAPTURED): whether a capture may be
 * involved in a call, from what the stream or event says of itself: a stream
 * tpevent or someone else may capture (capture_check), a stream inside a capture
 * (capture), an event whose latest record was made inside one (capture; read with
 * acquire where the answer goes by the record, as settle() in gpu_graph.c does). */
static inline bool gpu_stream_capture_checked(tp_stream *stream)
{
    return atomic_load_explicit(&gpu_as_stream(stream)->capture_check, memory_order_relaxed);
}

static inline bool gpu_stream_in_capture(tp_stream *stream)
{
    return atomic_load_explicit(&gpu_as_stream(stream)->capture, memory_order_relaxed) != NULL;
}

static inline bool gpu_event_capture_marked(tp_event *event)
{
    return atomic_load_explicit(&gpu_as_event(event)->capture, memory_order_relaxed) != NULL;
}

static inline bool gpu_event_capture_unsettled(tp_event *event)
{
    return atomic_load_explicit(&gpu_as_event(event)->capture, memory_order_acquire) != NULL;
}

/* Whether to look for a capture on the stream, set at the edges of tpevent's
 * captures; the stream's `direct` goes with it (off while capture_check is on). */
static inline void gpu_stream_set_capture_check(gpu_stream *stream, bool check)
{
    atomic_store_explicit(&stream->capture_check, check, memory_order_relaxed);
    atomic_store_explicit(&stream->direct, stream->context_free && !check, memory_order_relaxed);
}

/* The capture layer's paths, taken where its test says a capture may be involved;
 * each ends in the entry below it where none is after all. Then the capture
 * entries. */
tp_status gpu_capture_event_record(tp_event *event, tp_stream *stream);
tp_status gpu_capture_event_record_uncaptured(tp_event *event, tp_stream *stream, bool *captured);
tp_status gpu_capture_wait_event(tp_stream *stream, tp_event *event);
tp_status gpu_capture_ipc_wait_event(tp_stream *stream, tp_event *event);
tp_status gpu_capture_ipc_event_record(tp_event *event, tp_stream *stream);
tp_status gpu_capture_host_fn_launch(tp_stream *stream, void (*fn)(void *), void *arg);
tp_status gpu_stream_capture_host_fn(tp_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *));
tp_status gpu_capture_event_query(tp_event *event, bool *done);
tp_status gpu_capture_event_synchronize(tp_event *event);
tp_status gpu_capture_event_elapsed(tp_event *start, tp_event *end, float *ms);
tp_status gpu_capture_event_timestamp(tp_event *event, int64_t *ns);
tp_status gpu_capture_snapshot_take(tp_event *event, tp_snapshot *out);
tp_status gpu_capture_event_destroy(tp_event *event);
tp_status gpu_capture_stream_query(tp_stream *stream, bool *idle);
tp_status gpu_capture_stream_synchronize(tp_stream *stream);
tp_status gpu_capture_stream_destroy(tp_stream *stream);
tp_status gpu_stream_begin_capture(tp_stream *stream);
tp_status gpu_stream_end_capture(tp_stream *stream, tp_graph **out);
tp_status gpu_stream_is_capturing(tp_stream *stream, bool *capturing);
tp_status gpu_graph_launch(tp_graph *graph, tp_stream *stream);
tp_status gpu_graph_destroy(tp_graph *graph);

#endif /* TPEVENT_BACKENDS_GPU_GRAPH_H */
