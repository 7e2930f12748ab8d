/*
 * The calling thread's current streams, as Python sees them.
 *
 * A Stream made current from Python (set_stream, `with stream:`) must outlive its
 * current-ness, or the C library would keep a pointer to a destroyed stream. So each
 * thread keeps, in its thread-state dict, a reference to the Stream it made current
 * for each device; making another one current drops it. current_stream() gives
 * that same object back while it is still current, and otherwise wraps what the C
 * library answers (a default stream, or a stream made current from C) without
 * owning it.
 */
#include "tpevent_python.h"

/* ----------------------------------------------------- per-thread state */

static PyObject *new_dict(void)
{
    return PyDict_New();
}

static PyObject *new_list(void)
{
    return PyList_New(0);
}

/* This thread's value under `key` in its thread-state dict, made on first use.
 * Borrowed: the thread-state dict keeps it. */
static PyObject *thread_value(PyObject *key, PyObject *(*make)(void))
{
    PyObject *thread_dict = PyThreadState_GetDict();
    if (!thread_dict) {
        PyErr_SetString(PyExc_RuntimeError, "tpevent: this thread has no thread-state dict");
        return NULL;
    }
    PyObject *value = PyDict_GetItemWithError(thread_dict, key);
    if (value || PyErr_Occurred())
        return value;
    value = make();
    if (!value)
        return NULL;
    int rc = PyDict_SetItem(thread_dict, key, value);
    Py_DECREF(value);
    return rc < 0 ? NULL : value;
}

/* The Streams this thread made current, by device. */
static PyObject *thread_streams(void)
{
    return thread_value(tppy_name.thread_streams, new_dict);
}

PyObject *tppy_thread_stream_stack(void)
{
    return thread_value(tppy_name.thread_stack, new_list);
}

/* Below 3 * 64: CPython's small ints, so making a key allocates nothing. */
static PyObject *device_key(tp_device device)
{
    return PyLong_FromLong((long)device.type * TP_MAX_DEVICES + device.index);
}

