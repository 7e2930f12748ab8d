/*
 * Interop with torch, CuPy and cuda.core (README, interop): streams of other
 * libraries taken wherever a stream is (duck-typed: nothing here imports them),
 * tpevent's CUDA streams given out through __cuda_stream__, priority ranges, native
 * events both ways, host functions in Python, and what the interpreter's exit may
 * and may not do.
 */
#include "tpevent_python.h"

#include <stdatomic.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ exit */

static atomic_bool exiting;

bool tppy_exiting(void)
{
    if (atomic_load_explicit(&exiting, memory_order_acquire))
        return true;
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

static PyObject *module_at_exit(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    atomic_store_explicit(&exiting, true, memory_order_release);
    Py_RETURN_NONE;
}

/* --------------------------------------------------- streams taken in */

static int namespace_of(PyTypeObject *type, PyTypeObject *base, PyTypeObject *namespaces)
{
    for (; type && type != base; type = type->tp_base)
        for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++)
            if (type == &namespaces[t])
                return t;
    return TPPY_ANY_TYPE;
}

/* A new reference to attribute `name`, or NULL: *error tells a failure from absence. */
static PyObject *optional_attr(PyObject *object, const char *name, bool *error)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    *error = false;
    if (!value) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        else
            *error = true;
    }
    return value;
}

/* The native handle of another library's stream: 1 found, 0 not a stream, -1 error. */
static int foreign_handle(PyObject *arg, void **handle)
{
    bool error;
    PyObject *value = optional_attr(arg, "__cuda_stream__", &error);
    if (error)
        return -1;
    if (value) {
        /* The protocol's method (cuda.core, numba, CuPy); early cuda.core had a property. */
        if (PyCallable_Check(value))
            Py_SETREF(value, PyObject_CallNoArgs(value));
        if (!value)
            return -1;
        if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2) {
            PyErr_Format(PyExc_TypeError, "__cuda_stream__ of %.100s returned %.100s, not a (version, handle) tuple",
                         Py_TYPE(arg)->tp_name, Py_TYPE(value)->tp_name);
            Py_DECREF(value);
            return -1;
        }
        *handle = PyLong_AsVoidPtr(PyTuple_GET_ITEM(value, 1));
        Py_DECREF(value);
        return *handle || !PyErr_Occurred() ? 1 : -1;
    }
    static const char *const names[] = {"cuda_stream", "ptr"}; /* torch's, CuPy's */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        value = optional_attr(arg, names[i], &error);
        if (error)
            return -1;
        if (!value)
            continue;
        if (!PyLong_Check(value)) {
            Py_DECREF(value);
            continue;
        }
        *handle = PyLong_AsVoidPtr(value);
        Py_DECREF(value);
        return *handle || !PyErr_Occurred() ? 1 : -1;
    }
    return 0;
}

/* "cuda:1" from an index attribute (CuPy's device_id, cuda.core's Device.device_id). */
static int device_from_id(PyObject *id, int type, tppy_device_text *scratch, const char **out)
{
    long index = PyLong_AsLong(id);
    if (index == -1 && PyErr_Occurred())
        return -1;
    tp_device device = {(tp_device_type)type, (int)index};
    if (index < 0 || index >= TP_MAX_DEVICES || tp_device_format(device, scratch->text, sizeof scratch->text) != TP_OK) {
        PyErr_Format(PyExc_ValueError, "device index %ld out of range", index);
        return -1;
    }
    *out = scratch->text;
    return 0;
}

/* The device of another library's stream: its .device (torch.device, a str, or an
 * object with device_id), its .device_id, else the current device of the type
 * (`ns`, the namespace's, which a .device must then be of; else cuda). */
static int foreign_device(PyObject *arg, int ns, tppy_device_text *scratch, const char **out)
{
    bool error;
    int type = ns == TPPY_ANY_TYPE ? TP_DEVICE_CUDA : ns;
    *out = tp_device_type_name((tp_device_type)type);
    PyObject *device = optional_attr(arg, "device", &error);
    if (error)
        return -1;
    if (device) {
        PyObject *id = optional_attr(device, "device_id", &error);
        int rc = error ? -1 : id ? device_from_id(id, type, scratch, out) : tppy_device_arg(device, ns, scratch, out);
        Py_XDECREF(id);
        Py_DECREF(device);
        return rc;
    }
    PyObject *id = optional_attr(arg, "device_id", &error);
    if (error)
        return -1;
    if (!id)
        return 0;
    int rc = device_from_id(id, type, scratch, out);
    Py_DECREF(id);
    return rc;
}

