/*
 * Rule 16 on CUDA and HIP: tpevent's own captures and their graphs (what a
 * capture does to records and waits meanwhile is gpu_graph.c's, whose lock and
 * helpers these use).
 *
 * end_capture ends the runtime's capture (relaxed mode, runtime_cuda.h) and
 * instantiates the graph. A launch records a marker of the graph's after it on the
 * launch stream; a destroyed graph keeps its external natives pinned, and its
 * captured host functions' nodes (gpu_host_fn_graph.c), until every marker is
 * reached (a launch not started yet still records and rings them), then lets
 * them go; for good where a launch's marker could not be recorded (nothing then
 * says when that launch is done). The runtime frees an executable graph destroyed in flight once its
 * launches complete (rule 9).
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_graph.h"
#include "common/array.h"

#include <stdlib.h>

typedef struct graph_marker {
    rt_stream stream;
    rt_event marker;
} graph_marker;

typedef struct gpu_graph {
    tp_graph head;
    gpu_device *device;
    rt_graph_exec exec;
    gpu_capture *token;  /* a reference: launches mark it launched */
    rt_event *externals; /* pinned until the graph and its launches are gone */
    size_t external_count;
    host_fn_list host_fns; /* freed then too */
    graph_marker *markers;
    size_t marker_count;
    /* Launches from two threads take turns: the runtime's launch and the marker
     * after it go together, and a graph's launches are one after the other
     * (captured host functions rely on it: gpu_host_fn_graph.c). */
    pthread_mutex_t launch_lock;
    atomic_bool unmarked; /* a launch's marker failed: never known done */
    struct gpu_graph *next_retired;
} gpu_graph;

static gpu_graph *retired; /* under gpu_capture_lock */

/* ---------------------------------------------------------------- capture */

tp_status gpu_stream_begin_capture(tp_stream *stream_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (stream == &stream->device->default_stream)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "tp_stream_begin_capture: the %s:%d default stream cannot be captured (it is the "
                              "runtime's legacy default stream, which synchronizes with every other stream): "
                              "capture a stream made with tp_stream_create",
                              RT_BACKEND_NAME, stream->head.device.index);
    if (gpu_stream_captures(stream))
        return gpu.host->fail(TP_ERR_CAPTURING, "tp_stream_begin_capture: the %s:%d stream %p is capturing already",
                              RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
    gpu_capture *token = calloc(1, sizeof *token);
    gpu_capture_build *build = calloc(1, sizeof *build);
    if (!token || !build || !gpu_capture_add_branch(build, stream, 0)) {
        free(token);
        if (build)
            free(build->branches);
        free(build);
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_begin_capture: out of memory");
    }
    atomic_init(&token->refs, 1); /* the capture's own, while open */
    atomic_init(&token->open, true);
    token->build = build;
    /* A host function launched meanwhile on another thread, found outside any
     * capture, must not reach the stream once the runtime captures it (its gate
     * would be a node of the graph its queue never feeds again): the launches wait
     * until the stream is in the capture, and look again (gpu_internal.h). */
    gpu_host_fn_launches_pause(stream);
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = rt_stream_begin_capture(stream->native);
        rt_guard_leave(&guard);
    }
    if (e == RT_SUCCESS) {
        pthread_mutex_lock(&gpu_capture_lock);
        gpu_capture_enter(stream, token);
        pthread_mutex_unlock(&gpu_capture_lock);
    }
    gpu_host_fn_launches_resume(stream);
    if (e != RT_SUCCESS) {
        free(build->branches);
        free(build);
        free(token);
        return gpu_fail_call(RT_CALL("StreamBeginCapture"), e);
    }
    return TP_OK; /* two references: the capture's own and the stream's */
}

tp_status gpu_stream_is_capturing(tp_stream *stream, bool *capturing)
{
    gpu_stream *s = gpu_as_stream(stream);
    *capturing = atomic_load_explicit(&s->capture_check, memory_order_relaxed) && gpu_stream_captures(s);
    return TP_OK;
}

