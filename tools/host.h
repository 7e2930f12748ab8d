/* What the tool says about the machine it runs on, for its JSON and its table. */
#ifndef TPEVENT_TOOL_HOST_H
#define TPEVENT_TOOL_HOST_H

#include <stdbool.h>
#include <stdint.h>

typedef struct host_info {
    char system[65];             /* uname: "Linux" */
    char release[65];            /* uname: "6.1.0-18-amd64" */
    char machine[65];            /* uname: "x86_64" */
    char libc[48];               /* "glibc 2.36"; "" when unknown */
    char cpu[128];               /* /proc/cpuinfo's first "model name"; "" when unknown */
    int64_t clock_resolution_ns; /* clock_getres(CLOCK_MONOTONIC); -1 when it failed */
} host_info;

/* Fills what can be learnt; a field that cannot stays "" (or -1). */
void host_info_get(host_info *info);

#endif /* TPEVENT_TOOL_HOST_H */
