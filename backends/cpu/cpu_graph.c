/*
 * Rule 16 on the CPU, the reference: a captured graph is a list of the stream's
 * tasks, replayed.
 *
 * While a stream captures, the host functions, records and waits submitted to it
 * are appended to its graph instead of its queue; a stream that waits on an event
 * whose latest record was made inside the capture joins it, and its later work
 * is appended too, as another branch. Every captured operation is appended after
 * the operations it depends on (those of its own branch, submitted before it, and
 * the records it waits for, made before the wait), so the list's order is a
 * topological order of the captured graph. tp_graph_launch replays the list on
 * the launch stream, in one batch: correct for every order and every cross-branch
 * dependency the capture saw, the branches serialized (the simplest correct
 * replay; helper queues per branch would let them overlap).
 *
 * What the list holds:
 *   HOST_FN          fn(arg): host functions are the CPU's unit of work, so they
 *                    replay exactly (rule 15 holds: the launch stream's worker
 *                    runs them, as it runs its own);
 *   RECORD_EXTERNAL  a record of a TP_EVENT_EXTERNAL event, made again on the
 *                    launch stream at each launch;
 *   WAIT_EXTERNAL    a wait on a TP_EVENT_EXTERNAL event: at each launch, for its
 *                    latest record as of that launch.
 * A record of a plain event, and a wait on a record inside the capture, order
 * work within the graph only: the list's order already keeps them. A wait on a
 * plain event recorded outside the capture is refused (TP_ERR_CAPTURING), as
 * CUDA refuses it: it needs TP_EVENT_EXTERNAL.
 *
 * Joins: each branch counts its operations; the origin's wait on a record made
 * on a branch at position p covers that branch up to p. end_capture refuses and
 * drops the capture if a branch is not covered to its end.
 *
 * State of captures (which stream captures into which graph, the branches, the
 * lists while built) changes under one lock, `capture_lock`: captures are rare
 * and not on a hot path. A launch reads a finished graph, which never changes,
 * and needs none; the tasks it pushes hold their own references, so a graph may
 * be destroyed with launches pending (rule 9).
 */
#include "backends/cpu/cpu_internal.h"
#include "common/array.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef enum node_kind {
    NODE_HOST_FN,
    NODE_HOST_FN_OWNED,
    NODE_RECORD_EXTERNAL,
    NODE_WAIT_EXTERNAL,
} node_kind;

/* A host function whose arg the graph owns (stream_capture_host_fn): release(arg)
 * once the graph and every launch's task are done with it. */
typedef struct owned_fn {
    atomic_uint refs; /* the graph's, and one per task pushed and not yet run */
    void (*fn)(void *);
    void *arg;
    void (*release)(void *);
} owned_fn;

typedef struct graph_node {
    node_kind kind;
    void (*fn)(void *);
    void *arg;
    cpu_event *event; /* EXTERNAL: a reference */
    owned_fn *owned;  /* HOST_FN_OWNED: a reference */
} graph_node;

typedef struct graph_branch {
    cpu_queue *queue; /* a reference while the capture is open */
    uint64_t ops;     /* operations captured on it (its joining wait included) */
    uint64_t covered; /* of them, followed by a record the origin waited on */
} graph_branch;

struct cpu_graph {
    tp_graph head;
    cpu_capture *token; /* while open */
    graph_node *nodes;
    size_t count;
    size_t capacity;
    unsigned untimed_records; /* NODE_RECORD_EXTERNAL of events without timing */
    graph_branch *branches;   /* [0]: the origin */
    size_t branch_count;
    size_t branch_capacity;
    bool out_of_memory; /* an append failed: end_capture refuses */
};

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* A thread that held it at the fork does not exist in the child: made anew (the
 * captures it guarded are on inherited streams, which fail at once there). */
static void capture_lock_fork_child(void)
{
    (void)pthread_mutex_init(&capture_lock, NULL);
}

__attribute__((constructor)) static void register_capture_lock_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, capture_lock_fork_child);
}

static cpu_queue *queue_of(tp_stream *stream)
{
    return ((cpu_stream *)stream)->queue;
}

static cpu_graph *capture_of(cpu_queue *queue)
{
    return atomic_load_explicit(&queue->capture, memory_order_relaxed);
}

