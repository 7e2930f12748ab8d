/*
 * tpevent.Stream and its namespace twins (tpevent.cuda.Stream, ...), with the
 * methods that need nothing but the stream. The files above add the others: its
 * records and waits (stream_events.c), `with stream:` (current_stream.c, which
 * keeps the calling thread's current streams), is_capturing (graph.c) and the
 * interop (interop.c).
 */
#include "tpevent_python.h"
#include "core/device_types.h" /* the list of types, for the namespaces' classes */

#include <stddef.h>

/* ------------------------------------------------------------ creation */

int tppy_stream_type_namespace(PyTypeObject *type)
{
    for (; type && type != &tppy_stream_type; type = type->tp_base) {
        for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++)
            if (type == &tppy_namespace_stream_types[t])
                return t;
    }
    return TPPY_ANY_TYPE;
}

PyObject *tppy_stream_wrap(PyTypeObject *type, tp_stream *stream, bool owned)
{
    void *native;
    tp_device device;
    tp_status status = tp_stream_native(stream, &native);
    if (status == TP_OK)
        status = tp_stream_device(stream, &device);
    if (status != TP_OK) {
        tppy_raise(status);
        if (owned)
            (void)tp_stream_destroy(stream);
        return NULL;
    }
    tppy_stream *self = (tppy_stream *)type->tp_alloc(type, 0);
    if (!self) {
        if (owned)
            (void)tp_stream_destroy(stream);
        return NULL;
    }
    self->stream = stream;
    self->native = native;
    self->device = device;
    self->owned = owned;
    self->device_name = NULL;
    self->weak_references = NULL;
    self->owner = NULL;
    self->name = NULL;
    return (PyObject *)self;
}

static int stream_set_name(tppy_stream *self, PyObject *name, void *closure);

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", "priority", "name", NULL};
    PyObject *device = Py_None, *name = Py_None;
    int priority = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OiO:Stream", keywords, &device, &priority, &name))
        return NULL;
    tppy_device_text scratch;
    const char *device_str;
    if (tppy_device_arg(device, tppy_stream_type_namespace(type), &scratch, &device_str) < 0)
        return NULL;
    tp_stream *stream;
    tp_status status = tp_stream_create(&stream, device_str, priority);
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *self = tppy_stream_wrap(type, stream, true);
    if (self && name != Py_None && stream_set_name((tppy_stream *)self, name, NULL) < 0)
        Py_CLEAR(self);
    return self;
}

