/*
 * The skeleton: the least a backend is, and where a new one starts (docs/backends.md
 * walks it from here to passing the conformance suite). Its table fills the entries
 * every backend must have (core/loader.c's tp_backend_check_table) and leaves every
 * other one NULL, which the core answers with TP_ERR_UNSUPPORTED naming the backend
 * and the operation. It has one device, so that the core reaches its entries; each
 * mandatory entry but init and device_count refuses with TP_ERR_UNSUPPORTED and says
 * where to write it.
 *
 * Built only in the test tree (tests/device_types), as a module beside a core that
 * knows the type "skeleton" from the list (cmake/TpeventDeviceTypes.cmake, kind
 * TEST): never installed, never offered to users. The conformance suite runs on
 * "skeleton:0" there, and every test skips with the reason this file gives.
 */
#include "core/builtin_backends.h" /* tp_backend_entry_skeleton */

#include <stdio.h>

static const tp_host *host;

/* Every refusal names the backend, the entry and this file: a test that reaches it
 * skips saying which entry to write next. */
#define NOT_WRITTEN(entry)                                                        \
    host->fail(TP_ERR_UNSUPPORTED, "the skeleton backend does not support " entry \
                                   " yet (write "                                 \
                                   "it in backends/skeleton/skeleton_backend.c)")

static tp_status skeleton_init(const tp_host *core, char *reason, size_t reason_size)
{
    (void)reason;
    (void)reason_size;
    host = core;
    return TP_OK;
}

static tp_status skeleton_device_count(int *count)
{
    *count = 1;
    return TP_OK;
}

static tp_status skeleton_stream_create(int device, int priority, tp_stream **out)
{
    (void)device, (void)priority, (void)out;
    return NOT_WRITTEN("stream_create");
}

static tp_status skeleton_stream_default(int device, tp_stream **out)
{
    (void)device, (void)out;
    return NOT_WRITTEN("stream_default");
}

static tp_status skeleton_stream_destroy(tp_stream *stream)
{
    (void)stream;
    return NOT_WRITTEN("stream_destroy");
}

static tp_status skeleton_stream_wait_event(tp_stream *stream, tp_event *event)
{
    (void)stream, (void)event;
    return NOT_WRITTEN("stream_wait_event");
}

static tp_status skeleton_event_create(int device, unsigned flags, tp_event **out)
{
    (void)device, (void)flags, (void)out;
    return NOT_WRITTEN("event_create");
}

static tp_status skeleton_event_destroy(tp_event *event)
{
    (void)event;
    return NOT_WRITTEN("event_destroy");
}

static tp_status skeleton_event_record(tp_event *event, tp_stream *stream)
{
    (void)event, (void)stream;
    return NOT_WRITTEN("event_record");
}

static tp_status skeleton_event_query(tp_event *event, bool *done)
{
    (void)event, (void)done;
    return NOT_WRITTEN("event_query");
}

static tp_status skeleton_event_synchronize(tp_event *event)
{
    (void)event;
    return NOT_WRITTEN("event_synchronize");
}

static tp_status skeleton_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    (void)start, (void)end, (void)ms;
    return NOT_WRITTEN("event_elapsed");
}

/* Designated initializers: every entry not named here is NULL. */
static const tp_backend skeleton_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = "skeleton", /* the list's name: the core checks the table against it */
    .type = TP_DEVICE_SKELETON,
    .init = skeleton_init,
    .device_count = skeleton_device_count,
    .stream_create = skeleton_stream_create,
    .stream_default = skeleton_stream_default,
    .stream_destroy = skeleton_stream_destroy,
    .stream_wait_event = skeleton_stream_wait_event,
    .event_create = skeleton_event_create,
    .event_destroy = skeleton_event_destroy,
    .event_record = skeleton_event_record,
    .event_query = skeleton_event_query,
    .event_synchronize = skeleton_event_synchronize,
    .event_elapsed = skeleton_event_elapsed,
};

tp_status tp_backend_entry_skeleton(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the skeleton backend speaks backend ABI version %u, the core asked for %u",
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &skeleton_table;
    return TP_OK;
}

/* The one symbol a module exports (TP_BACKEND_ENTRY_SYMBOL). */
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size);
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size)
{
    return tp_backend_entry_skeleton(core_abi, out, reason, reason_size);
}
