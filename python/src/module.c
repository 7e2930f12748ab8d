/*
 * The module tpevent._tpevent and its namespaces, one per device type of the list
 * (cmake/TpeventDeviceTypes.cmake, as core/device_types.h): tpevent.cuda, ... A
 * namespace's functions are the top level's with the device type defaulted to its
 * own: each module's state holds the type it defaults to (TPPY_ANY_TYPE at the top
 * level), and the same C functions serve them all. _device_types names the types,
 * by value, for the package's __init__.
 */
#include "tpevent_python.h"
#include "core/device_types.h"

typedef struct module_state {
    int namespace_type;
} module_state;

static int module_namespace(PyObject *module)
{
    return ((module_state *)PyModule_GetState(module))->namespace_type;
}

/* Objects a namespace function makes are of the namespace's classes. */
static PyTypeObject *namespace_stream_type(int namespace_type)
{
    return namespace_type == TPPY_ANY_TYPE ? &tppy_stream_type : &tppy_namespace_stream_types[namespace_type];
}

/* A device-type argument of device_count() and is_available(): None means the
 * namespace's type, else the current device's. */
static int device_type_arg(PyObject *arg, int namespace_type, const char *function, const char **out)
{
    *out = NULL; /* set on every path, the error paths included */
    if (arg == Py_None) {
        tp_device_type type = (tp_device_type)namespace_type;
        if (namespace_type == TPPY_ANY_TYPE) {
            tp_device current;
            tp_status status = tp_current_device(&current);
            if (status != TP_OK)
                return tppy_raise_int(status);
            type = current.type;
        }
        *out = tp_device_type_name(type);
        return 0;
    }
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s() expects a device type such as 'cuda', not %.100s", function,
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    *out = tppy_c_string(arg, "device type");
    return *out ? 0 : -1;
}

/* The one optional `device` argument of current_stream(), default_stream() and
 * synchronize(), as a device string (NULL: the namespace's or the current device). */
static int optional_device_arg(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                               const char *function, tppy_device_text *scratch, const char **device_str)
{
    PyObject *device = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.device, function, &device) < 0)
        return -1;
    return tppy_device_arg(device, module_namespace(module), scratch, device_str);
}

/* ------------------------------------------------------------- streams */

PyDoc_STRVAR(current_stream_doc,
             "current_stream(device=None)\n"
             "--\n"
             "\n"
             "Return the calling thread's current stream of a device: the one last made\n"
             "current on this thread (set_stream(), `with stream:`), else the device's\n"
             "default stream.\n"
             "\n"
             "Parameters:\n"
             "    device (str or int, optional): the device; if not given, the current\n"
             "        device (in tpevent.cuda and tpevent.hip: the current device of that\n"
             "        type).\n");

static PyObject *module_current_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    tppy_device_text scratch;
    const char *device_str;
    if (optional_device_arg(module, args, nargs, kwnames, "current_stream", &scratch, &device_str) < 0)
        return NULL;
    return tppy_current_stream(device_str, namespace_stream_type(module_namespace(module)));
}

PyDoc_STRVAR(default_stream_doc,
             "default_stream(device=None)\n"
             "--\n"
             "\n"
             "Return the default stream of a device. It lives as long as the process.\n"
             "\n"
             "Parameters:\n"
             "    device (str or int, optional): the device; if not given, the current\n"
             "        device (in tpevent.cuda and tpevent.hip: the current device of that\n"
             "        type).\n");

static PyObject *module_default_stream(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    int namespace_type = module_namespace(module);
    tppy_device_text scratch;
    const char *device_str;
    if (optional_device_arg(module, args, nargs, kwnames, "default_stream", &scratch, &device_str) < 0)
        return NULL;
    tp_stream *stream;
    tp_status status = tp_stream_default(device_str, &stream);
    if (status != TP_OK)
        return tppy_raise(status);
    return tppy_stream_wrap(namespace_stream_type(namespace_type), stream, false);
}

