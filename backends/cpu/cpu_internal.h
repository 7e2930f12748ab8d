/*
 * What the CPU backend's files share. Not installed.
 *
 * Layers, bottom to top. A file calls functions of the files below it only:
 *
 *   file               what it is                                 may call
 *   cpu_device.c       module state: the core's services, the     -
 *                      table's address, the virtual devices
 *   cpu_queue.c        a stream's FIFO, its worker, waiting on    device
 *                      it; a task is run(arg, word), nothing more
 *   cpu_stream.c       the stream entries, device_synchronize     queue, device
 *   cpu_event.c        events: snapshots of records, their        queue, device
 *                      record and wait tasks
 *   cpu_ipc_region.c   interprocess state, where it lives: the    device
 *                      memfd, opening it through /proc, lifetime
 *   cpu_ipc.c          interprocess state, the records in it:     ipc_region, queue,
 *                      channels, tickets, their tasks, liveness   device
 *   cpu_ipc_event.c    interprocess events: their entries         ipc, ipc_region,
 *                      (cpu_event_ops), export and import         event, queue, device
 *   cpu_snapshot.c     the snapshot entries (core/backend.h)      ipc, event, queue,
 *                                                                 device
 *   cpu_graph.c        rule 16: captures, graphs, their launch;   event, stream,
 *                      wraps record, wait and host functions      queue, device
 *   cpu_backend.c      the table, wiring the entries of all;      all of them
 *                      init
 *
 * Calls go up only through function pointers the upper layer handed down: the
 * queue runs the tasks it is given (record_task and wait_task of cpu_event.c,
 * the publish and wait tasks of cpu_ipc.c, host functions through cpu_stream.c),
 * the event entries call the cpu_event_ops of an event made above (interprocess
 * events, cpu_ipc_event.c), and cpu_device.c hands out the table cpu_backend.c
 * gave it at init. cpu_ipc.h (the region's layout) is for the two
 * cpu_ipc_region.c and cpu_ipc.c alone.
 *
 * Objects and who keeps them alive (rule 9):
 *
 *   cpu_stream  what a tp_stream* points at: the head and the queue it feeds. The
 *               owner's handle lives inside its queue; a borrowed wrapper
 *               (tp_stream_from_native) is a separate allocation.
 *   cpu_queue   the FIFO, its worker and its two sequence numbers. Reference
 *               counted: one per handle (owner, wrappers), one for the worker while
 *               it runs, one per event snapshot or wait task that points at it.
 *               `handles` counts the handles alone: the worker exits once it is
 *               zero and the FIFO is empty.
 *   cpu_event   reference counted: one for the user, one per pending record task
 *               (timing events'). An interprocess event is a cpu_event inside a
 *               larger struct of cpu_ipc_event.c, freed by its ops' release.
 *   cpu_ipc     an interprocess event's shared record state (cpu_ipc.c), attached
 *               at the event's first record or export (rule 2), or at import.
 *               Reference counted: one for the event, one per record or wait task
 *               on it.
 *
 * Sequence numbers. `submitted` counts tasks ever pushed, `completed` tasks ever
 * finished; both only grow and completed <= submitted. Task n (from 1) is done when
 * completed >= n, so a record's snapshot is just (queue, n), and "reached" is one
 * atomic load and a compare. The worker writes a record's timestamp before it moves
 * `completed` past the record (release), so whoever sees the record reached
 * (acquire) sees its time.
 *
 * Lock order: device lock, then queue lock, then event spinlock; nobody takes an
 * earlier one while holding a later one, and nobody drops a reference (which may
 * free and take the device lock) while holding a queue or event lock. The shared
 * lock of an interprocess event (cpu_ipc.c) is taken last, under a queue lock at
 * most, and held for a few stores.
 */
#ifndef TPEVENT_BACKENDS_CPU_INTERNAL_H
#define TPEVENT_BACKENDS_CPU_INTERNAL_H

#include "common/clock.h"
#include "common/compiler.h"
#include "common/process.h"
#include "common/spin.h"
#include "backends/cpu/cpu_backend.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

