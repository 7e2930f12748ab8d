/*
 * What every fuzz target defines. The same source builds two ways:
 *   - with clang and -fsanitize=fuzzer (TPEVENT_FUZZ=ON, scripts/fuzz.sh): libFuzzer
 *     supplies main() and calls these;
 *   - with any compiler, linked with replay_main.c: replays a corpus (CTest), so that
 *     the committed inputs are checked on every regular build.
 *
 * A target checks what must hold for any input (statuses in range, outputs untouched
 * on failure, parse/format round trips) and calls fuzz_violation() when it does not:
 * libFuzzer and CTest both see the abort.
 */
#ifndef TPEVENT_TESTS_FUZZ_TARGET_H
#define TPEVENT_TESTS_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points (names fixed by libFuzzer). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz target: <what>" with the thread's tp_last_error, then aborts. */
_Noreturn void fuzz_violation(const char *file, int line, const char *what);

#define FUZZ_REQUIRE(expr)                             \
    do {                                               \
        if (!(expr))                                   \
            fuzz_violation(__FILE__, __LINE__, #expr); \
    } while (0)

#endif /* TPEVENT_TESTS_FUZZ_TARGET_H */
