/*
 * fn(arg) once a timeline reaches a value, for snapshot_notify (waits across
 * backends, rule 14) and for records given back once the device is done with their
 * query. One notifier thread of the module serves every notice: it waits in
 * vkWaitSemaphores (VK_SEMAPHORE_WAIT_ANY_BIT) on the pending notices of one device
 * at a time, at most 1 ms, so that a notice of another device, or one added
 * meanwhile, is looked at within 1 ms. It runs fn with no lock held. Timelines are
 * never destroyed (vk_internal.h), so a notice needs no reference on its own.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/free_list.h"
#include "common/thread.h"

#define NOTIFY_WAIT_NS 1000000u
#define NOTIFY_WAIT_MOST 32

typedef struct notice {
    struct notice *next; /* first: tp_free_item's layout; then the list's link */
    const vk_timeline *timeline;
    uint64_t value;
    void (*fn)(void *);
    void *arg;
} notice;

static tp_free_list notice_pool = TP_FREE_LIST_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static notice *pending;
static bool started;

/* Takes the reached notices off the list; *first_device the device of the first
 * one left, and its semaphores in `wait` (their values in `values`). */
static notice *take_reached(vk_device **first_device, VkSemaphore *wait, uint64_t *values, uint32_t *count)
{
    notice *reached = NULL;
    *first_device = NULL;
    *count = 0;
    for (notice **link = &pending; *link;) {
        notice *n = *link;
        if (tp_vk_timeline_counter(n->timeline) >= n->value) {
            *link = n->next;
            n->next = reached;
            reached = n;
            continue;
        }
        if (!*first_device)
            *first_device = n->timeline->device;
        if (n->timeline->device == *first_device && *count < NOTIFY_WAIT_MOST) {
            wait[*count] = n->timeline->semaphore;
            values[*count] = n->value;
            (*count)++;
        }
        link = &n->next;
    }
    return reached;
}

static void *notifier_main(void *unused)
{
    (void)unused;
    VkSemaphore wait[NOTIFY_WAIT_MOST];
    uint64_t values[NOTIFY_WAIT_MOST];
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!pending)
            pthread_cond_wait(&wake, &lock);
        vk_device *device = NULL;
        uint32_t count = 0;
        notice *reached = take_reached(&device, wait, values, &count);
        pthread_mutex_unlock(&lock);
        while (reached) {
            notice *next = reached->next;
            reached->fn(reached->arg);
            tp_free_list_give(&notice_pool, reached);
            reached = next;
        }
        if (count > 0) {
            VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                        .flags = VK_SEMAPHORE_WAIT_ANY_BIT,
                                        .semaphoreCount = count,
                                        .pSemaphores = wait,
                                        .pValues = values};
            (void)vkWaitSemaphores(device->device, &info, NOTIFY_WAIT_NS);
        }
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

tp_status tp_vk_notify(const vk_timeline *timeline, uint64_t value, void (*fn)(void *), void *arg, const char *call)
{
    if (tp_vk_timeline_counter(timeline) >= value) {
        fn(arg);
        return TP_OK;
    }
    notice *n = tp_free_list_take(&notice_pool, sizeof *n);
    if (!n)
        return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    *n = (notice){.timeline = timeline, .value = value, .fn = fn, .arg = arg};
    pthread_mutex_lock(&lock);
    if (!started) {
        int err = tp_thread_start_detached(notifier_main, NULL);
        if (err != 0) {
            pthread_mutex_unlock(&lock);
            tp_free_list_give(&notice_pool, n);
            return tp_vk_host()->fail(TP_ERR_BACKEND, "%s: the notifier thread did not start (pthread_create: %d)",
                                      call, err);
        }
        started = true;
    }
    n->next = pending;
    pending = n;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    return TP_OK;
}
