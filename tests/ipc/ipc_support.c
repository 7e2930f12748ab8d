#define _GNU_SOURCE /* memfd_create, pipe2, RUSAGE_THREAD */

#include "ipc_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PAGE_BYTES 4096

/* ------------------------------------------------------------------ page */

void page_create(page_mapping *mapping)
{
    mapping->fd = memfd_create("tpevent-ipc-test-page", MFD_CLOEXEC);
    CHECK(mapping->fd >= 0);
    CHECK(ftruncate(mapping->fd, PAGE_BYTES) == 0);
    mapping->page = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mapping->fd, 0);
    CHECK(mapping->page != MAP_FAILED);
    atomic_store(&mapping->page->value, 0);
}

void page_destroy(page_mapping *mapping)
{
    CHECK(munmap(mapping->page, PAGE_BYTES) == 0);
    CHECK(close(mapping->fd) == 0);
}

/* ------------------------------------------------------------------ peer */

/* A copy of fd at 10 or above, close-on-exec, and the original closed: so that
 * the child's dup2 onto 3, 4 and 5 never overwrites a descriptor still to copy. */
static int move_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    CHECK(high >= 0);
    CHECK(close(fd) == 0);
    return high;
}

static int duplicate_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    CHECK(high >= 0);
    return high;
}

void peer_start(peer *p, const char *device, int page_fd)
{
    /* A write to a peer that died must fail, not kill the test. */
    signal(SIGPIPE, SIG_IGN);

    char exe[4096];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(length > 0);
    exe[length] = '\0';

    int commands[2], replies[2];
    CHECK(pipe2(commands, O_CLOEXEC) == 0);
    CHECK(pipe2(replies, O_CLOEXEC) == 0);
    int child_commands = move_high(commands[0]);
    int child_replies = move_high(replies[1]);
    int child_page = page_fd >= 0 ? duplicate_high(page_fd) : -1;

    posix_spawn_file_actions_t actions;
    CHECK(posix_spawn_file_actions_init(&actions) == 0);
    CHECK(posix_spawn_file_actions_adddup2(&actions, child_commands, PEER_COMMAND_FD) == 0);
    CHECK(posix_spawn_file_actions_adddup2(&actions, child_replies, PEER_REPLY_FD) == 0);
    if (child_page >= 0)
        CHECK(posix_spawn_file_actions_adddup2(&actions, child_page, PEER_PAGE_FD) == 0);

    char *argv[] = {exe, "--device", (char *)device, "--test", child_page >= 0 ? "role_peer_with_page" : "role_peer",
                    NULL};
    int err = posix_spawn(&p->pid, exe, &actions, NULL, argv, environ);
    if (err != 0)
        check_failed(__FILE__, __LINE__, "posix_spawn(%s): %s", exe, strerror(err));
    posix_spawn_file_actions_destroy(&actions);

    close(child_commands);
    close(child_replies);
    if (child_page >= 0)
        close(child_page);
    p->command_fd = commands[1];
    p->reply_fd = replies[0];
    p->reaped = false;
}

static bool write_message(int fd, const peer_message *message)
{
    /* Below PIPE_BUF: one write, all or nothing. */
    ssize_t written;
    do
        written = write(fd, message, sizeof *message);
    while (written < 0 && errno == EINTR);
    return written == (ssize_t)sizeof *message;
}

