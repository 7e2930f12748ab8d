/*
 * Fuzz target: device strings, through every call that takes one.
 *
 * Input: the device string up to the first NUL (or the whole input); the bytes after
 * that NUL, if any, are the flags for tp_event_create (little-endian, up to 4). So a
 * corpus file may be a plain string.
 *
 * What must hold for any string:
 *   - tp_device_parse fails with TP_ERR_INVALID_DEVICE and leaves *out alone, or
 *     succeeds and tp_device_format gives back the very same string (the grammar is
 *     strict: one spelling per device);
 *   - tp_set_device and tp_event_create agree with the parser: a string it refuses
 *     they refuse with TP_ERR_INVALID_DEVICE; on the CPU backend (always there, with
 *     TPEVENT_CPU_DEVICES devices) an index in range is accepted and one past the end
 *     refused;
 *   - an event created from the string lives on the device it names and works.
 */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_prepare_environment();
    return 0;
}

static unsigned flags_from(const uint8_t *bytes, size_t size)
{
    unsigned flags = 0;
    for (size_t i = 0; i < size && i < 4; i++)
        flags |= (unsigned)bytes[i] << (8 * i);
    return flags;
}

static int cpu_device_count(void)
{
    int count = -1;
    FUZZ_REQUIRE(tp_device_count("cpu", &count) == TP_OK);
    FUZZ_REQUIRE(count >= 1 && count <= TP_MAX_DEVICES);
    return count;
}

/* Parses; returns whether the string is a device string, with the device in *out. */
static bool check_parse(const char *str, tp_device *out)
{
    const tp_device untouched = {(tp_device_type)77, 77};
    tp_device device = untouched;
    tp_status status = tp_device_parse(str, &device);
    if (status != TP_OK) {
        FUZZ_REQUIRE(status == TP_ERR_INVALID_DEVICE);
        FUZZ_REQUIRE(memcmp(&device, &untouched, sizeof device) == 0);
        FUZZ_REQUIRE_FAILURE_EXPLAINED();
        return false;
    }
    FUZZ_REQUIRE(tp_device_type_name(device.type) != NULL);
    FUZZ_REQUIRE(device.index == TP_DEVICE_INDEX_CURRENT || (device.index >= 0 && device.index < TP_MAX_DEVICES));
    char formatted[32];
    FUZZ_REQUIRE(tp_device_format(device, formatted, sizeof formatted) == TP_OK);
    FUZZ_REQUIRE(strcmp(formatted, str) == 0);
    *out = device;
    return true;
}

/* What the core must answer for a CPU device string it parsed: OK in range, else
 * TP_ERR_INVALID_DEVICE. Other backends may also be unavailable here. */
static void check_resolution_status(tp_status status, bool parsed, tp_device device, int current_cpu_index)
{
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    if (!parsed) {
        FUZZ_REQUIRE(status == TP_ERR_INVALID_DEVICE);
        return;
    }
    if (device.type == TP_DEVICE_CPU) {
        int index = device.index == TP_DEVICE_INDEX_CURRENT ? current_cpu_index : device.index;
        FUZZ_REQUIRE(status == (index < cpu_device_count() ? TP_OK : TP_ERR_INVALID_DEVICE));
        return;
    }
    FUZZ_REQUIRE(status == TP_OK || status == TP_ERR_INVALID_DEVICE || status == TP_ERR_BACKEND_UNAVAILABLE);
}

static void check_backend_queries(const char *str)
{
    /* The type calls take a type name, not a device string; any answer but a crash
     * or an unknown status is fine, and the count is written only on success. */
    int count = -7;
    tp_status status = tp_device_count(str, &count);
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    FUZZ_REQUIRE(status == TP_OK ? (count >= 0 && count <= TP_MAX_DEVICES) : count == -7);
    const char *reason = NULL;
    status = tp_backend_status(str, &reason);
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    FUZZ_REQUIRE(status == TP_OK || reason != NULL);
}

static void check_set_device(const char *str, bool parsed, tp_device device)
{
    tp_status status = tp_set_device(str);
    /* A string without an index keeps the current index of its type; for the CPU
     * that is 0, restored after every input. */
    check_resolution_status(status, parsed, device, 0);
    if (status != TP_OK) {
        FUZZ_REQUIRE_FAILURE_EXPLAINED();
        return;
    }
    tp_device current;
    FUZZ_REQUIRE(tp_current_device(&current) == TP_OK);
    FUZZ_REQUIRE(current.type == device.type);
    FUZZ_REQUIRE(device.index == TP_DEVICE_INDEX_CURRENT || current.index == device.index);
}

static void use_event(tp_event *event)
{
    bool done = false;
    FUZZ_REQUIRE(tp_event_record(event, NULL) == TP_OK);
    FUZZ_REQUIRE(tp_event_synchronize(event) == TP_OK);
    FUZZ_REQUIRE(tp_event_query(event, &done) == TP_OK);
    FUZZ_REQUIRE(done);
}

static void check_event_create(const char *str, unsigned flags, bool parsed, tp_device device)
{
    tp_event *sentinel = (tp_event *)&sentinel;
    tp_event *event = sentinel;
    tp_status status = tp_event_create(&event, str, flags);
    bool bad_flags = (flags & ~(unsigned)TP_EVENT_FLAGS_ALL) != 0 ||
                     ((flags & TP_EVENT_INTERPROCESS) && (flags & TP_EVENT_TIMING));
    if (bad_flags)
        FUZZ_REQUIRE(status == TP_ERR_INVALID_ARGUMENT);
    else
        check_resolution_status(status, parsed, device, 0);
    if (status != TP_OK) {
        FUZZ_REQUIRE(event == sentinel);
        FUZZ_REQUIRE_FAILURE_EXPLAINED();
        return;
    }
    FUZZ_REQUIRE(event != NULL && event != sentinel);
    tp_device of_event;
    unsigned event_flags = 0;
    FUZZ_REQUIRE(tp_event_device(event, &of_event) == TP_OK);
    FUZZ_REQUIRE(of_event.type == device.type);
    FUZZ_REQUIRE(device.index == TP_DEVICE_INDEX_CURRENT || of_event.index == device.index);
    FUZZ_REQUIRE(tp_event_flags(event, &event_flags) == TP_OK && event_flags == flags);
    use_event(event);
    FUZZ_REQUIRE(tp_event_destroy(event) == TP_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t length = nul ? (size_t)(nul - data) : size;
    unsigned flags = nul ? flags_from(nul + 1, size - length - 1) : TP_EVENT_DEFAULT;

    char *str = malloc(length + 1);
    FUZZ_REQUIRE(str != NULL);
    memcpy(str, data, length);
    str[length] = '\0';

    tp_device device = {TP_DEVICE_CPU, TP_DEVICE_INDEX_CURRENT};
    bool parsed = check_parse(str, &device);
    check_backend_queries(str);
    check_set_device(str, parsed, device);
    /* The event's device: from the string, or the current one for a string without
     * an index, which check_set_device may just have changed; start again from
     * cpu:0 so that the expectations above hold. */
    FUZZ_REQUIRE(tp_set_device("cpu:0") == TP_OK);
    check_event_create(str, flags, parsed, device);

    free(str);
    return 0;
}
