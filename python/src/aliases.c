/*
 * The names CuPy and cuda.core users know, where they mean what tpevent's own do
 * (python/README.md, "Names", has the table): sync() is synchronize() (cuda.core's
 * Event and Stream), is_done (cuda.core) and done (CuPy) are query() as an
 * attribute. The methods are the same objects as tpevent's; the attributes ask the
 * C library as query() does. Added to the ready types by tppy_aliases_init; the
 * other aliases live with what they alias (Event.__sub__ in event.c, Stream.wait
 * in stream_events.c, get_elapsed_time in tpevent/__init__.py).
 */
#include "tpevent_python.h"

static PyObject *event_get_done(tppy_event *self, void *closure)
{
    (void)closure;
    bool done;
    tp_status status = tp_event_query(self->event, &done);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong(done);
}

static PyObject *stream_get_done(tppy_stream *self, void *closure)
{
    (void)closure;
    bool idle;
    tp_status status = tp_stream_query(self->stream, &idle);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBool_FromLong(idle);
}

static PyGetSetDef event_getset[] = {
    {"is_done", (getter)event_get_done, NULL, "query() as an attribute, as cuda.core's Event.is_done.", NULL},
    {"done", (getter)event_get_done, NULL, "query() as an attribute, as CuPy's Event.done.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"done", (getter)stream_get_done, NULL, "query() as an attribute, as CuPy's Stream.done.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef no_methods[] = {
    {NULL, NULL, 0, NULL},
};

/* `alias` becomes the very descriptor of `name`: one method, two names. */
static int add_method_alias(PyTypeObject *type, const char *alias, const char *name)
{
    PyObject *method = PyDict_GetItemString(type->tp_dict, name); /* borrowed */
    if (!method) {
        PyErr_Format(PyExc_SystemError, "%s has no %s to alias as %s", type->tp_name, name, alias);
        return -1;
    }
    if (PyDict_SetItemString(type->tp_dict, alias, method) < 0)
        return -1;
    PyType_Modified(type);
    return 0;
}

int tppy_aliases_init(void)
{
    if (tppy_type_add_methods(&tppy_event_type, no_methods, event_getset) < 0 ||
        tppy_type_add_methods(&tppy_stream_type, no_methods, stream_getset) < 0 ||
        add_method_alias(&tppy_event_type, "sync", "synchronize") < 0 ||
        add_method_alias(&tppy_stream_type, "sync", "synchronize") < 0)
        return -1;
    return 0;
}
