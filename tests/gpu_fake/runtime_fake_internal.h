/* What runtime_fake.c, runtime_fake_event.c and runtime_fake_graph.c share. Not for the backend. */
#ifndef TPEVENT_TESTS_GPU_FAKE_RUNTIME_FAKE_INTERNAL_H
#define TPEVENT_TESTS_GPU_FAKE_RUNTIME_FAKE_INTERNAL_H

#include "tests/gpu_fake/runtime_fake.h"

#include <pthread.h>
#include <stdatomic.h>

struct fake_capture;

typedef struct fake_record {
    atomic_int refs;
    atomic_bool reached;
    _Atomic uint64_t time_ns;
} fake_record;

/* Counts a runtime call (probe_calls.h's runtime_calls and thread_runtime_calls), in
 * the event and stream calls that tpevent's hot paths and threads make. */
extern atomic_ulong fake_runtime_calls;
extern _Thread_local unsigned long fake_thread_runtime_calls;
#define FAKE_COUNT_CALL() \
    (fake_thread_runtime_calls++, atomic_fetch_add_explicit(&fake_runtime_calls, 1, memory_order_relaxed))

enum { OP_RECORD, OP_WAIT_EVENT, OP_HOST_FN, OP_WAIT_VALUE, OP_MEMSET, OP_WRITE_VALUE };

typedef struct fake_op {
    struct fake_op *next;
    int kind;
    fake_record *record;
    void (*fn)(void *);
    void *arg;
    _Atomic uint64_t *counter;
    uint64_t value; /* OP_WAIT_VALUE's, OP_WRITE_VALUE's (stored at arg); OP_MEMSET's byte */
    size_t size;    /* OP_MEMSET's, at arg */
    bool replayed;  /* OP_HOST_FN of a graph launch: part of one submission (see push) */
    long late_ns;   /* OP_RECORD's: reached this late (runtime_fake_event.c, contention) */
} fake_op;

/* Stream memory waits a stream takes before a submission blocks, and operations
 * of any kind before a host function's or a memory wait's submission does (push). */
#define FAKE_WAIT_DEPTH 40u
#define FAKE_QUEUE_DEPTH 400u

struct fake_stream {
    struct fake_stream *next_on_device; /* under the device's lock */
    int device;
    int priority;
    pthread_mutex_t lock;
    pthread_cond_t work;
    fake_op *first, *last; /* under lock */
    uint64_t submitted;    /* under lock */
    _Atomic uint64_t completed;
    atomic_bool in_wait_value;              /* its thread waits on host memory now */
    unsigned pending_waits;                 /* under lock: stream memory waits pushed, not yet passed */
    pthread_cond_t room;                    /* a pending operation passed, with a push waiting */
    unsigned pushes_waiting;                /* under lock: pushes waiting for room */
    bool destroyed;                         /* under lock */
    atomic_bool drained;                    /* destroyed and done: its thread is gone */
    _Atomic(struct fake_capture *) capture; /* runtime_fake_graph.c */
};

struct fake_event {
    int device;
    unsigned flags;
    pthread_mutex_t lock;
    fake_record *latest; /* under lock; NULL: never recorded */
    /* runtime_fake_graph.c, under its lock: the capture its latest record was
     * made in (a reference), the stream and position it was made at. */
    struct fake_capture *captured_in;
    rt_stream captured_on;
    uint64_t captured_at;
};

/* The device's event clock, drifting against CLOCK_MONOTONIC (runtime_fake_clock.c). */
uint64_t fake_device_now_ns(void);

rt_stream fake_resolve(rt_stream s);
/* Streams of the device not destroyed, the default one included (rule 19's tests). */
int fake_live_streams(int device);
void fake_record_unref(fake_record *record);
fake_op *fake_op_new(int kind);
/* Queues the operation (taking it) on its stream, for the stream's thread. */
rt_error fake_push(rt_stream s, fake_op *op);

/* A graph launch's host function node: part of one submission, as on CUDA, so it
 * never waits for room in the stream's queue. */
rt_error fake_replay_host_fn(rt_stream s, void (*fn)(void *), void *arg);

#define FAKE_POLL_NS 20000L

/* Sleeps between two looks, longer each time up to a millisecond: a long wait
 * costs next to no CPU (rule 5's blocking synchronize is timed on CPU use). */
typedef struct backoff {
    long ns;
} backoff;
#define BACKOFF_INIT \
    {                \
        FAKE_POLL_NS \
    }

void fake_poll_pause_for(backoff *b);

/* Hooks of runtime_fake_graph.c into the plain calls. Each answers whether the
 * call is the capture's (then *e is its answer); false: the plain call goes on. */
bool fake_capture_record(rt_event event, rt_stream s, rt_error *e);
bool fake_capture_wait(rt_stream s, rt_event event, rt_error *e);
bool fake_capture_host_fn(rt_stream s, void (*fn)(void *), void *arg, rt_error *e);
bool fake_capture_wait_value(rt_stream s, uintptr_t counter, uint64_t value, rt_error *e);
bool fake_capture_write_value(rt_stream s, uintptr_t target, uint64_t value, rt_error *e);
/* A call CUDA forbids during a capture: invalidates it, answers the error. */
bool fake_capture_forbids_stream(rt_stream s, rt_error *e);
bool fake_capture_forbids_event(rt_event event, rt_error *e);
/* The event's latest record was made inside a capture that has ended (a node of
 * its graph: a launch's record of an external event replaces it). */
bool fake_capture_ended_record(rt_event event);
/* The event is recorded outside any capture, or destroyed. */
void fake_capture_forget(rt_event event);
/* A potentially unsafe call (a query or synchronize, a host allocation) made by a
 * thread that capture modes prohibit from it: the captures that prohibit it are
 * invalidated, and the call fails. */
bool fake_capture_forbids_unsafe(rt_error *e);

/* Set by a launch (TPEVENT_FAKE_FAILED_MARKS_EVERY, runtime_fake_graph.c): the
 * thread's next event record fails (runtime_fake_event.c). */
extern _Thread_local bool fake_fail_next_record;

#endif /* TPEVENT_TESTS_GPU_FAKE_RUNTIME_FAKE_INTERNAL_H */
