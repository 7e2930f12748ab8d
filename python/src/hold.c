/*
 * Stream.hold(timeout=None) (rule 17): a tpevent.Hold, the context manager that
 * holds the stream's later work until it is released, on exit (an exception's
 * too) or by release(). The watchdog (timeout, in seconds) lets the stream go on
 * its own; release() then raises tpevent.Error (TP_ERR_NOT_READY) saying so, and
 * an exit with no exception of its own does too.
 */
#include "tpevent_python.h"

typedef struct {
    PyObject_HEAD
    tp_hold *hold; /* NULL once released */
} tppy_hold;

/* Lets the stream go (once; later calls do nothing). Python's error set on failure. */
static int hold_release_once(tppy_hold *self)
{
    tp_hold *hold = self->hold;
    if (!hold)
        return 0;
    self->hold = NULL;
    tp_status status = tp_hold_release(hold);
    if (status != TP_OK) {
        tppy_raise(status);
        return -1;
    }
    return 0;
}

static PyObject *hold_release(tppy_hold *self, PyObject *unused)
{
    (void)unused;
    if (hold_release_once(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *hold_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    Py_INCREF(self);
    return self;
}

/* An exception leaving the block wins over the watchdog's message. */
static PyObject *hold_exit(tppy_hold *self, PyObject *const *args, Py_ssize_t nargs)
{
    bool raising = nargs > 0 && args[0] != Py_None;
    if (hold_release_once(self) < 0) {
        if (!raising)
            return NULL;
        PyErr_Clear();
    }
    Py_RETURN_FALSE;
}

static PyObject *hold_get_released(tppy_hold *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->hold == NULL);
}

/* A hold collected unreleased lets its stream go: nothing else could. */
static void hold_dealloc(tppy_hold *self)
{
    if (self->hold)
        (void)tp_hold_release(self->hold);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef hold_methods[] = {
    {"release", (PyCFunction)hold_release, METH_NOARGS,
     "release()\n--\n\n"
     "Lets the stream's later work go. tpevent.Error (TP_ERR_NOT_READY) when the\n"
     "watchdog (timeout) let it go first. Calling it again does nothing."},
    {"__enter__", (PyCFunction)hold_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))hold_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef hold_getset[] = {
    {"released", (getter)hold_get_released, NULL, "True once release() (or the with block's exit) ran.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject hold_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tpevent.Hold",
    .tp_basicsize = sizeof(tppy_hold),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)hold_dealloc,
    .tp_methods = hold_methods,
    .tp_getset = hold_getset,
    .tp_doc = "A hold of a stream (Stream.hold()): its later work waits until release().",
};

static const char stream_hold_doc[] =
    "hold(timeout=None)\n--\n\n"
    "Holds the stream: work submitted to it from now on does not start until the\n"
    "hold is released (the with block's exit, or release()), or until `timeout`\n"
    "seconds have passed (None: never), whichever comes first. No thread is held,\n"
    "and on a GPU no SM. Used to queue a batch of work that then starts at once:\n"
    "\n"
    "    with stream.hold():\n"
    "        start.record(stream); work(); end.record(stream)\n"
    "\n"
    "tpevent.Error (TP_ERR_CAPTURING) on a capturing stream.";

static PyObject *stream_hold(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *timeout = Py_None;
    int64_t timeout_ns = -1;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.timeout, "hold", &timeout) < 0)
        return NULL;
    if (tppy_timeout_arg(timeout, &timeout_ns) < 0)
        return NULL;
    if (timeout_ns == 0)
        timeout_ns = 1; /* "at once": the hold lets go as soon as the watchdog looks */
    tppy_hold *hold = PyObject_New(tppy_hold, &hold_type);
    if (!hold)
        return NULL;
    hold->hold = NULL;
    tp_status status = tp_stream_hold(((tppy_stream *)self)->stream, timeout_ns < 0 ? INT64_MAX : timeout_ns,
                                      &hold->hold);
    if (status != TP_OK) {
        Py_DECREF(hold);
        return tppy_raise(status);
    }
    return (PyObject *)hold;
}

static PyMethodDef stream_methods[] = {
    {"hold", (PyCFunction)(void (*)(void))stream_hold, METH_FASTCALL | METH_KEYWORDS, stream_hold_doc},
    {NULL, NULL, 0, NULL},
};

int tppy_hold_types_init(PyObject *module)
{
    if (tppy_type_add_methods(&tppy_stream_type, stream_methods, NULL) < 0 || PyType_Ready(&hold_type) < 0)
        return -1;
    Py_INCREF(&hold_type);
    if (PyModule_AddObject(module, "Hold", (PyObject *)&hold_type) < 0) {
        Py_DECREF(&hold_type);
        return -1;
    }
    return 0;
}
