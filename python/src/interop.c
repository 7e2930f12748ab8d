/*
 * Interop with torch, CuPy and cuda.core (README, interop): Stream.from_external
 * (every stream argument takes other libraries' streams: stream_arg.c), tpevent's
 * CUDA streams given out through __cuda_stream__, priority ranges, native events
 * both ways, and host functions in Python (dropped once the interpreter exits:
 * at_exit.c).
 */
#include "tpevent_python.h"

#include <stdlib.h>

PyDoc_STRVAR(stream_from_external_doc,
             "from_external($cls, stream, /)\n"
             "--\n"
             "\n"
             "A Stream for another library's CUDA stream, taken as every stream argument\n"
             "of tpevent takes one: an object with __cuda_stream__ (cuda.core, numba,\n"
             "CuPy), a torch.cuda.Stream (.cuda_stream) or a CuPy stream (.ptr). The\n"
             "Stream keeps that object alive and does not own its native stream. A\n"
             "tpevent.Stream is returned as it is.\n");

static PyObject *stream_from_external(PyObject *cls, PyObject *arg)
{
    if (PyObject_TypeCheck(arg, &tppy_stream_type))
        return Py_NewRef(arg);
    PyObject *wrapper = NULL;
    int found = tppy_foreign_stream(arg, (PyTypeObject *)cls, &wrapper);
    if (found == 0)
        PyErr_Format(
            PyExc_TypeError,
            "from_external() expects a stream: an object with __cuda_stream__, .cuda_stream or .ptr, not %.100s",
            Py_TYPE(arg)->tp_name);
    return found > 0 ? wrapper : NULL;
}

/* -------------------------------------------------- streams given out */

static PyObject *cuda_stream_protocol(PyObject *self, PyObject *unused)
{
    (void)unused;
    return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(((tppy_stream *)self)->native));
}

static PyMethodDef cuda_stream_def = {"__cuda_stream__", cuda_stream_protocol, METH_NOARGS,
                                      "The CUDA stream protocol: (0, the cudaStream_t as an int)."};

/* Only CUDA streams follow the protocol: for others the attribute is missing, so
 * hasattr() says False. */
static PyObject *stream_get_cuda_stream_protocol(tppy_stream *self, void *closure)
{
    (void)closure;
    if (self->device.type != TP_DEVICE_CUDA) {
        PyErr_Format(PyExc_AttributeError, "a %s stream has no __cuda_stream__ (only CUDA streams do)",
                     tp_device_type_name(self->device.type));
        return NULL;
    }
    return PyCFunction_New(&cuda_stream_def, (PyObject *)self);
}

static PyObject *stream_get_cuda_stream(tppy_stream *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(self->native);
}

PyDoc_STRVAR(stream_priority_range_doc,
             "priority_range($cls, /, device=None)\n"
             "--\n"
             "\n"
             "The device's stream priorities as (least, greatest), as torch's\n"
             "Stream.priority_range(): greatest runs first and is the lower number\n"
             "(CUDA: (0, -5) on an H200; CPU: (0, -2)).\n");

static PyObject *stream_priority_range(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", NULL};
    PyObject *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:priority_range", keywords, &device))
        return NULL;
    tppy_device_text scratch;
    const char *device_str;
    int ns = tppy_stream_type_namespace((PyTypeObject *)cls);
    if (tppy_device_arg(device, ns, &scratch, &device_str) < 0)
        return NULL;
    int least, greatest;
    tp_status status = tp_stream_priority_range(device_str, &least, &greatest);
    if (status != TP_OK)
        return tppy_raise(status);
    return Py_BuildValue("(ii)", least, greatest);
}

/* --------------------------------------------------- host functions */

typedef struct host_call {
    PyObject *callback;
    PyObject *arg;    /* NULL: callback() */
    PyObject *stream; /* add_callback: callback(stream, 0, arg) */
    /* Launched into a capture (rule 16): the graph calls it at every replay, for
     * as long as anyone may replay it, which Python cannot know; so it is kept,
     * with its references, for the rest of the process. */
    bool captured;
} host_call;

static void host_call_free(host_call *call)
{
    Py_DECREF(call->callback);
    Py_XDECREF(call->arg);
    Py_XDECREF(call->stream);
    free(call);
}

