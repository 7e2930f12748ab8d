/*
 * Conformance, rule 8 across containers: an interprocess event handed over a Unix
 * socket (tp_event_ipc_send / tp_event_ipc_recv) keeps rules 3 to 6 and 9 between the
 * two handles as one event does in one process, and between two processes in
 * different PID, IPC and mount namespaces with private /dev/shm, the receiver's
 * event staying valid after the sender exits.
 */
#define _GNU_SOURCE

#include "namespace_child.h"
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* An event sent over a socketpair and received in this same process. */
static tp_event *sent_and_received(tp_event *event, const char *device)
{
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK_OK(tp_event_ipc_send(event, pair[0]));
    tp_event *received = NULL;
    CHECK_OK(tp_event_ipc_recv(&received, pair[1], device));
    CHECK(received != NULL && received != event);
    close(pair[0]);
    close(pair[1]);
    return received;
}

static tp_hold *hold(tp_stream *stream)
{
    tp_hold *held = NULL;
    CHECK_OK(tp_stream_hold(stream, INT64_MAX, &held));
    return held;
}

TEST(rule08_socket_event_records_and_waits_both_ways)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_stream *first = new_stream(env->device), *second = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender, NULL);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(receiver, &flags));
    CHECK(flags & TP_EVENT_INTERPROCESS);

    /* Never recorded by anyone: done, and a wait on it is a no-op (rules 4-6). */
    CHECK(event_is_done(receiver));
    CHECK_OK(tp_event_synchronize(receiver));

    /* A record through one handle is pending through the other (rule 4) ... */
    tp_hold *held = hold(first);
    CHECK_OK(tp_event_record(sender, first));
    CHECK(event_pending_for(receiver, 50));
    /* ... and a wait through the other waits for that very record (rule 6): a later
     * record that is reached at once replaces it (rule 3) without releasing the wait. */
    CHECK_OK(tp_event_wait(receiver, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK_OK(tp_event_record(sender, second));
    CHECK_OK(tp_stream_synchronize(second));
    CHECK(event_done_within(receiver, EVENTUALLY_SECONDS));
    CHECK(event_pending_for(after_wait, 50));
    CHECK_OK(tp_hold_release(held));
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));

    /* The other way round: the receiver records, the sender's handle sees it. */
    held = hold(second);
    CHECK_OK(tp_event_record(receiver, second));
    CHECK(event_pending_for(sender, 50));
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(sender));
    CHECK(event_is_done(sender));

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(receiver));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(second));
    CHECK_OK(tp_stream_destroy(first));
    return 0;
}

/* Rule 9: the sender's handle and stream destroyed with its record pending; the
 * received event still sees the record, and reached once the work is done. */
TEST(rule08_socket_event_outlives_the_senders_handle)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_stream *stream = new_stream(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender, env->device);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(sender, stream));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(event_pending_for(receiver, 50));
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(receiver));
    CHECK(event_is_done(receiver));
    CHECK_OK(tp_event_destroy(receiver));
    return 0;
}

TEST(rule08_socket_send_refuses_what_cannot_travel)
{
    REQUIRE_SOCKET_IPC(env->device);
    int pair[2], pipe_fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK(pipe(pipe_fds) == 0);
    tp_event *plain = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_STATUS(tp_event_ipc_send(plain, pair[0]), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("TP_EVENT_INTERPROCESS");
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    CHECK_STATUS(tp_event_ipc_send(event, pipe_fds[1]), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("not a socket");
    int inet = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CHECK(inet >= 0);
    CHECK_STATUS(tp_event_ipc_send(event, inet), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("AF_UNIX");
    CHECK_STATUS(tp_event_ipc_send(NULL, pair[0]), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_event_ipc_recv(NULL, pair[1], NULL), TP_ERR_INVALID_ARGUMENT);
    /* The peer gone: a clear error, not SIGPIPE. */
    close(pair[1]);
    CHECK_STATUS(tp_event_ipc_send(event, pair[0]), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("peer");
    close(inet);
    close(pair[0]);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_event_destroy(plain));
    return 0;
}

/* Rule 9 on the receiving side: the received event destroyed while a stream waits
 * on it; the wait still waits for that record and then lets the stream go. */
TEST(rule08_socket_received_event_destroyed_with_a_wait_pending)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_stream *stream = new_stream(env->device), *waiter = new_stream(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender, NULL);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(sender, stream));
    CHECK_OK(tp_event_wait(receiver, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK_OK(tp_event_destroy(receiver));
    CHECK(event_pending_for(after_wait, 50));
    CHECK_OK(tp_hold_release(held));
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Rule 8 through the socket: the received event is interprocess, takes on the
 * sender's TP_EVENT_BLOCKING (rule 5's sleep is the event's, in every process) and
 * has no timing. */
TEST(rule08_socket_received_event_keeps_the_senders_flags_without_timing)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING);
    tp_event *receiver = sent_and_received(sender, NULL);
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(receiver, &flags));
    CHECK((flags & (TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING)) == (TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING));
    CHECK(!(flags & TP_EVENT_TIMING));
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_event_record(receiver, stream));
    CHECK_OK(tp_event_synchronize(receiver));
    float ms = 0;
    CHECK_STATUS(tp_event_elapsed_time(receiver, receiver, &ms), TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(receiver));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* One event, sent any number of times: every received handle sees the records of
 * every other (rules 3 and 4). */
TEST(rule08_socket_event_sent_twice_is_one_event)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_stream *stream = new_stream(env->device);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *first = sent_and_received(sender, NULL), *second = sent_and_received(sender, NULL);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(first, stream));
    CHECK(event_pending_for(second, 20));
    CHECK(event_pending_for(sender, 20));
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(second));
    CHECK(event_is_done(sender));
    CHECK_OK(tp_event_destroy(first));
    CHECK_OK(tp_event_destroy(second));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Rule 10 at the first send: a record another thread makes while the send is under
 * way (before it, during it, after it: the rounds spread its start over the send's
 * time) is the event's latest through the received handle too, never lost between
 * the event's own record and the page the send makes. */
