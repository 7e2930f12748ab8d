/*
 * The OpenCL backend's objects and the functions its files share. What it promises
 * is in ocl_backend.h. Layers, each calling only those above it in this list:
 *
 *   ocl_device.c    module state: the core's tp_host, the platforms' devices, a
 *                   context per device, the error names
 *   ocl_clock.c     a device's profiling clock on CLOCK_MONOTONIC (rule 13)
 *   ocl_record.c    records: a retained marker and its converted time, pooled
 *   ocl_readers.c   hazard slots: a record read by a thread is not released
 *   ocl_notify.c    fn(arg) once a record is reached, from one polling thread
 *   ocl_hold.c      a user event and a barrier: the hold (rules 14, 17), and
 *                   the chain that joins holds past a bounded queue's window
 *   ocl_host_fn.c   host functions on a worker thread per stream (rule 15)
 *   ocl_stream.c    the stream entries, device_synchronize
 *   ocl_flush.c     tp_measure's device work (rule 18): the cache flush before
 *                   cold calls, the floor's empty work
 *   ocl_event.c     the event entries
 *   ocl_snapshot.c  snapshots of records
 *   ocl_fork.c      what the entries answer in a child created by fork()
 *   ocl_backend.c   the table and the entry
 */
#ifndef TPEVENT_BACKENDS_OPENCL_OCL_INTERNAL_H
#define TPEVENT_BACKENDS_OPENCL_OCL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "core/builtin_backends.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Rule 17's window on a platform whose queues are bounded or not known to be
 * unbounded: NVIDIA's OpenCL sits on the CUDA driver, whose stream queue blocks its
 * caller past ~1,020 pending operations (H200-measured), so the window of the CUDA
 * backend (RT_HOLD_WINDOW). PoCL keeps its commands in host lists of no bound:
 * INT64_MAX there. */
#define OCL_HOLD_WINDOW 256

/* The most TPEVENT_OPENCL_HOLD_WINDOW may ask for: a stream's chain keeps a slot
 * per gate of its window (ocl_hold.c, 16 bytes each), so a window sizes an
 * allocation; 2^60 wrapped its size and corrupted the heap (issue 47 item 4).
 * 64 times the largest bound a queue is known to have (~1,020, CUDA's). */
#define OCL_HOLD_WINDOW_MAX 65536

/* Anchors a device's clock keeps (ocl_clock.c). */
#define OCL_CLOCK_ANCHORS 8

typedef struct ocl_stream ocl_stream;
typedef struct ocl_host_worker ocl_host_worker;
typedef struct ocl_record ocl_record;

/* A point of the map from the device's profiling clock to CLOCK_MONOTONIC: from
 * device_ns on, host = map_ns + (d - device_ns) * slew_rate for the first
 * OCL_SLEW_NS, then at `rate`. */
typedef struct ocl_anchor {
    double device_ns;
    double map_ns;
    double host_ns; /* the bracket's middle */
    double slew_rate;
    double rate;
    int64_t half_width_ns;
} ocl_anchor;

typedef struct ocl_clock {
    pthread_mutex_t lock;
    cl_command_queue queue;                /* idle but for anchors; made at the first conversion */
    ocl_anchor anchors[OCL_CLOCK_ANCHORS]; /* a ring: oldest at `first` */
    int first, count;
    int64_t widest_half_width_ns;
} ocl_clock;

/* The buffer a cache flush fills (ocl_flush.c); memory NULL until the first. */
typedef struct ocl_flush_buffer {
    cl_mem memory;
    size_t bytes;
} ocl_flush_buffer;

/* A queue kept for reuse (rule 19), with the marker after its last work. */
typedef struct ocl_pooled_queue {
    cl_command_queue queue;
    cl_event tail;
} ocl_pooled_queue;

