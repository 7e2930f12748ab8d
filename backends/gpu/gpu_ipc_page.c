/*
 * The record state of a GPU event handed over a Unix socket (gpu_ipc_page.h): one
 * page of a sealed memfd, mapped by every process that holds the event and
 * registered by each as mapped host memory, so that its streams write and wait on it
 * with stream memory operations and its host threads read it.
 *
 * Records. The page has a channel (a counter) per writer, a stream of a process
 * handle. A record takes the channel's next value n, its ticket (channel, n) becomes
 * the page's latest (rule 3), and the stream writes n once its earlier work is done
 * (cuStreamWriteValue64, fenced). A stream reaches its records in order, so record n
 * is reached exactly when the channel holds n or more: a wait (cuStreamWaitValue64,
 * greater or equal) waits for that record and no other (rule 6; with one shared
 * counter a later record landing first would release it). A channel whose records
 * are all reached may be taken over by another writer, its counter carrying on.
 * Claims and tickets are made under the page's robust, process-shared mutex (the
 * owner's thread id it holds is its own namespace's, all the kernel compares).
 *
 * Death. Each handle holds an OFD lock on a byte of its own past the page, on an
 * open file description of its own (memfd_create's, or a received one reopened
 * through /proc/self/fd), and each record names its handle's byte in its channel:
 * while a record is pending, query and synchronize look (F_OFD_GETLK) once a
 * TP_LIVENESS_PERIOD_NS and fail once the byte is free, in any PID namespace. A
 * stream waiting on such a record stays held, as on a dead exporter's CUDA IPC event
 * (a stream memory operation cannot be called off). Values stay below 2^56. A page
 * goes once the event is gone and this process's writes into it and waits on it
 * have passed (rule 9).
 */
#define _GNU_SOURCE /* memfd_create */

#include "backends/gpu/gpu_ipc_page_layout.h"
#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda_page.h" /* HIP's and the fake's are in their mappings */
#endif
#include "common/bytes.h"
#include "common/ipc_file.h"
#include "common/spin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_MAGIC "tpevgpu" /* 8 bytes with its NUL */
#define PAGE_LAYOUT_VERSION 1u
#define PAYLOAD_VERSION 1u

/* Pages whose event is gone but whose writes may still be pending in this process:
 * freed once they are done, looked at whenever a page is made or let go. Process-wide
 * by nature (the device may hold them after their last handle). */
static struct {
    pthread_mutex_t lock;
    gpu_page *first;
} retired = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------ helpers */

/* Every write made under the lock leaves the page consistent at each step. */
static bool page_lock(page_layout *layout)
{
    return tp_ipc_shared_mutex_lock(&layout->lock);
}

/* Under the lock: the writer's channel, taking over one whose records are all
 * reached if it has none; NULL if every channel has a record pending. */
static page_channel *channel_claim(gpu_page *page, uint64_t owner, unsigned *index)
{
    page_channel *idle = NULL;
    unsigned idle_index = 0;
    for (unsigned i = 0; i < PAGE_CHANNELS; i++) {
        page_channel *channel = &page->layout->channels[i];
        if (atomic_load_explicit(&channel->owner, memory_order_relaxed) == owner) {
            *index = i;
            return channel;
        }
        if (!idle && channel_reached(channel, atomic_load_explicit(&channel->recorded, memory_order_relaxed))) {
            idle = channel;
            idle_index = i;
        }
    }
    if (idle) {
        atomic_store_explicit(&idle->owner, owner, memory_order_relaxed);
        atomic_fetch_or_explicit(&page->claimed, UINT64_C(1) << idle_index, memory_order_relaxed);
        *index = idle_index;
    }
    return idle;
}

static TP_COLD tp_status all_channels_busy(void)
{
    return gpu.host->fail(TP_ERR_BACKEND, "tp_event_record: records of this event are pending on %u streams, the most",
                          PAGE_CHANNELS);
}

static TP_COLD tp_status lock_failed(const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND, "%s: the event's shared lock is unusable", operation);
}

/* ------------------------------------------------------------ lifetime */

/* Whether a write of this process into the page, or a wait of its streams on it, may
 * still be pending: the device still reads or writes the mapping. */
