/*
 * The trace's tables (core/trace.c): the event -> mark map (open
 * addressing on the event's address, tombstones for forgotten events), and the
 * interned range names (each name's text stored once per trace, in
 * trace_state.names; a table of offsets + 1, linear probing). All under the
 * trace's lock; cleared, not freed, between traces, so that a trace no larger than
 * an earlier one allocates nothing.
 */
#include "core/trace.h"
#include "common/array.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- event map */

static size_t hash_pointer(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15u;
    return (size_t)(x >> 17) & (cap - 1);
}

trace_map_entry *trace_map_find(const trace_event_map *map, const tp_event *event)
{
    if (!map->cap)
        return NULL;
    for (size_t i = hash_pointer(event, map->cap);; i = (i + 1) & (map->cap - 1)) {
        if (map->entries[i].event == event)
            return &map->entries[i];
        if (!map->entries[i].event)
            return NULL;
    }
}

/* Used counts tombstones too: they end searches later. */
bool trace_map_reserve(trace_event_map *map)
{
    if ((map->used + 1) * 2 <= map->cap)
        return true;
    size_t live = 0;
    for (size_t i = 0; i < map->cap; i++)
        live += map->entries[i].event > TRACE_MAP_TOMBSTONE;
    size_t cap = map->cap ? map->cap : 256;
    while ((live + 1) * 4 > cap)
        cap *= 2;
    trace_map_entry *fresh = calloc(cap, sizeof *fresh), *old = map->entries;
    if (!fresh)
        return false;
    size_t old_cap = map->cap;
    map->entries = fresh;
    map->cap = cap;
    map->used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].event > TRACE_MAP_TOMBSTONE) {
            size_t j = hash_pointer(old[i].event, cap);
            while (fresh[j].event)
                j = (j + 1) & (cap - 1);
            fresh[j] = old[i];
            map->used++;
        }
    free(old);
    return true;
}

trace_map_entry *trace_map_insert(trace_event_map *map, tp_event *event)
{
    size_t i = hash_pointer(event, map->cap);
    while (map->entries[i].event > TRACE_MAP_TOMBSTONE)
        i = (i + 1) & (map->cap - 1);
    if (!map->entries[i].event)
        map->used++;
    map->entries[i].event = event;
    return &map->entries[i];
}

void trace_map_clear(trace_event_map *map)
{
    if (map->cap)
        memset(map->entries, 0, map->cap * sizeof *map->entries);
    map->used = 0;
}

void trace_map_release(trace_event_map *map, size_t keep)
{
    if (map->cap <= keep)
        return;
    free(map->entries);
    *map = (trace_event_map){0};
}

/* ----------------------------------------------------------------- names */

static uint64_t hash_name(const char *name, size_t *length)
{
    uint64_t h = 1469598103934665603u;
    size_t n = 0;
    for (; name[n]; n++)
        h = (h ^ (unsigned char)name[n]) * 1099511628211u;
    *length = n;
    return h;
}

static bool names_grow(trace_name_index *index, const trace_state *t)
{
    size_t cap = index->cap ? index->cap * 2 : 256;
    uint32_t *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return false;
    for (size_t i = 0; i < index->cap; i++)
        if (index->table[i]) {
            size_t length;
            size_t j = (size_t)hash_name(t->names + index->table[i] - 1, &length) & (cap - 1);
            while (fresh[j])
                j = (j + 1) & (cap - 1);
            fresh[j] = index->table[i];
        }
    free(index->table);
    index->table = fresh;
    index->cap = cap;
    return true;
}

bool trace_names_ready(trace_name_index *index, const trace_state *t)
{
    return index->cap || names_grow(index, t);
}

bool trace_intern(trace_name_index *index, trace_state *t, const char *name, uint32_t *offset)
{
    if ((index->used + 1) * 2 > index->cap && !names_grow(index, t))
        return false;
    size_t length;
    size_t i = (size_t)hash_name(name, &length) & (index->cap - 1);
    for (; index->table[i]; i = (i + 1) & (index->cap - 1))
        if (strcmp(t->names + index->table[i] - 1, name) == 0) {
            *offset = index->table[i] - 1;
            return true;
        }
    if (t->names_len + length + 1 >= UINT32_MAX ||
        !tp_array_grow(&t->names, &t->names_cap, t->names_len + length + 1, 1))
        return false;
    memcpy(t->names + t->names_len, name, length + 1);
    *offset = (uint32_t)t->names_len;
    index->table[i] = *offset + 1;
    index->used++;
    t->names_len += length + 1;
    return true;
}

void trace_names_clear(trace_name_index *index)
{
    if (index->cap)
        memset(index->table, 0, index->cap * sizeof *index->table);
    index->used = 0;
}

void trace_names_release(trace_name_index *index, size_t keep)
{
    if (index->cap <= keep)
        return;
    free(index->table);
    *index = (trace_name_index){0};
}
