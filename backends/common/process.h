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

#endif /* TPEVENT_BACKENDS_COMMON_PROCESS_H */
