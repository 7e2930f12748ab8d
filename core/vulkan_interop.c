/*
 * A Vulkan user's work on a tpevent stream (include/tpevent/vulkan.h): the checks
 * every backend would repeat, then the backend's entries. A backend without them
 * (every one but vulkan) is refused here, saying why.
 */
#include "core/internal.h"

#include <stddef.h>
#include <string.h>

/* The fields a caller must have room for: up to the queue, what interop needs. */
#define INFO_LEAST (offsetof(tp_vulkan_info, queue) + sizeof(void *))

static tp_status not_vulkan(const tp_stream *stream, const char *call)
{
    return tp_fail(TP_ERR_UNSUPPORTED, "%s: the %s backend does not support it: its streams are not Vulkan queues",
                   call, stream->backend->name);
}

tp_status tp_vulkan_stream_info(tp_stream *stream, tp_vulkan_info *info)
{
    static const char call[] = "tp_vulkan_stream_info";
    if (!stream || !info)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", call, stream ? "info" : "stream");
    if (info->size < INFO_LEAST)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: info->size is %zu: set it to sizeof(tp_vulkan_info)", call,
                       info->size);
    if (!stream->backend->vulkan_stream_info)
        return not_vulkan(stream, call);
    tp_vulkan_info full;
    memset(&full, 0, sizeof full);
    full.size = sizeof full;
    tp_status status = stream->backend->vulkan_stream_info(stream, &full);
    if (status != TP_OK)
        return status;
    size_t size = info->size < sizeof full ? info->size : sizeof full;
    full.size = info->size;
    memcpy(info, &full, size);
    return TP_OK;
}

tp_status tp_vulkan_stream_submit(tp_stream *stream, void *const *cmds, uint32_t count)
{
    static const char call[] = "tp_vulkan_stream_submit";
    if (!stream || !cmds)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", call, stream ? "cmds" : "stream");
    if (count == 0 || count > TP_VULKAN_SUBMIT_MOST)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: count is %u: give 1 to %u command buffers", call, count,
                       TP_VULKAN_SUBMIT_MOST);
    for (uint32_t i = 0; i < count; i++)
        if (!cmds[i])
            return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: cmds[%u] is VK_NULL_HANDLE", call, i);
    if (!stream->backend->vulkan_stream_submit)
        return not_vulkan(stream, call);
    return stream->backend->vulkan_stream_submit(stream, cmds, count);
}
