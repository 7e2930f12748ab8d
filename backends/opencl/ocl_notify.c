/*
 * Notices: fn(arg) once a record's marker completes, for what must let something
 * go when an OpenCL record is reached without a thread waiting for it: the hold of
 * another backend's stream (rule 14, snapshot_notify) and of a queue of another
 * context (ocl_event.c). Polled, and woken early by the markers' CL_COMPLETE callbacks,
 * not run from the callback: NVIDIA's OpenCL delivered it 20 ms after the command
 * completed every other time (H200: a marker behind a short fill seen CL_COMPLETE
 * by a query 100-400 us after the enqueue, its callback at 0.2 ms or at 19.7-20.1
 * ms), so a CUDA stream waiting on an OpenCL record was let go up to 20 ms late;
 * where the callbacks are prompt (PoCL), they cut the polls' pauses short
 * (ocl_record.c's completion_wake says the same of waits).
 *
 * One notifier thread for the process, not one per device: a poll is one
 * clGetEventInfo per pending notice, whatever the device, and a thread per device
 * would only add threads that sleep. Like the record pool, the notifier is the
 * module's own (the module is never unloaded): started at the first notice that
 * has to wait, it then sleeps on a condition variable whenever no notice is
 * pending, costing no CPU. It blocks every signal (common/thread.h) and is
 * detached: at exit a pending notice is simply never run, as the callback of a
 * command that never completes would never have run.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/free_list.h"
#include "common/spin.h"
#include "common/thread.h"

typedef struct notice {
    struct notice *next; /* first: tp_free_item's layout; then the notifier's lists */
    cl_event marker;     /* retained: the notice outlives every record reference */
    void (*fn)(void *);
    void *arg;
} notice;

static struct {
    pthread_once_t once;
    pthread_mutex_t lock; /* the members below */
    pthread_cond_t added; /* CLOCK_MONOTONIC: the pauses between polls wait on it */
    notice *incoming;     /* given by tp_ocl_record_notify, not yet polled */
    bool completed;       /* a marker's CL_COMPLETE callback came since the last poll */
    bool running;
} notifier = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static tp_free_list notice_pool = TP_FREE_LIST_INIT;

/* fork(): the child has no notifier thread, and the lock may have been held. The
 * parent's pending notices stay the parent's: the child never runs them. */
static void notifier_forget_after_fork(void)
{
    pthread_mutex_init(&notifier.lock, NULL);
    tp_cond_init_monotonic(&notifier.added);
    notifier.incoming = NULL;
    notifier.completed = false;
    notifier.running = false;
}

static void notifier_setup(void)
{
    tp_cond_init_monotonic(&notifier.added);
    (void)pthread_atfork(NULL, NULL, notifier_forget_after_fork);
}

/* Polls every notice of `*watching` once; runs and frees those done. fn runs with
 * no lock held: it may call tpevent and OpenCL (a hold's release does). */
static void notices_poll(notice **watching)
{
    notice **link = watching;
    while (*link) {
        notice *n = *link;
        if (!tp_ocl_marker_done(n->marker)) {
            link = &n->next;
            continue;
        }
        *link = n->next;
        n->fn(n->arg);
        clReleaseEvent(n->marker);
        tp_free_list_give(&notice_pool, n);
    }
}

static void notices_append(notice **watching, notice *incoming)
{
    notice **end = watching;
    while (*end)
        end = &(*end)->next;
    *end = incoming;
}

/* The sleep between polls, cut short by a new notice, which then gets polled at
 * once and spun on (one long wait pending does not make a short one late), or by a
 * marker's callback (where the runtime's callbacks are prompt, as PoCL's, a notice
 * runs as soon as its record is reached; where they are late, as NVIDIA's, the
 * polls bound it). */
static void pause_or_news(uint64_t pause_ns)
{
    pthread_mutex_lock(&notifier.lock);
    if (!notifier.incoming && !notifier.completed)
        tp_cond_wait_for_ns(&notifier.added, &notifier.lock, pause_ns);
    notifier.completed = false;
    pthread_mutex_unlock(&notifier.lock);
}

