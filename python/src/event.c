/* tpevent.Event and its namespace twins, one per device type (tpevent.cuda.Event, ...),
 * which default the device to their type. */
#include "tpevent_python.h"
#include "core/device_types.h" /* the list of types, for the namespaces' classes */

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------ creation */

/* The device type a class defaults to: that of the namespace it (or its base) is in. */
int tppy_event_type_namespace(PyTypeObject *type)
{
    for (; type && type != &tppy_event_type; type = type->tp_base) {
        for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++)
            if (type == &tppy_namespace_event_types[t])
                return t;
    }
    return TPPY_ANY_TYPE;
}

PyObject *tppy_event_adopt(PyTypeObject *type, tp_event *event)
{
    tppy_event *self = (tppy_event *)type->tp_alloc(type, 0);
    if (!self) {
        tp_event_destroy(event);
        return NULL;
    }
    self->event = event; /* tp_alloc zeroed the rest */
    return (PyObject *)self;
}

static PyObject *event_create(PyTypeObject *type, PyObject *device, unsigned flags)
{
    if ((flags & TP_EVENT_TIMING) && (flags & TP_EVENT_INTERPROCESS)) /* rule 8, in Python's words */
        return tppy_raise_with(TP_ERR_INVALID_ARGUMENT, "enable_timing and interprocess cannot both be True");
    tppy_device_text scratch;
    const char *device_str;
    if (tppy_device_arg(device, tppy_event_type_namespace(type), &scratch, &device_str) < 0)
        return NULL;
    tp_event *event;
    tp_status status = tp_event_create(&event, device_str, flags);
    if (status != TP_OK)
        return tppy_raise(status);
    return tppy_event_adopt(type, event);
}

/* Used when a subclass written in Python is instantiated (vectorcall is not
 * inherited). */
static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", "enable_timing", "blocking", "interprocess", "external", NULL};
    PyObject *device = Py_None;
    int timing = 0, blocking = 0, interprocess = 0, external = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$pppp:Event", keywords, &device, &timing, &blocking,
                                     &interprocess, &external))
        return NULL;
    unsigned flags = (timing ? TP_EVENT_TIMING : 0u) | (blocking ? TP_EVENT_BLOCKING : 0u) |
                     (interprocess ? TP_EVENT_INTERPROCESS : 0u) | (external ? TP_EVENT_EXTERNAL : 0u);
    return event_create(type, device, flags);
}

enum { KEYWORD_DEVICE, KEYWORD_ENABLE_TIMING, KEYWORD_BLOCKING, KEYWORD_INTERPROCESS, KEYWORD_EXTERNAL, KEYWORD_COUNT };

static int event_keyword(PyObject *name)
{
    PyObject *const known[KEYWORD_COUNT] = {tppy_name.device, tppy_name.enable_timing, tppy_name.blocking,
                                            tppy_name.interprocess, tppy_name.external};
    for (int i = 0; i < KEYWORD_COUNT; i++)
        if (name == known[i])
            return i;
    for (int i = 0; i < KEYWORD_COUNT; i++)
        if (PyUnicode_Compare(name, known[i]) == 0)
            return i;
    return -1;
}

/* Event(...) itself: the creation path, parsed by hand to skip building a tuple and
 * a dict for every event. */