typedef struct ocl_device {
    int index;
    cl_platform_id platform;
    cl_device_id id;
    cl_context context;
    char name[256];
    char platform_name[256];
    /* PoCL makes a marker CL_SUBMITTED as soon as every earlier command of its
     * queue has completed, CL_QUEUED until then: a stream query needs no wait for
     * its marker to complete. Elsewhere SUBMITTED says nothing of earlier work. */
    bool submitted_marker_means_idle;
    int64_t hold_window; /* rule 17: OCL_HOLD_WINDOW, INT64_MAX on PoCL */
    ocl_clock clock;

    pthread_mutex_t lock; /* the members below */
    ocl_stream *default_stream;
    ocl_stream *streams;      /* every live stream, for device_synchronize */
    ocl_pooled_queue *pooled; /* rule 19: queues given out, their streams destroyed */
    int pooled_count, pooled_capacity;
    /* The last work of destroyed streams not known done: device_synchronize waits
     * for it too (rule 9's work runs on, and is the device's). */
    ocl_record **retired;
    int retired_count, retired_capacity;
    ocl_flush_buffer flush; /* of `context` */
} ocl_device;

/* ------------------------------------------------------------ ocl_device.c */

tp_status tp_ocl_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size);
const tp_host *tp_ocl_host(void);
/* The table every handle of the backend points at. */
const tp_backend *tp_ocl_table(void);
int tp_ocl_device_count(void);
ocl_device *tp_ocl_device(int index);
/* "CL_OUT_OF_RESOURCES" for the runtime's error codes, the number for others. */
const char *tp_ocl_error_name(cl_int error);
/* host->fail(TP_ERR_BACKEND, "<call>: <runtime call>: <error name>"). */
tp_status tp_ocl_fail(const char *call, const char *runtime_call, cl_int error);
/* A profiling in-order queue of the device; NULL after tp_ocl_fail. */
cl_command_queue tp_ocl_queue_create(ocl_device *device, const char *call);

/* ------------------------------------------------------------- ocl_clock.c */

/* The CLOCK_MONOTONIC ns of the device's profiling time `device_ns`. */
tp_status tp_ocl_clock_convert(ocl_device *device, cl_ulong device_ns, int64_t *host_ns);
tp_status tp_ocl_device_clock(int device, tp_clock_info *info);

/* ------------------------------------------------------------ ocl_record.c */

/*
 * One record: the marker it enqueued, retained. Shared by the event whose latest it
 * is and by snapshots and waits (refs); pooled, so that a warmed-up record allocates
 * nothing of tpevent's own (OpenCL makes a new cl_event per command: a marker
 * cannot be reused as a CUDA event is).
 */
struct ocl_record {
    struct ocl_record *next_free; /* first: tp_free_item's layout; also an event's retired stack */
    atomic_int refs;
    cl_event marker;
    ocl_device *device;
    cl_context context;      /* its queue's: a barrier may wait on it only there */
    const void *stream;      /* identity only, never read: rule 15's self-wait */
    _Atomic int64_t host_ns; /* the converted time once given (INT64_MIN: not yet) */
    atomic_bool reached;     /* seen CL_COMPLETE: its END may be read (tp_ocl_record_end) */
    _Atomic uint64_t end_ns; /* CL_PROFILING_COMMAND_END once read (0: not yet) */
};

/* A marker on `queue` after all its work, flushed, in a record of one reference. */
tp_status tp_ocl_record_enqueue(ocl_device *device, cl_context context, cl_command_queue queue, const void *stream,
                                const char *call, ocl_record **out);
/* A caller's command event (of `queue`, on the device) as a record, retained. */
tp_status tp_ocl_record_wrap(ocl_device *device, cl_context context, cl_command_queue queue, cl_event marker,
                             const char *call, ocl_record **out);
void tp_ocl_record_ref(ocl_record *record);
void tp_ocl_record_unref(ocl_record *record);
/* *reached: the marker completed. A failed command is TP_ERR_BACKEND. */
tp_status tp_ocl_record_query(ocl_record *record, const char *call, bool *reached);
/* Whether the command of `marker` is over: complete, or failed (a negative state),
 * or the runtime can no longer answer for it. Whatever waits on it, a hold or a
 * notice, then waits on nothing that will ever come, and goes on. */
