/*
 * A stream's FIFO and its worker thread.
 *
 * The worker pops a task under the queue's lock, runs it unlocked, then, under the
 * lock again, advances `completed` and wakes sleeping waiters (only once the
 * earliest task one of them waits for is done) before it pops the next one: one
 * lock round per task, and a waiter that holds the lock and sees `completed` short
 * is sure to be woken.
 *
 * A worker whose FIFO ran empty spins for a while (TP_SPIN_NS) before it sleeps:
 * work that comes within it starts at once instead of after a futex wake-up, which
 * on the H200's host took about 10 us and was most of what a wait across backends
 * cost beyond its floor (bench/cuda/cross_wait_bench.c). Submitters signal only a
 * sleeping worker, so a spinning one costs them nothing.
 */
#include "backends/cpu/cpu_internal.h"
#include "common/spin.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tasks in a new ring; doubled when full. Enough for a record, a wait and some
 * host functions in flight without growing. */
#define CPU_RING_INITIAL 16u

/* ----------------------------------------------------- device's queue list */

static void device_link(cpu_device *device, cpu_queue *queue)
{
    pthread_mutex_lock(&device->lock);
    queue->prev = NULL;
    queue->next = device->queues;
    if (device->queues)
        device->queues->prev = queue;
    device->queues = queue;
    device->queue_count++;
    pthread_mutex_unlock(&device->lock);
}

static void device_unlink(cpu_queue *queue)
{
    cpu_device *device = queue->device;
    pthread_mutex_lock(&device->lock);
    if (queue->prev)
        queue->prev->next = queue->next;
    else
        device->queues = queue->next;
    if (queue->next)
        queue->next->prev = queue->prev;
    queue->prev = queue->next = NULL;
    device->queue_count--;
    pthread_mutex_unlock(&device->lock);
}

/* ---------------------------------------------------------------- lifetime */

tp_status tp_cpu_queue_create(cpu_device *device, int priority, unsigned kind, const char *operation, cpu_queue **out)
{
    /* Aligned as its cache lines are (cpu_internal.h); sizeof is a multiple. */
    cpu_queue *queue = aligned_alloc(_Alignof(cpu_queue), sizeof *queue);
    if (queue)
        memset(queue, 0, sizeof *queue);
    if (!queue)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory for a stream of cpu:%d", operation,
                                   device->index);
    int err = pthread_mutex_init(&queue->lock, NULL);
    if (err == 0) {
        err = pthread_cond_init(&queue->work_ready, NULL);
        if (err == 0) {
            err = pthread_cond_init(&queue->progress, NULL);
            if (err != 0)
                pthread_cond_destroy(&queue->work_ready);
        }
        if (err != 0)
            pthread_mutex_destroy(&queue->lock);
    }
    if (err != 0) {
        free(queue);
        return tp_cpu_host()->fail(TP_ERR_BACKEND, "%s: pthread_mutex_init/pthread_cond_init: %s", operation,
                                   strerror(err));
    }
    queue->own.head = (tp_stream){
        .backend = tp_cpu_table(),
        .device = {.type = TP_DEVICE_CPU, .index = device->index},
        .priority = priority,
        .kind = kind,
    };
    queue->own.queue = queue;
    queue->device = device;
    atomic_init(&queue->submitted, 0);
    atomic_init(&queue->completed, 0);
    queue->wake_seq = UINT64_MAX;
    atomic_init(&queue->refs, 1);
    queue->handles = 1;
    queue->creator_pid = (int32_t)getpid();
    queue->generation = atomic_load_explicit(&tp_cpu_fork_generation, memory_order_relaxed);
    device_link(device, queue);
    *out = queue;
    return TP_OK;
}

void tp_cpu_queue_ref(cpu_queue *queue)
{
    tp_cpu_queue_ref_n(queue, 1);
}

/* The last reference: no handle, no worker, no snapshot, so the FIFO is empty and
 * the queue is off its device's list. */
