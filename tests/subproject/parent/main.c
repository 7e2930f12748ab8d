/* Times an empty stretch of a CPU stream through the tpevent built as a subproject. */
#include <stdio.h>

#include <tpevent/tpevent.h>

int main(void)
{
    tp_stream *stream = NULL;
    tp_event *start = NULL, *end = NULL;
    float ms = -1.0f;
    if (tp_stream_create(&stream, "cpu", 0) != TP_OK || tp_stream_record_event(stream, &start) != TP_OK ||
        tp_stream_record_event(stream, &end) != TP_OK || tp_event_synchronize(end) != TP_OK ||
        tp_event_elapsed_time(start, end, &ms) != TP_OK) {
        fprintf(stderr, "uses_tpevent: %s\n", tp_last_error());
        return 1;
    }
    printf("uses_tpevent: tpevent %s, elapsed %.6f ms\n", tp_version_string(), (double)ms);
    tp_event_destroy(start);
    tp_event_destroy(end);
    tp_stream_destroy(stream);
    return ms >= 0.0f ? 0 : 1;
}
