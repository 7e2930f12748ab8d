/* Conformance, rule 13: the first calibration of a device's clock is narrow even
 * when the device starts out busy with other work (on a GPU, other processes'
 * contexts taking turns hold an idle stream's record for hundreds of us). On the
 * fake GPU with TPEVENT_FAKE_CONTENDED_RECORDS (conformance.fake-contended:0), the
 * process's first records are each reached 3 ms late: a calibration that keeps
 * the narrowest of its first few brackets is off by milliseconds. */
#include "support.h"

#include <stdio.h>

/* Far above a narrow calibration (tens of us at most), far below a contended one. */
static const int64_t calibration_error_max_ns = 1000 * 1000;

TEST(rule13_first_calibration_is_narrow_on_a_busy_device)
{
    tp_clock_info info;
    CHECK_OK(tp_device_clock(env->device, &info)); /* the first: before any record of ours */
    printf("error_ns %lld after the first calibration\n", (long long)info.error_ns);
    CHECK(info.error_ns >= 0 && info.error_ns < calibration_error_max_ns);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    for (int i = 0; i < 20; i++) {
        int64_t t0, t1;
        record_reached(event, stream, &t0, &t1);
        const int64_t ns = timestamp_of(event);
        const int64_t e = device_error_ns(env->device);
        if (!(ns >= t0 - e && ns <= t1 + e))
            check_failed(__FILE__, __LINE__, "record %d: timestamp %lld outside [t0 - e, t1 + e] = [%lld, %lld]", i,
                         (long long)ns, (long long)(t0 - e), (long long)(t1 + e));
    }
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
