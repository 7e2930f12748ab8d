/* Conformance, rule 16: a capture someone else began (torch.cuda.graph on a stream
 * tpevent wraps, in CUDA's default global mode) is never invalidated by tpevent:
 * neither by its calls on the capturing thread (records, waits, the refusals of
 * what touches the capture) nor by its own threads (host-function workers, a CPU
 * stream waiting on a GPU record). The runtime says so: a capture invalidated
 * meanwhile fails to end. */
#include "foreign_capture.h"
#include "support.h"

#include <stdio.h>

#define REQUIRE_FOREIGN_CAPTURE(env, name)                                     \
    foreign_capture name;                                                      \
    do {                                                                       \
        tp_stream *probe_ = new_stream((env)->device); /* loads the backend */ \
        CHECK_OK(tp_stream_destroy(probe_));                                   \
        if (!foreign_capture_find((env)->device, &name))                       \
            return TEST_SKIP;                                                  \
    } while (0)

static void *native_of(tp_stream *stream)
{
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    return native;
}

/* A wrapped stream over a native stream of tpevent's own (*own, destroyed last). */
static tp_stream *wrapped_stream(const char *device, tp_stream **own)
{
    *own = new_stream(device);
    tp_stream *wrapped = NULL;
    CHECK_OK(tp_stream_from_native(&wrapped, device, native_of(*own)));
    return wrapped;
}

static bool capturing(tp_stream *stream)
{
    bool yes = false;
    CHECK_OK(tp_stream_is_capturing(stream, &yes));
    return yes;
}

static void end_not_invalidated(const foreign_capture *fc, tp_stream *origin, void **exec)
{
    int e = fc->calls.end(native_of(origin), exec);
    if (e != 0)
        printf("%s: ending the capture failed with %d (invalidated?)\n", fc->runtime, e);
    CHECK(e == 0);
}

/* Records (plain, external, an event's first), a fork to a second wrapped stream
 * and its join back, and the refusals of query and synchronize: the capture
 * ends, and each launch makes the external records again. */
TEST(rule16_foreign_capture_records_and_waits_do_not_invalidate_it)
{
    REQUIRE_FOREIGN_CAPTURE(env, fc);
    const char *d = env->device;
    tp_stream *own_a, *own_b;
    tp_stream *a = wrapped_stream(d, &own_a), *b = wrapped_stream(d, &own_b);
    tp_event *fork = new_event(d, TP_EVENT_DEFAULT), *join = new_event(d, TP_EVENT_DEFAULT);
    tp_event *fresh = new_event(d, TP_EVENT_TIMING); /* its first record: a native from the pool */
    tp_event *start = new_event(d, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    tp_event *end = new_event(d, TP_EVENT_TIMING | TP_EVENT_EXTERNAL);
    /* Natives still pending in the pool, so that taking one looks at them. */
    gate g;
    gate_init(&g);
    gate_launch(&g, own_b);
    for (int i = 0; i < 4; i++) {
        tp_event *pending = new_event(d, TP_EVENT_TIMING);
        CHECK_OK(tp_event_record(pending, own_b));
        CHECK_OK(tp_event_destroy(pending));
    }

    CHECK(fc.calls.begin(native_of(a), FOREIGN_MODE_GLOBAL) == 0);
    CHECK(capturing(a) && !capturing(b));
    CHECK_OK(tp_event_record(start, a));
    CHECK_OK(tp_event_record(fork, a));
    CHECK_OK(tp_stream_wait_event(b, fork)); /* b joins the capture */
    CHECK(capturing(b));
    CHECK_OK(tp_event_record(fresh, b));
    CHECK_OK(tp_event_record(join, b));
    CHECK_OK(tp_stream_wait_event(a, join)); /* and joins back */
    CHECK_OK(tp_event_record(end, a));
    bool done = false;
    CHECK_STATUS(tp_event_query(fork, &done), TP_ERR_CAPTURING);
    CHECK_STATUS(tp_event_synchronize(join), TP_ERR_CAPTURING);
    CHECK_STATUS(tp_stream_query(a, &done), TP_ERR_CAPTURING);
    CHECK_STATUS(tp_stream_synchronize(b), TP_ERR_CAPTURING);
    void *exec = NULL;
    end_not_invalidated(&fc, a, &exec);
    CHECK(!capturing(a) && !capturing(b));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(own_b));

    int64_t previous_end = 0;
    for (int launch = 0; launch < 3; launch++) {
        int64_t before = monotonic_ns();
        CHECK(fc.calls.launch(exec, native_of(a)) == 0);
        CHECK_OK(tp_stream_synchronize(a));
        int64_t after = monotonic_ns(), e = device_error_ns(d);
        int64_t t0 = timestamp_of(start), t1 = timestamp_of(end);
        CHECK(t0 >= before - e && t1 <= after + e && t0 <= t1);
        CHECK(t0 > previous_end); /* this launch's records */
        previous_end = t1;
    }
    fc.calls.destroy(exec);
    gate_destroy(&g);
    tp_event *events[] = {fork, join, fresh, start, end};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    CHECK_OK(tp_stream_destroy(a));
    CHECK_OK(tp_stream_destroy(b));
    CHECK_OK(tp_stream_destroy(own_a));
    CHECK_OK(tp_stream_destroy(own_b));
    return 0;
}