static void queue_free(cpu_queue *queue)
{
    pthread_cond_destroy(&queue->progress);
    pthread_cond_destroy(&queue->work_ready);
    pthread_mutex_destroy(&queue->lock);
    free(queue->ring);
    free(queue);
}

void tp_cpu_queue_unref(cpu_queue *queue)
{
    tp_cpu_queue_unref_n(queue, 1);
}

void tp_cpu_queue_ref_n(cpu_queue *queue, unsigned n)
{
    atomic_fetch_add_explicit(&queue->refs, n, memory_order_relaxed);
}

void tp_cpu_queue_unref_n(cpu_queue *queue, unsigned n)
{
    /* acq_rel: everything the other holders wrote happens before the free. */
    if (atomic_fetch_sub_explicit(&queue->refs, n, memory_order_acq_rel) == n)
        queue_free(queue);
}

TP_COLD tp_status tp_cpu_queue_inherited_fail(const cpu_queue *queue, const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND,
                               "%s: the cpu:%d stream was created in the parent process (pid %d) before fork(): its "
                               "worker thread does not exist in this child (pid %d); create streams and events in "
                               "the child",
                               operation, queue->device->index, (int)queue->creator_pid, (int)getpid());
}

void tp_cpu_queue_close_handle(cpu_queue *queue)
{
    /* Inherited: its lock may be held by a thread that does not exist here, and
     * it is on no list of this process. It stays, unused (a leak per stream the
     * child destroys, never a hang). */
    if (tp_cpu_queue_inherited(queue))
        return;
    pthread_mutex_lock(&queue->lock);
    bool last = --queue->handles == 0;
    bool has_worker = queue->worker_started;
    if (last && queue->worker_idle)
        pthread_cond_signal(&queue->work_ready);
    pthread_mutex_unlock(&queue->lock);
    /* With a worker, the worker unlinks the queue once it has drained it. */
    if (last && !has_worker)
        device_unlink(queue); /* nothing was ever pushed: no work to wait for */
}

/* ----------------------------------------------------------------- watches */

typedef struct cpu_watch {
    struct cpu_watch *next;
    uint64_t seq;
    void (*fn)(void *);
    void *arg;
} cpu_watch;

tp_status tp_cpu_queue_watch(cpu_queue *queue, uint64_t seq, void (*fn)(void *), void *arg, const char *operation)
{
    if (tp_cpu_queue_inherited(queue))
        return tp_cpu_queue_inherited_fail(queue, operation);
    cpu_watch *watch = malloc(sizeof *watch);
    if (!watch)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", operation);
    *watch = (cpu_watch){NULL, seq, fn, arg};
    pthread_mutex_lock(&queue->lock);
    /* Under the lock, so that the worker, which moves `completed` under it too,
     * either sees this watch or has moved past seq before this look. */
    bool reached = tp_cpu_queue_reached(queue, seq);
    if (!reached) {
        cpu_watch **link = &queue->watches;
        while (*link && (*link)->seq <= seq)
            link = &(*link)->next;
        watch->next = *link;
        *link = watch;
    }
    pthread_mutex_unlock(&queue->lock);
    if (reached) {
        free(watch);
        fn(arg);
    }
    return TP_OK;
}

/* Under the queue's lock, on the worker: runs the watches that `done` completed
 * tasks satisfy, with the lock dropped meanwhile. */
static void run_due_watches(cpu_queue *queue, uint64_t done)
{
    cpu_watch *due = queue->watches, **end = &queue->watches;
    while (*end && (*end)->seq <= done)
        end = &(*end)->next;
    if (end == &queue->watches)
        return;
    queue->watches = *end;
    *end = NULL;
    pthread_mutex_unlock(&queue->lock);
    while (due) {
        cpu_watch *next = due->next;
        due->fn(due->arg);
        free(due);
        due = next;
    }
    pthread_mutex_lock(&queue->lock);
}

/* ------------------------------------------------------------------ worker */

static bool task_submitted(const void *arg)
{
    const cpu_queue *queue = arg;
    /* Only the worker moves `completed`: it equals `submitted` until a push. */
    return atomic_load_explicit(&queue->submitted, memory_order_acquire) !=
           atomic_load_explicit(&queue->completed, memory_order_relaxed);
}

