/*
 * The host clock every backend stamps and waits by: CLOCK_MONOTONIC in ns (rule 13
 * puts every record on it), a pause for polling loops, and the CPU's spin hint
 * (the spin-then-sleep built on them is common/spin.h).
 * The includer defines _POSIX_C_SOURCE (200809L) before any system header.
 */
#ifndef TPEVENT_COMMON_CLOCK_H
#define TPEVENT_COMMON_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t tp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sleeps about `ns`; a signal cuts it short, so callers poll again. */
static inline void tp_sleep_ns(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    (void)nanosleep(&t, NULL);
}

/* Tells the core this thread is spinning: saves power and lets a sibling
 * hyperthread (maybe the thread we wait for) run. */
static inline void tp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif /* TPEVENT_COMMON_CLOCK_H */
