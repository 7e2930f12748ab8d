/*
 * What the files of the tpevent Python extension share. Not installed.
 *
 * Every Python object holds its C handle directly, so that a method call is the
 * argument checks CPython makes anyway, one tpevent call and a singleton result:
 * no lookups, no string parsing and no temporaries on the record/query/wait paths.
 *
 * The GIL is kept around calls that never block (record, query, wait, create) and
 * released around those that can (synchronize, device and backend loading). The C
 * library never calls back into Python, so holding the GIL while it takes one of
 * its own locks cannot deadlock.
 */
#ifndef TPEVENT_PYTHON_H
#define TPEVENT_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>

#include <tpevent/tpevent.h>

/* The device type a namespace (tpevent.cuda, tpevent.hip) defaults to; the top level
 * has none and uses the thread's current device. */
#define TPPY_ANY_TYPE (-1)

/* Room for any device string the binding makes itself ("cuda:63"). */
typedef struct tppy_device_text {
    char text[TP_DEVICE_STRING_MAX];
} tppy_device_text;

typedef struct {
    PyObject_HEAD
    tp_event *event;       /* NULL once closed */
    tp_event *closed;      /* what close() took from `event`, destroyed with the object */
    PyObject *device_name; /* "cuda:0", made on first use of .device */
    PyObject *owner;       /* from_native: the object whose native event it wraps, kept alive */
    PyObject *weak_references;
} tppy_event;

typedef struct {
    PyObject_HEAD
    tp_stream *stream;
    void *native;          /* tp_stream_native, fixed for the stream's life */
    tp_device device;      /* its device, with a concrete index */
    bool owned;            /* destroy the tp_stream with the object */
    PyObject *device_name; /* "cuda:0", made on first use of .device */
    PyObject *weak_references;
    PyObject *owner; /* a stream of another library it wraps, kept alive */
    PyObject *name;  /* the str given to Stream(name=) or .name (tp_stream_set_name), or NULL */
} tppy_stream;

/* tpevent.Event, tpevent.cuda.Event, tpevent.hip.Event, and the same for Stream. */
extern PyTypeObject tppy_event_type;
extern PyTypeObject tppy_stream_type;
extern PyTypeObject tppy_namespace_event_types[TP_DEVICE_TYPE_COUNT];
extern PyTypeObject tppy_namespace_stream_types[TP_DEVICE_TYPE_COUNT];

/* Keyword names, interned once so that most keyword matches are a pointer compare. */
typedef struct tppy_names {
    PyObject *device;
    PyObject *enable_timing;
    PyObject *blocking;
    PyObject *interprocess;
    PyObject *external;
    PyObject *stream;
    PyObject *event;
    PyObject *type;
    PyObject *status;
    PyObject *timeout;
    PyObject *thread_streams; /* key of this binding's entry in each thread's dict */
    PyObject *thread_stack;   /* key of the `with stream:` stack in each thread's dict */
} tppy_names;

/* names.c */
extern tppy_names tppy_name;

int tppy_names_init(void);

/* True if the keyword `given` is the interned name `expected`. */
bool tppy_keyword_is(PyObject *given, PyObject *expected);

/* ------------------------------------------------------------- errors.c */

/* tpevent.Error, a RuntimeError subclass with a `status` attribute. */
extern PyObject *tppy_error_type;

int tppy_errors_init(PyObject *module);

/*
 * Raises the exception for a failed tpevent call and returns NULL: ValueError for
 * TP_ERR_INVALID_DEVICE and TP_ERR_INVALID_ARGUMENT, tpevent.Error for the rest.
 * The message is tp_last_error() in Python's words (tppy_python_message); the
 * exception's `status` is tp_status_name().
 */
PyObject *tppy_raise(tp_status status);

/* Same, for callers that return an int (-1). */
int tppy_raise_int(tp_status status);

/* tppy_raise with a message of the binding's own instead of tp_last_error(). */
PyObject *tppy_raise_with(tp_status status, const char *message);

/* tpevent.NotRecordedError, raised for TP_ERR_NOT_RECORDED: a tpevent.Error and a
 * ValueError (torch's elapsed_time raises ValueError). */
extern PyObject *tppy_not_recorded_error_type;

/* ----------------------------------------------------------- messages.c */

/* A message of the C library as a str in a Python user's words: without the C
 * function names it went through, with Python's names for the C names in it, and
 * without rule numbers. */