static bool device_use_pending(gpu_page *page)
{
    uint64_t claimed = atomic_load_explicit(&page->claimed, memory_order_relaxed);
    for (unsigned i = 0; i < PAGE_CHANNELS; i++) {
        page_channel *channel = &page->layout->channels[i];
        if ((claimed >> i & 1) &&
            !channel_reached(channel, atomic_load_explicit(&channel->recorded, memory_order_relaxed)))
            return true;
        if (!channel_reached(channel, atomic_load_explicit(&page->waited[i], memory_order_relaxed)))
            return true;
    }
    return false;
}

static void page_free(gpu_page *page)
{
    rt_guard guard;
    if (rt_guard_enter(&guard, page->device->context, RT_NEED_DEVICE) == RT_SUCCESS) {
        (void)rt_host_unregister(page->layout);
        rt_guard_leave(&guard);
    }
    /* The lock is not destroyed: other processes may be using it. */
    munmap(page->layout, PAGE_BYTES);
    close(page->fd);
    free(page);
}

/* Frees the retired pages whose writes and waits are done. */
static void sweep_retired(void)
{
    pthread_mutex_lock(&retired.lock);
    gpu_page **link = &retired.first, *done = NULL;
    while (*link) {
        gpu_page *page = *link;
        if (device_use_pending(page)) {
            link = &page->next;
            continue;
        }
        *link = page->next;
        page->next = done;
        done = page;
    }
    pthread_mutex_unlock(&retired.lock);
    while (done) {
        gpu_page *next = done->next;
        page_free(done);
        done = next;
    }
}

static void page_unref(gpu_page *page)
{
    if (atomic_fetch_sub_explicit(&page->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_mutex_lock(&retired.lock);
    page->next = retired.first;
    retired.first = page;
    pthread_mutex_unlock(&retired.lock);
}

void gpu_page_release(gpu_page *page)
{
    page_unref(page);
    sweep_retired();
}

/* Maps, registers and wraps a checked descriptor; closes it on failure. */
static tp_status page_wrap(gpu_device *device, int fd, bool fresh, bool own, uint64_t token, unsigned flags,
                           const char *who, gpu_page **out)
{
    page_layout *layout = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (layout == MAP_FAILED) {
        int err = errno;
        close(fd);
        return gpu.host->fail(TP_ERR_BACKEND, "%s: mmap of the event's shared page: %s", who, strerror(err));
    }
    tp_status status = TP_OK;
    if (fresh) {
        memcpy(layout->magic, PAGE_MAGIC, sizeof layout->magic);
        layout->layout_version = PAGE_LAYOUT_VERSION;
        layout->size = PAGE_BYTES;
        layout->token = token;
        layout->flags = flags & TP_EVENT_BLOCKING;
        int err = tp_ipc_shared_mutex_init(&layout->lock);
        if (err != 0)
            status = gpu.host->fail(TP_ERR_BACKEND, "%s: a process-shared robust mutex: %s", who, strerror(err));
    } else if (memcmp(layout->magic, PAGE_MAGIC, sizeof layout->magic) != 0 ||
               layout->layout_version != PAGE_LAYOUT_VERSION || layout->size != PAGE_BYTES || layout->token != token) {
        status = gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                                "%s: the descriptor received is not the sender's event page (magic, layout or token "
                                "differs: another build of tpevent?)",
                                who);
    }
    gpu_page *page = status == TP_OK ? calloc(1, sizeof *page) : NULL;
    if (status == TP_OK && !page)
        status = gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    rt_guard guard;
    rt_error e = RT_SUCCESS;
    const char *call = RT_CALL("SetDevice");
    if (status == TP_OK && (e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE)) == RT_SUCCESS) {
        call = RT_HOST_REGISTER_CALL;
        e = rt_host_register_mapped(layout, PAGE_BYTES);
        if (e == RT_SUCCESS) {
            call = RT_CALL("HostGetDevicePointer");
            e = rt_host_device_pointer(&page->device_pointer, layout);
            if (e != RT_SUCCESS)
                (void)rt_host_unregister(layout);
        }
        rt_guard_leave(&guard);
    }
    if (status == TP_OK && e != RT_SUCCESS)
        status = gpu_fail_call(call, e);
    if (status != TP_OK) {
        free(page);
        munmap(layout, PAGE_BYTES);
        close(fd);
        return status;
    }
    atomic_init(&page->refs, 1);
    page->fd = fd;
    page->layout = layout;
    page->device = device;
    page->tag = tp_ipc_random_token();
    atomic_init(&page->claimed, 0);
    for (unsigned i = 0; i < PAGE_CHANNELS; i++)
        atomic_init(&page->waited[i], 0);
    page->lock_offset = 0;
    atomic_init(&page->next_liveness_check_ns, 0);
    atomic_init(&page->dead_ticket, 0);
    if (own)
        page->lock_offset = tp_ipc_liveness_lock(fd);
    *out = page;
    return TP_OK;
}

