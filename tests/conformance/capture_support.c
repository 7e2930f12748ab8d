/* Whether a device captures. */
#include "capture_support.h"

#include <stdio.h>

bool capture_supported(const char *device)
{
    /* A stream of its own: CUDA cannot capture its legacy default stream. */
    tp_stream *stream = new_stream(device);
    tp_status status = tp_stream_begin_capture(stream);
    if (status == TP_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", tp_last_error());
        CHECK_OK(tp_stream_destroy(stream));
        return false;
    }
    CHECK_OK(status);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(stream));
    return true;
}