static void stream_dealloc(tppy_stream *self)
{
    /* Safe with work pending (rule 9). A Stream still current on some thread is
     * not here: that thread's dict holds it. */
    if (self->weak_references)
        PyObject_ClearWeakRefs((PyObject *)self);
    /* At exit a CUDA or HIP stream is kept: its handle may have been given to
     * another library that still uses it while the interpreter goes away (torch's
     * host allocator records events on it from its own teardown). */
    bool keep = self->device.type != TP_DEVICE_CPU && tppy_exiting();
    if (self->owned && self->stream && !keep)
        (void)tp_stream_destroy(self->stream);
    Py_XDECREF(self->owner);
    Py_XDECREF(self->device_name);
    Py_XDECREF(self->name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* -------------------------------------------------------------- methods */

PyDoc_STRVAR(stream_query_doc,
             "query($self, /)\n"
             "--\n"
             "\n"
             "Check if all the work submitted has been completed. Never blocks.\n"
             "\n"
             "Returns:\n"
             "    bool: True if all work submitted to the stream is done.\n");

static PyObject *stream_query(tppy_stream *self, PyObject *unused)
{
    (void)unused;
    bool idle;
    tp_status status = tp_stream_query(self->stream, &idle);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong(idle);
}

PyDoc_STRVAR(stream_synchronize_doc,
             "synchronize($self, /, timeout=None)\n"
             "--\n"
             "\n"
             "Wait for all the work submitted to the stream to complete. Other Python\n"
             "threads run meanwhile: the GIL is released. The wait runs in slices of\n"
             "about 50 ms; between them signal handlers run, so Ctrl-C raises\n"
             "KeyboardInterrupt promptly, and the stream's work runs on.\n"
             "\n"
             "Parameters:\n"
             "    timeout (float, optional): the most seconds to wait; None (the\n"
             "        default) waits as long as it takes, 0 only looks. When it runs\n"
             "        out, TimeoutError is raised and nothing else changes. Negative\n"
             "        is ValueError.\n");

static tp_status stream_wait_slice(void *stream, int64_t timeout_ns)
{
    return tp_stream_synchronize_for(stream, timeout_ns);
}

static PyObject *stream_synchronize(tppy_stream *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return tppy_synchronize_method(args, nargs, kwnames, stream_wait_slice, self->stream, "Stream.synchronize");
}

PyDoc_STRVAR(stream_from_native_doc,
             "from_native($cls, device, native_handle, /)\n"
             "--\n"
             "\n"
             "Wrap a stream made elsewhere, such as torch.cuda.current_stream().cuda_stream\n"
             "or a cupy.cuda.Stream's ptr on a CUDA device, or another CPU stream's\n"
             "native_handle. The Stream does not own it: it stays usable after the\n"
             "Stream is gone. It compares equal to other Streams of the same handle.\n"
             "\n"
             "On the CPU, a handle that is not a live CPU stream (never one, or\n"
             "destroyed) raises ValueError. CUDA and HIP handles cannot be checked:\n"
             "one that is not a live stream of that device is undefined behaviour\n"
             "(it may crash the process), as in the runtime itself.\n"
             "\n"
             "Parameters:\n"
             "    device (str or int): the device the native stream belongs to.\n"
             "    native_handle (int): the native stream (cudaStream_t, hipStream_t).\n");

static PyObject *stream_from_native(PyTypeObject *cls, PyObject *args)
{
    PyObject *device, *handle;
    if (!PyArg_ParseTuple(args, "OO:from_native", &device, &handle))
        return NULL;
    void *native = PyLong_AsVoidPtr(handle);
    if (!native && PyErr_Occurred())
        return NULL;
    tppy_device_text scratch;
    const char *device_str;
    if (tppy_device_arg(device, tppy_stream_type_namespace(cls), &scratch, &device_str) < 0)
        return NULL;
    tp_stream *stream;
    tp_status status = tp_stream_from_native(&stream, device_str, native);
    if (status != TP_OK)
        return tppy_raise(status);
    /* The tp_stream wrapper is ours to destroy; the native stream is not. */
    return tppy_stream_wrap(cls, stream, true);
}

/* A stream is a handle into this process's runtime: a pickle of it would come back
 * as a new, unrelated stream. */
static PyObject *stream_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyErr_Format(PyExc_TypeError, "cannot pickle %s", Py_TYPE(self)->tp_name);
    return NULL;
}

static PyMethodDef stream_methods[] = {
    {"query", (PyCFunction)stream_query, METH_NOARGS, stream_query_doc},
    {"synchronize", (PyCFunction)(void (*)(void))stream_synchronize, METH_FASTCALL | METH_KEYWORDS,
     stream_synchronize_doc},
    {"from_native", (PyCFunction)stream_from_native, METH_VARARGS | METH_CLASS, stream_from_native_doc},
    {"__reduce__", stream_reduce, METH_NOARGS, "Streams cannot be pickled."},
    {NULL, NULL, 0, NULL},
};

/* ----------------------------------------------------------- attributes */

static PyObject *stream_get_device(tppy_stream *self, void *closure)
{
    (void)closure;
    if (!self->device_name) {
        self->device_name = tppy_device_name(self->device);
        if (!self->device_name)
            return NULL;
    }
    return Py_NewRef(self->device_name);
}

static PyObject *stream_get_native_handle(tppy_stream *self, void *closure)
{
    (void)closure;
    return PyLong_FromVoidPtr(self->native);
}

static PyObject *stream_get_priority(tppy_stream *self, void *closure)
{
    (void)closure;
    int priority;
    tp_status status = tp_stream_priority(self->stream, &priority);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyLong_FromLong(priority);
}

static PyObject *stream_get_name(tppy_stream *self, void *closure)
{
    (void)closure;
    return Py_NewRef(self->name ? self->name : Py_None);
}

static int stream_set_name(tppy_stream *self, PyObject *name, void *closure)
{
    (void)closure;
    if (name && name != Py_None && !PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "Stream.name: expected a str or None, got %.100s", Py_TYPE(name)->tp_name);
        return -1;
    }
    const char *text = name && name != Py_None ? PyUnicode_AsUTF8(name) : "";
    if (!text)
        return -1;
    tp_status status = tp_stream_set_name(self->stream, text);
    if (status != TP_OK) {
        tppy_raise(status);
        return -1;
    }
    PyObject *old = self->name;
    self->name = name && name != Py_None ? Py_NewRef(name) : NULL;
    Py_XDECREF(old);
    return 0;
}

static PyGetSetDef stream_getset[] = {
    {"name", (getter)stream_get_name, (setter)stream_set_name,
     "The stream's name in traces (tp_stream_set_name; cut to 63 bytes there), or None:\n"
     "then its track is 'stream N', N in creation order on its device.",
     NULL},
    {"device", (getter)stream_get_device, NULL,
     "The device of the stream, as a str such as 'cuda:0' (the index is always given).", NULL},
    {"native_handle", (getter)stream_get_native_handle, NULL,
     "The native stream as an int: the cudaStream_t or hipStream_t (0 for a legacy\n"
     "default stream), or the CPU stream itself.",
     NULL},
    {"priority", (getter)stream_get_priority, NULL,
     "The priority in use, after the backend clamped the one asked for to its range\n"
     "(lower numbers run first).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* --------------------------------------------- comparison, hash, repr */

static bool same_stream(const tppy_stream *a, const tppy_stream *b)
{
    return a->native == b->native && a->device.type == b->device.type && a->device.index == b->device.index;
}

static PyObject *stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &tppy_stream_type) ||
        !PyObject_TypeCheck(b, &tppy_stream_type))
        Py_RETURN_NOTIMPLEMENTED;
    bool equal = same_stream((tppy_stream *)a, (tppy_stream *)b);
    return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

