/*
 * The calling thread's current stream per device (rule 11), which starts as the
 * device's default stream: kept apart from the stream calls so that the event calls
 * (a NULL stream) and the trace read it without calling them.
 */
#include "core/internal.h"

#include <pthread.h>
#include <string.h>

/*
 * Per thread and per device. A slot holds the stream set current, or, once looked
 * up, the default stream, so that the record/wait path with a NULL stream is a
 * thread-local load.
 */
static _Thread_local tp_stream *thread_current_stream[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES];

/* In a child of fork() the streams the parent's thread had current are inherited
 * ones, which fail at once there (README, fork): the child's only thread, the one
 * that forked, starts again from the child's own default streams. */
static void forget_current_streams_after_fork(void)
{
    memset(thread_current_stream, 0, sizeof thread_current_stream);
}

__attribute__((constructor)) static void register_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, forget_current_streams_after_fork);
}

tp_status tp_stream_current_of(tp_device device, const tp_backend *backend, tp_stream **out)
{
    tp_stream **slot = &thread_current_stream[device.type][device.index];
    if (TP_LIKELY(*slot != NULL)) {
        *out = *slot;
        return TP_OK;
    }
    tp_status status = backend->stream_default(device.index, slot);
    if (status == TP_OK)
        *out = *slot;
    return status;
}

void tp_stream_forget_current(const tp_stream *stream)
{
    tp_stream **slot = &thread_current_stream[stream->device.type][stream->device.index];
    if (*slot == stream)
        *slot = NULL;
}

tp_status tp_stream_current(const char *device_str, tp_stream **out)
{
    tp_device device;
    const tp_backend *backend;
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_current: out is NULL");
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    return tp_stream_current_of(device, backend, out);
}

tp_status tp_stream_set_current(tp_stream *stream)
{
    if (!stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_set_current: stream is NULL");
    thread_current_stream[stream->device.type][stream->device.index] = stream;
    return TP_OK;
}