static const tp_host *host(void)
{
    return tp_cpu_host();
}

/* ------------------------------------------------------------ building */

static void owned_fn_unref(owned_fn *owned)
{
    if (atomic_fetch_sub_explicit(&owned->refs, 1, memory_order_acq_rel) == 1) {
        owned->release(owned->arg);
        free(owned);
    }
}

static void free_graph(cpu_graph *graph)
{
    for (size_t i = 0; i < graph->count; i++) {
        graph_node *node = &graph->nodes[i];
        if (node->event)
            tp_cpu_event_unref(node->event);
        if (node->owned)
            owned_fn_unref(node->owned);
    }
    free(graph->nodes);
    free(graph->branches);
    free(graph);
}

/* Under capture_lock. */
static graph_branch *branch_of(cpu_graph *graph, cpu_queue *queue)
{
    for (size_t i = 0; i < graph->branch_count; i++)
        if (graph->branches[i].queue == queue)
            return &graph->branches[i];
    return NULL;
}

/* Under capture_lock. False (and the capture marked failed) if out of memory. */
static bool add_branch(cpu_graph *graph, cpu_queue *queue, uint64_t ops)
{
    if (!tp_array_grow(&graph->branches, &graph->branch_capacity, graph->branch_count + 1, sizeof *graph->branches)) {
        graph->out_of_memory = true;
        return false;
    }
    tp_cpu_queue_ref(queue);
    graph->branches[graph->branch_count++] = (graph_branch){queue, ops, 0};
    atomic_store_explicit(&queue->capture, graph, memory_order_release);
    return true;
}

/* Under capture_lock. Takes over the node's references, releasing them if the
 * append fails (the capture is then marked failed: end_capture refuses it). */
static void append(cpu_graph *graph, graph_node node)
{
    if (!tp_array_grow(&graph->nodes, &graph->capacity, graph->count + 1, sizeof *graph->nodes)) {
        graph->out_of_memory = true;
        if (node.event)
            tp_cpu_event_unref(node.event);
        if (node.owned)
            owned_fn_unref(node.owned);
        return;
    }
    graph->nodes[graph->count++] = node;
}

/* The branch of a capturing queue, under capture_lock; NULL if the queue stopped
 * capturing meanwhile (another thread ended the capture). */
static graph_branch *locked_branch(cpu_queue *queue, cpu_graph **graph)
{
    pthread_mutex_lock(&capture_lock);
    *graph = capture_of(queue);
    graph_branch *branch = *graph ? branch_of(*graph, queue) : NULL;
    if (!branch)
        pthread_mutex_unlock(&capture_lock);
    return branch;
}

TP_COLD static tp_status refuse_interprocess(const char *operation)
{
    return host()->fail(TP_ERR_CAPTURING,
                        "%s: interprocess events cannot be captured (a record or wait in another process "
                        "cannot be replayed at each launch, rule 16)",
                        operation);
}

/* ------------------------------------------------ the entries a capture changes */

/* A record on a stream that may be capturing, out of line: the record on one that
 * is not keeps nothing across a call. */
TP_NOINLINE static tp_status record_in_capture(tp_event *handle, tp_stream *stream, cpu_queue *queue)
{
    cpu_event *event = (cpu_event *)handle;
    cpu_graph *graph;
    graph_branch *branch = locked_branch(queue, &graph);
    if (!branch)
        return tp_cpu_event_record(handle, stream);
    if (event->ops) {
        pthread_mutex_unlock(&capture_lock);
        return refuse_interprocess("tp_event_record");
    }
    branch->ops++;
    tp_cpu_event_capture_record(event, graph->token, queue, branch->ops);
    if (handle->flags & TP_EVENT_EXTERNAL) {
        tp_cpu_event_ref(event);
        append(graph, (graph_node){.kind = NODE_RECORD_EXTERNAL, .event = event});
        if (!(handle->flags & TP_EVENT_TIMING)) {
            if (graph->untimed_records == UINT_MAX)
                graph->out_of_memory = true; /* a launch takes them as one count: end_capture refuses */
            else
                graph->untimed_records++;
        }
    }
    pthread_mutex_unlock(&capture_lock);
    return TP_OK;
}

