/*
 * A stream's submissions. Every submission of a stream is one batch on its
 * device's queue that signals the next value of the stream's timeline; a batch's
 * signal covers every earlier batch of the queue (Vulkan's submission order), so
 * the timeline's counter says how far the stream got.
 *
 * Streams share their device's queue (lavapipe has one), and a queue runs its
 * batches in order: a batch that waits for a value nobody signalled yet (a
 * wait-before-signal) holds up every later batch of the queue, every other
 * stream's too (measured on lavapipe: a batch submitted after one waiting for a
 * host signal stayed pending until the signal). So what must wait on the host
 * never goes to the queue as a wait: a host function, a hold, a wait for a value
 * not yet on this device's queue (another device's, or one a held stream has not
 * submitted) queue on the stream's worker, a thread of the stream's own, and so
 * does every later submission of the stream, in order, until the worker has none
 * left; then submissions go to the queue at once again, from the caller's thread.
 * A wait for a value already on the queue is a native semaphore wait.
 *
 * The worker starts at the stream's first task, blocks every signal, is detached,
 * and ends once the stream is destroyed and its tasks are done (rule 9).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/free_list.h"
#include "common/thread.h"

#include <stdlib.h>
#include <string.h>

typedef enum task_kind { TASK_SUBMIT, TASK_HOST_FN, TASK_GATE } task_kind;

struct vk_task {
    vk_task *next; /* first: tp_free_item's layout; then the FIFO's link */
    task_kind kind;
    vk_batch batch;         /* SUBMIT */
    VkCommandBuffer *owned; /* SUBMIT: a copy of a user's `batch.commands` */
    uint64_t after;         /* HOST_FN: the stream's value fn runs after */
    void (*fn)(void *);
    void *arg;
    vk_stream *stream; /* GATE: whose worker the release wakes */
    bool open;         /* GATE: released */
};

static tp_free_list task_pool = TP_FREE_LIST_INIT;

/* The host function the calling thread runs (rule 15's self-wait): a pthread key,
 * not _Thread_local, whose dynamic TLS in a dlopened module LeakSanitizer's thread
 * walk crashes on (docs/backends.md, section 9). */
typedef struct running {
    vk_stream *stream;
    uint64_t after;
} running;

static pthread_key_t running_key;
static pthread_once_t running_once = PTHREAD_ONCE_INIT;

static void running_key_create(void)
{
    (void)pthread_key_create(&running_key, NULL);
}

vk_stream *tp_vk_running_stream(uint64_t *after)
{
    pthread_once(&running_once, running_key_create);
    const running *now = pthread_getspecific(running_key);
    if (!now)
        return NULL;
    *after = now->after;
    return now->stream;
}

void tp_vk_stream_ref(vk_stream *stream)
{
    atomic_fetch_add_explicit(&stream->refs, 1, memory_order_relaxed);
}

void tp_vk_stream_unref(vk_stream *stream)
{
    if (atomic_fetch_sub_explicit(&stream->refs, 1, memory_order_acq_rel) != 1)
        return;
    vk_device *device = stream->device;
    pthread_mutex_lock(&device->lock);
    if (stream->prev)
        stream->prev->next = stream->next;
    else
        device->streams = stream->next;
    if (stream->next)
        stream->next->prev = stream->prev;
    pthread_mutex_unlock(&device->lock);
    tp_vk_timeline_give(stream->timeline); /* taken again once its work is done */
    pthread_cond_destroy(&stream->wake);
    pthread_cond_destroy(&stream->done);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
}

void tp_vk_stream_close(vk_stream *stream)
{
    pthread_mutex_lock(&stream->lock);
    stream->closed = true;
    pthread_cond_broadcast(&stream->wake);
    pthread_mutex_unlock(&stream->lock);
    tp_vk_stream_unref(stream);
}

/* Where a submission of the worker failed, its values come from the host, so that
 * nothing waits for them for ever; the failure has no caller left to report to. */
static void signal_from_host(vk_stream *stream, const vk_batch *batch)
{
    tp_vk_tsan_release(batch->signal);
    VkSemaphoreSignalInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                  .semaphore = batch->signal->semaphore,
                                  .value = batch->signal_value};
    (void)vkSignalSemaphore(stream->device->device, &info);
    atomic_store_explicit(&batch->signal->submitted, batch->signal_value, memory_order_release);
}

/* A wait the queue can hold without holding up other streams: for a value of the
 * same device already on its queue. */
static bool wait_is_native(const vk_stream *stream, const vk_batch *batch)
{
    return !batch->wait || (batch->wait->device == stream->device &&
                            atomic_load_explicit(&batch->wait->submitted, memory_order_acquire) >= batch->wait_value);
}

