/*
 * What gpu_host_fn_graph.c (lanes, runs, exit; below) and gpu_host_fn_capture.c
 * (nodes made at capture time, doorbells; above) share of captured host
 * functions: a lane (a thread per capture and native stream) and a node. Their
 * design: gpu_host_fn_graph.c's top. Included after gpu_internal.h.
 */
#ifndef TPEVENT_BACKENDS_GPU_HOST_FN_GRAPH_H
#define TPEVENT_BACKENDS_GPU_HOST_FN_GRAPH_H

#include "backends/gpu/gpu_internal.h"

typedef struct gpu_graph_lane {
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    pthread_cond_t ran; /* a gate's node ran */
    /* Under lock: nodes rung and not yet taken, in order (first is read without
     * the lock by the thread's spin too); the nodes that need the lane (the
     * thread ends at 0); whether the thread sleeps. */
    _Atomic(gpu_host_fn_node *) first;
    gpu_host_fn_node *last;
    size_t refs;
    bool idle;
    /* Signalled nodes' runs, one per node per launch, in the order the device
     * reaches them (a ring, capacity a power of two, under lock; run_hint mirrors
     * run_count for the thread's spin). */
    gpu_host_fn_node **runs;
    size_t run_first, run_count, run_capacity;
    atomic_size_t run_hint;
    /* Set at creation: its key. */
    gpu_device *device;
    rt_stream native;
    uint64_t capture; /* the runtime's id of the capture (rt_stream_capture_id) */
} gpu_graph_lane;

struct gpu_host_fn_node {
    void (*fn)(void *);
    void *arg;
    void (*release)(void *); /* of arg, when the node is freed; NULL: none */
    /* Its owner's (the graph's, or the kept list's), and one while it is queued
     * or running: the lane may still run it when the owner lets it go (a
     * launch released at exit, a marker the runtime failed). */
    atomic_uint refs;
    gpu_graph_lane *lane;
    /* Under the lane's lock: its link on the lane's queue; whether it is on it;
     * rings that came while it was (two launches at once of one executable graph,
     * which the runtime does not order: each still runs fn once). */
    gpu_host_fn_node *next;
    bool queued;
    unsigned extra_rings;
    bool held;      /* on counter; else the doorbell is a gate */
    bool signalled; /* held, with no doorbell: the device writes armed - 1 (tpevent's own captures) */
    /* Signalled, under the lane's lock: a run taken and not yet let go; at exit,
     * whether the exit handler's step already stands for a reach that was seen. */
    bool running, exit_reach_seen;
    gpu_counter counter;
    uint64_t armed;     /* what the captured wait waits for */
    uint64_t rung, run; /* gates: rings and runs, under the lane's lock */
};

/* gpu_host_fn_graph.c's: the stream's lane for the capture, with a reference for
 * the caller (made, and its thread started, on first need); the exit handler of
 * signalled runs, registered once (after the counters' own: call it after a
 * counter was taken). */
tp_status gpu_graph_lane_take(gpu_stream *stream, uint64_t capture, gpu_graph_lane **out);
void gpu_graph_lanes_watch_exit(void);

#endif /* TPEVENT_BACKENDS_GPU_HOST_FN_GRAPH_H */
