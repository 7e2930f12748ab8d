/*
 * The methods of Stream on events and other streams: record_event, record,
 * wait_event, wait_stream and wait (cuda.core's name for both waits), added to the
 * type by tppy_stream_events_init.
 */
#include "tpevent_python.h"

static PyObject *record_on(tppy_stream *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                           const char *function)
{
    PyObject *arg = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.event, function, &arg) < 0)
        return NULL;
    if (arg == Py_None) {
        tp_event *created = NULL;
        tp_status status = tp_stream_record_event(self->stream, &created);
        if (status != TP_OK)
            return tppy_raise(status);
        return tppy_event_adopt(&tppy_event_type, created);
    }
    tp_event *event;
    if (tppy_event_arg(arg, function, &event) < 0)
        return NULL;
    tp_status status = tp_event_record(event, self->stream);
    if (status != TP_OK)
        return tppy_raise(status);
    return Py_NewRef(arg);
}

PyDoc_STRVAR(stream_record_event_doc,
             "record_event($self, /, event=None)\n"
             "--\n"
             "\n"
             "Record an event on the stream: it marks the point after all work\n"
             "submitted to the stream so far.\n"
             "\n"
             "Parameters:\n"
             "    event (tpevent.Event, optional): event to record. If not given, a new one\n"
             "        is created on the stream's device, with timing enabled\n"
             "        (enable_timing=True), so that two of them can be timed against each\n"
             "        other with elapsed_time().\n"
             "\n"
             "Returns:\n"
             "    tpevent.Event: the recorded event.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s = tpevent.Stream(device='cuda')\n"
             ">>> ms = s.record_event().elapsed_time(s.record_event())\n"
             ">>> ms >= 0.0\n"
             "True\n");

static PyObject *stream_record_event(tppy_stream *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return record_on(self, args, nargs, kwnames, "record_event");
}

PyDoc_STRVAR(stream_record_doc,
             "record($self, /, event=None)\n"
             "--\n"
             "\n"
             "The same as record_event(): records the given event, or a new one with\n"
             "timing enabled, on the stream, and returns it.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s1_cuda = tpevent.Stream(device='cuda')\n"
             ">>> e_cuda = s1_cuda.record()\n"
             ">>> e_cuda.enable_timing\n"
             "True\n");

static PyObject *stream_record(tppy_stream *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return record_on(self, args, nargs, kwnames, "record");
}

PyDoc_STRVAR(stream_wait_event_doc,
             "wait_event($self, event, /)\n"
             "--\n"
             "\n"
             "Make all future work submitted to the stream wait for an event: for its\n"
             "latest record at the time of this call. Waiting on an event never\n"
             "recorded does nothing. Never blocks the calling thread.\n"
             "\n"
             "Parameters:\n"
             "    event (tpevent.Event): an event to wait for.\n");

static PyObject *stream_wait_event(tppy_stream *self, PyObject *arg)
{
    tp_event *event;
    if (tppy_event_arg(arg, "wait_event", &event) < 0)
        return NULL;
    tp_status status;
    /* Not blocking but for a runtime queue full of the program's own work: then
     * whatever lets it go (a Python host function) needs the GIL (rule 17). */
    Py_BEGIN_ALLOW_THREADS
    status = tp_stream_wait_event(self->stream, event);
    Py_END_ALLOW_THREADS
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(stream_wait_stream_doc,
             "wait_stream($self, stream, /)\n"
             "--\n"
             "\n"
             "Synchronize with another stream: all future work submitted to this stream\n"
             "waits until all work submitted to the given stream so far is done. Never\n"
             "blocks the calling thread.\n"
             "\n"
             "Parameters:\n"
             "    stream (tpevent.Stream): a stream to synchronize with.\n");

static PyObject *wait_on_stream(tppy_stream *self, PyObject *arg, const char *function)
{
    tp_stream *other;
    PyObject *hold;
    if (tppy_stream_arg(arg, false, function, &other, &hold) < 0)
        return NULL;
    tp_status status;
    Py_BEGIN_ALLOW_THREADS /* as in stream_wait_event */
    status = tp_stream_wait_stream(self->stream, other);
    Py_END_ALLOW_THREADS
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

static PyObject *stream_wait_stream(tppy_stream *self, PyObject *arg)
{
    return wait_on_stream(self, arg, "wait_stream");
}

PyDoc_STRVAR(stream_wait_doc,
             "wait($self, event_or_stream, /)\n"
             "--\n"
             "\n"
             "As cuda.core's Stream.wait(): wait_event(event_or_stream) for a\n"
             "tpevent.Event, else wait_stream(event_or_stream) (a tpevent.Stream or\n"
             "another library's stream). Never blocks the calling thread.\n");

static PyObject *stream_wait(tppy_stream *self, PyObject *arg)
{
    if (PyObject_TypeCheck(arg, &tppy_event_type))
        return stream_wait_event(self, arg);
    return wait_on_stream(self, arg, "wait");
}

static PyMethodDef stream_methods[] = {
    {"record_event", (PyCFunction)(void (*)(void))stream_record_event, METH_FASTCALL | METH_KEYWORDS,
     stream_record_event_doc},
    {"record", (PyCFunction)(void (*)(void))stream_record, METH_FASTCALL | METH_KEYWORDS, stream_record_doc},
    {"wait_event", (PyCFunction)stream_wait_event, METH_O, stream_wait_event_doc},
    {"wait_stream", (PyCFunction)stream_wait_stream, METH_O, stream_wait_stream_doc},
    {"wait", (PyCFunction)stream_wait, METH_O, stream_wait_doc},
    {NULL, NULL, 0, NULL},
};

int tppy_stream_events_init(void)
{
    return tppy_type_add_methods(&tppy_stream_type, stream_methods, NULL);
}
