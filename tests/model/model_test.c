/*
 * Model-based test: random sequences of operations, run on a real backend and on
 * the reference model (model.h), whose predictions are checked at checkpoints.
 *
 *   tpevent_model --device D [--peer P] [--seed S] [--sequences N] [--ops N] [--verbose]
 *
 * Sequence k runs with seed S+k, so `--seed S+k --sequences 1` replays it alone; a
 * failure prints that command line and the operations of the sequence so far.
 * Exit 77 (skip) with the backend's reason when D cannot be used; without a usable
 * peer the cross-device operations are left out.
 *
 * What is checked against the model:
 *   - which host functions (and gates) have run: none the model says cannot have
 *     (blocked behind a closed gate), and, once things settle, all the others;
 *   - in what order: each ran after every host function the model says must come
 *     first (its own stream's earlier ones, rule 12, and those on other streams it
 *     waits for through events and stream waits, rule 6, at the record that was
 *     latest when the wait was made);
 *   - which events are done (query, rules 3 and 4), which streams are idle;
 *   - synchronize of an event, a stream or a device returns only once everything
 *     the model says it depends on has run (rule 5);
 *   - what every call returns: record on another device's stream (rule 1), elapsed
 *     time's and timestamps' errors in rule 7's order, INTERPROCESS|TIMING refused
 *     (rule 8), destroying with work pending (rule 9), the current stream (rule 11);
 *   - elapsed time's sign where the model knows the order of two records, on one
 *     device's clock and, across devices and backends, on the host clock, where it
 *     is the difference of the two timestamps (rules 7 and 13).
 *
 * Host functions of one CUDA or HIP device may all run on one runtime thread, so a
 * closed gate there may hold back host functions of other streams. On those
 * backends, while a gate is closed with an item queued, the test checks only what
 * must NOT have happened (and calls nothing that blocks); what must have happened is
 * checked once the gates are open. The CPU backend runs each stream on its own
 * thread, so there both are checked at every checkpoint.
 */
#define _POSIX_C_SOURCE 200809L

#include "model_runner.h"

static void start_sequence(runner *r)
{
    model *m = r->m;
    model_init(m, MODEL_GATES);
    r->trace_count = 0;
    pthread_mutex_lock(&r->log_lock);
    r->log_count = 0;
    pthread_mutex_unlock(&r->log_lock);
    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_mutex_lock(&r->gates[g].lock);
        r->gates[g].open = false;
        pthread_mutex_unlock(&r->gates[g].lock);
    }
    for (int d = 0; d < device_count(r); d++) {
        int s = model_add_stream(m, d, true);
        EXPECT_OK(r, tp_stream_default(device_name_of(r, d), &r->streams[s]));
        EXPECT_OK(r, tp_stream_set_current(r->streams[s]));
        trace(r, "s%d = stream_default(%s)", s, device_name_of(r, d));
    }
    create_stream(r, 0);
    create_stream(r, 0);
    create_stream(r, device_count(r) - 1);
    create_event(r, 0, TP_EVENT_TIMING);
    create_event(r, 0, TP_EVENT_DEFAULT);
    create_event(r, device_count(r) - 1, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
}

/* Opens every gate: then everything must run; drains and frees the sequence. */
static void finish_sequence(runner *r)
{
    model *m = r->m;
    trace(r, "open every gate");
    for (int g = 0; g < MODEL_GATES; g++) {
        model_open_gate(m, g);
        gate_open(&r->gates[g]);
    }
    model_settle(m);
    for (int s = 0; s < m->stream_count; s++)
        if (!model_stream_idle(m, s))
            fail(r, "the model itself is stuck: s%d has %d of %d items done with every gate open", s,
                 m->streams[s].completed, m->streams[s].length);
    checkpoint(r);
    for (int s = 0; s < m->stream_count; s++)
        if (m->streams[s].alive)
            EXPECT_OK(r, tp_stream_synchronize(r->streams[s]));
    /* Streams destroyed with work pending: done too, and their host functions have
     * returned, so that the gates and the log may be reused. */
    for (int d = 0; d < device_count(r); d++) {
        EXPECT_OK(r, tp_device_synchronize(device_name_of(r, d)));
        EXPECT_OK(r, tp_stream_set_current(r->streams[default_stream_of(r, d)]));
    }
    for (int s = 0; s < m->stream_count; s++) {
        if (m->streams[s].alive && !m->streams[s].is_default)
            EXPECT_OK(r, tp_stream_destroy(r->streams[s]));
        r->streams[s] = NULL;
    }
    for (int e = 0; e < m->event_count; e++) {
        if (m->events[e].alive)
            EXPECT_OK(r, tp_event_destroy(r->events[e]));
        r->events[e] = NULL;
    }
}

static void run_sequence(runner *r, int ops)
{
    watch(r, SEQUENCE_WATCHDOG_SECONDS, "the sequence");
    r->rng = r->seed;
    if (r->verbose)
        printf("sequence %d, seed %" PRIu64 ":\n", r->sequence, r->seed);
    start_sequence(r);
    for (int i = 0; i < ops; i++)
        perform(r, pick_op(r));
    finish_sequence(r);
    alarm(0);
}

/* ------------------------------------------------------------------ main */

