/* What the stress test's files share: the pool of streams and events, the threads
 * working on it, and the operations they pick. */
#ifndef TPEVENT_TESTS_STRESS_H
#define TPEVENT_TESTS_STRESS_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tpevent/tpevent.h>

#define STRESS_DEVICES 2
#define STRESS_STREAMS 64
#define STRESS_EVENTS 256
#define STRESS_THREADS_DEFAULT 16
#define STRESS_THREADS_MAX 256
#define STRESS_SECONDS_DEFAULT 5.0
#define STRESS_WATCHDOG_DEFAULT 30.0

extern const char *const device_names[STRESS_DEVICES];

#define STRESS_OPS(X)                                            \
    X(EVENT_RECORD, "tp_event_record", 14)                       \
    X(EVENT_RECORD_CURRENT, "tp_event_record(NULL stream)", 4)   \
    X(EVENT_QUERY, "tp_event_query", 14)                         \
    X(EVENT_SYNCHRONIZE, "tp_event_synchronize", 6)              \
    X(EVENT_WAIT, "tp_event_wait", 8)                            \
    X(EVENT_ELAPSED, "tp_event_elapsed_time", 8)                 \
    X(EVENT_REPLACE, "tp_event_destroy+create", 5)               \
    X(HOST_FN, "tp_stream_launch_host_fn", 14)                   \
    X(STREAM_QUERY, "tp_stream_query", 6)                        \
    X(STREAM_SYNCHRONIZE, "tp_stream_synchronize", 4)            \
    X(STREAM_WAIT_STREAM, "tp_stream_wait_stream", 4)            \
    X(STREAM_RECORD_NEW_EVENT, "tp_stream_record_event(new)", 3) \
    X(STREAM_REPLACE, "tp_stream_destroy+create", 1)             \
    X(DEVICE_SYNCHRONIZE, "tp_device_synchronize", 1)

/* clang-format off */
typedef enum op_kind {
    OP_IDLE,
#define STRESS_OP_ENUM(name, text, weight) OP_##name,
    STRESS_OPS(STRESS_OP_ENUM)
#undef STRESS_OP_ENUM
    OP_KIND_COUNT
} op_kind;
/* clang-format on */

extern const char *const op_names[OP_KIND_COUNT];

typedef struct stream_slot {
    pthread_mutex_t lock;
    tp_stream *stream; /* NULL while a thread has it out to replace it */
    int device;
    unsigned users;
} stream_slot;

typedef struct event_slot {
    pthread_mutex_t lock;
    tp_event *event; /* NULL while a thread has it out to replace it */
    int device;
    unsigned flags;
    unsigned users;
} event_slot;

/*
 * What a thread is doing, for the watchdog's dump: written by its thread, read by
 * the watchdog, hence atomics. Slot indices are -1 when unused.
 */
typedef struct activity {
    atomic_int op;
    atomic_int stream_slots[2];
    atomic_int event_slots[2];
    atomic_int device; /* of tp_device_synchronize */
    _Atomic uintptr_t handles[2];
    _Atomic uint64_t since_ns;
    _Atomic uint64_t done; /* operations finished */
} activity;

typedef struct stress stress;

typedef struct worker {
    stress *stress;
    int index;
    uint64_t rng;
    activity activity;
    uint64_t op_counts[OP_KIND_COUNT];
    uint64_t status_counts[TP_STATUS_COUNT];
    pthread_t thread;
} worker;

struct stress {
    double seconds;
    double watchdog_seconds;
    uint64_t seed;
    int thread_count;

    stream_slot streams[STRESS_STREAMS];
    event_slot events[STRESS_EVENTS];

    atomic_bool stop;
    _Atomic uint64_t host_fns_launched;
    _Atomic uint64_t host_fns_ran;
    _Atomic uint64_t last_progress_ns;

    worker workers[STRESS_THREADS_MAX];
};

/* stress_pool.c */

_Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t now_ns(void);

void sleep_us(long us);

unsigned random_below(uint64_t *state, unsigned bound);

/* Fails unless the status is one of those listed (TP_OK must be listed if OK is). */
void expect_status(worker *w, tp_status got, int count, ...);

/* A use count on the slot's stream, or NULL if it is out being replaced. */
tp_stream *borrow_stream(stream_slot *slot, int *device);

void return_stream(stream_slot *slot);

/* The slot's stream, taken out for this thread alone, or NULL if someone uses it. */
tp_stream *take_stream(stream_slot *slot);

void put_stream(stream_slot *slot, tp_stream *stream, int device);

tp_event *borrow_event(event_slot *slot, int *device, unsigned *flags);

void return_event(event_slot *slot);

tp_event *take_event(event_slot *slot);

void put_event(event_slot *slot, tp_event *event, int device, unsigned flags);

void host_count(void *arg);

/* Keeps its stream busy for a moment, so that records are pending, elapsed times
 * not ready and waits really wait. */
void host_busy(void *arg);

void begin_op(worker *w, op_kind op);

void note_stream(worker *w, int which, int slot, tp_stream *stream);

void note_event(worker *w, int which, int slot, tp_event *event);

void end_op(worker *w, op_kind op, bool performed);

#define EXPECT_OK(w, call) expect_status((w), (call), 1, TP_OK)

/* stress_ops.c */

unsigned random_event_flags(uint64_t *rng);

tp_event *create_event(worker *w, int device, unsigned flags);

tp_stream *create_stream(worker *w, int device);

void *worker_main(void *arg);

#endif /* TPEVENT_TESTS_STRESS_H */