bool tp_ocl_marker_done(cl_event marker);
/* Returns once the command of `marker` completes or fails, asleep until its
 * CL_COMPLETE callback or a poll of its state (sleeps of at most 1 ms between
 * polls) says so, whichever comes first (ocl_record.c says why both). */
void tp_ocl_marker_sleep(cl_event marker);
/* A spin first, then with `sleep` tp_ocl_marker_sleep, else polls between yields. */
void tp_ocl_marker_wait(cl_event marker, bool sleep);
/* tp_ocl_marker_wait on the record's marker, then its state: TP_ERR_BACKEND for a
 * failed command. */
tp_status tp_ocl_record_wait(ocl_record *record, bool sleep, const char *call);
/* CL_PROFILING_COMMAND_END, in the device's ns, read once; TP_ERR_NOT_READY with no
 * message while the record is not reached. */
tp_status tp_ocl_record_end(ocl_record *record, const char *call, cl_ulong *end_ns);
/* A reached record's CLOCK_MONOTONIC time, the same every time it is asked. */
tp_status tp_ocl_record_time(ocl_record *record, const char *call, int64_t *host_ns);

/* ------------------------------------------------------------ ocl_notify.c */

/*
 * fn(arg) once, once the record's marker completes or its command fails (or the
 * runtime can no longer answer for it): at once on the calling thread if it has
 * already, else on the module's notifier thread, which polls the marker (at most
 * 1 ms late; ocl_notify.c says why not the CL_COMPLETE callback). fn must be short
 * and must not block (core/backend.h's snapshot_notify); it runs with no lock of
 * the notifier held. The notice retains the marker: the caller may drop its
 * reference to the record at once. Never run if the process exits first.
 * TP_ERR_OUT_OF_MEMORY, or TP_ERR_BACKEND when the marker cannot be retained or
 * the thread cannot start; fn is then never run.
 */
tp_status tp_ocl_record_notify(ocl_record *record, void (*fn)(void *), void *arg, const char *call);

/* -------------------------------------------------------------- ocl_hold.c */

/* Later work on `queue` waits for *release(*arg). */
tp_status tp_ocl_hold_queue(cl_context context, cl_command_queue queue, const char *call, void (**release)(void *),
                            void **arg);

/* A stream's holds where its queue is bounded (rule 17's window): past `window`
 * gates not let go, a hold joins the latest. Opened with the stream's reference. */
typedef struct ocl_hold_chain ocl_hold_chain;
tp_status tp_ocl_hold_chain_open(int64_t window, ocl_hold_chain **out);
/* The stream's reference dropped; the chain goes once every release came. */
void tp_ocl_hold_chain_close(ocl_hold_chain *chain);
/* tp_ocl_hold_queue through the chain. */
tp_status tp_ocl_hold_chained(ocl_hold_chain *chain, cl_context context, cl_command_queue queue, const char *call,
                              void (**release)(void *), void **arg);

/* ----------------------------------------------------------- ocl_host_fn.c */

/* fn(arg) on the stream's worker after the queue's earlier work; later work waits
 * for it. `*worker` is started on first use and owned by the stream. */
tp_status tp_ocl_host_fn_launch(cl_context context, cl_command_queue queue, const void *stream,
                                ocl_host_worker **worker, void (*fn)(void *), void *arg);
/* Lets the worker end once its functions have run; never blocks. */
void tp_ocl_host_worker_close(ocl_host_worker *worker);
/* The stream (identity) whose host function the calling thread runs, or NULL. */
const void *tp_ocl_host_fn_running_stream(void);

/* ------------------------------------------------------------ ocl_stream.c */