static PyObject *event_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    static const unsigned keyword_flag[KEYWORD_COUNT] = {
        [KEYWORD_ENABLE_TIMING] = TP_EVENT_TIMING,
        [KEYWORD_BLOCKING] = TP_EVENT_BLOCKING,
        [KEYWORD_INTERPROCESS] = TP_EVENT_INTERPROCESS,
        [KEYWORD_EXTERNAL] = TP_EVENT_EXTERNAL,
    };
    PyTypeObject *type = (PyTypeObject *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *device = Py_None;
    unsigned flags = 0;

    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "Event() takes at most 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    if (nargs == 1)
        device = args[0];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        int keyword = event_keyword(name);
        if (keyword < 0) {
            PyErr_Format(PyExc_TypeError, "Event() got an unexpected keyword argument '%U'", name);
            return NULL;
        }
        if (keyword == KEYWORD_DEVICE) {
            if (nargs == 1) {
                PyErr_SetString(PyExc_TypeError, "Event() got multiple values for argument 'device'");
                return NULL;
            }
            device = args[nargs + i];
            continue;
        }
        int truth = PyObject_IsTrue(args[nargs + i]);
        if (truth < 0)
            return NULL;
        if (truth)
            flags |= keyword_flag[keyword];
    }
    return event_create(type, device, flags);
}