int tppy_foreign_stream(PyObject *arg, PyTypeObject *type, PyObject **out)
{
    void *handle = NULL;
    int found = foreign_handle(arg, &handle);
    if (found <= 0)
        return found;
    int ns = namespace_of(type, &tppy_stream_type, tppy_namespace_stream_types);
    tppy_device_text scratch;
    const char *device;
    if (foreign_device(arg, ns, &scratch, &device) < 0)
        return -1;
    tp_stream *stream;
    tp_status status = tp_stream_from_native(&stream, device, handle);
    if (status != TP_OK)
        return tppy_raise_int(status);
    PyObject *wrapper = tppy_stream_wrap(type, stream, true);
    if (!wrapper)
        return -1;
    ((tppy_stream *)wrapper)->owner = Py_NewRef(arg); /* its native stream lives as long as it */
    *out = wrapper;
    return 1;
}

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
        PyErr_Format(PyExc_TypeError,
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
    int ns = namespace_of((PyTypeObject *)cls, &tppy_stream_type, tppy_namespace_stream_types);
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
    tp_status status = tp_stream_launch_host_fn(self->stream, run_host_call, call);
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
             "and is kept, with arg, for the rest of the process. On CUDA and HIP a callback may\n"
             "call tpevent and the runtime (not synchronize its own stream); only on\n"
             "a wrapped stream that someone else is capturing (torch.cuda.graph) does\n"
             "it run on the runtime's own thread, where it must not (docs/semantics.md).\n");

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
             "Wrap a runtime event made elsewhere: an int (a cudaEvent_t), a\n"
             "torch.cuda.Event (its cuda_event; record it first, torch makes its event\n"
             "at the first record) or a CuPy Event (its ptr). Records go on that native\n"
             "event, and queries, waits and timing answer for its latest record, whoever\n"
             "made it. The Event keeps the object it was given alive; an int's event\n"
             "must outlive the Event. The CPU has no native events (tpevent.Error).\n");

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
            number = optional_attr(handle, names[i], &error);
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
    int ns = namespace_of((PyTypeObject *)cls, &tppy_event_type, tppy_namespace_event_types);
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

#define NATIVE_HANDLE_DOC                                                                                            \
    "The runtime's event behind the latest record as an int (cudaEvent_t, hipEvent_t), for\n"                    \
    "another library to query or wait on; 0 for the CPU and before the first record.\n"                           \
    "Valid until the next record or the Event's end (native events are pooled)."

static PyGetSetDef event_getset[] = {
    {"native_handle", (getter)event_get_native_handle, NULL, NATIVE_HANDLE_DOC, NULL},
    {"cuda_event", (getter)event_get_native_handle, NULL, "native_handle, as torch.cuda.Event names it.", NULL},
    {"event_id", (getter)event_get_native_handle, NULL, "native_handle, as torch.Event names it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef module_functions[] = {
    {"_at_exit", module_at_exit, METH_NOARGS, "Called by an atexit hook: the interpreter is exiting."},
    {NULL, NULL, 0, NULL},
};

/* Adds methods and attributes to a ready static type; its subclasses (the
 * namespaces' types) find them through the base. */
static int add_to_type(PyTypeObject *type, PyMethodDef *methods, PyGetSetDef *getset)
{
    for (PyMethodDef *m = methods; m->ml_name; m++) {
        PyObject *descr = (m->ml_flags & METH_CLASS) ? PyDescr_NewClassMethod(type, m) : PyDescr_NewMethod(type, m);
        if (!descr || PyDict_SetItemString(type->tp_dict, m->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    for (PyGetSetDef *g = getset; g->name; g++) {
        PyObject *descr = PyDescr_NewGetSet(type, g);
        if (!descr || PyDict_SetItemString(type->tp_dict, g->name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(type);
    return 0;
}

int tppy_interop_init(PyObject *module)
{
    if (add_to_type(&tppy_stream_type, stream_methods, stream_getset) < 0 ||
        add_to_type(&tppy_event_type, event_methods, event_getset) < 0)
        return -1;
    return PyModule_AddFunctions(module, module_functions);
}
