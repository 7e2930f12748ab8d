/*
 * The simulated runtime's host memory: mapped allocations (counters, gpu_host_counter.c),
 * and its side of events handed over a Unix socket
 * (backends/gpu/gpu_ipc_page.c): registering host memory, which the fake device
 * sees as it is, and cuStreamWriteValue64, a store of the value once the stream has
 * done its earlier work (release, as the real write's fence), made by the stream's
 * own thread in order with its other work (never the callback thread: the GPU's
 * own write; captured, it is made again at each launch). Modelled where stream memory operations
 * are (not with TPEVENT_FAKE_NO_WAIT_VALUE set).
 */
#include "tests/gpu_fake/runtime_fake_internal.h"
#include "common/env.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * A refused allocation, for the tests of what tpevent does when the runtime has no
 * host memory left: with TPEVENT_FAKE_FAILED_HOST_ALLOC=N (1 to 1,000) the process's
 * Nth mapped host allocation fails, and only that one. A value out of range is a
 * test's mistake: said, and the process stops.
 */
static atomic_ulong host_allocs_made;
static uint64_t failed_host_alloc;
static pthread_once_t failed_host_alloc_once = PTHREAD_ONCE_INIT;

static void failed_host_alloc_read(void)
{
    char refusal[160];
    if (!tp_env_count("TPEVENT_FAKE_FAILED_HOST_ALLOC", 0, 1000, 0, &failed_host_alloc, refusal, sizeof refusal)) {
        fprintf(stderr, "fake GPU: %s\n", refusal);
        abort();
    }
}

rt_error fake_host_alloc(void **host, size_t size)
{
    rt_error forbidden;
    if (fake_capture_forbids_unsafe(&forbidden))
        return forbidden;
    pthread_once(&failed_host_alloc_once, failed_host_alloc_read);
    if (atomic_fetch_add(&host_allocs_made, 1) + 1 == failed_host_alloc)
        return FAKE_ERROR_OUT_OF_MEMORY;
    void *memory = aligned_alloc(64, (size + 63) / 64 * 64);
    if (!memory)
        return FAKE_ERROR_OUT_OF_MEMORY;
    *host = memory;
    return RT_SUCCESS;
}

rt_error fake_host_free(void *host)
{
    free(host);
    return RT_SUCCESS;
}

rt_error fake_host_register(void *host, size_t size)
{
    FAKE_COUNT_CALL();
    return host && size > 0 ? RT_SUCCESS : FAKE_ERROR_INVALID_VALUE;
}

rt_error fake_stream_write_value64(rt_stream s, uintptr_t target, uint64_t value)
{
    FAKE_COUNT_CALL();
    if (!fake_wait_value_supported())
        return FAKE_ERROR_NOT_SUPPORTED;
    if (target == 0 || target % sizeof(uint64_t) != 0)
        return FAKE_ERROR_INVALID_VALUE;
    rt_error captured;
    if (fake_capture_write_value(fake_resolve(s), target, value, &captured))
        return captured; /* made again at each launch (gpu_host_fn_graph.c's signalled nodes) */
    fake_op *op = fake_op_new(OP_WRITE_VALUE);
    if (!op)
        return FAKE_ERROR_OUT_OF_MEMORY;
    op->arg = (void *)target;
    op->value = value;
    return fake_push(s, op);
}