PyObject *tppy_python_message(const char *message);

/* --------------------------------------------------------------- args.c */

/*
 * Turns a Python device argument into the string the C API takes: None (the
 * namespace's type, else NULL for the current device), a str ("cuda:1"), an int
 * (an index of the namespace's type, else of the current device's type), or an
 * object with `type` and `index` attributes such as torch.device. In a namespace
 * a device of another type is a ValueError. *out may point into scratch or into
 * the str object, so it lives as long as both.
 */
int tppy_device_arg(PyObject *arg, int namespace_type, tppy_device_text *scratch, const char **out);

/* "cuda:1" as a new str. */
PyObject *tppy_device_name(tp_device device);

/*
 * The UTF-8 text of a str that goes to the C API as a C string (a device string, a
 * device type), or NULL with ValueError when the str holds a NUL: the C API would
 * read only the part before it, and 'cpu\x00junk' would pass for 'cpu'. `what`
 * names the argument in the message. The text lives as long as the str.
 */
const char *tppy_c_string(PyObject *str, const char *what);

/*
 * For METH_FASTCALL | METH_KEYWORDS methods that take one optional argument:
 * *value is the argument, or Py_None when not given (borrowed).
 */
int tppy_one_optional_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject *name,
                          const char *function, PyObject **value);

/* A new reference to the attribute `name` of an object of another library, or
 * NULL: *error tells a failure (an exception set) from absence. */
PyObject *tppy_optional_attr(PyObject *object, const char *name, bool *error);

/* ------------------------------------------------------- type_methods.c */

/* Adds methods and attributes (getset may be NULL) to a ready static type, from a
 * file above the one that defines it; its subclasses (the namespaces' types) find
 * them through the base. */
int tppy_type_add_methods(PyTypeObject *type, PyMethodDef *methods, PyGetSetDef *getset);

/* ------------------------------------------------------------ at_exit.c */

/* Set by the atexit hook (or seen from Py_IsFinalizing): the interpreter is going
 * away; host functions still to run are dropped, CUDA/HIP streams are kept. */
bool tppy_exiting(void);

/* Adds the module's _at_exit hook. */
int tppy_at_exit_init(PyObject *module);

/* --------------------------------------------------------------- wait.c */

/* A `timeout` argument in seconds (int or float; None: forever) as ns, -1 for
 * forever; TypeError or ValueError (negative, NaN) otherwise. */
int tppy_timeout_arg(PyObject *arg, int64_t *timeout_ns);

/*
 * Waits with wait(object, slice_ns) (a *_synchronize_for) in slices of ~50 ms with
 * the GIL released, running the signal handlers between slices (Ctrl-C raises
 * KeyboardInterrupt there); timeout_ns -1 is forever. None once done; TimeoutError
 * when the timeout runs out; the error of a failing wait. `what` starts with
 * "Event" or "Stream" and names the method in the message.
 */
PyObject *tppy_wait(tp_status (*wait)(void *object, int64_t timeout_ns), void *object, int64_t timeout_ns,
                    const char *what);

/* A synchronize(timeout=None) method: its one optional argument, then tppy_wait. */
PyObject *tppy_synchronize_method(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                  tp_status (*wait)(void *object, int64_t timeout_ns), void *object, const char *what);

/* ------------------------------------------------------- interruptible.c */

/* Waits for the event's latest record in tppy_wait's slices: 0, or -1 with an
 * exception (KeyboardInterrupt on Ctrl-C, or the wait's error). */
int tppy_wait_reached(tp_event *event);

/* tpevent.synchronize's wait, in slices of tp_device_synchronize_for. */
PyObject *tppy_wait_device(const char *device);

/* tp_trace_stop on a thread of its own, waited for in slices: None, the stop's
 * error, or KeyboardInterrupt at once (the stop then ends in the background). */
PyObject *tppy_trace_stop_interruptible(const char *path);

/* ------------------------------------------------------------- stream.c */

int tppy_stream_types_init(PyObject *module, PyObject *namespaces[TP_DEVICE_TYPE_COUNT]);

/* A new Stream object of `type` for `stream`, owning it if `owned` (then destroying
 * it on failure). */
PyObject *tppy_stream_wrap(PyTypeObject *type, tp_stream *stream, bool owned);

/* The device type of a Stream class's namespace (TPPY_ANY_TYPE for tpevent.Stream). */
int tppy_stream_type_namespace(PyTypeObject *type);

