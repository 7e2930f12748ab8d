/*
 * tp_measure (rule 18) for tpevent.measure (python/tpevent/_measure.py, which is the
 * API): its private half, _measure(stream, fn, min_time, max_time, max_noise,
 * min_samples, batch, cold, hold, host, clock_threshold, drop_low_clock), answering the C measurement as a dict. With
 * host, fn(n) runs n calls of the work in a host function on the stream (tp_measure's
 * host_work).
 *
 * tp_measure runs with the GIL released: while it waits for a sample, the work it
 * waits for may be Python host functions, which take the GIL on tpevent's threads.
 * The work function takes the GIL back for each call of fn, after running the signal
 * handlers, and so does the wait check while tp_measure waits for the device (a stream
 * held elsewhere never ends), so that Ctrl-C stops a long measurement. An exception (fn's, or a
 * handler's KeyboardInterrupt) makes the work function fail: tp_measure releases its
 * hold and returns, and the exception, still set on the calling thread, is raised.
 */
#include "tpevent_python.h"

#include <stdint.h>
#include <stdlib.h>

/* Per-sample times kept for Measurement.times; the statistics cover every sample. */
#define SAMPLES_CAPACITY ((size_t)1 << 16)

typedef struct measure_call {
    PyObject *fn;
    PyThreadState *thread; /* the caller's, saved while tp_measure runs without the GIL */
    bool raised;           /* fn or a signal handler raised: its exception is set on `thread` */
    /* Host work: fn(n) raised in a host function, on tpevent's thread; its exception,
     * taken there, is raised on the caller's once tp_measure returns. Under the GIL. */
    PyObject *host_type, *host_value, *host_traceback;
} measure_call;

/* No status says "the caller's work failed"; any failure stops tp_measure, and
 * `raised` tells this one from tpevent's own. */
static tp_status measure_call_fn(tp_stream *stream, void *arg)
{
    (void)stream;
    measure_call *call = arg;
    PyEval_RestoreThread(call->thread);
    PyObject *result = PyErr_CheckSignals() < 0 ? NULL : PyObject_CallNoArgs(call->fn);
    call->raised = result == NULL;
    Py_XDECREF(result);
    call->thread = PyEval_SaveThread();
    return call->raised ? TP_ERR_BACKEND : TP_OK;
}

/* Host work (host=True): fn(calls) runs `calls` calls, in a host function on the
 * stream, with the GIL taken on that thread. tp_measure never calls it once it has
 * returned, so `call` is alive. */
static tp_status measure_call_host(void *arg, int64_t calls)
{
    measure_call *call = arg;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *result = PyObject_CallFunction(call->fn, "L", (long long)calls);
    bool failed = result == NULL;
    if (failed && !call->host_type)
        PyErr_Fetch(&call->host_type, &call->host_value, &call->host_traceback);
    PyErr_Clear();
    Py_XDECREF(result);
    PyGILState_Release(gil);
    return failed ? TP_ERR_BACKEND : TP_OK;
}

/* With the GIL, once tp_measure has returned: fn(n)'s exception, taken on tpevent's
 * thread, raised as fn's would be (unless one is raised already); true when the call
 * raised, either way. */
static bool measure_call_raise_host(measure_call *call)
{
    if (call->host_type && !call->raised && !PyErr_Occurred()) {
        PyErr_Restore(call->host_type, call->host_value, call->host_traceback);
        call->raised = true;
    } else if (call->host_type) {
        Py_XDECREF(call->host_type);
        Py_XDECREF(call->host_value);
        Py_XDECREF(call->host_traceback);
        call->raised = true;
    }
    return call->raised;
}

/* tp_measure waits in slices: between them, the signal handlers. */
static tp_status measure_call_check(void *arg)
{
    measure_call *call = arg;
    PyEval_RestoreThread(call->thread);
    call->raised = PyErr_CheckSignals() < 0;
    call->thread = PyEval_SaveThread();
    return call->raised ? TP_ERR_BACKEND : TP_OK;
}

/* Seconds as the options' ns, rounded up: a max_time of 1e-10 s, accepted as > 0,
 * is 1 ns, not a 0 that tp_measure refuses. The package checked them (finite, >= 0). */
static int64_t seconds_to_ns(double seconds)
{
    if (seconds >= (double)INT64_MAX / 1e9)
        return INT64_MAX;
    double ns = seconds * 1e9;
    int64_t whole = (int64_t)ns;
    return (double)whole < ns ? whole + 1 : whole;
}

