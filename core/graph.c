/*
 * The public capture calls (rule 16): argument checks, then one indirect call
 * through the stream's or the graph's backend table. A backend without capture
 * answers TP_ERR_UNSUPPORTED, but for tp_stream_is_capturing: never (false).
 */
#include "core/internal.h"

tp_status tp_stream_begin_capture(tp_stream *stream)
{
    if (!stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_begin_capture: stream is NULL");
    if (!stream->backend->stream_begin_capture)
        return tp_unsupported(stream->backend, "capture (tp_stream_begin_capture)");
    return stream->backend->stream_begin_capture(stream);
}

tp_status tp_stream_end_capture(tp_stream *stream, tp_graph **out)
{
    if (!stream || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_end_capture: %s is NULL", stream ? "out" : "stream");
    if (!stream->backend->stream_end_capture)
        return tp_unsupported(stream->backend, "capture (tp_stream_end_capture)");
    return stream->backend->stream_end_capture(stream, out);
}

tp_status tp_stream_is_capturing(tp_stream *stream, bool *capturing)
{
    if (!stream || !capturing)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_is_capturing: %s is NULL", stream ? "capturing" : "stream");
    /* A backend that cannot capture has streams that never are: the question has
     * an answer, unlike begin and end (issue 47 item 5). */
    if (!stream->backend->stream_is_capturing) {
        *capturing = false;
        return TP_OK;
    }
    return stream->backend->stream_is_capturing(stream, capturing);
}

tp_status tp_graph_launch(tp_graph *graph, tp_stream *stream)
{
    if (!graph || !stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_graph_launch: %s is NULL", graph ? "stream" : "graph");
    if (stream->device.type != graph->device.type || stream->device.index != graph->device.index) {
        char graph_device[TP_DEVICE_STRING_MAX], stream_device[TP_DEVICE_STRING_MAX];
        return tp_fail(TP_ERR_DEVICE_MISMATCH, "tp_graph_launch: a graph of %s launched on a stream of %s",
                       tp_device_str(graph->device, graph_device), tp_device_str(stream->device, stream_device));
    }
    if (!graph->backend->graph_launch)
        return tp_unsupported(graph->backend, "tp_graph_launch");
    return graph->backend->graph_launch(graph, stream);
}

tp_status tp_graph_destroy(tp_graph *graph)
{
    if (!graph)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_graph_destroy: graph is NULL");
    if (!graph->backend->graph_destroy)
        return tp_unsupported(graph->backend, "tp_graph_destroy");
    return graph->backend->graph_destroy(graph);
}

tp_status tp_graph_device(tp_graph *graph, tp_device *out)
{
    if (!graph || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_graph_device: %s is NULL", graph ? "out" : "graph");
    *out = graph->device;
    return TP_OK;
}

TP_COLD tp_status tp_refuse_wait_in_capture(tp_event *event, tp_stream *stream)
{
    char event_device[TP_DEVICE_STRING_MAX], stream_device[TP_DEVICE_STRING_MAX];
    if (!(event->flags & TP_EVENT_EXTERNAL))
        return tp_fail(TP_ERR_CAPTURING,
                       "tp_event_wait: the %s stream is capturing, and the %s event's latest record was made outside "
                       "the capture: a wait on it inside a capture needs TP_EVENT_EXTERNAL (rule 16)",
                       tp_device_str(stream->device, stream_device), tp_device_str(event->device, event_device));
    return tp_fail(TP_ERR_CAPTURING,
                   "tp_event_wait: the %s stream is capturing, and its backend cannot capture a wait on an event of "
                   "%s (another backend; rule 16)",
                   tp_device_str(stream->device, stream_device), tp_device_str(event->device, event_device));
}