/* On the stream's host-function thread. At exit the call is dropped without the
 * GIL (its references leak: they cannot be dropped without it). */
static void run_host_call(void *p)
{
    host_call *call = p;
    if (tppy_exiting())
        return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result;
    if (call->stream)
        result = PyObject_CallFunction(call->callback, "OiO", call->stream, 0, call->arg);
    else if (call->arg)
        result = PyObject_CallOneArg(call->callback, call->arg);
    else
        result = PyObject_CallNoArgs(call->callback);
    if (result)
        Py_DECREF(result);
    else
        PyErr_WriteUnraisable(call->callback); /* sys.unraisablehook: reported, never lost */
    if (!call->captured)
        host_call_free(call);
    PyGILState_Release(gil);
}

static PyObject *launch(tppy_stream *self, PyObject *callback, PyObject *arg, bool with_stream)
{
    if (!PyCallable_Check(callback)) {
        PyErr_Format(PyExc_TypeError, "the callback must be callable, not %.100s", Py_TYPE(callback)->tp_name);
        return NULL;
    }
    host_call *call = malloc(sizeof *call);
    if (!call)
        return PyErr_NoMemory();
    call->callback = Py_NewRef(callback);
    call->arg = Py_XNewRef(arg);
    call->stream = with_stream ? Py_NewRef((PyObject *)self) : NULL;
    bool capturing = false;
    call->captured = tp_stream_is_capturing(self->stream, &capturing) == TP_OK && capturing;
    /* Without the GIL: a full queue blocks the launch until the stream drains, and
     * what it drains may be Python host functions, which take the GIL. */
    tp_status status;
    Py_BEGIN_ALLOW_THREADS
    status = tp_stream_launch_host_fn(self->stream, run_host_call, call);
    Py_END_ALLOW_THREADS
    if (status != TP_OK) {
        host_call_free(call);
        return tppy_raise(status);
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(stream_launch_host_func_doc,
             "launch_host_func($self, callback, arg=<none>, /)\n"
             "--\n"
             "\n"
             "Run callback(arg) (CuPy's launch_host_func), or callback() without arg, on\n"
             "a host thread once all work submitted to the stream so far is done; later\n"
             "work waits for it to return. The GIL is taken for the call. An exception\n"
             "it raises goes to sys.unraisablehook (it cannot reach the caller, who has\n"
             "moved on) and the stream runs on. Callbacks still pending when the\n"
             "interpreter exits are dropped, never run. Launched into a capture (the\n"
             "CPU's, or torch.cuda.graph on a wrapped stream), it runs at every replay\n"
             "and is kept, with arg, for the rest of the process. On every backend a\n"
             "callback runs on a tpevent thread, captured or not, and may call tpevent\n"
             "and the runtime (not synchronize its own stream).\n");

static PyObject *stream_launch_host_func(tppy_stream *self, PyObject *args)
{
    PyObject *callback, *arg = NULL;
    if (!PyArg_ParseTuple(args, "O|O:launch_host_func", &callback, &arg))
        return NULL;
    return launch(self, callback, arg, false);
}

PyDoc_STRVAR(stream_add_callback_doc,
             "add_callback($self, callback, arg, /)\n"
             "--\n"
             "\n"
             "CuPy's add_callback: callback(stream, status, arg) runs as a host function\n"
             "(see launch_host_func), with this Stream and status 0.\n");

static PyObject *stream_add_callback(tppy_stream *self, PyObject *args)
{
    PyObject *callback, *arg;
    if (!PyArg_ParseTuple(args, "OO:add_callback", &callback, &arg))
        return NULL;
    return launch(self, callback, arg, true);
}

/* ------------------------------------------------------- native events */

static PyObject *event_get_native_handle(tppy_event *self, void *closure)
{
    (void)closure;
    void *native = NULL;
    tp_status status = tp_event_native(self->event, &native);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyLong_FromVoidPtr(native);
}

PyDoc_STRVAR(event_from_native_doc,
             "from_native($cls, device, handle)\n"
             "--\n"
             "\n"
             "Wrap a runtime event made elsewhere: an int (a cudaEvent_t, or on an\n"
             "OpenCL device a cl_event such as pyopencl's Event.int_ptr), a\n"
             "torch.cuda.Event (its cuda_event; record it first, torch makes its event\n"
             "at the first record) or a CuPy Event (its ptr). Records go on that native\n"
             "event, and queries, waits and timing answer for its latest record, whoever\n"
             "made it; an OpenCL event is one command's, so it is read-only (a record is\n"
             "tpevent.Error). The Event keeps the object it was given alive; an int's\n"
             "event must outlive the Event. The CPU has no native events (tpevent.Error).\n");

static PyObject *event_from_native(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", "handle", NULL};
    PyObject *device, *handle;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:from_native", keywords, &device, &handle))
        return NULL;
    PyObject *owner = NULL, *number = handle;
    if (!PyLong_Check(handle)) {
        static const char *const names[] = {"cuda_event", "ptr"}; /* torch's, CuPy's */
        bool error = false;
        number = NULL;
        for (size_t i = 0; !number && !error && i < sizeof names / sizeof names[0]; i++)
            number = tppy_optional_attr(handle, names[i], &error);
        if (error)
            return NULL;
        if (!number || !PyLong_Check(number)) {
            Py_XDECREF(number);
            return PyErr_Format(PyExc_TypeError,
                                "from_native() expects an int, a torch.cuda.Event or a CuPy Event, not %.100s",
                                Py_TYPE(handle)->tp_name);
        }
        owner = handle;
    }
    void *native = PyLong_AsVoidPtr(number);
    if (number != handle)
        Py_DECREF(number);
    if (!native && PyErr_Occurred())
        return NULL;
    if (!native && owner) {
        PyErr_Format(PyExc_ValueError, "from_native(): the %.100s has no native event yet (record it first)",
                     Py_TYPE(owner)->tp_name);
        return NULL;
    }
    tppy_device_text scratch;
    const char *device_str;
    int ns = tppy_event_type_namespace((PyTypeObject *)cls);
    if (tppy_device_arg(device, ns, &scratch, &device_str) < 0)
        return NULL;
    tp_event *event;
    tp_status status = tp_event_from_native(&event, device_str, native);
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *wrapper = tppy_event_adopt((PyTypeObject *)cls, event);
    if (wrapper)
        ((tppy_event *)wrapper)->owner = Py_XNewRef(owner);
    return wrapper;
}

/* ---------------------------------------------------------------- tables */

static PyMethodDef stream_methods[] = {
    {"from_external", stream_from_external, METH_O | METH_CLASS, stream_from_external_doc},
    {"priority_range", (PyCFunction)(void (*)(void))stream_priority_range, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     stream_priority_range_doc},
    {"launch_host_func", (PyCFunction)stream_launch_host_func, METH_VARARGS, stream_launch_host_func_doc},
    {"add_callback", (PyCFunction)stream_add_callback, METH_VARARGS, stream_add_callback_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"__cuda_stream__", (getter)stream_get_cuda_stream_protocol, NULL,
     "The CUDA stream protocol (cuda.core, numba, CuPy): a method returning (0, handle),\n"
     "on CUDA streams only.",
     NULL},
    {"cuda_stream", (getter)stream_get_cuda_stream, NULL, "The native handle as an int, as torch names it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef event_methods[] = {
    {"from_native", (PyCFunction)(void (*)(void))event_from_native, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     event_from_native_doc},
    {NULL, NULL, 0, NULL},
};

#define NATIVE_HANDLE_DOC                                                                     \
    "The runtime's event behind the latest record as an int (cudaEvent_t, hipEvent_t), for\n" \
    "another library to query or wait on; 0 for the CPU and before the first record.\n"       \
    "Valid until the next record or the Event's end (native events are pooled)."

static PyGetSetDef event_getset[] = {
    {"native_handle", (getter)event_get_native_handle, NULL, NATIVE_HANDLE_DOC, NULL},
    {"cuda_event", (getter)event_get_native_handle, NULL, "native_handle, as torch.cuda.Event names it.", NULL},
    {"event_id", (getter)event_get_native_handle, NULL, "native_handle, as torch.Event names it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

int tppy_interop_init(void)
{
    if (tppy_type_add_methods(&tppy_stream_type, stream_methods, stream_getset) < 0 ||
        tppy_type_add_methods(&tppy_event_type, event_methods, event_getset) < 0)
        return -1;
    return 0;
}
