/*
 * The timeline's C calls (tp_range_push/pop, tp_trace_start/stop) for the
 * package's tpevent.range and tpevent.trace (python/tpevent/__init__.py), which
 * are the API; these are their private halves: _range_push(name, stream=None),
 * _range_pop(stream=None), _trace_start(), _trace_stop(path).
 */
#include "tpevent_python.h"

static PyObject *range_push(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs < 1 || nargs > 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_range_push(name: str, stream=None)");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(args[0]);
    if (!name)
        return NULL;
    tp_stream *stream = NULL;
    PyObject *hold = NULL;
    if (nargs == 2 && tppy_stream_arg(args[1], true, "range_push", &stream, &hold) < 0)
        return NULL;
    tp_status status = tp_range_push(stream, name);
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

static PyObject *range_pop(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "_range_pop(stream=None)");
        return NULL;
    }
    tp_stream *stream = NULL;
    PyObject *hold = NULL;
    if (nargs == 1 && tppy_stream_arg(args[0], true, "range_pop", &stream, &hold) < 0)
        return NULL;
    tp_status status = tp_range_pop(stream);
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

static PyObject *trace_start(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    tp_status status = tp_trace_start();
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

static PyObject *trace_stop(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    /* Waits for the trace's records: without the GIL, so that host functions
     * written in Python can still run, and interruptibly. */
    PyObject *result = tppy_trace_stop_interruptible(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    return result;
}

static PyMethodDef timeline_functions[] = {
    {"_range_push", (PyCFunction)(void (*)(void))range_push, METH_FASTCALL, "range_push (see tpevent.range)"},
    {"_range_pop", (PyCFunction)(void (*)(void))range_pop, METH_FASTCALL, "range_pop (see tpevent.range)"},
    {"_trace_start", trace_start, METH_NOARGS, "trace_start (see tpevent.trace)"},
    {"_trace_stop", trace_stop, METH_O, "trace_stop (see tpevent.trace)"},
    {NULL, NULL, 0, NULL},
};

int tppy_timeline_init(PyObject *module)
{
    return PyModule_AddFunctions(module, timeline_functions);
}
