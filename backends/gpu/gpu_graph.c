/*
 * Rule 16 on CUDA and HIP: events and streams inside stream capture (gpu_graph.h
 * for the tokens and marks).
 *
 * Being captured. A stream captures when tpevent began a capture on it or it
 * joined one (stream->capture), or, for a wrapped stream only, when the runtime
 * says so (someone else's capture: torch.cuda.graph); tpevent's own streams never
 * ask the runtime, so their hot paths cost one relaxed load of capture_check.
 * Inside a capture:
 *   record  a native event fresh from the pool, pinned (gpu_pool_pin: the pool
 *           never queries it), recorded with cudaEventRecord, or with
 *           cudaEventRecordWithFlags(cudaEventRecordExternal) for
 *           TP_EVENT_EXTERNAL; the event's `recorded` is cleared and it gets a
 *           mark. Pins go at the end of the capture (plain events: the record is
 *           an edge of the graph) or when the graph is gone (external ones, made
 *           again at each launch). Natives recorded inside someone else's capture
 *           stay pinned for good: tpevent cannot know when that graph is gone.
 *   wait    on a record inside the capture: cudaStreamWaitEvent (an edge; a
 *           stream outside the capture joins it, as the runtime makes it); on a
 *           TP_EVENT_EXTERNAL event: cudaStreamWaitEvent(cudaEventWaitExternal),
 *           a wait at each launch; on another record made outside the capture:
 *           TP_ERR_CAPTURING (the runtime refuses it, and it would invalidate
 *           the capture).
 *   host functions (rule 15): a node that runs fn at each launch, on a tpevent
 *           thread (gpu_host_fn_graph.c), in tpevent's capture and in someone
 *           else's alike.
 *   query and synchronize of a capturing stream, and of an event whose latest
 *           record is inside an open capture (and its elapsed time, timestamp,
 *           snapshots), answer TP_ERR_CAPTURING without a runtime call.
 * Calls that must touch the pool during a capture (taking a fresh native, giving
 * one back) run with the thread in relaxed capture mode, restored after.
 *
 * tpevent's own captures and their graphs: gpu_graph_exec.c.
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_graph.h"
#include "common/array.h"

#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t gpu_capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* ----------------------------------------------------------------- tokens */

void gpu_capture_token_unref(gpu_capture *token)
{
    if (token && atomic_fetch_sub_explicit(&token->refs, 1, memory_order_acq_rel) == 1)
        free(token);
}

bool gpu_capture_token_open(const gpu_capture *token)
{
    if (!token)
        return false;
    if (token->foreign)
        return rt_stream_capturing(token->foreign_stream);
    return atomic_load_explicit(&token->open, memory_order_acquire);
}

/* Under gpu_capture_lock. */
static void mark_free(gpu_capture_mark *mark)
{
    if (mark) {
        gpu_capture_token_unref(mark->token);
        free(mark);
    }
}

/* The capture the stream's work goes into: its own token if open (a reference
 * for the caller), else, for a wrapped stream the runtime says captures, a new
 * foreign token; NULL when not capturing. */
static gpu_capture *stream_capture(gpu_stream *stream)
{
    pthread_mutex_lock(&gpu_capture_lock);
    gpu_capture *token = atomic_load_explicit(&stream->capture, memory_order_relaxed);
    if (token && gpu_capture_token_open(token))
        atomic_fetch_add_explicit(&token->refs, 1, memory_order_relaxed);
    else
        token = NULL;
    pthread_mutex_unlock(&gpu_capture_lock);
    if (token || !(stream->head.kind & TP_STREAM_BORROWED) || !rt_stream_capturing(stream->native))
        return token;
    token = calloc(1, sizeof *token);
    if (token) {
        atomic_init(&token->refs, 1);
        token->foreign = true;
        token->foreign_stream = stream->native;
    }
    return token;
}

bool gpu_stream_captures(gpu_stream *stream)
{
    gpu_capture *token = stream_capture(stream);
    gpu_capture_token_unref(token);
    return token != NULL;
}