typedef struct cpu_device cpu_device;
typedef struct cpu_queue cpu_queue;
typedef struct cpu_stream cpu_stream;
typedef struct cpu_event cpu_event;
typedef struct cpu_ipc cpu_ipc;
typedef struct cpu_event_ops cpu_event_ops;
typedef struct cpu_graph cpu_graph;
typedef struct cpu_capture cpu_capture;

/*
 * Rule 16 (cpu_graph.c). A capture's token: what an event whose latest record was
 * made inside a capture points at (one reference each; the graph being built
 * holds one). `open` until the capture ends or is dropped; `graph` is the graph
 * being built while open, read and written under cpu_graph.c's capture lock.
 */
struct cpu_capture {
    atomic_uint refs;
    atomic_bool open;
    cpu_graph *graph;
};

static inline void tp_cpu_capture_ref(cpu_capture *token)
{
    atomic_fetch_add_explicit(&token->refs, 1, memory_order_relaxed);
}

void tp_cpu_capture_unref(cpu_capture *token); /* cpu_event.c */

static inline bool tp_cpu_capture_open(const cpu_capture *token)
{
    return token && atomic_load_explicit(&token->open, memory_order_acquire);
}

struct cpu_stream {
    tp_stream head;
    cpu_queue *queue;
};

/* A task's second word of argument: a number (a record's version, a wait's
 * sequence number or ticket) or a function (a host function, whose argument is
 * the task's `arg`). Two words make every task fit the ring with no allocation. */
typedef union cpu_word {
    uint64_t u64;
    void (*fn)(void *);
} cpu_word;

/* A unit of work: run(arg, word) on the stream's worker, in FIFO order. The queue
 * knows nothing else of it; what it holds (references) run gives back. */
typedef struct cpu_task {
    void (*run)(void *arg, cpu_word word);
    void *arg;
    cpu_word word;
} cpu_task;

struct cpu_queue {
    cpu_stream own; /* the owner's handle; its address is the stream's native handle */
    cpu_device *device;

    /* On a cache line of their own: a spinning worker and spinning waiters poll
     * them, and a graph's launch, which takes a reference of the queue per record,
     * moved the line under them at each one. */
    _Alignas(64) _Atomic uint64_t submitted; /* written under `lock`, read anywhere */
    _Atomic uint64_t completed;              /* written by the worker under `lock`, read anywhere */
    _Alignas(64) atomic_uint refs;

    pthread_mutex_t lock;
    pthread_cond_t work_ready; /* the worker sleeps here when the FIFO is empty */
    pthread_cond_t progress;   /* waiters for `completed` sleep here */

    /* Under `lock`. A ring of `capacity` (a power of two, or 0) tasks, `count`
     * of them pending from index `first`; it grows when full and never shrinks, so
     * a warmed-up stream allocates nothing per task. */
    cpu_task *ring;
    size_t capacity;
    size_t first;
    size_t count;
    /* Of them, pushed in the open batch and not yet in `submitted`, which
     * end_batch moves on once: a worker spinning on `submitted` (cpu_queue.c)
     * that saw a graph's first task would block on `lock` for the rest of the
     * launch, and the launch would pay its futex wake-up at the unlock. */
    size_t unpublished;
    unsigned handles;
    unsigned sleepers; /* threads in pthread_cond_wait on `progress` */
    /* The lowest seq a sleeper on `progress` waits for (UINT64_MAX: none): the
     * worker wakes them only once it completes that task, not on every task before
     * it, where each woken waiter would take `lock` from the worker only to sleep
     * again (200 host functions ran 5-9 % slower while a thread waited). */
    uint64_t wake_seq;
    bool worker_started;
    bool worker_idle;          /* in pthread_cond_wait on `work_ready` */
    struct cpu_watch *watches; /* tp_cpu_queue_watch's, by seq, the earliest first */
    pthread_t worker;

    /* Rule 16: the graph this stream's work is captured into (its own capture or
     * one it joined), NULL when not capturing. Written under cpu_graph.c's
     * capture lock; read anywhere (a relaxed load on the hot paths). */
    _Atomic(cpu_graph *) capture;

