/*
 * common/thread_cache.h, tested on its own: the per-thread cache of freed structs
 * behind every event create+destroy pair. A thread gets back what it gave, at most
 * TP_THREAD_CACHE_MAX are kept, and nothing is lost: what is not kept, and what a
 * thread still holds at its exit, is freed with the kind's free_item, even when the
 * give comes from another key's destructor after the cache's own ran.
 */
#include "common/thread_cache.h"

#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int items_freed;

static void count_and_free(void *item)
{
    atomic_fetch_add(&items_freed, 1);
    free(item);
}

static tp_thread_cache_kind kind = TP_THREAD_CACHE_KIND_INIT(count_and_free);
static _Thread_local tp_thread_cache *thread_cache;

__attribute__((constructor)) static void make_cache_key(void)
{
    tp_thread_cache_kind_init(&kind);
}

static void *run_in_thread(void *(*body)(void *), void *arg)
{
    pthread_t thread;
    void *result = NULL;
    if (pthread_create(&thread, NULL, body, arg) != 0 || pthread_join(thread, &result) != 0)
        return NULL;
    return result;
}

/* ---------------------------------------------------------------- tests */

static void *gives_then_takes(void *unused)
{
    (void)unused;
    void *first = malloc(16), *second = malloc(16);
    tp_thread_cache_give(&kind, &thread_cache, first);
    tp_thread_cache_give(&kind, &thread_cache, second);
    bool ok = tp_thread_cache_take(thread_cache) == second && tp_thread_cache_take(thread_cache) == first &&
              tp_thread_cache_take(thread_cache) == NULL;
    free(first);
    free(second);
    return ok ? (void *)1 : NULL;
}

TEST(thread_cache_gives_a_thread_back_what_it_gave_last_first)
{
    CHECK(tp_thread_cache_take(thread_cache) == NULL); /* nothing given on this thread yet */
    CHECK(run_in_thread(gives_then_takes, NULL) != NULL);
    return 0;
}

static void *gives_past_the_most_it_keeps(void *freed_at_return)
{
    for (int i = 0; i < TP_THREAD_CACHE_MAX + 5; i++)
        tp_thread_cache_give(&kind, &thread_cache, malloc(16));
    *(int *)freed_at_return = atomic_load(&items_freed);
    return NULL;
}

TEST(thread_cache_frees_what_it_does_not_keep_and_the_rest_at_thread_exit)
{
    atomic_store(&items_freed, 0);
    int freed_before_exit = -1;
    run_in_thread(gives_past_the_most_it_keeps, &freed_before_exit);
    CHECK(freed_before_exit == 5);
    CHECK(atomic_load(&items_freed) == TP_THREAD_CACHE_MAX + 5);
    return 0;
}

/* Another key's destructor, which gives after the cache's own destructor ran
 * (POSIX leaves their order open; glibc runs them in the order the keys were made,
 * and the cache's key is made first, at load): the give must find no freed cache,
 * and its item must still be freed. */
static pthread_key_t late_key;

static void give_at_exit(void *item)
{
    tp_thread_cache_give(&kind, &thread_cache, item);
}

static void *gives_from_two_destructors(void *unused)
{
    (void)unused;
    tp_thread_cache_give(&kind, &thread_cache, malloc(16));
    pthread_setspecific(late_key, malloc(16));
    return NULL;
}

TEST(thread_cache_give_during_thread_exit_loses_nothing)
{
    CHECK(pthread_key_create(&late_key, give_at_exit) == 0);
    atomic_store(&items_freed, 0);
    for (int round = 0; round < 8; round++)
        run_in_thread(gives_from_two_destructors, NULL);
    CHECK(atomic_load(&items_freed) == 16);
    pthread_key_delete(late_key);
    return 0;
}
