/*
 * The programs behind the trace tests (tests/trace/check_trace.py runs them and
 * parses what they write with Python's json module):
 *
 *   trace_scenarios ranges OUT.json DEV_A DEV_B   ranges on two streams of DEV_A and
 *       one of DEV_B, nested, with waits between them; prints what the checker
 *       expects ("slices N", "flow NATIVE_FROM NATIVE_TO" per wait)
 *   trace_scenarios empty OUT.json                a trace with nothing in it
 *   trace_scenarios errors DIR                    the refusals (checked here)
 *   trace_scenarios capture OUT.json DEV          ranges, records and waits inside a
 *       capture (rule 16) are left out; the graph's launches and what is outside
 *       the capture are traced; a capture still open at stop does not stop it
 *   trace_scenarios threads OUT.json              threads pushing and popping while
 *       the trace starts and stops (for TSan; statuses of the race are not judged)
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr)                                                                                               \
    do {                                                                                                          \
        if (!(expr)) {                                                                                            \
            fprintf(stderr, "%s:%d: FAILED: %s\n  last error: %s\n", __FILE__, __LINE__, #expr, tp_last_error()); \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)
#define CHECK_OK(call) CHECK((call) == TP_OK)

static void sleep_ms(void *arg)
{
    struct timespec t = {0, (long)(intptr_t)arg * 1000000L};
    nanosleep(&t, NULL);
}

static void *native_of(tp_stream *stream)
{
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    return native;
}

static void work(tp_stream *stream, int ms)
{
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_ms, (void *)(intptr_t)ms));
}

#define LONG_NAME "consumer, a name longer than TP_STREAM_NAME_MAX, which the track cuts to 63 bytes"

static int ranges(const char *out, const char *dev_a, const char *dev_b)
{
    tp_stream *a1, *a2, *b;
    tp_event *ev;
    CHECK_OK(tp_stream_create(&a1, dev_a, 0));
    CHECK_OK(tp_stream_create(&a2, dev_a, 0));
    CHECK_OK(tp_stream_create(&b, dev_b, 0));
    CHECK_OK(tp_event_create(&ev, dev_a, TP_EVENT_DEFAULT)); /* no timing: the flow needs none */
    CHECK_OK(tp_set_device(dev_a));
    tp_stream *current;
    CHECK_OK(tp_stream_current(NULL, &current));

    CHECK_OK(tp_stream_set_name(a1, "first name"));
    CHECK_OK(tp_stream_set_name(a2, LONG_NAME));
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(a1, "step"));
    CHECK_OK(tp_stream_set_name(a1, "producer")); /* while its track exists: the track takes it */
    CHECK_OK(tp_range_push(a1, "produce"));
    work(a1, 2);
    CHECK_OK(tp_event_record(ev, a1));
    CHECK_OK(tp_range_pop(a1));
    CHECK_OK(tp_event_wait(ev, a2)); /* same device, another stream; just before a push, in no range */
    CHECK_OK(tp_event_wait(ev, a2)); /* the same record again: no second flow */
    CHECK_OK(tp_range_push(a2, "consume"));
    work(a2, 1);
    CHECK_OK(tp_range_pop(a2));
    CHECK_OK(tp_range_push(b, "other \"device\" \\ caf\xc3\xa9\t"));
    CHECK_OK(tp_stream_wait_event(b, ev)); /* another device, or another backend */
    work(b, 1);
    CHECK_OK(tp_range_push(b, "inner"));
    work(b, 1);
    CHECK_OK(tp_range_pop(b));
    CHECK_OK(tp_stream_wait_stream(a1, b)); /* back again */
    CHECK_OK(tp_range_pop(b));
    CHECK_OK(tp_range_push(a1, "after"));
    work(a1, 1);
    CHECK_OK(tp_range_pop(a1));
    CHECK_OK(tp_range_pop(a1));
    CHECK_OK(tp_range_push(NULL, "on the current stream"));
    work(current, 1);
    CHECK_OK(tp_range_pop(NULL));
    CHECK_OK(tp_trace_stop(out));

    printf("slices 7\n");
    printf("flow %p %p\n", native_of(a1), native_of(a2));
    printf("flow %p %p\n", native_of(a1), native_of(b));
    printf("flow %p %p\n", native_of(b), native_of(a1));
    printf("track %p producer\n", native_of(a1));
    printf("track %p %.*s\n", native_of(a2), TP_STREAM_NAME_MAX - 1, LONG_NAME);     /* cut */
    printf("track %p stream %d\n", native_of(b), strcmp(dev_a, dev_b) == 0 ? 3 : 1); /* unnamed */
    CHECK_OK(tp_event_destroy(ev));
    CHECK_OK(tp_stream_destroy(a1));
    CHECK_OK(tp_stream_destroy(a2));
    CHECK_OK(tp_stream_destroy(b));
    return 0;
}

static int empty(const char *out)
{
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_trace_stop(out));
    printf("slices 0\n");
    return 0;
}

