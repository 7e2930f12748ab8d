/*
 * A process that holds a shared event is killed with SIGKILL while the other waits
 * for a record it made: the waiter gets an error in bounded time, not a hang, and
 * nothing is left behind (in /dev/shm, or as descriptors of the survivor).
 *
 * These tests compare /dev/shm before and after, so CTest runs them alone
 * (RUN_SERIAL): another test's objects would look like ours.
 */
#include "ipc_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* The synchronize must end, in error, within DEATH_NOTICED_SECONDS of the kill. */
static void check_ends_in_error_after_kill(async_call *waiter, double killed_at, const char *who)
{
    if (!async_returned_within(waiter, DEATH_NOTICED_SECONDS))
        check_failed(__FILE__, __LINE__, "synchronize still blocked %.1f s after the %s was killed",
                     DEATH_NOTICED_SECONDS, who);
    printf("synchronize returned %s %.0f ms after the %s's SIGKILL: %s\n", tp_status_name(waiter->status),
           (waiter->finished - killed_at) * 1000.0, who, waiter->error);
    CHECK_STATUS(waiter->status, TP_ERR_BACKEND);
    CHECK(waiter->error[0] != '\0');
}

static void check_killed(peer *p)
{
    int status = peer_reap(p);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        check_failed(__FILE__, __LINE__, "the peer ended with wait status 0x%x, not by SIGKILL", status);
}

TEST(exporter_killed_while_consumer_synchronizes)
{
    char *shm_before = dev_shm_listing();
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    peer_call(&producer, PEER_RECORD_GATED, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;

    /* One import and destroy first, so that whatever a runtime opens once per
     * process is open before the descriptors are counted. */
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    CHECK_OK(tp_event_destroy(event));
    int fds_before = open_fd_count();

    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    CHECK(event_pending_for(event, 50));
    async_call waiter;
    async_synchronize(&waiter, event);
    CHECK(!async_returned_within(&waiter, 0.1));

    /* Not reaped until the end: the dead exporter stays a zombie meanwhile,
     * which must count as gone. */
    double killed_at = monotonic_seconds();
    peer_kill(&producer);
    check_ends_in_error_after_kill(&waiter, killed_at, "exporter");

    /* Later calls do not hang either, and never call the record reached. */
    async_call again;
    async_synchronize(&again, event);
    check_ends_in_error_after_kill(&again, killed_at, "exporter");
    bool done = true;
    tp_status status = tp_event_query(event, &done);
    CHECK(status != TP_OK || !done);

    CHECK_OK(tp_event_destroy(event));
    if (open_fd_count() != fds_before)
        check_failed(__FILE__, __LINE__, "%d descriptors open before the import, %d after its destroy", fds_before,
                     open_fd_count());

    check_killed(&producer);
    int fds_reaped = open_fd_count();
    expect_import(&handle, env->device, TP_ERR_INVALID_ARGUMENT, "the handle of a killed exporter");
    CHECK(open_fd_count() == fds_reaped);

    /* A CUDA process that exported an event and is SIGKILLed leaves the CUDA
     * driver's own /dev/shm/cuda.shm.<...>.<hex pid>.<...> behind (seen on CUDA 13
     * with raw cudart, no tpevent involved): the driver's file, which tpevent
     * neither made nor may remove. Every other backend, and everything else on
     * CUDA, is held to the strict check. */
    tp_device device;
    CHECK_OK(tp_device_parse(env->device, &device));
    char *shm_after = dev_shm_listing();
    check_nothing_new_in_dev_shm_except(shm_before, shm_after, device.type == TP_DEVICE_CUDA ? "cuda.shm." : NULL);
    free(shm_after);
    free(shm_before);
    return 0;
}

/*
 * CPU: a stream of the consumer waiting on a record of a process that dies. Its
 * worker has nobody to report to: the wait gives up, the stream goes on, and the
 * event's query and synchronize report the death (cpu_backend.h).
 */
TEST(cpu_stream_waiting_on_a_killed_exporter_goes_on)
{
    char *shm_before = dev_shm_listing();
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    peer_call(&producer, PEER_RECORD_GATED, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));

    tp_stream *stream = new_stream(env->device);
    atomic_int after_wait = 0;
    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after_wait));
    sleep_ms(100);
    CHECK(atomic_load(&after_wait) == 0);

    double killed_at = monotonic_seconds();
    peer_kill(&producer);
    CHECK(flag_reaches_within(&after_wait, 1, DEATH_NOTICED_SECONDS));
    printf("the waiting stream went on %.0f ms after the SIGKILL\n", (monotonic_seconds() - killed_at) * 1000.0);
    CHECK_OK(tp_stream_synchronize(stream));

    bool done = true;
    CHECK_STATUS(tp_event_query(event, &done), TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS("exited before reaching it");
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "pid %d", (int)producer.pid);
    CHECK_ERROR_MENTIONS(pid_text);
    CHECK_STATUS(tp_event_synchronize(event), TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS(pid_text);

    /* A record of its own makes the event usable again. */
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_synchronize(event));

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    check_killed(&producer);
    char *shm_after = dev_shm_listing();
    check_nothing_new_in_dev_shm(shm_before, shm_after);
    free(shm_after);
    free(shm_before);
    return 0;
}

/* CPU: the process that dies is the importer, whose record the exporter waits for. */
TEST(cpu_importer_killed_while_exporter_synchronizes)
{
    char *shm_before = dev_shm_listing();
    int fds_before = open_fd_count();
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING);
    tp_ipc_handle handle;
    CHECK_OK(tp_event_ipc_handle(event, &handle));

    peer consumer;
    peer_start(&consumer, env->device, -1);
    peer_call(&consumer, PEER_IMPORT, 0, &handle);
    peer_call(&consumer, PEER_RECORD_GATED, 0, NULL);
    CHECK(event_pending_for(event, 50));

    async_call waiter;
    async_synchronize(&waiter, event);
    CHECK(!async_returned_within(&waiter, 0.1));
    double killed_at = monotonic_seconds();
    peer_kill(&consumer);
    check_ends_in_error_after_kill(&waiter, killed_at, "importer");
    CHECK_CONTAINS(waiter.error, "exited before reaching it");

    check_killed(&consumer);
    CHECK_OK(tp_event_destroy(event));
    CHECK(open_fd_count() == fds_before);
    char *shm_after = dev_shm_listing();
    check_nothing_new_in_dev_shm(shm_before, shm_after);
    free(shm_after);
    free(shm_before);
    return 0;
}