TP_COLD static tp_status stream_capturing_fail(gpu_stream *stream, const char *operation)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "%s: the %s:%d stream %p is capturing: its work runs only when the graph is launched "
                          "(rule 16)",
                          operation, RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
}

TP_COLD static tp_status event_capturing_fail(const gpu_event *event, const char *operation)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "%s: the %s:%d event's latest record was made inside a capture that is still open: it is "
                          "reached only when the graph is launched (rule 16)",
                          operation, RT_BACKEND_NAME, event->head.device.index);
}

/* ------------------------------------------------------------ event marks */

/*
 * An event with a mark: TP_ERR_CAPTURING while its capture is open; once it is
 * closed (or a record outside replaced the one inside) the mark goes, and an
 * external event's native answers from then on (its launches' records).
 */
static tp_status settle(gpu_event *event, const char *operation)
{
    if (TP_LIKELY(atomic_load_explicit(&event->capture, memory_order_acquire) == NULL))
        return TP_OK;
    pthread_mutex_lock(&gpu_capture_lock);
    gpu_capture_mark *mark = atomic_load_explicit(&event->capture, memory_order_relaxed);
    bool recorded = mark && gpu_event_recorded(event);
    bool open = mark && !recorded && gpu_capture_token_open(mark->token);
    /* An external record answers once a launch made it; before, no record. */
    bool external = mark && !recorded && (event->head.flags & TP_EVENT_EXTERNAL);
    bool waiting = external && !mark->token->foreign &&
                   !atomic_load_explicit(&mark->token->launched, memory_order_acquire);
    if (mark && !open && !waiting) {
        atomic_store_explicit(&event->capture, NULL, memory_order_relaxed);
        if (external && gpu_event_native(event))
            atomic_store_explicit(&event->recorded, true, memory_order_release);
        mark_free(mark);
    }
    pthread_mutex_unlock(&gpu_capture_lock);
    return open ? event_capturing_fail(event, operation) : TP_OK;
}

/* ----------------------------------------------------------------- records */

static bool pinned_push(pinned_list *list, rt_event native, bool external)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity; /* of both arrays */
        if (!tp_array_grow(&list->items, &capacity, list->count + 1, sizeof *list->items) ||
            !tp_array_resize(&list->external, capacity, sizeof *list->external))
            return false;
        list->capacity = capacity;
    }
    list->items[list->count] = native;
    list->external[list->count] = external;
    list->count++;
    return true;
}

build_branch *gpu_capture_branch_of(gpu_capture_build *build, gpu_stream *stream)
{
    for (size_t i = 0; i < build->branch_count; i++)
        if (build->branches[i].stream == stream)
            return &build->branches[i];
    return NULL;
}

bool gpu_capture_add_branch(gpu_capture_build *build, gpu_stream *stream, uint64_t ops)
{
    if (!tp_array_grow(&build->branches, &build->branch_capacity, build->branch_count + 1, sizeof *build->branches))
        return false;
    build->branches[build->branch_count++] = (build_branch){stream, stream->native, ops, 0};
    return true;
}

/* Under gpu_capture_lock: the stream is in the capture of `token` from now on. */
void gpu_capture_enter(gpu_stream *stream, gpu_capture *token)
{
    atomic_fetch_add_explicit(&token->refs, 1, memory_order_relaxed);
    gpu_capture *old = atomic_exchange_explicit(&stream->capture, token, memory_order_acq_rel);
    gpu_capture_token_unref(old);
    gpu_stream_set_capture_check(stream, true);
}