static int errors(const char *dir)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, "cpu:0", 0));
    /* No trace: both do nothing, whatever the arguments. */
    CHECK(tp_range_pop(s) == TP_OK);
    CHECK(tp_range_push(s, NULL) == TP_OK);
    CHECK(tp_range_push(s, "before the trace") == TP_OK);
    CHECK(tp_trace_stop("/dev/null") == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), "no trace is running"));
    CHECK(tp_stream_set_name(NULL, "x") == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), "stream is NULL"));
    CHECK(tp_stream_set_name(s, NULL) == TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_stream_set_name(s, "named, then forgotten"));
    CHECK_OK(tp_stream_set_name(s, "")); /* the track is "stream N" again */

    CHECK_OK(tp_trace_start());
    CHECK(tp_trace_start() == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), "already"));
    /* The push before the trace recorded nothing: its pop finds no range. */
    CHECK(tp_range_pop(s) == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), "no range is open"));
    CHECK(tp_range_push(s, NULL) == TP_ERR_INVALID_ARGUMENT);
    CHECK(tp_trace_stop(NULL) == TP_ERR_INVALID_ARGUMENT); /* and the trace goes on */
    CHECK_OK(tp_range_push(s, "dropped"));
    const char *bad = "/nonexistent-tpevent-dir/trace.json";
    CHECK(tp_trace_stop(bad) == TP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tp_last_error(), bad));
    CHECK(strstr(tp_last_error(), "No such file or directory"));
    /* Stopped all the same: a pop does nothing again, and a new trace works. */
    CHECK(tp_range_pop(s) == TP_OK);
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "again"));
    CHECK_OK(tp_range_pop(s));
    char path[4096];
    snprintf(path, sizeof path, "%s/after_errors.json", dir);
    CHECK_OK(tp_trace_stop(path));
    CHECK_OK(tp_stream_destroy(s));
    printf("ok\n");
    return 0;
}

static int capture(const char *out, const char *dev)
{
    tp_stream *s, *t;
    tp_event *outside, *inside;
    tp_graph *graph, *open_at_stop;
    CHECK_OK(tp_stream_create(&s, dev, 0));
    CHECK_OK(tp_stream_create(&t, dev, 0));
    CHECK_OK(tp_event_create(&outside, dev, TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_create(&inside, dev, TP_EVENT_DEFAULT));

    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_range_push(s, "outer"));
    CHECK_OK(tp_event_record(outside, s));
    CHECK_OK(tp_range_push(t, "waiter"));
    CHECK_OK(tp_stream_wait_event(t, outside)); /* the one flow: s to t */
    CHECK_OK(tp_range_pop(t));

    CHECK_OK(tp_stream_begin_capture(s));
    CHECK_OK(tp_range_push(s, "captured"));
    CHECK_OK(tp_event_record(inside, s));
    CHECK_OK(tp_event_record(outside, s)); /* its latest record is now the graph's */
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_range_push(s, "pushed inside, popped outside"));
    CHECK_OK(tp_stream_end_capture(s, &graph));
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_graph_launch(graph, s));
    CHECK_OK(tp_graph_launch(graph, s));
    CHECK_OK(tp_range_push(s, "after"));
    CHECK_OK(tp_range_pop(s));
    CHECK_OK(tp_range_pop(s)); /* outer */

    CHECK_OK(tp_range_push(s, "open at stop"));
    CHECK_OK(tp_stream_begin_capture(s));
    CHECK_OK(tp_trace_stop(out));
    bool capturing = false;
    CHECK_OK(tp_stream_is_capturing(s, &capturing));
    CHECK(capturing); /* stop recorded nothing into it */
    CHECK_OK(tp_stream_end_capture(s, &open_at_stop));
    CHECK_OK(tp_graph_launch(open_at_stop, s));
    CHECK_OK(tp_stream_synchronize(s));

    printf("slices 3\n");
    printf("names outer waiter after\n");
    printf("flow %p %p\n", native_of(s), native_of(t));
    CHECK_OK(tp_graph_destroy(open_at_stop));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_event_destroy(inside));
    CHECK_OK(tp_event_destroy(outside));
    CHECK_OK(tp_stream_destroy(t));
    CHECK_OK(tp_stream_destroy(s));
    return 0;
}

static void *pusher(void *arg)
{
    tp_stream *s;
    CHECK_OK(tp_stream_create(&s, (intptr_t)arg % 2 ? "cpu:1" : "cpu:0", 0));
    tp_event *e;
    CHECK_OK(tp_event_create(&e, (intptr_t)arg % 2 ? "cpu:1" : "cpu:0", TP_EVENT_TIMING));
    for (int i = 0; i < 2000; i++) {
        (void)tp_range_push(s, i % 2 ? "odd" : "even");
        CHECK_OK(tp_event_record(e, s));
        (void)tp_range_pop(s);
    }
    CHECK_OK(tp_stream_synchronize(s));
    CHECK_OK(tp_event_destroy(e));
    CHECK_OK(tp_stream_destroy(s));
    return NULL;
}

static int threads(const char *out)
{
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, pusher, (void *)i) == 0);
    CHECK_OK(tp_trace_start());
    sleep_ms((void *)(intptr_t)5);
    CHECK_OK(tp_trace_stop(out));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("slices any\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && strcmp(argv[1], "ranges") == 0)
        return ranges(argv[2], argv[3], argv[4]);
    if (argc == 3 && strcmp(argv[1], "empty") == 0)
        return empty(argv[2]);
    if (argc == 3 && strcmp(argv[1], "errors") == 0)
        return errors(argv[2]);
    if (argc == 4 && strcmp(argv[1], "capture") == 0)
        return capture(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "threads") == 0)
        return threads(argv[2]);
    fprintf(stderr, "usage: %s ranges OUT DEV_A DEV_B | empty OUT | errors DIR | capture OUT DEV | threads OUT\n",
            argv[0]);
    return 2;
}
