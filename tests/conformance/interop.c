/*
 * Conformance: the interop calls (README, interop): a device's priority range, the
 * native event behind a record, wrapping a native event the caller owns, and the
 * default stream's native handle (0 on CUDA and HIP, as torch and CuPy say).
 */
#include "support.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static bool is_cpu(const char *device)
{
    return strncmp(device, "cpu", 3) == 0;
}

/* CUDA and HIP: runtime events that can be recorded through, and a legacy default
 * stream whose handle is 0. The CPU has neither; OpenCL's cl_event is one command's
 * and its default stream a queue like any other (backends/opencl/ocl_backend.h). */
static bool is_gpu(const char *device)
{
    return strncmp(device, "cuda", 4) == 0 || strncmp(device, "hip", 3) == 0;
}

TEST(interop_priority_range_bounds_created_streams)
{
    int least = 99, greatest = 99, high = 0, low = 0;
    CHECK_OK(tp_stream_priority_range(env->device, &least, &greatest));
    CHECK(greatest <= least);
    if (is_cpu(env->device))
        CHECK(least == 0 && greatest == TP_CPU_PRIORITY_HIGHEST);
    tp_stream *highest = NULL, *lowest = NULL;
    CHECK_OK(tp_stream_create(&highest, env->device, -1000000));
    CHECK_OK(tp_stream_create(&lowest, env->device, 1000000));
    CHECK_OK(tp_stream_priority(highest, &high));
    CHECK_OK(tp_stream_priority(lowest, &low));
    CHECK(high == greatest && low == least);
    CHECK_OK(tp_stream_destroy(lowest));
    CHECK_OK(tp_stream_destroy(highest));
    CHECK_STATUS(tp_stream_priority_range("cpu:63", &least, &greatest), TP_ERR_INVALID_DEVICE);
    return 0;
}

TEST(interop_event_native_is_null_until_recorded)
{
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    void *native = (void *)&native;
    CHECK_OK(tp_event_native(event, &native));
    CHECK(native == NULL); /* rule 2: no native event before the first record */
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_native(event, &native));
    if (is_cpu(env->device))
        CHECK(native == NULL); /* CPU events are tpevent's own */
    else
        CHECK(native != NULL);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

static bool is_opencl(const char *device)
{
    return strncmp(device, "opencl", 6) == 0;
}

/* OpenCL: a caller's cl_event (here a tpevent record's marker, as pyopencl's would
 * be) wraps read-only: query, synchronize, wait and elapsed time answer for its
 * command; a record is refused, since a cl_event is one command's. */
