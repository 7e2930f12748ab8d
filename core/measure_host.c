/*
 * tp_measure's host work (options.host_work, rule 18): each sample's calls run in one
 * host function on the stream, host_work(arg, calls), so that one launch is shared by
 * the batch (a CPU device's work, Python's timeit).
 *
 * The host functions may outlive the call: a stretch whose hold ran out is not waited
 * for, and a stream held elsewhere is given up on. Their state is therefore the
 * heap's, freed by whichever comes last of tp_measure's return and the last host
 * function; and once tp_measure has returned, host_work (whose arg is the caller's) is
 * never called again: a host function that runs later does nothing.
 */
#include "core/measure_run.h"

#include <pthread.h>
#include <stdlib.h>

struct measure_host_state {
    pthread_mutex_t lock;
    pthread_cond_t idle; /* signalled when a host function leaves host_work */
    tp_status (*host_work)(void *arg, int64_t calls);
    void *arg;
    int64_t pending;  /* host functions launched and not yet run */
    bool running;     /* one is in host_work */
    bool orphaned;    /* tp_measure returned */
    tp_status status; /* the first failure */
    measure_host_call zero, one, batch;
};

tp_status measure_host_open(measure_run *run)
{
    measure_host_state *state = calloc(1, sizeof *state);
    if (!state)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    pthread_mutex_init(&state->lock, NULL);
    pthread_cond_init(&state->idle, NULL);
    state->host_work = run->options.host_work;
    state->arg = run->arg;
    state->zero = (measure_host_call){state, 0};
    state->one = (measure_host_call){state, 1};
    state->batch = (measure_host_call){state, 0};
    run->host = state;
    return TP_OK;
}

static void measure_host_state_free(measure_host_state *state)
{
    pthread_cond_destroy(&state->idle);
    pthread_mutex_destroy(&state->lock);
    free(state);
}

/* Under the lock: one host function fewer; true when the state is then to be freed. */
static bool measure_host_done_locked(measure_host_state *state)
{
    state->pending--;
    return state->orphaned && state->pending == 0;
}

static void measure_host_run(void *arg)
{
    measure_host_call *call = arg;
    measure_host_state *state = call->state;
    pthread_mutex_lock(&state->lock);
    bool skip = state->orphaned || state->status != TP_OK; /* a call failed: the rest are not run */
    state->running = !skip;
    pthread_mutex_unlock(&state->lock);
    tp_status status = skip ? TP_OK : state->host_work(state->arg, call->calls);
    pthread_mutex_lock(&state->lock);
    if (!skip) {
        state->running = false;
        pthread_cond_broadcast(&state->idle);
        if (status != TP_OK && state->status == TP_OK)
            state->status = status;
    }
    bool last = measure_host_done_locked(state);
    pthread_mutex_unlock(&state->lock);
    if (last)
        measure_host_state_free(state);
}

tp_status measure_host_launch(measure_run *run, int64_t calls)
{
    measure_host_state *state = run->host;
    measure_host_call *call = calls == 0 ? &state->zero : calls == 1 ? &state->one : &state->batch;
    pthread_mutex_lock(&state->lock);
    if (calls > 1)
        state->batch.calls = calls; /* the batch's: set before the first, never changed after */
    state->pending++;
    pthread_mutex_unlock(&state->lock);
    tp_status status = tp_stream_launch_host_fn(run->stream, measure_host_run, call);
    if (status != TP_OK) {
        pthread_mutex_lock(&state->lock);
        state->pending--;
        pthread_mutex_unlock(&state->lock);
    }
    return status;
}

tp_status measure_host_status(const measure_run *run)
{
    if (!run->host)
        return TP_OK;
    pthread_mutex_lock(&run->host->lock);
    tp_status status = run->host->status;
    pthread_mutex_unlock(&run->host->lock);
    if (status != TP_OK)
        return tp_fail(status, "tp_measure: options->host_work answered %s", tp_status_name(status));
    return TP_OK;
}

void measure_host_close(measure_run *run)
{
    measure_host_state *state = run->host;
    if (!state)
        return;
    run->host = NULL;
    pthread_mutex_lock(&state->lock);
    state->orphaned = true;
    while (state->running)
        pthread_cond_wait(&state->idle, &state->lock);
    bool last = state->pending == 0;
    pthread_mutex_unlock(&state->lock);
    if (last)
        measure_host_state_free(state);
}