/* The notifier is the module's for good: a callback that comes late finds it. */
static void CL_CALLBACK marker_completed(cl_event marker, cl_int state, void *unused)
{
    (void)marker;
    (void)state;
    (void)unused;
    pthread_mutex_lock(&notifier.lock);
    notifier.completed = true;
    pthread_cond_signal(&notifier.added);
    pthread_mutex_unlock(&notifier.lock);
}

/*
 * Spin-then-sleep as every polling wait of tpevent (common/spin.h), over all the
 * pending notices at once: a new notice is spun on for TP_SPIN_NS (an idle device
 * reaches a short record in a few us), then polled between pauses that double from
 * TP_PAUSE_FIRST_NS to TP_PAUSE_LONGEST_NS, so that a record is seen at most 1 ms
 * late and a long wait costs well under 1% of a CPU.
 */
static void *notifier_main(void *unused)
{
    (void)unused;
    notice *watching = NULL; /* this thread's alone: polled without the lock */
    uint64_t spin_until_ns = 0;
    uint64_t pause_ns = TP_PAUSE_FIRST_NS;
    for (;;) {
        pthread_mutex_lock(&notifier.lock);
        while (!watching && !notifier.incoming)
            pthread_cond_wait(&notifier.added, &notifier.lock);
        notice *incoming = notifier.incoming;
        notifier.incoming = NULL;
        pthread_mutex_unlock(&notifier.lock);
        if (incoming) {
            notices_append(&watching, incoming);
            spin_until_ns = tp_now_ns() + TP_SPIN_NS;
            pause_ns = TP_PAUSE_FIRST_NS;
        }
        notices_poll(&watching);
        if (!watching)
            continue;
        if (tp_now_ns() < spin_until_ns) {
            tp_cpu_relax();
            continue;
        }
        pause_or_news(pause_ns);
        pause_ns = tp_pause_next(pause_ns);
    }
    return NULL;
}

tp_status tp_ocl_record_notify(ocl_record *record, void (*fn)(void *), void *arg, const char *call)
{
    /* As the callback was: run at once, on the caller's thread, if already done
     * (core/backend.h's snapshot_notify allows it; ocl_event.c's release may run
     * there too). No thread started and nothing retained for a reached record. */
    if (tp_ocl_marker_done(record->marker)) {
        fn(arg);
        return TP_OK;
    }
    notice *n = tp_free_list_take(&notice_pool, sizeof *n);
    if (!n)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    cl_int error = clRetainEvent(record->marker);
    if (error != CL_SUCCESS) {
        tp_free_list_give(&notice_pool, n);
        return tp_ocl_fail(call, "clRetainEvent", error);
    }
    *n = (notice){.marker = record->marker, .fn = fn, .arg = arg};

    pthread_once(&notifier.once, notifier_setup);
    pthread_mutex_lock(&notifier.lock);
    int start_error = 0;
    if (!notifier.running && (start_error = tp_thread_start_detached(notifier_main, NULL)) == 0)
        notifier.running = true;
    if (start_error == 0) {
        n->next = notifier.incoming; /* the order notices are given in means nothing */
        notifier.incoming = n;
        pthread_cond_signal(&notifier.added);
    }
    pthread_mutex_unlock(&notifier.lock);
    if (start_error != 0) {
        clReleaseEvent(n->marker);
        tp_free_list_give(&notice_pool, n);
        return tp_ocl_host()->fail(TP_ERR_BACKEND, "%s: pthread_create failed (%d)", call, start_error);
    }
    /* The caller's record holds the marker through this call, whether or not the
     * notice ran already. A refused callback leaves the polls alone to find it. */
    (void)clSetEventCallback(record->marker, CL_COMPLETE, marker_completed, NULL);
    return TP_OK;
}
