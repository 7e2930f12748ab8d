/*
 * Records as exported timeline semaphores (core/backend.h's snapshot_export_timeline;
 * issue 56): another runtime's stream (CUDA's, through cudaImportExternalSemaphore
 * and cudaWaitExternalSemaphoresAsync) waits for a record on the device, no host
 * thread in between. A record is (timeline, value); the timeline's semaphore is
 * exported once as an opaque fd and kept, as the timeline is, for the module's life,
 * so an importer imports each semaphore once (by its key). Where the driver said its
 * timelines are not exportable (vk_device.c asked
 * vkGetPhysicalDeviceExternalSemaphoreProperties; lavapipe's answer is no), every
 * export is refused and the core waits on the host.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Process exit. A CUDA stream waiting on an exported timeline for a value that never
 * comes (a record behind a hold kept for good, rule 14's exit test) would be a stream
 * held at the runtime's teardown, which the host path never leaves (its holds'
 * counters are raised at exit, gpu_host_counter.c). So an exit handler, registered at
 * the first export, signals each exported timeline from the host up to the last value
 * it gave out, where nothing is pending on the queue for it (its counter at what was
 * submitted: a host signal must stay below every pending signal). The values above
 * that are batches a worker holds back (behind a hold or a host-side wait), which may
 * still be let go while the process exits (another exit handler raises the CUDA
 * holds' counters): `submitted` is set to the value signalled, under the device's
 * queue lock as tp_vk_submit reads it, so such a batch is never submitted (its value
 * would be signalled twice). Exported timelines are listed here, never removed.
 */
static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    vk_timeline **items;
    size_t count, capacity;
} exported = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void signal_exported_at_exit(void)
{
    pthread_mutex_lock(&exported.lock);
    for (size_t i = 0; i < exported.count; i++) {
        vk_timeline *timeline = exported.items[i];
        vk_device *device = timeline->device;
        pthread_mutex_lock(&device->queue_lock);
        uint64_t counter = tp_vk_timeline_counter(timeline);
        uint64_t submitted = atomic_load_explicit(&timeline->submitted, memory_order_acquire);
        /* Without the owner's lock: a value issued after this read is above what is
         * signalled here, and goes to the queue as any other. */
        uint64_t issued = timeline->issued;
        if (submitted <= counter && issued > counter) {
            VkSemaphoreSignalInfo info = {
                .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = timeline->semaphore, .value = issued};
            if (vkSignalSemaphore(device->device, &info) == VK_SUCCESS)
                atomic_store_explicit(&timeline->submitted, issued, memory_order_release);
        }
        pthread_mutex_unlock(&device->queue_lock);
    }
    pthread_mutex_unlock(&exported.lock);
}

static void register_exit_handler(void)
{
    (void)atexit(signal_exported_at_exit);
}

/* Lists a timeline exported just now; false: out of memory (it is then not exported). */
static bool list_exported(vk_timeline *timeline)
{
    pthread_once(&exported.once, register_exit_handler);
    pthread_mutex_lock(&exported.lock);
    bool listed = exported.count < exported.capacity;
    if (!listed) {
        size_t capacity = exported.capacity ? 2 * exported.capacity : 16;
        vk_timeline **grown = realloc(exported.items, capacity * sizeof *grown);
        if (grown) {
            exported.items = grown;
            exported.capacity = capacity;
            listed = true;
        }
    }
    if (listed)
        exported.items[exported.count++] = timeline;
    pthread_mutex_unlock(&exported.lock);
    return listed;
}

tp_status tp_vk_timeline_export_support(int index, unsigned char uuid[16], char *how, size_t how_size)
{
    const vk_device *device = tp_vk_device(index);
    memcpy(uuid, device->uuid, 16);
    snprintf(how, how_size, "%s", device->export_note);
    return device->export_fd ? TP_OK : TP_ERR_UNSUPPORTED;
}

/* The timeline's opaque fd, exported at its first need and then listed for the exit
 * handler; -1 where vkGetSemaphoreFdKHR failed, for good (the core then waits on the
 * host), or where the list could not grow (tried again at the next export). */
static int timeline_fd(vk_device *device, vk_timeline *timeline)
{
    pthread_mutex_lock(&device->lock);
    int fd = timeline->exported_fd_plus_1 - 1;
    if (fd == -1) {
        VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                        .semaphore = timeline->semaphore,
                                        .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        if (device->export_fd(device->device, &info, &fd) != VK_SUCCESS) {
            timeline->exported_fd_plus_1 = -1; /* fd -2: refused, not asked again */
            fd = -1;
        } else if (!list_exported(timeline)) {
            close(fd); /* unlisted, it would not be signalled at exit */
            fd = -1;
        } else {
            timeline->exported_fd_plus_1 = fd + 1;
        }
    }
    pthread_mutex_unlock(&device->lock);
    return fd < 0 ? -1 : fd;
}

tp_status tp_vk_snapshot_export_timeline(const tp_snapshot *snapshot, tp_timeline_export *out)
{
    const vk_record *record = snapshot->object;
    vk_device *device = record->device;
    if (!device->export_fd)
        return TP_ERR_UNSUPPORTED;
    /* The pool's timelines are the module's, never freed: the const is the record's
     * promise not to signal, which an export keeps. */
    vk_timeline *timeline = (vk_timeline *)record->timeline;
    int fd = timeline_fd(device, timeline);
    if (fd < 0)
        return TP_ERR_UNSUPPORTED;
    *out = (tp_timeline_export){.fd = fd, .value = record->value, .key = (uint64_t)(uintptr_t)timeline};
    memcpy(out->uuid, device->uuid, sizeof out->uuid);
    /* The importer's device may wait for a value the stream has not handed to the
     * queue yet (behind a hold or a host-side wait in its worker): a wait before the
     * signal, which timeline semaphores allow, and which holds up only the importer's
     * stream (its queue is the other runtime's). */
    return TP_OK;
}
