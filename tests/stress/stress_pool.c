/* Stress: the shared pool of streams and events, used under a use count per slot; the
 * host functions launched; what each thread is doing, for the watchdog; and failing. */
#define _POSIX_C_SOURCE 200809L

#include "stress.h"

const char *const device_names[STRESS_DEVICES] = {"cpu:0", "cpu:1"};

const char *const op_names[OP_KIND_COUNT] = {"(between operations)",
#define STRESS_OP_NAME(name, text, weight) text,
                                             STRESS_OPS(STRESS_OP_NAME)
#undef STRESS_OP_NAME
};

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_us(long us)
{
    struct timespec left = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* splitmix64: small, good enough, one state word per thread. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

unsigned random_below(uint64_t *state, unsigned bound)
{
    return (unsigned)(next_random(state) % bound);
}

_Noreturn void fail(const char *fmt, ...)
{
    va_list args;
    fprintf(stderr, "stress: FAILED: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n");
    fflush(stderr);
    /* Not exit(): other threads are still inside the library. */
    _Exit(1);
}

/* Fails unless the status is one of those listed (TP_OK must be listed if OK is). */
void expect_status(worker *w, tp_status got, int count, ...)
{
    va_list allowed;
    va_start(allowed, count);
    for (int i = 0; i < count; i++) {
        if ((tp_status)va_arg(allowed, int) == got) {
            va_end(allowed);
            if ((unsigned)got < TP_STATUS_COUNT)
                w->status_counts[got]++;
            return;
        }
    }
    va_end(allowed);
    activity *a = &w->activity;
    fail("thread %d: %s (stream slots %d %d, event slots %d %d) returned %s: %s", w->index,
         op_names[atomic_load(&a->op)], atomic_load(&a->stream_slots[0]), atomic_load(&a->stream_slots[1]),
         atomic_load(&a->event_slots[0]), atomic_load(&a->event_slots[1]), tp_status_name(got), tp_last_error());
}

/* A use count on the slot's stream, or NULL if it is out being replaced. */
tp_stream *borrow_stream(stream_slot *slot, int *device)
{
    pthread_mutex_lock(&slot->lock);
    tp_stream *stream = slot->stream;
    if (stream) {
        slot->users++;
        *device = slot->device;
    }
    pthread_mutex_unlock(&slot->lock);
    return stream;
}

void return_stream(stream_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    slot->users--;
    pthread_mutex_unlock(&slot->lock);
}

/* The slot's stream, taken out for this thread alone, or NULL if someone uses it. */
tp_stream *take_stream(stream_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    tp_stream *stream = NULL;
    if (slot->users == 0) {
        stream = slot->stream;
        slot->stream = NULL;
    }
    pthread_mutex_unlock(&slot->lock);
    return stream;
}

void put_stream(stream_slot *slot, tp_stream *stream, int device)
{
    pthread_mutex_lock(&slot->lock);
    slot->stream = stream;
    slot->device = device;
    pthread_mutex_unlock(&slot->lock);
}

tp_event *borrow_event(event_slot *slot, int *device, unsigned *flags)
{
    pthread_mutex_lock(&slot->lock);
    tp_event *event = slot->event;
    if (event) {
        slot->users++;
        *device = slot->device;
        *flags = slot->flags;
    }
    pthread_mutex_unlock(&slot->lock);
    return event;
}

void return_event(event_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    slot->users--;
    pthread_mutex_unlock(&slot->lock);
}

tp_event *take_event(event_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    tp_event *event = NULL;
    if (slot->users == 0) {
        event = slot->event;
        slot->event = NULL;
    }
    pthread_mutex_unlock(&slot->lock);
    return event;
}

void put_event(event_slot *slot, tp_event *event, int device, unsigned flags)
{
    pthread_mutex_lock(&slot->lock);
    slot->event = event;
    slot->device = device;
    slot->flags = flags;
    pthread_mutex_unlock(&slot->lock);
}

/* ---------------------------------------------------------- host functions */

void host_count(void *arg)
{
    stress *s = arg;
    atomic_fetch_add_explicit(&s->host_fns_ran, 1, memory_order_relaxed);
}

/* Keeps its stream busy for a moment, so that records are pending, elapsed times
 * not ready and waits really wait. */
void host_busy(void *arg)
{
    sleep_us(50);
    host_count(arg);
}

/* -------------------------------------------------------------- activity */

void begin_op(worker *w, op_kind op)
{
    activity *a = &w->activity;
    for (int i = 0; i < 2; i++) {
        atomic_store(&a->stream_slots[i], -1);
        atomic_store(&a->event_slots[i], -1);
        atomic_store(&a->handles[i], 0);
    }
    atomic_store(&a->device, -1);
    atomic_store(&a->since_ns, now_ns());
    atomic_store(&a->op, (int)op);
}

void note_stream(worker *w, int which, int slot, tp_stream *stream)
{
    atomic_store(&w->activity.stream_slots[which], slot);
    atomic_store(&w->activity.handles[which], (uintptr_t)stream);
}

void note_event(worker *w, int which, int slot, tp_event *event)
{
    atomic_store(&w->activity.event_slots[which], slot);
    atomic_store(&w->activity.handles[which], (uintptr_t)event);
}

void end_op(worker *w, op_kind op, bool performed)
{
    atomic_store(&w->activity.op, OP_IDLE);
    atomic_store(&w->activity.since_ns, now_ns());
    if (!performed)
        return;
    w->op_counts[op]++;
    atomic_fetch_add_explicit(&w->activity.done, 1, memory_order_relaxed);
    atomic_store_explicit(&w->stress->last_progress_ns, now_ns(), memory_order_relaxed);
}
