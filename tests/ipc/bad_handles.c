/*
 * Handles that must be refused with TP_ERR_INVALID_ARGUMENT and a message, never a
 * crash or a hang: random bytes, a valid handle with any byte or header field
 * changed, truncated or padded payloads, another backend's handle, the handle of
 * an exporter that is gone. Run under ASan in CI, so reading past a payload or
 * mapping something wrong shows.
 *
 * The core checks the header and a checksum; to reach the backend's own checks, a
 * test changes a handle and then reseals it (handle_reseal computes the checksum as
 * the core does).
 */
#include "ipc_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tp_device device_of(const char *text)
{
    tp_device device;
    CHECK_OK(tp_device_parse(text, &device));
    CHECK(device.index != TP_DEVICE_INDEX_CURRENT);
    return device;
}

/* An interprocess event of the device and its handle; the event stays alive, so
 * that what a test refuses is refused for the change it made. */
static tp_ipc_handle export_handle(const char *device, tp_event **event)
{
    *event = new_event(device, TP_EVENT_INTERPROCESS);
    tp_ipc_handle handle;
    memset(&handle, 0xa5, sizeof handle);
    CHECK_OK(tp_event_ipc_handle(*event, &handle));
    CHECK(memcmp(handle.bytes, "TPEV", 4) == 0);
    CHECK(handle_payload_length(&handle) <= HANDLE_PAYLOAD_MAX);
    return handle;
}

static void check_fds_unchanged(int before, const char *what)
{
    int after = open_fd_count();
    if (after != before)
        check_failed(__FILE__, __LINE__, "%s: %d descriptors open before, %d after", what, before, after);
}

TEST(random_bytes_refused)
{
    tp_device device = device_of(env->device);
    int fds_before = open_fd_count();
    uint64_t state = 0x1234567u;
    for (int seed = 0; seed < 4000; seed++) {
        tp_ipc_handle handle;
        for (size_t i = 0; i < TP_IPC_HANDLE_SIZE; i += 8) {
            uint64_t word = next_random(&state);
            memcpy(handle.bytes + i, &word, 8);
        }
        if (seed % 2) {
            /* A header that looks right, with a random payload and checksum. */
            memcpy(handle.bytes, "TPEV\x01\x00", 6);
            handle.bytes[HANDLE_TYPE_OFFSET] = (unsigned char)device.type;
            handle.bytes[HANDLE_INDEX_OFFSET] = (unsigned char)device.index;
            uint32_t length = (uint32_t)(next_random(&state) % (HANDLE_PAYLOAD_MAX + 1));
            handle_set_length(&handle, length);
            memset(handle.bytes + HANDLE_HEADER_SIZE + length, 0, HANDLE_PAYLOAD_MAX - length);
        }
        char what[64];
        snprintf(what, sizeof what, "random handle %d", seed);
        expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
        expect_import(&handle, NULL, TP_ERR_INVALID_ARGUMENT, what);
    }
    check_fds_unchanged(fds_before, "random handles");
    return 0;
}

TEST(random_payloads_refused)
{
    /* Resealed: the core passes them on, and the backend must refuse them. */
    tp_device device = device_of(env->device);
    int fds_before = open_fd_count();
    uint64_t state = 0xfeedfaceu;
    for (uint32_t length = 0; length <= HANDLE_PAYLOAD_MAX; length++) {
        for (int seed = 0; seed < 40; seed++) {
            tp_ipc_handle handle;
            memset(&handle, 0, sizeof handle);
            memcpy(handle.bytes, "TPEV\x01\x00", 6);
            handle.bytes[HANDLE_TYPE_OFFSET] = (unsigned char)device.type;
            handle.bytes[HANDLE_INDEX_OFFSET] = (unsigned char)device.index;
            handle_set_length(&handle, length);
            for (uint32_t i = 0; i < length; i++)
                handle.bytes[HANDLE_HEADER_SIZE + i] = (unsigned char)next_random(&state);
            handle_reseal(&handle);
            char what[64];
            snprintf(what, sizeof what, "a random %u-byte payload (seed %d)", length, seed);
            expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
        }
    }
    check_fds_unchanged(fds_before, "random payloads");
    return 0;
}