static int cl_event_wraps_read_only(const test_env *env)
{
    tp_event *wrapper = NULL;
    CHECK_STATUS(tp_event_from_native(&wrapper, env->device, NULL), TP_ERR_INVALID_ARGUMENT);
    tp_stream *stream = new_stream(env->device);
    tp_event *owner = new_event(env->device, TP_EVENT_TIMING);
    gate g;
    gate_init(&g);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(owner, stream));
    void *native = NULL;
    CHECK_OK(tp_event_native(owner, &native));
    CHECK_OK(tp_event_from_native(&wrapper, env->device, native));
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(wrapper, &flags));
    CHECK(flags == TP_EVENT_TIMING);
    void *again = NULL;
    CHECK_OK(tp_event_native(wrapper, &again));
    CHECK(again == native);
    CHECK_STATUS(tp_event_record(wrapper, stream), TP_ERR_UNSUPPORTED);
    CHECK(strstr(tp_last_error(), "cl_event") != NULL);
    /* Pending until the command is; another stream's wait on it waits for it. */
    tp_stream *waiter = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_wait(wrapper, waiter));
    CHECK_OK(tp_event_record(after, waiter));
    CHECK(event_pending_for(wrapper, 30));
    CHECK(event_pending_for(after, 1));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(wrapper));
    CHECK(event_done_within(after, 5.0));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(wrapper, after, &ms));
    CHECK(ms >= 0.0f);
    /* The wrapper keeps the cl_event alive past its owner's next record. */
    CHECK_OK(tp_event_record(owner, stream));
    CHECK_OK(tp_event_synchronize(owner));
    CHECK_OK(tp_event_query(wrapper, &(bool){false}));
    CHECK_OK(tp_event_destroy(wrapper));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(owner));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(interop_event_from_native_records_on_the_native_event)
{
    tp_event *wrapper = NULL;
    if (is_opencl(env->device))
        return cl_event_wraps_read_only(env);
    if (!is_gpu(env->device)) {
        int dummy = 0;
        char backend[16] = "";
        snprintf(backend, sizeof backend, "%.*s", (int)strcspn(env->device, ":"), env->device);
        CHECK_STATUS(tp_event_from_native(&wrapper, env->device, &dummy), TP_ERR_UNSUPPORTED);
        CHECK(strstr(tp_last_error(), backend) != NULL);
        CHECK(strstr(tp_last_error(), "tp_event_from_native") != NULL);
        CHECK(wrapper == NULL);
        return 0;
    }
    CHECK_STATUS(tp_event_from_native(&wrapper, env->device, NULL), TP_ERR_INVALID_ARGUMENT);
    /* The owner: a tpevent event whose native event another library would hold. */
    tp_stream *stream = new_stream(env->device);
    tp_event *owner = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(owner, stream));
    CHECK_OK(tp_event_synchronize(owner));
    void *native = NULL;
    CHECK_OK(tp_event_native(owner, &native));
    CHECK(native != NULL);
    CHECK_OK(tp_event_from_native(&wrapper, env->device, native));
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(wrapper, &flags));
    CHECK(flags == TP_EVENT_TIMING);
    void *again = NULL;
    CHECK_OK(tp_event_native(wrapper, &again));
    CHECK(again == native);
    /* A record through the wrapper goes on the native event: its owner sees it. */
    gate g;
    gate_init(&g);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(wrapper, stream));
    CHECK(event_pending_for(wrapper, 30));
    CHECK(event_pending_for(owner, 1));
    /* Another stream's wait on the wrapper waits for that record. */
    tp_stream *waiter = new_stream(env->device);
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_wait(wrapper, waiter));
    CHECK_OK(tp_event_record(after, waiter));
    CHECK(event_pending_for(after, 30));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(wrapper));
    CHECK(event_is_done(owner));
    CHECK(event_done_within(after, 5.0));
    /* Timed against a tpevent event on the same stream. */
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)10));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(wrapper, end, &ms));
    CHECK(ms >= 9.0f);
    /* Destroying the wrapper leaves the native event to its owner. */
    CHECK_OK(tp_event_destroy(wrapper));
    CHECK_OK(tp_event_record(owner, stream));
    CHECK_OK(tp_event_synchronize(owner));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(owner));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(interop_default_stream_native_handle)
{
    tp_stream *stream = NULL, *wrapper = NULL;
    void *native = (void *)&native;
    CHECK_OK(tp_stream_default(env->device, &stream));
    CHECK_OK(tp_stream_native(stream, &native));
    if (!is_gpu(env->device)) {
        CHECK(native != NULL); /* the CPU stream itself, OpenCL's queue */
        return 0;
    }
    CHECK(native == NULL); /* as torch.cuda.default_stream().cuda_stream */
    CHECK_OK(tp_stream_from_native(&wrapper, env->device, NULL));
    native = (void *)&native;
    CHECK_OK(tp_stream_native(wrapper, &native));
    CHECK(native == NULL);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, wrapper));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(wrapper));
    return 0;
}

/* What the thread that wraps the per-thread handle records there, from its own
 * thread: its own per-thread stream, not held by the other thread's gate. */
static void *record_on_per_thread_stream(void *arg)
{
    const char *device = arg;
    tp_stream *mine = NULL;
    CHECK_OK(tp_stream_from_native(&mine, device, (void *)(uintptr_t)2));
    tp_event *event = new_event(device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, mine));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(mine));
    return NULL;
}

/* CUDA's cudaStreamLegacy (1) and cudaStreamPerThread (2) handles, which
 * __cuda_stream__ may hand over: each wraps the stream it names, in order, and
 * the per-thread one is the calling thread's own. */
TEST(interop_legacy_and_per_thread_stream_handles)
{
    if (strncmp(env->device, "cuda", 4) != 0) {
        printf("skipped: %s: the legacy and per-thread stream handles are CUDA's\n", env->device);
        return TEST_SKIP;
    }
    for (uintptr_t handle = 1; handle <= 2; handle++) {
        tp_stream *wrapper = NULL;
        CHECK_OK(tp_stream_from_native(&wrapper, env->device, (void *)handle));
        void *native = NULL;
        CHECK_OK(tp_stream_native(wrapper, &native));
        CHECK(native == (handle == 1 ? NULL : (void *)handle)); /* legacy: 0, as torch names it */
        gate g;
        gate_init(&g);
        gate_launch(&g, wrapper);
        tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
        CHECK_OK(tp_event_record(event, wrapper));
        CHECK(event_pending_for(event, 20));
        if (handle == 2) {
            pthread_t other;
            CHECK(pthread_create(&other, NULL, record_on_per_thread_stream, (void *)env->device) == 0);
            pthread_join(other, NULL);
        }
        gate_open(&g);
        CHECK(event_done_within(event, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(event));
        CHECK_OK(tp_stream_destroy(wrapper));
        gate_destroy(&g);
    }
    return 0;
}
