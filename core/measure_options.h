/*
 * tp_measure's options (core/measure.c's): the defaults, and the caller's checked and
 * copied up to the size its header had. Internal.
 */
#ifndef TPEVENT_CORE_MEASURE_OPTIONS_H
#define TPEVENT_CORE_MEASURE_OPTIONS_H

#include "core/internal.h"

/* *out: the defaults overlaid with `given` (NULL: none), or TP_ERR_INVALID_ARGUMENT
 * naming the field out of its range. */
tp_status measure_options_read(const tp_measure_options *given, tp_measure_options *out);

#endif /* TPEVENT_CORE_MEASURE_OPTIONS_H */
