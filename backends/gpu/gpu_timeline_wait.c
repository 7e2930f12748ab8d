/*
 * A GPU stream waiting, on the device, for another runtime's record exported as a
 * timeline semaphore (core/backend.h's stream_wait_timeline; issue 56): CUDA imports
 * the semaphore's opaque fd once (cudaImportExternalSemaphore, a timeline fd) and
 * queues cudaWaitExternalSemaphoresAsync for the record's value on the stream, in
 * its order with everything else queued there (holds and host functions are stream
 * memory operations on the same stream). No host thread takes part, unlike the host
 * path (gpu_hold.c's hold let go by the other backend's notify).
 *
 * Where it is taken is the drivers' answer: the device's
 * cudaDevAttrTimelineSemaphoreInteropSupported, and the exporter's device UUID
 * against this device's (a semaphore is one GPU's), both asked once per device.
 * HIP and the fake runtime have no mapping for it (runtime_cuda_semaphore.h): they
 * say so, and the core takes the host path. Not modelled by the fake GPU: the
 * device's path is run on a GPU only (scripts/gpu-check.sh's Vulkan step).
 */
#include "backends/gpu/gpu_timeline_wait.h"
#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda_semaphore.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RT_HAS_EXTERNAL_TIMELINES

/* An imported semaphore: an exporter's key on one device. Kept for the process's
 * life, as the exporter keeps the semaphore (core/backend.h); so is a refusal, so
 * that the runtime is not asked again at each wait. */
typedef struct imported_timeline {
    uint64_t key;
    int device;
    bool refused; /* the runtime refused the import: the host path waits */
    rt_external_semaphore semaphore;
} imported_timeline;

/* What each device answered (asked at the first need), and the imports. */
typedef struct device_answer {
    bool asked, supported;
    unsigned char uuid[16];
    char how[160];
} device_answer;

static struct {
    pthread_mutex_t lock;
    device_answer *answers; /* gpu.device_count of them */
    imported_timeline *imports;
    size_t count, capacity;
} timelines = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Under the lock. NULL: out of memory. */
static const device_answer *device_answered(int device)
{
    if (!timelines.answers)
        timelines.answers = calloc((size_t)gpu.device_count, sizeof *timelines.answers);
    if (!timelines.answers)
        return NULL;
    device_answer *answer = &timelines.answers[device];
    if (answer->asked)
        return answer;
    answer->asked = true;
    bool interop = false;
    rt_error e = rt_timeline_interop(device, &interop);
    if (e == RT_SUCCESS)
        e = rt_device_uuid(device, answer->uuid);
    if (e != RT_SUCCESS)
        snprintf(answer->how, sizeof answer->how, "%s:%d: %s", RT_BACKEND_NAME, device, rt_error_name(e));
    else if (!interop)
        snprintf(answer->how, sizeof answer->how,
                 "cudaDevAttrTimelineSemaphoreInteropSupported is 0: the device imports no timeline semaphores");
    else
        snprintf(answer->how, sizeof answer->how, "%s of a timeline fd, then %s", RT_IMPORT_SEMAPHORE_CALL,
                 RT_WAIT_SEMAPHORE_CALL);
    answer->supported = e == RT_SUCCESS && interop;
    return answer;
}

/* Under the lock: the device's import of the exporter's semaphore, made at its first
 * wait (the fd dup'ed: the runtime takes what it imports). False: not imported. */
static bool imported(int device, const tp_timeline_export *timeline, rt_external_semaphore *out)
{
    for (size_t i = 0; i < timelines.count; i++)
        if (timelines.imports[i].key == timeline->key && timelines.imports[i].device == device) {
            *out = timelines.imports[i].semaphore;
            return !timelines.imports[i].refused;
        }
    if (timelines.count == timelines.capacity) {
        size_t capacity = timelines.capacity ? 2 * timelines.capacity : 16;
        imported_timeline *grown = realloc(timelines.imports, capacity * sizeof *grown);
        if (!grown)
            return false;
        timelines.imports = grown;
        timelines.capacity = capacity;
    }
    int fd = dup(timeline->fd);
    if (fd < 0)
        return false; /* out of descriptors: tried again at the next wait */
    bool refused = rt_import_timeline_fd(fd, out) != RT_SUCCESS;
    if (refused)
        close(fd);
    timelines.imports[timelines.count++] = (imported_timeline){timeline->key, device, refused, *out};
    return !refused;
}

tp_status gpu_timeline_import_support(int device, const unsigned char uuid[16], char *how, size_t how_size)
{
    pthread_mutex_lock(&timelines.lock);
    const device_answer *answer = device_answered(device);
    bool same_gpu = answer && memcmp(answer->uuid, uuid, 16) == 0;
    if (!answer)
        snprintf(how, how_size, "out of memory");
    else if (answer->supported && !same_gpu)
        snprintf(how, how_size, "the exporter is another GPU (its device UUID is not %s:%d's)", RT_BACKEND_NAME,
                 device);
    else
        snprintf(how, how_size, "%s", answer->how);
    bool supported = answer && answer->supported && same_gpu;
    pthread_mutex_unlock(&timelines.lock);
    return supported ? TP_OK : TP_ERR_UNSUPPORTED;
}

/* Rule 17: each wait takes a place in the stream's window of holds (gpu_hold.c), given
 * back once the record is reached (the core calls *passed then): the runtime's queue
 * is finite, and a wait past the window would block the caller. With the window full
 * the wait is refused, and the core's host path makes it a hold, which joins. */
tp_status gpu_stream_wait_timeline(tp_stream *base, const tp_timeline_export *timeline, void (**passed)(void *),
                                   void **arg)
{
    gpu_stream *stream = gpu_as_stream(base);
    int device = stream->device->index;
    rt_guard guard;
    if (rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE) != RT_SUCCESS)
        return TP_ERR_UNSUPPORTED; /* the host path says what failed */
    pthread_mutex_lock(&timelines.lock);
    const device_answer *answer = device_answered(device);
    rt_external_semaphore semaphore;
    bool ready = answer && answer->supported && memcmp(answer->uuid, timeline->uuid, 16) == 0 &&
                 imported(device, timeline, &semaphore);
    pthread_mutex_unlock(&timelines.lock);
    if (ready && gpu_hold_slot(stream, passed, arg) != TP_OK)
        ready = false;
    rt_error e = ready ? rt_wait_timeline(semaphore, timeline->value, stream->native) : RT_SUCCESS;
    rt_guard_leave(&guard);
    if (!ready)
        return TP_ERR_UNSUPPORTED;
    if (e != RT_SUCCESS) {
        (*passed)(*arg); /* nothing queued: the place goes back at once */
        return gpu_fail_call(RT_WAIT_SEMAPHORE_CALL, e);
    }
    return TP_OK;
}

#else /* HIP, the fake runtime */

tp_status gpu_timeline_import_support(int device, const unsigned char uuid[16], char *how, size_t how_size)
{
    (void)device;
    (void)uuid;
    snprintf(how, how_size, "%s's mapping has no external timeline semaphores (runtime_cuda_semaphore.h is CUDA's)",
             RT_BACKEND_NAME);
    return TP_ERR_UNSUPPORTED;
}

tp_status gpu_stream_wait_timeline(tp_stream *stream, const tp_timeline_export *timeline, void (**passed)(void *),
                                   void **arg)
{
    (void)stream;
    (void)timeline;
    (void)passed;
    (void)arg;
    return TP_ERR_UNSUPPORTED;
}

#endif