static tp_status capture_record(gpu_event *event, gpu_stream *stream, gpu_capture *token)
{
    gpu_device *device = gpu_event_device(event);
    bool external = (event->head.flags & TP_EVENT_EXTERNAL) != 0;
    gpu_capture_mark *mark = calloc(1, sizeof *mark);
    if (!mark)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_record: out of memory");
    rt_capture_mode mode = rt_thread_capture_relax_save();
    rt_event fresh = NULL;
    tp_status status = gpu_device_open(device);
    if (status == TP_OK)
        status = gpu_pool_take(device, event->head.flags, &fresh);
    if (status != TP_OK) {
        rt_thread_capture_restore(mode);
        free(mark);
        return status;
    }
    gpu_pool_pin(fresh);
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = external ? rt_event_record_external(fresh, stream->native) : rt_event_record(fresh, stream->native);
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        gpu_pool_unpin(fresh, false);
        gpu_pool_give(device, event->head.flags, fresh, false);
        rt_thread_capture_restore(mode);
        free(mark);
        return gpu_fail_call(external ? RT_CALL("EventRecordWithFlags") : RT_CALL("EventRecord"), e);
    }
    pthread_mutex_lock(&gpu_capture_lock);
    mark->token = token; /* takes over the caller's reference */
    mark->branch = stream;
    if (!token->foreign && gpu_capture_token_open(token)) {
        gpu_capture_build *build = token->build;
        build_branch *branch = gpu_capture_branch_of(build, stream);
        if (branch)
            mark->pos = ++branch->ops;
        if (!pinned_push(&build->natives, fresh, external))
            build->out_of_memory = true;
    }
    /* (Someone else's capture: pinned for good.) */
    rt_event old = atomic_exchange_explicit(&event->native, fresh, memory_order_acq_rel);
    bool old_captured = !atomic_exchange_explicit(&event->recorded, false, memory_order_acq_rel);
    gpu_capture_mark *old_mark = atomic_exchange_explicit(&event->capture, mark, memory_order_acq_rel);
    mark_free(old_mark);
    pthread_mutex_unlock(&gpu_capture_lock);
    if (old && old_captured)
        gpu_pool_give_captured(device, event->head.flags, old); /* recorded last in an earlier capture */
    else if (old)
        gpu_pool_give(device, event->head.flags, old, true);
    rt_thread_capture_restore(mode);
    return TP_OK;
}

/* A record outside any capture of an event whose latest record was made inside
 * one: on a fresh native, never on the one the capture holds (HIP would query it
 * first, and it may be recorded again by the graph's launches). */
static tp_status record_outside(gpu_event *event, gpu_stream *stream)
{
    for (;;) {
        bool published;
        rt_event native = atomic_load_explicit(&event->native, memory_order_acquire);
        /* Not recorded since the capture's record: the native holds that one. (A
         * record racing on another thread may make this wrong either way: then a
         * native is destroyed rather than pooled, or queried as before.) */
        bool captured = !gpu_event_recorded(event);
        tp_status status = gpu_event_record_fresh(event, stream, native, captured, &published);
        if (status != TP_OK)
            return status;
        if (published)
            return settle(event, "tp_event_record"); /* recorded now: the mark goes */
    }
}

tp_status gpu_capture_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    gpu_event *event = gpu_as_event(base);
    gpu_capture *token = atomic_load_explicit(&stream->capture_check, memory_order_relaxed) ? stream_capture(stream)
                                                                                            : NULL;
    if (token)
        return capture_record(event, stream, token);
    if (atomic_load_explicit(&event->capture, memory_order_relaxed) != NULL)
        return record_outside(event, stream);
    return gpu_plain_event_record(base, stream_base); /* a wrapped stream nobody captures */
}

/* The trace's mark (core/backend.h): the one question, then the record outside any
 * capture, or none. */
tp_status gpu_capture_event_record_uncaptured(tp_event *base, tp_stream *stream_base, bool *captured)
{
    gpu_capture *token = stream_capture(gpu_as_stream(stream_base));
    *captured = token != NULL;
    gpu_capture_token_unref(token);
    if (*captured)
        return TP_OK;
    gpu_event *event = gpu_as_event(base);
    if (atomic_load_explicit(&event->capture, memory_order_relaxed) != NULL)
        return record_outside(event, gpu_as_stream(stream_base));
    return gpu_plain_event_record(base, stream_base);
}