/* Their latest records are the capture's own: no launch has run yet. */
static void unpin_all(const pinned_list *natives, bool externals_too)
{
    for (size_t i = 0; i < natives->count; i++)
        if (externals_too || !natives->external[i])
            gpu_pool_unpin(natives->items[i], true);
}

/* Nodes of a capture dropped, or of a graph gone with its launches. */
static void host_fns_free(host_fn_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        gpu_host_fn_node_free(list->items[i]);
    free(list->items);
    *list = (host_fn_list){0};
}

/* Under gpu_capture_lock: every stream of the capture leaves it; the token closes. */
static void close_capture(gpu_capture *token)
{
    gpu_capture_build *build = token->build;
    for (size_t i = 0; i < build->branch_count; i++) {
        gpu_stream *stream = build->branches[i].stream;
        if (!stream)
            continue;
        gpu_capture *held = atomic_exchange_explicit(&stream->capture, NULL, memory_order_acq_rel);
        gpu_stream_set_capture_check(stream, (stream->head.kind & TP_STREAM_BORROWED) != 0);
        gpu_capture_token_unref(held);
    }
    atomic_store_explicit(&token->open, false, memory_order_release);
    token->build = NULL;
}

static tp_status make_graph(gpu_stream *origin, rt_graph graph, gpu_capture *token, gpu_capture_build *build,
                            tp_graph **out)
{
    gpu_graph *g = calloc(1, sizeof *g);
    size_t externals = 0;
    for (size_t i = 0; i < build->natives.count; i++)
        externals += build->natives.external[i];
    rt_event *list = externals ? malloc(externals * sizeof *list) : NULL;
    if (!g || (externals && !list)) {
        free(g);
        free(list);
        (void)rt_graph_destroy(graph);
        unpin_all(&build->natives, true);
        host_fns_free(&build->host_fns);
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_end_capture: out of memory");
    }
    rt_guard guard;
    rt_error e = gpu_stream_enter(origin, &guard);
    if (e == RT_SUCCESS) {
        e = rt_graph_instantiate(&g->exec, graph);
        rt_guard_leave(&guard);
    }
    (void)rt_graph_destroy(graph); /* the executable graph stands alone */
    if (e != RT_SUCCESS) {
        free(g);
        free(list);
        unpin_all(&build->natives, true);
        host_fns_free(&build->host_fns);
        return gpu_fail_call(RT_CALL("GraphInstantiate"), e);
    }
    unpin_all(&build->natives, false); /* plain records were edges: done with */
    for (size_t i = 0; i < build->natives.count; i++)
        if (build->natives.external[i])
            list[g->external_count++] = build->natives.items[i];
    g->head = (tp_graph){.backend = gpu.table, .device = origin->head.device};
    pthread_mutex_init(&g->launch_lock, NULL);
    atomic_init(&g->unmarked, false);
    g->device = origin->device;
    g->externals = list;
    g->host_fns = build->host_fns; /* the graph's from here */
    build->host_fns = (host_fn_list){0};
    atomic_fetch_add_explicit(&token->refs, 1, memory_order_relaxed);
    g->token = token;
    *out = &g->head;
    return TP_OK;
}

