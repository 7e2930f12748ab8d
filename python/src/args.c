/* Arguments: device arguments into device strings, one-argument parsing for the
 * fast-call methods, optional attributes of objects of other libraries. */
#include "tpevent_python.h"

#include <stdio.h>
#include <string.h>

int tppy_one_optional_arg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject *name,
                          const char *function, PyObject **value)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nkw == 1 && !tppy_keyword_is(PyTuple_GET_ITEM(kwnames, 0), name)) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", function,
                     PyTuple_GET_ITEM(kwnames, 0));
        return -1;
    }
    if (nargs == 1 && nkw == 1) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", function, name);
        return -1;
    }
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (%zd given)", function, nargs + nkw);
        return -1;
    }
    *value = nargs + nkw == 1 ? args[0] : Py_None;
    return 0;
}

PyObject *tppy_device_name(tp_device device)
{
    char text[TP_DEVICE_STRING_MAX];
    tp_status status = tp_device_format(device, text, sizeof text);
    if (status != TP_OK)
        return tppy_raise(status);
    return PyUnicode_FromString(text);
}

/* In a namespace, the device must be of its type: tpevent.cuda.Event('cpu') is a
 * mistake worth saying so. */
static int check_namespace(const char *device, int namespace_type)
{
    if (namespace_type == TPPY_ANY_TYPE)
        return 0;
    tp_device parsed;
    tp_status status = tp_device_parse(device, &parsed);
    if (status != TP_OK)
        return tppy_raise_int(status);
    if ((int)parsed.type != namespace_type) {
        PyErr_Format(PyExc_ValueError, "tpevent.%s expects a %s device, not \"%s\"",
                     tp_device_type_name((tp_device_type)namespace_type),
                     tp_device_type_name((tp_device_type)namespace_type), device);
        return -1;
    }
    return 0;
}

const char *tppy_c_string(PyObject *str, const char *what)
{
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(str, &length);
    if (!text)
        return NULL;
    if ((size_t)length != strlen(text)) {
        PyErr_Format(PyExc_ValueError, "%s contains a null character: %R", what, str);
        return NULL;
    }
    return text;
}

static int device_from_str(PyObject *arg, int namespace_type, const char **out)
{
    const char *text = tppy_c_string(arg, "device string");
    if (!text)
        return -1;
    if (check_namespace(text, namespace_type) < 0)
        return -1;
    *out = text;
    return 0;
}

/* An index alone is of the namespace's type, else of the current device's type; a
 * negative one is the current device of that type, as torch's -1. */
static int device_from_index(PyObject *arg, int namespace_type, tppy_device_text *scratch, const char **out)
{
    long index = PyLong_AsLong(arg);
    if (index == -1 && PyErr_Occurred())
        return -1;
    if (index >= TP_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "device index %ld out of range (0 to %d, or negative for the current device)",
                     index, TP_MAX_DEVICES - 1);
        return -1;
    }
    if (index < 0 && namespace_type != TPPY_ANY_TYPE) {
        *out = tp_device_type_name((tp_device_type)namespace_type);
        return 0;
    }
    if (index < 0) {
        *out = NULL; /* the current device */
        return 0;
    }
    tp_device device = {.type = (tp_device_type)namespace_type, .index = (int)index};
    if (namespace_type == TPPY_ANY_TYPE) {
        tp_device current;
        tp_status status = tp_current_device(&current);
        if (status != TP_OK)
            return tppy_raise_int(status);
        device.type = current.type;
    }
    tp_status status = tp_device_format(device, scratch->text, sizeof scratch->text);
    if (status != TP_OK)
        return tppy_raise_int(status);
    *out = scratch->text;
    return 0;
}

/* torch.device and the like: `type` a str, `index` an int or None. */
static int device_from_object(PyObject *arg, int namespace_type, tppy_device_text *scratch, const char **out)
{
    PyObject *type = NULL, *index = NULL;
    int result = -1;
    type = PyObject_GetAttrString(arg, "type");
    if (!type || !PyUnicode_Check(type)) {
        if (!type && !PyErr_ExceptionMatches(PyExc_AttributeError))
            goto done;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "device must be a str such as 'cuda:1', an int or None, not %.100s",
                     Py_TYPE(arg)->tp_name);
        goto done;
    }
    index = PyObject_GetAttrString(arg, "index");
    if (!index)
        goto done;
    const char *type_text = tppy_c_string(type, "device type");
    if (!type_text)
        goto done;
    int written;
    if (index == Py_None) {
        written = snprintf(scratch->text, sizeof scratch->text, "%s", type_text);
    } else {
        long value = PyLong_AsLong(index);
        if (value == -1 && PyErr_Occurred())
            goto done;
        written = snprintf(scratch->text, sizeof scratch->text, "%s:%ld", type_text, value);
    }
    if (written < 0 || (size_t)written >= sizeof scratch->text) {
        PyErr_Format(PyExc_ValueError, "device type '%.100s' is not a tpevent device type", type_text);
        goto done;
    }
    if (check_namespace(scratch->text, namespace_type) < 0)
        goto done;
    *out = scratch->text;
    result = 0;
done:
    Py_XDECREF(type);
    Py_XDECREF(index);
    return result;
}

int tppy_device_arg(PyObject *arg, int namespace_type, tppy_device_text *scratch, const char **out)
{
    if (arg == Py_None) {
        *out = namespace_type == TPPY_ANY_TYPE ? NULL : tp_device_type_name((tp_device_type)namespace_type);
        return 0;
    }
    if (PyUnicode_Check(arg))
        return device_from_str(arg, namespace_type, out);
    if (PyBool_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "device must be a str such as 'cuda:1', an int or None, not bool");
        return -1;
    }
    if (PyLong_Check(arg))
        return device_from_index(arg, namespace_type, scratch, out);
    return device_from_object(arg, namespace_type, scratch, out);
}

PyObject *tppy_optional_attr(PyObject *object, const char *name, bool *error)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    *error = false;
    if (!value) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        else
            *error = true;
    }
    return value;
}