TP_COLD static tp_status refuse_interprocess(const char *operation)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "%s: interprocess events cannot be captured (a record or wait in another process cannot be "
                          "replayed at each launch, rule 16)",
                          operation);
}

tp_status gpu_capture_ipc_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (gpu_stream_captures(stream))
        return refuse_interprocess("tp_event_record");
    return gpu_ipc_event_record(base, stream_base);
}

/* ------------------------------------------------------------------- waits */

TP_COLD static tp_status refuse_outside_wait(gpu_stream *stream)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "tp_event_wait: the %s:%d stream %p is capturing, and the event's latest record was made "
                          "outside the capture: a wait on it inside a capture needs TP_EVENT_EXTERNAL (rule 16)",
                          RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
}

/* The runtime's wait of the stream on the native event, plain or external. */
static tp_status native_wait(gpu_stream *stream, rt_event native, bool external)
{
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = external ? rt_stream_wait_event_external(stream->native, native)
                     : rt_stream_wait_event(stream->native, native);
        rt_guard_leave(&guard);
    }
    return e == RT_SUCCESS ? TP_OK
                           : gpu_fail_call(external ? RT_CALL("StreamWaitEvent") : RT_STREAM_WAIT_EVENT_CALL, e);
}

static tp_status capture_wait(gpu_stream *stream, gpu_event *event)
{
    gpu_capture *mine = stream_capture(stream);
    /* A stream that joins a capture below captures from then on: its host-function
     * launches wait (gpu_host_fn_launches_pause). Only an event recorded inside a
     * capture makes one join. */
    bool may_join = !mine && atomic_load_explicit(&event->capture, memory_order_relaxed) != NULL;
    if (may_join)
        gpu_host_fn_launches_pause(stream);
    pthread_mutex_lock(&gpu_capture_lock);
    gpu_capture_mark *mark = atomic_load_explicit(&event->capture, memory_order_relaxed);
    gpu_capture *theirs = mark && !gpu_event_recorded(event) && gpu_capture_token_open(mark->token) ? mark->token
                                                                                                    : NULL;
    rt_event native = gpu_event_native(event);
    tp_status status = TP_OK;
    bool plain = false;
    if (!theirs && !mine) {
        plain = true;
    } else if (theirs && mine && theirs != mine && !(theirs->foreign && mine->foreign)) {
        status = gpu.host->fail(TP_ERR_CAPTURING,
                                "tp_event_wait: the event's latest record was made inside another capture (rule 16)");
    } else if (theirs) {
        /* An edge of the graph; a stream outside the capture joins it. */
        status = native_wait(stream, native, false);
        if (status == TP_OK && !theirs->foreign) {
            gpu_capture_build *build = theirs->build;
            build_branch *branch = gpu_capture_branch_of(build, stream);
            if (!branch && !gpu_capture_add_branch(build, stream, 0))
                build->out_of_memory = true;
            branch = gpu_capture_branch_of(build, stream);
            if (branch)
                branch->ops++;
            build_branch *joined = gpu_capture_branch_of(build, mark->branch);
            if (branch == &build->branches[0] && joined && joined->covered < mark->pos)
                joined->covered = mark->pos;
            if (!mine)
                gpu_capture_enter(stream, theirs);
        } else if (status == TP_OK && !mine) {
            gpu_capture_enter(stream, theirs); /* joined someone else's capture */
        }
    } else if (!gpu_event_recorded(event) && !(mark && (event->head.flags & TP_EVENT_EXTERNAL))) {
        /* Never recorded outside (or only inside a capture now closed): nothing. */
    } else if (!(event->head.flags & TP_EVENT_EXTERNAL)) {
        status = refuse_outside_wait(stream);
    } else {
        status = native_wait(stream, native, true);
        if (status == TP_OK && !mine->foreign) {
            build_branch *branch = gpu_capture_branch_of(mine->build, stream);
            if (branch)
                branch->ops++;
        }
    }
    pthread_mutex_unlock(&gpu_capture_lock);
    if (may_join)
        gpu_host_fn_launches_resume(stream);
    gpu_capture_token_unref(mine);
    if (plain) {
        status = settle(event, "tp_event_wait");
        if (status == TP_OK)
            status = gpu_plain_stream_wait_event(&stream->head, &event->head);
    }
    return status;
}