/* While the capture is open: a host function runs on another stream (its
 * thread waits for its point, then runs it), a CPU stream waits on a GPU
 * record that is reached meanwhile (its worker waits on the GPU), and events
 * are recorded for the first time and destroyed with records pending on a
 * stream outside the capture (tpevent's pool of natives looks at them). */
TEST(rule16_foreign_capture_survives_tpevent_threads)
{
    REQUIRE_FOREIGN_CAPTURE(env, fc);
    REQUIRE_OTHER_BACKEND(env, cpu);
    const char *d = env->device;
    tp_stream *own;
    tp_stream *captured = wrapped_stream(d, &own);
    tp_stream *work = new_stream(d), *host = new_stream(cpu);
    tp_event *mark = new_event(d, TP_EVENT_DEFAULT), *after_gate = new_event(d, TP_EVENT_DEFAULT);
    gate g;
    gate_init(&g);
    gate_launch(&g, work);
    CHECK_OK(tp_event_record(after_gate, work));
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));

    CHECK(fc.calls.begin(native_of(captured), FOREIGN_MODE_GLOBAL) == 0);
    CHECK_OK(tp_event_record(mark, captured));
    CHECK_OK(tp_stream_wait_event(host, after_gate)); /* across backends, pending */
    atomic_int host_ran = 0, work_ran = 0;
    CHECK_OK(tp_stream_launch_host_fn(host, flag_host_fn, &host_ran));
    CHECK_OK(tp_stream_launch_host_fn(work, flag_host_fn, &work_ran));
    for (int i = 0; i < 4; i++) {
        tp_event *pending = new_event(d, TP_EVENT_TIMING);
        CHECK_OK(tp_event_record(pending, work));
        CHECK_OK(tp_event_destroy(pending));
    }
    sleep_ms(20); /* the CPU stream's worker waits on the GPU meanwhile */
    CHECK(atomic_load(&host_ran) == 0 && atomic_load(&work_ran) == 0);
    gate_open(&g);
    CHECK(flag_reaches_within(&work_ran, 1, EVENTUALLY_SECONDS));
    CHECK(flag_reaches_within(&host_ran, 1, EVENTUALLY_SECONDS));
    void *exec = NULL;
    end_not_invalidated(&fc, captured, &exec);

    CHECK(fc.calls.launch(exec, native_of(captured)) == 0);
    CHECK_OK(tp_stream_synchronize(captured));
    fc.calls.destroy(exec);
    CHECK_OK(tp_stream_synchronize(work));
    CHECK_OK(tp_stream_synchronize(host));
    gate_destroy(&g);
    CHECK_OK(tp_event_destroy(mark));
    CHECK_OK(tp_event_destroy(after_gate));
    CHECK_OK(tp_stream_destroy(host));
    CHECK_OK(tp_stream_destroy(work));
    CHECK_OK(tp_stream_destroy(captured));
    CHECK_OK(tp_stream_destroy(own));
    return 0;
}

/* Host functions launched on a wrapped stream inside someone else's capture (in
 * global mode, as torch.cuda.graph's): the capture is not invalidated (a first
 * host function may need tpevent to allocate host memory for its counter), and
 * each launch of the program's graph runs each host function once, in order. */
TEST(rule16_foreign_capture_host_fns_run_at_each_launch)
{
    REQUIRE_FOREIGN_CAPTURE(env, fc);
    const char *d = env->device;
    tp_stream *own;
    tp_stream *captured = wrapped_stream(d, &own);
    atomic_int first = 0, second = 0;
    CHECK(fc.calls.begin(native_of(captured), FOREIGN_MODE_GLOBAL) == 0);
    CHECK_OK(tp_stream_launch_host_fn(captured, counter_host_fn, &first));
    CHECK_OK(tp_stream_launch_host_fn(captured, counter_host_fn, &second));
    void *exec = NULL;
    end_not_invalidated(&fc, captured, &exec);
    CHECK(atomic_load(&first) == 0);
    enum { LAUNCHES = 50 };
    for (int launch = 1; launch <= LAUNCHES; launch++)
        CHECK(fc.calls.launch(exec, native_of(captured)) == 0);
    CHECK_OK(tp_stream_synchronize(captured));
    CHECK(atomic_load(&first) == LAUNCHES && atomic_load(&second) == LAUNCHES);
    fc.calls.destroy(exec);
    CHECK_OK(tp_stream_destroy(captured));
    CHECK_OK(tp_stream_destroy(own));
    return 0;
}