    /* Under the device's lock: the device's list of queues that may have work. */
    cpu_queue *prev;
    cpu_queue *next;

    /* fork() (cpu_device.c): the process that made the queue and the fork
     * generation it was made in. A queue of an earlier generation was inherited
     * from the parent; its worker does not exist here. */
    int32_t creator_pid;
    unsigned generation;
};

struct cpu_event {
    tp_event head;
    atomic_uint refs;
    atomic_bool locked; /* a spinlock: held for a few stores, never across a call */
    /* NULL for a plain event; set at creation by the layer that made the event
     * otherwise (interprocess events, cpu_ipc_event.c), which then does the
     * entries its own way. */
    const cpu_event_ops *ops;

    /* Under `locked`. The latest record (rule 3): `source` and `seq` while it may
     * still be pending (source holds a reference; NULL once known reached, which
     * spares later calls the look), `time_ns` once reached, for timing events. */
    bool recorded;
    uint64_t version; /* bumped by every record; a record task stamps only its own */
    cpu_queue *source;
    uint64_t seq;
    uint64_t time_ns;
    uint64_t tag; /* what the layer above calls that record (an interprocess ticket); 0 if none */
    /* Rule 16: the latest record was made inside a capture (recorded is then
     * false: outside the graph it is no record). A reference on the token; the
     * branch (queue) it was made on and its position there, for joins. Written
     * under `locked`; `capture` may be loaded without it, as a hint. */
    _Atomic(cpu_capture *) capture;
    cpu_queue *capture_queue;
    uint64_t capture_pos;

    /* Under cpu_event.c's list lock: the list of every live event, for fork().
     * Last: a struct reused from cpu_event.c's cache is zeroed up to them. */
    cpu_event *prev_live, *next_live;
};

struct cpu_device {
    int index;
    pthread_mutex_t lock;
    cpu_queue *queues; /* every queue with a handle or a running worker */
    size_t queue_count;
    _Atomic(cpu_queue *) default_queue; /* created on first use */
    /* tp_measure's cold calls read it (cpu_flush.c); made at the first, then kept. */
    _Atomic(struct cpu_flush_buffer *) flush_buffer;
};

/* ------------------------------------------------------------- cpu_device.c */

/* Called by init (cpu_backend.c) before anything else: the core's services, the
 * backend's table and TPEVENT_CPU_DEVICES devices. */
tp_status tp_cpu_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size);

/* The core's services, as handed to init. */
const tp_host *tp_cpu_host(void);

/* The backend's table, which every head points at: the table cpu_backend.c
 * handed to tp_cpu_module_init. A variable, so that creating a handle costs a
 * load and no call. */
extern const tp_backend *tp_cpu_table_pointer;

static inline const tp_backend *tp_cpu_table(void)
{
    return tp_cpu_table_pointer;
}

/* The device of an index the core has checked; how many there are. */
cpu_device *tp_cpu_device(int index);
int tp_cpu_device_count(void);

/* ------------------------------------------------------------- cpu_queue.c */

/* A new queue with one handle (the owner's) and one reference, linked into its
 * device's list. */
tp_status tp_cpu_queue_create(cpu_device *device, int priority, unsigned kind, const char *operation, cpu_queue **out);

void tp_cpu_queue_ref(cpu_queue *queue);
void tp_cpu_queue_unref(cpu_queue *queue);
/* n references at once (a graph's launch, for its records: cpu_graph.c). */
void tp_cpu_queue_ref_n(cpu_queue *queue, unsigned n);
void tp_cpu_queue_unref_n(cpu_queue *queue, unsigned n);

/* Drops a handle; the last one lets the worker exit once the FIFO is drained.
 * Never blocks. Does not drop the handle's reference. */
void tp_cpu_queue_close_handle(cpu_queue *queue);

