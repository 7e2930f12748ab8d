/*
 * The Vulkan backend's objects and the functions its files share. What it promises
 * is in vk_backend.h. Layers, each calling only those above it in this list:
 *
 *   vk_device.c    module state: the core's tp_host, the instance, the usable
 *                  physical devices, a VkDevice and its queue per device, the
 *                  timelines' pool, submission, the error names
 *   vk_clock.c     a device's timestamps on CLOCK_MONOTONIC (calibrated
 *                  timestamps, rule 13)
 *   vk_sample.c    raw Vulkan's calls timed, for `tpevent bench` (native_sample;
 *                  the calls are vk_raw.h's, bench/vulkan's baseline too)
 *   vk_notify.c    fn(arg) once a timeline reaches a value, from one thread
 *   vk_record.c    records: a value of a stream's timeline, and for timing a
 *                  query with its command buffer, pooled
 *   vk_worker.c    a stream's submissions, and its worker thread for what must
 *                  wait on the host (host functions, holds, waits)
 *   vk_stream.c    the stream entries, device_synchronize
 *   vk_flush.c     tp_measure's device work (rule 18): the cache flush, the
 *                  floor's empty work
 *   vk_interop.c   a user's command buffers in a stream's order, and the
 *                  Vulkan objects behind a stream (include/tpevent/vulkan.h)
 *   vk_event.c     the event entries
 *   vk_snapshot.c  snapshots of records
 *   vk_export.c    records as exported timeline semaphores, for another
 *                  runtime's stream to wait on them on the device
 *   vk_backend.c   the table and the entry
 */
#ifndef TPEVENT_BACKENDS_VULKAN_VK_INTERNAL_H
#define TPEVENT_BACKENDS_VULKAN_VK_INTERNAL_H

#include <vulkan/vulkan.h>

#include "core/builtin_backends.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct vk_device vk_device;
typedef struct vk_stream vk_stream;

/*
 * What a submission's signal orders, told to ThreadSanitizer. A thread that sees a
 * timeline reach a value (its counter, vkWaitSemaphores) sees everything the thread
 * that submitted the value did before: the driver's threads carry that order, but a
 * driver not built with TSan (lavapipe) carries it through futexes TSan does not see,
 * and a host function's writes then read as racing with the thread that waited for
 * the record after it. The submitter releases on the timeline before vkQueueSubmit,
 * a reader acquires after it read the counter. Nothing without TSan.
 */
#if defined(__SANITIZE_THREAD__)
#define TP_VK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TP_VK_TSAN 1
#endif
#endif
#ifdef TP_VK_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define tp_vk_tsan_release(timeline) __tsan_release((void *)(timeline))
#define tp_vk_tsan_acquire(timeline) __tsan_acquire((void *)(timeline))
#else
#define tp_vk_tsan_release(timeline) ((void)(timeline))
#define tp_vk_tsan_acquire(timeline) ((void)(timeline))
#endif

/*
 * A timeline semaphore and the values given out on it. A stream signals a new
 * value with each submission; a record is (timeline, value), reached once the
 * semaphore's counter is at the value. Timelines are never destroyed while the
 * module lives: a destroyed stream's goes back to its device's pool once its work
 * is done, and the next stream counts on from there. So a record needs no
 * reference on its timeline, and a reached record stays reached.
 */
/* Command buffers a stream's worker records its joined batches into (vk_worker.c),
 * each free again once the timeline reached the value of its last batch. */
#define VK_JOINED_MOST 8

typedef struct vk_timeline {
    struct vk_timeline *next_free; /* first: the pool's link */
    VkSemaphore semaphore;
    vk_device *device;
    uint64_t issued;            /* the last value a submission signals; the owner's lock */
    _Atomic uint64_t submitted; /* the last value handed to the queue */
    /* A counter value a record's reuse read before (at or below the counter): what it
     * checks first, so that the record path asks the driver only when it is behind
     * (vk_record.c). */
    _Atomic uint64_t known_reached;
    /* The owner's worker's (made at its first joined batch; a timeline has one owner
     * at a time, and goes with its commands to the next one). */
    VkCommandPool commands;
    VkCommandBuffer joined[VK_JOINED_MOST];
    uint64_t joined_value[VK_JOINED_MOST];
    int joined_count;
    /* Its opaque fd once exported (vk_export.c), kept for the module's life as the
     * timeline is: 0 before, -1 where the export was refused, else fd + 1. Under the
     * device's lock. */
    int exported_fd_plus_1;
} vk_timeline;

/* The measure's device work of one device (vk_flush.c): made at first use. */
typedef struct vk_flush_work {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize bytes;
    VkCommandBuffer fill; /* a vkCmdFillBuffer over it, simultaneous use */
} vk_flush_work;

