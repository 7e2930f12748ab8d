/* tpevent.Error and the mapping of tp_status to Python exceptions. */
#include "tpevent_python.h"

PyObject *tppy_error_type;
PyObject *tppy_not_recorded_error_type;

PyDoc_STRVAR(error_doc,
             "Error(message)\n"
             "\n"
             "A tpevent call failed for a reason of state or of the backend: the backend\n"
             "is unavailable, an event was not recorded or was created without timing,\n"
             "objects of different devices were mixed, the runtime underneath failed.\n"
             "\n"
             "The message is the C library's, in Python's names. The attribute `status`\n"
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

PyObject *tppy_raise(tp_status status)
{
    const char *message = tp_last_error();
    return tppy_raise_with(status, message[0] == '\0' ? tp_status_description(status) : message);
}

PyObject *tppy_raise_with(tp_status status, const char *message)
{
    PyObject *type = exception_type_for(status);
    PyObject *text = tppy_python_message(message);
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