/* Streams must write and wait on host memory: the device's stream memory operations. */
tp_status gpu_page_check_support(gpu_device *device, const char *who)
{
    const char *why = "";
    if (rt_stream_wait_value_supported(device->index, &why))
        return TP_OK;
    return gpu.host->fail(TP_ERR_UNSUPPORTED,
                          "%s: %s:%d cannot hand events over a socket: its streams would write and wait on host "
                          "memory (%s, %s), and %s",
                          who, RT_BACKEND_NAME, device->index, RT_WRITE_VALUE_CALL, RT_WAIT_VALUE_CALL, why);
}

tp_status gpu_page_create(gpu_device *device, unsigned flags, gpu_page **out)
{
    static const char who[] = "tp_event_ipc_send";
    sweep_retired();
    tp_status status = gpu_page_check_support(device, who);
    if (status != TP_OK)
        return status;
    bool sizing_failed;
    int fd = tp_ipc_sealed_memfd("tpevent-gpu-event", PAGE_BYTES, &sizing_failed);
    if (fd < 0 && sizing_failed)
        return gpu.host->fail(TP_ERR_BACKEND, "%s: sizing the event's shared page: %s", who, strerror(errno));
    if (fd < 0)
        return gpu.host->fail(TP_ERR_BACKEND, "%s: memfd_create: %s", who, strerror(errno));
    return page_wrap(device, fd, true, true, tp_ipc_random_token(), flags, who, out);
}

tp_status gpu_page_adopt(gpu_device *device, int fd, const unsigned char *payload, size_t length, gpu_page **out)
{
    static const char who[] = "tp_event_ipc_recv";
    sweep_retired();
    uint32_t version = length == GPU_PAGE_PAYLOAD_SIZE ? tp_get_u32(payload) : 0;
    uint32_t size = length == GPU_PAGE_PAYLOAD_SIZE ? tp_get_u32(payload + 4) : 0;
    uint64_t token = length == GPU_PAGE_PAYLOAD_SIZE ? tp_get_u64(payload + 8) : 0;
    struct stat st;
    tp_status status = gpu_page_check_support(device, who);
    if (status == TP_OK && (version != PAYLOAD_VERSION || size != PAGE_BYTES || token == 0))
        status = gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                                "%s: the %s payload (%zu bytes, version %u, page of %u bytes) is not one this library "
                                "writes (%u bytes, version %u, %u bytes: another build of tpevent?)",
                                who, RT_BACKEND_NAME, length, (unsigned)version, (unsigned)size, GPU_PAGE_PAYLOAD_SIZE,
                                PAYLOAD_VERSION, PAGE_BYTES);
    if (status == TP_OK && (fstat(fd, &st) != 0 || st.st_size != (off_t)PAGE_BYTES))
        status = gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the descriptor received is not of the page's size", who);
    if (status != TP_OK) {
        close(fd);
        return status;
    }
    bool own = tp_ipc_reopen_own(&fd);
    return page_wrap(device, fd, false, own, token, 0, who, out);
}

void gpu_page_describe(const gpu_page *page, int *fd, unsigned char *payload, size_t *length)
{
    tp_put_u32(payload, PAYLOAD_VERSION);
    tp_put_u32(payload + 4, PAGE_BYTES);
    tp_put_u64(payload + 8, page->layout->token);
    *length = GPU_PAGE_PAYLOAD_SIZE;
    *fd = page->fd;
}

