/*
 * The backend interface's snapshots (core/backend.h), on every backend, through
 * the table each handle points at: what the core builds rules 6, 7, 13 and 14 on
 * across backends. Each test says one thing of docs/design.md's "Snapshots".
 */
#include "../conformance/support.h"
#include "core/backend.h"

#include <stdatomic.h>

static const tp_backend *table_of(tp_event *event)
{
    return event->backend;
}

static tp_snapshot take(tp_event *event)
{
    tp_snapshot snapshot;
    CHECK_OK(table_of(event)->snapshot_take(event, &snapshot));
    CHECK(snapshot.backend == event->backend);
    CHECK(snapshot.device.type == event->device.type && snapshot.device.index == event->device.index);
    CHECK(snapshot.flags == event->flags);
    return snapshot;
}

static void release(tp_snapshot *snapshot)
{
    snapshot->backend->snapshot_release(snapshot);
}

static bool reached(const tp_snapshot *snapshot)
{
    if (snapshot->state != TP_SNAPSHOT_PENDING)
        return true;
    bool done = false;
    CHECK_OK(snapshot->backend->snapshot_query(snapshot, &done));
    return done;
}

/* A pending record: behind a closed gate on a new stream of the device. */
typedef struct pending_record {
    gate gate;
    tp_stream *stream;
    tp_event *event;
} pending_record;

static void pending_record_make(pending_record *p, const char *device, unsigned flags)
{
    gate_init(&p->gate);
    p->stream = new_stream(device);
    p->event = new_event(device, flags);
    gate_launch(&p->gate, p->stream);
    CHECK_OK(tp_event_record(p->event, p->stream));
}

static void pending_record_finish(pending_record *p)
{
    gate_open(&p->gate);
    if (p->stream) {
        CHECK_OK(tp_stream_synchronize(p->stream));
        CHECK_OK(tp_stream_destroy(p->stream));
    }
    if (p->event)
        CHECK_OK(tp_event_destroy(p->event));
    gate_destroy(&p->gate);
}

TEST(snapshot_entries_present)
{
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    const tp_backend *table = table_of(event);
    CHECK(table->snapshot_take && table->snapshot_release && table->snapshot_query && table->snapshot_synchronize &&
          table->snapshot_notify);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(snapshot_of_unrecorded_event_says_never_recorded)
{
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    tp_snapshot snapshot = take(event);
    CHECK(snapshot.state == TP_SNAPSHOT_NEVER_RECORDED);
    release(&snapshot);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(snapshot_of_reached_record_is_reached)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    tp_snapshot snapshot = take(event);
    CHECK(snapshot.state != TP_SNAPSHOT_NEVER_RECORDED);
    CHECK(reached(&snapshot));
    release(&snapshot);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(snapshot_of_pending_record_is_reached_once_the_record_is)
{
    pending_record p;
    pending_record_make(&p, env->device, TP_EVENT_DEFAULT);
    tp_snapshot snapshot = take(p.event);
    CHECK(snapshot.state == TP_SNAPSHOT_PENDING);
    CHECK(!reached(&snapshot));
    gate_open(&p.gate);
    CHECK_OK(snapshot.backend->snapshot_synchronize(&snapshot));
    CHECK(reached(&snapshot));
    release(&snapshot);
    pending_record_finish(&p);
    return 0;
}

/* Rule 6: a later record of the event, reached at once, does not reach the
 * snapshot's record. */
TEST(snapshot_keeps_its_record_when_the_event_is_recorded_again)
{
    pending_record p;
    pending_record_make(&p, env->device, TP_EVENT_DEFAULT);
    tp_snapshot snapshot = take(p.event);
    tp_stream *idle = new_stream(env->device);
    CHECK_OK(tp_event_record(p.event, idle));
    CHECK_OK(tp_event_synchronize(p.event));
    CHECK(event_is_done(p.event));
    CHECK(!reached(&snapshot));
    gate_open(&p.gate);
    CHECK_OK(snapshot.backend->snapshot_synchronize(&snapshot));
    release(&snapshot);
    CHECK_OK(tp_stream_destroy(idle));
    pending_record_finish(&p);
    return 0;
}

/* Rule 9: the snapshot outlives the event and the stream it was recorded on. */
TEST(snapshot_outlives_its_event_and_stream)
{
    pending_record p;
    pending_record_make(&p, env->device, TP_EVENT_BLOCKING);
    tp_snapshot snapshot = take(p.event);
    CHECK_OK(tp_event_destroy(p.event));
    CHECK_OK(tp_stream_destroy(p.stream));
    p.event = NULL;
    p.stream = NULL;
    CHECK(!reached(&snapshot));
    gate_open(&p.gate);
    CHECK_OK(snapshot.backend->snapshot_synchronize(&snapshot));
    CHECK(reached(&snapshot));
    release(&snapshot);
    pending_record_finish(&p);
    return 0;
}

TEST(snapshot_notify_runs_once_after_the_record_is_reached)
{
    pending_record p;
    pending_record_make(&p, env->device, TP_EVENT_DEFAULT);
    tp_snapshot snapshot = take(p.event);
    atomic_int calls = 0;
    CHECK_OK(snapshot.backend->snapshot_notify(&snapshot, counter_host_fn, &calls));
    release(&snapshot); /* the backend keeps what the notify needs */
    CHECK(atomic_load(&calls) == 0);
    CHECK(!event_is_done(p.event));
    gate_open(&p.gate);
    CHECK(flag_reaches_within(&calls, 1, EVENTUALLY_SECONDS));
    CHECK(event_is_done(p.event));
    CHECK_OK(tp_stream_synchronize(p.stream));
    sleep_ms(20);
    CHECK(atomic_load(&calls) == 1);
    pending_record_finish(&p);
    return 0;
}

TEST(snapshot_notify_of_a_record_reached_meanwhile_runs)
{
    pending_record p;
    pending_record_make(&p, env->device, TP_EVENT_DEFAULT);
    tp_snapshot snapshot = take(p.event);
    gate_open(&p.gate);
    CHECK_OK(tp_stream_synchronize(p.stream));
    atomic_int calls = 0;
    CHECK_OK(snapshot.backend->snapshot_notify(&snapshot, counter_host_fn, &calls));
    CHECK(flag_reaches_within(&calls, 1, EVENTUALLY_SECONDS));
    release(&snapshot);
    pending_record_finish(&p);
    return 0;
}

/* Snapshots after warm-up: many taken and released, the pool recycles. */
TEST(snapshot_take_and_release_many)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    for (int i = 0; i < 2000; i++) {
        CHECK_OK(tp_event_record(event, stream));
        tp_snapshot snapshot = take(event);
        CHECK(snapshot.state != TP_SNAPSHOT_NEVER_RECORDED);
        if (i % 100 == 0 && snapshot.state == TP_SNAPSHOT_PENDING)
            CHECK_OK(snapshot.backend->snapshot_synchronize(&snapshot));
        release(&snapshot);
    }
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
