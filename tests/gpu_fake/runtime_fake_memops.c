/*
 * The simulated runtime's side of events handed over a Unix socket
 * (backends/gpu/gpu_ipc_page.c): registering host memory, which the fake device
 * sees as it is, and cuStreamWriteValue64, a store of the value once the stream has
 * done its earlier work (release, as the real write's fence), made by the stream's
 * own thread in order with its other work (never the callback thread: the GPU's
 * own write; captured, it is made again at each launch). Modelled where stream memory operations
 * are (not with TPEVENT_FAKE_NO_WAIT_VALUE set).
 */
#include "tests/gpu_fake/runtime_fake_internal.h"

#include <stdatomic.h>
#include <stdlib.h>

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
