/* Keyword names, interned once (tppy_names). */
#include "tpevent_python.h"

tppy_names tppy_name;

static int intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot ? 0 : -1;
}

int tppy_names_init(void)
{
    if (intern(&tppy_name.device, "device") < 0 || intern(&tppy_name.enable_timing, "enable_timing") < 0 ||
        intern(&tppy_name.blocking, "blocking") < 0 || intern(&tppy_name.interprocess, "interprocess") < 0 ||
        intern(&tppy_name.external, "external") < 0 || intern(&tppy_name.stream, "stream") < 0 ||
        intern(&tppy_name.event, "event") < 0 || intern(&tppy_name.type, "type") < 0 ||
        intern(&tppy_name.status, "status") < 0 || intern(&tppy_name.timeout, "timeout") < 0 ||
        intern(&tppy_name.thread_streams, "tpevent.current_streams") < 0 ||
        intern(&tppy_name.thread_stack, "tpevent.stream_stack") < 0)
        return -1;
    return 0;
}

bool tppy_keyword_is(PyObject *given, PyObject *expected)
{
    /* Keywords written in the source are interned, so the compare is the rare path. */
    return given == expected || PyUnicode_Compare(given, expected) == 0;
}