/*
 * Pushing a task is two steps so that a record can learn its task's sequence
 * number, under the queue's lock, before the task is visible:
 *   begin: locks, makes room, starts the worker; on failure unlocks and fails;
 *   tp_cpu_queue_next_seq: the number the pushed task will get;
 *   end: pushes, publishes `submitted`, wakes the worker, unlocks;
 *   or cancel: unlocks, pushing nothing.
 * tp_cpu_queue_submit does begin and end at once.
 */
tp_status tp_cpu_queue_begin_submit(cpu_queue *queue, const char *operation);
uint64_t tp_cpu_queue_next_seq(cpu_queue *queue);
void tp_cpu_queue_end_submit(cpu_queue *queue, const cpu_task *task);
void tp_cpu_queue_cancel_submit(cpu_queue *queue);
tp_status tp_cpu_queue_submit(cpu_queue *queue, const cpu_task *task, const char *operation);

/* A batch (a graph's launch): begin_submit_n makes room for n tasks and locks;
 * push pushes one (tp_cpu_queue_next_seq gives its number first), still locked,
 * and unpublished: `submitted` counts it from end_batch, which publishes the
 * batch at once, wakes the worker and unlocks. */
tp_status tp_cpu_queue_begin_submit_n(cpu_queue *queue, size_t n, const char *operation);
void tp_cpu_queue_push(cpu_queue *queue, const cpu_task *task);
void tp_cpu_queue_end_batch(cpu_queue *queue);

enum cpu_wait_mode {
    CPU_WAIT_SLEEP,           /* sleep at once */
    CPU_WAIT_SPIN_THEN_SLEEP, /* spin up to TP_SPIN_NS, then sleep */
};

/* Blocks until queue->completed >= seq. Fails (TP_ERR_INVALID_ARGUMENT) instead of
 * waiting forever when called from the queue's own worker for work not yet done. */
tp_status tp_cpu_queue_wait(cpu_queue *queue, uint64_t seq, enum cpu_wait_mode mode, const char *operation);

/* The queue whose worker the calling thread is; NULL on any other thread. Lets a
 * wait that cannot look at a queue (an interprocess event's) see that it would
 * wait for its own thread. */
extern _Thread_local cpu_queue *tp_cpu_current_worker;

/* Runs fn(arg) once the queue has completed `seq` tasks: at once on this thread
 * if it has, else on the worker right after the task that gets it there. */
tp_status tp_cpu_queue_watch(cpu_queue *queue, uint64_t seq, void (*fn)(void *), void *arg, const char *operation);

static inline bool tp_cpu_queue_reached(cpu_queue *queue, uint64_t seq)
{
    return atomic_load_explicit(&queue->completed, memory_order_acquire) >= seq;
}

/* Bumped by the child's pthread_atfork handler (cpu_device.c): the child's
 * generation differs from every queue its parent made. */
extern _Atomic unsigned tp_cpu_fork_generation;

/* Whether the queue was inherited through fork(): a relaxed load and a compare,
 * on the paths that would need its worker (submit, wait), never on an idle
 * record or a query. */
static inline bool tp_cpu_queue_inherited(const cpu_queue *queue)
{
    return TP_UNLIKELY(queue->generation != atomic_load_explicit(&tp_cpu_fork_generation, memory_order_relaxed));
}

/* TP_ERR_BACKEND: the stream was created in the parent before fork(). */
tp_status tp_cpu_queue_inherited_fail(const cpu_queue *queue, const char *operation);

/* ------------------------------------------------------------- cpu_event.c */

/* What an event made by a layer above does instead of the plain entries. The
 * entries check `ops` first and call these; `mode` is from TP_EVENT_BLOCKING. */
struct cpu_event_ops {
    tp_status (*record)(cpu_event *event, cpu_queue *queue);
    tp_status (*query)(cpu_event *event, bool *done);
    tp_status (*synchronize)(cpu_event *event, enum cpu_wait_mode mode);
    tp_status (*wait)(cpu_queue *queue, cpu_event *event);     /* stream_wait_event */
    tp_status (*snapshot)(cpu_event *event, tp_snapshot *out); /* snapshot_take, head fields set */
    void (*release)(cpu_event *event);                         /* the last reference is gone: free it all */
};

