/* The interpreter's exit, as the binding sees it (tppy_exiting): host functions
 * still to run are dropped, CUDA/HIP streams are kept. */
#include "tpevent_python.h"

#include <stdatomic.h>

static atomic_bool exiting;

bool tppy_exiting(void)
{
    if (atomic_load_explicit(&exiting, memory_order_acquire))
        return true;
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

static PyObject *module_at_exit(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    atomic_store_explicit(&exiting, true, memory_order_release);
    Py_RETURN_NONE;
}

static PyMethodDef module_functions[] = {
    {"_at_exit", module_at_exit, METH_NOARGS, "Called by an atexit hook: the interpreter is exiting."},
    {NULL, NULL, 0, NULL},
};

int tppy_at_exit_init(PyObject *module)
{
    return PyModule_AddFunctions(module, module_functions);
}