/* Under the queue's lock, its FIFO empty: spins unlocked for TP_SPIN_NS on the
 * next push (see the top). */
static void spin_for_a_task(cpu_queue *queue)
{
    pthread_mutex_unlock(&queue->lock);
    (void)tp_spin_until(task_submitted, queue, TP_SPIN_NS);
    pthread_mutex_lock(&queue->lock);
}

_Thread_local cpu_queue *tp_cpu_current_worker;

static void *worker_main(void *arg)
{
    cpu_queue *queue = arg;
    tp_cpu_current_worker = queue;
#if defined(__GLIBC__)
    char name[16]; /* the kernel's limit, NUL included */
    snprintf(name, sizeof name, "tpevent-cpu:%d", queue->device->index);
    pthread_setname_np(pthread_self(), name);
#endif
    pthread_mutex_lock(&queue->lock);
    for (;;) {
        bool spun = false;
        while (queue->count == 0 && queue->handles > 0) {
            if (!spun) {
                spun = true;
                spin_for_a_task(queue);
                continue; /* pushes went unsignalled while it spun, whatever it saw */
            }
            queue->worker_idle = true;
            pthread_cond_wait(&queue->work_ready, &queue->lock);
            queue->worker_idle = false;
        }
        if (queue->count == 0)
            break; /* destroyed and drained */
        cpu_task task = queue->ring[queue->first];
        queue->first = (queue->first + 1) & (queue->capacity - 1);
        queue->count--;
        pthread_mutex_unlock(&queue->lock);

        task.run(task.arg, task.word);

        pthread_mutex_lock(&queue->lock);
        uint64_t done = atomic_load_explicit(&queue->completed, memory_order_relaxed) + 1;
        atomic_store_explicit(&queue->completed, done, memory_order_release);
        if (queue->sleepers > 0 && done >= queue->wake_seq) {
            queue->wake_seq = UINT64_MAX; /* each sleeper still short lowers it again */
            pthread_cond_broadcast(&queue->progress);
        }
        if (TP_UNLIKELY(queue->watches != NULL))
            run_due_watches(queue, done);
    }
    pthread_mutex_unlock(&queue->lock);
    device_unlink(queue);
    pthread_detach(pthread_self()); /* nobody joins a worker */
    tp_cpu_queue_unref(queue);      /* the worker's reference; may free the queue */
    return NULL;
}

/* Under the queue's lock. */
static tp_status start_worker(cpu_queue *queue, const char *operation)
{
    /* Block every signal in the new thread (it inherits the mask), so that the
     * application's handlers run on its own threads, never in the middle of a
     * task. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    tp_cpu_queue_ref(queue); /* the worker's; cannot be the first: the caller has one */
    int err = pthread_create(&queue->worker, NULL, worker_main, queue);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (err != 0) {
        atomic_fetch_sub_explicit(&queue->refs, 1, memory_order_relaxed);
        /* EAGAIN: no memory or thread left for it, which is what the caller can act on. */
        tp_status status = err == EAGAIN || err == ENOMEM ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
        return tp_cpu_host()->fail(status, "%s: pthread_create for the worker of a cpu:%d stream: %s", operation,
                                   queue->device->index, strerror(err));
    }
    queue->worker_started = true;
    return TP_OK;
}

/* Under the queue's lock. Keeps the pending tasks in order, from index 0. */
static tp_status grow_ring(cpu_queue *queue, const char *operation)
{
    size_t capacity = queue->capacity ? queue->capacity * 2 : CPU_RING_INITIAL;
    cpu_task *ring = malloc(capacity * sizeof *ring);
    if (!ring)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory growing a stream's queue to %zu tasks",
                                   operation, capacity);
    for (size_t i = 0; i < queue->count; i++)
        ring[i] = queue->ring[(queue->first + i) & (queue->capacity - 1)];
    free(queue->ring);
    queue->ring = ring;
    queue->capacity = capacity;
    queue->first = 0;
    return TP_OK;
}