PyDoc_STRVAR(set_stream_doc,
             "set_stream(stream, /)\n"
             "--\n"
             "\n"
             "Make a stream the current stream of its device on the calling thread, and\n"
             "its device the current device, as torch.cuda.set_stream does. The stream\n"
             "is kept alive while it is current; another library's stream (__cuda_stream__,\n"
             "torch's, CuPy's) is taken too. None does nothing. Prefer `with stream:`\n"
             "(or tpevent.stream()), which restores the previous stream and device.\n");

static PyObject *module_set_stream(PyObject *module, PyObject *arg)
{
    (void)module;
    if (arg == Py_None)
        Py_RETURN_NONE;
    tp_stream *unused;
    PyObject *hold;
    if (tppy_stream_arg(arg, false, "set_stream", &unused, &hold) < 0)
        return NULL;
    tppy_stream *stream = hold ? (tppy_stream *)hold : (tppy_stream *)arg;
    int rc = tppy_set_current_stream(stream);
    if (rc == 0)
        rc = tppy_set_current_device(stream->device);
    Py_XDECREF(hold); /* a wrapper made current is kept by the thread's dict */
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- devices */

PyDoc_STRVAR(synchronize_doc,
             "synchronize(device=None)\n"
             "--\n"
             "\n"
             "Wait for all work on all streams of a device to complete. Other Python\n"
             "threads run meanwhile: the GIL is released. The wait runs in slices of\n"
             "about 50 ms; between them signal handlers run, so Ctrl-C interrupts it.\n"
             "\n"
             "Parameters:\n"
             "    device (str or int, optional): the device; if not given, the current\n"
             "        device (in tpevent.cuda and tpevent.hip: the current device of that\n"
             "        type).\n");

static PyObject *module_synchronize(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    tppy_device_text scratch;
    const char *device_str;
    if (optional_device_arg(module, args, nargs, kwnames, "synchronize", &scratch, &device_str) < 0)
        return NULL;
    return tppy_wait_device(device_str);
}

PyDoc_STRVAR(set_device_doc,
             "set_device(device, /)\n"
             "--\n"
             "\n"
             "Set the calling thread's current device, such as 'cuda:1'. A type without\n"
             "an index ('cuda') keeps the thread's current index of that type; an int is\n"
             "an index of the current device's type (in tpevent.cuda: a cuda index).\n");

static PyObject *module_set_device(PyObject *module, PyObject *arg)
{
    int namespace_type = module_namespace(module);
    if (arg == Py_None && namespace_type == TPPY_ANY_TYPE) {
        PyErr_SetString(PyExc_TypeError, "set_device() expects a device such as 'cuda:1', not None");
        return NULL;
    }
    /* torch's set_device(-1) changes nothing, in a namespace too: tpevent.cpu.set_device(-1)
     * must not make the CPU current where the current device is cuda:0. */
    if (PyLong_Check(arg)) {
        long index = PyLong_AsLong(arg);
        if (index == -1 && PyErr_Occurred())
            PyErr_Clear(); /* too large: tppy_device_arg says so */
        else if (index < 0)
            Py_RETURN_NONE;
    }
    tppy_device_text scratch;
    const char *device_str;
    if (tppy_device_arg(arg, namespace_type, &scratch, &device_str) < 0)
        return NULL;
    if (!device_str)
        Py_RETURN_NONE; /* the current device, already current */
    tp_status status = tp_set_device(device_str);
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(current_device_doc,
             "current_device()\n"
             "--\n"
             "\n"
             "Return the calling thread's current device as a str such as 'cuda:0'. It\n"
             "starts as TPEVENT_DEVICE if set, else the first available of cuda, hip and\n"
             "cpu, index 0.\n");

static PyObject *module_current_device(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    tp_device device;
    tp_status status = tp_current_device(&device);
    if (status != TP_OK)
        return tppy_raise(status);
    return tppy_device_name(device);
}

PyDoc_STRVAR(device_count_doc,
             "device_count(type=None)\n"
             "--\n"
             "\n"
             "Return the number of devices of a backend, named by its device type\n"
             "such as 'cuda' (backends() lists them); 0 if the backend is unavailable.\n"
             "If not given, the type is the current device's (in a namespace such as\n"
             "tpevent.cuda: that namespace's). The CPU\n"
             "backend offers TPEVENT_CPU_DEVICES virtual devices (default 1).\n"
             "\n"
             "Raises:\n"
             "    ValueError: an unknown type, or a device string with an index.\n");

static PyObject *module_device_count(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.type, "device_count", &arg) < 0)
        return NULL;
    const char *type;
    if (device_type_arg(arg, module_namespace(module), "device_count", &type) < 0)
        return NULL;
    int count;
    tp_status status;
    /* The first ask loads the backend's module and its runtime, which can take long. */
    Py_BEGIN_ALLOW_THREADS
    status = tp_device_count(type, &count);
    Py_END_ALLOW_THREADS
    if (status != TP_OK)
        return tppy_raise(status);
    return PyLong_FromLong(count);
}

