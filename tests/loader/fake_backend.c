/*
 * Broken backend modules for the loader tests: one source, one flaw per build,
 * selected by a FAKE_* definition. Each pretends to be the HIP backend.
 */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */

#include "core/backend.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef FAKE_CONSTRUCTOR_MARKS
/* Leaves a file named constructor_ran in the current directory as soon as it is
 * loaded: the tests of where modules are looked for (tests/hostile) see from it that
 * this module was loaded, even if nothing ever called its entry. */
__attribute__((constructor)) static void leave_mark(void)
{
    int fd = open("constructor_ran", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
}
#endif

static tp_status fake_init(const tp_host *host, char *reason, size_t reason_size)
{
    (void)host;
#if defined(FAKE_INIT_ABORTS)
    abort();
#elif defined(FAKE_INIT_SEGFAULTS)
    raise(SIGSEGV);
#elif defined(FAKE_INIT_HANGS)
    for (;;)
        pause();
#endif
#ifdef FAKE_INIT_FAILS
    snprintf(reason, reason_size, "fake runtime: hipErrorNoDevice: no ROCm-capable device is detected");
    return TP_ERR_BACKEND_UNAVAILABLE;
#else
    (void)reason;
    (void)reason_size;
    return TP_OK;
#endif
}

static tp_status fake_device_count(int *count)
{
    *count = 0;
    return TP_OK;
}

static tp_status fake_stream_create(int device, int priority, tp_stream **out)
{
    (void)device, (void)priority, (void)out;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_stream_default(int device, tp_stream **out)
{
    (void)device, (void)out;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_stream_destroy(tp_stream *stream)
{
    (void)stream;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_event_create(int device, unsigned flags, tp_event **out)
{
    (void)device, (void)flags, (void)out;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_event_op(tp_event *event)
{
    (void)event;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_event_record(tp_event *event, tp_stream *stream)
{
    (void)event, (void)stream;
    return TP_ERR_UNSUPPORTED;
}

static tp_status fake_event_query(tp_event *event, bool *done)
{
    (void)event, (void)done;
    return TP_ERR_UNSUPPORTED;
}

#ifndef FAKE_NO_ELAPSED
static tp_status fake_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    (void)start, (void)end, (void)ms;
    return TP_ERR_UNSUPPORTED;
}
#endif

static tp_status fake_stream_wait_event(tp_stream *stream, tp_event *event)
{
    (void)stream, (void)event;
    return TP_ERR_UNSUPPORTED;
}

_Static_assert(TP_BACKEND_ABI_VERSION != 42u, "the wrong-ABI module needs an ABI the core does not speak");

static const tp_backend fake_table = {
#ifdef FAKE_WRONG_ABI
    .abi_version = 42u, /* an ABI no core speaks (tests/loader/CMakeLists.txt expects it) */
#else
    .abi_version = TP_BACKEND_ABI_VERSION,
#endif
    .size = sizeof(tp_backend),
#ifdef FAKE_WRONG_TYPE
    .name = "cuda",
    .type = TP_DEVICE_CUDA,
#else
    .name = "hip",
    .type = TP_DEVICE_HIP,
#endif
    .init = fake_init,
    .device_count = fake_device_count,
    .stream_create = fake_stream_create,
    .stream_default = fake_stream_default,
    .stream_destroy = fake_stream_destroy,
    .stream_wait_event = fake_stream_wait_event,
    .event_create = fake_event_create,
    .event_destroy = fake_event_op,
    .event_record = fake_event_record,
    .event_query = fake_event_query,
    .event_synchronize = fake_event_op,
#ifndef FAKE_NO_ELAPSED
    .event_elapsed = fake_event_elapsed, /* the core calls it without a NULL check (a hot path) */
#endif
};

#ifndef FAKE_NO_ENTRY
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size);

TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size)
{
    (void)core_abi;
#ifdef FAKE_ENTRY_REFUSES
    (void)out;
    (void)fake_table;
    snprintf(reason, reason_size, "fake module refuses: built for another tpevent");
    return TP_ERR_BACKEND_UNAVAILABLE;
#else
    (void)reason;
    (void)reason_size;
    *out = &fake_table;
    return TP_OK;
#endif
}
#else
/* Exports something, just not the entry. */
TP_BACKEND_EXPORT const tp_backend *tpevent_backend_table(void);
TP_BACKEND_EXPORT const tp_backend *tpevent_backend_table(void)
{
    return &fake_table;
}
#endif
