/*
 * A captured host function refused because no counter could be had (rule 16 with
 * rule 15, gpu_host_fn_capture.c): each captured host function holds a counter in
 * mapped host memory, from slabs of 1,024 (gpu_host_counter.c). Run on the fake GPU
 * with TPEVENT_FAKE_FAILED_HOST_ALLOC=2 (its CTest entry): the second slab's
 * allocation fails, once. Checked: of 1,025 host functions captured, the 1,025th is
 * refused, saying why, and the graph runs the other 1,024 at each launch; once it is
 * destroyed, a capture of 1,025 again gets every counter (the refused one gave back
 * nothing it did not take: a counter it never had, put on the free list, would be
 * handed out next as a counter at address 0) and runs them all.
 */
#define _POSIX_C_SOURCE 200809L
#include <tpevent/tpevent.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"

#define HOST_FNS 1025 /* one more than a slab's counters */

static void count_run(void *counter)
{
    atomic_fetch_add((atomic_int *)counter, 1);
}

/* Captures HOST_FNS host functions, launches the graph twice, destroys it: how
 * many launches were refused, and how many runs there were. */
static void capture_and_launch(tp_stream *stream, int *refused, int *runs)
{
    atomic_int counter;
    atomic_init(&counter, 0);
    *refused = 0;
    EXPECT_OK(tp_stream_begin_capture(stream));
    for (int i = 0; i < HOST_FNS; i++) {
        tp_status status = tp_stream_launch_host_fn(stream, count_run, &counter);
        if (status != TP_OK && (*refused)++ == 0)
            printf("host function %d refused: %s: %s\n", i, tp_status_name(status), tp_last_error());
    }
    tp_graph *graph = NULL;
    EXPECT_OK(tp_stream_end_capture(stream, &graph));
    if (!graph)
        return;
    EXPECT_OK(tp_graph_launch(graph, stream));
    EXPECT_OK(tp_graph_launch(graph, stream));
    EXPECT_OK(tp_stream_synchronize(stream));
    *runs = atomic_load(&counter);
    EXPECT_OK(tp_graph_destroy(graph));
}

int main(void)
{
    if (tp_backend_status("cuda", NULL) != TP_OK) {
        printf("FAIL: the fake GPU is not usable: %s\n", tp_last_error());
        return 1;
    }
    tp_stream *stream = NULL;
    EXPECT_OK(tp_stream_create(&stream, "cuda:0", 0));
    int refused = 0, runs = 0;
    capture_and_launch(stream, &refused, &runs);
    printf("first capture: %d refused, %d runs in two launches\n", refused, runs);
    EXPECT(refused == 1);
    EXPECT(runs == 2 * (HOST_FNS - 1));
    capture_and_launch(stream, &refused, &runs);
    printf("second capture: %d refused, %d runs in two launches\n", refused, runs);
    EXPECT(refused == 0);
    EXPECT(runs == 2 * HOST_FNS);
    EXPECT_OK(tp_stream_destroy(stream));
    printf(failures ? "FAILED\n" : "passed\n");
    return failures ? 1 : 0;
}
