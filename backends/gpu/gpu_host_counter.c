/*
 * Counters in mapped host memory that hold GPU streams (stream memory operations):
 * a stream's wait for "counter >= n" passes once the host stores n. Host functions
 * (gpu_host_fn.c) hold their streams on them.
 *
 * One 64-byte line per counter (the threads of two streams never write the same
 * line), from slabs of mapped host memory per device, so that 40,000 streams pin
 * 2.5 MB rather than a page each. A counter only grows: whoever takes a free
 * counter goes on from the value it has, so no wait its last owner left (all
 * passed) can be armed again (a captured host function's node lowers its own
 * counter by one at each launch, never below the value it was taken at, and
 * raises it back before giving it: gpu_host_fn_graph.c). Every value stays below
 * 2^63 (HIP compares plainly, CUDA cyclically: see the mappings).
 *
 * Process exit. An exit handler (registered with the first counter taken) marks
 * the process exiting, then raises every counter of every slab by 2^62: every wait
 * ever enqueued passes, so no GPU stream stays held and the runtime's teardown
 * finds none blocked. From then on no counter is handed out.
 */
#include "backends/gpu/gpu_internal.h"
#include "common/array.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* One counter per cache line, 1024 per slab. */
#define COUNTER_BYTES 64u
#define SLAB_BYTES 65536u
#define SLAB_COUNTERS (SLAB_BYTES / COUNTER_BYTES)

/* What the exit handler adds to every counter: more than any stream is ever
 * ahead of its counter, and 2^63 is never reached. */
#define RELEASE_STEP (UINT64_C(1) << 62)

/* Never freed: the exit handler walks the slabs without a lock of its own. */
typedef struct counter_slab {
    struct counter_slab *next; /* set before the slab is published */
    unsigned char *memory;
} counter_slab;

enum { SUPPORT_UNKNOWN, SUPPORT_YES, SUPPORT_NO };

typedef struct counter_device {
    _Atomic int support; /* SUPPORT_*: decided at the device's first need */
    /* Why SUPPORT_NO, for `tpevent devices` and a debugger. */
    const char *_Atomic unsupported_reason;
    _Atomic(counter_slab *) slabs;
    /* Under counters.lock: the free ones, with room for every counter of every
     * slab (made: all counters of its slabs), since all may be given back. */
    gpu_counter *free;
    size_t free_count, free_capacity, made;
} counter_device;

static struct {
    /* Slabs, free counters, the exit handler's registration. Never held around a
     * call that waits for the device (the one runtime call made under it,
     * cudaHostAlloc, does not). */
    pthread_mutex_t lock;
    atomic_bool exiting;
    bool exit_handler_registered;
    pid_t owner; /* the process that registered it: a forked child inherits it */
    counter_device devices[TP_MAX_DEVICES];
} counters = {.lock = PTHREAD_MUTEX_INITIALIZER};

void gpu_counter_raise(_Atomic uint64_t *counter, uint64_t value)
{
    /* Raised, never lowered: the exit handler may have raised it further. */
    uint64_t current = atomic_load_explicit(counter, memory_order_relaxed);
    while (current < value && !atomic_compare_exchange_weak_explicit(counter, &current, value, memory_order_release,
                                                                     memory_order_relaxed)) {
    }
}

bool gpu_counters_supported(gpu_device *device)
{
    counter_device *slot = &counters.devices[device->index];
    int support = atomic_load_explicit(&slot->support, memory_order_acquire);
    if (TP_LIKELY(support != SUPPORT_UNKNOWN))
        return support == SUPPORT_YES;
    const char *why = "";
    support = rt_stream_wait_value_supported(device->index, &why) ? SUPPORT_YES : SUPPORT_NO;
    if (support == SUPPORT_NO)
        atomic_store_explicit(&slot->unsupported_reason, why, memory_order_relaxed);
    atomic_store_explicit(&slot->support, support, memory_order_release);
    return support == SUPPORT_YES;
}

const char *gpu_counters_unsupported_reason(gpu_device *device)
{
    return gpu_counters_supported(device)
               ? NULL
               : atomic_load_explicit(&counters.devices[device->index].unsupported_reason, memory_order_relaxed);
}

/* ------------------------------------------------------------ process exit */

