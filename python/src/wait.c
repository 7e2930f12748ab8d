/*
 * Event.synchronize(timeout=None) and Stream.synchronize(timeout=None): waits that
 * Ctrl-C can interrupt and a timeout can bound. The wait runs in slices of
 * TPPY_WAIT_SLICE_NS with the GIL released (tp_event_synchronize_for,
 * tp_stream_synchronize_for); between slices the GIL is taken back and
 * PyErr_CheckSignals runs the signal handlers, so a KeyboardInterrupt (or any
 * handler's exception) is raised within a slice of the signal, and the event or
 * stream stays as it was: nothing was cancelled, it can be waited on again.
 */
#include "tpevent_python.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#define TPPY_WAIT_SLICE_NS (50 * 1000000LL)

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int tppy_timeout_arg(PyObject *arg, int64_t *timeout_ns)
{
    if (arg == Py_None) {
        *timeout_ns = -1;
        return 0;
    }
    double seconds = PyBool_Check(arg) ? -1.0 : PyFloat_AsDouble(arg);
    if (PyBool_Check(arg) || (seconds == -1.0 && PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError))) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "timeout must be a number of seconds or None, not %.100s", Py_TYPE(arg)->tp_name);
        return -1;
    }
    if (seconds == -1.0 && PyErr_Occurred())
        return -1;
    if (isnan(seconds) || seconds < 0) {
        PyErr_Format(PyExc_ValueError, "timeout must be a non-negative number of seconds or None, not %R", arg);
        return -1;
    }
    /* A billion seconds (31 years) or more is forever, which also keeps the
     * deadline (now + timeout) far from overflowing. */
    *timeout_ns = seconds >= 1e9 ? -1 : (int64_t)(seconds * 1e9);
    return 0;
}

PyObject *tppy_wait(tp_status (*wait)(void *object, int64_t timeout_ns), void *object, int64_t timeout_ns,
                    const char *what)
{
    bool bounded = timeout_ns >= 0;
    int64_t deadline = bounded ? monotonic_ns() + timeout_ns : 0;
    for (;;) {
        int64_t slice = TPPY_WAIT_SLICE_NS;
        if (bounded) {
            int64_t left = deadline - monotonic_ns();
            if (left < 0)
                left = 0;
            if (left < slice)
                slice = left;
        }
        tp_status status;
        Py_BEGIN_ALLOW_THREADS
        status = wait(object, slice);
        Py_END_ALLOW_THREADS
        if (status == TP_OK)
            Py_RETURN_NONE;
        if (status != TP_ERR_NOT_READY)
            return tppy_raise(status);
        if (PyErr_CheckSignals() < 0)
            return NULL;
        if (bounded && monotonic_ns() >= deadline) {
            /* PyErr_Format has no %g (Python 3.12 raises SystemError for it). */
            char seconds[32];
            snprintf(seconds, sizeof seconds, "%.6g", (double)timeout_ns / 1e9);
            PyErr_Format(PyExc_TimeoutError, "%s: the timeout of %s s ran out before %s", what, seconds,
                         what[0] == 'E' ? "the event's latest record was reached" : "the stream's work was done");
            return NULL;
        }
    }
}

PyObject *tppy_synchronize_method(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                  tp_status (*wait)(void *object, int64_t timeout_ns), void *object, const char *what)
{
    PyObject *timeout = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.timeout, "synchronize", &timeout) < 0)
        return NULL;
    int64_t timeout_ns;
    if (tppy_timeout_arg(timeout, &timeout_ns) < 0)
        return NULL;
    return tppy_wait(wait, object, timeout_ns, what);
}
