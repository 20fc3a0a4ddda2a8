/*
 * elf_check.c — before dlopen: is the file there, readable, an ELF shared
 * object for this machine (not an object file, a PIE executable or a
 * 32-bit build)? Each refusal is a LOAD_FAILED naming the field, what was
 * expected and what was found.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

static const char *machine_name(unsigned machine) {
    switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_RISCV: return "RISC-V";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390";
    default: return NULL;
    }
}

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#else
#define HOST_MACHINE 0
#endif

/* Whether an ET_DYN file is a position-independent executable (the linker
 * sets DF_1_PIE in DT_FLAGS_1): it has the same ELF type as a shared
 * object, and dlopen refuses it with a message that says nothing useful. */
static int is_pie(const char *path, const Elf64_Ehdr *header) {
    if (header->e_phentsize != sizeof(Elf64_Phdr) || header->e_phnum == 0 || header->e_phnum > 256) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    Elf64_Phdr phdrs[256];
    size_t size = (size_t)header->e_phnum * sizeof(Elf64_Phdr);
    int pie = 0;
    if (pread(fd, phdrs, size, (off_t)header->e_phoff) == (ssize_t)size) {
        for (unsigned i = 0; i < header->e_phnum && !pie; i++) {
            if (phdrs[i].p_type != PT_DYNAMIC) continue;
            Elf64_Dyn dyn[512];
            size_t want = phdrs[i].p_filesz < sizeof dyn ? (size_t)phdrs[i].p_filesz : sizeof dyn;
            ssize_t got = pread(fd, dyn, want, (off_t)phdrs[i].p_offset);
            for (ssize_t k = 0; got > 0 && k < got / (ssize_t)sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; k++)
                if (dyn[k].d_tag == DT_FLAGS_1 && (dyn[k].d_un.d_val & DF_1_PIE)) pie = 1;
        }
    }
    close(fd);
    return pie;
}

void check_elf(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            fail_load(WH_LOAD_FILE_NOT_FOUND, strerror(e), "path", "an existing file", path);
        fail_load(WH_LOAD_NOT_READABLE, strerror(e), "path", "a readable file", path);
    }
    if (!S_ISREG(st.st_mode))
        fail_load(WH_LOAD_NOT_ELF, "not a regular file", "file type", "a regular file",
                  S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail_load(WH_LOAD_NOT_READABLE, strerror(errno), "path", "a readable file", path);
    }
    Elf64_Ehdr header;
    memset(&header, 0, sizeof header);
    ssize_t n = read(fd, &header, sizeof header);
    close(fd);
    if (n < 0) fail_load(WH_LOAD_NOT_READABLE, strerror(errno), "path", "a readable file", path);
    if (n < 4 || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
        char found[64];
        if (n == 0) {
            snprintf(found, sizeof found, "an empty file (0 bytes)");
        } else {
            /* Show the first bytes, printable characters as they are. */
            size_t k = 0;
            k += (size_t)snprintf(found + k, sizeof found - k, "starts with \"");
            for (ssize_t i = 0; i < n && i < 8 && k < sizeof found - 8; i++) {
                unsigned char c = header.e_ident[i];
                if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                    found[k++] = (char)c;
                else
                    k += (size_t)snprintf(found + k, sizeof found - k, "\\x%02x", c);
            }
            snprintf(found + k, sizeof found - k, "\"");
        }
        fail_load(WH_LOAD_NOT_ELF, "the file has no ELF header", "ELF magic",
                  "\\x7fELF (a shared object built for Linux)", found);
    }
    if ((size_t)n < sizeof header) {
        fail_load(WH_LOAD_NOT_ELF, "the ELF header is truncated", "ELF header size",
                  fmt("%zu bytes", sizeof header), fmt("%zd bytes", n));
    }
    if (header.e_ident[EI_CLASS] != ELFCLASS64) {
        fail_load(WH_LOAD_WRONG_MACHINE, "the file is a 32-bit ELF object", "ELF class",
                  "ELFCLASS64 (64-bit)", "ELFCLASS32 (32-bit)");
    }
    if (HOST_MACHINE != 0 && header.e_machine != HOST_MACHINE) {
        const char *found = machine_name(header.e_machine);
        char expected[64];
        snprintf(expected, sizeof expected, "%s (e_machine %u)", machine_name(HOST_MACHINE),
                 (unsigned)HOST_MACHINE);
        fail_load(WH_LOAD_WRONG_MACHINE, "the shared object was built for another architecture",
                  "ELF machine", expected,
                  found ? fmt("%s (e_machine %u)", found, (unsigned)header.e_machine)
                        : fmt("e_machine %u", (unsigned)header.e_machine));
    }
    if (header.e_type != ET_DYN) {
        fail_load(WH_LOAD_NOT_SHARED_OBJECT, "the file is an ELF object but not a shared object",
                  "ELF type", "ET_DYN (built with -shared)",
                  header.e_type == ET_EXEC  ? "ET_EXEC (an executable)"
                  : header.e_type == ET_REL ? "ET_REL (an object file: link it with -shared)"
                                            : fmt("e_type %u", (unsigned)header.e_type));
    }
    if (is_pie(path, &header)) {
        fail_load(WH_LOAD_NOT_SHARED_OBJECT, "the file is a position-independent executable, not a library",
                  "ELF type", "ET_DYN without DF_1_PIE (built with -shared)",
                  "a PIE executable (DF_1_PIE set: built with -pie, or as a program)");
    }
}
