/*
 * The C library's messages in the words of a Python user (tppy_python_message).
 *
 * The C API's messages name the C calls a failure went through
 * ("tp_stream_synchronize_for: tp_stream_query: cudaStreamQuery failed: ...") and
 * the design's rules ("(rule 16)"): right for a C programmer with the sources, noise
 * for a Python user, whose traceback already names the method. So the chain of C
 * function names in front of a message goes, the C names left inside it become the
 * Python names of the same thing (TP_EVENT_TIMING: enable_timing=True,
 * tp_event_elapsed_time: Event.elapsed_time), and rule numbers go. The runtime's own
 * names (cudaStreamQuery) stay: they say what failed underneath.
 */
#include "tpevent_python.h"

#include <ctype.h>
#include <string.h>

/* C names and their Python words, a longer name before any name it starts with. */
static const char *const python_words[][2] = {
    /* What the binding makes impossible but for a closed Event (Event.close()). */
    {"event is NULL", "the event is closed"},
    {"start is NULL", "the start event is closed"},
    {"end is NULL", "the end event is closed"},
    {"a TP_EVENT_EXTERNAL event", "an event made with external=True"},
    {"TP_EVENT_TIMING", "enable_timing=True"},
    {"TP_EVENT_BLOCKING", "blocking=True"},
    {"TP_EVENT_INTERPROCESS", "interprocess=True"},
    {"TP_EVENT_EXTERNAL", "external=True"},
    {"tp_event_create", "Event()"},
    {"tp_event_destroy", "Event.close"},
    {"tp_event_record", "Event.record"},
    {"tp_event_query", "Event.query"},
    {"tp_event_synchronize_for", "Event.synchronize"},
    {"tp_event_synchronize", "Event.synchronize"},
    {"tp_event_wait", "Event.wait"},
    {"tp_event_elapsed_time", "Event.elapsed_time"},
    {"tp_event_timestamp", "Event.timestamp"},
    {"tp_event_ipc_handle", "Event.ipc_handle"},
    {"tp_event_from_ipc_handle", "Event.from_ipc_handle"},
    {"tp_event_from_native", "Event.from_native"},
    {"tp_event_native", "Event.native_handle"},
    {"tp_event_device", "Event.device"},
    {"tp_event_flags", "the Event's flags"},
    {"tp_stream_create", "Stream()"},
    {"tp_stream_destroy", "the Stream's end"},
    {"tp_stream_from_native", "Stream.from_native"},
    {"tp_stream_query", "Stream.query"},
    {"tp_stream_synchronize_for", "Stream.synchronize"},
    {"tp_stream_synchronize", "Stream.synchronize"},
    {"tp_stream_wait_event", "Stream.wait_event"},
    {"tp_stream_wait_stream", "Stream.wait_stream"},
    {"tp_stream_record_event", "Stream.record_event"},
    {"tp_stream_launch_host_fn", "Stream.launch_host_func"},
    {"tp_stream_is_capturing", "Stream.is_capturing"},
    {"tp_stream_begin_capture", "Graph.capture_begin"},
    {"tp_stream_end_capture", "Graph.capture_end"},
    {"tp_stream_priority_range", "Stream.priority_range"},
    {"tp_stream_priority", "Stream.priority"},
    {"tp_stream_native", "Stream.native_handle"},
    {"tp_stream_device", "Stream.device"},
    {"tp_stream_default", "default_stream"},
    {"tp_stream_current", "current_stream"},
    {"tp_stream_set_current", "set_stream"},
    {"tp_graph_launch", "Graph.replay"},
    {"tp_graph_destroy", "Graph.reset"},
    {"tp_graph_device", "Graph.device"},
    {"tp_device_synchronize", "synchronize"},
    {"tp_device_count", "device_count"},
    {"tp_device_clock", "device_clock"},
    {"tp_device_type", "device type"},
    {"tp_device_str", "device string"},
    {"tp_set_device", "set_device"},
    {"tp_current_device", "current_device"},
    {"tp_backend_status", "is_available"},
    {"tp_backend_get_info", "backends"},
    {"tp_trace_start", "trace_start"},
    {"tp_trace_stop", "trace_stop"},
    {"tp_range_push", "range_push"},
    {"tp_range_pop", "range_pop"},
    {"tp_measure with TP_MEASURE_COLD", "measure with cold=True"},
    {"tp_measure", "measure"},
};

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The length of the C function name at `text` ("tp_event_query"), else 0. */
static size_t function_name_length(const char *text)
{
    if (strncmp(text, "tp_", 3) != 0)
        return 0;
    size_t n = 3;
    while (is_name_char(text[n]))
        n++;
    return n;
}

static void cut(char *text, size_t at, size_t count)
{
    memmove(text + at, text + at + count, strlen(text + at + count) + 1);
}

/* "tp_stream_synchronize_for: tp_stream_query: cudaStreamQuery failed" is
 * "cudaStreamQuery failed": every "tp_name: " goes, wherever the chain starts. */
static void drop_function_prefixes(char *text)
{
    for (size_t i = 0; text[i];) {
        size_t n = (i == 0 || !is_name_char(text[i - 1])) ? function_name_length(text + i) : 0;
        if (n > 0 && text[i + n] == ':' && text[i + n + 1] == ' ')
            cut(text, i, n + 2);
        else
            i++;
    }
}

/* " (rule 16)", "(rule 15) " and ", rule 16)" go; so does a space left before
 * the end of a sentence. */
static void drop_rule_numbers(char *text)
{
    for (size_t i = 0; text[i];) {
        if (strncmp(text + i, "rule ", 5) != 0 || !isdigit((unsigned char)text[i + 5])) {
            i++;
            continue;
        }
        size_t end = i + 5;
        while (isdigit((unsigned char)text[end]))
            end++;
        if (i >= 1 && text[i - 1] == '(' && text[end] == ')') {
            size_t start = i - 1;
            end++;
            if (start >= 1 && text[start - 1] == ' ')
                start--;
            else if (text[end] == ' ')
                end++;
            cut(text, start, end - start);
            i = start;
        } else if (i >= 2 && text[i - 2] == ',' && text[i - 1] == ' ' && text[end] == ')') {
            cut(text, i - 2, end - (i - 2));
            i -= 2;
        } else {
            i = end;
        }
    }
}

static PyObject *replace_words(PyObject *text, const char *message)
{
    for (size_t i = 0; text && i < sizeof python_words / sizeof python_words[0]; i++) {
        if (!strstr(message, python_words[i][0]))
            continue;
        PyObject *from = PyUnicode_FromString(python_words[i][0]), *to = PyUnicode_FromString(python_words[i][1]);
        PyObject *replaced = from && to ? PyUnicode_Replace(text, from, to, -1) : NULL;
        Py_XDECREF(from);
        Py_XDECREF(to);
        Py_SETREF(text, replaced);
    }
    return text;
}

PyObject *tppy_python_message(const char *message)
{
    size_t size = strlen(message) + 1;
    char *text = PyMem_Malloc(size);
    if (!text)
        return PyErr_NoMemory();
    memcpy(text, message, size);
    drop_function_prefixes(text);
    drop_rule_numbers(text);
    /* A message may quote a file path, which need not be UTF-8. */
    PyObject *words = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    words = replace_words(words, text);
    PyMem_Free(text);
    return words;
}