#define WORKER_COMMANDS_MOST 64
/* A joined batch always takes its first task whole (a user's submission is its command
 * buffers between two barriers), else run_submissions would submit its signal alone,
 * again and again. */
_Static_assert(TP_VULKAN_SUBMIT_MOST + 2 < WORKER_COMMANDS_MOST, "a user's submission fits a joined batch");

/* A command buffer of the timeline's for a joined batch: one the device is done with
 * (the timeline reached its last batch), a new one, or the oldest once it is done.
 * VK_NULL_HANDLE where Vulkan refuses one. */
static VkCommandBuffer joined_take(vk_timeline *timeline, uint64_t value)
{
    VkDevice device = timeline->device->device;
    if (!timeline->commands) {
        VkCommandPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                        .queueFamilyIndex = timeline->device->family};
        if (vkCreateCommandPool(device, &info, NULL, &timeline->commands) != VK_SUCCESS)
            return VK_NULL_HANDLE;
    }
    uint64_t reached = tp_vk_timeline_counter(timeline);
    int oldest = 0;
    for (int i = 0; i < timeline->joined_count; i++) {
        if (timeline->joined_value[i] < timeline->joined_value[oldest])
            oldest = i;
        if (timeline->joined_value[i] <= reached) {
            oldest = i;
            break;
        }
    }
    int slot = oldest;
    if (timeline->joined_count < VK_JOINED_MOST &&
        (timeline->joined_count == 0 || timeline->joined_value[oldest] > reached)) {
        VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                                .commandPool = timeline->commands,
                                                .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                                .commandBufferCount = 1};
        if (vkAllocateCommandBuffers(device, &allocate, &timeline->joined[timeline->joined_count]) != VK_SUCCESS)
            return VK_NULL_HANDLE;
        slot = timeline->joined_count++;
    } else if (timeline->joined_value[slot] > reached) {
        (void)tp_vk_timeline_wait(timeline, timeline->joined_value[slot], true, "tp_event_record");
    }
    timeline->joined_value[slot] = value;
    VkCommandBuffer commands = timeline->joined[slot];
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (vkResetCommandBuffer(commands, 0) != VK_SUCCESS || vkBeginCommandBuffer(commands, &begin) != VK_SUCCESS)
        return VK_NULL_HANDLE;
    return commands;
}

/* The tasks' work recorded again into one command buffer, where more than one has
 * commands: their stamps and fills back to back, with no command buffer's start
 * between them (lavapipe's costs 6-8 us, 50-75 us under ASan, and is what a sample
 * of two records with nothing between would read). False: left as they were. */
static bool join_commands(vk_stream *stream, vk_batch *batch, const vk_batch *tasks, uint32_t count)
{
    if (count < 2)
        return false;
    VkCommandBuffer joined = joined_take(stream->timeline, batch->signal_value);
    if (!joined)
        return false;
    const vk_flush_work *flush = &stream->device->flush;
    for (uint32_t i = 0; i < count; i++) {
        if (tasks[i].stamp) {
            vkCmdResetQueryPool(joined, tasks[i].stamp, tasks[i].stamp_slot, 1);
            vkCmdWriteTimestamp(joined, stream->device->stamp_stage, tasks[i].stamp, tasks[i].stamp_slot);
        } else if (tasks[i].fill) {
            vkCmdFillBuffer(joined, flush->buffer, 0, VK_WHOLE_SIZE, 0x5a5a5a5au);
        }
    }
    if (vkEndCommandBuffer(joined) != VK_SUCCESS)
        return false;
    batch->command = joined;
    batch->commands = NULL;
    batch->command_count = 0;
    return true;
}

/*
 * The SUBMIT tasks at the head, as one batch: their commands in order (in one
 * command buffer where they can be) and the last one's signal, which is every
 * earlier value's too (a timeline's counter only grows), so that what a hold let go
 * runs on the device back to back, with no batch boundary between (lavapipe: each
 * batch a hop between its threads, tens of us). The first one's wait, when it cannot
 * be native, is waited for here first; a later task with a wait starts the next
 * batch. Lock held; returns the number of tasks done.
 */