/* The first samples as seconds-to-be (ns); none without a buffer (a comparison's sides). */
static PyObject *samples_list(const double *samples_ns, int64_t samples)
{
    Py_ssize_t count = samples < (int64_t)SAMPLES_CAPACITY ? (Py_ssize_t)samples : (Py_ssize_t)SAMPLES_CAPACITY;
    if (!samples_ns)
        count = 0;
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {
        PyObject *value = PyFloat_FromDouble(samples_ns[i]);
        if (!value) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

/* The SM clock's fields, added to a measurement's dict (the build's Py_BuildValue
 * takes so many at once). */
static PyObject *measurement_clock(PyObject *dict, const tp_measurement *m)
{
    PyObject *clock = dict
                          ? Py_BuildValue("{s:d,s:d,s:L,s:L,s:s}", "sm_clock_mhz", m->sm_clock_mhz, "sm_clock_max_mhz",
                                          m->sm_clock_max_mhz, "sm_clock_stretches", (long long)m->sm_clock_stretches,
                                          "sm_clock_low", (long long)m->sm_clock_low, "sm_clock_note", m->sm_clock_note)
                          : NULL;
    if (!clock || PyDict_Update(dict, clock) < 0) {
        Py_XDECREF(clock);
        Py_XDECREF(dict);
        return NULL;
    }
    Py_DECREF(clock);
    return dict;
}

static PyObject *measurement_dict(const tp_measurement *m, const double *samples_ns)
{
    PyObject *times = samples_list(samples_ns, m->samples);
    if (!times)
        return NULL;
    return measurement_clock(
        Py_BuildValue("{s:L,s:L,s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:O,s:O,s:O,s:s,s:N,s:d,s:d,s:d,s:d,s:d}", "calls",
                      (long long)m->calls, "samples", (long long)m->samples, "batch", (long long)m->batch, "median_ns",
                      m->median_ns, "mean_ns", m->mean_ns, "min_ns", m->min_ns, "max_ns", m->max_ns, "stdev_ns",
                      m->stdev_ns, "noise", m->noise, "cpu_ns", m->cpu_ns, "held", m->held ? Py_True : Py_False,
                      "converged", m->converged ? Py_True : Py_False, "cold", m->cold ? Py_True : Py_False, "note",
                      m->note, "times_ns", times, "floor_ns", m->floor_ns, "floor_stdev_ns", m->floor_stdev_ns,
                      "raw_median_ns", m->raw_median_ns, "median_low_ns", m->median_low_ns, "median_high_ns",
                      m->median_high_ns),
        m);
}

static PyObject *measure(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *stream_arg, *fn;
    double min_time, max_time, max_noise, clock_threshold;
    long long min_samples, batch;
    int cold, hold, host, drop_low_clock;
    if (!PyArg_ParseTuple(args, "OOdddLLpppdp:_measure", &stream_arg, &fn, &min_time, &max_time, &max_noise,
                          &min_samples, &batch, &cold, &hold, &host, &clock_threshold, &drop_low_clock))
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "measure() expects a callable, not %.100s", Py_TYPE(fn)->tp_name);
        return NULL;
    }
    tp_stream *stream;
    PyObject *wrapper = NULL;
    if (tppy_stream_arg(stream_arg, true, "measure", &stream, &wrapper) < 0)
        return NULL;
    double *samples_ns = malloc(SAMPLES_CAPACITY * sizeof *samples_ns);
    if (!samples_ns) {
        Py_XDECREF(wrapper);
        return PyErr_NoMemory();
    }
    tp_measure_options options;
    tp_measure_options_init(&options);
    options.min_time_ns = seconds_to_ns(min_time);
    options.max_time_ns = seconds_to_ns(max_time);
    options.max_noise = max_noise;
    options.min_samples = min_samples;
    options.batch = batch;
    options.flags = (cold ? TP_MEASURE_COLD : 0u) | (hold ? 0u : TP_MEASURE_NO_HOLD) |
                    (drop_low_clock ? TP_MEASURE_DROP_LOW_CLOCK : 0u);
    options.sm_clock_threshold = clock_threshold;
    options.samples_ns = samples_ns;
    options.samples_capacity = SAMPLES_CAPACITY;
    options.wait_check = measure_call_check;
    options.host_work = host ? measure_call_host : NULL;
    tp_measurement out = {.size = sizeof out};
    measure_call call = {.fn = fn};
    call.thread = PyEval_SaveThread();
    tp_status status = tp_measure(stream, host ? NULL : measure_call_fn, &call, &options, &out);
    PyEval_RestoreThread(call.thread);
    Py_XDECREF(wrapper);
    measure_call_raise_host(&call);
    PyObject *result = call.raised ? NULL : status != TP_OK ? tppy_raise(status) : measurement_dict(&out, samples_ns);
    free(samples_ns);
    return result;
}