static void counters_at_exit(void)
{
    /* A child forked without exec has none of the streams and cannot use the
     * device; the counters may not even be mapped in it (pinned memory is often
     * not inherited), and the lock may have been held at the fork. */
    if (getpid() != counters.owner)
        return;
    atomic_store_explicit(&counters.exiting, true, memory_order_seq_cst);
    /* The lock keeps a slab from being added unseen; nothing holds it for long. */
    pthread_mutex_lock(&counters.lock);
    for (int d = 0; d < gpu.device_count; d++) {
        counter_slab *slab = atomic_load_explicit(&counters.devices[d].slabs, memory_order_acquire);
        for (; slab; slab = slab->next)
            for (size_t i = 0; i < SLAB_COUNTERS; i++)
                /* seq_cst: ordered after `exiting` for a captured host function's
                 * doorbell, which lowers its counter and then looks at it. */
                atomic_fetch_add_explicit((_Atomic uint64_t *)(void *)(slab->memory + i * COUNTER_BYTES), RELEASE_STEP,
                                          memory_order_seq_cst);
    }
    pthread_mutex_unlock(&counters.lock);
}

bool gpu_counters_exiting(void)
{
    return atomic_load_explicit(&counters.exiting, memory_order_acquire);
}

/* The exit handler knows no gate's condition to signal, so gates look again every
 * 10 ms: exit then waits that long at most for the runtime's callback thread. */
void gpu_wait_unless_exiting(pthread_cond_t *cond, pthread_mutex_t *lock)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 10000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    (void)pthread_cond_timedwait(cond, lock, &until);
}

TP_COLD tp_status gpu_counters_refused_at_exit(const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND, "%s: the process is exiting: %s streams are no longer held", operation,
                          RT_BACKEND_NAME);
}

/* ------------------------------------------------------------------ slabs */

/* A new slab of counters for the device. Under counters.lock. */
static tp_status slab_add(gpu_device *device, counter_device *slot, const char *operation)
{
    if (!tp_array_grow(&slot->free, &slot->free_capacity, slot->made + SLAB_COUNTERS, sizeof *slot->free))
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", operation);
    counter_slab *slab = malloc(sizeof *slab);
    if (!slab)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", operation);
    void *memory = NULL;
    rt_device_ptr base;
    const char *call = RT_CALL("SetDevice");
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        call = RT_HOST_ALLOC_CALL;
        /* A capture in global mode (torch.cuda.graph's, on this thread or any
         * other) forbids host allocations: relaxed, this one does not end it. */
        rt_capture_mode mode = rt_thread_capture_relax_save();
        e = rt_host_alloc_mapped(&memory, SLAB_BYTES);
        rt_thread_capture_restore(mode);
        if (e == RT_SUCCESS) {
            call = RT_CALL("HostGetDevicePointer");
            e = rt_host_device_pointer(&base, memory);
            if (e != RT_SUCCESS)
                (void)rt_host_free(memory);
        }
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        free(slab);
        return gpu_fail_call(call, e);
    }
    slab->memory = memory;
    for (size_t i = SLAB_COUNTERS; i-- > 0;) {
        _Atomic uint64_t *counter = (_Atomic uint64_t *)(void *)(slab->memory + i * COUNTER_BYTES);
        atomic_init(counter, 0);
        slot->free[slot->free_count++] = (gpu_counter){counter, rt_device_ptr_offset(base, i * COUNTER_BYTES)};
    }
    slot->made += SLAB_COUNTERS;
    slab->next = atomic_load_explicit(&slot->slabs, memory_order_relaxed);
    atomic_store_explicit(&slot->slabs, slab, memory_order_release);
    return TP_OK;
}

/* Under counters.lock. */
static tp_status exit_handler_register(const char *operation)
{
    if (counters.exit_handler_registered)
        return TP_OK;
    counters.owner = getpid();
    if (atexit(counters_at_exit) != 0)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: atexit failed", operation);
    counters.exit_handler_registered = true;
    return TP_OK;
}

tp_status gpu_counter_take(gpu_device *device, const char *operation, gpu_counter *out)
{
    pthread_mutex_lock(&counters.lock);
    /* The mark is looked at under the lock, so no counter is handed out after the
     * exit handler walked the slabs. */
    tp_status status = gpu_counters_exiting() ? gpu_counters_refused_at_exit(operation)
                                              : exit_handler_register(operation);
    counter_device *slot = &counters.devices[device->index];
    if (status == TP_OK && slot->free_count == 0)
        status = slab_add(device, slot, operation);
    if (status == TP_OK)
        *out = slot->free[--slot->free_count];
    pthread_mutex_unlock(&counters.lock);
    return status;
}

void gpu_counter_give(gpu_device *device, gpu_counter counter)
{
    pthread_mutex_lock(&counters.lock);
    counter_device *slot = &counters.devices[device->index];
    slot->free[slot->free_count++] = counter; /* there is room for all of them */
    pthread_mutex_unlock(&counters.lock);
}

tp_status gpu_counters_watch_exit(const char *operation)
{
    pthread_mutex_lock(&counters.lock);
    tp_status status = gpu_counters_exiting() ? gpu_counters_refused_at_exit(operation)
                                              : exit_handler_register(operation);
    pthread_mutex_unlock(&counters.lock);
    return status;
}