static uint64_t run_submissions(vk_stream *stream)
{
    vk_task *first = stream->first;
    if (!wait_is_native(stream, &first->batch)) {
        const vk_timeline *wait = first->batch.wait;
        uint64_t value = first->batch.wait_value;
        pthread_mutex_unlock(&stream->lock);
        (void)tp_vk_timeline_wait(wait, value, true, "tp_event_wait");
        pthread_mutex_lock(&stream->lock);
        first->batch.wait = NULL;
    }
    VkCommandBuffer commands[WORKER_COMMANDS_MOST];
    vk_batch work[WORKER_COMMANDS_MOST];
    vk_batch batch = first->batch;
    batch.command = VK_NULL_HANDLE;
    batch.commands = commands;
    batch.command_count = 0;
    uint64_t count = 0;
    bool joinable = true; /* a user's command buffers cannot be recorded again */
    while (stream->first && stream->first->kind == TASK_SUBMIT &&
           batch.command_count + stream->first->batch.command_count + 1 <= WORKER_COMMANDS_MOST &&
           (count == 0 || !stream->first->batch.wait)) {
        vk_task *task = stream->first;
        if (task->batch.command) {
            work[batch.command_count] = task->batch;
            commands[batch.command_count++] = task->batch.command;
        }
        if (task->batch.commands) {
            memcpy(&commands[batch.command_count], task->batch.commands, task->batch.command_count * sizeof *commands);
            batch.command_count += task->batch.command_count;
            joinable = false;
            free(task->owned);
        }
        batch.signal_value = task->batch.signal_value;
        stream->first = task->next;
        tp_free_list_give(&task_pool, task);
        count++;
    }
    if (!stream->first)
        stream->last = NULL;
    if (joinable)
        (void)join_commands(stream, &batch, work, batch.command_count);
    if (tp_vk_submit(stream->device, &batch, "tp_event_record") != TP_OK)
        signal_from_host(stream, &batch);
    return count;
}

static vk_task *pop(vk_stream *stream)
{
    vk_task *task = stream->first;
    stream->first = task->next;
    if (!stream->first)
        stream->last = NULL;
    return task;
}

static void run_host_fn(vk_stream *stream, vk_task *task)
{
    pthread_mutex_unlock(&stream->lock);
    (void)tp_vk_timeline_wait(stream->timeline, task->after, true, "tp_stream_launch_host_fn");
    running now = {stream, task->after};
    pthread_once(&running_once, running_key_create);
    (void)pthread_setspecific(running_key, &now);
    task->fn(task->arg);
    (void)pthread_setspecific(running_key, NULL);
    tp_free_list_give(&task_pool, task);
    pthread_mutex_lock(&stream->lock);
}

static void *worker_main(void *arg)
{
    vk_stream *stream = arg;
    pthread_mutex_lock(&stream->lock);
    for (;;) {
        while (!stream->first && !stream->closed)
            pthread_cond_wait(&stream->wake, &stream->lock);
        if (!stream->first)
            break;
        uint64_t done = 1;
        switch (stream->first->kind) {
        case TASK_SUBMIT:
            done = run_submissions(stream);
            break;
        case TASK_HOST_FN:
            run_host_fn(stream, pop(stream));
            break;
        case TASK_GATE:
            while (!stream->first->open)
                pthread_cond_wait(&stream->wake, &stream->lock);
            tp_free_list_give(&task_pool, pop(stream));
            break;
        }
        stream->pending -= done;
        if (stream->pending == 0)
            pthread_cond_broadcast(&stream->done);
    }
    stream->worker_started = false;
    pthread_mutex_unlock(&stream->lock);
    tp_vk_stream_unref(stream);
    return NULL;
}

/* Queues the task for the worker, started at the first. Lock held. */
static tp_status push(vk_stream *stream, vk_task *task, const char *call)
{
    if (!stream->worker_started) {
        tp_vk_stream_ref(stream);
        int err = tp_thread_start_detached(worker_main, stream);
        if (err != 0) {
            atomic_fetch_sub_explicit(&stream->refs, 1, memory_order_relaxed);
            free(task->owned);
            tp_free_list_give(&task_pool, task);
            return tp_vk_host()->fail(TP_ERR_BACKEND,
                                      "%s: the stream's worker thread did not start (pthread_create: %d)", call, err);
        }
        stream->worker_started = true;
    }
    task->next = NULL;
    if (stream->last)
        stream->last->next = task;
    else
        stream->first = task;
    stream->last = task;
    stream->pending++;
    pthread_cond_signal(&stream->wake);
    return TP_OK;
}

static vk_task *task_take(task_kind kind, const char *call)
{
    vk_task *task = tp_free_list_take(&task_pool, sizeof *task);
    if (!task) {
        tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
        return NULL;
    }
    *task = (vk_task){.kind = kind};
    return task;
}

/* One batch signalling the stream's next value: at once, or after the worker's
 * tasks. Lock held. */
