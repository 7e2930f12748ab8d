/* tpevent.Error and the mapping of tp_status to Python exceptions. */
#include "tpevent_python.h"

#include <string.h>

PyObject *tppy_error_type;
PyObject *tppy_not_recorded_error_type;

PyDoc_STRVAR(error_doc,
             "Error(message)\n"
             "\n"
             "A tpevent call failed for a reason of state or of the backend: the backend\n"
             "is unavailable, an event was not recorded or was created without timing,\n"
             "objects of different devices were mixed, the runtime underneath failed.\n"
             "\n"
             "The message is the C library's (tp_last_error()). The attribute `status`\n"
             "holds the name of the C status, such as 'TP_ERR_TIMING_DISABLED'.\n"
             "\n"
             "Bad device strings and bad arguments raise ValueError instead, which also\n"
             "carries `status` ('TP_ERR_INVALID_DEVICE', 'TP_ERR_INVALID_ARGUMENT').");

int tppy_errors_init(PyObject *module)
{
    PyObject *attributes = Py_BuildValue("{sO}", "status", Py_None);
    if (!attributes)
        return -1;
    tppy_error_type = PyErr_NewExceptionWithDoc("tpevent.Error", error_doc, PyExc_RuntimeError, attributes);
    Py_DECREF(attributes);
    if (!tppy_error_type)
        return -1;
    Py_INCREF(tppy_error_type);
    if (PyModule_AddObject(module, "Error", tppy_error_type) < 0) {
        Py_DECREF(tppy_error_type);
        return -1;
    }
    /* torch raises ValueError for elapsed_time of events not recorded; tpevent
     * raised tpevent.Error (a RuntimeError): this one is both. */
    PyObject *bases = PyTuple_Pack(2, tppy_error_type, PyExc_ValueError);
    if (!bases)
        return -1;
    tppy_not_recorded_error_type = PyErr_NewExceptionWithDoc(
        "tpevent.NotRecordedError",
        "An event was asked for what only a recorded event has (elapsed_time(), timestamp()).\n"
        "Both a tpevent.Error (so a RuntimeError) and a ValueError, as torch raises.",
        bases, NULL);
    Py_DECREF(bases);
    if (!tppy_not_recorded_error_type)
        return -1;
    Py_INCREF(tppy_not_recorded_error_type);
    if (PyModule_AddObject(module, "NotRecordedError", tppy_not_recorded_error_type) < 0) {
        Py_DECREF(tppy_not_recorded_error_type);
        return -1;
    }
    return 0;
}

static PyObject *exception_type_for(tp_status status)
{
    switch (status) {
    case TP_ERR_INVALID_DEVICE:
    case TP_ERR_INVALID_ARGUMENT:
        return PyExc_ValueError;
    case TP_ERR_NOT_RECORDED:
        return tppy_not_recorded_error_type;
    default:
        return tppy_error_type;
    }
}

/* The C library's names that Python code does not see, in Python's words. */
static const char *const python_words[][2] = {
    {"TP_EVENT_TIMING", "enable_timing=True"},       {"TP_EVENT_BLOCKING", "blocking=True"},
    {"TP_EVENT_INTERPROCESS", "interprocess=True"},  {"tp_event_elapsed_time", "Event.elapsed_time"},
    {"tp_event_timestamp", "Event.timestamp"},       {"tp_event_from_native", "Event.from_native"},
    {"tp_stream_from_native", "Stream.from_native"},
};

static PyObject *python_message(const char *message)
{
    /* A message may quote a file path, which need not be UTF-8. */
    PyObject *text = PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace");
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

PyObject *tppy_raise(tp_status status)
{
    const char *message = tp_last_error();
    return tppy_raise_with(status, message[0] == '\0' ? tp_status_description(status) : message);
}

PyObject *tppy_raise_with(tp_status status, const char *message)
{
    PyObject *type = exception_type_for(status);
    PyObject *text = python_message(message);
    if (!text)
        return NULL;
    PyObject *exception = PyObject_CallOneArg(type, text);
    Py_DECREF(text);
    if (!exception)
        return NULL;
    PyObject *name = PyUnicode_FromString(tp_status_name(status));
    if (!name || PyObject_SetAttr(exception, tppy_name.status, name) < 0) {
        Py_XDECREF(name);
        Py_DECREF(exception);
        return NULL;
    }
    Py_DECREF(name);
    PyErr_SetObject(type, exception);
    Py_DECREF(exception);
    return NULL;
}

int tppy_raise_int(tp_status status)
{
    tppy_raise(status);
    return -1;
}
