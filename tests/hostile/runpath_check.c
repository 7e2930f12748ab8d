/*
 * Checks the run paths (DT_RUNPATH, DT_RPATH) of every ELF file under the folders
 * given (issue 18, item 5): an entry that is empty ("/a::/b", "/a:") or relative
 * ("lib", "../lib") is looked up from the process's current directory, so running a
 * program from a folder that holds a bogus libc.so.6 would load it. Every entry must
 * be absolute or start with $ORIGIN.
 *
 *   runpath_check <folder>...
 *
 * Prints each ELF object that has a run path, and "BAD: <file>: empty entry in
 * RUNPATH "..."" (or "relative entry ...") for each flaw; exits 1 if any, 2 if no
 * dynamic ELF object was found at all (a check of nothing).
 */
#define _GNU_SOURCE

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int bad_entries, dynamic_objects;

static void check_entries(const char *file, const char *tag, const char *value)
{
    printf("%s: %s \"%s\"\n", file, tag, value);
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) {
            printf("BAD: %s: empty entry in %s \"%s\" (the current directory)\n", file, tag, value);
            bad_entries++;
        } else if (p[0] != '/' && strncmp(p, "$ORIGIN", 7) != 0 && strncmp(p, "${ORIGIN}", 9) != 0) {
            printf("BAD: %s: relative entry \"%.*s\" in %s \"%s\" (relative to the current directory)\n", file,
                   (int)len, p, tag, value);
            bad_entries++;
        }
        if (!end)
            break;
        p = end + 1;
    }
}

/* The string at `offset` of the string table, or NULL if it runs off the table. */
static const char *table_string(const char *table, size_t table_size, size_t offset)
{
    if (offset >= table_size || !memchr(table + offset, '\0', table_size - offset))
        return NULL;
    return table + offset;
}

static void check_image(const char *file, const unsigned char *image, size_t size)
{
    if (size < sizeof(ElfW(Ehdr)) || memcmp(image, ELFMAG, SELFMAG) != 0)
        return;
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)image;
    if (header->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)) {
        printf("%s: not of this machine's ELF class, not checked\n", file);
        return;
    }
    if (header->e_type != ET_EXEC && header->e_type != ET_DYN)
        return; /* object files and the like: no run path */
    if (header->e_shoff == 0 || header->e_shentsize != sizeof(ElfW(Shdr)) || header->e_shoff > size ||
        (size - header->e_shoff) / sizeof(ElfW(Shdr)) < header->e_shnum) {
        printf("BAD: %s: no readable section headers\n", file);
        bad_entries++;
        return;
    }
    const ElfW(Shdr) *sections = (const ElfW(Shdr) *)(image + header->e_shoff);
    for (unsigned i = 0; i < header->e_shnum; i++) {
        const ElfW(Shdr) *dynamic = &sections[i];
        if (dynamic->sh_type != SHT_DYNAMIC)
            continue;
        dynamic_objects++;
        if (dynamic->sh_link >= header->e_shnum || dynamic->sh_offset > size ||
            dynamic->sh_size > size - dynamic->sh_offset)
            goto unreadable;
        const ElfW(Shdr) *strings = &sections[dynamic->sh_link];
        if (strings->sh_offset > size || strings->sh_size > size - strings->sh_offset)
            goto unreadable;
        const char *table = (const char *)image + strings->sh_offset;
        const ElfW(Dyn) *entries = (const ElfW(Dyn) *)(image + dynamic->sh_offset);
        size_t count = dynamic->sh_size / sizeof(ElfW(Dyn));
        for (size_t j = 0; j < count && entries[j].d_tag != DT_NULL; j++) {
            if (entries[j].d_tag != DT_RUNPATH && entries[j].d_tag != DT_RPATH)
                continue;
            const char *value = table_string(table, strings->sh_size, entries[j].d_un.d_val);
            if (!value)
                goto unreadable;
            check_entries(file, entries[j].d_tag == DT_RUNPATH ? "RUNPATH" : "RPATH", value);
        }
        continue;
    unreadable:
        printf("BAD: %s: its dynamic section or string table is out of bounds\n", file);
        bad_entries++;
    }
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < (off_t)sizeof(ElfW(Ehdr)))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    void *image = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (image == MAP_FAILED)
        return 0;
    check_image(path, image, (size_t)st->st_size);
    munmap(image, (size_t)st->st_size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <folder>...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (nftw(argv[i], visit, 16, FTW_PHYS) != 0)
            fprintf(stderr, "runpath_check: cannot walk %s\n", argv[i]);
    printf("%d dynamic ELF objects, %d bad run-path entries\n", dynamic_objects, bad_entries);
    if (dynamic_objects == 0)
        return 2;
    return bad_entries ? 1 : 0;
}