int tppy_set_current_stream(tppy_stream *stream)
{
    PyObject *streams = thread_streams();
    if (!streams)
        return -1;
    PyObject *key = device_key(stream->device);
    if (!key)
        return -1;
    /* The one it replaces stays alive until the C library no longer points at it. */
    PyObject *previous = PyDict_GetItemWithError(streams, key);
    if (!previous && PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    Py_XINCREF(previous);
    int rc = PyDict_SetItem(streams, key, (PyObject *)stream);
    if (rc == 0) {
        tp_status status = tp_stream_set_current(stream->stream);
        if (status != TP_OK) {
            tppy_raise(status);
            if (previous)
                PyDict_SetItem(streams, key, previous);
            else
                PyDict_DelItem(streams, key);
            rc = -1;
        }
    }
    Py_DECREF(key);
    Py_XDECREF(previous);
    return rc;
}

PyObject *tppy_current_stream(const char *device_str, PyTypeObject *wrapper_type)
{
    tp_stream *stream;
    tp_device device;
    tp_status status = tp_stream_current(device_str, &stream);
    if (status == TP_OK)
        status = tp_stream_device(stream, &device);
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *streams = thread_streams();
    if (!streams)
        return NULL;
    PyObject *key = device_key(device);
    if (!key)
        return NULL;
    PyObject *made_current = PyDict_GetItemWithError(streams, key);
    Py_DECREF(key);
    if (made_current && ((tppy_stream *)made_current)->stream == stream)
        return Py_NewRef(made_current);
    if (PyErr_Occurred())
        return NULL;
    return tppy_stream_wrap(wrapper_type, stream, false);
}

/* ------------------------------------------------------ `with stream:` */

static const char stream_enter_doc[] =
    "__enter__($self, /)\n"
    "--\n"
    "\n"
    "Make the stream the current stream of its device on this thread, and its\n"
    "device the current device, as torch.cuda.StreamContext does; the matching\n"
    "__exit__ restores the stream and the device it replaced. Returns the stream.\n";

static tp_device device_of_key(PyObject *key)
{
    long value = PyLong_AsLong(key);
    return (tp_device){(tp_device_type)(value / TP_MAX_DEVICES), (int)(value % TP_MAX_DEVICES)};
}

/* The thread's current index of the stream's type, without touching a device: an
 * event made of "cuda" has no native event yet (rule 2). */
static tp_status current_of_type(tp_device_type type, tp_device *out)
{
    tp_event *probe;
    tp_status status = tp_event_create(&probe, tp_device_type_name(type), TP_EVENT_DEFAULT);
    if (status != TP_OK)
        return status;
    status = tp_event_device(probe, out);
    (void)tp_event_destroy(probe);
    return status;
}

int tppy_set_current_device(tp_device device)
{
    char text[TP_DEVICE_STRING_MAX];
    tp_status status = tp_device_format(device, text, sizeof text);
    if (status == TP_OK)
        status = tp_set_device(text);
    return status == TP_OK ? 0 : tppy_raise_int(status);
}

static PyObject *stream_enter(tppy_stream *self, PyObject *unused)
{
    (void)unused;
    char device_text[TP_DEVICE_STRING_MAX];
    tp_device current = self->device, of_type;
    tp_status status = tp_device_format(self->device, device_text, sizeof device_text);
    if (status == TP_OK)
        status = tp_current_device(&current);
    of_type = current;
    if (status == TP_OK && current.type != self->device.type)
        status = current_of_type(self->device.type, &of_type);
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *stack = tppy_thread_stream_stack();
    if (!stack)
        return NULL;
    PyObject *previous = tppy_current_stream(device_text, &tppy_stream_type);
    if (!previous)
        return NULL;
    /* (the stream replaced, the current device, the current device of the stream's type) */
    PyObject *entry = Py_BuildValue("(NNN)", previous, device_key(current), device_key(of_type));
    if (!entry)
        return NULL;
    int rc = PyList_Append(stack, entry);
    Py_DECREF(entry);
    if (rc < 0)
        return NULL;
    if (tppy_set_current_stream(self) < 0 || tppy_set_current_device(self->device) < 0) {
        Py_ssize_t size = PyList_GET_SIZE(stack);
        PyList_SetSlice(stack, size - 1, size, NULL);
        return NULL;
    }
    return Py_NewRef(self);
}

static const char stream_exit_doc[] =
    "__exit__($self, /, *exc_info)\n"
    "--\n"
    "\n"
    "Restore the current stream and device that the matching __enter__ replaced.\n";

static PyObject *stream_exit(tppy_stream *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    (void)args;
    (void)nargs;
    PyObject *stack = tppy_thread_stream_stack();
    if (!stack)
        return NULL;
    Py_ssize_t size = PyList_GET_SIZE(stack);
    if (size == 0) {
        PyErr_SetString(PyExc_RuntimeError, "Stream.__exit__() without a matching __enter__() on this thread");
        return NULL;
    }
    PyObject *entry = Py_NewRef(PyList_GET_ITEM(stack, size - 1));
    int rc = PyList_SetSlice(stack, size - 1, size, NULL);
    if (rc == 0)
        rc = tppy_set_current_stream((tppy_stream *)PyTuple_GET_ITEM(entry, 0));
    if (rc == 0)
        rc = tppy_set_current_device(device_of_key(PyTuple_GET_ITEM(entry, 2)));
    if (rc == 0)
        rc = tppy_set_current_device(device_of_key(PyTuple_GET_ITEM(entry, 1)));
    Py_DECREF(entry);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef stream_methods[] = {
    {"__enter__", (PyCFunction)stream_enter, METH_NOARGS, stream_enter_doc},
    {"__exit__", (PyCFunction)(void (*)(void))stream_exit, METH_FASTCALL, stream_exit_doc},
    {NULL, NULL, 0, NULL},
};

int tppy_current_stream_init(void)
{
    return tppy_type_add_methods(&tppy_stream_type, stream_methods, NULL);
}
