#define _POSIX_C_SOURCE 200809L

#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>

#include <tpevent/tpevent.h>

_Noreturn void fuzz_violation(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz target: violated: %s\n  tp_last_error: \"%s\"\n", file, line, what, tp_last_error());
    fflush(stderr);
    abort();
}

void fuzz_prepare_environment(void)
{
    /* Two virtual CPU devices, so that "cpu:1" exists and "cpu:2" does not; the
     * caller's own setting wins. */
    setenv("TPEVENT_CPU_DEVICES", "2", 0);
}

bool fuzz_status_is_known(tp_status status)
{
    return (unsigned)status < TP_STATUS_COUNT;
}

uint32_t fuzz_fnv1a(uint32_t hash, const unsigned char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= 16777619u;
    }
    return hash;
}

void fuzz_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t fuzz_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void fuzz_use_cpu_event(tp_event *event)
{
    tp_device device;
    bool done = false;
    FUZZ_REQUIRE(tp_event_device(event, &device) == TP_OK);
    FUZZ_REQUIRE(device.type == TP_DEVICE_CPU);
    FUZZ_REQUIRE(tp_event_query(event, &done) == TP_OK);
    tp_stream *stream = NULL;
    char text[16];
    FUZZ_REQUIRE(tp_device_format(device, text, sizeof text) == TP_OK);
    FUZZ_REQUIRE(tp_stream_default(text, &stream) == TP_OK);
    FUZZ_REQUIRE(tp_event_record(event, stream) == TP_OK);
    FUZZ_REQUIRE(tp_event_synchronize(event) == TP_OK);
    FUZZ_REQUIRE(tp_event_query(event, &done) == TP_OK && done);
    FUZZ_REQUIRE(tp_event_wait(event, stream) == TP_OK);
    FUZZ_REQUIRE(tp_stream_synchronize(stream) == TP_OK);
}