TEST(each_byte_flipped_refused)
{
    tp_event *event;
    tp_ipc_handle valid = export_handle(env->device, &event);
    static const unsigned char masks[] = {0x01, 0x10, 0x80, 0xff};
    for (size_t i = 0; i < TP_IPC_HANDLE_SIZE; i++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            tp_ipc_handle handle = valid;
            handle.bytes[i] ^= masks[m];
            char what[64];
            snprintf(what, sizeof what, "a handle with byte %zu ^ 0x%02x", i, masks[m]);
            expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
            expect_import(&handle, NULL, TP_ERR_INVALID_ARGUMENT, what);
        }
    }
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

/* Refused as it is, and refused once resealed (`reseal`), where a reseal keeps the
 * change meaningful. */
static void expect_field_refused(const tp_ipc_handle *handle, const char *device, bool reseal, const char *what)
{
    expect_import(handle, device, TP_ERR_INVALID_ARGUMENT, what);
    if (reseal) {
        tp_ipc_handle resealed = *handle;
        handle_reseal(&resealed);
        char text[128]; /* what (up to 96 bytes) and ", resealed" */
        snprintf(text, sizeof text, "%s, resealed", what);
        expect_import(&resealed, device, TP_ERR_INVALID_ARGUMENT, text);
    }
}