struct vk_device {
    int index;
    VkPhysicalDevice physical;
    VkDevice device;
    uint32_t family; /* a queue family with compute */
    VkQueue queue;
    PFN_vkGetSemaphoreCounterValue get_counter; /* the driver's own (vkGetDeviceProcAddr) */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 64];
    double tick_ns; /* timestampPeriod */
    /* Where a record's timestamp is written: the bottom of the pipe, after all earlier
     * work; on lavapipe the top (vk_device.c says why). */
    VkPipelineStageFlagBits stamp_stage;
    uint32_t valid_bits; /* of the family's timestamps */
    bool calibrated;     /* VK_EXT_calibrated_timestamps with CLOCK_MONOTONIC */
    PFN_vkGetCalibratedTimestampsEXT get_calibrated;
    VkDeviceSize cache_bytes; /* what a flush writes */
    uint32_t api_version;
    const char *extensions[3]; /* the device extensions enabled */
    uint32_t extension_count;
    bool shader_clock[2]; /* shaderSubgroupClock, shaderDeviceClock enabled */
    /* Its timelines exported as opaque fds for other runtimes' waits (vk_export.c):
     * vkGetSemaphoreFdKHR where the driver said it can (NULL: cannot, export_note
     * says why; else what it does), and the device's UUID that importers match. */
    PFN_vkGetSemaphoreFdKHR export_fd;
    char export_note[200];
    unsigned char uuid[VK_UUID_SIZE];

    pthread_mutex_t queue_lock; /* vkQueueSubmit: the queue is externally synchronized */
    pthread_mutex_t lock;       /* the members below */
    VkCommandPool commands;     /* of the records' timestamps and the flush */
    vk_timeline *free_timelines;
    struct vk_record *free_records[2]; /* [timing]: records given back (vk_record.c) */
    uint32_t record_block;             /* timing records the next block makes (vk_record.c) */
    /* Timing records given back before they were reached, oldest first: taken again
     * once reached (the device may still write their query). */
    struct vk_record *retired_first, *retired_last;
    vk_stream *default_stream;
    vk_stream *streams; /* every stream not yet freed, for device_synchronize */
    vk_flush_work flush;
    VkCommandBuffer barrier; /* a user's submission's fence in the stream's order (vk_interop.c) */

    pthread_mutex_t clock_lock; /* the calibration below (vk_clock.c) */
    int64_t anchor_host_ns;
    uint64_t anchor_ticks;
    uint64_t anchor_made_ns;
    int64_t deviation_ns; /* the widest maxDeviation seen */
};

/* ------------------------------------------------------------- vk_device.c */

tp_status tp_vk_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size);
const tp_host *tp_vk_host(void);
const tp_backend *tp_vk_table(void);
VkInstance tp_vk_instance(void);
int tp_vk_device_count(void);
vk_device *tp_vk_device(int index);
const char *tp_vk_error_name(VkResult result);
/* host->fail(TP_ERR_BACKEND, "<call>: <runtime call>: <error name>"). */
tp_status tp_vk_fail(const char *call, const char *runtime_call, VkResult result);
/* A timeline of the device's pool (one whose last work is done), or a new one. */
tp_status tp_vk_timeline_take(vk_device *device, const char *call, vk_timeline **out);
/* Back to the pool; taken again only once its counter reached `issued`. */
void tp_vk_timeline_give(vk_timeline *timeline);
/* A value of a timeline to wait for (a timeline is never freed). */
typedef struct timeline_goal {
    const vk_timeline *timeline;
    uint64_t value;
} timeline_goal;

/* The counter: every value at or below it was reached. */
uint64_t tp_vk_timeline_counter(const vk_timeline *timeline);
/* Blocks until the counter reaches `value`: a spin, then asleep in vkWaitSemaphores
 * when `sleep`, else between yields. */
tp_status tp_vk_timeline_wait(const vk_timeline *timeline, uint64_t value, bool sleep, const char *call);

/* One batch for the queue: optional commands (`command_count` of `commands`, or
 * the one `command`), an optional wait for a value of a timeline of the same
 * device, and the signal of `signal_value` on `signal`. */
typedef struct vk_batch {
    VkCommandBuffer command; /* recorded once: a record's stamp, the flush's fill */
    VkQueryPool stamp;       /* what `command` does, for a joined batch: write this query */
    uint32_t stamp_slot;     /* of `stamp` */
    bool fill;               /* or fill the device's flush buffer */
    const VkCommandBuffer *commands;
    uint32_t command_count;
    const vk_timeline *wait;
    uint64_t wait_value;
    vk_timeline *signal;
    uint64_t signal_value;
} vk_batch;