/* false at end of file. */
static bool read_message(int fd, peer_message *message)
{
    size_t got = 0;
    while (got < sizeof *message) {
        ssize_t n = read(fd, (char *)message + got, sizeof *message - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

void peer_send(peer *p, enum peer_command command, int64_t arg, const tp_ipc_handle *handle)
{
    peer_message message;
    memset(&message, 0, sizeof message);
    message.command = command;
    message.arg = arg;
    if (handle)
        message.handle = *handle;
    if (!write_message(p->command_fd, &message))
        check_failed(__FILE__, __LINE__, "sending command %d to the peer (pid %d): %s", command, (int)p->pid,
                     strerror(errno));
}

bool peer_reply_within(peer *p, double seconds, peer_message *reply)
{
    struct pollfd ready = {.fd = p->reply_fd, .events = POLLIN};
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
        double left = deadline - monotonic_seconds();
        if (left <= 0)
            return false;
        int n = poll(&ready, 1, (int)(left * 1000) + 1);
        if (n > 0)
            break;
        CHECK(n == 0 || errno == EINTR);
    }
    if (!read_message(p->reply_fd, reply))
        check_failed(__FILE__, __LINE__, "the peer (pid %d) closed its end without answering: it died", (int)p->pid);
    return true;
}

peer_message peer_call(peer *p, enum peer_command command, int64_t arg, const tp_ipc_handle *handle)
{
    peer_message reply;
    peer_send(p, command, arg, handle);
    if (!peer_reply_within(p, PEER_REPLY_SECONDS, &reply))
        check_failed(__FILE__, __LINE__, "the peer (pid %d) did not answer command %d within %.0f s", (int)p->pid,
                     command, PEER_REPLY_SECONDS);
    if (reply.command != (int32_t)command)
        check_failed(__FILE__, __LINE__, "the peer answered command %d to command %d", reply.command, command);
    if (reply.status != TP_OK)
        check_failed(__FILE__, __LINE__, "the peer's command %d failed: %s: %s", command,
                     tp_status_name((tp_status)reply.status), reply.error);
    return reply;
}

int peer_reap(peer *p)
{
    int status = 0;
    pid_t got;
    do
        got = waitpid(p->pid, &status, 0);
    while (got < 0 && errno == EINTR);
    CHECK(got == p->pid);
    p->reaped = true;
    close(p->command_fd);
    close(p->reply_fd);
    return status;
}

void peer_finish(peer *p)
{
    peer_call(p, PEER_EXIT, 0, NULL);
    int status = peer_reap(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        check_failed(__FILE__, __LINE__, "the peer (pid %d) ended with wait status 0x%x", (int)p->pid, status);
}

void peer_kill(peer *p)
{
    CHECK(kill(p->pid, SIGKILL) == 0);
}

/* ------------------------------------------------------- the peer's side */

typedef struct value_write {
    shared_page *page;
    int64_t value;
} value_write;

static void write_value_host_fn(void *arg)
{
    value_write *write = arg;
    atomic_store_explicit(&write->page->value, write->value, memory_order_relaxed);
}

#define PEER_MAX_GATED 64

typedef struct peer_state {
    const char *device;
    shared_page *page;
    tp_stream *stream;
    tp_event *event;
    gate gates[PEER_MAX_GATED];
    value_write writes[PEER_MAX_GATED];
    int gated;
} peer_state;

static tp_status peer_record_gated(peer_state *state, int64_t value)
{
    CHECK(state->gated < PEER_MAX_GATED);
    int i = state->gated++;
    gate_init(&state->gates[i]);
    gate_launch(&state->gates[i], state->stream);
    if (state->page) {
        state->writes[i] = (value_write){state->page, value};
        CHECK_OK(tp_stream_launch_host_fn(state->stream, write_value_host_fn, &state->writes[i]));
    }
    return tp_event_record(state->event, state->stream);
}

static tp_status peer_record_idle(peer_state *state)
{
    tp_stream *idle = new_stream(state->device);
    tp_status status = tp_event_record(state->event, idle);
    CHECK_OK(tp_stream_destroy(idle));
    return status;
}

static void peer_open_gates(peer_state *state)
{
    for (int i = 0; i < state->gated; i++)
        gate_open(&state->gates[i]);
}

static tp_status peer_execute(peer_state *state, const peer_message *command, peer_message *reply)
{
    bool done = false;
    tp_status status = TP_OK;
    switch ((enum peer_command)command->command) {
    case PEER_CREATE:
        return tp_event_create(&state->event, state->device, TP_EVENT_INTERPROCESS | (unsigned)command->arg);
    case PEER_EXPORT:
        return tp_event_ipc_handle(state->event, &reply->handle);
    case PEER_IMPORT:
        return tp_event_from_ipc_handle(&state->event, state->device, &command->handle);
    case PEER_RECORD_GATED:
        return peer_record_gated(state, command->arg);
    case PEER_RECORD_IDLE:
        return peer_record_idle(state);
    case PEER_OPEN_GATES:
        peer_open_gates(state);
        return TP_OK;
    case PEER_QUERY:
        status = tp_event_query(state->event, &done);
        reply->done = done;
        return status;
    case PEER_SYNCHRONIZE:
        return tp_event_synchronize(state->event);
    case PEER_DESTROY:
        status = tp_event_destroy(state->event);
        state->event = NULL;
        return status;
    case PEER_EXIT:
        return TP_OK;
    }
    check_failed(__FILE__, __LINE__, "peer: unknown command %d", command->command);
}

int peer_main(const char *device, bool has_page)
{
    peer_state *state = calloc(1, sizeof *state);
    CHECK(state != NULL);
    state->device = device;
    if (has_page) {
        state->page = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, PEER_PAGE_FD, 0);
        CHECK(state->page != MAP_FAILED);
    }
    state->stream = new_stream(device);

    peer_message command;
    bool exiting = false;
    while (!exiting && read_message(PEER_COMMAND_FD, &command)) {
        peer_message reply;
        memset(&reply, 0, sizeof reply);
        reply.command = command.command;
        reply.pid = (int32_t)getpid();
        tp_status status = peer_execute(state, &command, &reply);
        reply.status = status;
        if (status != TP_OK)
            snprintf(reply.error, sizeof reply.error, "%s", tp_last_error());
        exiting = command.command == PEER_EXIT;
        if (exiting) {
            /* Clean up before answering, so that a parent that reaps at once
             * finds everything released. */
            peer_open_gates(state);
            CHECK_OK(tp_stream_synchronize(state->stream));
        }
        if (!write_message(PEER_REPLY_FD, &reply))
            break; /* the parent is gone */
    }
    /* End of commands without PEER_EXIT: the parent died or gave up. */
    peer_open_gates(state);
    CHECK_OK(tp_stream_synchronize(state->stream));
    CHECK_OK(tp_stream_destroy(state->stream));
    if (state->event)
        CHECK_OK(tp_event_destroy(state->event));
    for (int i = 0; i < state->gated; i++)
        gate_destroy(&state->gates[i]);
    if (state->page)
        munmap(state->page, PAGE_BYTES);
    free(state);
    return exiting ? 0 : 1;
}

/* --------------------------------------------------------------- handles */

uint32_t ipc_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ipc_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t handle_payload_length(const tp_ipc_handle *handle)
{
    return ipc_get_u32(handle->bytes + HANDLE_LENGTH_OFFSET);
}

void handle_set_length(tp_ipc_handle *handle, uint32_t length)
{
    ipc_put_u32(handle->bytes + HANDLE_LENGTH_OFFSET, length);
}

uint32_t ipc_fnv1a(uint32_t hash, const unsigned char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= 16777619u;
    }
    return hash;
}

void handle_reseal(tp_ipc_handle *handle)
{
    uint32_t length = handle_payload_length(handle);
    if (length > HANDLE_PAYLOAD_MAX)
        length = HANDLE_PAYLOAD_MAX; /* the core refuses such a length before it looks at the checksum */
    uint32_t hash = ipc_fnv1a(2166136261u, handle->bytes, 12);
    hash = ipc_fnv1a(hash, handle->bytes + HANDLE_HEADER_SIZE, length);
    ipc_put_u32(handle->bytes + HANDLE_CHECKSUM_OFFSET, hash);
}

void expect_import(const tp_ipc_handle *handle, const char *device, tp_status expected, const char *what)
{
    tp_event *untouched = (tp_event *)&untouched;
    tp_event *event = untouched;
    tp_status status = tp_event_from_ipc_handle(&event, device, handle);
    if (status != expected) {
        fprintf(stderr, "handle bytes:");
        for (size_t i = 0; i < TP_IPC_HANDLE_SIZE; i++)
            fprintf(stderr, "%s%02x", i % 16 ? " " : "\n  ", handle->bytes[i]);
        fprintf(stderr, "\n");
        check_failed(__FILE__, __LINE__, "import of %s on %s returned %s, expected %s", what,
                     device ? device : "(the handle's device)", tp_status_name(status), tp_status_name(expected));
    }
    if (status == TP_OK) {
        CHECK_OK(tp_event_destroy(event));
        return;
    }
    /* Refused: a message that says why, and nothing written. */
    if (tp_last_error()[0] == '\0')
        check_failed(__FILE__, __LINE__, "import of %s refused without a message", what);
    if (event != untouched)
        check_failed(__FILE__, __LINE__, "a refused import of %s wrote its output", what);
}

uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15u;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1du;
}

