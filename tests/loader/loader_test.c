/*
 * The module loader, end to end: this program links a copy of libtpevent.so that has
 * no backend modules beside it, so the modules it finds are the broken ones that
 * TPEVENT_BACKEND_PATH points at. Each case (argv[1]) says one thing: the hip
 * backend is unavailable with a reason naming the file and the cause, and the cpu
 * backend keeps working in the same process.
 *
 *   loader_test <expected status name> <substring of the reason>...
 */
#include <tpevent/tpevent.h>

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static void check_cpu_still_works(void)
{
    tp_event *start = NULL, *end = NULL;
    tp_stream *stream = NULL;
    float ms = -1;
    CHECK(tp_stream_create(&stream, "cpu", 0) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_create(&start, "cpu", TP_EVENT_TIMING) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_create(&end, "cpu", TP_EVENT_TIMING) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_record(start, stream) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_record(end, stream) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_synchronize(end) == TP_OK, "%s", tp_last_error());
    CHECK(tp_event_elapsed_time(start, end, &ms) == TP_OK && ms >= 0, "%s", tp_last_error());
    tp_event_destroy(start);
    tp_event_destroy(end);
    tp_stream_destroy(stream);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <expected status name> [reason substring]...\n", argv[0]);
        return 2;
    }
    const char *reason = NULL;
    tp_status status = tp_backend_status("hip", &reason);
    printf("hip: %s: %s\n", tp_status_name(status), reason ? reason : "(null)");
    CHECK(strcmp(tp_status_name(status), argv[1]) == 0, "status %s, expected %s", tp_status_name(status), argv[1]);
    CHECK(reason && *reason, "no reason given");
    for (int i = 2; i < argc && reason; i++)
        CHECK(strstr(reason, argv[i]) != NULL, "reason lacks \"%s\"", argv[i]);

    /* Asking again gives the same verdict: the module is tried once. */
    const char *again = NULL;
    CHECK(tp_backend_status("hip", &again) == status && again == reason, "verdict changed");

    /* Using it fails cleanly, with the reason in the message. */
    tp_event *event = NULL;
    CHECK(tp_event_create(&event, "hip:0", 0) == TP_ERR_BACKEND_UNAVAILABLE, "%s", tp_last_error());
    CHECK(event == NULL, "event written on failure");
    CHECK(strstr(tp_last_error(), "hip") != NULL, "message: %s", tp_last_error());

    check_cpu_still_works();
    return failures ? 1 : 0;
}
