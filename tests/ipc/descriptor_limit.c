/*
 * The descriptor limit (issue 18 item 1): with every descriptor in use, a look at
 * /proc/<pid>/stat fails with EMFILE, and failing to look must never be taken for
 * the peer's death. The exporter here is alive throughout, its record gated: a
 * query says "not yet", a synchronize keeps waiting, a stream waiting on the event
 * stays held, all past several liveness periods; once the gate opens, all of them
 * go on normally.
 */
#define _GNU_SOURCE /* O_CLOEXEC */

#include "ipc_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define FILL_MAX 4096

typedef struct filled {
    struct rlimit saved;
    int fds[FILL_MAX];
    int count;
} filled;

/* Lowers RLIMIT_NOFILE to 256 (or keeps a lower one) and opens descriptors until
 * open() answers EMFILE. */
static void fill_descriptors(filled *f)
{
    CHECK(getrlimit(RLIMIT_NOFILE, &f->saved) == 0);
    struct rlimit low = f->saved;
    if (low.rlim_cur > 256)
        low.rlim_cur = 256;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    f->count = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            CHECK(errno == EMFILE);
            break;
        }
        CHECK(f->count < FILL_MAX);
        f->fds[f->count++] = fd;
    }
    /* The process really is at its limit: /proc cannot be opened. */
    int probe = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    CHECK(probe < 0 && errno == EMFILE);
}

static void free_descriptors(filled *f)
{
    for (int i = 0; i < f->count; i++)
        close(f->fds[i]);
    f->count = 0;
    CHECK(setrlimit(RLIMIT_NOFILE, &f->saved) == 0);
}

TEST(cpu_descriptor_limit_is_not_a_death)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    peer_call(&producer, PEER_CREATE, 0, NULL);
    peer_call(&producer, PEER_RECORD_GATED, 0, NULL);
    tp_ipc_handle handle = peer_call(&producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, env->device, &handle));
    tp_stream *stream = new_stream(env->device);
    atomic_int after_wait = 0;
    /* The worker starts before the limit is reached. */
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after_wait));
    CHECK(flag_reaches_within(&after_wait, 1, EVENTUALLY_SECONDS));
    atomic_store(&after_wait, 0);

    /* A handle of this very process's event, made before the limit. */
    tp_event *local = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_ipc_handle local_handle;
    CHECK_OK(tp_event_ipc_handle(local, &local_handle));

    static filled f;
    fill_descriptors(&f);
    /* Importing it needs a descriptor and may fail, but never because "the
     * exporting process has exited": the exporter is the caller. */
    tp_event *again = NULL;
    tp_status import_status = tp_event_from_ipc_handle(&again, env->device, &local_handle);
    char import_error[512];
    snprintf(import_error, sizeof import_error, "%s", tp_last_error());

    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after_wait));
    async_call call;
    async_synchronize(&call, event);
    bool done = true;
    tp_status query_status = TP_OK;
    /* Well past several liveness periods (20 ms each). */
    for (int i = 0; i < 20 && query_status == TP_OK; i++) {
        sleep_ms(10);
        done = true;
        query_status = tp_event_query(event, &done);
    }
    int wait_flag = atomic_load(&after_wait);
    bool returned = atomic_load(&call.returned);
    free_descriptors(&f);

    printf("import of this process's own handle at the limit: %s: %s\n", tp_status_name(import_status),
           import_status == TP_OK ? "" : import_error);
    CHECK(import_status == TP_OK || strstr(import_error, "exited") == NULL);
    if (again)
        CHECK_OK(tp_event_destroy(again));
    CHECK_STATUS(query_status, TP_OK);
    CHECK(!done);
    CHECK(!returned);      /* the synchronize still waits */
    CHECK(wait_flag == 0); /* the stream is still held */

    peer_call(&producer, PEER_OPEN_GATES, 0, NULL);
    CHECK(async_returned_within(&call, EVENTUALLY_SECONDS));
    CHECK_STATUS(call.status, TP_OK);
    CHECK(flag_reaches_within(&after_wait, 1, EVENTUALLY_SECONDS));
    CHECK(event_is_done(event));
    CHECK_OK(tp_stream_synchronize(stream));

    CHECK_OK(tp_event_destroy(local));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    peer_finish(&producer);
    return 0;
}
