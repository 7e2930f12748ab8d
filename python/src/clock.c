/*
 * One clock (rule 13) from Python: Event.timestamp() and device_clock().
 *
 * A timestamp is CLOCK_MONOTONIC in ns, the clock time.monotonic_ns() reads on
 * Linux, so a record's time and the host's are comparable without conversion.
 */
#include "tpevent_python.h"

const char tppy_event_timestamp_doc[] =
    "timestamp($self, /)\n"
    "--\n"
    "\n"
    "Return the time, in ns on the host's CLOCK_MONOTONIC (the clock of\n"
    "time.monotonic_ns()), at which the device reached this event's latest\n"
    "record. A record made on an idle stream between t0 (before record()) and t1\n"
    "(after synchronize() returned) lies in [t0 - e, t1 + e], e being\n"
    "device_clock(event.device).error_ns. A record's timestamp never changes, and\n"
    "timestamps of records on one stream never go backwards.\n"
    "\n"
    "The event must have been created with enable_timing=True. As elapsed_time(),\n"
    "this waits (with the GIL released) for a record not reached yet.\n"
    "\n"
    "Returns:\n"
    "    int: the record's time in ns.\n"
    "\n"
    "Raises:\n"
    "    tpevent.Error: as elapsed_time(): with status 'TP_ERR_TIMING_DISABLED' if\n"
    "        the event was created without timing, 'TP_ERR_NOT_RECORDED' if it was\n"
    "        never recorded (checked in that order).\n"
    "\n"
    "Example:\n"
    "\n"
    ">>> import time\n"
    ">>> s = tpevent.Stream(device='cpu')\n"
    ">>> t0 = time.monotonic_ns()\n"
    ">>> e = s.record_event()\n"
    ">>> e.synchronize()\n"
    ">>> t0 <= e.timestamp() <= time.monotonic_ns()\n"
    "True\n";

PyObject *tppy_event_timestamp(PyObject *self, PyObject *unused)
{
    (void)unused;
    tp_event *event = ((tppy_event *)self)->event;
    int64_t ns;
    tp_status status = tp_event_timestamp(event, &ns);
    /* The C call answers TP_ERR_NOT_READY for a record not reached yet; from Python
     * it waits (interruptibly), as elapsed_time() does, so that the two answer the
     * same errors. */
    if (status == TP_ERR_NOT_READY) {
        if (tppy_wait_reached(event) < 0)
            return NULL;
        status = tp_event_timestamp(event, &ns);
    }
    if (status != TP_OK)
        return tppy_raise(status);
    return PyLong_FromLongLong((long long)ns);
}

/* ------------------------------------------------------------ ClockInfo */

static PyStructSequence_Field clock_info_fields[] = {
    {"resolution_ns", "the step of the device's timer, in ns"},
    {"error_ns", "the bound, in ns, of its calibration against CLOCK_MONOTONIC"},
    {NULL, NULL},
};

static PyStructSequence_Desc clock_info_desc = {
    .name = "tpevent.ClockInfo",
    .doc = "What device_clock() says of a device's clock.",
    .fields = clock_info_fields,
    .n_in_sequence = 2,
};

static PyTypeObject *clock_info_type;

int tppy_clock_types_init(PyObject *module)
{
    clock_info_type = PyStructSequence_NewType(&clock_info_desc);
    if (!clock_info_type)
        return -1;
    Py_INCREF(clock_info_type);
    if (PyModule_AddObject(module, "ClockInfo", (PyObject *)clock_info_type) < 0) {
        Py_DECREF(clock_info_type);
        return -1;
    }
    return 0;
}

const char tppy_device_clock_doc[] =
    "device_clock(device=None)\n"
    "--\n"
    "\n"
    "Return a tpevent.ClockInfo of a device's clock, as Event.timestamp() sees it:\n"
    "resolution_ns, the step of its timer, and error_ns, the bound of its\n"
    "calibration against CLOCK_MONOTONIC (0 on the CPU). On a GPU the first call\n"
    "calibrates (a few records on an idle stream); error_ns may change as later\n"
    "calibrations are made.\n"
    "\n"
    "Parameters:\n"
    "    device (str or int, optional): the device; if not given, the current\n"
    "        device (in tpevent.cuda and tpevent.hip: the current device of that\n"
    "        type).\n"
    "\n"
    "Raises:\n"
    "    ValueError: a bad device string or index.\n";

PyObject *tppy_clock_info(const char *device)
{
    tp_clock_info info;
    tp_status status;
    /* The first ask may load the backend and calibrate: tens of us to seconds. */
    Py_BEGIN_ALLOW_THREADS
    status = tp_device_clock(device, &info);
    Py_END_ALLOW_THREADS
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *item = PyStructSequence_New(clock_info_type);
    if (!item)
        return NULL;
    const long long values[2] = {(long long)info.resolution_ns, (long long)info.error_ns};
    for (int i = 0; i < 2; i++) {
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (!value) {
            Py_DECREF(item);
            return NULL;
        }
        PyStructSequence_SetItem(item, i, value);
    }
    return item;
}
