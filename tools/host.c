#include "host.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

/* Cut to fit: a long CPU model or kernel release is no error. */
static void copy(char *out, size_t size, const char *text)
{
    size_t length = strnlen(text, size - 1);
    memcpy(out, text, length);
    out[length] = '\0';
}

/* The first "model name" of /proc/cpuinfo (x86); "" elsewhere. */
static void read_cpu_model(char *out, size_t size)
{
    out[0] = '\0';
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, cpuinfo) != NULL) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *value = strchr(line, ':');
        if (value == NULL)
            continue;
        value += strspn(value + 1, " \t") + 1;
        copy(out, size, value);
        out[strcspn(out, "\n")] = '\0';
        break;
    }
    fclose(cpuinfo);
}

void host_info_get(host_info *info)
{
    memset(info, 0, sizeof *info);
    struct utsname names;
    if (uname(&names) == 0) {
        copy(info->system, sizeof info->system, names.sysname);
        copy(info->release, sizeof info->release, names.release);
        copy(info->machine, sizeof info->machine, names.machine);
    }
#if defined(__GLIBC__)
    snprintf(info->libc, sizeof info->libc, "glibc %s", gnu_get_libc_version());
#endif
    read_cpu_model(info->cpu, sizeof info->cpu);
    struct timespec resolution;
    info->clock_resolution_ns = clock_getres(CLOCK_MONOTONIC, &resolution) == 0
                                    ? (int64_t)resolution.tv_sec * 1000000000 + resolution.tv_nsec
                                    : -1;
}