tp_status tp_cpu_capture_event_record(tp_event *handle, tp_stream *stream)
{
    cpu_queue *queue = queue_of(stream);
    if (TP_UNLIKELY(capture_of(queue) != NULL))
        return record_in_capture(handle, stream, queue);
    return tp_cpu_event_record(handle, stream);
}

tp_status tp_cpu_capture_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    cpu_queue *queue = queue_of(stream);
    if (TP_LIKELY(capture_of(queue) == NULL))
        return tp_cpu_stream_launch_host_fn(stream, fn, arg);
    cpu_graph *graph;
    graph_branch *branch = locked_branch(queue, &graph);
    if (!branch)
        return tp_cpu_stream_launch_host_fn(stream, fn, arg);
    branch->ops++;
    append(graph, (graph_node){.kind = NODE_HOST_FN, .fn = fn, .arg = arg});
    pthread_mutex_unlock(&capture_lock);
    return TP_OK;
}

tp_status tp_cpu_capture_host_fn(tp_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *))
{
    owned_fn *owned = malloc(sizeof *owned);
    if (!owned)
        return host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_wait: out of memory");
    *owned = (owned_fn){.fn = fn, .arg = arg, .release = release};
    atomic_init(&owned->refs, 1);
    cpu_graph *graph;
    graph_branch *branch = locked_branch(queue_of(stream), &graph);
    if (!branch) {
        free(owned);
        return host()->fail(TP_ERR_INVALID_ARGUMENT, "capturing a host function: the cpu:%d stream %p is not capturing",
                            stream->device.index, (void *)stream);
    }
    branch->ops++;
    append(graph, (graph_node){.kind = NODE_HOST_FN_OWNED, .owned = owned}); /* released by the graph from here */
    pthread_mutex_unlock(&capture_lock);
    return TP_OK;
}

/* Under capture_lock: a capturing stream waits on an event whose latest record
 * is not inside an open capture. */
static tp_status capture_outside_wait(cpu_graph *graph, const cpu_queue *queue, cpu_event *event)
{
    if (event->head.flags & TP_EVENT_EXTERNAL) {
        tp_cpu_event_ref(event);
        append(graph, (graph_node){.kind = NODE_WAIT_EXTERNAL, .event = event});
        return TP_OK;
    }
    cpu_snapshot record = tp_cpu_event_snapshot(event);
    if (record.source)
        tp_cpu_queue_unref(record.source);
    if (!record.recorded)
        return TP_OK; /* never recorded (or only inside a capture now closed): nothing */
    return host()->fail(TP_ERR_CAPTURING,
                        "tp_stream_wait_event: the cpu:%d stream %p is capturing, and the event's latest record was "
                        "made outside the capture: a wait on it inside a capture needs TP_EVENT_EXTERNAL (rule 16)",
                        queue->device->index, (const void *)&queue->own.head);
}

TP_COLD static tp_status other_capture(const cpu_queue *queue)
{
    return host()->fail(TP_ERR_CAPTURING,
                        "tp_stream_wait_event: the cpu:%d stream %p is capturing, and the event's latest record was "
                        "made inside another capture still open (rule 16)",
                        queue->device->index, (const void *)&queue->own.head);
}

tp_status tp_cpu_capture_wait_event(tp_stream *stream, tp_event *handle)
{
    cpu_queue *queue = queue_of(stream);
    cpu_event *event = (cpu_event *)handle;
    if (TP_LIKELY(capture_of(queue) == NULL && atomic_load_explicit(&event->capture, memory_order_relaxed) == NULL))
        return tp_cpu_stream_wait_event(stream, handle);

    cpu_queue *record_branch = NULL;
    uint64_t record_pos = 0;
    cpu_capture *token = event->ops ? NULL : tp_cpu_event_capture_of(event, &record_branch, &record_pos);
    pthread_mutex_lock(&capture_lock);
    cpu_graph *graph = capture_of(queue);
    cpu_graph *recorded_in = token && tp_cpu_capture_open(token) ? token->graph : NULL;
    tp_status status = TP_OK;
    bool plain_wait = false;
    if (!graph && !recorded_in) {
        plain_wait = true; /* the capture ended meanwhile */
    } else if (!graph) {
        /* Joins the capture: its later work is captured, as a branch of its own. */
        if (!add_branch(recorded_in, queue, 1))
            status = host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_wait_event: out of memory joining a capture");
    } else if (event->ops) {
        status = refuse_interprocess("tp_stream_wait_event");
    } else if (recorded_in && recorded_in != graph) {
        status = other_capture(queue);
    } else {
        graph_branch *branch = branch_of(graph, queue);
        branch->ops++;
        if (recorded_in) {
            /* Within the graph: the list's order keeps it. The origin's wait
             * joins the record's branch back up to the record. */
            graph_branch *joined = branch_of(graph, record_branch);
            if (branch == &graph->branches[0] && joined && joined->covered < record_pos)
                joined->covered = record_pos;
        } else {
            status = capture_outside_wait(graph, queue, event);
        }
    }
    pthread_mutex_unlock(&capture_lock);
    if (token)
        tp_cpu_capture_unref(token);
    return plain_wait ? tp_cpu_stream_wait_event(stream, handle) : status;
}