/* _compare(stream, fn_a, fn_b, min_time, max_time, min_samples, confidence, min_effect, cold,
 * hold, host): tp_measure_compare's answer as a dict, each side's measurement a dict of its
 * own (no per-sample times). Without the GIL while it runs, as _measure. */
static PyObject *compare(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *stream_arg, *fn_a, *fn_b;
    double min_time, max_time, confidence, min_effect, clock_threshold;
    long long min_samples;
    int cold, hold, host, drop_low_clock;
    if (!PyArg_ParseTuple(args, "OOOddLddpppdp:_compare", &stream_arg, &fn_a, &fn_b, &min_time, &max_time, &min_samples,
                          &confidence, &min_effect, &cold, &hold, &host, &clock_threshold, &drop_low_clock))
        return NULL;
    if (!PyCallable_Check(fn_a) || !PyCallable_Check(fn_b)) {
        PyErr_SetString(PyExc_TypeError, "compare() expects two callables");
        return NULL;
    }
    tp_stream *stream;
    PyObject *wrapper = NULL;
    if (tppy_stream_arg(stream_arg, true, "compare", &stream, &wrapper) < 0)
        return NULL;
    tp_compare_options options;
    tp_compare_options_init(&options);
    options.measure.min_time_ns = seconds_to_ns(min_time);
    options.measure.max_time_ns = seconds_to_ns(max_time);
    options.measure.min_samples = min_samples;
    options.measure.flags = (cold ? TP_MEASURE_COLD : 0u) | (hold ? 0u : TP_MEASURE_NO_HOLD) |
                            (drop_low_clock ? TP_MEASURE_DROP_LOW_CLOCK : 0u);
    options.measure.sm_clock_threshold = clock_threshold;
    options.measure.wait_check = measure_call_check;
    options.measure.host_work = host ? measure_call_host : NULL;
    options.confidence = confidence;
    options.min_effect = min_effect;
    tp_comparison out = {.size = sizeof out};
    measure_call a = {.fn = fn_a}, b = {.fn = fn_b};
    a.thread = b.thread = PyEval_SaveThread(); /* one thread state: each side restores it in turn */
    tp_work_fn fn = host ? NULL : measure_call_fn;
    tp_status status = tp_measure_compare(stream, fn, &a, fn, &b, &options, &out);
    PyEval_RestoreThread(a.thread);
    Py_XDECREF(wrapper);
    bool a_raised = measure_call_raise_host(&a), b_raised = measure_call_raise_host(&b); /* both: each may hold one */
    if (a_raised || b_raised)
        return NULL;
    if (status != TP_OK)
        return tppy_raise(status);
    PyObject *side_a = measurement_dict(&out.a, NULL), *side_b = side_a ? measurement_dict(&out.b, NULL) : NULL;
    if (!side_b) {
        Py_XDECREF(side_a);
        return NULL;
    }
    static const char *const verdicts[] = {"undecided", "same", "faster", "slower"};
    return Py_BuildValue("{s:N,s:N,s:d,s:d,s:d,s:d,s:L,s:s}", "a", side_a, "b", side_b, "ratio", out.ratio, "low",
                         out.ratio_low, "high", out.ratio_high, "confidence", out.confidence, "pairs",
                         (long long)out.pairs, "verdict", verdicts[out.verdict & 3]);
}

/* _device_name(device): tp_device_name's, for the saved results' devices
 * (tpevent.results). */
static PyObject *device_name(PyObject *module, PyObject *arg)
{
    (void)module;
    const char *device = PyUnicode_AsUTF8(arg);
    if (!device)
        return NULL;
    char name[256];
    tp_status status = tp_device_name(device, name, sizeof name);
    return status != TP_OK ? tppy_raise(status) : PyUnicode_FromString(name);
}

static PyMethodDef measure_functions[] = {
    {"_device_name", device_name, METH_O, "_device_name(device): the device's name (tp_device_name)"},
    {"_measure", measure, METH_VARARGS,
     "_measure(stream, fn, min_time, max_time, max_noise, min_samples, batch, cold, hold, host, clock_threshold, "
     "drop_low_clock) (see tpevent.measure; with host, fn(n) runs n calls in a host function)"},
    {"_compare", compare, METH_VARARGS,
     "_compare(stream, fn_a, fn_b, min_time, max_time, min_samples, confidence, min_effect, cold, hold, host, "
     "clock_threshold, drop_low_clock) (see tpevent.compare)"},
    {NULL, NULL, 0, NULL},
};

int tppy_measure_init(PyObject *module)
{
    return PyModule_AddFunctions(module, measure_functions);
}
