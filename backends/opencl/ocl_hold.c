/*
 * The hold (rules 14, 17): a barrier on a user event (clCreateUserEvent,
 * clEnqueueBarrierWithWaitList), released by clSetUserEventStatus. It holds no
 * thread: the runtime keeps the queue's later commands until the event completes.
 * The hold keeps its own reference on the user event, so that the queue may be
 * released (its stream destroyed) before the release comes.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

static void hold_release(void *arg)
{
    cl_event gate = arg;
    clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);
}

tp_status tp_ocl_hold_queue(cl_context context, cl_command_queue queue, const char *call, void (**release)(void *),
                            void **arg)
{
    cl_int error = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(context, &error);
    if (error != CL_SUCCESS)
        return tp_ocl_fail(call, "clCreateUserEvent", error);
    error = clEnqueueBarrierWithWaitList(queue, 1, &gate, NULL);
    if (error == CL_SUCCESS)
        error = clFlush(queue);
    if (error != CL_SUCCESS) {
        clSetUserEventStatus(gate, CL_COMPLETE);
        clReleaseEvent(gate);
        return tp_ocl_fail(call, "clEnqueueBarrierWithWaitList", error);
    }
    *release = hold_release;
    *arg = gate;
    return TP_OK;
}
