/*
 * Host functions (rule 15) on a worker thread of the stream's own, started at its
 * first host function: a launch enqueues a marker (where fn may start) and a hold
 * (ocl_hold.c: where later work waits for fn); the worker waits for the marker,
 * runs fn and releases the hold. Workers of two streams never wait for each other,
 * and fn may call tpevent and OpenCL (it does not run on the runtime's callback
 * thread, which OpenCL forbids blocking calls on). The worker blocks every signal,
 * is detached (a host function blocked for good never holds up exit), and frees
 * itself once its stream is destroyed and its functions have run.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/free_list.h"
#include "common/thread.h"

#include <stdlib.h>

typedef struct host_task {
    struct host_task *next; /* first: tp_free_item's layout; then the FIFO's link */
    cl_event start;
    void (*release)(void *);
    void *release_arg;
    void (*fn)(void *);
    void *arg;
} host_task;

struct ocl_host_worker {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    host_task *first, *last;
    bool closing;
    const void *stream; /* identity only, for rule 15's self-wait */
};

static tp_free_list task_pool = TP_FREE_LIST_INIT;

/*
 * The stream whose host function this thread is running, set by its worker: a
 * pthread key rather than _Thread_local, whose dynamic TLS block in a dlopened
 * module LeakSanitizer's thread walk at exit crashes on ("Tracer caught signal 11").
 */
static pthread_key_t running_stream_key;
static pthread_once_t running_stream_once = PTHREAD_ONCE_INIT;

static void running_stream_key_create(void)
{
    (void)pthread_key_create(&running_stream_key, NULL);
}

const void *tp_ocl_host_fn_running_stream(void)
{
    pthread_once(&running_stream_once, running_stream_key_create);
    return pthread_getspecific(running_stream_key);
}

static void worker_free(ocl_host_worker *worker)
{
    pthread_cond_destroy(&worker->wake);
    pthread_mutex_destroy(&worker->lock);
    free(worker);
}

/* The next task, or NULL once the stream is gone and nothing is left. */
static host_task *next_task(ocl_host_worker *worker)
{
    pthread_mutex_lock(&worker->lock);
    while (!worker->first && !worker->closing)
        pthread_cond_wait(&worker->wake, &worker->lock);
    host_task *task = worker->first;
    if (task && !(worker->first = task->next))
        worker->last = NULL;
    pthread_mutex_unlock(&worker->lock);
    return task;
}

static void *worker_main(void *arg)
{
    ocl_host_worker *worker = arg;
    pthread_once(&running_stream_once, running_stream_key_create);
    (void)pthread_setspecific(running_stream_key, worker->stream);
    host_task *task;
    while ((task = next_task(worker))) {
        /* A failed earlier command ends the wait too: fn runs anyway, as the queue's
         * later work would, and the failure shows in that work's own events. Asleep
         * at once, no spin: on a loaded machine the spin took the CPU from the
         * runtime's thread that completes the marker (PoCL under ASan: host
         * functions up to 8x their length). Bounded by polls, not the callback
         * alone: fn's start is in the stream's time (ocl_record.c). */
        tp_ocl_marker_sleep(task->start);
        clReleaseEvent(task->start);
        task->fn(task->arg);
        task->release(task->release_arg);
        tp_free_list_give(&task_pool, task);
    }
    worker_free(worker);
    return NULL;
}

static tp_status worker_start(const void *stream, ocl_host_worker **out)
{
    ocl_host_worker *worker = calloc(1, sizeof *worker);
    if (!worker)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    pthread_mutex_init(&worker->lock, NULL);
    pthread_cond_init(&worker->wake, NULL);
    worker->stream = stream;
    int error = tp_thread_start_detached(worker_main, worker);
    if (error != 0) {
        worker_free(worker);
        return tp_ocl_host()->fail(TP_ERR_BACKEND, "tp_stream_launch_host_fn: pthread_create failed (%d)", error);
    }
    *out = worker;
    return TP_OK;
}

tp_status tp_ocl_host_fn_launch(cl_context context, cl_command_queue queue, const void *stream,
                                ocl_host_worker **worker, void (*fn)(void *), void *arg)
{
    static const char call[] = "tp_stream_launch_host_fn";
    if (!*worker) {
        tp_status status = worker_start(stream, worker);
        if (status != TP_OK)
            return status;
    }
    host_task *task = tp_free_list_take(&task_pool, sizeof *task);
    if (!task)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    *task = (host_task){.fn = fn, .arg = arg};
    cl_int error = clEnqueueMarkerWithWaitList(queue, 0, NULL, &task->start);
    if (error != CL_SUCCESS) {
        tp_free_list_give(&task_pool, task);
        return tp_ocl_fail(call, "clEnqueueMarkerWithWaitList", error);
    }
    tp_status status = tp_ocl_hold_queue(context, queue, call, &task->release, &task->release_arg);
    if (status != TP_OK) {
        clReleaseEvent(task->start);
        tp_free_list_give(&task_pool, task);
        return status;
    }
    ocl_host_worker *w = *worker;
    pthread_mutex_lock(&w->lock);
    if (w->last)
        w->last->next = task;
    else
        w->first = task;
    w->last = task;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return TP_OK;
}

void tp_ocl_host_worker_close(ocl_host_worker *worker)
{
    pthread_mutex_lock(&worker->lock);
    worker->closing = true;
    pthread_cond_signal(&worker->wake);
    pthread_mutex_unlock(&worker->lock);
}
