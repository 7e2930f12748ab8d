/*
 * The GPU backend's tool entries (core/backend.h), gpu_tool.c's: its table's only
 * user is gpu_backend.c.
 */
#ifndef TPEVENT_BACKENDS_GPU_TOOL_H
#define TPEVENT_BACKENDS_GPU_TOOL_H

#include "core/backend.h"

bool gpu_tool_attached(void);
void gpu_tool_range_push(tp_stream *stream, const char *name);
void gpu_tool_range_pop(tp_stream *stream);
void gpu_tool_stream_name(tp_stream *stream, const char *name);

#endif /* TPEVENT_BACKENDS_GPU_TOOL_H */
