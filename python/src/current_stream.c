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