TEST(header_fields_changed_refused)
{
    tp_event *event;
    tp_ipc_handle valid = export_handle(env->device, &event);
    tp_device device = device_of(env->device);
    char what[96];

    for (int i = 0; i < 4; i++) {
        tp_ipc_handle handle = valid;
        handle.bytes[i] = 'x';
        snprintf(what, sizeof what, "magic byte %d changed", i);
        expect_field_refused(&handle, env->device, true, what);
    }
    static const unsigned versions[] = {0, 2, 0x100, 0xffff};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        tp_ipc_handle handle = valid;
        handle.bytes[4] = (unsigned char)versions[i];
        handle.bytes[5] = (unsigned char)(versions[i] >> 8);
        snprintf(what, sizeof what, "layout version %u", versions[i]);
        expect_field_refused(&handle, env->device, true, what);
    }
    for (unsigned type = 0; type < 256; type++) {
        if (type == (unsigned)device.type)
            continue;
        tp_ipc_handle handle = valid;
        handle.bytes[HANDLE_TYPE_OFFSET] = (unsigned char)type;
        snprintf(what, sizeof what, "device type %u", type);
        /* Resealed with a type that exists, it is another backend's handle (see
         * handle_of_another_backend_refused). */
        expect_field_refused(&handle, env->device, type >= TP_DEVICE_TYPE_COUNT, what);
    }
    for (unsigned index = 0; index < 256; index++) {
        if (index == (unsigned)device.index)
            continue;
        tp_ipc_handle handle = valid;
        handle.bytes[HANDLE_INDEX_OFFSET] = (unsigned char)index;
        snprintf(what, sizeof what, "device index %u", index);
        /* Resealed with an index that may exist, the handle names another device
         * of the same backend: the core, not the backend, decides about those. */
        expect_field_refused(&handle, env->device, index >= TP_MAX_DEVICES, what);
    }
    uint32_t length = handle_payload_length(&valid);
    static const uint32_t lengths[] = {HANDLE_PAYLOAD_MAX + 1, 0x100, 0xffff, 0x10000, 0x7fffffff, 0xffffffff};
    for (uint32_t candidate = 0; candidate <= HANDLE_PAYLOAD_MAX; candidate++) {
        if (candidate == length)
            continue;
        tp_ipc_handle handle = valid;
        handle_set_length(&handle, candidate);
        snprintf(what, sizeof what, "payload length %u of %u", candidate, length);
        expect_field_refused(&handle, env->device, false, what);
    }
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        tp_ipc_handle handle = valid;
        handle_set_length(&handle, lengths[i]);
        snprintf(what, sizeof what, "payload length %u", lengths[i]);
        expect_field_refused(&handle, env->device, true, what);
    }
    for (int i = 0; i < 4; i++) {
        tp_ipc_handle handle = valid;
        handle.bytes[HANDLE_CHECKSUM_OFFSET + i] ^= 0x5a;
        snprintf(what, sizeof what, "checksum byte %d changed", i);
        expect_field_refused(&handle, env->device, false, what);
    }
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(truncated_or_padded_payload_refused)
{
    /* Resealed, with the bytes beyond the new length zero as the core wants
     * them: only the backend can tell the payload is not whole. */
    tp_event *event;
    tp_ipc_handle valid = export_handle(env->device, &event);
    uint32_t length = handle_payload_length(&valid);
    char what[96];
    for (uint32_t shorter = 0; shorter < length; shorter++) {
        tp_ipc_handle handle = valid;
        handle_set_length(&handle, shorter);
        memset(handle.bytes + HANDLE_HEADER_SIZE + shorter, 0, HANDLE_PAYLOAD_MAX - shorter);
        handle_reseal(&handle);
        snprintf(what, sizeof what, "the payload truncated to %u of %u bytes", shorter, length);
        expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
    }
    for (uint32_t longer = length + 1; longer <= HANDLE_PAYLOAD_MAX; longer++) {
        tp_ipc_handle handle = valid;
        handle_set_length(&handle, longer);
        handle_reseal(&handle);
        snprintf(what, sizeof what, "the payload padded with zeros to %u of %u bytes", longer, length);
        expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
    }
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

static bool backend_usable(tp_device_type type)
{
    const char *name = tp_device_type_name(type);
    int count = 0;
    return tp_backend_status(name, NULL) == TP_OK && tp_device_count(name, &count) == TP_OK && count > 0;
}

/* Whether "<type>:0" exports handles at all (a backend may not offer IPC). */
static bool backend_exports(tp_device_type type)
{
    char device[16];
    snprintf(device, sizeof device, "%s:0", tp_device_type_name(type));
    tp_event *event = NULL;
    tp_status made = tp_event_create(&event, device, TP_EVENT_INTERPROCESS);
    if (made == TP_ERR_UNSUPPORTED) /* no interprocess events at all (OpenCL) */
        return false;
    CHECK_OK(made);
    tp_ipc_handle handle;
    tp_status status = tp_event_ipc_handle(event, &handle);
    CHECK_OK(tp_event_destroy(event));
    if (status != TP_OK && status != TP_ERR_UNSUPPORTED)
        check_failed(__FILE__, __LINE__, "export on %s: %s: %s", device, tp_status_name(status), tp_last_error());
    return status == TP_OK;
}

/* What importing a handle of "<type>:0" gives when the backend cannot import it:
 * its refusal of the payload, that it offers no IPC, or why there is no such
 * device here. */
static tp_status refusal_by(tp_device_type type)
{
    if (backend_usable(type))
        return backend_exports(type) ? TP_ERR_INVALID_ARGUMENT : TP_ERR_UNSUPPORTED;
    return tp_backend_status(tp_device_type_name(type), NULL) == TP_OK ? TP_ERR_INVALID_DEVICE
                                                                       : TP_ERR_BACKEND_UNAVAILABLE;
}

TEST(handle_of_another_backend_refused)
{
    tp_device device = device_of(env->device);
    tp_event *event;
    tp_ipc_handle valid = export_handle(env->device, &event);
    char what[128];
    int foreign_payloads = 0;

    for (int other = 0; other < TP_DEVICE_TYPE_COUNT; other++) {
        if (other == (int)device.type)
            continue;
        const char *other_name = tp_device_type_name((tp_device_type)other);
        char other_device[16];
        snprintf(other_device, sizeof other_device, "%s:0", other_name);

        /* This backend's handle claiming to be of the other: the checksum
         * refuses it; resealed, the device string disagrees with it. */
        tp_ipc_handle handle = valid;
        handle.bytes[HANDLE_TYPE_OFFSET] = (unsigned char)other;
        handle.bytes[HANDLE_INDEX_OFFSET] = 0;
        snprintf(what, sizeof what, "a %s handle retyped as %s", env->device, other_name);
        expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
        expect_import(&handle, NULL, TP_ERR_INVALID_ARGUMENT, what);
        handle_reseal(&handle);
        snprintf(what, sizeof what, "a %s handle retyped as %s, resealed", env->device, other_name);
        expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
        /* With no device string the handle's own device is used: the other
         * backend, which refuses a payload it did not write, or is not here. */
        expect_import(&handle, NULL, refusal_by((tp_device_type)other), what);

        /* A real handle of the other backend, made to look like this one's:
         * only this backend's check of its payload stands in the way. */
        if (!backend_usable((tp_device_type)other) || !backend_exports((tp_device_type)other))
            continue;
        tp_event *foreign_event;
        tp_ipc_handle foreign = export_handle(other_device, &foreign_event);
        foreign.bytes[HANDLE_TYPE_OFFSET] = (unsigned char)device.type;
        foreign.bytes[HANDLE_INDEX_OFFSET] = (unsigned char)device.index;
        handle_reseal(&foreign);
        snprintf(what, sizeof what, "a %s handle retyped as %s, resealed", other_device, env->device);
        expect_import(&foreign, env->device, TP_ERR_INVALID_ARGUMENT, what);
        expect_import(&foreign, NULL, TP_ERR_INVALID_ARGUMENT, what);
        CHECK_OK(tp_event_destroy(foreign_event));
        foreign_payloads++;
    }
    printf("payloads of %d other backend%s tried on %s\n", foreign_payloads, foreign_payloads == 1 ? "" : "s",
           env->device);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(handle_of_exited_exporter_refused)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    peer_finish(&producer);
    int fds_before = open_fd_count();
    expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, "the handle of an exporter that exited");
    expect_import(&handle, NULL, TP_ERR_INVALID_ARGUMENT, "the handle of an exporter that exited");
    check_fds_unchanged(fds_before, "import of an exited exporter's handle");
    return 0;
}

