/* Event.ipc_handle() and Event.from_ipc_handle() (rule 8): an event shared with
 * another process through 128 bytes; and pickling, which sends those bytes, as
 * torch pickles its IPC events for multiprocessing. Event.send(sock) and
 * Event.recv(sock): the same over a Unix socket, across containers
 * (include/tpevent/ipc.h). Added to the type by tppy_event_ipc_init. */
#include "tpevent_python.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

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

/* ------------------------------------------------- over a Unix socket */

/* A year: a longer timeout waits as a blocking socket does. */
#define SOCKET_TIMEOUT_MAX_S (365.0 * 86400.0)

/* The socket's descriptor and timeout in ns (-1: blocking, socket.gettimeout() None). */
static int socket_arg(PyObject *sock, int *fd, int64_t *timeout_ns)
{
    *fd = PyObject_AsFileDescriptor(sock);
    if (*fd < 0)
        return -1;
    *timeout_ns = -1;
    if (!PyObject_HasAttrString(sock, "gettimeout"))
        return 0;
    PyObject *timeout = PyObject_CallMethod(sock, "gettimeout", NULL);
    if (!timeout)
        return -1;
    if (timeout != Py_None) {
        /* The object's number: past SOCKET_TIMEOUT_MAX_S (or inf) it is as good as
         * none, and in ns it must leave room for the deadline, now + timeout. */
        double seconds = PyFloat_AsDouble(timeout);
        *timeout_ns = seconds > SOCKET_TIMEOUT_MAX_S ? -1 : seconds > 0 ? (int64_t)(seconds * 1e9) : 0;
    }
    Py_DECREF(timeout);
    return PyErr_Occurred() ? -1 : 0;
}

/* The failure as an exception whose message names the socket first. */
static PyObject *raise_for_socket(tp_status status, PyObject *sock)
{
    PyObject *text = PyUnicode_FromFormat("%R: %s", sock, tp_last_error());
    if (!text)
        return NULL;
    const char *message = PyUnicode_AsUTF8(text);
    PyObject *result = message ? tppy_raise_with(status, message) : NULL;
    Py_DECREF(text);
    return result;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Waits until the socket has something to read, in slices of 50 ms with the GIL
 * released and the signal handlers run between them (Ctrl-C works); 1 ready, 0
 * timed out, -1 raised. */
static int readable_within(int fd, int64_t timeout_ns)
{
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    for (;;) {
        int64_t left = deadline == INT64_MAX ? INT64_MAX : deadline - now_ns();
        int slice_ms = left > 50000000 ? 50 : (left > 0 ? (int)((left + 999999) / 1000000) : 0);
        struct pollfd p = {fd, POLLIN, 0};
        int ready;
        Py_BEGIN_ALLOW_THREADS
        ready = poll(&p, 1, slice_ms);
        Py_END_ALLOW_THREADS
        if (ready > 0)
            return 1;
        if (ready < 0 && errno != EINTR) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
        if (PyErr_CheckSignals() < 0)
            return -1;
        if (left <= 0)
            return 0;
    }
}

static const char event_send_doc[] =
    "send($self, sock, /)\n"
    "--\n"
    "\n"
    "Send this event over a connected Unix-domain socket (socket.socket of\n"
    "AF_UNIX, any type), to a process that calls Event.recv(sock): it may be in\n"
    "another container (other PID, IPC and mount namespaces, no shared\n"
    "/dev/shm). Only for events created with interprocess=True. Errors name the\n"
    "socket and the reason: ValueError (not interprocess, not an AF_UNIX socket,\n"
    "the peer gone), tpevent.Error (a backend without it: OpenCL).\n";

static PyObject *event_send(tppy_event *self, PyObject *sock)
{
    int fd;
    int64_t timeout_ns;
    if (socket_arg(sock, &fd, &timeout_ns) < 0)
        return NULL;
    tp_status status;
    Py_BEGIN_ALLOW_THREADS
    status = tp_event_ipc_send(self->event, fd);
    Py_END_ALLOW_THREADS
    if (status != TP_OK)
        return raise_for_socket(status, sock);
    Py_RETURN_NONE;
}

static const char event_recv_doc[] =
    "recv($cls, sock, device=None)\n"
    "--\n"
    "\n"
    "Receive an event that another process sent with Event.send(sock). Blocks\n"
    "until it comes, as the socket does (its timeout: TimeoutError after it),\n"
    "and Ctrl-C interrupts it. device None means the sender's device; a device\n"
    "must be of the sender's type. A forged or truncated message, a wrong\n"
    "descriptor or a peer that closed the socket mid-message is a ValueError\n"
    "naming the socket and what was wrong. The event stays valid when the\n"
    "sender exits.\n";

static PyObject *event_recv(PyTypeObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"sock", "device", NULL};
    PyObject *sock, *device = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:recv", keywords, &sock, &device))
        return NULL;
    int namespace_type = tppy_event_type_namespace(cls);
    tppy_device_text scratch;
    const char *device_str = NULL;
    if (device != Py_None && tppy_device_arg(device, namespace_type, &scratch, &device_str) < 0)
        return NULL;
    int fd;
    int64_t timeout_ns;
    if (socket_arg(sock, &fd, &timeout_ns) < 0)
        return NULL;
    int ready = readable_within(fd, timeout_ns);
    if (ready < 0)
        return NULL;
    if (ready == 0) {
        PyErr_Format(PyExc_TimeoutError, "%R: no event received within the socket's timeout", sock);
        return NULL;
    }
    tp_event *event;
    tp_status status;
    Py_BEGIN_ALLOW_THREADS
    status = tp_event_ipc_recv(&event, fd, device_str);
    Py_END_ALLOW_THREADS
    if (status != TP_OK)
        return raise_for_socket(status, sock);
    tp_device received;
    tp_event_device(event, &received);
    if (namespace_type != TPPY_ANY_TYPE && (int)received.type != namespace_type) {
        tp_event_destroy(event);
        PyErr_Format(PyExc_ValueError, "%s.recv: %R sent a %s event", cls->tp_name, sock,
                     tp_device_type_name(received.type));
        return NULL;
    }
    return tppy_event_adopt(cls, event);
}

static PyMethodDef event_methods[] = {
    {"send", (PyCFunction)event_send, METH_O, event_send_doc},
    {"recv", (PyCFunction)(void (*)(void))event_recv, METH_VARARGS | METH_KEYWORDS | METH_CLASS, event_recv_doc},
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
