/*
 * Events shared between two real processes (rule 8): the peer is a second program,
 * and each side sees the other's records through query, synchronize and waits of
 * its own streams.
 */
#include "ipc_support.h"

#include <unistd.h>

/* What a host function of the consumer read from the shared page. */
typedef struct value_read {
    shared_page *page;
    atomic_llong seen;
    atomic_int ran;
} value_read;

static void read_value_host_fn(void *arg)
{
    value_read *read = arg;
    atomic_store(&read->seen, atomic_load_explicit(&read->page->value, memory_order_relaxed));
    atomic_store(&read->ran, 1);
}

/* True if the flag stayed 0 for `ms` milliseconds. */
static bool flag_stays_clear_for(atomic_int *flag, int ms)
{
    double end = monotonic_seconds() + ms / 1000.0;
    while (monotonic_seconds() < end) {
        if (atomic_load(flag) != 0)
            return false;
        sleep_ms(1);
    }
    return atomic_load(flag) == 0;
}

static int64_t value_for_this_run(void)
{
    return ((int64_t)getpid() << 20) ^ (int64_t)(monotonic_seconds() * 1e6) ^ 0x5eed;
}

TEST(consumer_stream_sees_producer_value)
{
    page_mapping shared;
    page_create(&shared);
    const int64_t value = value_for_this_run();
    peer producer;
    peer_start(&producer, env->device, shared.fd);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    /* The producer's stream: closed gate, writes `value`, records the event. */
    peer_call(&producer, PEER_RECORD_GATED, value, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;

    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(event, &flags));
    CHECK(flags & TP_EVENT_INTERPROCESS);
    CHECK(!(flags & TP_EVENT_TIMING));
    tp_device device;
    CHECK_OK(tp_event_device(event, &device));

    tp_stream *stream = new_stream(env->device);
    value_read read = {.page = shared.page};
    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, read_value_host_fn, &read));

    /* Behind the producer's gate: nothing is reached, on either side. */
    CHECK(event_pending_for(event, 100));
    CHECK(flag_stays_clear_for(&read.ran, 50));
    async_call waiter;
    async_synchronize(&waiter, event);
    CHECK(!async_returned_within(&waiter, 0.1));
    CHECK(atomic_load_explicit(&shared.page->value, memory_order_relaxed) == 0);

    peer_call(&producer, PEER_OPEN_GATES, 0, NULL);
    CHECK(async_returned_within(&waiter, EVENTUALLY_SECONDS));
    CHECK_STATUS(waiter.status, TP_OK);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(atomic_load(&read.ran) == 1);
    if (atomic_load(&read.seen) != value)
        check_failed(__FILE__, __LINE__, "the consumer's host function read %lld, the producer wrote %lld",
                     (long long)atomic_load(&read.seen), (long long)value);
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_synchronize(event));

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    peer_finish(&producer);
    page_destroy(&shared);
    return 0;
}

TEST(producer_sees_consumer_record)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    /* Never recorded: done for both (rule 4). */
    CHECK(peer_call(&producer, PEER_QUERY, 0, NULL).done);

    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    CHECK(event_is_done(event));
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));

    /* The producer sees the consumer's record pending, and blocks on it. */
    CHECK(!peer_call(&producer, PEER_QUERY, 0, NULL).done);
    peer_send(&producer, PEER_SYNCHRONIZE, 0, NULL);
    peer_message reply;
    CHECK(!peer_reply_within(&producer, 0.1, &reply));
    gate_open(&g);
    CHECK(peer_reply_within(&producer, EVENTUALLY_SECONDS, &reply));
    CHECK(reply.command == PEER_SYNCHRONIZE);
    CHECK_STATUS((tp_status)reply.status, TP_OK);
    CHECK(peer_call(&producer, PEER_QUERY, 0, NULL).done);
    CHECK(event_is_done(event));

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    peer_finish(&producer);
    return 0;
}

TEST(records_alternate_between_processes)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    tp_stream *stream = new_stream(env->device);

    /* Each record replaces the other process's (rule 3), whichever made it; where
     * interprocess records complete in order, the later one is reached only with
     * the earlier one. */
    bool in_order = interprocess_records_complete_in_order(env->device);
    for (int round = 0; round < 20; round++) {
        gate g;
        gate_init(&g);
        gate_launch(&g, stream);
        CHECK_OK(tp_event_record(event, stream));
        CHECK(!peer_call(&producer, PEER_QUERY, 0, NULL).done);
        peer_call(&producer, PEER_RECORD_IDLE, 0, NULL);
        if (in_order) {
            CHECK(!event_is_done(event));
            gate_open(&g);
            CHECK(event_done_within(event, EVENTUALLY_SECONDS));
        } else {
            CHECK(event_is_done(event));
            gate_open(&g);
        }
        CHECK(peer_call(&producer, PEER_QUERY, 0, NULL).done);
        CHECK_OK(tp_stream_synchronize(stream));
        gate_destroy(&g);
    }
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    peer_finish(&producer);
    return 0;
}

TEST(wait_keeps_its_record_when_the_producer_records_again)
{
    page_mapping shared;
    page_create(&shared);
    peer producer;
    peer_start(&producer, env->device, shared.fd);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    peer_call(&producer, PEER_RECORD_GATED, 42, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));

    tp_stream *stream = new_stream(env->device);
    value_read read = {.page = shared.page};
    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, read_value_host_fn, &read));

    /* A later record, reached at once, in the producer: the event is done
     * (rule 4), but the wait is for the record that was latest when it was made
     * (rule 6), still behind the gate. */
    peer_call(&producer, PEER_RECORD_IDLE, 0, NULL);
    if (interprocess_records_complete_in_order(env->device)) {
        /* The later record is reached only with the gated one (see ipc_support.h). */
        CHECK(!peer_call(&producer, PEER_QUERY, 0, NULL).done);
        CHECK(!event_is_done(event));
    } else {
        CHECK(peer_call(&producer, PEER_QUERY, 0, NULL).done);
        CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    }
    CHECK(flag_stays_clear_for(&read.ran, 150));

    peer_call(&producer, PEER_OPEN_GATES, 0, NULL);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(atomic_load(&read.ran) == 1);
    CHECK(atomic_load(&read.seen) == 42);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    peer_finish(&producer);
    page_destroy(&shared);
    return 0;
}

TEST(two_imports_of_one_handle_share_the_event)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *first = NULL, *second = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&first, env->device, &handle));
    CHECK_OK(tp_event_from_ipc_handle(&second, NULL, &handle)); /* the handle's own device */
    tp_device a, b;
    CHECK_OK(tp_event_device(first, &a));
    CHECK_OK(tp_event_device(second, &b));
    CHECK(a.type == b.type && a.index == b.index);

    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(first, stream));
    CHECK(!event_is_done(second));
    CHECK(!peer_call(&producer, PEER_QUERY, 0, NULL).done);
    /* One import destroyed: the other and the producer go on. */
    CHECK_OK(tp_event_destroy(first));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(second));
    CHECK(peer_call(&producer, PEER_QUERY, 0, NULL).done);

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(second));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    peer_finish(&producer);
    return 0;
}

/* CPU only: on CUDA, using an imported event after its exporter destroyed it is
 * undefined (cudaIpcOpenEventHandle). */
TEST(cpu_imported_event_outlives_its_exporter)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    peer_call(&producer, PEER_RECORD_IDLE, 0, NULL);
    peer_finish(&producer);

    /* The record was reached before the producer exited: done, and usable. */
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_synchronize(event));
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