struct ocl_stream {
    tp_stream head;
    ocl_device *device;
    cl_context context; /* the queue's (a wrapped queue may be of another context) */
    cl_command_queue queue;
    bool borrowed;         /* the caller's queue: never released */
    atomic_bool given_out; /* rule 19: the queue goes to the device's pool */
    pthread_mutex_t lock;  /* submissions that take two commands, the worker, `probe` */
    /* Set after every command tpevent enqueues on the queue but the probes: the
     * stream has work `probe` does not cover (ocl_stream.c, stream_probe). */
    atomic_bool enqueued;
    ocl_record *probe; /* a marker after the work enqueued before it; NULL: none yet */
    ocl_host_worker *worker;
    ocl_hold_chain *holds;   /* made at the first hold where the window is finite */
    ocl_flush_buffer flush;  /* a wrapped queue of another context than the device's: its own */
    ocl_stream *next, *prev; /* the device's list */
};

/* After each command tpevent enqueues on the stream's queue (a plain store on x86). */
static inline void tp_ocl_stream_enqueued(ocl_stream *stream)
{
    atomic_store_explicit(&stream->enqueued, true, memory_order_release);
}

tp_status tp_ocl_stream_create(int device, int priority, tp_stream **out);
tp_status tp_ocl_stream_from_native(int device, void *native, tp_stream **out);
tp_status tp_ocl_stream_default(int device, tp_stream **out);
tp_status tp_ocl_stream_destroy(tp_stream *stream);
tp_status tp_ocl_stream_query(tp_stream *stream, bool *idle);
tp_status tp_ocl_stream_synchronize(tp_stream *stream);
tp_status tp_ocl_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg);
void *tp_ocl_stream_native(tp_stream *stream);
tp_status tp_ocl_stream_hold(tp_stream *stream, void (**release)(void *), void **arg);
tp_status tp_ocl_device_synchronize(int device);
bool tp_ocl_stream_waits_for_itself(tp_stream *stream);

/* ------------------------------------------------------------- ocl_flush.c */

tp_status tp_ocl_stream_flush_cache(tp_stream *stream);
/* stream_launch_empty (core/backend.h): a marker, the least a queue runs. */
tp_status tp_ocl_stream_launch_empty(tp_stream *stream);

/* ------------------------------------------------------------- ocl_event.c */

/* `latest` is read without a lock; ocl_event.c's top comment says how a record it
 * replaces outlives the readers that may still use it (rule 10). */
typedef struct ocl_event {
    tp_event head;
    _Atomic(ocl_record *) latest;  /* NULL: never recorded */
    _Atomic(ocl_record *) retired; /* replaced while a reader held it: a stack through next_free */
} ocl_event;

tp_status tp_ocl_event_create(int device, unsigned flags, tp_event **out);
tp_status tp_ocl_event_destroy(tp_event *event);
/* tp_event_from_native: the caller's command event as the latest record of an event
 * of `table` (the backend's, but for a record refused). */
tp_status tp_ocl_event_wrap(int device, void *native, const tp_backend *table, tp_event **out);
tp_status tp_ocl_event_record(tp_event *event, tp_stream *stream);
tp_status tp_ocl_event_query(tp_event *event, bool *done);
tp_status tp_ocl_event_synchronize(tp_event *event);
tp_status tp_ocl_event_elapsed(tp_event *start, tp_event *end, float *ms);
tp_status tp_ocl_event_timestamp(tp_event *event, int64_t *ns);
tp_status tp_ocl_event_native(tp_event *event, void **native);
tp_status tp_ocl_stream_wait_event(tp_stream *stream, tp_event *event);
bool tp_ocl_event_waits_for_itself(tp_event *event);
/* The event's latest record with a reference, or NULL: never recorded. */
ocl_record *tp_ocl_event_latest(ocl_event *event);

/* ----------------------------------------------------------- ocl_readers.c */

/* Records a thread may read at once: elapsed reads two. */
#define OCL_HAZARDS 2