/* vkQueueSubmit of the batch under the device's queue lock; sets its signal's
 * `submitted`. */
tp_status tp_vk_submit(vk_device *device, const vk_batch *batch, const char *call);

/* ------------------------------------------------------------- vk_clock.c */

/* The CLOCK_MONOTONIC ns of the device's timestamp `ticks`. */
tp_status tp_vk_clock_convert(vk_device *device, uint64_t ticks, int64_t *host_ns);
tp_status tp_vk_device_clock(int device, tp_clock_info *info);

/* ------------------------------------------------------------ vk_sample.c */

tp_status tp_vk_native_sample(int device, tp_native_op op, uint64_t *samples_ns, size_t count);

/* ------------------------------------------------------------ vk_notify.c */

/* fn(arg) once, once the timeline reaches `value`: at once on the calling thread if
 * it has, else on the module's notifier thread, which waits on every pending
 * notice's semaphore (at most 1 ms late). fn must be short and must not block. */
tp_status tp_vk_notify(const vk_timeline *timeline, uint64_t value, void (*fn)(void *), void *arg, const char *call);

/* ------------------------------------------------------------ vk_record.c */

/* One record: a value of a stream's timeline; with timing, a query that the
 * record's batch writes the device's time into. Shared by the event whose latest
 * it is and by snapshots and notices (refs); pooled with its query. */
typedef struct vk_record {
    struct vk_record *next_free; /* first: tp_free_item's layout */
    atomic_int refs;
    vk_device *device;
    const vk_timeline *timeline;
    uint64_t value;
    VkQueryPool query;       /* its timestamp's pool, shared with its block; VK_NULL_HANDLE: no timing */
    uint32_t slot;           /* its timestamp in `query` */
    VkCommandBuffer stamp;   /* resets the slot and writes the timestamp there */
    _Atomic int64_t host_ns; /* the converted time once given (INT64_MIN: not yet) */
    _Atomic uint64_t ticks;  /* the query's result once read (0: not yet) */
} vk_record;

/* A record of one reference, with a query when `timing`, of no value yet. */
tp_status tp_vk_record_take(vk_device *device, bool timing, const char *call, vk_record **out);
void tp_vk_record_ref(vk_record *record);
/* The last reference gives it back to its pool, once reached where it has a query
 * (the device may still write it). */
void tp_vk_record_unref(vk_record *record);
bool tp_vk_record_reached(const vk_record *record);
/* Reached as far as the timeline's counter was last read: no driver call. */
bool tp_vk_record_known_reached(const vk_record *record);
/* The device's timestamp of a reached timing record; TP_ERR_NOT_READY with no
 * message while it is not reached. */
tp_status tp_vk_record_ticks(vk_record *record, const char *call, uint64_t *ticks);
/* A reached timing record's CLOCK_MONOTONIC time, the same every time it is asked. */
tp_status tp_vk_record_time(vk_record *record, const char *call, int64_t *host_ns);

/* ------------------------------------------------------------ vk_worker.c */

typedef struct vk_task vk_task;

struct vk_stream {
    tp_stream head;
    vk_device *device;
    vk_timeline *timeline;
    atomic_int refs;       /* the handle's, the worker's while it runs, each hold's */
    pthread_mutex_t lock;  /* submissions, the tasks, `timeline->issued` */
    pthread_cond_t wake;   /* the worker: a task, a hold let go, the close */
    pthread_cond_t done;   /* waiters: `pending` went to 0 */
    vk_task *first, *last; /* what waits for the worker, in order */
    uint64_t pending;      /* tasks queued or running: submissions go to the worker too */
    bool worker_started;
    bool closed;            /* destroyed: the worker ends once its tasks are done */
    vk_stream *next, *prev; /* the device's list */
};

/* The stream's `value` after all its work so far: the last issued value, or a new
 * one signalled by `work`'s commands (its `command`, `stamp` and `fill`; the rest is
 * the stream's) or by an empty batch when `fresh`. On the queue at once when nothing
 * waits on the worker, else after. */
tp_status tp_vk_stream_mark(vk_stream *stream, vk_batch work, bool fresh, const char *call, uint64_t *value);
/* A batch of the caller's `count` command buffers signalling the stream's next value:
 * at once, or after the worker's tasks (the array copied). */
tp_status tp_vk_stream_submit_commands(vk_stream *stream, const VkCommandBuffer *commands, uint32_t count,
                                       const char *call);
/* Later work of the stream waits for the timeline's `value`: natively where the value
 * is on the same device's queue already, else in the worker. */
