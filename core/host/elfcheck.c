/* Checking a plugin candidate before dlopen.
 *
 * dlopen maps a shared object's PT_LOAD segments and reads them; a file
 * truncated after its headers (a half-copied .so, a full disk) maps pages
 * past the end of the file and the first touch kills the process with
 * SIGBUS, inside dlopen, before any error can be returned. So every file is
 * read and checked here first: a regular file (no FIFO, device, directory or
 * symlink loop), an ELF header of this process's class, byte order and
 * machine, a shared object or PIE, and a size that covers the program and
 * section header tables and every PT_LOAD segment's file range. What passes
 * can still be a bad plugin (dlopen and the entry point say why), but it
 * cannot fault while being mapped.
 */
#define _XOPEN_SOURCE 700
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "host/hostimpl.h"

#if UINTPTR_MAX > 0xffffffffu
#define NATIVE_CLASS ELFCLASS64
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
#else
#define NATIVE_CLASS ELFCLASS32
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Phdr phdr_t;
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* This process's e_machine: known at compile time for the usual targets,
 * else read from our own executable's header. */
static int native_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__i386__)
  return EM_386;
#elif defined(__arm__)
  return EM_ARM;
#elif defined(__powerpc64__)
  return EM_PPC64;
#elif defined(__riscv)
  return EM_RISCV;
#elif defined(__s390x__)
  return EM_S390;
#else
  static int cached = -1;
  if (cached >= 0) return cached;
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ehdr_t h;
  int m = 0;
  if (fd >= 0) {
    if (read(fd, &h, sizeof h) == (ssize_t)sizeof h) m = h.e_machine;
    close(fd);
  }
  cached = m;
  return m;
#endif
}

static bool pread_all(int fd, void *buf, size_t n, off_t off) {
  char *p = buf;
  while (n) {
    ssize_t r = pread(fd, p, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= (size_t)r;
    off += r;
  }
  return true;
}

/* [off, off + len) inside a file of `size` bytes, without overflow. */
static bool covers(uint64_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

#define BAD(...) fbx_status_new(FBX_ERR_PLUGIN, __VA_ARGS__)

static fbx_status *check_fd(int fd, const char *path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return BAD("cannot load fuser plugin %s: fstat: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return BAD("cannot load fuser plugin %s: not a regular file", path);
  uint64_t size = (uint64_t)st.st_size;
  ehdr_t h;
  if (size < sizeof h || !pread_all(fd, &h, sizeof h, 0))
    return BAD("cannot load fuser plugin %s: not an ELF shared object (%llu bytes, shorter than an ELF header)",
               path, (unsigned long long)size);
  if (memcmp(h.e_ident, ELFMAG, SELFMAG))
    return BAD("cannot load fuser plugin %s: not an ELF shared object (no ELF magic)", path);
  if (h.e_ident[EI_CLASS] != NATIVE_CLASS)
    return BAD("cannot load fuser plugin %s: ELF class %d, this process is %d-bit", path, h.e_ident[EI_CLASS],
               NATIVE_CLASS == ELFCLASS64 ? 64 : 32);
  if (h.e_ident[EI_DATA] != NATIVE_DATA)
    return BAD("cannot load fuser plugin %s: wrong byte order for this process", path);
  if (h.e_machine != native_machine())
    return BAD("cannot load fuser plugin %s: built for ELF machine %d, this process runs on machine %d", path,
               h.e_machine, native_machine());
  if (h.e_type != ET_DYN) return BAD("cannot load fuser plugin %s: not a shared object (ELF type %d)", path, h.e_type);
  if (h.e_phnum == 0 || h.e_phentsize != sizeof(phdr_t))
    return BAD("cannot load fuser plugin %s: malformed program header table", path);
  uint64_t ph_bytes = (uint64_t)h.e_phnum * h.e_phentsize;
  if (!covers(size, h.e_phoff, ph_bytes))
    return BAD("cannot load fuser plugin %s: truncated: %llu bytes do not hold its program headers", path,
               (unsigned long long)size);
  if (h.e_shoff && !covers(size, h.e_shoff, (uint64_t)h.e_shnum * h.e_shentsize))
    return BAD("cannot load fuser plugin %s: truncated: %llu bytes do not hold its section headers (to byte %llu)",
               path, (unsigned long long)size, (unsigned long long)(h.e_shoff + (uint64_t)h.e_shnum * h.e_shentsize));
  phdr_t *ph = fbx_malloc((size_t)ph_bytes);
  if (!ph) return fbx_status_nomem();
  fbx_status *err = NULL;
  if (!pread_all(fd, ph, (size_t)ph_bytes, (off_t)h.e_phoff)) {
    err = BAD("cannot load fuser plugin %s: cannot read its program headers", path);
  } else {
    for (int i = 0; i < h.e_phnum && !err; i++) {
      if (ph[i].p_type != PT_LOAD && ph[i].p_type != PT_DYNAMIC) continue;
      if (!covers(size, ph[i].p_offset, ph[i].p_filesz))
        err = BAD("cannot load fuser plugin %s: truncated: %llu bytes, but its %s segment %d needs bytes %llu..%llu",
                  path, (unsigned long long)size, ph[i].p_type == PT_LOAD ? "PT_LOAD" : "PT_DYNAMIC", i,
                  (unsigned long long)ph[i].p_offset, (unsigned long long)(ph[i].p_offset + ph[i].p_filesz));
    }
  }
  fbx_free(ph);
  return err;
}

fbx_status *fbx_plugin_file_check(const char *path) {
  /* O_NONBLOCK: a FIFO planted under a plugin's name must not hang us. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    return BAD("cannot load fuser plugin %s: %s", path,
               e == ELOOP ? "too many levels of symbolic links (a symlink loop)" : strerror(e));
  }
  fbx_status *st = check_fd(fd, path);
  close(fd);
  return st;
}
