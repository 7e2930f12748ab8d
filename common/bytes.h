/*
 * Little-endian integers in byte buffers: the layout of IPC handles and their
 * payloads, whatever the host's byte order. Header-only, like everything in
 * common, so that the core and each backend module get their own copy and
 * a static build has no symbol to clash.
 */
#ifndef TPEVENT_COMMON_BYTES_H
#define TPEVENT_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline void tp_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline uint16_t tp_get_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void tp_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t tp_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void tp_put_u64(unsigned char *p, uint64_t v)
{
    tp_put_u32(p, (uint32_t)v);
    tp_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t tp_get_u64(const unsigned char *p)
{
    return (uint64_t)tp_get_u32(p) | (uint64_t)tp_get_u32(p + 4) << 32;
}

/* FNV-1a over bytes, from `hash` (TP_FNV1A_BASIS to begin): the checksum of IPC
 * handles (core/ipc.c) and of events' socket messages (core/ipc_socket.c). */
#define TP_FNV1A_BASIS 2166136261u

static inline uint32_t tp_fnv1a(uint32_t hash, const unsigned char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= 16777619u;
    }
    return hash;
}

#endif /* TPEVENT_COMMON_BYTES_H */
