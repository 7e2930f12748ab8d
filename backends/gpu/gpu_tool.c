/*
 * The tool entries (core/backend.h): tpevent's ranges and stream names passed on to
 * the runtime's profiling tools, through the mapping's rt_tool_* (CUDA: NVTX, which
 * Nsight Systems reads; HIP: none). The core calls them only when tool_attached said
 * a tool is there, so a process without one makes no call at all.
 *
 * A range is the tool's push/pop range of the calling thread: in Nsight it shows on
 * that thread, nested as torch.cuda.nvtx.range's are, while tpevent's own trace keeps
 * it on its stream. A stream's name names its native stream for the tool as well.
 */
#define GPU_TOOL_MAPPING /* the runtime mapping's tool part: this file's alone */

#include "backends/gpu/gpu_internal.h" /* first: it sets the feature macros */

#include "backends/gpu/gpu_tool.h"

bool gpu_tool_attached(void)
{
    return rt_tool_attached();
}

void gpu_tool_range_push(tp_stream *stream, const char *name)
{
    (void)stream;
    rt_tool_range_push(name);
}

void gpu_tool_range_pop(tp_stream *stream)
{
    (void)stream;
    rt_tool_range_pop();
}

void gpu_tool_stream_name(tp_stream *stream, const char *name)
{
    rt_tool_name_stream(gpu_as_stream(stream)->native, name);
}