tp_status gpu_capture_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    return capture_wait(stream, gpu_as_event(event_base));
}

tp_status gpu_capture_ipc_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (gpu_stream_captures(stream))
        return refuse_interprocess("tp_event_wait");
    return gpu_ipc_stream_wait_event(stream_base, event_base);
}

/* ---------------------------------------------- host functions, streams */

/* Rule 15 inside a capture: a node that runs fn at each launch (gpu_host_fn_graph.c);
 * tpevent's own graph frees it once gone (then release(arg)), someone else's keeps
 * it for good. Like every captured operation, it counts on its branch, so that a
 * branch whose host function the origin did not join back is refused at the end.
 * In tpevent's own capture gpu_capture_lock is held from the look at the capture to
 * the node in its list: an end on another thread (which closes the token and ends
 * the runtime's capture under the lock) comes wholly before, and the launch is
 * refused, or wholly after, and the node is in the capture and in its graph's list. A
 * signalled node the graph does not list would hold its launches, or (captured
 * no more) the stream at once, for good: no launch queues its runs. */
static tp_status capture_host_fn(gpu_stream *stream, gpu_capture *token, void (*fn)(void *), void *arg,
                                 void (*release)(void *))
{
    gpu_host_fn_node *node = NULL;
    if (token->foreign) {
        tp_status status = gpu_host_fn_capture(stream, fn, arg, NULL, false, &node);
        if (status == TP_OK)
            gpu_host_fn_node_keep(node);
        return status;
    }
    pthread_mutex_lock(&gpu_capture_lock);
    gpu_capture_build *build = gpu_capture_token_open(token) ? token->build : NULL;
    host_fn_list *list = build ? &build->host_fns : NULL;
    tp_status status = TP_OK;
    if (!build)
        status = gpu.host->fail(TP_ERR_CAPTURING,
                                "tp_stream_launch_host_fn: the capture of the %s:%d stream %p was ended by another "
                                "thread meanwhile: the host function is neither captured nor launched",
                                RT_BACKEND_NAME, stream->head.device.index, (void *)stream->native);
    else if (!tp_array_grow(&list->items, &list->capacity, list->count + 1, sizeof *list->items))
        status = gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    else
        status = gpu_host_fn_capture(stream, fn, arg, release, true, &node);
    if (status == TP_OK) {
        build_branch *branch = gpu_capture_branch_of(build, stream);
        if (branch)
            branch->ops++;
        list->items[list->count++] = node;
    }
    pthread_mutex_unlock(&gpu_capture_lock);
    return status;
}

tp_status gpu_capture_host_fn_launch(tp_stream *stream_base, void (*fn)(void *), void *arg)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    for (;;) { /* again only where a capture began between the look and the launch */
        gpu_capture *token = stream_capture(stream);
        if (token) {
            tp_status status = capture_host_fn(stream, token, fn, arg, NULL);
            gpu_capture_token_unref(token);
            return status;
        }
        bool capture_began = false;
        tp_status status = gpu_host_fn_launch(stream_base, fn, arg, &capture_began);
        if (!capture_began)
            return status;
    }
}

tp_status gpu_stream_capture_host_fn(tp_stream *stream_base, void (*fn)(void *), void *arg, void (*release)(void *))
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    gpu_capture *token = stream_capture(stream);
    if (!token)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "capturing a host function: the %s:%d stream %p is not capturing", RT_BACKEND_NAME,
                              stream->head.device.index, (void *)stream->native);
    tp_status status = capture_host_fn(stream, token, fn, arg, release);
    gpu_capture_token_unref(token);
    return status;
}