/* A thread's hazard slots (ocl_readers.c): the records it is reading now. */
typedef struct ocl_reader_slot {
    _Atomic(ocl_record *) hazard[OCL_HAZARDS];
    atomic_bool in_use; /* a live thread's */
    bool shared;        /* the one of threads out of memory, under a lock */
    struct ocl_reader_slot *next;
} ocl_reader_slot;

extern __attribute__((tls_model("initial-exec"))) _Thread_local ocl_reader_slot *tp_ocl_my_slot;
/* The calling thread's first read: its slot (or, out of memory, a shared one,
 * locked until tp_ocl_read_leave). */
ocl_reader_slot *tp_ocl_reader_slot_make(void);
void tp_ocl_shared_slot_leave(void);
/* Whether a reader's slot holds `record`: it may not be released yet. */
bool tp_ocl_record_in_use(const ocl_record *record);

static inline ocl_reader_slot *tp_ocl_reader_slot(void)
{
    ocl_reader_slot *slot = tp_ocl_my_slot;
    return TP_LIKELY(slot != NULL) ? slot : tp_ocl_reader_slot_make();
}

/* `*latest`, published in the slot's hazard `h` until tp_ocl_read_leave: no
 * recorder releases it meanwhile. */
static inline ocl_record *tp_ocl_read_enter(ocl_reader_slot *slot, int h, _Atomic(ocl_record *) *latest)
{
    ocl_record *record = atomic_load_explicit(latest, memory_order_relaxed);
    for (;;) {
        atomic_store_explicit(&slot->hazard[h], record, memory_order_seq_cst);
        ocl_record *again = atomic_load_explicit(latest, memory_order_seq_cst);
        if (TP_LIKELY(again == record))
            return record;
        record = again;
    }
}

/* Both events' latest records, in hazards 0 and 1, behind one fence (elapsed). */
static inline void tp_ocl_read_enter_pair(ocl_reader_slot *slot, _Atomic(ocl_record *) *first,
                                          _Atomic(ocl_record *) *second, ocl_record **out)
{
    ocl_record *a = atomic_load_explicit(first, memory_order_relaxed);
    ocl_record *b = atomic_load_explicit(second, memory_order_relaxed);
    for (;;) {
        atomic_store_explicit(&slot->hazard[0], a, memory_order_relaxed);
        atomic_store_explicit(&slot->hazard[1], b, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        /* Acquire: what the recorder wrote into the records before publishing them. */
        ocl_record *a_again = atomic_load_explicit(first, memory_order_acquire);
        ocl_record *b_again = atomic_load_explicit(second, memory_order_acquire);
        if (TP_LIKELY(a_again == a && b_again == b))
            break;
        a = a_again;
        b = b_again;
    }
    out[0] = a;
    out[1] = b;
}

static inline void tp_ocl_read_leave(ocl_reader_slot *slot, int h)
{
    atomic_store_explicit(&slot->hazard[h], NULL, memory_order_release);
    if (TP_UNLIKELY(slot->shared) && h == 0) /* elapsed leaves 1, then 0 */
        tp_ocl_shared_slot_leave();
}

/* ---------------------------------------------------------- ocl_snapshot.c */

tp_status tp_ocl_snapshot_take(tp_event *event, tp_snapshot *out);
void tp_ocl_snapshot_release(tp_snapshot *snapshot);
tp_status tp_ocl_snapshot_query(const tp_snapshot *snapshot, bool *reached);
tp_status tp_ocl_snapshot_synchronize(const tp_snapshot *snapshot);
tp_status tp_ocl_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg);

/* -------------------------------------------------------------- ocl_fork.c */

/* Once the module is initialized: in a child created by fork(), every entry of
 * the two tables that can reach the runtime fails at once with TP_ERR_BACKEND and
 * the reason (ocl_fork.c). */
tp_status tp_ocl_fork_guard_install(tp_backend *table, tp_backend *wrapped_table, char *reason, size_t reason_size);

#endif /* TPEVENT_BACKENDS_OPENCL_OCL_INTERNAL_H */
