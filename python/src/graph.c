/*
 * tpevent.Graph (rule 16), as torch.cuda.CUDAGraph reads: capture_begin(stream),
 * capture_end(), replay(stream=None), reset(); and Stream.is_capturing(). The
 * context manager tpevent.graph(g, stream=None) is Python (tpevent/__init__.py).
 */
#include "tpevent_python.h"

typedef struct {
    PyObject_HEAD
    tp_graph *graph;
    PyObject *capturing; /* the tpevent.Stream captured on, between begin and end */
} tppy_graph;

static const char stream_is_capturing_doc[] =
    "is_capturing()\n--\n\n"
    "True while the stream's work is being captured into a graph: by tpevent\n"
    "(Graph.capture_begin, or a wait that joined a capture), or, for a stream\n"
    "made with Stream.from_native, by whoever captures it (torch.cuda.graph).";

static PyObject *stream_is_capturing(PyObject *self, PyObject *unused)
{
    (void)unused;
    bool capturing = false;
    tp_status status = tp_stream_is_capturing(((tppy_stream *)self)->stream, &capturing);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong(capturing);
}

/* Ends a capture the object began and drops what it captured: a Graph
 * collected mid-capture leaves its stream usable. */
static void drop_capture(tppy_graph *self)
{
    if (!self->capturing)
        return;
    tp_graph *graph = NULL;
    if (tp_stream_end_capture(((tppy_stream *)self->capturing)->stream, &graph) == TP_OK)
        tp_graph_destroy(graph);
    Py_CLEAR(self->capturing);
}

static void graph_reset_graph(tppy_graph *self)
{
    if (self->graph) {
        tp_graph_destroy(self->graph); /* safe with replays pending (rule 9) */
        self->graph = NULL;
    }
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, ":Graph", keywords))
        return NULL;
    return type->tp_alloc(type, 0);
}

static void graph_dealloc(tppy_graph *self)
{
    drop_capture(self);
    graph_reset_graph(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *graph_capture_begin(tppy_graph *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.stream, "capture_begin", &arg) < 0)
        return NULL;
    if (self->capturing) {
        PyErr_SetString(PyExc_RuntimeError, "capture_begin: this Graph is capturing already");
        return NULL;
    }
    PyObject *stream = NULL;
    if (arg == Py_None) {
        stream = tppy_current_stream(NULL, &tppy_stream_type);
        if (!stream)
            return NULL;
    } else {
        tp_stream *unused;
        PyObject *hold = NULL; /* the wrapper of another library's stream */
        if (tppy_stream_arg(arg, false, "capture_begin", &unused, &hold) < 0)
            return NULL;
        stream = hold ? hold : Py_NewRef(arg);
    }
    tp_status status = tp_stream_begin_capture(((tppy_stream *)stream)->stream);
    if (status != TP_OK) {
        Py_DECREF(stream);
        return tppy_raise(status);
    }
    graph_reset_graph(self); /* a new capture replaces the last graph */
    self->capturing = stream;
    Py_RETURN_NONE;
}

static PyObject *graph_capture_end(tppy_graph *self, PyObject *unused)
{
    (void)unused;
    if (!self->capturing) {
        PyErr_SetString(PyExc_RuntimeError, "capture_end: this Graph is not capturing");
        return NULL;
    }
    tp_graph *graph = NULL;
    tp_status status = tp_stream_end_capture(((tppy_stream *)self->capturing)->stream, &graph);
    Py_CLEAR(self->capturing); /* ended either way: a refused capture is dropped */
    if (status != TP_OK)
        return tppy_raise(status);
    self->graph = graph;
    Py_RETURN_NONE;
}

static PyObject *graph_replay(tppy_graph *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.stream, "replay", &arg) < 0)
        return NULL;
    if (!self->graph) {
        PyErr_SetString(PyExc_RuntimeError, "replay: nothing captured (capture_begin and capture_end first)");
        return NULL;
    }
    tp_stream *stream = NULL;
    PyObject *hold = NULL;
    if (tppy_stream_arg(arg, true, "replay", &stream, &hold) < 0)
        return NULL;
    tp_status status = TP_OK;
    if (!stream) {
        tp_device device;
        char text[TP_DEVICE_STRING_MAX];
        status = tp_graph_device(self->graph, &device);
        if (status == TP_OK)
            status = tp_device_format(device, text, sizeof text);
        if (status == TP_OK)
            status = tp_stream_current(text, &stream);
    }
    if (status == TP_OK)
        status = tp_graph_launch(self->graph, stream);
    Py_XDECREF(hold);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

static PyObject *graph_reset(tppy_graph *self, PyObject *unused)
{
    (void)unused;
    graph_reset_graph(self);
    Py_RETURN_NONE;
}

static PyObject *graph_get_device(tppy_graph *self, void *closure)
{
    (void)closure;
    if (!self->graph)
        Py_RETURN_NONE;
    tp_device device;
    tp_status status = tp_graph_device(self->graph, &device);
    if (status != TP_OK)
        return tppy_raise(status);
    return tppy_device_name(device);
}

static PyObject *graph_get_capturing(tppy_graph *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->capturing != NULL);
}

static PyMethodDef graph_methods[] = {
    {"capture_begin", (PyCFunction)(void (*)(void))graph_capture_begin, METH_FASTCALL | METH_KEYWORDS,
     "capture_begin(stream=None)\n--\n\n"
     "Begins capturing the work submitted to `stream` (default: the current stream\n"
     "of the current device), and to streams that join the capture by waiting on an\n"
     "event recorded inside it. Until capture_end(), that work does not run."},
    {"capture_end", (PyCFunction)graph_capture_end, METH_NOARGS,
     "capture_end()\n--\n\n"
     "Ends the capture and keeps its graph. tpevent.Error (TP_ERR_CAPTURING) if a\n"
     "stream that joined was not joined back; the capture is dropped then."},
    {"replay", (PyCFunction)(void (*)(void))graph_replay, METH_FASTCALL | METH_KEYWORDS,
     "replay(stream=None)\n--\n\n"
     "Runs the captured work after the work already submitted to `stream` (default:\n"
     "the current stream of the graph's device). May be called any number of times."},
    {"reset", (PyCFunction)graph_reset, METH_NOARGS,
     "reset()\n--\n\nDrops the graph; replays already made run to the end."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"device", (getter)graph_get_device, NULL, "The graph's device ('cuda:0'), or None before a capture.", NULL},
    {"capturing", (getter)graph_get_capturing, NULL, "True between capture_begin() and capture_end().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tpevent.Graph",
    .tp_basicsize = sizeof(tppy_graph),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = graph_new,
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
    .tp_doc =
        "Graph()\n--\n\n"
        "Work captured from streams, replayed as a whole, as\n"
        "torch.cuda.CUDAGraph: on CUDA and HIP the runtime's graph; on the CPU the\n"
        "captured host functions, records and waits, replayed in order.\n"
        "Use it with `with tpevent.graph(g):`, then g.replay().",
};

static PyMethodDef stream_methods[] = {
    {"is_capturing", (PyCFunction)stream_is_capturing, METH_NOARGS, stream_is_capturing_doc},
    {NULL, NULL, 0, NULL},
};

int tppy_graph_types_init(PyObject *module)
{
    if (tppy_type_add_methods(&tppy_stream_type, stream_methods, NULL) < 0 || PyType_Ready(&graph_type) < 0)
        return -1;
    Py_INCREF(&graph_type);
    if (PyModule_AddObject(module, "Graph", (PyObject *)&graph_type) < 0) {
        Py_DECREF(&graph_type);
        return -1;
    }
    return 0;
}
