/*
 * stream_flush_cache (core/backend.h): what tp_measure queues before each cold call
 * (rule 18), a task on the stream's FIFO that reads a buffer twice the size of the
 * largest cache the machine lists, one byte of every cache line, so that what the
 * next task reads comes from memory.
 *
 * Reads, not writes: streams of one device share the buffer and may flush at once,
 * and reads of memory nobody writes are no data race. The buffer is filled once
 * when made (pages never written all map the kernel's one zero page, whose reading
 * would evict nothing). It is the device's, made at the first flush under its lock,
 * kept for the life of the process.
 */
#include "backends/cpu/cpu_internal.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest cache sysfs lists on a server CPU today is tens of MB per core complex
 * (glibc's sysconf may answer the sum over all of them, 512 MB on a 16-complex EPYC):
 * a flush reads at most this much, which also bounds its cost under valgrind. */
static const size_t flush_bytes_max = (size_t)64 << 20;
/* Where neither sysfs nor sysconf knows (some virtual machines). */
static const size_t cache_bytes_unknown = (size_t)32 << 20;
static const size_t cache_line = 64;

struct cpu_flush_buffer {
    unsigned char *memory;
    size_t size;
};

/* "32768K", "32M", "1024" in bytes; 0 if unreadable. */
static size_t sysfs_cache_size(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    unsigned long long value = 0;
    char unit = 0;
    int fields = fscanf(file, "%llu%c", &value, &unit);
    fclose(file);
    if (fields < 1)
        return 0;
    if (unit == 'K')
        value <<= 10;
    else if (unit == 'M')
        value <<= 20;
    return (size_t)value;
}

/* The largest cache sysfs lists for CPU 0, else the largest sysconf knows. */
static size_t largest_cache_bytes(void)
{
    size_t largest = 0;
    glob_t found;
    if (glob("/sys/devices/system/cpu/cpu0/cache/index*/size", 0, NULL, &found) == 0) {
        for (size_t i = 0; i < found.gl_pathc; i++) {
            size_t size = sysfs_cache_size(found.gl_pathv[i]);
            largest = size > largest ? size : largest;
        }
        globfree(&found);
    }
    if (largest > 0)
        return largest;
    const int levels[] = {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0] && largest == 0; i++) {
        long size = sysconf(levels[i]);
        largest = size > 0 ? (size_t)size : 0;
    }
    return largest > 0 ? largest : cache_bytes_unknown;
}

static tp_status flush_buffer_make_locked(cpu_device *device, struct cpu_flush_buffer **out)
{
    struct cpu_flush_buffer *buffer = malloc(sizeof *buffer);
    size_t size = largest_cache_bytes() * 2;
    size = size < flush_bytes_max ? size : flush_bytes_max;
    unsigned char *memory = buffer ? malloc(size) : NULL;
    if (!memory) {
        free(buffer);
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: cannot allocate %zu bytes to flush the cache",
                                   size);
    }
    memset(memory, 0x5a, size);
    buffer->memory = memory;
    buffer->size = size;
    atomic_store_explicit(&device->flush_buffer, buffer, memory_order_release);
    *out = buffer;
    return TP_OK;
}

static tp_status flush_buffer_of(cpu_device *device, struct cpu_flush_buffer **out)
{
    *out = atomic_load_explicit(&device->flush_buffer, memory_order_acquire);
    if (*out)
        return TP_OK;
    pthread_mutex_lock(&device->lock);
    *out = atomic_load_explicit(&device->flush_buffer, memory_order_acquire);
    tp_status status = *out ? TP_OK : flush_buffer_make_locked(device, out);
    pthread_mutex_unlock(&device->lock);
    return status;
}

static void flush_task(void *arg, cpu_word word)
{
    (void)word;
    const struct cpu_flush_buffer *buffer = arg;
    unsigned sum = 0;
    for (size_t i = 0; i < buffer->size; i += cache_line)
        sum += buffer->memory[i];
    /* The reads are the point: a sum nobody uses would let the compiler drop them. */
    __asm__ volatile("" : : "r"(sum));
}

tp_status tp_cpu_stream_flush_cache(tp_stream *stream)
{
    cpu_queue *queue = ((cpu_stream *)stream)->queue;
    struct cpu_flush_buffer *buffer;
    tp_status status = flush_buffer_of(queue->device, &buffer);
    if (status != TP_OK)
        return status;
    cpu_task task = {.run = flush_task, .arg = buffer};
    return tp_cpu_queue_submit(queue, &task, "tp_measure");
}
