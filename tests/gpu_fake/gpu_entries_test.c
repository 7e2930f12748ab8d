/*
 * The GPU backend's tables against their list (backends/gpu/gpu_entries.h), on the
 * fake GPU: each table's slots set or NULL as the list says, no pointer set that
 * the list does not name, and in a child created by fork() exactly the slots that
 * can reach the runtime (GUARDED, CAPTURED) replaced, the others kept. The tables
 * are reached through events of each kind: plain, interprocess, wrapped.
 */
#include "core/backend.h"
#include "backends/gpu/gpu_entries.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum { GUARDED, CAPTURED, LOCAL, NONE, VALUE } slot_kind;

typedef struct {
    const char *name;
    size_t offset;
    slot_kind kind;
} slot;

#define SLOT(name, kind) {#name, offsetof(tp_backend, name), kind},
static const slot shared_slots[] = {GPU_SHARED_SLOTS_LIST(SLOT)};
static const slot plain_slots[] = {GPU_PLAIN_EVENT_SLOTS_LIST(SLOT)};
static const slot ipc_slots[] = {GPU_IPC_EVENT_SLOTS_LIST(SLOT)};
static const slot wrapped_slots[] = {GPU_WRAPPED_EVENT_SLOTS_LIST(SLOT)};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int failures;

static void fail(const char *table, const char *what, const char *name)
{
    printf("FAIL: %s: %s: %s\n", table, name, what);
    failures++;
}

static const void *word_at(const tp_backend *table, size_t offset)
{
    const void *word;
    memcpy(&word, (const char *)table + offset, sizeof word);
    return word;
}

static const slot *named_at(const slot *event_slots, size_t offset)
{
    for (size_t i = 0; i < COUNT(shared_slots); i++)
        if (shared_slots[i].offset == offset)
            return &shared_slots[i];
    for (size_t i = 0; i < COUNT(plain_slots); i++)
        if (event_slots[i].offset == offset)
            return &event_slots[i];
    return NULL;
}

/* The live table: function slots set, NONE ones NULL, nothing else set. */
static void check_live(const char *name, const tp_backend *table, const slot *event_slots)
{
    for (size_t offset = 0; offset + sizeof(void *) <= sizeof *table; offset += sizeof(void *)) {
        const slot *s = named_at(event_slots, offset);
        const void *word = word_at(table, offset);
        if (!s) {
            bool named = false;
            for (size_t i = 0; i < COUNT(shared_slots); i++)
                named |= shared_slots[i].offset > offset && shared_slots[i].offset < offset + sizeof(void *);
            if (word && !named)
                fail(name, "a slot set that gpu_entries.h does not name", "(unnamed)");
            continue;
        }
        if (s->kind == NONE && word)
            fail(name, "set, but NONE in gpu_entries.h", s->name);
        if ((s->kind == GUARDED || s->kind == CAPTURED || s->kind == LOCAL) && !word)
            fail(name, "NULL, but a function in gpu_entries.h", s->name);
    }
}

/* In a child created by fork(): the slots that can reach the runtime replaced,
 * every other word as in the parent. */
static void check_forked(const char *name, const tp_backend *before, const tp_backend *table, const slot *event_slots)
{
    for (size_t offset = 0; offset + sizeof(void *) <= sizeof *table; offset += sizeof(void *)) {
        const slot *s = named_at(event_slots, offset);
        bool changed = word_at(table, offset) != word_at(before, offset);
        bool guarded = s && (s->kind == GUARDED || s->kind == CAPTURED);
        if (guarded && (!changed || !word_at(table, offset)))
            fail(name, "can reach the runtime but is not replaced in a child of fork()", s->name);
        if (!guarded && changed)
            fail(name, "replaced in a child of fork(), but not GUARDED or CAPTURED", s ? s->name : "(unnamed)");
    }
}

int main(void)
{
    tp_event *plain, *ipc, *wrapped;
    tp_stream *stream;
    void *native;
    if (tp_event_create(&plain, "cuda:0", TP_EVENT_TIMING) != TP_OK ||
        tp_event_create(&ipc, "cuda:0", TP_EVENT_INTERPROCESS) != TP_OK ||
        tp_stream_create(&stream, "cuda:0", 0) != TP_OK || tp_event_record(plain, stream) != TP_OK ||
        tp_event_native(plain, &native) != TP_OK || tp_event_from_native(&wrapped, "cuda:0", native) != TP_OK) {
        printf("FAIL: the fake GPU's events: %s\n", tp_last_error());
        return 1;
    }
    const struct {
        const char *name;
        const tp_backend *table;
        const slot *event_slots;
        tp_backend before;
    } tables[] = {
        {"gpu_table", plain->backend, plain_slots, *plain->backend},
        {"gpu_ipc_table", ipc->backend, ipc_slots, *ipc->backend},
        {"gpu_wrapped_table", wrapped->backend, wrapped_slots, *wrapped->backend},
    };
    for (size_t i = 0; i < COUNT(tables); i++)
        check_live(tables[i].name, tables[i].table, tables[i].event_slots);

    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        for (size_t i = 0; i < COUNT(tables); i++)
            check_forked(tables[i].name, &tables[i].before, tables[i].table, tables[i].event_slots);
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("FAIL: the child's tables (status %d)\n", status);
        failures++;
    }
    tp_event_destroy(wrapped);
    tp_event_destroy(plain);
    tp_event_destroy(ipc);
    tp_stream_destroy(stream);
    printf("%s: %zu shared slots and %zu of each kind of event checked\n", failures ? "FAIL" : "ok",
           COUNT(shared_slots), COUNT(plain_slots));
    return failures ? 1 : 0;
}