/* An event's head, ops and one reference; the rest must be zero (calloc). */
void tp_cpu_event_init(cpu_event *event, int device, unsigned flags, const cpu_event_ops *ops);

void tp_cpu_event_ref(cpu_event *event);
void tp_cpu_event_unref(cpu_event *event);

/* The latest record if it may still be pending, with a reference of the caller's
 * own on `source` (a record replacing it meanwhile must not free the queue);
 * source NULL if never recorded or reached. */
typedef struct cpu_snapshot {
    cpu_queue *source;
    uint64_t seq;
    uint64_t tag;
    bool recorded;    /* false: never recorded */
    uint64_t time_ns; /* of a reached timing record, once known */
    bool capturing;   /* the latest record is inside a capture still open (rule 16) */
} cpu_snapshot;

/* Rule 16, for cpu_graph.c. capture_record: the event's latest record is now one
 * made inside the capture of `token` (a reference taken here), on `branch` at
 * position `pos`. capture_of: the open capture holding the latest record, with a
 * reference for the caller, or NULL. record_task: under the queue's lock (a
 * batch), makes (queue, seq) the latest record and gives the task that reaches
 * it. wait_task: the task that makes a queue wait for (source, seq), taking over
 * a reference on source. */
void tp_cpu_event_capture_record(cpu_event *event, cpu_capture *token, cpu_queue *branch, uint64_t pos);
cpu_capture *tp_cpu_event_capture_of(cpu_event *event, cpu_queue **branch, uint64_t *pos);
cpu_task tp_cpu_event_record_task(cpu_event *event, cpu_queue *queue, uint64_t seq);
cpu_task tp_cpu_event_wait_task(cpu_queue *source, uint64_t seq);
TP_COLD tp_status tp_cpu_event_capturing_fail(const cpu_event *event, const char *operation);

tp_status tp_cpu_event_timestamp(tp_event *event, int64_t *ns);
tp_status tp_cpu_device_clock(int device, tp_clock_info *info);
cpu_snapshot tp_cpu_event_snapshot(cpu_event *event);

/* Block the calling thread until the snapshot is reached; make `queue`'s later
 * work wait for it. Both take over the snapshot's reference. */
tp_status tp_cpu_record_synchronize(cpu_snapshot pending, enum cpu_wait_mode mode);
tp_status tp_cpu_record_wait(cpu_queue *queue, cpu_snapshot pending);

/* Makes (source, seq) the latest record, named `tag`; returns its version.
 * `source` NULL: reached already, at `now`. The caller gives the snapshot a
 * reference on source. May be called under source's lock (begin_submit). */
uint64_t tp_cpu_event_replace_record(cpu_event *event, cpu_queue *source, uint64_t seq, uint64_t now, uint64_t tag);
/* The same for a record of `source` reached at its task `seq`, with no time and
 * no tag, but the reference the replaced record held (on its source, or NULL) goes
 * to the caller, which may drop many at once: a graph's launch records the same
 * events on the same queue again and again. */
cpu_queue *tp_cpu_event_swap_record(cpu_event *event, cpu_queue *source, uint64_t seq);

/* The backend's entries (table in cpu_backend.c); tp_cpu_event_create makes
 * plain events only. */
tp_status tp_cpu_event_create(int device, unsigned flags, tp_event **out);
tp_status tp_cpu_event_destroy(tp_event *event);
tp_status tp_cpu_event_record(tp_event *event, tp_stream *stream);
tp_status tp_cpu_event_query(tp_event *event, bool *done);
tp_status tp_cpu_event_synchronize(tp_event *event);
bool tp_cpu_event_waits_for_itself(tp_event *event);
tp_status tp_cpu_event_elapsed(tp_event *start, tp_event *end, float *ms);
tp_status tp_cpu_stream_wait_event(tp_stream *stream, tp_event *event);

/* --------------------------------------------------------------- cpu_ipc.c */