PyDoc_STRVAR(is_available_doc,
             "is_available(type=None)\n"
             "--\n"
             "\n"
             "Return True if a backend, named by its device type such as 'cuda'\n"
             "(backends() lists them), can be used here. If not given, the type is the\n"
             "current device's (in a namespace such as tpevent.cuda: that namespace's).\n"
             "backends() tells why one cannot.\n"
             "\n"
             "Raises:\n"
             "    ValueError: an unknown type.\n");

static PyObject *module_is_available(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *arg = Py_None;
    if ((nargs != 0 || kwnames != NULL) &&
        tppy_one_optional_arg(args, nargs, kwnames, tppy_name.type, "is_available", &arg) < 0)
        return NULL;
    const char *type;
    if (device_type_arg(arg, module_namespace(module), "is_available", &type) < 0)
        return NULL;
    tp_status status;
    Py_BEGIN_ALLOW_THREADS
    status = tp_backend_status(type, NULL);
    Py_END_ALLOW_THREADS
    if (status == TP_ERR_BACKEND_UNAVAILABLE)
        Py_RETURN_FALSE;
    if (status != TP_OK)
        return tppy_raise(status);
    Py_RETURN_TRUE;
}

/* ------------------------------------------------------------ backends */

static PyStructSequence_Field backend_info_fields[] = {
    {"name", "the device type, such as 'cuda'"},
    {"available", "True if the backend can be used"},
    {"reason", "why it cannot be used, or None"},
    {"device_count", "its number of devices (0 when unavailable)"},
    {"built_in", "True if linked into the core library (no module to load)"},
    {"module_path", "the module file tried, or None"},
    {NULL, NULL},
};

static PyStructSequence_Desc backend_info_desc = {
    .name = "tpevent.BackendInfo",
    .doc = "What backends() says of one backend.",
    .fields = backend_info_fields,
    .n_in_sequence = 6,
};

static PyTypeObject *backend_info_type;

static PyObject *optional_str(const char *text)
{
    if (!text || text[0] == '\0')
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(text);
}

static PyObject *backend_info(const tp_backend_info *info)
{
    PyObject *item = PyStructSequence_New(backend_info_type);
    if (!item)
        return NULL;
    PyObject *values[6] = {
        PyUnicode_FromString(info->name),
        PyBool_FromLong(info->status == TP_OK),
        info->status == TP_OK || !info->reason || !info->reason[0] ? Py_NewRef(Py_None)
                                                                   : tppy_python_message(info->reason),
        PyLong_FromLong(info->device_count),
        PyBool_FromLong(info->built_in),
        optional_str(info->module_path),
    };
    for (int i = 0; i < 6; i++) {
        if (!values[i]) {
            for (int j = 0; j < 6; j++)
                Py_XDECREF(values[j]);
            Py_DECREF(item);
            return NULL;
        }
    }
    for (int i = 0; i < 6; i++)
        PyStructSequence_SetItem(item, i, values[i]);
    return item;
}

