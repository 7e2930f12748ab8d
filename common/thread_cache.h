/*
 * Per-thread caches of freed structs: a struct that a hot path frees and makes
 * again (an event, at every create+destroy pair) is kept by the thread that freed
 * it for that thread's next make, so that a warmed-up pair costs neither
 * malloc/free nor a lock. At most TP_THREAD_CACHE_MAX per thread and kind; past
 * that, and at the thread's exit (its kind's key destructor), they are freed with
 * the kind's free_item.
 *
 * A kind is a static tp_thread_cache_kind, its key made by
 * tp_thread_cache_kind_init from a constructor; each keeps its own _Thread_local
 * tp_thread_cache pointer beside it (a thread-local cannot be a member), which the
 * calls below take as `slot`.
 */
#ifndef TPEVENT_COMMON_THREAD_CACHE_H
#define TPEVENT_COMMON_THREAD_CACHE_H

#include "common/compiler.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define TP_THREAD_CACHE_MAX 32

typedef struct tp_thread_cache {
    void (*free_item)(void *item);
    /* The thread's pointer to this cache, cleared with it: a give after the
     * destructor (another key's, at the same exit) then makes a new one, which
     * the key's destructor, called again, frees. */
    struct tp_thread_cache **slot;
    int count;
    void *items[TP_THREAD_CACHE_MAX];
} tp_thread_cache;

typedef struct tp_thread_cache_kind {
    bool key_made; /* by tp_thread_cache_kind_init; without a key, gives free */
    pthread_key_t key;
    void (*free_item)(void *item);
} tp_thread_cache_kind;

#define TP_THREAD_CACHE_KIND_INIT(free_item) \
    {                                        \
        false, 0, free_item                  \
    }

/* The key's destructor: a thread exits with its cache. */
static inline void tp_thread_cache_destroy(void *cache_ptr)
{
    tp_thread_cache *cache = cache_ptr;
    *cache->slot = NULL;
    for (int i = 0; i < cache->count; i++)
        cache->free_item(cache->items[i]);
    free(cache);
}

/* Makes the kind's key, once, before any give: from a constructor of the file that
 * owns the kind, run at the library's load, which is single-threaded. So no give
 * ever takes a lock, which a fork() could leave held in the child for good. */
static inline void tp_thread_cache_kind_init(tp_thread_cache_kind *kind)
{
    kind->key_made = pthread_key_create(&kind->key, tp_thread_cache_destroy) == 0;
}

/* This thread's first give: its cache made and stored in *slot; NULL without a
 * key or memory (the give then frees, and the next one tries again). A give from
 * a key destructor in the thread's last round of them leaks its cache: glibc runs
 * PTHREAD_DESTRUCTOR_ITERATIONS (4) rounds at most. */
static inline tp_thread_cache *tp_thread_cache_make(tp_thread_cache_kind *kind, tp_thread_cache **slot)
{
    if (!kind->key_made)
        return NULL;
    tp_thread_cache *cache = calloc(1, sizeof *cache);
    if (!cache)
        return NULL;
    cache->free_item = kind->free_item;
    cache->slot = slot;
    if (pthread_setspecific(kind->key, cache) != 0) {
        free(cache);
        return NULL;
    }
    *slot = cache;
    return cache;
}

/* A struct this thread gave back before; NULL if none (then the caller makes one). */
static inline void *tp_thread_cache_take(tp_thread_cache *cache)
{
    if (TP_LIKELY(cache && cache->count > 0))
        return cache->items[--cache->count];
    return NULL;
}

/* tp_thread_cache_give's uncommon case, out of line: this thread's first give (its
 * cache made then), or a full cache. */
TP_COLD TP_UNUSED static void tp_thread_cache_give_slow(tp_thread_cache_kind *kind, tp_thread_cache **slot, void *item)
{
    tp_thread_cache *cache = *slot ? *slot : tp_thread_cache_make(kind, slot);
    if (cache && cache->count < TP_THREAD_CACHE_MAX)
        cache->items[cache->count++] = item;
    else
        kind->free_item(item);
}

/* Keeps `item` for this thread's next take, or frees it when the cache is full. */
static inline void tp_thread_cache_give(tp_thread_cache_kind *kind, tp_thread_cache **slot, void *item)
{
    tp_thread_cache *cache = *slot;
    if (TP_LIKELY(cache && cache->count < TP_THREAD_CACHE_MAX)) {
        cache->items[cache->count++] = item;
        return;
    }
    tp_thread_cache_give_slow(kind, slot, item);
}

#endif /* TPEVENT_COMMON_THREAD_CACHE_H */
