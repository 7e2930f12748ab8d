/*
 * Fuzz target: importing IPC handles (tp_event_from_ipc_handle).
 *
 * Input: one control byte, then up to TP_IPC_HANDLE_SIZE bytes.
 *   control bits 0-1, how the handle is made:
 *     0  the bytes as they are (zero-padded): mostly stops at the core's header checks;
 *     1  the bytes, resealed: magic, layout version, a device of a type that exists
 *        (mostly), a payload length that fits, zeros after the payload and the
 *        FNV-1a checksum are set right, so that the backend's payload checks are
 *        what gets fuzzed;
 *     2  a valid handle of a CPU event, exported here, XORed with the bytes;
 *     3  as 2, then resealed, so that the mutated payload passes the core's checks.
 *   bits 2-3, the device argument: NULL, "cpu", "cpu:0", "cpu:1";
 *   bit 4, the exported event's device: cpu:0 or cpu:1;
 *   bit 5, whether the exported event is recorded before export.
 * Until the CPU backend exports handles, modes 2 and 3 start from a handle this file
 * seals itself (an empty payload of the right device), which the core accepts.
 *
 * What must hold: any status is allowed (import may be unsupported, or refuse the
 * payload), but it is a tp_status, a failure says why and leaves *out alone, and an
 * event that is imported is of a CPU device and can be queried, recorded,
 * synchronized, waited on and destroyed. One exception: a handle the backend exported, not
 * mutated and imported with a NULL device string, must import.
 */
#include "fuzz_common.h"

#include <string.h>

/* core/backend.h's layout, written out here so that the test does not trust the
 * code it tests for it. */
enum {
    HANDLE_SIZE = TP_IPC_HANDLE_SIZE,
    HEADER_SIZE = 16,
    PAYLOAD_MAX = HANDLE_SIZE - HEADER_SIZE,
    LAYOUT_VERSION = 1,
};

enum handle_mode { MODE_RAW, MODE_RESEALED, MODE_MUTATED_EXPORT, MODE_MUTATED_EXPORT_RESEALED };

static const char *const device_arguments[4] = {NULL, "cpu", "cpu:0", "cpu:1"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_prepare_environment();
    return 0;
}

/*
 * Makes the header valid around whatever payload the bytes hold. The device type
 * and index are reduced rather than forced, so that most handles name cpu:0 or
 * cpu:1 while some still name another backend or a device that does not exist.
 */
static void reseal(tp_ipc_handle *handle)
{
    unsigned char *b = handle->bytes;
    memcpy(b, "TPEV", 4);
    b[4] = LAYOUT_VERSION;
    b[5] = 0;
    b[6] = (unsigned char)(b[6] % 8 < 6 ? TP_DEVICE_CPU : b[6] % 4); /* 3: no such type */
    b[7] = (unsigned char)(b[7] % 3);                                /* 2: past the end */
    uint32_t length = fuzz_get_u32(b + 8) % (PAYLOAD_MAX + 1);
    fuzz_put_u32(b + 8, length);
    memset(b + HEADER_SIZE + length, 0, PAYLOAD_MAX - length);
    uint32_t hash = fuzz_fnv1a(2166136261u, b, 12);
    fuzz_put_u32(b + 12, fuzz_fnv1a(hash, b + HEADER_SIZE, length));
}

/* A header-valid handle of cpu:<index> with an empty payload. */
static void seal_empty(tp_ipc_handle *handle, int index)
{
    memset(handle->bytes, 0, sizeof handle->bytes);
    handle->bytes[6] = TP_DEVICE_CPU;
    handle->bytes[7] = (unsigned char)index;
    reseal(handle);
}

/* Exports a live event of cpu:<index>; the caller destroys *event (NULL if the
 * backend exports nothing yet, and the handle is then sealed here). */
static void export_cpu_handle(int index, bool recorded, tp_ipc_handle *handle, tp_event **event)
{
    const char *device = index ? "cpu:1" : "cpu:0";
    *event = NULL;
    FUZZ_REQUIRE(tp_event_create(event, device, TP_EVENT_INTERPROCESS) == TP_OK);
    if (recorded)
        FUZZ_REQUIRE(tp_event_record(*event, NULL) == TP_OK);
    tp_status status = tp_event_ipc_handle(*event, handle);
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    if (status == TP_OK)
        return;
    FUZZ_REQUIRE(status == TP_ERR_UNSUPPORTED);
    FUZZ_REQUIRE(tp_event_destroy(*event) == TP_OK);
    *event = NULL;
    seal_empty(handle, index);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned control = data[0];
    const uint8_t *bytes = data + 1;
    size_t count = size - 1 < HANDLE_SIZE ? size - 1 : HANDLE_SIZE;
    enum handle_mode mode = (enum handle_mode)(control & 3u);

    tp_ipc_handle handle;
    tp_event *exported = NULL;
    bool mutated = false;
    if (mode == MODE_RAW || mode == MODE_RESEALED) {
        memset(&handle, 0, sizeof handle);
        memcpy(handle.bytes, bytes, count);
    } else {
        export_cpu_handle((control >> 4) & 1u, (control >> 5) & 1u, &handle, &exported);
        for (size_t i = 0; i < count; i++) {
            handle.bytes[i] ^= bytes[i];
            mutated |= bytes[i] != 0;
        }
    }
    if (mode == MODE_RESEALED || mode == MODE_MUTATED_EXPORT_RESEALED)
        reseal(&handle);

    tp_event *sentinel = (tp_event *)&sentinel;
    tp_event *imported = sentinel;
    tp_status status = tp_event_from_ipc_handle(&imported, device_arguments[(control >> 2) & 3u], &handle);
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    /* A handle exported here and left as it was imports (rule 8), in this process
     * too, when no device string second-guesses it. */
    if (exported && !mutated && device_arguments[(control >> 2) & 3u] == NULL)
        FUZZ_REQUIRE(status == TP_OK);
    if (status == TP_OK) {
        FUZZ_REQUIRE(imported != NULL && imported != sentinel);
        fuzz_use_cpu_event(imported);
        FUZZ_REQUIRE(tp_event_destroy(imported) == TP_OK);
    } else {
        FUZZ_REQUIRE(imported == sentinel);
        FUZZ_REQUIRE_FAILURE_EXPLAINED();
    }
    if (exported)
        FUZZ_REQUIRE(tp_event_destroy(exported) == TP_OK);
    return 0;
}