static Py_hash_t stream_hash(tppy_stream *self)
{
    /* Pointers are aligned: the low bits carry nothing, the device goes there. */
    uintptr_t native = (uintptr_t)self->native;
    Py_hash_t hash = (Py_hash_t)((native >> 4) ^ (native << (8 * sizeof native - 4)));
    hash ^= (Py_hash_t)(self->device.type * TP_MAX_DEVICES + self->device.index) * 1000003;
    return hash == -1 ? -2 : hash;
}

static PyObject *stream_repr(tppy_stream *self)
{
    char device_text[TP_DEVICE_STRING_MAX];
    if (tp_device_format(self->device, device_text, sizeof device_text) != TP_OK)
        return PyUnicode_FromFormat("<%s at %p>", Py_TYPE(self)->tp_name, (void *)self);
    return PyUnicode_FromFormat("<%s device='%s' native_handle=%p>", Py_TYPE(self)->tp_name, device_text, self->native);
}

/* ----------------------------------------------------------------- types */

PyDoc_STRVAR(stream_doc,
             "Stream(device=None, priority=0)\n"
             "--\n"
             "\n"
             "An in-order queue of work on a device. Work on one stream runs in\n"
             "submission order; work on two streams has no order unless an event says\n"
             "so (Event.wait(), Stream.wait_event(), Stream.wait_stream()).\n"
             "\n"
             "Parameters:\n"
             "    device (str or int, optional): the device, such as 'cuda:1' (a type\n"
             "        alone, such as 'cuda', is the thread's current device of that type);\n"
             "        an int is an index of the current device's type. If not given, the\n"
             "        current device will be used.\n"
             "    priority (int, optional): lower numbers run first, as on CUDA; each\n"
             "        backend clamps it to its range (default: 0).\n"
             "\n"
             "Used as a context manager (`with stream:`), the stream is the current\n"
             "stream of its device on this thread inside the block, and its device the\n"
             "current device (as torch.cuda.StreamContext); both are restored on exit.\n"
             "Streams compare equal, and hash alike, when\n"
             "they are of the same device and native handle: tpevent.current_stream()\n"
             "== tpevent.default_stream() until another stream is made current.\n"
             "\n"
             "Raises:\n"
             "    ValueError: a bad device string or an index out of range.\n"
             "    tpevent.Error: the device's backend is unavailable or failed.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> s = tpevent.Stream(device='cuda')\n"
             ">>> with s:\n"
             "...     tpevent.current_stream('cuda') == s\n"
             "True\n"
             ">>> tpevent.current_stream('cuda') == tpevent.default_stream('cuda')\n"
             "True\n");

/* clang-format off */
PyTypeObject tppy_stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tpevent.Stream",
    .tp_basicsize = sizeof(tppy_stream),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_repr = (reprfunc)stream_repr,
    .tp_hash = (hashfunc)stream_hash,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = stream_doc,
    .tp_richcompare = stream_richcompare,
    .tp_weaklistoffset = offsetof(tppy_stream, weak_references),
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};

#define NAMESPACE_STREAM_TYPE(type_name)                                                                      \
    {                                                                                                          \
        PyVarObject_HEAD_INIT(NULL, 0)                                                                         \
        .tp_name = "tpevent." type_name ".Stream",                                                             \
        .tp_basicsize = sizeof(tppy_stream),                                                                   \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,                                                  \
        .tp_doc = "Stream(device=None, priority=0)\n--\n\n"                                                     \
                  "A tpevent.Stream whose device defaults to '" type_name "': the current " type_name         \
                  " device.\nAn int device is a " type_name " index ('" type_name ":<int>'); a device of "     \
                  "another type\nis a ValueError. See tpevent.Stream.",                                       \
        .tp_base = &tppy_stream_type,                                                                          \
        .tp_new = stream_new,                                                                                  \
    }

/* One per device type of the list (cmake/TpeventDeviceTypes.cmake), by its value. */
#define NAMESPACE_STREAM_ENTRY(upper, name, value, kind) [value] = NAMESPACE_STREAM_TYPE(#name),
PyTypeObject tppy_namespace_stream_types[TP_DEVICE_TYPE_COUNT] = {TP_PUBLIC_DEVICE_TYPES(NAMESPACE_STREAM_ENTRY)};
#undef NAMESPACE_STREAM_ENTRY
/* clang-format on */

int tppy_stream_types_init(PyObject *module, PyObject *namespaces[TP_DEVICE_TYPE_COUNT])
{
    if (PyType_Ready(&tppy_stream_type) < 0)
        return -1;
    Py_INCREF(&tppy_stream_type);
    if (PyModule_AddObject(module, "Stream", (PyObject *)&tppy_stream_type) < 0) {
        Py_DECREF(&tppy_stream_type);
        return -1;
    }
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        PyTypeObject *type = &tppy_namespace_stream_types[t];
        if (PyType_Ready(type) < 0)
            return -1;
        Py_INCREF(type);
        if (PyModule_AddObject(namespaces[t], "Stream", (PyObject *)type) < 0) {
            Py_DECREF(type);
            return -1;
        }
    }
    return 0;
}