tp_status gpu_stream_end_capture(tp_stream *stream_base, tp_graph **out)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    pthread_mutex_lock(&gpu_capture_lock);
    gpu_capture *token = atomic_load_explicit(&stream->capture, memory_order_relaxed);
    bool own = token && !token->foreign && gpu_capture_token_open(token);
    if (!own || token->build->branches[0].stream != stream) {
        rt_stream origin = own ? token->build->branches[0].native : NULL;
        pthread_mutex_unlock(&gpu_capture_lock);
        if (own)
            return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                                  "tp_stream_end_capture: the %s:%d stream %p joined a capture begun on stream %p: "
                                  "end it there",
                                  RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native, (void *)origin);
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "tp_stream_end_capture: the %s:%d stream %p is not in a capture tpevent began",
                              RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
    }
    gpu_capture_build *build = token->build;
    const build_branch *unjoined = NULL;
    for (size_t i = 1; i < build->branch_count && !unjoined; i++)
        if (build->branches[i].covered < build->branches[i].ops)
            unjoined = &build->branches[i];
    rt_stream unjoined_native = unjoined ? unjoined->native : NULL;
    bool out_of_memory = build->out_of_memory;
    /* The runtime's capture ends and the token closes in one step under the lock,
     * the runtime's first: a launch, record or wait of another thread that found the
     * token closed, or (without the lock) the stream's capture_check off, before the
     * runtime's end went to the stream as outside any capture while the runtime still
     * captured it (a node no graph lists, or a host function's gate in the graph that
     * its queue never feeds again: the stream held for good at the graph's second
     * launch; or a call that invalidated the capture). */
    rt_graph graph = NULL;
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = rt_stream_end_capture(stream->native, &graph);
        rt_guard_leave(&guard);
    }
    close_capture(token);
    pthread_mutex_unlock(&gpu_capture_lock);
    tp_status status = TP_OK;
    if (unjoined || out_of_memory || e != RT_SUCCESS) {
        if (e == RT_SUCCESS && graph)
            (void)rt_graph_destroy(graph);
        unpin_all(&build->natives, true);
        host_fns_free(&build->host_fns); /* never launched: never rung */
        if (unjoined)
            status = gpu.host->fail(TP_ERR_CAPTURING,
                                    "tp_stream_end_capture: the %s:%d stream %p joined the capture and was not joined "
                                    "back (the origin stream %p did not wait on a record made after its last captured "
                                    "work): the capture is dropped",
                                    RT_BACKEND_NAME, stream->head.device.index, (void *)unjoined_native,
                                    (void *)stream->native);
        else if (out_of_memory)
            status = gpu.host->fail(TP_ERR_OUT_OF_MEMORY,
                                    "tp_stream_end_capture: out of memory while capturing: the capture is dropped");
        else
            status = gpu_fail_call(RT_CALL("StreamEndCapture"), e);
    } else {
        status = make_graph(stream, graph, token, build, out);
    }
    free(build->natives.items);
    free(build->natives.external);
    free(build->branches);
    free(build);
    gpu_capture_token_unref(token); /* the capture's own */
    return status;
}

/* ----------------------------------------------------------------- graphs */

/* Under gpu_capture_lock: unpins what retired graphs held once their launches are
 * done, and moves their host functions' nodes to *nodes, for the caller to free
 * once the lock is left (a node's release may destroy an event, whose backend may
 * take locks of its own). Queries run in relaxed mode: another thread may be
 * capturing. */
static void reap_retired(host_fn_list *nodes)
{
    rt_capture_mode mode = rt_thread_capture_relax_save();
    for (gpu_graph **link = &retired; *link;) {
        gpu_graph *g = *link;
        bool done = !atomic_load_explicit(&g->unmarked, memory_order_acquire);
        for (size_t i = 0; i < g->marker_count && done; i++)
            done = rt_event_query(g->markers[i].marker) != RT_ERROR_NOT_READY;
        if (!done ||
            !tp_array_grow(&nodes->items, &nodes->capacity, nodes->count + g->host_fns.count, sizeof *nodes->items)) {
            link = &g->next_retired; /* (out of memory: reaped at a later destroy) */
            continue;
        }
        *link = g->next_retired;
        /* A launch recorded the external natives again, outside any capture. */
        bool launched = atomic_load_explicit(&g->token->launched, memory_order_acquire);
        for (size_t i = 0; i < g->external_count; i++)
            gpu_pool_unpin(g->externals[i], !launched);
        for (size_t i = 0; i < g->host_fns.count; i++)
            nodes->items[nodes->count++] = g->host_fns.items[i];
        for (size_t i = 0; i < g->marker_count; i++)
            gpu_pool_give(g->device, TP_EVENT_DEFAULT, g->markers[i].marker, false);
        gpu_capture_token_unref(g->token);
        pthread_mutex_destroy(&g->launch_lock);
        free(g->host_fns.items);
        free(g->externals);
        free(g->markers);
        free(g);
    }
    rt_thread_capture_restore(mode);
}