/* ------------------------------------------------------------- resources */

int open_fd_count(void)
{
    DIR *dir = opendir("/proc/self/fd");
    CHECK(dir != NULL);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (entry->d_name[0] != '.')
            count++;
    closedir(dir);
    return count - 1; /* the directory's own */
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *dev_shm_listing(void)
{
    size_t count = 0, capacity = 16;
    char **names = malloc(capacity * sizeof *names);
    CHECK(names != NULL);
    DIR *dir = opendir("/dev/shm");
    if (dir) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            if (count == capacity) {
                capacity *= 2;
                names = realloc(names, capacity * sizeof *names);
                CHECK(names != NULL);
            }
            names[count] = strdup(entry->d_name);
            CHECK(names[count] != NULL);
            count++;
        }
        closedir(dir);
    }
    qsort(names, count, sizeof *names, compare_strings);
    size_t total = 1;
    for (size_t i = 0; i < count; i++)
        total += strlen(names[i]) + 1;
    char *listing = malloc(total);
    CHECK(listing != NULL);
    listing[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        strcat(listing, names[i]);
        strcat(listing, "\n");
        free(names[i]);
    }
    free(names);
    return listing;
}

static bool listed(const char *listing, const char *name, size_t length)
{
    for (const char *line = listing; *line != '\0';) {
        const char *end = strchr(line, '\n');
        if ((size_t)(end - line) == length && strncmp(line, name, length) == 0)
            return true;
        line = end + 1;
    }
    return false;
}