static tp_status submit_or_queue(vk_stream *stream, vk_batch batch, const char *call, uint64_t *value)
{
    vk_timeline *timeline = stream->timeline;
    batch.signal = timeline;
    batch.signal_value = timeline->issued + 1;
    tp_status status;
    if (stream->pending == 0 && wait_is_native(stream, &batch)) {
        status = tp_vk_submit(stream->device, &batch, call);
    } else {
        vk_task *task = task_take(TASK_SUBMIT, call);
        if (!task)
            return TP_ERR_OUT_OF_MEMORY;
        task->batch = batch;
        if (batch.commands) { /* the caller's array is the caller's only for the call */
            task->owned = malloc(batch.command_count * sizeof *task->owned);
            if (!task->owned) {
                tp_free_list_give(&task_pool, task);
                return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
            }
            memcpy(task->owned, batch.commands, batch.command_count * sizeof *task->owned);
            task->batch.commands = task->owned;
        }
        status = push(stream, task, call);
    }
    if (status == TP_OK) {
        timeline->issued = batch.signal_value;
        if (value)
            *value = batch.signal_value;
    }
    return status;
}

tp_status tp_vk_stream_mark(vk_stream *stream, vk_batch work, bool fresh, const char *call, uint64_t *value)
{
    pthread_mutex_lock(&stream->lock);
    tp_status status = TP_OK;
    /* The last value signals after all the stream's work: a record without
     * commands of its own needs no batch, unless the worker has tasks to come first. */
    if (!work.command && !fresh && stream->pending == 0)
        *value = stream->timeline->issued;
    else
        status = submit_or_queue(
            stream,
            (vk_batch){.command = work.command, .stamp = work.stamp, .stamp_slot = work.stamp_slot, .fill = work.fill},
            call, value);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

tp_status tp_vk_stream_submit_commands(vk_stream *stream, const VkCommandBuffer *commands, uint32_t count,
                                       const char *call)
{
    pthread_mutex_lock(&stream->lock);
    tp_status status = submit_or_queue(stream, (vk_batch){.commands = commands, .command_count = count}, call, NULL);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

tp_status tp_vk_stream_wait_value(vk_stream *stream, const vk_timeline *timeline, uint64_t value, const char *call)
{
    if (tp_vk_timeline_counter(timeline) >= value)
        return TP_OK; /* reached: nothing to wait for */
    pthread_mutex_lock(&stream->lock);
    tp_status status = submit_or_queue(stream, (vk_batch){.wait = timeline, .wait_value = value}, call, NULL);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

tp_status tp_vk_stream_host_fn(vk_stream *stream, void (*fn)(void *), void *arg)
{
    static const char call[] = "tp_stream_launch_host_fn";
    vk_task *task = task_take(TASK_HOST_FN, call);
    if (!task)
        return TP_ERR_OUT_OF_MEMORY;
    task->fn = fn;
    task->arg = arg;
    pthread_mutex_lock(&stream->lock);
    task->after = stream->timeline->issued;
    tp_status status = push(stream, task, call);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

static void gate_release(void *arg)
{
    vk_task *task = arg;
    vk_stream *stream = task->stream; /* the worker frees the task once it sees it open */
    pthread_mutex_lock(&stream->lock);
    task->open = true;
    pthread_cond_broadcast(&stream->wake);
    pthread_mutex_unlock(&stream->lock);
    tp_vk_stream_unref(stream);
}

tp_status tp_vk_stream_gate(vk_stream *stream, void (**release)(void *), void **arg)
{
    static const char call[] = "tp_stream_hold";
    vk_task *task = task_take(TASK_GATE, call);
    if (!task)
        return TP_ERR_OUT_OF_MEMORY;
    task->stream = stream;
    tp_vk_stream_ref(stream); /* the release's: the stream may be destroyed before it */
    pthread_mutex_lock(&stream->lock);
    tp_status status = push(stream, task, call);
    pthread_mutex_unlock(&stream->lock);
    if (status != TP_OK) {
        tp_vk_stream_unref(stream);
        return status;
    }
    *release = gate_release;
    *arg = task;
    return TP_OK;
}

tp_status tp_vk_stream_drain(vk_stream *stream, const char *call)
{
    pthread_mutex_lock(&stream->lock);
    while (stream->pending > 0)
        pthread_cond_wait(&stream->done, &stream->lock);
    uint64_t value = stream->timeline->issued;
    pthread_mutex_unlock(&stream->lock);
    return tp_vk_timeline_wait(stream->timeline, value, true, call);
}

bool tp_vk_stream_idle(vk_stream *stream)
{
    pthread_mutex_lock(&stream->lock);
    bool idle = stream->pending == 0 && tp_vk_timeline_counter(stream->timeline) >= stream->timeline->issued;
    pthread_mutex_unlock(&stream->lock);
    return idle;
}
