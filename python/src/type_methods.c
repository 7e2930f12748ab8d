/* Methods and attributes added to a ready type by the files above the one that
 * defines it (tpevent_python.h, tppy_type_add_methods). */
#include "tpevent_python.h"

int tppy_type_add_methods(PyTypeObject *type, PyMethodDef *methods, PyGetSetDef *getset)
{
    for (PyMethodDef *m = methods; m->ml_name; m++) {
        PyObject *descr = (m->ml_flags & METH_CLASS) ? PyDescr_NewClassMethod(type, m) : PyDescr_NewMethod(type, m);
        if (!descr || PyDict_SetItemString(type->tp_dict, m->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    for (PyGetSetDef *g = getset; g && g->name; g++) {
        PyObject *descr = PyDescr_NewGetSet(type, g);
        if (!descr || PyDict_SetItemString(type->tp_dict, g->name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(type);
    return 0;
}
