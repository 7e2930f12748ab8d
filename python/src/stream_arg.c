/*
 * Stream arguments: a tpevent.Stream, or a stream of another library (torch, CuPy,
 * cuda.core: duck-typed, nothing here imports them) wrapped as one.
 */
#include "tpevent_python.h"

/* The native handle of another library's stream: 1 found, 0 not a stream, -1 error. */
static int foreign_handle(PyObject *arg, void **handle)
{
    bool error;
    PyObject *value = tppy_optional_attr(arg, "__cuda_stream__", &error);
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
        value = tppy_optional_attr(arg, names[i], &error);
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
    if (index < 0 || index >= TP_MAX_DEVICES ||
        tp_device_format(device, scratch->text, sizeof scratch->text) != TP_OK) {
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
    PyObject *device = tppy_optional_attr(arg, "device", &error);
    if (error)
        return -1;
    if (device) {
        PyObject *id = tppy_optional_attr(device, "device_id", &error);
        int rc = error ? -1 : id ? device_from_id(id, type, scratch, out) : tppy_device_arg(device, ns, scratch, out);
        Py_XDECREF(id);
        Py_DECREF(device);
        return rc;
    }
    PyObject *id = tppy_optional_attr(arg, "device_id", &error);
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
    int ns = tppy_stream_type_namespace(type);
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

int tppy_stream_arg(PyObject *arg, bool none_ok, const char *function, tp_stream **out, PyObject **hold)
{
    *hold = NULL;
    if (none_ok && arg == Py_None) {
        *out = NULL;
        return 0;
    }
    if (PyObject_TypeCheck(arg, &tppy_stream_type)) {
        *out = ((tppy_stream *)arg)->stream;
        return 0;
    }
    int found = tppy_foreign_stream(arg, &tppy_stream_type, hold);
    if (found < 0)
        return -1;
    if (found == 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s() expects a tpevent.Stream%s, not %.100s (or another library's stream: an object "
                     "with __cuda_stream__, .cuda_stream or .ptr)",
                     function, none_ok ? " or None" : "", Py_TYPE(arg)->tp_name);
        return -1;
    }
    *out = ((tppy_stream *)*hold)->stream;
    return 0;
}