tp_status tp_cpu_queue_begin_submit(cpu_queue *queue, const char *operation)
{
    return tp_cpu_queue_begin_submit_n(queue, 1, operation);
}

uint64_t tp_cpu_queue_next_seq(cpu_queue *queue)
{
    return atomic_load_explicit(&queue->submitted, memory_order_relaxed) + queue->unpublished + 1;
}

void tp_cpu_queue_push(cpu_queue *queue, const cpu_task *task)
{
    queue->ring[(queue->first + queue->count) & (queue->capacity - 1)] = *task;
    queue->count++;
    queue->unpublished++;
}

void tp_cpu_queue_end_batch(cpu_queue *queue)
{
    if (queue->unpublished) {
        atomic_store_explicit(&queue->submitted, tp_cpu_queue_next_seq(queue) - 1, memory_order_release);
        queue->unpublished = 0;
    }
    if (queue->worker_idle)
        pthread_cond_signal(&queue->work_ready);
    pthread_mutex_unlock(&queue->lock);
}

void tp_cpu_queue_end_submit(cpu_queue *queue, const cpu_task *task)
{
    tp_cpu_queue_push(queue, task);
    tp_cpu_queue_end_batch(queue);
}

tp_status tp_cpu_queue_begin_submit_n(cpu_queue *queue, size_t n, const char *operation)
{
    if (tp_cpu_queue_inherited(queue))
        return tp_cpu_queue_inherited_fail(queue, operation);
    pthread_mutex_lock(&queue->lock);
    tp_status status = TP_OK;
    while (status == TP_OK && queue->capacity - queue->count < n)
        status = grow_ring(queue, operation);
    if (status == TP_OK && !queue->worker_started)
        status = start_worker(queue, operation);
    if (status != TP_OK)
        pthread_mutex_unlock(&queue->lock);
    return status;
}

void tp_cpu_queue_cancel_submit(cpu_queue *queue)
{
    pthread_mutex_unlock(&queue->lock);
}

tp_status tp_cpu_queue_submit(cpu_queue *queue, const cpu_task *task, const char *operation)
{
    tp_status status = tp_cpu_queue_begin_submit(queue, operation);
    if (status == TP_OK)
        tp_cpu_queue_end_submit(queue, task);
    return status;
}

/* ----------------------------------------------------------------- waiting */

typedef struct queue_mark {
    cpu_queue *queue;
    uint64_t seq;
} queue_mark;

static bool mark_reached(const void *arg)
{
    const queue_mark *mark = arg;
    return tp_cpu_queue_reached(mark->queue, mark->seq);
}

tp_status tp_cpu_queue_wait(cpu_queue *queue, uint64_t seq, enum cpu_wait_mode mode, const char *operation)
{
    if (tp_cpu_queue_reached(queue, seq))
        return TP_OK;
    if (tp_cpu_queue_inherited(queue))
        return tp_cpu_queue_inherited_fail(queue, operation);
    if (mode == CPU_WAIT_SPIN_THEN_SLEEP && tp_spin_until(mark_reached, &(queue_mark){queue, seq}, TP_SPIN_NS))
        return TP_OK;
    pthread_mutex_lock(&queue->lock);
    /* Once its work is done the worker never moves `completed` again, so `worker`
     * is compared only while it is still the running worker. */
    if (!tp_cpu_queue_reached(queue, seq) && queue->worker_started && pthread_equal(queue->worker, pthread_self())) {
        pthread_mutex_unlock(&queue->lock);
        return tp_cpu_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                   "%s: called from a host function on the cpu:%d stream it would wait for, "
                                   "which would wait for itself forever",
                                   operation, queue->device->index);
    }
    queue->sleepers++;
    while (!tp_cpu_queue_reached(queue, seq)) {
        if (seq < queue->wake_seq)
            queue->wake_seq = seq;
        pthread_cond_wait(&queue->progress, &queue->lock);
    }
    queue->sleepers--;
    pthread_mutex_unlock(&queue->lock);
    return TP_OK;
}