/*
 * The record state of an interprocess event, in memory shared between
 * processes; a record there is known by its ticket (never 0). Tickets are exact:
 * a ticket is reached when its own record is, whatever was recorded after it
 * (rule 6). Streams appear here only as who records (their address) and who
 * would wait for itself (tp_cpu_current_worker).
 */

/* The size of the shared region; handles carry it, to tell another build's. */
#define CPU_IPC_REGION_SIZE 4096u

/* How another process finds the region: what a handle's payload says. */
typedef struct cpu_ipc_name {
    tp_process_id holder; /* a process holding the region */
    int32_t fd;           /* its descriptor of it */
    uint64_t token;       /* what the region must hold */
} cpu_ipc_name;

/* A new region, held by this process alone, for an event made with `flags`. */
tp_status tp_cpu_ipc_create(unsigned flags, const char *operation, cpu_ipc **out);
/* Opens the region a handle names; the payload itself is checked already. */
tp_status tp_cpu_ipc_open(const cpu_ipc_name *name, const char *operation, cpu_ipc **out);
/* The region behind a descriptor received over a Unix socket (tp_event_ipc_recv),
 * which must hold `token`; takes the descriptor, closing it on failure. */
tp_status tp_cpu_ipc_adopt(int fd, uint64_t token, const char *operation, cpu_ipc **out);
void tp_cpu_ipc_ref(cpu_ipc *ipc);
void tp_cpu_ipc_unref(cpu_ipc *ipc);

/* How this process names the region to others: by pid and descriptor (a handle),
 * or the descriptor itself, sent over a Unix socket (the ipc keeps it open). */
cpu_ipc_name tp_cpu_ipc_name_of(const cpu_ipc *ipc);
int tp_cpu_ipc_descriptor(const cpu_ipc *ipc);
/* The creator's TP_EVENT_BLOCKING, which importers take on. */
unsigned tp_cpu_ipc_flags(const cpu_ipc *ipc);

/* The ticket of the latest record, by any process; 0 if never recorded. */
uint64_t tp_cpu_ipc_latest(cpu_ipc *ipc);
bool tp_cpu_ipc_reached(cpu_ipc *ipc, uint64_t ticket);

/* A record on an idle stream of this process, reached at once. *recorded false: a
 * record on the stream is still pending after all; record it as on a busy one. */
tp_status tp_cpu_ipc_record_reached(cpu_ipc *ipc, cpu_queue *queue, bool *recorded, uint64_t *ticket);

/* A record on a busy stream, under the queue's lock (so that a stream's tickets
 * follow its FIFO); its task, tp_cpu_ipc_publish_task(ipc, ticket) holding a
 * reference on ipc, tells the other processes when the worker gets there. */
tp_status tp_cpu_ipc_record_pending(cpu_ipc *ipc, cpu_queue *queue, uint64_t *ticket);
void tp_cpu_ipc_publish_task(void *ipc, cpu_word ticket);

/* The record was made by this process on this stream. */
bool tp_cpu_ipc_recorded_on(cpu_ipc *ipc, uint64_t ticket, const cpu_queue *queue);

/* Blocks until the ticket is reached. TP_ERR_BACKEND if the process that made the
 * record exits first (noticed within a few tens of ms). */
tp_status tp_cpu_ipc_wait(cpu_ipc *ipc, uint64_t ticket, enum cpu_wait_mode mode, const char *operation);

/* Never blocks; TP_ERR_BACKEND if the process that made the pending record exited. */
tp_status tp_cpu_ipc_query(cpu_ipc *ipc, uint64_t ticket, bool *done);

/* A stream's wait for a record of an interprocess event, as a task holding a
 * reference on ipc: waits, then drops the reference. */
void tp_cpu_ipc_wait_task(void *ipc, cpu_word ticket);

/* --------------------------------------------------------- cpu_ipc_event.c */

/* The backend's entries for interprocess events (table in cpu_backend.c):
 * creation of an event with TP_EVENT_INTERPROCESS, export and import. */
