/*
 * The header of an IPC handle (layout in core/backend.h). The core checks it so that
 * a backend sees only payloads that came from a backend of its own type in a handle
 * of a layout it knows; the checksum catches bytes changed in transit.
 */
#include "core/internal.h"
#include "common/bytes.h"

#include <string.h>

static uint32_t handle_checksum(const tp_ipc_handle *handle, size_t payload_length)
{
    uint32_t hash = tp_fnv1a(TP_FNV1A_BASIS, handle->bytes, 12);
    return tp_fnv1a(hash, handle->bytes + TP_IPC_HEADER_SIZE, payload_length);
}

void tp_ipc_seal(tp_ipc_handle *handle, tp_device device, size_t payload_length)
{
    memcpy(handle->bytes, TP_IPC_MAGIC, 4);
    tp_put_u16(handle->bytes + 4, TP_IPC_LAYOUT_VERSION);
    handle->bytes[6] = (unsigned char)device.type;
    handle->bytes[7] = (unsigned char)device.index;
    tp_put_u32(handle->bytes + 8, (uint32_t)payload_length);
    /* Unused payload bytes are zero, so two handles of one export compare equal. */
    memset(handle->bytes + TP_IPC_HEADER_SIZE + payload_length, 0, TP_IPC_PAYLOAD_MAX - payload_length);
    tp_put_u32(handle->bytes + 12, handle_checksum(handle, payload_length));
}

tp_status tp_ipc_open(const tp_ipc_handle *handle, tp_device *device, size_t *payload_length)
{
    static const char who[] = "tp_event_from_ipc_handle";
    if (memcmp(handle->bytes, TP_IPC_MAGIC, 4) != 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: not a tpevent IPC handle (bad magic)", who);
    uint32_t version = tp_get_u16(handle->bytes + 4);
    if (version != TP_IPC_LAYOUT_VERSION)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: handle layout version %u, this library reads %u", who,
                       (unsigned)version, (unsigned)TP_IPC_LAYOUT_VERSION);
    unsigned type = handle->bytes[6], index = handle->bytes[7];
    if (type >= TP_DEVICE_TYPE_COUNT || index >= TP_MAX_DEVICES)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: handle names device type %u index %u, which do not exist", who,
                       type, index);
    uint32_t length = tp_get_u32(handle->bytes + 8);
    if (length > TP_IPC_PAYLOAD_MAX)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: handle claims a %u-byte payload, at most %u fit", who,
                       (unsigned)length, (unsigned)TP_IPC_PAYLOAD_MAX);
    for (size_t i = TP_IPC_HEADER_SIZE + length; i < TP_IPC_HANDLE_SIZE; i++)
        if (handle->bytes[i] != 0)
            return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: handle has bytes after its payload", who);
    if (tp_get_u32(handle->bytes + 12) != handle_checksum(handle, length))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: handle checksum mismatch (corrupted in transit?)", who);
    *device = (tp_device){(tp_device_type)type, (int)index};
    *payload_length = length;
    return TP_OK;
}