#define RACE_ROUNDS 400
/* Rounds behind one hold: the runtime's queue for a stream holds about 1,020
 * pending operations (CUDA 13) and the next one blocks its caller for good while
 * the stream is held; a round puts a few there. */
#define ROUNDS_PER_HOLD 50

typedef struct racing_record {
    tp_event *event;
    tp_stream *stream;
    int64_t delay_ns;
} racing_record;

static void *record_after_a_delay(void *arg)
{
    racing_record *race = arg;
    int64_t until = monotonic_ns() + race->delay_ns;
    while (monotonic_ns() < until) {
    }
    CHECK_OK(tp_event_record(race->event, race->stream));
    return NULL;
}

TEST(rule08_socket_first_send_keeps_a_record_made_meanwhile)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_stream *stream = new_stream(env->device);
    tp_hold *held = hold(stream);
    int lost = 0;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        if (round > 0 && round % ROUNDS_PER_HOLD == 0) {
            CHECK_OK(tp_hold_release(held));
            CHECK_OK(tp_stream_synchronize(stream));
            held = hold(stream);
        }
        racing_record race = {new_event(env->device, TP_EVENT_INTERPROCESS), stream, (round % 100) * 1000};
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, record_after_a_delay, &race) == 0);
        tp_event *receiver = sent_and_received(race.event, NULL);
        pthread_join(thread, NULL);
        lost += event_is_done(receiver); /* the record is behind the hold: pending */
        CHECK_OK(tp_event_destroy(receiver));
        CHECK_OK(tp_event_destroy(race.event));
    }
    printf("records lost by the first send: %d of %d\n", lost, RACE_ROUNDS);
    CHECK(lost == 0);
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A device string names the device the event is received for, of the sender's type
 * only: another type is refused as such (even one whose backend is not here), the
 * descriptor closed, and the socket still usable. */
TEST(rule08_socket_recv_refuses_a_device_of_another_type)
{
    REQUIRE_SOCKET_IPC(env->device);
    tp_device mine;
    CHECK_OK(tp_device_parse(env->device, &mine));
    char other[64]; /* device 0 of the next type in the enum: another type, here or not */
    snprintf(other, sizeof other, "%s:0",
             tp_device_type_name((tp_device_type)((mine.type + 1) % TP_DEVICE_TYPE_COUNT)));
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK_OK(tp_event_ipc_send(sender, pair[0]));
    tp_event *received = NULL;
    CHECK_STATUS(tp_event_ipc_recv(&received, pair[1], other), TP_ERR_INVALID_ARGUMENT);
    CHECK(received == NULL);
    CHECK_ERROR_MENTIONS(other);
    CHECK_OK(tp_event_ipc_send(sender, pair[0]));
    CHECK_OK(tp_event_ipc_recv(&received, pair[1], env->device));
    CHECK_OK(tp_event_destroy(received));
    close(pair[0]);
    close(pair[1]);
    CHECK_OK(tp_event_destroy(sender));
    return 0;
}

/* ------------------------------------------------- across namespaces */

static uint64_t namespace_inode(const char *kind)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return (uint64_t)st.st_ino;
}

#define SHM_MARK_ENV "TPEVENT_TEST_SHM_MARK"
#define IPC_NS_ENV "TPEVENT_TEST_PARENT_IPC_NS"

/* The child's half: in its own namespaces, it receives the event, sees the parent's
 * record pending, waits on it on a held stream and records it there, then lets the
 * stream go and synchronizes. */