/* --------------------------------------------------------- stream_arg.c */

/* The tp_stream of a Stream argument, NULL for None if none_ok; TypeError for
 * anything else. A stream of another library is wrapped: *hold is then a new
 * reference to the wrapper, which the caller drops after its call (else NULL). */
int tppy_stream_arg(PyObject *arg, bool none_ok, const char *function, tp_stream **out, PyObject **hold);

/*
 * Another library's stream as a Stream of `type` (its namespace picks the device
 * type, else cuda): an object with __cuda_stream__ (returning (version, handle)),
 * torch's (.cuda_stream) or CuPy's (.ptr). 1 with a new wrapper in *out (keeping
 * the object alive, not owning the native stream), 0 if arg is none of these, -1
 * with an exception.
 */
int tppy_foreign_stream(PyObject *arg, PyTypeObject *type, PyObject **out);

/* -------------------------------------------------------------- clock.c */

/* Event.timestamp() (rule 13) and its docstring. */
extern const char tppy_event_timestamp_doc[];
PyObject *tppy_event_timestamp(PyObject *self, PyObject *unused);

/* tpevent.ClockInfo, added to the module. */
int tppy_clock_types_init(PyObject *module);

/* device_clock()'s docstring, and its answer for a device string (NULL: the
 * current device) as a ClockInfo. */
extern const char tppy_device_clock_doc[];
PyObject *tppy_clock_info(const char *device);

/* -------------------------------------------------------------- event.c */

int tppy_event_types_init(PyObject *module, PyObject *namespaces[TP_DEVICE_TYPE_COUNT]);

/* A new Event object of `type` that owns `event`; destroys `event` on failure. */
PyObject *tppy_event_adopt(PyTypeObject *type, tp_event *event);

/* The tp_event of an Event argument; TypeError for anything else. */
int tppy_event_arg(PyObject *arg, const char *function, tp_event **out);

/* The device type of an Event class's namespace (TPPY_ANY_TYPE for tpevent.Event). */
int tppy_event_type_namespace(PyTypeObject *type);

/* ------------------------------------ the files that add to the types */

/* Each adds its methods to Stream or Event, after the types are ready:
 * event_ipc.c: Event.ipc_handle and Event.from_ipc_handle;
 * stream_events.c: Stream.record_event, record, wait_event, wait_stream, wait;
 * current_stream.c: Stream.__enter__ and __exit__ (the stream and its device
 *   current inside the block);
 * interop.c: the interop methods and attributes of Stream and Event;
 * aliases.c: CuPy's and cuda.core's names for methods of Event and Stream. */
int tppy_event_ipc_init(void);
int tppy_stream_events_init(void);
int tppy_current_stream_init(void);
int tppy_interop_init(void);
int tppy_aliases_init(void);

/* ----------------------------------------------------- current_stream.c */

/* The thread's current stream of a device (NULL: the current device), as the Stream
 * object that was made current from Python when it still is, else a new wrapper. */
PyObject *tppy_current_stream(const char *device, PyTypeObject *wrapper_type);

/* Makes a Stream current for its device on this thread, keeping a reference to it
 * for as long as it stays current there. */
int tppy_set_current_stream(tppy_stream *stream);

/* The list of what `with stream:` blocks of this thread replaced, innermost last:
 * (stream, current device, current device of the stream's type) (a borrowed
 * reference, NULL with an exception set). */
PyObject *tppy_thread_stream_stack(void);

/* Makes `device` the thread's current device (set_stream does, as torch's). */
int tppy_set_current_device(tp_device device);

/* -------------------------------------------------------------- graph.c */

/* tpevent.Graph (rule 16), added to the module, and Stream.is_capturing(). */
int tppy_graph_types_init(PyObject *module);

/* --------------------------------------------------------------- hold.c */

/* tpevent.Hold (rule 17), added to the module, and Stream.hold(). */
int tppy_hold_types_init(PyObject *module);

/* ----------------------------------------------------------- timeline.c */

/* Adds _range_push, _range_pop, _trace_start and _trace_stop to the module. */
int tppy_timeline_init(PyObject *module);

/* ------------------------------------------------------------ measure.c */

/* Adds _measure (tp_measure without the GIL, for tpevent.measure) to the module. */
int tppy_measure_init(PyObject *module);

#endif /* TPEVENT_PYTHON_H */
