/*
 * Whether a process still runs, and since when: what both backends' interprocess
 * events use to tell a live peer from one that is gone or whose pid was reused.
 * Header-only (static inline), so that the core library and each backend module,
 * and a static build that links them all together, each get their own copy with
 * no symbol to clash.
 */
#ifndef TPEVENT_BACKENDS_COMMON_PROCESS_H
#define TPEVENT_BACKENDS_COMMON_PROCESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's PF_EXITING (include/linux/sched.h), in field 9 of /proc/<pid>/stat.
 * It is set as soon as a process starts to exit (SIGKILL included), while the
 * driver may still take a while to tear its contexts down. */
#define TP_PROC_FLAG_EXITING 0x4u

/*
 * The start time of a process that still runs; false if there is none by that pid:
 * there never was, it exited, it is exiting, or it is a zombie waiting to be reaped
 * (none of these runs anything any more, so none of them reaches a record).
 */
static inline bool tp_process_running(int32_t pid, uint64_t *start_time)
{
    if (pid <= 0)
        return false;
    char path[32], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t length;
    do
        length = read(fd, text, sizeof text - 1);
    while (length < 0 && errno == EINTR);
    close(fd);
    if (length <= 0)
        return false;
    text[length] = '\0';
    /* Field 2 is the command's name in parentheses, which may hold spaces and
     * parentheses itself: field 3 starts after the last ')'. */
    const char *p = strrchr(text, ')');
    if (!p)
        return false;
    p++;
    while (*p == ' ')
        p++;
    char state = *p++;
    if (state == 'Z' || state == 'X' || state == 'x' || state == '\0')
        return false;
    for (int field = 4; field <= 22; field++) {
        char *end;
        unsigned long long value = strtoull(p, &end, 10);
        if (end == p)
            return false;
        if (field == 9 && (value & TP_PROC_FLAG_EXITING))
            return false;
        if (field == 22) {
            *start_time = value;
            return true;
        }
        p = end;
    }
    return false;
}

/* A process as another process knows it: the pid and, so that a pid reused by a
 * later process is not taken for it, its start time (clock ticks after boot,
 * field 22 of /proc/<pid>/stat). */
typedef struct tp_process_id {
    int32_t pid;
    uint64_t start_time;
} tp_process_id;

/* Whether `process` still runs (the same pid, started at the same time). */
static inline bool tp_process_is(const tp_process_id *process)
{
    uint64_t start_time = 0;
    return tp_process_running(process->pid, &start_time) && start_time == process->start_time;
}

/* The calling process's identity; false if /proc cannot tell its start time. */
static inline bool tp_process_self(tp_process_id *self)
{
    self->pid = (int32_t)getpid();
    return tp_process_running(self->pid, &self->start_time);
}

/* How often a waiter on another process's record looks whether that process still
 * runs: the bound on noticing that it died, at the cost of a read of /proc each
 * time. Both backends' interprocess events use it. */
#define TP_LIVENESS_PERIOD_NS 20000000u

/*
 * Throttles those looks for calls made in a loop (query): true when a look is due
 * at `now` (ns), and then moves the next one a period on. Of threads racing at the
 * same moment one wins the look; the others take the last answer.
 */
static inline bool tp_liveness_due(_Atomic uint64_t *next_check_ns, uint64_t now)
{
    uint64_t next = atomic_load_explicit(next_check_ns, memory_order_relaxed);
    return now >= next && atomic_compare_exchange_strong_explicit(next_check_ns, &next, now + TP_LIVENESS_PERIOD_NS,
                                                                  memory_order_relaxed, memory_order_relaxed);
}

#endif /* TPEVENT_BACKENDS_COMMON_PROCESS_H */