unsigned gpu_page_flags(const gpu_page *page)
{
    return page->layout->flags & TP_EVENT_BLOCKING;
}

/* ------------------------------------------------------------- records */

TP_COLD tp_status gpu_page_refused_in_capture(const char *operation)
{
    return gpu.host->fail(TP_ERR_CAPTURING,
                          "%s: an event handed over a socket cannot be recorded or waited on inside a capture: a "
                          "graph would write and wait on the same counter value at every launch (rule 16)",
                          operation);
}

tp_status gpu_page_record(gpu_page *page, gpu_stream *stream)
{
    if (stream_capturing(stream))
        return gpu_page_refused_in_capture("tp_event_record");
    page_layout *layout = page->layout;
    uint64_t owner = (page->tag ^ (uint64_t)(uintptr_t)stream * UINT64_C(0x9e3779b97f4a7c15)) | 1;
    if (!page_lock(layout))
        return lock_failed("tp_event_record");
    unsigned index;
    page_channel *channel = channel_claim(page, owner, &index);
    if (!channel) {
        pthread_mutex_unlock(&layout->lock);
        return all_channels_busy();
    }
    /* Under the lock, so that two threads recording on one stream enqueue their
     * writes in the order of their values. */
    uint64_t count = atomic_load_explicit(&channel->recorded, memory_order_relaxed) + 1;
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = rt_stream_write_value64(stream->native, device_pointer_of(page, &channel->reached), count & COUNT_MASK);
        rt_guard_leave(&guard);
    }
    if (e == RT_SUCCESS) {
        atomic_store_explicit(&channel->owner_lock, page->lock_offset, memory_order_relaxed);
        atomic_store_explicit(&channel->recorded, count, memory_order_relaxed);
        atomic_store_explicit(&layout->latest, (uint64_t)index << TICKET_SHIFT | (count & COUNT_MASK),
                              memory_order_release);
    }
    pthread_mutex_unlock(&layout->lock);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_WRITE_VALUE_CALL, e);
}

typedef struct adopted_record {
    gpu_page *page;
    page_channel *channel;
    uint64_t count;
} adopted_record;

static void adopted_record_reached(void *arg)
{
    adopted_record *record = arg;
    atomic_store_explicit(&record->channel->reached, record->count, memory_order_release);
    gpu_page_release(record->page); /* the last hold frees the page once the device is done with it */
    free(record);
}

tp_status gpu_page_adopt_record(gpu_page *page, const tp_snapshot *snapshot)
{
    adopted_record *record = malloc(sizeof *record);
    if (!record)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_ipc_send: out of memory");
    page_layout *layout = page->layout;
    if (!page_lock(layout)) {
        free(record);
        return lock_failed("tp_event_ipc_send");
    }
    if (atomic_load_explicit(&layout->latest, memory_order_relaxed) != 0) {
        /* A record through the page came first: it is the later one (rule 3). */
        pthread_mutex_unlock(&layout->lock);
        free(record);
        return TP_OK;
    }
    unsigned index;
    page_channel *channel = channel_claim(page, page->tag & ~(uint64_t)1, &index); /* the host's own writer */
    if (!channel) {
        pthread_mutex_unlock(&layout->lock);
        free(record);
        return all_channels_busy();
    }
    uint64_t count = atomic_load_explicit(&channel->recorded, memory_order_relaxed) + 1;
    atomic_store_explicit(&channel->owner_lock, page->lock_offset, memory_order_relaxed);
    atomic_store_explicit(&channel->recorded, count, memory_order_relaxed);
    atomic_store_explicit(&layout->latest, (uint64_t)index << TICKET_SHIFT | count, memory_order_release);
    pthread_mutex_unlock(&layout->lock);
    *record = (adopted_record){page, channel, count};
    atomic_fetch_add_explicit(&page->refs, 1, memory_order_relaxed);
    tp_status status = gpu_snapshot_notify(snapshot, adopted_record_reached, record);
    if (status != TP_OK) {
        /* Nothing will tell: reached now rather than never (the send fails anyway). */
        adopted_record_reached(record);
    }
    return status;
}