void check_nothing_new_in_dev_shm_except(const char *before, const char *after, const char *foreign_prefix)
{
    int added = 0;
    size_t prefix_length = foreign_prefix ? strlen(foreign_prefix) : 0;
    for (const char *line = after; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = (size_t)(end - line);
        if (!listed(before, line, length)) {
            if (foreign_prefix && length >= prefix_length && strncmp(line, foreign_prefix, prefix_length) == 0) {
                printf("new in /dev/shm, the driver's own, not counted: %.*s\n", (int)length, line);
            } else {
                fprintf(stderr, "new in /dev/shm: %.*s\n", (int)length, line);
                added++;
            }
        }
        line = end + 1;
    }
    if (added)
        check_failed(__FILE__, __LINE__, "%d object%s left in /dev/shm", added, added == 1 ? "" : "s");
}

void check_nothing_new_in_dev_shm(const char *before, const char *after)
{
    check_nothing_new_in_dev_shm_except(before, after, NULL);
}

double thread_rusage_seconds(void)
{
    struct rusage usage;
    CHECK(getrusage(RUSAGE_THREAD, &usage) == 0);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void *synchronize_main(void *arg)
{
    async_call *call = arg;
    double cpu_before = thread_rusage_seconds();
    call->status = tp_event_synchronize(call->event);
    call->cpu_seconds = thread_rusage_seconds() - cpu_before;
    call->finished = monotonic_seconds();
    snprintf(call->error, sizeof call->error, "%s", call->status == TP_OK ? "" : tp_last_error());
    atomic_store(&call->returned, true);
    return NULL;
}

void async_synchronize(async_call *call, tp_event *event)
{
    call->event = event;
    call->status = TP_OK;
    call->error[0] = '\0';
    atomic_init(&call->returned, false);
    call->started = monotonic_seconds();
    call->finished = 0;
    call->cpu_seconds = 0;
    CHECK(pthread_create(&call->thread, NULL, synchronize_main, call) == 0);
}

bool async_returned_within(async_call *call, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    while (!atomic_load(&call->returned)) {
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
    CHECK(pthread_join(call->thread, NULL) == 0);
    return true;
}

bool interprocess_records_complete_in_order(const char *device)
{
    tp_device parsed;
    CHECK_OK(tp_device_parse(device, &parsed));
    return parsed.type == TP_DEVICE_CUDA || parsed.type == TP_DEVICE_HIP;
}
