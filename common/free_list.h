/*
 * Free lists: small structs a path takes and gives back many times (a wait's state,
 * a hold's ticket), kept after their use so that a warmed-up program allocates
 * nothing there. Never freed: a list holds at most as many as were ever in use at
 * once. An item starts with its `next` pointer (struct tp_free_item's layout).
 */
#ifndef TPEVENT_COMMON_FREE_LIST_H
#define TPEVENT_COMMON_FREE_LIST_H

#include <pthread.h>
#include <stdlib.h>

typedef struct tp_free_item {
    struct tp_free_item *next;
} tp_free_item;

typedef struct tp_free_list {
    pthread_mutex_t lock;
    tp_free_item *first;
} tp_free_list;

#define TP_FREE_LIST_INIT               \
    {                                   \
        PTHREAD_MUTEX_INITIALIZER, NULL \
    }

/* An item of `size` bytes: one given back before, else a new one; NULL when out
 * of memory. */
static inline void *tp_free_list_take(tp_free_list *list, size_t size)
{
    pthread_mutex_lock(&list->lock);
    tp_free_item *item = list->first;
    if (item)
        list->first = item->next;
    pthread_mutex_unlock(&list->lock);
    return item ? (void *)item : malloc(size);
}

static inline void tp_free_list_give(tp_free_list *list, void *item_ptr)
{
    tp_free_item *item = item_ptr;
    pthread_mutex_lock(&list->lock);
    item->next = list->first;
    list->first = item;
    pthread_mutex_unlock(&list->lock);
}

#endif /* TPEVENT_COMMON_FREE_LIST_H */