/* ------------------------------------------------------ capture entries */

tp_status tp_cpu_stream_begin_capture(tp_stream *stream)
{
    cpu_queue *queue = queue_of(stream);
    cpu_graph *graph = calloc(1, sizeof *graph);
    cpu_capture *token = calloc(1, sizeof *token);
    if (!graph || !token) {
        free(graph);
        free(token);
        return host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_begin_capture: out of memory");
    }
    graph->head = (tp_graph){.backend = tp_cpu_table(), .device = stream->device};
    atomic_init(&token->refs, 1); /* the graph's, while open */
    atomic_init(&token->open, true);
    token->graph = graph;
    graph->token = token;
    pthread_mutex_lock(&capture_lock);
    tp_status status = TP_OK;
    if (capture_of(queue))
        status = host()->fail(TP_ERR_CAPTURING, "tp_stream_begin_capture: the cpu:%d stream %p is capturing already",
                              stream->device.index, (const void *)&queue->own.head);
    else if (!add_branch(graph, queue, 0))
        status = host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_begin_capture: out of memory");
    pthread_mutex_unlock(&capture_lock);
    if (status != TP_OK) {
        free(graph->branches);
        free(graph);
        free(token);
    }
    return status;
}

tp_status tp_cpu_stream_is_capturing(tp_stream *stream, bool *capturing)
{
    *capturing = capture_of(queue_of(stream)) != NULL;
    return TP_OK;
}

tp_status tp_cpu_stream_end_capture(tp_stream *stream, tp_graph **out)
{
    cpu_queue *queue = queue_of(stream);
    pthread_mutex_lock(&capture_lock);
    cpu_graph *graph = capture_of(queue);
    if (!graph || graph->branches[0].queue != queue) {
        pthread_mutex_unlock(&capture_lock);
        if (!graph)
            return host()->fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_end_capture: the cpu:%d stream %p is not capturing",
                                stream->device.index, (const void *)&queue->own.head);
        return host()->fail(TP_ERR_INVALID_ARGUMENT,
                            "tp_stream_end_capture: the cpu:%d stream %p joined a capture begun on stream %p: end it "
                            "there",
                            stream->device.index, (const void *)&queue->own.head,
                            (const void *)&graph->branches[0].queue->own.head);
    }
    const graph_branch *unjoined = NULL;
    for (size_t i = 1; i < graph->branch_count && !unjoined; i++)
        if (graph->branches[i].covered < graph->branches[i].ops)
            unjoined = &graph->branches[i];
    /* Whatever the answer, the capture is over: every stream leaves it. */
    atomic_store_explicit(&graph->token->open, false, memory_order_release);
    graph->token->graph = NULL;
    for (size_t i = 0; i < graph->branch_count; i++)
        atomic_store_explicit(&graph->branches[i].queue->capture, NULL, memory_order_release);
    tp_status status = TP_OK;
    if (unjoined)
        status = host()->fail(TP_ERR_CAPTURING,
                              "tp_stream_end_capture: the cpu:%d stream %p joined the capture and was not joined back "
                              "(the origin stream %p did not wait on a record made after its last captured work): "
                              "the capture is dropped",
                              stream->device.index, (const void *)&unjoined->queue->own.head,
                              (const void *)&queue->own.head);
    else if (graph->out_of_memory)
        status = host()->fail(TP_ERR_OUT_OF_MEMORY,
                              "tp_stream_end_capture: out of memory while capturing: the capture is dropped");
    pthread_mutex_unlock(&capture_lock);

    for (size_t i = 0; i < graph->branch_count; i++)
        tp_cpu_queue_unref(graph->branches[i].queue);
    free(graph->branches);
    graph->branches = NULL;
    graph->branch_count = graph->branch_capacity = 0;
    tp_cpu_capture_unref(graph->token);
    graph->token = NULL;
    if (status != TP_OK) {
        free_graph(graph);
        return status;
    }
    *out = &graph->head;
    return TP_OK;
}