static int namespaces_child(const test_env *env, int socket)
{
    CHECK(getpid() == 1); /* pid 1 of a new PID namespace */
    const char *mark = getenv(SHM_MARK_ENV);
    CHECK(mark != NULL && access(mark, F_OK) != 0); /* /dev/shm is not the parent's */
    const char *parent_ipc = getenv(IPC_NS_ENV);
    CHECK(parent_ipc != NULL && strtoull(parent_ipc, NULL, 10) != namespace_inode("ipc"));

    tp_event *event = NULL;
    CHECK_OK(tp_event_ipc_recv(&event, socket, env->device));
    CHECK(event_pending_for(event, 20));
    namespace_child_say(socket, 'p');
    tp_stream *stream = new_stream(env->device);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_event_record(event, stream));
    namespace_child_say(socket, 'r');
    namespace_child_expect(socket, 'g', 60);
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(event_is_done(event));
    namespace_child_say(socket, 'd');
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule08_socket_event_across_pid_ipc_and_mount_namespaces)
{
    REQUIRE_SOCKET_IPC(env->device);
    int child_socket = namespace_child_socket();
    if (child_socket >= 0)
        return namespaces_child(env, child_socket);

    /* A file in this /dev/shm that the child's private one must not show. */
    char mark[96], ipc_ns[32];
    snprintf(mark, sizeof mark, "/dev/shm/tpevent-namespace-test-%d", (int)getpid());
    FILE *file = fopen(mark, "w");
    CHECK(file != NULL);
    fclose(file);
    snprintf(ipc_ns, sizeof ipc_ns, "%llu", (unsigned long long)namespace_inode("ipc"));
    CHECK(setenv(SHM_MARK_ENV, mark, 1) == 0 && setenv(IPC_NS_ENV, ipc_ns, 1) == 0);

    /* The child starts with this process's record pending (its start is a clone that
     * execs: memcheck, which follows it, sees no copy of this process end). */
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(event, stream));
    namespace_child child;
    bool started = namespace_child_start(&child, env->device,
                                         "rule08_socket_event_across_pid_ipc_and_mount_namespaces");
    unlink(mark);
    if (!started) {
        CHECK_OK(tp_hold_release(held));
        CHECK_OK(tp_event_destroy(event));
        CHECK_OK(tp_stream_destroy(stream));
        return TEST_SKIP;
    }
    CHECK_OK(tp_event_ipc_send(event, child.socket));
    namespace_child_expect(child.socket, 'p', 60); /* the child saw this record pending */
    namespace_child_expect(child.socket, 'r', 60); /* and recorded the event after a wait on it */
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_stream_synchronize(stream));
    /* This process's record is reached; the child's, held, is the latest now. */
    CHECK(event_pending_for(event, 50));
    namespace_child_say(child.socket, 'g');
    namespace_child_expect(child.socket, 'd', 60);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(event_is_done(event));
    namespace_child_join(&child, 60);

    /* The child is gone; the event works on. */
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The sender records, sends and exits before the receiver even reads the message:
 * the descriptor in flight keeps the event, and the received event works. */
TEST(rule08_socket_event_received_after_the_sender_exited)
{
    REQUIRE_SOCKET_IPC(env->device);
    int child_socket = namespace_child_socket();
    if (child_socket >= 0) {
        tp_stream *stream = new_stream(env->device);
        tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
        CHECK_OK(tp_event_record(event, stream));
        CHECK_OK(tp_stream_synchronize(stream));
        CHECK_OK(tp_event_ipc_send(event, child_socket));
        CHECK_OK(tp_event_destroy(event));
        CHECK_OK(tp_stream_destroy(stream));
        return 0;
    }
    namespace_child child;
    if (!namespace_child_start(&child, env->device, "rule08_socket_event_received_after_the_sender_exited"))
        return TEST_SKIP;
    int socket = dup(child.socket);
    CHECK(socket >= 0);
    namespace_child_join(&child, 60);
    tp_event *event = NULL;
    CHECK_OK(tp_event_ipc_recv(&event, socket, NULL));
    close(socket);
    CHECK(event_is_done(event));
    tp_stream *stream = new_stream(env->device);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_pending_for(event, 20));
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Rule 1 across the socket: a stream of another device (the peer) waits on the
 * received event, for the record latest at its wait (rule 6). */
TEST(rule08_socket_event_waited_on_by_another_device)
{
    REQUIRE_SOCKET_IPC(env->device);
    REQUIRE_PEER(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *other = new_stream(env->peer);
    tp_event *sender = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *receiver = sent_and_received(sender, NULL);
    tp_event *after_wait = new_event(env->peer, TP_EVENT_DEFAULT);
    tp_hold *held = hold(stream);
    CHECK_OK(tp_event_record(sender, stream));
    CHECK_OK(tp_event_wait(receiver, other));
    CHECK_OK(tp_event_record(after_wait, other));
    CHECK(event_pending_for(after_wait, 50));
    CHECK_OK(tp_hold_release(held));
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(receiver));
    CHECK_OK(tp_event_destroy(sender));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