static void event_dealloc(tppy_event *self)
{
    /* Safe with a record pending: the backend frees it once reached (rule 9). It
     * cannot fail for a live event, and a destructor has no one to tell. */
    if (self->weak_references)
        PyObject_ClearWeakRefs((PyObject *)self);
    if (self->event || self->closed)
        (void)tp_event_destroy(self->event ? self->event : self->closed);
    Py_XDECREF(self->owner); /* after the wrapper of its native event is gone */
    Py_XDECREF(self->device_name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

int tppy_event_arg(PyObject *arg, const char *function, tp_event **out)
{
    if (!PyObject_TypeCheck(arg, &tppy_event_type)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a tpevent.Event, not %.100s", function, Py_TYPE(arg)->tp_name);
        return -1;
    }
    *out = ((tppy_event *)arg)->event;
    return 0;
}

/* -------------------------------------------------------------- methods */

PyDoc_STRVAR(event_record_doc,
             "record($self, /, stream=None)\n"
             "--\n"
             "\n"
             "Record the event in a given stream. The stream's device must match the\n"
             "event's device. This function is equivalent to stream.record_event(self).\n"
             "\n"
             "Each record replaces the previous one: query(), synchronize() and wait()\n"
             "then refer to the point after all work submitted to the stream so far.\n"
             "\n"
             "Parameters:\n"
             "    stream (tpevent.Stream, optional): A stream to be recorded. If not given,\n"
             "        the current stream of the event's device will be used.\n"
             "\n"
             "Raises:\n"
             "    tpevent.Error: status 'TP_ERR_DEVICE_MISMATCH' for a stream of another\n"
             "        device.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> e_cuda = tpevent.Event(device='cuda')\n"
             ">>> e_cuda.record()\n");

static PyObject *event_record(tppy_event *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    tp_stream *stream = NULL;
    PyObject *hold = NULL; /* a wrapper of another library's stream, for the call */
    if (nargs != 0 || kwnames != NULL) {
        PyObject *arg;
        if (tppy_one_optional_arg(args, nargs, kwnames, tppy_name.stream, "record", &arg) < 0 ||
            tppy_stream_arg(arg, true, "record", &stream, &hold) < 0)
            return NULL;
    }
    tp_status status = tp_event_record(self->event, stream);
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(event_query_doc,
             "query($self, /)\n"
             "--\n"
             "\n"
             "Check if the stream where this event was recorded already moved past the\n"
             "point where the event was recorded. Always returns True if the Event was\n"
             "not recorded. Never blocks.\n"
             "\n"
             "Returns:\n"
             "    bool: A boolean indicating if all work currently captured by event has\n"
             "    completed.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s_cuda = tpevent.Stream(device='cuda')\n"
             ">>> e_cuda = s_cuda.record_event()\n"
             ">>> e_cuda.synchronize()  # the GPU reaches the record microseconds later\n"
             ">>> e_cuda.query()\n"
             "True\n");

static PyObject *event_query(tppy_event *self, PyObject *unused)
{
    (void)unused;
    bool done;
    tp_status status = tp_event_query(self->event, &done);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong(done);
}

PyDoc_STRVAR(event_synchronize_doc,
             "synchronize($self, /, timeout=None)\n"
             "--\n"
             "\n"
             "Wait for the event to complete. This prevents the CPU thread from\n"
             "proceeding until the event completes. Returns at once for an event never\n"
             "recorded. Other Python threads run meanwhile: the GIL is released. An\n"
             "event created with blocking=True sleeps instead of spinning.\n"
             "\n"
             "The wait runs in slices of about 50 ms; between them signal handlers run,\n"
             "so Ctrl-C raises KeyboardInterrupt promptly, and the event stays as it\n"
             "was (it can be waited on again). Waits longer than a few ms poll the\n"
             "event, pausing at most 1 ms between looks.\n"
             "\n"
             "Parameters:\n"
             "    timeout (float, optional): the most seconds to wait; None (the\n"
             "        default) waits as long as it takes, 0 only looks. When it runs\n"
             "        out, TimeoutError is raised and nothing else changes. Negative\n"
             "        is ValueError.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s_cuda = tpevent.Stream(device='cuda')\n"
             ">>> e_cuda = s_cuda.record_event()\n"
             ">>> e_cuda.synchronize()\n");

static tp_status event_wait_slice(void *event, int64_t timeout_ns)
{
    return tp_event_synchronize_for(event, timeout_ns);
}

static PyObject *event_synchronize(tppy_event *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* A record already reached, the common case, costs one query with the GIL
     * held: letting the GIL go and taking it back would cost more than the call.
     * Anything else (not reached, a failed query) takes the waiting path, which
     * queries again and reports. */
    bool done;
    if (nargs == 0 && kwnames == NULL && tp_event_query(self->event, &done) == TP_OK && done)
        Py_RETURN_NONE;
    return tppy_synchronize_method(args, nargs, kwnames, event_wait_slice, self->event, "Event.synchronize");
}

PyDoc_STRVAR(event_wait_doc,
             "wait($self, /, stream=None)\n"
             "--\n"
             "\n"
             "Make all future work submitted to the given stream wait for this event.\n"
             "It waits for the record that is the latest at the time of this call;\n"
             "recording the event again later does not change what it waits for.\n"
             "Waiting on an event never recorded does nothing. Never blocks the\n"
             "calling thread. Equivalent to stream.wait_event(self).\n"
             "\n"
             "Parameters:\n"
             "    stream (tpevent.Stream, optional): A stream to synchronize. If not\n"
             "        given, the current stream of the event's device will be used.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s1_cuda = tpevent.Stream(device='cuda')\n"
             ">>> s2_cuda = tpevent.Stream(device='cuda')\n"
             ">>> e_cuda = s1_cuda.record()\n"
             ">>> e_cuda.wait(s2_cuda)\n");

static PyObject *event_wait(tppy_event *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    tp_stream *stream = NULL;
    PyObject *hold = NULL; /* a wrapper of another library's stream, for the call */
    if (nargs != 0 || kwnames != NULL) {
        PyObject *arg;
        if (tppy_one_optional_arg(args, nargs, kwnames, tppy_name.stream, "wait", &arg) < 0 ||
            tppy_stream_arg(arg, true, "wait", &stream, &hold) < 0)
            return NULL;
    }
    tp_status status;
    /* Not blocking but for a runtime queue full of the program's own work: then
     * whatever lets it go (a Python host function) needs the GIL (rule 17). */
    Py_BEGIN_ALLOW_THREADS
    status = tp_event_wait(self->event, stream);
    Py_END_ALLOW_THREADS
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(event_elapsed_time_doc,
             "elapsed_time($self, end_event, /)\n"
             "--\n"
             "\n"
             "Returns the elapsed time in milliseconds between when this event and the\n"
             "end_event are each recorded via tpevent.Stream.record_event() (or\n"
             "Stream.record(), or Event.record()), negative when end_event's record was\n"
             "reached first. Events of one device are timed on its clock; events of two\n"
             "devices or two backends (a CPU and a CUDA event) on the host clock, as the\n"
             "difference of their timestamp()s, within the two devices' error_ns\n"
             "(device_clock()).\n"
             "\n"
             "Both events must have been created with enable_timing=True; an event that\n"
             "Stream.record_event() creates for you has timing enabled. If a record has\n"
             "not been reached yet, this waits for it (with the GIL released) instead of\n"
             "failing, so that s.record_event().elapsed_time(s.record_event()) works.\n"
             "\n"
             "Parameters:\n"
             "    end_event (tpevent.Event): The ending event has been recorded.\n"
             "\n"
             "Returns:\n"
             "    float: Time between starting and ending event in milliseconds.\n"
             "\n"
             "Raises:\n"
             "    tpevent.Error: with status 'TP_ERR_TIMING_DISABLED' if either event was\n"
             "        created without timing; then tpevent.NotRecordedError (a\n"
             "        tpevent.Error and a ValueError, as torch raises) if either was never\n"
             "        recorded.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s_cuda = tpevent.Stream(device='cuda')\n"
             ">>> e1_cuda = s_cuda.record_event()\n"
             ">>> e2_cuda = s_cuda.record_event()\n"
             ">>> ms = e1_cuda.elapsed_time(e2_cuda)\n");

static PyObject *event_elapsed_time(tppy_event *self, PyObject *end_event)
{
    tp_event *end;
    if (tppy_event_arg(end_event, "elapsed_time", &end) < 0)
        return NULL;
    float ms;
    tp_status status = tp_event_elapsed_time(self->event, end, &ms);
    /* The C call answers TP_ERR_NOT_READY for a record not reached yet; from Python,
     * waiting for it (interruptibly) is what the seed's (TensorPlay's) examples expect. */
    if (status == TP_ERR_NOT_READY) {
        if (tppy_wait_reached(self->event) < 0 || tppy_wait_reached(end) < 0)
            return NULL;
        status = tp_event_elapsed_time(self->event, end, &ms);
    }
    if (status != TP_OK)
        return tppy_raise(status);
    return PyFloat_FromDouble(ms);
}

/* `end - start`: the ms from start's record to end's, as cuda.core's Event reads. */
static PyObject *event_subtract(PyObject *end, PyObject *start)
{
    if (!PyObject_TypeCheck(end, &tppy_event_type) || !PyObject_TypeCheck(start, &tppy_event_type))
        Py_RETURN_NOTIMPLEMENTED;
    return event_elapsed_time((tppy_event *)start, end);
}

static PyNumberMethods event_as_number = {
    .nb_subtract = event_subtract,
};

PyDoc_STRVAR(event_close_doc,
             "close($self, /)\n"
             "--\n"
             "\n"
             "Close the event, as cuda.core's Event.close(): from now on its methods and\n"
             "attributes raise ValueError ('the event is closed'), but close(). The native\n"
             "event goes back to the runtime when the Event object goes; a wait another\n"
             "thread is in finishes first. Closing twice does nothing.\n");

/* The tp_event stays until dealloc: another thread may be inside synchronize()
 * with the GIL released, on this very tp_event. Every C call of a closed Event
 * gets NULL, which the C API refuses (no check added to the binding's paths). */
static PyObject *event_close(tppy_event *self, PyObject *unused)
{
    (void)unused;
    if (self->event) {
        self->closed = self->event;
        self->event = NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))event_record, METH_FASTCALL | METH_KEYWORDS, event_record_doc},
    {"query", (PyCFunction)event_query, METH_NOARGS, event_query_doc},
    {"synchronize", (PyCFunction)(void (*)(void))event_synchronize, METH_FASTCALL | METH_KEYWORDS,
     event_synchronize_doc},
    {"wait", (PyCFunction)(void (*)(void))event_wait, METH_FASTCALL | METH_KEYWORDS, event_wait_doc},
    {"elapsed_time", (PyCFunction)event_elapsed_time, METH_O, event_elapsed_time_doc},
    {"timestamp", tppy_event_timestamp, METH_NOARGS, tppy_event_timestamp_doc},
    {"close", (PyCFunction)event_close, METH_NOARGS, event_close_doc},
    {NULL, NULL, 0, NULL},
};

/* ----------------------------------------------------------- attributes */

static PyObject *event_get_device(tppy_event *self, void *closure)
{
    (void)closure;
    if (!self->device_name) {
        tp_device device;
        tp_status status = tp_event_device(self->event, &device);
        if (status != TP_OK)
            return tppy_raise(status);
        self->device_name = tppy_device_name(device);
        if (!self->device_name)
            return NULL;
    }
    return Py_NewRef(self->device_name);
}

/* closure: the flag bit the attribute shows. */
static PyObject *event_get_flag(tppy_event *self, void *closure)
{
    unsigned flags;
    tp_status status = tp_event_flags(self->event, &flags);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong((flags & (unsigned)(uintptr_t)closure) != 0);
}

static PyGetSetDef event_getset[] = {
    {"device", (getter)event_get_device, NULL,
     "The device of the event, as a str such as 'cuda:0' (the index is always given).", NULL},
    {"enable_timing", (getter)event_get_flag, NULL, "True if the event measures time (elapsed_time()).",
     (void *)(uintptr_t)TP_EVENT_TIMING},
    {"blocking", (getter)event_get_flag, NULL, "True if synchronize() sleeps instead of spinning.",
     (void *)(uintptr_t)TP_EVENT_BLOCKING},
    {"interprocess", (getter)event_get_flag, NULL, "True if the event can be shared with other processes.",
     (void *)(uintptr_t)TP_EVENT_INTERPROCESS},
    {"external", (getter)event_get_flag, NULL, "True if a record inside a graph capture is made again at each replay.",
     (void *)(uintptr_t)TP_EVENT_EXTERNAL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *event_repr(tppy_event *self)
{
    tp_device device;
    unsigned flags;
    char device_text[TP_DEVICE_STRING_MAX];
    if (!self->event)
        return PyUnicode_FromFormat("<%s (closed)>", Py_TYPE(self)->tp_name);
    if (tp_event_device(self->event, &device) != TP_OK || tp_event_flags(self->event, &flags) != TP_OK ||
        tp_device_format(device, device_text, sizeof device_text) != TP_OK)
        return PyUnicode_FromFormat("<%s at %p>", Py_TYPE(self)->tp_name, (void *)self);
    return PyUnicode_FromFormat("<%s device='%s' enable_timing=%s blocking=%s interprocess=%s>", Py_TYPE(self)->tp_name,
                                device_text, (flags & TP_EVENT_TIMING) ? "True" : "False",
                                (flags & TP_EVENT_BLOCKING) ? "True" : "False",
                                (flags & TP_EVENT_INTERPROCESS) ? "True" : "False");
}

/* ----------------------------------------------------------------- types */

PyDoc_STRVAR(event_doc,
             "Event(device=None, *, enable_timing=False, blocking=False, interprocess=False, external=False)\n"
             "--\n"
             "\n"
             "Query and record Stream status to identify or control dependencies across\n"
             "Stream and measure timing.\n"
             "\n"
             "Parameters:\n"
             "    device (str or int, optional): the desired device for the Event: a\n"
             "        device string such as 'cuda:1', or a type alone such as 'cuda' (the\n"
             "        thread's current device of that type), or an int (an index of the\n"
             "        current device's type). If not given, the current device will be\n"
             "        used. An object with `type` and `index` attributes, such as a\n"
             "        torch.device, is accepted too.\n"
             "    enable_timing (bool, optional): indicates if the event should measure\n"
             "        time (default: False).\n"
             "    blocking (bool, optional): if True, synchronize() sleeps instead of\n"
             "        spinning while it waits (default: False).\n"
             "    interprocess (bool, optional): if True, the event can be shared between\n"
             "        processes with ipc_handle() and from_ipc_handle() (default: False).\n"
             "        It cannot be combined with enable_timing.\n"
             "    external (bool, optional): if True, a record of the event inside a graph\n"
             "        capture is made again at each replay, and a wait on it inside a\n"
             "        capture waits at each replay, as torch.cuda.Event(external=True)\n"
             "        (default: False).\n"
             "\n"
             "Events work on the CPU as well as on CUDA and HIP devices. No native event\n"
             "exists until the event is first recorded. `end - start` is\n"
             "start.elapsed_time(end), as cuda.core reads it.\n"
             "\n"
             "Returns:\n"
             "    A tpevent.Event object.\n"
             "\n"
             "Raises:\n"
             "    ValueError: a bad device string, an index out of range, or interprocess\n"
             "        together with enable_timing.\n"
             "    tpevent.Error: the device's backend is unavailable\n"
             "        ('TP_ERR_BACKEND_UNAVAILABLE') or failed.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> event = tpevent.Event()\n"
             ">>> e_cuda = tpevent.Event(device='cuda')\n");

/* clang-format off */
PyTypeObject tppy_event_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tpevent.Event",
    .tp_basicsize = sizeof(tppy_event),
    .tp_dealloc = (destructor)event_dealloc,
    .tp_repr = (reprfunc)event_repr,
    .tp_as_number = &event_as_number,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = event_doc,
    .tp_weaklistoffset = offsetof(tppy_event, weak_references),
    .tp_methods = event_methods,
    .tp_getset = event_getset,
    .tp_new = event_new,
    .tp_vectorcall = event_vectorcall,
};

#define NAMESPACE_EVENT_TYPE(type_name)                                                                       \
    {                                                                                                          \
        PyVarObject_HEAD_INIT(NULL, 0)                                                                         \
        .tp_name = "tpevent." type_name ".Event",                                                              \
        .tp_basicsize = sizeof(tppy_event),                                                                    \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,                                                  \
        .tp_doc = "Event(device=None, *, enable_timing=False, blocking=False, interprocess=False, external=False)\n--\n\n"    \
                  "A tpevent.Event whose device defaults to '" type_name "': the current " type_name          \
                  " device.\nAn int device is a " type_name " index ('" type_name ":<int>'); a device of "     \
                  "another type\nis a ValueError. See tpevent.Event.",                                        \
        .tp_base = &tppy_event_type,                                                                           \
        .tp_new = event_new,                                                                                   \
        .tp_vectorcall = event_vectorcall,                                                                     \
    }

/* One per device type of the list (cmake/TpeventDeviceTypes.cmake), by its value. */
#define NAMESPACE_EVENT_ENTRY(upper, name, value, kind) [value] = NAMESPACE_EVENT_TYPE(#name),
PyTypeObject tppy_namespace_event_types[TP_DEVICE_TYPE_COUNT] = {TP_PUBLIC_DEVICE_TYPES(NAMESPACE_EVENT_ENTRY)};
#undef NAMESPACE_EVENT_ENTRY
/* clang-format on */

int tppy_event_types_init(PyObject *module, PyObject *namespaces[TP_DEVICE_TYPE_COUNT])
{
    if (PyType_Ready(&tppy_event_type) < 0)
        return -1;
    Py_INCREF(&tppy_event_type);
    if (PyModule_AddObject(module, "Event", (PyObject *)&tppy_event_type) < 0) {
        Py_DECREF(&tppy_event_type);
        return -1;
    }
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        PyTypeObject *type = &tppy_namespace_event_types[t];
        if (PyType_Ready(type) < 0)
            return -1;
        Py_INCREF(type);
        if (PyModule_AddObject(namespaces[t], "Event", (PyObject *)type) < 0) {
            Py_DECREF(type);
            return -1;
        }
    }
    return 0;
}