tp_status gpu_capture_stream_query(tp_stream *stream_base, bool *idle)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (gpu_stream_captures(stream))
        return stream_capturing_fail(stream, "tp_stream_query");
    return gpu_stream_query(stream_base, idle);
}

tp_status gpu_capture_stream_synchronize(tp_stream *stream_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (gpu_stream_captures(stream))
        return stream_capturing_fail(stream, "tp_stream_synchronize");
    return gpu_stream_synchronize(stream_base);
}

TP_COLD static tp_status destroy_capturing_fail(const gpu_stream *stream)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "tp_stream_destroy: the %s:%d stream is part of a capture still open: end the capture "
                          "first, on the stream it began on (tp_stream_end_capture)",
                          RT_BACKEND_NAME, stream->device->index);
}

tp_status gpu_capture_stream_destroy(tp_stream *stream_base)
{
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (TP_UNLIKELY(atomic_load_explicit(&stream->capture, memory_order_relaxed) != NULL)) {
        pthread_mutex_lock(&gpu_capture_lock);
        gpu_capture *open = atomic_load_explicit(&stream->capture, memory_order_acquire);
        /* Rule 16, as on the CPU: a stream of tpevent's own capture stays until the
         * capture ends; a wrapper may go (its work stays in the capture). */
        if (open && gpu_capture_token_open(open) && !open->foreign && !(stream_base->kind & TP_STREAM_BORROWED)) {
            pthread_mutex_unlock(&gpu_capture_lock);
            return destroy_capturing_fail(stream);
        }
        gpu_capture *token = atomic_exchange_explicit(&stream->capture, NULL, memory_order_acq_rel);
        if (token && gpu_capture_token_open(token) && !token->foreign) {
            build_branch *branch = gpu_capture_branch_of(token->build, stream);
            if (branch)
                branch->stream = NULL; /* its work stays in the capture; its pointer goes */
        }
        pthread_mutex_unlock(&gpu_capture_lock);
        gpu_capture_token_unref(token);
    }
    return gpu_stream_destroy(stream_base);
}

/* --------------------------------------------------- events' read entries */

tp_status gpu_capture_event_query(tp_event *base, bool *done)
{
    tp_status status = settle(gpu_as_event(base), "tp_event_query");
    return status == TP_OK ? gpu_plain_event_query(base, done) : status;
}

tp_status gpu_capture_event_synchronize(tp_event *base)
{
    tp_status status = settle(gpu_as_event(base), "tp_event_synchronize");
    return status == TP_OK ? gpu_plain_event_synchronize(base) : status;
}

tp_status gpu_capture_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    tp_status status = settle(gpu_as_event(start), "tp_event_elapsed_time");
    if (status == TP_OK)
        status = settle(gpu_as_event(end), "tp_event_elapsed_time");
    return status == TP_OK ? gpu_event_elapsed(start, end, ms) : status;
}

tp_status gpu_capture_event_timestamp(tp_event *base, int64_t *ns)
{
    tp_status status = settle(gpu_as_event(base), "tp_event_timestamp");
    return status == TP_OK ? gpu_event_timestamp(base, ns) : status;
}

tp_status gpu_capture_snapshot_take(tp_event *base, tp_snapshot *out)
{
    tp_status status = settle(gpu_as_event(base), "reading the event's latest record");
    return status == TP_OK ? gpu_snapshot_take(base, out) : status;
}

tp_status gpu_capture_event_destroy(tp_event *base)
{
    gpu_event *event = gpu_as_event(base);
    if (TP_UNLIKELY(atomic_load_explicit(&event->capture, memory_order_relaxed) != NULL)) {
        pthread_mutex_lock(&gpu_capture_lock);
        mark_free(atomic_exchange_explicit(&event->capture, NULL, memory_order_acq_rel));
        pthread_mutex_unlock(&gpu_capture_lock);
    }
    return gpu_plain_event_destroy(base);
}
