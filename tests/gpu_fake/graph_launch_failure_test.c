/*
 * What a failed graph launch leaves (rule 16, gpu_graph_exec.c), on the fake GPU,
 * one case per run (argv[1], each with the fake's setting its CTest entry gives):
 *   launch    TPEVENT_FAKE_FAILED_LAUNCHES_EVERY=2: every second launch fails,
 *             queuing nothing. tp_graph_launch queues the runs of the graph's
 *             captured host functions on their lane before the runtime's launch and
 *             takes them back where it fails. Checked: each failure names
 *             GraphLaunch; the host functions ran once per launch that succeeded,
 *             in order; once the graph is destroyed the lane's thread
 *             ("tpevent-gcuda:0") ends, which it does not while a run taken back
 *             is still queued (it would wait for a device that never reaches it).
 *   unmarked  TPEVENT_FAKE_FAILED_MARKS_EVERY=2: every second launch succeeds but
 *             the marker tpevent records after it fails. Checked: each such launch
 *             says the record failed (EventRecord, not GraphLaunch: the graph did
 *             run), every launch ran the host functions, and the graph destroyed
 *             with such a launch last is safe (nothing tells when that launch is
 *             done, so what it holds is kept).
 */
#define _POSIX_C_SOURCE 200809L
#include <tpevent/tpevent.h>

#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "expect.h"

#define LAUNCHES 10
#define LANE_THREAD "tpevent-gcuda:0"

/* The host functions: the first adds 1, the second 2 after seeing the first's. */
typedef struct runs {
    atomic_int first, second, out_of_order;
} runs;

static void first_fn(void *arg)
{
    runs *r = arg;
    atomic_fetch_add(&r->first, 1);
}

static void second_fn(void *arg)
{
    runs *r = arg;
    if (atomic_load(&r->first) != atomic_load(&r->second) + 1)
        atomic_fetch_add(&r->out_of_order, 1);
    atomic_fetch_add(&r->second, 1);
}

/* Threads of this process named `name`. */
static int threads_named(const char *name)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    int count = 0;
    for (struct dirent *task; (task = readdir(tasks));) {
        if (task->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", task->d_name);
        FILE *file = fopen(path, "r");
        if (!file)
            continue;
        if (fgets(comm, sizeof comm, file))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(file);
        count += strcmp(comm, name) == 0;
    }
    closedir(tasks);
    return count;
}

/* Whether the count of threads named `name` comes to `count` within `seconds`. */
static bool threads_named_within(const char *name, int count, double seconds)
{
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.01) {
        if (threads_named(name) == count)
            return true;
        nanosleep(&pause, NULL);
    }
    return false;
}

int main(int argc, char **argv)
{
    bool unmarked = argc > 1 && strcmp(argv[1], "unmarked") == 0;
    if (argc != 2 || (!unmarked && strcmp(argv[1], "launch") != 0)) {
        printf("usage: tpevent_graph_launch_failure_test launch|unmarked\n");
        return 2;
    }
    if (tp_backend_status("cuda", NULL) != TP_OK) {
        printf("FAIL: the fake GPU is not usable: %s\n", tp_last_error());
        return 1;
    }
    tp_stream *stream = NULL;
    tp_event *between = NULL;
    EXPECT_OK(tp_stream_create(&stream, "cuda:0", 0));
    EXPECT_OK(tp_event_create(&between, "cuda:0", TP_EVENT_EXTERNAL));
    runs r = {0};
    EXPECT_OK(tp_stream_begin_capture(stream));
    EXPECT_OK(tp_stream_launch_host_fn(stream, first_fn, &r));
    EXPECT_OK(tp_event_record(between, stream));
    EXPECT_OK(tp_stream_launch_host_fn(stream, second_fn, &r));
    tp_graph *graph = NULL;
    EXPECT_OK(tp_stream_end_capture(stream, &graph));
    if (failures)
        return 1;
    EXPECT(threads_named_within(LANE_THREAD, 1, 10.0)); /* the lane names its thread itself */

    int succeeded = 0, failed = 0;
    for (int i = 0; i < LAUNCHES; i++) {
        tp_status status = tp_graph_launch(graph, stream);
        if (status == TP_OK) {
            succeeded++;
            continue;
        }
        failed++;
        EXPECT(status == TP_ERR_BACKEND);
        EXPECT(strstr(tp_last_error(), unmarked ? "EventRecord" : "GraphLaunch") != NULL);
        if (failed == 1)
            printf("a failed launch: %s: %s\n", tp_status_name(status), tp_last_error());
    }
    EXPECT(failed == LAUNCHES / 2);
    EXPECT_OK(tp_stream_synchronize(stream));
    printf("%d launches succeeded, %d failed; the host functions ran %d and %d times\n", succeeded, failed,
           atomic_load(&r.first), atomic_load(&r.second));
    int ran = unmarked ? LAUNCHES : succeeded; /* an unmarked launch ran all the same */
    EXPECT(atomic_load(&r.first) == ran);
    EXPECT(atomic_load(&r.second) == ran);
    EXPECT(atomic_load(&r.out_of_order) == 0);

    EXPECT_OK(tp_graph_destroy(graph));
    EXPECT_OK(tp_stream_synchronize(stream));
    if (!unmarked) {
        bool lane_ended = threads_named_within(LANE_THREAD, 0, 10.0);
        if (!lane_ended)
            printf("the lane's thread still runs 10 s after the graph was destroyed: a run is left queued\n");
        EXPECT(lane_ended);
    }
    EXPECT_OK(tp_event_destroy(between));
    EXPECT_OK(tp_stream_destroy(stream));
    printf(failures ? "FAILED\n" : "passed\n");
    return failures ? 1 : 0;
}
