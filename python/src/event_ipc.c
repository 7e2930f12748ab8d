/* Event.ipc_handle() and Event.from_ipc_handle() (rule 8): an event shared with
 * another process through 128 bytes; and pickling, which sends those bytes, as
 * torch pickles its IPC events for multiprocessing. Added to the type by
 * tppy_event_ipc_init. */
#include "tpevent_python.h"

#include <string.h>

static const char event_ipc_handle_doc[] =
    "ipc_handle($self, /)\n"
    "--\n"
    "\n"
    "Return an IPC handle of this event: 128 bytes that another process passes\n"
    "to Event.from_ipc_handle() to use the same event. Only for events created\n"
    "with interprocess=True (ValueError otherwise).\n";

static PyObject *event_ipc_handle(tppy_event *self, PyObject *unused)
{
    (void)unused;
    tp_ipc_handle handle;
    tp_status status = tp_event_ipc_handle(self->event, &handle);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyBytes_FromStringAndSize((const char *)handle.bytes, sizeof handle.bytes);
}

static const char event_from_ipc_handle_doc[] =
    "from_ipc_handle($cls, device, handle)\n"
    "--\n"
    "\n"
    "Reconstruct an event from an IPC handle on the given device.\n"
    "\n"
    "Parameters:\n"
    "    device (str, int or None): the device; None means the handle's own.\n"
    "    handle (bytes-like): what Event.ipc_handle() returned in the process\n"
    "        that created the event.\n"
    "\n"
    "The event can be queried, synchronized, waited on and recorded. A handle\n"
    "that is not one, or a device of another type than the handle's, is a\n"
    "ValueError.\n";

static PyObject *event_from_ipc_handle(PyTypeObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"device", "handle", NULL};
    PyObject *device;
    Py_buffer buffer;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy*:from_ipc_handle", keywords, &device, &buffer))
        return NULL;
    tp_ipc_handle handle;
    if (buffer.len != (Py_ssize_t)sizeof handle.bytes) {
        PyErr_Format(PyExc_ValueError, "an IPC handle is %d bytes, not %zd", TP_IPC_HANDLE_SIZE, buffer.len);
        PyBuffer_Release(&buffer);
        return NULL;
    }
    memcpy(handle.bytes, buffer.buf, sizeof handle.bytes);
    PyBuffer_Release(&buffer);

    /* No device: the handle's own, not the namespace's current one. */
    int namespace_type = tppy_event_type_namespace(cls);
    tppy_device_text scratch;
    const char *device_str = NULL;
    if (device != Py_None && tppy_device_arg(device, namespace_type, &scratch, &device_str) < 0)
        return NULL;
    tp_event *event;
    tp_status status = tp_event_from_ipc_handle(&event, device_str, &handle);
    if (status != TP_OK)
        return tppy_raise(status);
    tp_device imported;
    tp_event_device(event, &imported);
    if (namespace_type != TPPY_ANY_TYPE && (int)imported.type != namespace_type) {
        tp_event_destroy(event);
        PyErr_Format(PyExc_ValueError, "%s.from_ipc_handle: the handle is of a %s event", cls->tp_name,
                     tp_device_type_name(imported.type));
        return NULL;
    }
    return tppy_event_adopt(cls, event);
}

static const char event_reduce_doc[] =
    "__reduce__($self, /)\n"
    "--\n"
    "\n"
    "An interprocess event pickles as its IPC handle: unpickled in another process\n"
    "(multiprocessing, spawn or fork), it is Event.from_ipc_handle(None, handle),\n"
    "the same event. Other events cannot be pickled (TypeError).\n";

/* Any other event is a handle into this process's runtime: a pickle of it would
 * come back as a new, unrelated event. */
static PyObject *event_reduce(tppy_event *self, PyObject *unused)
{
    (void)unused;
    unsigned flags;
    tp_status status = tp_event_flags(self->event, &flags);
    if (status != TP_OK)
        return tppy_raise(status);
    if (!(flags & TP_EVENT_INTERPROCESS)) {
        PyErr_Format(PyExc_TypeError,
                     "cannot pickle %s: it is not interprocess; only an event created with interprocess=True can "
                     "go to another process (it travels as its ipc_handle())",
                     Py_TYPE(self)->tp_name);
        return NULL;
    }
    PyObject *handle = event_ipc_handle(self, NULL);
    if (!handle)
        return NULL;
    PyObject *rebuild = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_ipc_handle");
    if (!rebuild) {
        Py_DECREF(handle);
        return NULL;
    }
    /* No device: the handle's own, whatever the process's current device is. */
    return Py_BuildValue("(N(ON))", rebuild, Py_None, handle);
}

static PyMethodDef event_methods[] = {
    {"__reduce__", (PyCFunction)event_reduce, METH_NOARGS, event_reduce_doc},
    {"ipc_handle", (PyCFunction)event_ipc_handle, METH_NOARGS, event_ipc_handle_doc},
    {"from_ipc_handle", (PyCFunction)(void (*)(void))event_from_ipc_handle, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     event_from_ipc_handle_doc},
    {NULL, NULL, 0, NULL},
};

int tppy_event_ipc_init(void)
{
    return tppy_type_add_methods(&tppy_event_type, event_methods, NULL);
}
