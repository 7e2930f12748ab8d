/*
 * Portable pending work for the conformance suite. A "gate" is a host function that
 * blocks until the test opens it, so a test can hold a stream busy for as long as it
 * likes on any backend, look at what is and is not done, then let it go.
 *
 * Written so that no test but rule 15's needs a host function of one stream to run
 * while a gate of another stream is closed: the runtimes' own host functions
 * (cudaLaunchHostFunc, which tpevent falls back on where a device cannot hold a
 * stream on host memory) run on one thread for all streams. Rule 15's tests
 * (rule15_host_functions.c) are the ones that check host functions do not hold each other back.
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_SUPPORT_H
#define TPEVENT_TESTS_CONFORMANCE_SUPPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

/* How long "eventually" may take before a test calls it a hang. */
#define EVENTUALLY_SECONDS 10.0

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool is_open;
    int entered; /* host functions that reached the gate */
    int passed;  /* host functions that went through it */
} gate;

void gate_init(gate *g);
void gate_destroy(gate *g);
void gate_open(gate *g);
int gate_passed(gate *g);
/* The host function: blocks until the gate opens. arg is the gate. */
void gate_host_fn(void *arg);
/* True once `count` host functions have reached the gate, false after `seconds`. */
bool gate_entered_within(gate *g, int count, double seconds);
/* Launches gate_host_fn on the stream. */
void gate_launch(gate *g, tp_stream *stream);

/* Opens a gate from another thread after a delay, as another part of a program would. */
typedef struct gate_opener {
    gate *gate;
    int delay_ms;
    atomic_bool opened;
    pthread_t thread;
} gate_opener;

void gate_open_later(gate_opener *opener, gate *g, int delay_ms);
void gate_opener_join(gate_opener *opener);

/* Host function: sets an atomic_int to 1. */
void flag_host_fn(void *flag);
/* Host function: adds 1 to an atomic_int. */
void counter_host_fn(void *counter);
/* Host function: busy-waits *(const int64_t *)ns nanoseconds, work of known length. */
void busy_host_fn(void *ns);
/* Host function: sleeps for (intptr_t)arg milliseconds. */
void sleep_host_fn(void *ms);

/* Options for rule 18's short measurements: a test lasts well under a second. No
 * noise criterion: on a loaded machine a host function now and then runs 20 times
 * its length (its thread descheduled), and the relative deviation of busy-waits is
 * then far above 50 %; rule18_measure_stops_at_max_time_unconverged tests the
 * criterion. */
tp_measure_options quick_measure_options(void);

/* A log that host functions append to, to see the order they ran in. */
#define ORDER_LOG_MAX 256

typedef struct order_log {
    pthread_mutex_t lock;
    int values[ORDER_LOG_MAX];
    int count;
} order_log;

typedef struct order_item {
    order_log *log;
    int value;
} order_item;

void order_log_init(order_log *log);
void order_log_destroy(order_log *log);
/* Host function: appends item->value to item->log. */
void order_log_host_fn(void *item);

/* Polls the event until its query says done; false if it did not within `seconds`. */
bool event_done_within(tp_event *event, double seconds);
/* True if the event's query said "not done" every time for `ms` milliseconds. */
bool event_pending_for(tp_event *event, int ms);
bool event_is_done(tp_event *event);

/* tp_event_elapsed_time(start, end) fails with `expected` and leaves its output
 * alone (outputs are written only on success). */
void expect_elapsed_refused(tp_event *start, tp_event *end, tp_status expected);
bool stream_is_idle(tp_stream *stream);
/* Whether the stream is idle within `seconds`: false for a stream held for good. */
bool stream_idle_within(tp_stream *stream, double seconds);
/* Polls an atomic_int until it is at least `value`. */
bool flag_reaches_within(atomic_int *flag, int value, double seconds);

/* Runs fn(arg) on a new thread; true if it returned within `seconds`. If it did
 * not, the thread is left behind (the test is about to fail anyway). */
bool call_returns_within(void (*fn)(void *), void *arg, double seconds);

void sleep_ms(int ms);
double monotonic_seconds(void);
/* CLOCK_MONOTONIC in ns: the clock tp_event_timestamp answers on (rule 13). */
int64_t monotonic_ns(void);
/* tp_device_clock(device)'s error_ns; fails the test if the call does. */
int64_t device_error_ns(const char *device);
/* Records the event on the stream and synchronizes it, bracketed by host times:
 * on an idle stream its timestamp lies in [before - e, after + e] (rule 13). */
void record_reached(tp_event *event, tp_stream *stream, int64_t *before_ns, int64_t *after_ns);
/* tp_event_timestamp's answer; fails the test if the call does. */
int64_t timestamp_of(tp_event *event);
/* CPU time used so far by the calling thread, in seconds. */
double thread_cpu_seconds(void);

/* A device of another backend than the device under test, for the rules that span
 * two backends: the peer where it is of another backend (--device cuda:0 --peer
 * opencl:0: GPU and OpenCL); else the CPU for a GPU or OpenCL device, and for a CPU
 * device the first GPU backend usable here. NULL after printing why none is (the
 * test then skips). */
const char *other_backend(const test_env *env);

/* Whether the peer (--peer) is a device of the device's own backend; else prints
 * "skipped: <why>" naming `what` needs it (an interprocess event is not waited on
 * across backends, rule 14: vulkan:0's peer is the CPU). */
bool peer_of_the_same_backend(const test_env *env, const char *what);

/* Whether `device` has interprocess events (rule 8): OpenCL has none, and refuses
 * TP_EVENT_INTERPROCESS with TP_ERR_UNSUPPORTED and the reason, which `say_why`
 * prints as "skipped: <reason>". */
bool ipc_supported(const char *device, bool say_why);

/* Skips the test, saying why, on a device without interprocess events. */
#define REQUIRE_IPC(device)             \
    if (!ipc_supported((device), true)) \
    return TEST_SKIP

#define REQUIRE_OTHER_BACKEND(env, name)   \
    const char *name = other_backend(env); \
    if (!name)                             \
    return TEST_SKIP

/* Runs `test` of this program in a child with `mark_env`=1 set; fails unless it
 * prints "ready" and exits with `exit_status` within `seconds` (exit_child.c). */
void expect_child_exits(const char *device, const char *test, const char *mark_env, int exit_status, double seconds);
/* The same with --peer `peer` (NULL: none) for the child, which then pairs with the
 * same other backend as this process. */
void expect_child_exits_with_peer(const char *device, const char *peer, const char *test, const char *mark_env,
                                  int exit_status, double seconds);

/* Stops the trace into a new file and gives back its text (the caller frees it; the
 * file is removed): what the tests of the timeline read. */
char *trace_stop_text(void);
/* How many times `needle` occurs in `text`. */
int text_occurrences(const char *text, const char *needle);

/* Event and stream creation that fails the test on error. */
tp_event *new_event(const char *device, unsigned flags);
tp_stream *new_stream(const char *device);

#endif /* TPEVENT_TESTS_CONFORMANCE_SUPPORT_H */