/* ------------------------------------------------------------- CPU only */

/* The CPU backend imports a handle in the process that exported it: that is what
 * makes the CPU-only refusals below meaningful (the unchanged handle works). */
TEST(cpu_handle_imported_in_its_own_process)
{
    tp_event *event;
    tp_ipc_handle handle = export_handle(env->device, &event);
    tp_ipc_handle again;
    CHECK_OK(tp_event_ipc_handle(event, &again));
    CHECK(memcmp(&handle, &again, sizeof handle) == 0);

    tp_event *imported = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&imported, env->device, &handle));
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(imported, stream));
    CHECK(!event_is_done(event));
    atomic_int after_wait = 0;
    CHECK_OK(tp_event_wait(event, waiter));
    CHECK_OK(tp_stream_launch_host_fn(waiter, flag_host_fn, &after_wait));
    sleep_ms(50);
    CHECK(atomic_load(&after_wait) == 0);
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_stream_synchronize(waiter));
    CHECK(atomic_load(&after_wait) == 1);
    CHECK(event_is_done(imported));

    CHECK_OK(tp_event_destroy(imported));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(cpu_payload_bytes_changed_refused)
{
    /* Every byte of the CPU payload means something (version, size, pid,
     * descriptor, start time, token): any change, resealed, is refused. */
    tp_event *event;
    tp_ipc_handle valid = export_handle(env->device, &event);
    expect_import(&valid, env->device, TP_OK, "the unchanged handle");
    int fds_before = open_fd_count();
    uint32_t length = handle_payload_length(&valid);
    static const unsigned char masks[] = {0x01, 0x02, 0x10, 0x80, 0xff};
    for (uint32_t i = 0; i < length; i++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            tp_ipc_handle handle = valid;
            handle.bytes[HANDLE_HEADER_SIZE + i] ^= masks[m];
            handle_reseal(&handle);
            char what[64];
            snprintf(what, sizeof what, "payload byte %u ^ 0x%02x, resealed", i, masks[m]);
            expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, what);
        }
    }
    check_fds_unchanged(fds_before, "changed payloads");
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(cpu_handle_of_destroyed_event_refused)
{
    tp_event *event;
    tp_ipc_handle handle = export_handle(env->device, &event);
    CHECK_OK(tp_event_destroy(event));
    expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, "the handle of a destroyed event");
    CHECK_ERROR_MENTIONS("destroyed");

    /* A new event's shared memory most likely gets the same descriptor: the
     * token tells the two apart. */
    tp_event *successor;
    tp_ipc_handle successor_handle = export_handle(env->device, &successor);
    expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, "the handle of a destroyed event, fd reused");
    expect_import(&successor_handle, env->device, TP_OK, "the successor's handle");
    CHECK_OK(tp_event_destroy(successor));
    return 0;
}
