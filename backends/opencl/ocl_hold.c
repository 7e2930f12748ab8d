/*
 * The hold (rules 14, 17): a barrier on a user event (clCreateUserEvent,
 * clEnqueueBarrierWithWaitList), released by clSetUserEventStatus. It holds no
 * thread: the runtime keeps the queue's later commands until the event completes.
 * The hold keeps its own reference on the user event, so that the queue may be
 * released (its stream destroyed) before the release comes.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

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

/* ------------------------------------------------------- holds past the window
 *
 * Rule 17's window, where a platform's queue is bounded (OCL_HOLD_WINDOW: NVIDIA's
 * OpenCL, on the CUDA driver's queue): a stream's holds form a chain, as on the GPU
 * backend (backends/gpu/gpu_hold.c). Hold k is a barrier on gate k while fewer than
 * `window` gates are queued and not let go; past that a hold queues nothing and
 * joins the latest gate, which then waits for its own release and every joined
 * one. Gates are let go in order (gate k once holds 1..k were all released), so the
 * latest is always the last to go and never gone while later holds join it. Work
 * submitted between the two waits for the later release too (an order no event
 * asked for, rule 12), the price of never blocking the caller.
 */

typedef struct chain_slot {
    cl_event gate;
    uint32_t releases_left;
} chain_slot;

struct ocl_hold_chain {
    pthread_mutex_t lock;
    uint64_t window;
    uint64_t queued; /* gates queued: hold k's gate is slots[k % window] */
    uint64_t passed; /* gates 1..passed let go */
    unsigned refs;   /* the stream's until closed, and one per release to come */
    chain_slot slots[];
};

typedef struct chain_ticket {
    ocl_hold_chain *chain;
    uint64_t seq;
} chain_ticket;

tp_status tp_ocl_hold_chain_open(int64_t window, ocl_hold_chain **out)
{
    /* The window is bounded where it is read (OCL_HOLD_WINDOW_MAX); checked here
     * too, since a size that wraps would make a small chain that slots overrun. */
    const size_t slot_bytes = sizeof(chain_slot);
    if (window < 1 || (uint64_t)window > (SIZE_MAX - sizeof(ocl_hold_chain)) / slot_bytes)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY,
                                   "tp_stream_hold: a window of %" PRId64 " holds: its chain's size overflows", window);
    ocl_hold_chain *chain = calloc(1, sizeof *chain + (size_t)window * slot_bytes);
    if (!chain)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    pthread_mutex_init(&chain->lock, NULL);
    chain->window = (uint64_t)window;
    chain->refs = 1;
    *out = chain;
    return TP_OK;
}

/* Under the chain's lock; the caller frees the chain once this is true. */
static bool chain_unref_locked(ocl_hold_chain *chain)
{
    return --chain->refs == 0;
}

static void chain_free(ocl_hold_chain *chain)
{
    pthread_mutex_destroy(&chain->lock);
    free(chain);
}

void tp_ocl_hold_chain_close(ocl_hold_chain *chain)
{
    pthread_mutex_lock(&chain->lock);
    bool last = chain_unref_locked(chain);
    pthread_mutex_unlock(&chain->lock);
    if (last)
        chain_free(chain);
}

/* Lets go every gate whose holds were all released, in order. The runtime is
 * called with the lock dropped (a completed gate may run callbacks at once). */
static void chain_ticket_release(void *arg)
{
    chain_ticket *ticket = arg;
    ocl_hold_chain *chain = ticket->chain;
    pthread_mutex_lock(&chain->lock);
    chain->slots[ticket->seq % chain->window].releases_left--;
    while (chain->passed < chain->queued && chain->slots[(chain->passed + 1) % chain->window].releases_left == 0) {
        cl_event gate = chain->slots[++chain->passed % chain->window].gate;
        pthread_mutex_unlock(&chain->lock);
        hold_release(gate);
        pthread_mutex_lock(&chain->lock);
    }
    bool last = chain_unref_locked(chain);
    pthread_mutex_unlock(&chain->lock);
    free(ticket);
    if (last)
        chain_free(chain);
}

tp_status tp_ocl_hold_chained(ocl_hold_chain *chain, cl_context context, cl_command_queue queue, const char *call,
                              void (**release)(void *), void **arg)
{
    chain_ticket *ticket = malloc(sizeof *ticket);
    if (!ticket)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    pthread_mutex_lock(&chain->lock);
    tp_status status = TP_OK;
    if (chain->queued - chain->passed < chain->window) {
        void (*gate_release)(void *) = NULL;
        void *gate = NULL;
        /* Under the lock: gates are queued in the order of their numbers. */
        if ((status = tp_ocl_hold_queue(context, queue, call, &gate_release, &gate)) == TP_OK)
            chain->slots[++chain->queued % chain->window] = (chain_slot){gate, 1};
    } else {
        chain->slots[chain->queued % chain->window].releases_left++; /* joins the latest gate */
    }
    if (status == TP_OK) {
        chain->refs++;
        *ticket = (chain_ticket){chain, chain->queued};
    }
    pthread_mutex_unlock(&chain->lock);
    if (status != TP_OK) {
        free(ticket);
        return status;
    }
    *release = chain_ticket_release;
    *arg = ticket;
    return TP_OK;
}
