/*
 * Replays inputs through a fuzz target without libFuzzer, for builds with any
 * compiler (CTest registers one replay per target, over its committed corpus):
 *
 *   tpevent_fuzz_replay_<target> FILE_OR_DIR...
 *
 * Each file is one input, handed over in a buffer of exactly its size, so that
 * AddressSanitizer sees a read past the end. Folders are read in name order. Fails
 * if no input was found: a corpus that went missing must not pass as a clean run.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

static int replay_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat info;
    if (fstat(fileno(file), &info) != 0 || info.st_size < 0) {
        fprintf(stderr, "%s: cannot stat\n", path);
        fclose(file);
        return -1;
    }
    size_t size = (size_t)info.st_size;
    /* malloc(0) may answer NULL; one spare byte keeps the buffer real, and the
     * target is told the true size. */
    unsigned char *data = malloc(size ? size : 1);
    if (!data || fread(data, 1, size, file) != size) {
        fprintf(stderr, "%s: cannot read %zu bytes\n", path, size);
        free(data);
        fclose(file);
        return -1;
    }
    fclose(file);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of the folder; returns how many, or -1. */
static long replay_folder(const char *folder)
{
    DIR *dir = opendir(folder);
    if (!dir) {
        fprintf(stderr, "%s: %s\n", folder, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, capacity = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            char **grown = realloc(names, capacity * sizeof *names);
            if (!grown)
                abort();
            names = grown;
        }
        size_t length = strlen(folder) + 1 + strlen(entry->d_name) + 1;
        names[count] = malloc(length);
        if (!names[count])
            abort();
        snprintf(names[count], length, "%s/%s", folder, entry->d_name);
        count++;
    }
    closedir(dir);
    qsort(names, count, sizeof *names, compare_names);

    long replayed = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat info;
        if (stat(names[i], &info) == 0 && S_ISREG(info.st_mode)) {
            if (replay_file(names[i]) != 0)
                replayed = -1;
            else if (replayed >= 0)
                replayed++;
        }
        free(names[i]);
    }
    free(names);
    return replayed;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    LLVMFuzzerInitialize(&argc, &argv);
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat info;
        if (stat(argv[i], &info) != 0) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        long replayed = S_ISDIR(info.st_mode) ? replay_folder(argv[i]) : replay_file(argv[i]) == 0 ? 1 : -1;
        if (replayed < 0)
            return 1;
        total += replayed;
    }
    if (total == 0) {
        fprintf(stderr, "no inputs found in the paths given\n");
        return 1;
    }
    printf("replayed %ld input%s, no violation\n", total, total == 1 ? "" : "s");
    return 0;
}