PyDoc_STRVAR(backends_doc,
             "backends()\n"
             "--\n"
             "\n"
             "Return a list with one tpevent.BackendInfo per backend (device type), the CPU's first:\n"
             "its name, whether it is available, why not (reason), its device count,\n"
             "whether it is built in, and the module file tried. Loads each backend's\n"
             "module if not loaded yet.\n"
             "\n"
             "Example:\n"
             "\n"
             ">>> cpu = tpevent.backends()[0]\n"
             ">>> cpu.name, cpu.available, cpu.built_in\n"
             "('cpu', True, True)\n");

static PyObject *module_backends(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        tp_backend_info info;
        tp_status status;
        const char *name = tp_device_type_name((tp_device_type)t);
        Py_BEGIN_ALLOW_THREADS
        status = tp_backend_get_info(name, &info);
        Py_END_ALLOW_THREADS
        PyObject *item = status == TP_OK ? backend_info(&info) : tppy_raise(status);
        if (!item || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

/* --------------------------------------------------------------- clock */

static PyObject *module_device_clock(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    tppy_device_text scratch;
    const char *device_str;
    if (optional_device_arg(module, args, nargs, kwnames, "device_clock", &scratch, &device_str) < 0)
        return NULL;
    return tppy_clock_info(device_str);
}

/* -------------------------------------------------------------- modules */

/* clang-format off */
#define COMMON_FUNCTIONS                                                                                          \
    {"current_stream", (PyCFunction)(void (*)(void))module_current_stream, METH_FASTCALL | METH_KEYWORDS,         \
     current_stream_doc},                                                                                         \
        {"default_stream", (PyCFunction)(void (*)(void))module_default_stream, METH_FASTCALL | METH_KEYWORDS,     \
         default_stream_doc},                                                                                     \
        {"set_stream", module_set_stream, METH_O, set_stream_doc},                                                \
        {"synchronize", (PyCFunction)(void (*)(void))module_synchronize, METH_FASTCALL | METH_KEYWORDS,           \
         synchronize_doc},                                                                                        \
        {"set_device", module_set_device, METH_O, set_device_doc},                                                \
        {"device_count", (PyCFunction)(void (*)(void))module_device_count, METH_FASTCALL | METH_KEYWORDS,         \
         device_count_doc},                                                                                       \
        {"is_available", (PyCFunction)(void (*)(void))module_is_available, METH_FASTCALL | METH_KEYWORDS,         \
         is_available_doc},                                                                                       \
        {"device_clock", (PyCFunction)(void (*)(void))module_device_clock, METH_FASTCALL | METH_KEYWORDS,         \
         tppy_device_clock_doc}

static PyMethodDef top_level_functions[] = {
    COMMON_FUNCTIONS,
    {"current_device", module_current_device, METH_NOARGS, current_device_doc},
    {"backends", module_backends, METH_NOARGS, backends_doc},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef namespace_functions[] = {
    COMMON_FUNCTIONS,
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc,
             "The C extension behind the tpevent package; import tpevent instead.");

static struct PyModuleDef top_level_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tpevent._tpevent",
    .m_doc = module_doc,
    .m_size = sizeof(module_state),
    .m_methods = top_level_functions,
};

#define NAMESPACE_DOC(type_name)                                                                              \
    "tpevent with '" type_name "' as the default device type, for code written against\n"                  \
    "torch." type_name " or tensorplay." type_name ": Event() and Stream() make\n"                           \
    "objects of the current " type_name " device, current_stream() gives its current stream,\n"            \
    "and so on. The functions are tpevent's, with device=None meaning the current\n"                         \
    "device of this type and an int device meaning an index of this type."

/* One per device type of the list, by its value. */
#define NAMESPACE_DEF(upper, name, value, kind)                                                              \
    [value] = {PyModuleDef_HEAD_INIT, .m_name = "tpevent." #name, .m_doc = NAMESPACE_DOC(#name),            \
               .m_size = sizeof(module_state), .m_methods = namespace_functions},
static struct PyModuleDef namespace_defs[TP_DEVICE_TYPE_COUNT] = {TP_PUBLIC_DEVICE_TYPES(NAMESPACE_DEF)};
#undef NAMESPACE_DEF
/* clang-format on */

static PyObject *create_module(struct PyModuleDef *def, int namespace_type)
{
    PyObject *module = PyModule_Create(def);
    if (module)
        ((module_state *)PyModule_GetState(module))->namespace_type = namespace_type;
    return module;
}

/* The namespaces are attributes of the extension, named by _device_types; the
 * package's __init__ takes them from there and registers them in sys.modules so that
 * `import tpevent.cuda` works. */
static int add_namespaces(PyObject *module, PyObject *namespaces[TP_DEVICE_TYPE_COUNT])
{
    PyObject *names = PyTuple_New(TP_DEVICE_TYPE_COUNT);
    if (!names)
        return -1;
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        PyObject *name = PyUnicode_FromString(tp_device_type_name((tp_device_type)t));
        if (!name) {
            Py_DECREF(names);
            return -1;
        }
        PyTuple_SET_ITEM(names, t, name);
    }
    if (PyModule_AddObject(module, "_device_types", names) < 0) {
        Py_DECREF(names);
        return -1;
    }
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        namespaces[t] = create_module(&namespace_defs[t], t);
        if (!namespaces[t])
            return -1;
        Py_INCREF(tppy_error_type);
        if (PyModule_AddObject(namespaces[t], "Error", tppy_error_type) < 0) {
            Py_DECREF(tppy_error_type);
            return -1;
        }
        /* The module keeps the namespace; namespaces[] borrows it. */
        Py_INCREF(namespaces[t]);
        if (PyModule_AddObject(module, tp_device_type_name((tp_device_type)t), namespaces[t]) < 0) {
            Py_DECREF(namespaces[t]);
            Py_DECREF(namespaces[t]);
            return -1;
        }
        Py_DECREF(namespaces[t]);
    }
    return 0;
}