/* --------------------------------------------------------------- launch */

static void host_fn_task(void *arg, cpu_word fn)
{
    fn.fn(arg);
}

static void owned_fn_task(void *arg, cpu_word unused)
{
    (void)unused;
    owned_fn *owned = arg;
    owned->fn(owned->arg);
    owned_fn_unref(owned);
}

/* Under the queue's lock (a batch): a record of an event without timing needs no
 * task, as on a busy stream outside a graph (cpu_event.c): it is reached once the
 * tasks pushed before it are, and nobody asks when. A task per record made the
 * worker run as many tasks again as one by one did (bench/graph: records and host
 * functions half and half), so that a replay was no cheaper than one by one. */
static unsigned record_without_task(cpu_event *event, cpu_queue *queue)
{
    /* Its reference on the queue is one of those the launch took at once; one that
     * the replaced record held on this queue too goes back with the others at the
     * end (returns 1): two atomic operations a record fewer. */
    cpu_queue *old = tp_cpu_event_swap_record(event, queue, tp_cpu_queue_next_seq(queue) - 1);
    if (old == queue)
        return 1;
    if (old)
        tp_cpu_queue_unref(old);
    return 0;
}

tp_status tp_cpu_graph_launch(tp_graph *handle, tp_stream *stream)
{
    cpu_graph *graph = (cpu_graph *)handle;
    cpu_queue *queue = queue_of(stream);
    if (capture_of(queue))
        return host()->fail(TP_ERR_CAPTURING,
                            "graph_launch: the cpu:%d stream %p is capturing: a graph cannot be launched into a "
                            "capture",
                            stream->device.index, (const void *)&queue->own.head);
    if (graph->count == 0)
        return TP_OK;
    tp_status status = tp_cpu_queue_begin_submit_n(queue, graph->count, "graph_launch");
    if (status != TP_OK)
        return status;
    if (graph->untimed_records)
        tp_cpu_queue_ref_n(queue, graph->untimed_records); /* the records' (record_without_task) */
    unsigned given_back = 0;
    for (size_t i = 0; i < graph->count; i++) {
        const graph_node *node = &graph->nodes[i];
        cpu_task task;
        switch (node->kind) {
        case NODE_HOST_FN:
            task = (cpu_task){.run = host_fn_task, .arg = node->arg, .word.fn = node->fn};
            break;
        case NODE_HOST_FN_OWNED:
            atomic_fetch_add_explicit(&node->owned->refs, 1, memory_order_relaxed);
            task = (cpu_task){.run = owned_fn_task, .arg = node->owned};
            break;
        case NODE_RECORD_EXTERNAL:
            if (!(node->event->head.flags & TP_EVENT_TIMING)) {
                given_back += record_without_task(node->event, queue);
                continue;
            }
            task = tp_cpu_event_record_task(node->event, queue, tp_cpu_queue_next_seq(queue));
            break;
        case NODE_WAIT_EXTERNAL:
        default: {
            /* The latest record as of this launch (one made earlier in this very
             * launch is on this queue: the FIFO keeps it). */
            cpu_snapshot pending = tp_cpu_event_snapshot(node->event);
            if (!pending.source)
                continue;
            if (pending.source == queue) {
                tp_cpu_queue_unref(pending.source);
                continue;
            }
            task = tp_cpu_event_wait_task(pending.source, pending.seq);
            break;
        }
        }
        tp_cpu_queue_push(queue, &task);
    }
    tp_cpu_queue_end_batch(queue);
    if (given_back)
        tp_cpu_queue_unref_n(queue, given_back); /* never the last: the stream holds one */
    return TP_OK;
}

tp_status tp_cpu_graph_destroy(tp_graph *handle)
{
    free_graph((cpu_graph *)handle);
    return TP_OK;
}