tp_status tp_vk_stream_wait_value(vk_stream *stream, const vk_timeline *timeline, uint64_t value, const char *call);
/* fn(arg) on the stream's worker after the stream's earlier work; later work waits. */
tp_status tp_vk_stream_host_fn(vk_stream *stream, void (*fn)(void *), void *arg);
/* Later work waits until *release(*arg) (rule 17's hold, the worker's gate). */
tp_status tp_vk_stream_gate(vk_stream *stream, void (**release)(void *), void **arg);
/* Blocks until the stream's tasks are done and its last value reached. */
tp_status tp_vk_stream_drain(vk_stream *stream, const char *call);
/* Idle: no task and the last value reached. */
bool tp_vk_stream_idle(vk_stream *stream);
/* Marks the stream closed: its worker ends after its tasks. Then drops the handle's
 * reference. */
void tp_vk_stream_close(vk_stream *stream);
void tp_vk_stream_ref(vk_stream *stream);
/* The last reference frees the stream; its timeline goes back to the pool. */
void tp_vk_stream_unref(vk_stream *stream);
/* The stream whose host function the calling thread runs (NULL: none), and the
 * stream's value that function came after. */
vk_stream *tp_vk_running_stream(uint64_t *after);

/* ------------------------------------------------------------ vk_stream.c */

tp_status tp_vk_stream_create(int device, int priority, tp_stream **out);
tp_status tp_vk_stream_default(int device, tp_stream **out);
tp_status tp_vk_stream_destroy(tp_stream *stream);
tp_status tp_vk_stream_query(tp_stream *stream, bool *idle);
tp_status tp_vk_stream_synchronize(tp_stream *stream);
tp_status tp_vk_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg);
void *tp_vk_stream_native(tp_stream *stream);
tp_status tp_vk_stream_hold(tp_stream *stream, void (**release)(void *), void **arg);
tp_status tp_vk_device_synchronize(int device);
bool tp_vk_stream_waits_for_itself(tp_stream *stream);

/* ------------------------------------------------------------- vk_flush.c */

tp_status tp_vk_stream_flush_cache(tp_stream *stream);
tp_status tp_vk_stream_launch_empty(tp_stream *stream);

/* ------------------------------------------------------------ vk_interop.c */

tp_status tp_vk_stream_info(tp_stream *stream, tp_vulkan_info *info);
tp_status tp_vk_stream_submit(tp_stream *stream, void *const *cmds, uint32_t count);

/* ------------------------------------------------------------ vk_export.c */

tp_status tp_vk_timeline_export_support(int device, unsigned char uuid[16], char *how, size_t how_size);
tp_status tp_vk_snapshot_export_timeline(const tp_snapshot *snapshot, tp_timeline_export *out);

/* ------------------------------------------------------------- vk_event.c */

typedef struct vk_event {
    tp_event head;
    pthread_mutex_t lock; /* `latest`: a record replaces it while others read it */
    vk_record *latest;    /* NULL: never recorded */
    /* The latest record's timeline and value, for the reads that need nothing else
     * (query, synchronize, wait), read without the lock: a sequence lock, odd while a
     * record writes them (vk_event.c). */
    _Atomic uint32_t sequence;
    _Atomic(const vk_timeline *) timeline; /* NULL: never recorded */
    _Atomic uint64_t value;
} vk_event;

tp_status tp_vk_event_create(int device, unsigned flags, tp_event **out);
tp_status tp_vk_event_destroy(tp_event *event);
tp_status tp_vk_event_record(tp_event *event, tp_stream *stream);
tp_status tp_vk_event_query(tp_event *event, bool *done);
tp_status tp_vk_event_synchronize(tp_event *event);
tp_status tp_vk_event_elapsed(tp_event *start, tp_event *end, float *ms);
tp_status tp_vk_event_timestamp(tp_event *event, int64_t *ns);
tp_status tp_vk_event_native(tp_event *event, void **native);
tp_status tp_vk_stream_wait_event(tp_stream *stream, tp_event *event);
bool tp_vk_event_waits_for_itself(tp_event *event);
/* The event's latest record with a reference, or NULL: never recorded. */
vk_record *tp_vk_event_latest(vk_event *event);
/* Rule 15: the calling thread runs a host function that the record comes after. */
bool tp_vk_record_waits_for_caller(const vk_record *record);

/* ---------------------------------------------------------- vk_snapshot.c */

tp_status tp_vk_snapshot_take(tp_event *event, tp_snapshot *out);
void tp_vk_snapshot_release(tp_snapshot *snapshot);
tp_status tp_vk_snapshot_query(const tp_snapshot *snapshot, bool *reached);
tp_status tp_vk_snapshot_synchronize(const tp_snapshot *snapshot);
tp_status tp_vk_snapshot_time(const tp_snapshot *snapshot, int64_t *ns);
tp_status tp_vk_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg);

#endif /* TPEVENT_BACKENDS_VULKAN_VK_INTERNAL_H */
