/*
 * The OpenCL backend leaves the ICD loader's variables as they were: the Khronos
 * loader splits OCL_ICD_FILENAMES in place, in the process's environment, and a
 * process started afterwards inherited its first entry alone (on the H200, PoCL
 * without NVIDIA's OpenCL; backends/opencl/ocl_device.c). Debian's ocl-icd leaves
 * the variable alone, so in CI this holds either way; on the H200 it is the check.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <tpevent/tpevent.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(opencl_leaves_the_loaders_variables_as_they_were)
{
    /* Two entries, so that a split shows at the ':'. The second names no library:
     * a loader skips what it cannot open. */
    const char *before = getenv("OCL_ICD_FILENAMES");
    char value[4096];
    snprintf(value, sizeof value, "%s:%s", before ? before : "libpocl.so.2", "libtpevent-no-such-icd.so");
    CHECK(setenv("OCL_ICD_FILENAMES", value, 1) == 0);
    const char *reason = NULL;
    if (tp_backend_status("opencl", &reason) != TP_OK) {
        printf("skipped: the opencl backend is unavailable: %s\n", reason ? reason : "?");
        return TEST_SKIP;
    }
    const char *after = getenv("OCL_ICD_FILENAMES");
    if (!after || strcmp(after, value) != 0)
        check_failed(__FILE__, __LINE__, "OCL_ICD_FILENAMES was \"%s\" before the backend loaded, \"%s\" after", value,
                     after ? after : "(unset)");
    return 0;
}

/* TPEVENT_OPENCL_HOLD_WINDOW (issue 47 item 4): 2^60 wrapped the size of a
 * stream's hold chain and corrupted the heap at its first hold. A value outside 1
 * to 65536 now makes the backend unavailable, with the variable, its value and
 * the range as the reason; the backend was available with it before. The
 * variable is read before the platforms are listed, so this holds on a machine
 * without one; only a build without the module skips. */
static int hold_window_refused(const char *value)
{
    CHECK(setenv("TPEVENT_OPENCL_HOLD_WINDOW", value, 1) == 0);
    const char *reason = NULL;
    tp_status status = tp_backend_status("opencl", &reason);
    if (status != TP_OK && reason && strstr(reason, "module not found")) {
        printf("skipped: the opencl backend is not built: %s\n", reason);
        return TEST_SKIP;
    }
    CHECK_STATUS(status, TP_ERR_BACKEND_UNAVAILABLE);
    printf("reason: %s\n", reason ? reason : "(none)");
    CHECK(reason && strstr(reason, "TPEVENT_OPENCL_HOLD_WINDOW") && strstr(reason, value) &&
          strstr(reason, "from 1 to 65536"));
    tp_stream *stream = NULL;
    CHECK_STATUS(tp_stream_create(&stream, "opencl:0", 0), TP_ERR_BACKEND_UNAVAILABLE);
    return 0;
}

TEST(opencl_hold_window_of_2_to_the_60_is_refused)
{
    return hold_window_refused("1152921504606846976");
}

TEST(opencl_hold_window_of_2_to_the_62_is_refused)
{
    return hold_window_refused("4611686018427387904");
}

TEST(opencl_hold_window_past_the_most_is_refused)
{
    return hold_window_refused("65537");
}

TEST(opencl_hold_window_of_0_is_refused)
{
    return hold_window_refused("0");
}

TEST(opencl_hold_window_that_is_not_a_number_is_refused)
{
    return hold_window_refused("8 holds");
}

/* The most it may be: the window is the stream's, and holds past it join. */
TEST(opencl_hold_window_at_the_most_holds)
{
    CHECK(setenv("TPEVENT_OPENCL_HOLD_WINDOW", "65536", 1) == 0);
    const char *reason = NULL;
    if (tp_backend_status("opencl", &reason) != TP_OK) {
        printf("skipped: the opencl backend is unavailable: %s\n", reason ? reason : "?");
        return TEST_SKIP;
    }
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, "opencl:0", 0));
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    CHECK(window == 65536);
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, "opencl:0", 0));
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(stream, 60 * 1000000000LL, &hold));
    CHECK_OK(tp_event_record(event, stream));
    bool done = true;
    CHECK_OK(tp_event_query(event, &done));
    CHECK(!done);
    CHECK_OK(tp_hold_release(hold));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
