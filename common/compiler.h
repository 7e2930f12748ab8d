/*
 * Compiler hints every part of tpevent uses: branch weights for the hot paths and
 * out-of-line, cold failure paths, so that a hot call needs no stack frame for the
 * buffers its error message takes.
 */
#ifndef TPEVENT_COMMON_COMPILER_H
#define TPEVENT_COMMON_COMPILER_H

#if defined(__GNUC__)
#define TP_LIKELY(x) __builtin_expect(!!(x), 1)
#define TP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TP_NOINLINE __attribute__((noinline))
#define TP_COLD __attribute__((noinline, cold))
#define TP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TP_UNUSED __attribute__((unused)) /* a header's static function a file may not call */
#else
#define TP_LIKELY(x) (x)
#define TP_UNLIKELY(x) (x)
#define TP_NOINLINE
#define TP_COLD
#define TP_PRINTF(f, a)
#define TP_UNUSED
#endif

#endif /* TPEVENT_COMMON_COMPILER_H */