tp_status tp_cpu_ipc_event_create(int device, unsigned flags, tp_event **out);
tp_status tp_cpu_event_ipc_export(tp_event *event, unsigned char *payload, size_t *length);
tp_status tp_cpu_event_ipc_import(int device, const unsigned char *payload, size_t length, tp_event **out);
/* The same event handed over a Unix socket (core/ipc_socket.c): its region's
 * descriptor and a payload, and the event made from them in the receiver. */
tp_status tp_cpu_event_ipc_send_prepare(tp_event *event, int *fd, unsigned char *payload, size_t *length);
tp_status tp_cpu_event_ipc_receive(int device, int fd, const unsigned char *payload, size_t length, tp_event **out);

/* ---------------------------------------------------------- cpu_snapshot.c */

/* The backend's snapshot entries (core/backend.h). A pending snapshot holds a
 * reference on a queue (word[1] CPU_SNAPSHOT_QUEUE: word[0] the record's seq) or on
 * an interprocess event's shared state (CPU_SNAPSHOT_IPC: word[0] the ticket). */
enum { CPU_SNAPSHOT_QUEUE = 0, CPU_SNAPSHOT_IPC = 1 };

/* A snapshot of the event's own record state (plain events, and an interprocess
 * event's record made by this handle). Head fields of `out` set by the caller. */
void tp_cpu_snapshot_of_record(cpu_snapshot record, tp_snapshot *out);

tp_status tp_cpu_snapshot_take(tp_event *event, tp_snapshot *out);
void tp_cpu_snapshot_release(tp_snapshot *snapshot);
tp_status tp_cpu_snapshot_query(const tp_snapshot *snapshot, bool *reached);
tp_status tp_cpu_snapshot_synchronize(const tp_snapshot *snapshot);
tp_status tp_cpu_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg);

/* -------------------------------------------------------------- cpu_hold.c */

/* stream_hold (core/backend.h): a task that blocks the stream's worker until
 * released; and what tpevent devices says of the CPU's cross-backend waits. */
tp_status tp_cpu_stream_hold(tp_stream *stream, void (**release)(void *), void **arg);
tp_status tp_cpu_wait_mechanism(int device, char *buf, size_t size);

/* ------------------------------------------------------------- cpu_flush.c */

/* stream_flush_cache (core/backend.h): a task that reads a buffer twice the largest
 * cache's size. */
tp_status tp_cpu_stream_flush_cache(tp_stream *stream);

/* ------------------------------------------------------------ cpu_stream.c */

tp_status tp_cpu_stream_create(int device, int priority, tp_stream **out);
tp_status tp_cpu_stream_from_native(int device, void *native, tp_stream **out);
tp_status tp_cpu_stream_default(int device, tp_stream **out);
tp_status tp_cpu_stream_destroy(tp_stream *stream);
tp_status tp_cpu_stream_query(tp_stream *stream, bool *idle);
tp_status tp_cpu_stream_synchronize(tp_stream *stream);
bool tp_cpu_stream_waits_for_itself(tp_stream *stream);
tp_status tp_cpu_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg);
void *tp_cpu_stream_native(tp_stream *stream);
tp_status tp_cpu_device_synchronize(int device);

/* ------------------------------------------------------------- cpu_graph.c */

/* Rule 16: the capture entries, and the entries that a capture changes (record,
 * wait, host function), wrapping those of cpu_event.c and cpu_stream.c: one
 * relaxed load of the stream's `capture` when not capturing. */
tp_status tp_cpu_capture_event_record(tp_event *event, tp_stream *stream);
tp_status tp_cpu_capture_wait_event(tp_stream *stream, tp_event *event);
tp_status tp_cpu_capture_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg);
tp_status tp_cpu_capture_host_fn(tp_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *));
tp_status tp_cpu_stream_begin_capture(tp_stream *stream);
tp_status tp_cpu_stream_end_capture(tp_stream *stream, tp_graph **out);
tp_status tp_cpu_stream_is_capturing(tp_stream *stream, bool *capturing);
tp_status tp_cpu_graph_launch(tp_graph *graph, tp_stream *stream);
tp_status tp_cpu_graph_destroy(tp_graph *graph);

#endif /* TPEVENT_BACKENDS_CPU_INTERNAL_H */