/* 0 if the device can be used; else prints why and returns TEST_SKIP. */
static int usable(const char *device, const char *role, bool quiet)
{
    tp_device parsed;
    const char *reason = NULL;
    int count = 0;
    if (tp_device_parse(device, &parsed) != TP_OK || parsed.index == TP_DEVICE_INDEX_CURRENT) {
        fprintf(stderr, "bad %s device \"%s\": give a type and an index (\"cpu:0\")\n", role, device);
        exit(2);
    }
    const char *type = tp_device_type_name(parsed.type);
    if (tp_backend_status(type, &reason) != TP_OK) {
        if (!quiet)
            printf("skipped: %s\n", reason ? reason : "(no reason given)");
        return TEST_SKIP;
    }
    if (tp_device_count(type, &count) != TP_OK || parsed.index >= count) {
        if (!quiet)
            printf("skipped: %s device %s does not exist (%d %s device%s)\n", role, device, count, type,
                   count == 1 ? "" : "s");
        return TEST_SKIP;
    }
    return 0;
}

static long parse_number(const char *text, const char *what, long max)
{
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > max) {
        fprintf(stderr, "%s: expected a whole number from 0 to %ld, got \"%s\"\n", what, max, text);
        exit(2);
    }
    return (long)value;
}

int main(int argc, char **argv)
{
    static runner r;
    static model m;
    const char *device = NULL, *peer = NULL;
    long sequences = 20, ops = 150;
    bool seeded = false;

    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--verbose") == 0) {
            r.verbose = true;
            continue;
        }
        if (!value) {
            fprintf(stderr, "usage: %s --device D [--peer P] [--seed S] [--sequences N] [--ops N] [--verbose]\n",
                    argv[0]);
            return 2;
        }
        if (strcmp(argv[i], "--device") == 0)
            device = value;
        else if (strcmp(argv[i], "--peer") == 0)
            peer = value;
        else if (strcmp(argv[i], "--seed") == 0) {
            char *end;
            errno = 0;
            r.base_seed = strtoull(value, &end, 0);
            if (errno != 0 || end == value || *end != '\0') {
                fprintf(stderr, "--seed: expected a whole number, got \"%s\"\n", value);
                return 2;
            }
            seeded = true;
        } else if (strcmp(argv[i], "--sequences") == 0)
            sequences = parse_number(value, "--sequences", 1000000);
        else if (strcmp(argv[i], "--ops") == 0)
            ops = parse_number(value, "--ops", MAX_OPS);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
        i++;
    }
    if (!device) {
        fprintf(stderr, "--device is required\n");
        return 2;
    }
    if (!seeded) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        r.base_seed = (uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec ^ (uint64_t)getpid() << 20;
    }
    if (usable(device, "test", false) != 0)
        return TEST_SKIP;
    r.devices[0] = device;
    tp_device parsed, parsed_peer;
    tp_device_parse(device, &parsed);
    r.types[0] = parsed.type;
    /* The peer may be of another backend: everything of two devices then spans two
     * backends (elapsed time on the host clock, rules 7 and 13; waits, which answer
     * TP_ERR_UNSUPPORTED only for interprocess events, op_wait). */
    if (peer && strcmp(peer, device) != 0 && usable(peer, "peer", true) == 0 &&
        tp_device_parse(peer, &parsed_peer) == TP_OK) {
        r.devices[1] = peer;
        r.types[1] = parsed_peer.type;
    }
    for (int d = 0; d < 2; d++) {
        tp_clock_info clock = {0, 0};
        if (r.devices[d] && tp_device_clock(r.devices[d], &clock) != TP_OK) {
            fprintf(stderr, "FAILED: tp_device_clock(\"%s\"): %s\n", r.devices[d], tp_last_error());
            return 1;
        }
        r.error_ns[d] = clock.error_ns;
        tp_event *probe = NULL;
        r.no_ipc[d] = r.devices[d] &&
                      tp_event_create(&probe, r.devices[d], TP_EVENT_INTERPROCESS) == TP_ERR_UNSUPPORTED;
        if (probe)
            tp_event_destroy(probe);
    }
    r.independent_host_threads = parsed.type == TP_DEVICE_CPU && (!r.devices[1] || r.types[1] == TP_DEVICE_CPU);
    r.m = &m;
    pthread_mutex_init(&r.log_lock, NULL);
    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_mutex_init(&r.gates[g].lock, NULL);
        pthread_cond_init(&r.gates[g].changed, NULL);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_watchdog;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, NULL);

    printf("model: --device %s --peer %s --seed %" PRIu64 " --sequences %ld --ops %ld%s\n", device,
           r.devices[1] ? r.devices[1] : "(none usable)", r.base_seed, sequences, ops,
           r.independent_host_threads ? "" : " (host functions may share a thread: positive checks once gates open)");
    fflush(stdout);

    long items = 0, checks = 0;
    for (long k = 0; k < sequences; k++) {
        r.sequence = (int)k;
        r.seed = r.base_seed + (uint64_t)k;
        run_sequence(&r, (int)ops);
        items += m.item_count;
        for (int i = 0; i < r.trace_count; i++)
            checks += strncmp(r.trace[i], "-- checkpoint", 13) == 0;
    }
    printf("model: %ld sequences of %ld operations passed: %ld stream items, %ld checkpoints\n", sequences, ops, items,
           checks);

    for (int g = 0; g < MODEL_GATES; g++) {
        pthread_cond_destroy(&r.gates[g].changed);
        pthread_mutex_destroy(&r.gates[g].lock);
    }
    pthread_mutex_destroy(&r.log_lock);
    return 0;
}