/* Under gpu_capture_lock: the graph's marker on the stream, made on first need. */
static tp_status marker_of(gpu_graph *g, rt_stream stream, rt_event *out)
{
    for (size_t i = 0; i < g->marker_count; i++)
        if (g->markers[i].stream == stream) {
            *out = g->markers[i].marker;
            return TP_OK;
        }
    if (!tp_array_resize(&g->markers, g->marker_count + 1, sizeof *g->markers))
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_graph_launch: out of memory");
    tp_status status = gpu_pool_take(g->device, TP_EVENT_DEFAULT, out);
    if (status == TP_OK)
        g->markers[g->marker_count++] = (graph_marker){stream, *out};
    return status;
}

tp_status gpu_graph_launch(tp_graph *base, tp_stream *stream_base)
{
    gpu_graph *g = (gpu_graph *)base;
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (atomic_load_explicit(&stream->capture_check, memory_order_relaxed) && gpu_stream_captures(stream))
        return gpu.host->fail(TP_ERR_CAPTURING,
                              "tp_graph_launch: the %s:%d stream %p is capturing: a graph cannot be launched into a "
                              "capture",
                              RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
    rt_event marker = NULL;
    pthread_mutex_lock(&gpu_capture_lock);
    tp_status status = g->external_count || g->host_fns.count ? marker_of(g, stream->native, &marker) : TP_OK;
    pthread_mutex_unlock(&gpu_capture_lock);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    pthread_mutex_lock(&g->launch_lock);
    /* The host functions' runs go to their threads in the order of the launches
     * (gpu_host_fn_graph.c), before the runtime's launch, which may wait for the
     * device to pass earlier nodes; taken back if it failed. */
    status = gpu_host_fn_launch_reserve(g->host_fns.items, g->host_fns.count);
    if (status == TP_OK) {
        gpu_host_fn_launched(g->host_fns.items, g->host_fns.count);
        e = rt_graph_launch(g->exec, stream->native);
        if (e != RT_SUCCESS) {
            gpu_host_fn_launch_failed(g->host_fns.items, g->host_fns.count);
            status = gpu_fail_call(RT_CALL("GraphLaunch"), e);
        } else {
            atomic_store_explicit(&g->token->launched, true, memory_order_release);
            if (marker && (e = rt_event_record(marker, stream->native)) != RT_SUCCESS) {
                /* The launch runs with nothing after it to say when it is done:
                 * what the graph holds is kept for good (reap_retired). */
                atomic_store_explicit(&g->unmarked, true, memory_order_release);
                status = gpu_fail_call(RT_CALL("EventRecord"), e);
            }
        }
    }
    pthread_mutex_unlock(&g->launch_lock);
    rt_guard_leave(&guard);
    return status;
}

tp_status gpu_graph_destroy(tp_graph *base)
{
    gpu_graph *g = (gpu_graph *)base;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, g->device->context, RT_NEED_CONTEXT);
    if (e == RT_SUCCESS) {
        e = rt_graph_exec_destroy(g->exec); /* freed once in-flight launches complete */
        rt_guard_leave(&guard);
    }
    host_fn_list nodes = {0};
    pthread_mutex_lock(&gpu_capture_lock);
    g->next_retired = retired;
    retired = g;
    reap_retired(&nodes);
    pthread_mutex_unlock(&gpu_capture_lock);
    host_fns_free(&nodes);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("GraphExecDestroy"), e);
}