static int add_backend_info(PyObject *module)
{
    backend_info_type = PyStructSequence_NewType(&backend_info_desc);
    if (!backend_info_type)
        return -1;
    Py_INCREF(backend_info_type);
    if (PyModule_AddObject(module, "BackendInfo", (PyObject *)backend_info_type) < 0) {
        Py_DECREF(backend_info_type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__tpevent(void);

PyMODINIT_FUNC PyInit__tpevent(void)
{
    PyObject *namespaces[TP_DEVICE_TYPE_COUNT];
    if (tppy_names_init() < 0)
        return NULL;
    PyObject *module = create_module(&top_level_def, TPPY_ANY_TYPE);
    if (!module)
        return NULL;
    if (tppy_errors_init(module) < 0 || add_namespaces(module, namespaces) < 0 ||
        tppy_event_types_init(module, namespaces) < 0 || tppy_stream_types_init(module, namespaces) < 0 ||
        tppy_stream_events_init() < 0 || tppy_event_ipc_init() < 0 || tppy_current_stream_init() < 0 ||
        add_backend_info(module) < 0 || tppy_clock_types_init(module) < 0 || tppy_at_exit_init(module) < 0 ||
        tppy_interop_init() < 0 || tppy_aliases_init() < 0 || tppy_graph_types_init(module) < 0 ||
        tppy_hold_types_init(module) < 0 || tppy_timeline_init(module) < 0 || tppy_measure_init(module) < 0 ||
        PyModule_AddStringConstant(module, "__version__", tp_version_string()) < 0 ||
        PyModule_AddIntConstant(module, "IPC_HANDLE_SIZE", TP_IPC_HANDLE_SIZE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
