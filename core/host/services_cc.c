/* Host service: C source -> shared object, with an on-disk cache.
 *
 * Cache layout ($FUSEBOX_CACHE_DIR, else $XDG_CACHE_HOME/fusebox, else
 * $HOME/.cache/fusebox, else /tmp/fusebox-cache-<uid>; created 0700, with
 * the parents we create):
 *
 *   <key>.c      the source, at a path that depends only on the key, so the
 *                compiler's output is byte-identical in every process (GCC
 *                records the source file name in the object)
 *   <key>.so     the object
 *   <key>.meta   "fusebox-cc-cache 1", the key, the object's size and SHA-256,
 *                and (for people) the compiler, its version and the flags
 *   cc-<id>.probe  what a compiler said about itself (first line of
 *                --version, whether -fopenmp works), keyed by the compiler
 *                spec and the device, inode, size and mtime of each program
 *                the spec names (the compiler; a wrapper and its compiler
 *                for "ccache gcc"): a warm process runs no compiler at all.
 *                The first compile that asks for -fopenmp while no verdict
 *                is known is itself the probe: it succeeding (and loading)
 *                means OpenMP works; only when it fails does the separate
 *                probe run (no OpenMP: the request is compiled again
 *                without the flags), so a cold process runs --version and
 *                its compiles, nothing else.
 *                A compiler replaced behind a wrapper script the spec does
 *                not name is not noticed: delete the .probe files then
 *
 * key = SHA-256 of (compiler as named, its resolved path, the first line of
 * its --version, the final flags, the source). Every file is written to a
 * unique temporary name in the same directory (pid + counter, O_EXCL,
 * "*.tmp") and renamed into place, .so before .meta. Temporaries of ours
 * older than STALE_TMP_S (a process killed mid-compile) are swept when a
 * process first uses the directory.
 *
 * Trust (the metadata checksum is not a security boundary; ownership is):
 * the directory must be a real directory (not a symlink) owned by the
 * effective user and not writable by group or others; every entry is
 * opened relative to that directory's fd with O_NOFOLLOW|O_NONBLOCK and
 * must be a regular file owned by the user, not group/other-writable, of
 * bounded size; objects are dlopen'ed through /proc/self/fd/<dirfd>/<name>
 * (the checked directory, whatever happens to its path; the directory's
 * parents are not checked, as in ccache, but a path swapped after the check
 * changes nothing we load; the compiler itself is handed paths). A directory that
 * fails the check is refused with a one-time warning and compiles go to a
 * private mkdtemp directory that is removed after each request (nothing
 * shared); an entry that fails it is a miss (warned once) and is replaced.
 * A non-regular entry that cannot be replaced (a non-empty directory at
 * <key>.so) is compiled beside: the object is loaded from its temporary.
 *
 * A reader trusts an entry only when the meta matches the key and the
 * object's size and SHA-256, and dlopen succeeds; anything else is logged,
 * deleted and rebuilt. Concurrent processes building the same key at worst
 * both compile: each rename publishes a complete, identical file. A hit
 * sets the object's access time; a store that takes the entries past
 * FUSEBOX_CACHE_MAX_MB evicts the least recently used ones (the directory
 * is scanned at a process's first store, and again only when that total
 * plus what the process stored since passes the limit).
 *
 * In-process, one fbxp_shlib per key: a second request while the object is
 * loaded takes a reference; concurrent requests for a key being built wait
 * for the builder instead of compiling it again. The compiler runs in its
 * own process group (killed as a group when the request's deadline passes),
 * with PR_SET_PDEATHSIG on Linux so it dies with us; stdout and stderr are
 * captured through a pipe.
 *
 * Environment (each value validated; a bad one is warned about once, naming
 * the variable, and the default is used; the small parser here is local
 * until the shared fbx_env_* parser lands):
 *   FUSEBOX_CC          compiler, may carry arguments ("ccache gcc"); default cc
 *   FUSEBOX_CACHE_DIR   the cache directory
 *   FUSEBOX_CC_TIMEOUT  seconds for one whole compile request (--version,
 *                       OpenMP probe and compile together), default 120
 *   FUSEBOX_CC_CACHE    0: never read the disk cache (still writes it); 1 (default)
 *   FUSEBOX_CACHE_MAX_MB  size limit of the cache's entries in MiB (fractions
 *                       allowed; default 1024; 0: no limit)
 * Flags are split on blanks (no shell quoting).
 */
#define _GNU_SOURCE /* pipe2 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "base/alloc.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "host/hostimpl.h" /* fbxp_status: the code of a failed speculative compile */
#include "host/services.h"
#include "host/services_cc.h"

extern char **environ;

#define BASE_FLAGS "-O3 -fPIC -shared -std=c11"
#define DIAG_KEEP 4096 /* bytes of compiler output kept for the error message */
#define META_MAGIC "fusebox-cc-cache 1"
#define PROBE_MAGIC "fusebox-cc-probe 1"
#define STALE_TMP_S 600                   /* a temporary this old belongs to a dead process */
#define MAX_META_BYTES (64 * 1024)        /* a .meta or .probe larger than this is not ours */
#define MAX_OBJ_BYTES (1024LL << 20)      /* nor an object larger than 1 GiB */
#define DEFAULT_TIMEOUT_S 120.0
#define DEFAULT_MAX_MB 1024.0

/* ---- small helpers ---------------------------------------------------------------------- */

static atomic_long n_compiles, n_disk_hits, n_memory_hits, n_corrupt, n_failures;
static atomic_uint tmp_counter;

void fbx_svc_cc_get_counters(fbx_svc_cc_counters *out) {
  out->compiles = n_compiles;
  out->disk_hits = n_disk_hits;
  out->memory_hits = n_memory_hits;
  out->corrupt = n_corrupt;
  out->failures = n_failures;
}

static char *fmt_str(const char *fmt, ...) FBX_PRINTF(1, 2);
static char *fmt_str(const char *fmt, ...) {
  fbx_strbuf b = {0};
  va_list ap;
  va_start(ap, fmt);
  fbx_strbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  return fbx_strbuf_take(&b);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static fbxp_status *nomem(void) { return fbx_svc_status(FBXP_ERR_NOMEM, "out of memory"); }

/* Warnings a user must see (stderr, whatever FUSEBOX_LOG says), each distinct
 * text once per process. */
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct warned {
  struct warned *next;
  char text[];
} warned;
static warned *warned_list;

static void warn_once(const char *fmt, ...) FBX_PRINTF(1, 2);
static void warn_once(const char *fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&warn_lock);
  int seen = 0;
  for (warned *w = warned_list; w && !seen; w = w->next) seen = !strcmp(w->text, text);
  if (!seen) {
    warned *w = fbx_malloc(sizeof *w + strlen(text) + 1);
    if (w) { /* out of memory: warned again next time, which is harmless */
      strcpy(w->text, text);
      w->next = warned_list;
      warned_list = w;
    }
    fprintf(stderr, "[fusebox:cache] warning: %s\n", text);
  }
  pthread_mutex_unlock(&warn_lock);
}

/* ---- environment (local parser; to be unified with the shared fbx_env_*) ------------------ */

/* A number from the environment in [lo, hi]; def when unset or empty; def
 * and a one-time warning naming the variable when malformed or out of range. */
static double env_number(const char *name, double def, double lo, double hi, const char *what) {
  const char *s = getenv(name);
  if (!s || !*s) return def;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  while (end && (*end == ' ' || *end == '\t')) end++;
  if (end == s || !end || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
    warn_once("%s='%.64s' is not %s; using %g", name, s, what, def);
    return def;
  }
  return v;
}

static double cc_timeout_s(void) {
  return env_number("FUSEBOX_CC_TIMEOUT", DEFAULT_TIMEOUT_S, 1e-3, 1e6, "a number of seconds in (0, 1e6]");
}

static long long cache_max_bytes(void) {
  double mb = env_number("FUSEBOX_CACHE_MAX_MB", DEFAULT_MAX_MB, 0, 1 << 30, "a number of MiB >= 0");
  return (long long)(mb * 1024.0 * 1024.0);
}

static int disk_cache_on(void) {
  const char *s = getenv("FUSEBOX_CC_CACHE");
  if (!s || !*s || !strcmp(s, "1")) return 1;
  if (!strcmp(s, "0")) return 0;
  warn_once("FUSEBOX_CC_CACHE='%.64s' is not 0 or 1; reading the disk cache", s);
  return 1;
}

/* Blank-separated words of s (NULL s: none). Array and words in one block;
 * NULL-terminated; *count set. NULL on OOM. */
static char **split_words(const char *s, int *count) {
  size_t len = s ? strlen(s) : 0;
  int n = 0;
  for (size_t i = 0; i < len; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && (i == 0 || strchr(" \t\n", s[i - 1]))) n++;
  char **v = fbx_malloc(sizeof(char *) * (size_t)(n + 1) + len + 1);
  if (!v) return NULL;
  char *w = (char *)(v + n + 1);
  if (len) memcpy(w, s, len);
  w[len] = '\0';
  int k = 0;
  for (char *p = w; *p;) {
    while (*p && strchr(" \t\n", *p)) *p++ = '\0';
    if (!*p) break;
    v[k++] = p;
    while (*p && !strchr(" \t\n", *p)) p++;
  }
  v[k] = NULL;
  *count = k;
  return v;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w, n -= (size_t)w;
  }
  return 0;
}

/* mkdir -p with mode 0700 for what it creates. */
static int mkdir_p(const char *dir) {
  char *p = fbx_strdup(dir);
  if (!p) {
    errno = ENOMEM;
    return -1;
  }
  int rc = 0;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0700) != 0 && errno != EEXIST) {
        rc = -1;
        break;
      }
      *s = c;
      if (!c) break;
    }
  }
  int e = errno;
  fbx_free(p);
  errno = e;
  return rc;
}

char *fbx_svc_cc_cache_dir(void) {
  const char *d = getenv("FUSEBOX_CACHE_DIR");
  if (d && *d) {
    if (strlen(d) < PATH_MAX - 128) return fbx_strdup(d);
    warn_once("FUSEBOX_CACHE_DIR is longer than %d bytes; ignoring it", PATH_MAX - 128);
  }
  d = getenv("XDG_CACHE_HOME");
  if (d && *d == '/' && strlen(d) < PATH_MAX - 128) return fmt_str("%s/fusebox", d);
  d = getenv("HOME");
  if (d && *d == '/' && strlen(d) < PATH_MAX - 128) return fmt_str("%s/.cache/fusebox", d);
  /* predictable, so another user may have made it first: it is used only
   * when it passes the same ownership checks as any other cache directory */
  return fmt_str("/tmp/fusebox-cache-%ld", (long)geteuid());
}

/* ---- the cache directory -------------------------------------------------------------------- */

typedef struct cache_dir {
  int fd;       /* the checked directory */
  char *path;   /* its path (for the compiler and messages) */
  int scratch;  /* 1: a private per-request directory, emptied and removed at close */
} cache_dir;

static atomic_int have_proc_fd = -1;

/* The path to hand to dlopen for `name` in d: through the directory's fd
 * where /proc is mounted, so a directory swapped under its path changes
 * nothing. fbx_malloc'd. */
static char *dl_path(const cache_dir *d, const char *name) {
  if (have_proc_fd < 0) have_proc_fd = access("/proc/self/fd", X_OK) == 0;
  if (have_proc_fd) return fmt_str("/proc/self/fd/%d/%s", d->fd, name);
  return fmt_str("%s/%s", d->path, name);
}

static const char *owner_problem(const struct stat *st, char *buf, size_t cap) {
  if (st->st_uid != geteuid()) {
    snprintf(buf, cap, "owned by uid %ld, not by this user (uid %ld)", (long)st->st_uid, (long)geteuid());
    return buf;
  }
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    snprintf(buf, cap, "writable by group or others (mode %04o)", (unsigned)(st->st_mode & 07777));
    return buf;
  }
  return NULL;
}

/* Open `name` in d as a regular file of ours (see the header comment) of at
 * most max_bytes. The fd, or -1: *why NULL for a plain miss (ENOENT) or an
 * I/O error in errno, else the reason it is refused (written into buf). */
static int open_entry(const cache_dir *d, const char *name, long long max_bytes, struct stat *st, const char **why,
                      char *buf, size_t cap) {
  *why = NULL;
  int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) *why = "a symbolic link";
    else if (errno == ENXIO) *why = "a socket or device";
    return -1;
  }
  if (fstat(fd, st) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st->st_mode)) *why = S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO" : "not a regular file";
  else if (!(*why = owner_problem(st, buf, cap)) && st->st_size > max_bytes) {
    snprintf(buf, cap, "%lld bytes, more than an entry can be", (long long)st->st_size);
    *why = buf;
  }
  if (*why) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Read all of an open regular file (at most max bytes) into fbx_malloc'd,
 * NUL-terminated memory. NULL (errno) on failure. */
static char *read_fd(int fd, size_t max, size_t *len_out) {
  char *buf = fbx_malloc(max + 1);
  if (!buf) {
    errno = ENOMEM;
    return NULL;
  }
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, max - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      fbx_free(buf);
      errno = e;
      return NULL;
    }
    if (r == 0 || (n += (size_t)r) == max) break;
  }
  buf[n] = '\0';
  *len_out = n;
  return buf;
}

/* A fresh unique name "<base>.<pid>.<n>.tmp" in d, created empty (0600) with
 * O_EXCL so nobody else can have it. NULL (errno set) on failure. */
static char *make_temp(const cache_dir *d, const char *base) {
  for (int tries = 0; tries < 100; tries++) {
    char *p = fmt_str("%s.%ld.%u.tmp", base, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    if (!p) {
      errno = ENOMEM;
      return NULL;
    }
    int fd = openat(d->fd, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      close(fd);
      return p;
    }
    int e = errno;
    fbx_free(p);
    if (e != EEXIST) {
      errno = e;
      return NULL;
    }
  }
  errno = EEXIST;
  return NULL;
}

/* Write data to `name` in d atomically (temp file + rename). 0 or -1 (errno). */
static int write_atomic(const cache_dir *d, const char *name, const char *data, size_t n) {
  char *tmp = make_temp(d, name);
  if (!tmp) return -1;
  int fd = openat(d->fd, tmp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  int rc = fd < 0 ? -1 : write_all(fd, data, n);
  if (fd >= 0 && close(fd) != 0) rc = -1;
  if (rc == 0 && renameat(d->fd, tmp, d->fd, name) != 0) rc = -1;
  int e = errno;
  if (rc != 0) unlinkat(d->fd, tmp, 0);
  fbx_free(tmp);
  errno = e;
  return rc;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !memcmp(s + n - m, suffix, m);
}

/* A directory stream over d's directory from its start (a dup shares the
 * offset with d->fd, which an earlier scan left at the end). NULL on failure. */
static DIR *open_dir_stream(const cache_dir *d) {
  int fd = dup(d->fd);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  rewinddir(dir);
  return dir;
}

/* What this process knows about each cache directory it used: it was swept
 * (once per process), and the entries' total size as of the last scan plus
 * what this process stored since (-1: not scanned yet), so that a store
 * rescans the directory only when the limit may have been passed. */
typedef struct dir_state {
  struct dir_state *next;
  long long bytes;
  char path[];
} dir_state;
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static dir_state *dirs;

/* The state of path (created; NULL on OOM). Call with dirs_lock held. */
static dir_state *dir_state_of(const char *path, int *created) {
  *created = 0;
  for (dir_state *s = dirs; s; s = s->next)
    if (!strcmp(s->path, path)) return s;
  dir_state *s = fbx_malloc(sizeof *s + strlen(path) + 1);
  if (!s) return NULL;
  strcpy(s->path, path);
  s->bytes = -1;
  s->next = dirs;
  dirs = s;
  *created = 1;
  return s;
}

/* Delete our temporaries older than STALE_TMP_S (left by a killed process). */
static void sweep_once(const cache_dir *d) {
  pthread_mutex_lock(&dirs_lock);
  int created;
  dir_state *s = dir_state_of(d->path, &created);
  pthread_mutex_unlock(&dirs_lock);
  if (s && !created) return; /* out of memory: swept again next time */
  DIR *dir = open_dir_stream(d);
  if (!dir) return;
  time_t now = time(NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (!ends_with(e->d_name, ".tmp")) continue;
    struct stat st;
    if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || now - st.st_mtime < STALE_TMP_S) continue;
    if (unlinkat(d->fd, e->d_name, 0) == 0) n++;
  }
  closedir(dir);
  if (n) fbx_log(FBX_LOG_CACHE, "cc: swept %d stale temporary file(s) from %s", n, d->path);
}

/* A private directory for one request when the cache cannot be used. */
static int open_scratch(cache_dir *d) {
  const char *t = getenv("TMPDIR");
  char *tmpl = fmt_str("%s/fusebox-cc-XXXXXX", t && *t == '/' && strlen(t) < PATH_MAX - 64 ? t : "/tmp");
  if (!tmpl) return -1;
  if (!mkdtemp(tmpl)) {
    fbx_free(tmpl);
    return -1;
  }
  d->fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d->fd < 0) {
    rmdir(tmpl);
    fbx_free(tmpl);
    return -1;
  }
  d->path = tmpl;
  d->scratch = 1;
  return 0;
}

/* The directory for this request: the cache if it passes the checks, else
 * a private scratch directory. */
static fbxp_status *cache_open(cache_dir *d) {
  d->fd = -1;
  d->path = NULL;
  d->scratch = 0;
  char *want = fbx_svc_cc_cache_dir();
  if (!want) return nomem();
  char buf[160];
  const char *why = NULL; /* NULL: usable */
  int planted = 0;
  int fd = -1;
  if (mkdir_p(want) != 0) {
    if (errno == ENOMEM) {
      fbx_free(want);
      return nomem();
    }
    why = strerror(errno);
  } else if ((fd = open(want, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
    int e = errno;
    struct stat lst; /* O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR on Linux */
    planted = e == ELOOP || (lstat(want, &lst) == 0 && S_ISLNK(lst.st_mode));
    why = planted ? "it is a symbolic link" : strerror(e);
  } else {
    struct stat st;
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if ((why = owner_problem(&st, buf, sizeof buf))) planted = 1;
    else if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) why = strerror(errno);
  }
  if (!why) {
    d->fd = fd;
    d->path = want;
    sweep_once(d);
    return NULL;
  }
  if (fd >= 0) close(fd);
  if (planted)
    warn_once("not using the kernel cache directory %s: %s; compiling without the disk cache", want, why);
  else
    fbx_log(FBX_LOG_CACHE, "cc: cache directory %s unusable (%s); compiling into a private directory, not shared",
            want, why);
  if (open_scratch(d) != 0) {
    fbxp_status *st = errno == ENOMEM ? nomem()
                                      : fbx_svc_status(FBXP_ERR_INTERNAL,
                                                       "no usable cache directory (%s: %s; private directory: %s); "
                                                       "set FUSEBOX_CACHE_DIR",
                                                       want, why, strerror(errno));
    fbx_free(want);
    return st;
  }
  fbx_free(want);
  return NULL;
}

/* Close; a scratch directory is emptied and removed (loaded objects stay mapped). */
static void cache_close(cache_dir *d) {
  if (d->fd >= 0 && d->scratch) {
    DIR *dir = open_dir_stream(d);
    if (dir) {
      struct dirent *e;
      while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlinkat(d->fd, e->d_name, 0);
      closedir(dir);
    }
    if (rmdir(d->path) != 0) fbx_log(FBX_LOG_CACHE, "cc: cannot remove %s: %s", d->path, strerror(errno));
  }
  if (d->fd >= 0) close(d->fd);
  fbx_free(d->path);
  d->fd = -1;
  d->path = NULL;
}

/* ---- running a program ------------------------------------------------------------------ */

typedef struct run_result {
  int spawn_errno; /* nonzero: the program could not be started */
  int timed_out;
  int exit_code;   /* exit status, or 128 + signal */
  char *out;       /* first DIAG_KEEP bytes of stdout+stderr (fbx_malloc'd, NUL-terminated) */
  int truncated;
} run_result;

/* Run exe with argv, stdin from /dev/null and stdout+stderr into a pipe, in
 * its own process group that dies with this thread (PR_SET_PDEATHSIG);
 * SIGKILL the group when deadline (now_ms() clock) passes. */
static void run_capture(const char *exe, char *const argv[], double deadline, run_result *r) {
  memset(r, 0, sizeof *r);
  r->out = fbx_malloc(DIAG_KEEP + 1);
  if (!r->out) {
    r->spawn_errno = ENOMEM;
    return;
  }
  r->out[0] = '\0';
  if (deadline - now_ms() <= 0) {
    r->timed_out = 1;
    return;
  }
  int fds[2], errp[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r->spawn_errno = errno;
    return;
  }
  if (pipe2(errp, O_CLOEXEC) != 0) {
    r->spawn_errno = errno;
    close(fds[0]);
    close(fds[1]);
    return;
  }
  struct sigaction sa_dfl;
  memset(&sa_dfl, 0, sizeof sa_dfl);
  sa_dfl.sa_handler = SIG_DFL;
  sigset_t none;
  sigemptyset(&none);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) { /* async-signal-safe calls only from here on */
    setpgid(0, 0);
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(127); /* the parent died before prctl */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0) {
      int e = errno;
      (void)!write(errp[1], &e, sizeof e);
      _exit(127);
    }
    if (nul > 2) close(nul);
    for (int s = 1; s < NSIG; s++)
      if (s != SIGKILL && s != SIGSTOP) sigaction(s, &sa_dfl, NULL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(exe, argv, environ);
    int e = errno;
    (void)!write(errp[1], &e, sizeof e);
    _exit(127);
  }
  int fork_errno = errno;
  close(fds[1]);
  close(errp[1]);
  if (pid < 0) {
    close(fds[0]);
    close(errp[0]);
    r->spawn_errno = fork_errno;
    return;
  }
  setpgid(pid, 0); /* also from here, so that kill(-pid) works before the child ran */
  int child_errno = 0;
  ssize_t en;
  while ((en = read(errp[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  close(errp[0]);
  if (en == (ssize_t)sizeof child_errno) {
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    r->spawn_errno = child_errno ? child_errno : ENOEXEC;
    return;
  }
  size_t n = 0;
  char chunk[4096];
  for (;;) {
    double left = deadline - now_ms();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      r->timed_out = 1;
      break;
    }
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int pr = poll(&pfd, 1, left > 1e6 ? 1000000 : (int)left + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pr == 0) continue;
    ssize_t got = read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* EOF: every writer (the whole group) is done */
    size_t take = (size_t)got;
    if (n + take > DIAG_KEEP) {
      take = DIAG_KEEP - n;
      r->truncated = 1;
    }
    memcpy(r->out + n, chunk, take);
    n += take;
    r->out[n] = '\0';
  }
  close(fds[0]);
  int st = 0;
  pid_t w;
  while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
  }
  if (w < 0) r->exit_code = -1; /* SIGCHLD ignored by the application: status unknown */
  else if (WIFEXITED(st)) r->exit_code = WEXITSTATUS(st);
  else if (WIFSIGNALED(st)) r->exit_code = 128 + WTERMSIG(st);
  else r->exit_code = -1;
}

static char *join_argv(char *const argv[]) {
  fbx_strbuf b = {0};
  for (int i = 0; argv[i]; i++) {
    if (i) fbx_strbuf_putc(&b, ' ');
    fbx_strbuf_puts(&b, argv[i]);
  }
  return fbx_strbuf_take(&b);
}

/* ---- the compiler ------------------------------------------------------------------------ */

/* What we know about one FUSEBOX_CC value (kept for the process). */
typedef struct cc_info {
  struct cc_info *next;
  char *spec;     /* FUSEBOX_CC as given */
  char **argv;    /* its words */
  int argc;
  char *path;     /* resolved argv[0] (what is executed) */
  char *version;  /* first line of --version */
  char probe_name[80]; /* cc-<id>.probe: its identity in the cache directory */
  int openmp;     /* -1 not probed, 0 dropped, 1 works */
  int openmp_unknown; /* the probe could not run (timeout): not asked again in this process */
} cc_info;

static pthread_mutex_t cc_lock = PTHREAD_MUTEX_INITIALIZER;  /* the cc_info list */
static pthread_mutex_t omp_lock = PTHREAD_MUTEX_INITIALIZER; /* one OpenMP probe at a time */
static cc_info *cc_infos;

static const char *cc_spec(void) {
  const char *s = getenv("FUSEBOX_CC");
  return s && *s ? s : "cc";
}

static char *resolve_program(const char *name) {
  char buf[PATH_MAX];
  if (strchr(name, '/')) return realpath(name, buf) ? fbx_strdup(buf) : NULL;
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    size_t n = strcspn(p, ":");
    char cand[PATH_MAX];
    if (n > 0 && n + strlen(name) + 2 < sizeof cand) {
      snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name);
      if (access(cand, X_OK) == 0 && realpath(cand, buf)) return fbx_strdup(buf);
    }
    p += n;
    if (*p == ':') p++;
  }
  return NULL;
}

static void cc_info_free(cc_info *ci) {
  if (!ci) return;
  fbx_free(ci->spec);
  fbx_free(ci->argv);
  fbx_free(ci->path);
  fbx_free(ci->version);
  fbx_free(ci);
}

/* Read the compiler's probe file: version and OpenMP verdict. 1 when found. */
static int probe_read(const cache_dir *d, cc_info *ci) {
  struct stat st;
  const char *why;
  char buf[160];
  int fd = open_entry(d, ci->probe_name, MAX_META_BYTES, &st, &why, buf, sizeof buf);
  if (fd < 0) {
    if (why) warn_once("ignoring %s/%s: %s", d->path, ci->probe_name, why);
    return 0;
  }
  size_t n;
  char *text = read_fd(fd, MAX_META_BYTES, &n);
  close(fd);
  if (!text) return 0;
  int ok = 0;
  const char *v = strstr(text, "\nversion ");
  const char *o = strstr(text, "\nopenmp ");
  if (!strncmp(text, PROBE_MAGIC "\n", sizeof PROBE_MAGIC) && v && o) {
    v += 9;
    char *ver = fbx_malloc(strcspn(v, "\n") + 1);
    if (ver) {
      memcpy(ver, v, strcspn(v, "\n"));
      ver[strcspn(v, "\n")] = '\0';
      int omp = atoi(o + 8);
      ci->version = ver;
      ci->openmp = omp == 0 || omp == 1 ? omp : -1;
      ok = 1;
    }
  }
  fbx_free(text);
  return ok;
}

static void probe_write(const cache_dir *d, const cc_info *ci) {
  char *text = fmt_str(PROBE_MAGIC "\nversion %s\nopenmp %d\ncc %s\ncc-path %s\n", ci->version, ci->openmp, ci->spec,
                       ci->path);
  if (text && write_atomic(d, ci->probe_name, text, strlen(text)) != 0)
    fbx_log(FBX_LOG_CACHE, "cc: cannot write %s/%s: %s", d->path, ci->probe_name, strerror(errno));
  fbx_free(text);
}

/* The cc_info for the current FUSEBOX_CC: from memory, from its probe file
 * in the cache directory, or by running --version (within the deadline). */
static fbxp_status *get_cc(const cache_dir *d, double deadline, cc_info **out) {
  const char *spec = cc_spec();
  pthread_mutex_lock(&cc_lock);
  for (cc_info *ci = cc_infos; ci; ci = ci->next)
    if (!strcmp(ci->spec, spec)) {
      pthread_mutex_unlock(&cc_lock);
      *out = ci;
      return NULL;
    }
  fbxp_status *st = NULL;
  cc_info *ci = fbx_calloc(1, sizeof *ci);
  if (!ci || !(ci->spec = fbx_strdup(spec)) || !(ci->argv = split_words(spec, &ci->argc))) {
    st = nomem();
    goto done;
  }
  ci->openmp = -1;
  if (ci->argc == 0) {
    st = fbx_svc_status(FBXP_ERR_UNSUPPORTED, "FUSEBOX_CC is blank");
    goto done;
  }
  ci->path = resolve_program(ci->argv[0]);
  struct stat cst;
  if (!ci->path || stat(ci->path, &cst) != 0 || !S_ISREG(cst.st_mode)) {
    st = fbx_svc_status(FBXP_ERR_UNSUPPORTED, "C compiler '%s' not found%s (FUSEBOX_CC=%s)", ci->argv[0],
                        strchr(ci->argv[0], '/') ? "" : " on PATH", spec);
    goto done;
  }
  {
    /* the spec, and the file identity of every word of it that names a
     * program (the compiler, or a wrapper and the compiler: "ccache gcc") */
    fbx_strbuf id = {0};
    fbx_strbuf_printf(&id, "fusebox-cc-probe 1\n%s\n", spec);
    for (int i = 0; i < ci->argc; i++) {
      char *wp = i == 0 ? ci->path : ci->argv[i][0] == '-' ? NULL : resolve_program(ci->argv[i]);
      struct stat wst;
      if (wp && stat(wp, &wst) == 0 && S_ISREG(wst.st_mode))
        fbx_strbuf_printf(&id, "%s %lld %lld %lld %lld.%09ld\n", wp, (long long)wst.st_dev, (long long)wst.st_ino,
                          (long long)wst.st_size, (long long)wst.st_mtim.tv_sec, (long)wst.st_mtim.tv_nsec);
      if (i > 0) fbx_free(wp);
    }
    if (!id.data || id.oom) {
      fbx_strbuf_free(&id);
      st = nomem();
      goto done;
    }
    char hex[FBX_SHA256_HEX_LEN + 1];
    fbx_sha256_hex(hex, id.data, id.len);
    fbx_strbuf_free(&id);
    snprintf(ci->probe_name, sizeof ci->probe_name, "cc-%.32s.probe", hex);
  }
  if (probe_read(d, ci)) {
    fbx_log(FBX_LOG_CACHE, "cc: %s = %s (%s; from %s)", spec, ci->path, ci->version, ci->probe_name);
  } else {
    char **vargv = fbx_malloc(sizeof(char *) * (size_t)(ci->argc + 2));
    if (!vargv) {
      st = nomem();
      goto done;
    }
    memcpy(vargv, ci->argv, sizeof(char *) * (size_t)ci->argc);
    vargv[ci->argc] = "--version";
    vargv[ci->argc + 1] = NULL;
    run_result r;
    run_capture(ci->path, vargv, deadline, &r);
    fbx_free(vargv);
    if (r.spawn_errno) {
      st = r.spawn_errno == ENOMEM ? nomem()
                                   : fbx_svc_status(FBXP_ERR_UNSUPPORTED, "cannot run C compiler '%s' (FUSEBOX_CC=%s): %s",
                                                    ci->path, spec, strerror(r.spawn_errno));
      fbx_free(r.out);
      goto done;
    }
    if (r.timed_out) {
      st = fbx_svc_status(FBXP_ERR_COMPILE, "C compiler timed out: '%s --version' did not finish within the %g s of "
                                            "FUSEBOX_CC_TIMEOUT",
                          spec, cc_timeout_s());
      fbx_free(r.out);
      goto done;
    }
    r.out[strcspn(r.out, "\n")] = '\0';
    ci->version = r.out;
    if (r.exit_code != 0 || !*ci->version)
      fbx_log(FBX_LOG_CACHE, "cc: '%s --version' exited %d; keying the cache on the path only", spec, r.exit_code);
    fbx_log(FBX_LOG_CACHE, "cc: %s = %s (%s)", spec, ci->path, ci->version);
    probe_write(d, ci);
  }
  ci->next = cc_infos;
  cc_infos = ci;
  *out = ci;
  ci = NULL;
done:
  pthread_mutex_unlock(&cc_lock);
  cc_info_free(ci);
  return st;
}

int fbx_svc_cc_openmp_state(void) {
  const char *spec = cc_spec();
  int s = -1;
  pthread_mutex_lock(&cc_lock);
  for (cc_info *ci = cc_infos; ci; ci = ci->next)
    if (!strcmp(ci->spec, spec)) s = ci->openmp;
  pthread_mutex_unlock(&cc_lock);
  return s;
}

/* Run the compiler on src_path -> out_path; r filled (see run_capture), and
 * *cmd (if cmd) the command line for messages. 0, or -1 on OOM. */
static int run_compiler_raw(cc_info *ci, char **flagv, int nflags, const char *src_path, const char *out_path,
                            double deadline, run_result *r, char **cmd) {
  int nbase;
  char **base = split_words(BASE_FLAGS, &nbase);
  char **argv = fbx_malloc(sizeof(char *) * (size_t)(ci->argc + nbase + nflags + 8));
  if (!base || !argv) {
    fbx_free(base);
    fbx_free(argv);
    return -1;
  }
  int k = 0;
  for (int i = 0; i < ci->argc; i++) argv[k++] = ci->argv[i];
  for (int i = 0; i < nbase; i++) argv[k++] = base[i];
  argv[k++] = "-o";
  argv[k++] = (char *)out_path;
  int as_c = !ends_with(src_path, ".c"); /* a temporary name: say what it is */
  if (as_c) argv[k++] = "-x", argv[k++] = "c";
  argv[k++] = (char *)src_path;
  if (as_c) argv[k++] = "-x", argv[k++] = "none";
  /* after the source, so that -l options resolve its symbols */
  for (int i = 0; i < nflags; i++) argv[k++] = flagv[i];
  argv[k] = NULL;
  run_capture(ci->path, argv, deadline, r);
  if (cmd) *cmd = join_argv(argv);
  fbx_free(argv);
  fbx_free(base);
  return r->spawn_errno == ENOMEM ? -1 : 0;
}

/* Compile `src_path` to `out_path`. NULL or an error status carrying the
 * command line and the compiler's output. */
static fbxp_status *run_compiler(cc_info *ci, char **flagv, int nflags, const char *src_path, const char *out_path,
                                 double deadline) {
  run_result r;
  char *cmd = NULL;
  fbxp_status *st = NULL;
  if (run_compiler_raw(ci, flagv, nflags, src_path, out_path, deadline, &r, &cmd) != 0)
    st = nomem();
  else if (r.spawn_errno)
    st = fbx_svc_status(r.spawn_errno == ENOENT ? FBXP_ERR_UNSUPPORTED : FBXP_ERR_COMPILE,
                        "cannot run C compiler '%s': %s\ncommand: %s", ci->argv[0], strerror(r.spawn_errno),
                        cmd ? cmd : "?");
  else if (r.timed_out)
    st = fbx_svc_status(FBXP_ERR_COMPILE,
                        "C compiler timed out: the compile request took more than %g s (FUSEBOX_CC_TIMEOUT)\n"
                        "command: %s",
                        cc_timeout_s(), cmd ? cmd : "?");
  else if (r.exit_code != 0)
    st = fbx_svc_status(FBXP_ERR_COMPILE, "C compiler failed (exit status %d)\ncommand: %s\n%s%s", r.exit_code,
                        cmd ? cmd : "?", r.out ? r.out : "", r.truncated ? "\n[... output truncated]" : "");
  else if (r.out && *r.out)
    fbx_log(FBX_LOG_CACHE, "cc: compiler said: %s", r.out);
  fbx_free(cmd);
  fbx_free(r.out);
  return st;
}

/* dlopen an object. OpenMP runtimes park worker threads in their own code:
 * unloading one (when the last kernel that needed it is released) would
 * leave those threads running unmapped code, so a runtime the object pulled
 * in is pinned (RTLD_NODELETE) for the life of the process. */
static void *load_object(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  static const char *const runtimes[] = {"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so"};
  for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
    void *rt = dlopen(runtimes[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (rt) dlclose(rt);
  }
  return h;
}


/* Does -fopenmp work with this compiler (compile and load a tiny program)?
 * 1 or 0, decided once per compiler identity from what the compiler did (a
 * "no" is logged once) and kept in its probe file; -1 when out of memory. A
 * probe that could not run (I/O error, timeout) decides nothing on disk:
 * this process goes without OpenMP and does not ask again. */
static int openmp_works(cc_info *ci, const cache_dir *d, double deadline) {
  pthread_mutex_lock(&omp_lock);
  if (ci->openmp >= 0 || ci->openmp_unknown) {
    int s = ci->openmp > 0;
    pthread_mutex_unlock(&omp_lock);
    return s;
  }
  static const char probe[] = "#include <omp.h>\n"
                              "int fbx_omp_probe(void) {\n"
                              "  int s = 0;\n"
                              "#pragma omp parallel for reduction(+ : s)\n"
                              "  for (int i = 0; i < 4; i++) s += i;\n"
                              "  return s + omp_get_max_threads();\n"
                              "}\n";
  char *src = NULL, *obj = NULL, *src_path = NULL, *obj_path = NULL, *obj_dl = NULL;
  char why[DIAG_KEEP + 64] = "";
  int verdict = -1, oom = 0;
  if ((src = make_temp(d, "openmp-probe")) && (obj = make_temp(d, "openmp-probe")) &&
      (src_path = fmt_str("%s/%s", d->path, src)) &&
      (obj_path = fmt_str("%s/%s", d->path, obj)) && (obj_dl = dl_path(d, obj))) {
    run_result r = {0};
    char *flag = "-fopenmp";
    if (write_atomic(d, src, probe, sizeof probe - 1) != 0) {
      oom = errno == ENOMEM;
      snprintf(why, sizeof why, "%s", strerror(errno));
    } else if (run_compiler_raw(ci, &flag, 1, src_path, obj_path, deadline, &r, NULL) != 0) {
      oom = 1;
    } else if (r.spawn_errno || r.timed_out) {
      snprintf(why, sizeof why, "%s", r.spawn_errno ? strerror(r.spawn_errno) : "the compiler timed out");
    } else if (r.exit_code != 0) {
      verdict = 0;
      snprintf(why, sizeof why, "%s", r.out);
    } else {
      void *h = load_object(obj_dl);
      verdict = h != NULL;
      if (h) {
        dlclose(h);
      } else {
        const char *e = dlerror();
        snprintf(why, sizeof why, "the object does not load: %s", e ? e : "?");
      }
    }
    fbx_free(r.out);
  } else {
    oom = (src && obj) || errno == ENOMEM; /* past the temporaries only an allocation can fail */
    snprintf(why, sizeof why, "%s", strerror(oom ? ENOMEM : errno));
  }
  if (verdict == 1)
    fbx_log(FBX_LOG_CACHE, "cc: OpenMP works with '%s'", ci->spec);
  else if (verdict == 0) /* on the fusion channel: a plugin asked for OpenMP and gets serial code */
    fbx_log(FBX_LOG_FUSION, "cc: OpenMP unavailable with '%s', dropping -fopenmp from every compile: %s", ci->spec,
            why);
  else if (!oom)
    fbx_log(FBX_LOG_FUSION, "cc: cannot probe OpenMP with '%s' (%s); compiling without -fopenmp in this process",
            ci->spec, why);
  if (src) unlinkat(d->fd, src, 0);
  if (obj) unlinkat(d->fd, obj, 0);
  fbx_free(src);
  fbx_free(obj);
  fbx_free(src_path);
  fbx_free(obj_path);
  fbx_free(obj_dl);
  if (verdict >= 0) {
    ci->openmp = verdict;
    probe_write(d, ci);
  } else if (!oom) {
    ci->openmp_unknown = 1;
  }
  pthread_mutex_unlock(&omp_lock);
  return oom ? -1 : verdict > 0;
}

/* A compile that asked for OpenMP before the compiler's verdict was known
 * succeeded and its object loaded: OpenMP works (kept in the probe file,
 * so no process runs the probe for this compiler). */
static void openmp_confirmed(cc_info *ci, const cache_dir *d) {
  pthread_mutex_lock(&omp_lock);
  if (ci->openmp < 0 && !ci->openmp_unknown) {
    ci->openmp = 1;
    fbx_log(FBX_LOG_CACHE, "cc: OpenMP works with '%s' (a compile with -fopenmp loaded)", ci->spec);
    probe_write(d, ci);
  }
  pthread_mutex_unlock(&omp_lock);
}

/* ---- loaded objects ------------------------------------------------------------------------ */

struct fbxp_shlib {
  struct fbxp_shlib *next;
  char key[FBX_SHA256_HEX_LEN + 1];
  void *handle; /* NULL while being built */
  int refs;
};

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lib_built = PTHREAD_COND_INITIALIZER;
static fbxp_shlib *libs;

static fbxp_shlib *find_lib(const char *key) {
  for (fbxp_shlib *l = libs; l; l = l->next)
    if (!strcmp(l->key, key)) return l;
  return NULL;
}

static void unlink_lib(fbxp_shlib *lib) {
  for (fbxp_shlib **p = &libs; *p; p = &(*p)->next)
    if (*p == lib) {
      *p = lib->next;
      return;
    }
}

void *fbx_svc_shlib_symbol(fbxp_shlib *lib, const char *name) {
  if (!lib || !name || !lib->handle) return NULL;
  return dlsym(lib->handle, name);
}

void fbx_svc_shlib_release(fbxp_shlib *lib) {
  if (!lib) return;
  pthread_mutex_lock(&lib_lock);
  int last = --lib->refs == 0;
  if (last) unlink_lib(lib);
  pthread_mutex_unlock(&lib_lock);
  if (!last) return;
  dlclose(lib->handle);
  fbx_free(lib);
}

/* ---- the disk cache ----------------------------------------------------------------------- */

typedef struct entry_names {
  char so[80], meta[80], src[80];
} entry_names;

static void names_make(entry_names *n, const char *key) {
  snprintf(n->so, sizeof n->so, "%s.so", key);
  snprintf(n->meta, sizeof n->meta, "%s.meta", key);
  snprintf(n->src, sizeof n->src, "%s.c", key);
}

static int fd_sha256(int fd, char hex[FBX_SHA256_HEX_LEN + 1], long long *size) {
  if (lseek(fd, 0, SEEK_SET) != 0) return -1;
  fbx_sha256 h;
  fbx_sha256_init(&h);
  char buf[16384];
  long long n = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    fbx_sha256_update(&h, buf, (size_t)r);
    n += r;
  }
  fbx_sha256_final_hex(&h, hex);
  *size = n;
  return 0;
}

/* The value of "name <value>" in meta text, copied into out; 0 if absent. */
static int meta_field(const char *meta, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  for (const char *p = meta; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (!strncmp(p, name, nl) && p[nl] == ' ') {
      size_t n = strcspn(p + nl + 1, "\n");
      if (n >= cap) return 0;
      memcpy(out, p + nl + 1, n);
      out[n] = '\0';
      return 1;
    }
  }
  return 0;
}

static void drop_corrupt(const cache_dir *d, const entry_names *n, const char *key, const char *why) {
  fbx_log(FBX_LOG_CACHE, "cc: corrupt cache entry %.12s (%s): deleting and rebuilding", key, why);
  atomic_fetch_add(&n_corrupt, 1);
  unlinkat(d->fd, n->meta, 0);
  unlinkat(d->fd, n->so, 0);
}

/* Load <key>.so if the entry is ours, complete and intact. Returns the
 * dlopen handle, or NULL (a miss; a corrupt entry was deleted, a refused
 * one is left to be replaced by the store). */
static void *cache_load(const cache_dir *d, const entry_names *n, const char *key) {
  struct stat st;
  const char *refuse;
  char buf[160];
  int so = open_entry(d, n->so, MAX_OBJ_BYTES, &st, &refuse, buf, sizeof buf);
  if (so < 0) {
    if (refuse) warn_once("ignoring cache entry %s/%s: %s", d->path, n->so, refuse);
    return NULL;
  }
  int mfd = open_entry(d, n->meta, MAX_META_BYTES, &st, &refuse, buf, sizeof buf);
  if (mfd < 0) {
    if (refuse) warn_once("ignoring cache entry %s/%s: %s", d->path, n->meta, refuse);
    else if (errno == ENOENT)
      fbx_log(FBX_LOG_CACHE, "cc: %.12s.so has no meta (being written, or a writer died): recompiling", key);
    close(so);
    return NULL;
  }
  size_t mlen;
  char *meta = read_fd(mfd, MAX_META_BYTES, &mlen);
  close(mfd);
  char *so_dl = meta ? dl_path(d, n->so) : NULL;
  if (!so_dl) { /* out of memory or an I/O error: a miss */
    fbx_free(meta);
    close(so);
    return NULL;
  }
  char mkey[80], msize[32], msha[80], why[256];
  long long size;
  char sha[FBX_SHA256_HEX_LEN + 1];
  void *h = NULL;
  if (strncmp(meta, META_MAGIC "\n", sizeof META_MAGIC) != 0 || !meta_field(meta, "key", mkey, sizeof mkey) ||
      !meta_field(meta, "so-size", msize, sizeof msize) || !meta_field(meta, "so-sha256", msha, sizeof msha)) {
    snprintf(why, sizeof why, "unreadable meta");
  } else if (strcmp(mkey, key) != 0) {
    snprintf(why, sizeof why, "meta is for key %.12s", mkey);
  } else if (fd_sha256(so, sha, &size) != 0) {
    snprintf(why, sizeof why, "cannot read object: %s", strerror(errno));
  } else if (size != strtoll(msize, NULL, 10)) {
    snprintf(why, sizeof why, "object is %lld bytes, meta says %s", size, msize);
  } else if (strcmp(sha, msha) != 0) {
    snprintf(why, sizeof why, "object checksum does not match its meta");
  } else if (!(h = load_object(so_dl))) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "dlopen failed: %s", e ? e : "?");
  }
  fbx_free(meta);
  fbx_free(so_dl);
  if (h) { /* least recently used = oldest access time: touch on hit */
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    futimens(so, ts);
  }
  close(so);
  if (!h) drop_corrupt(d, n, key, why);
  return h;
}

typedef struct lru_entry {
  char key[FBX_SHA256_HEX_LEN + 1];
  struct timespec atime; /* the object's; for a key without one, its newest part's */
  long long bytes;
  int has_so;
} lru_entry;

static int ts_before(struct timespec a, struct timespec b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

static int key_cmp(const void *a, const void *b) { return strcmp(((const lru_entry *)a)->key, ((const lru_entry *)b)->key); }

static int lru_cmp(const void *a, const void *b) {
  const lru_entry *x = a, *y = b;
  if (ts_before(x->atime, y->atime)) return -1;
  if (ts_before(y->atime, x->atime)) return 1;
  return strcmp(x->key, y->key);
}

/* The key of an entry part "<64 hex>.so|.meta|.c"; *is_so set. 0 if not one. */
static int part_key(const char *name, int *is_so) {
  if (strlen(name) < FBX_SHA256_HEX_LEN + 2) return 0;
  for (int i = 0; i < FBX_SHA256_HEX_LEN; i++)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
  const char *ext = name + FBX_SHA256_HEX_LEN;
  *is_so = !strcmp(ext, ".so");
  return *is_so || !strcmp(ext, ".meta") || !strcmp(ext, ".c");
}

/* Keep the entries (<key>.so/.meta/.c of ours, counted together, a lone
 * .c of a failed compile included) within FUSEBOX_CACHE_MAX_MB, deleting
 * the least recently used ones but never `keep`. */
static void evict(const cache_dir *d, const char *keep, long long added) {
  long long max = cache_max_bytes();
  if (max <= 0) return;
  pthread_mutex_lock(&dirs_lock);
  int created;
  dir_state *s = dir_state_of(d->path, &created);
  if (s && s->bytes >= 0 && (s->bytes += added) <= max) {
    pthread_mutex_unlock(&dirs_lock);
    return; /* under the limit as far as this process can tell */
  }
  pthread_mutex_unlock(&dirs_lock);
  DIR *dir = open_dir_stream(d);
  if (!dir) return;
  lru_entry *v = NULL; /* one per part first, merged per key below */
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    int is_so;
    if (!part_key(e->d_name, &is_so)) continue;
    struct stat st;
    if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      lru_entry *nv = fbx_realloc(v, nc * sizeof *v);
      if (!nv) break; /* out of memory: evict among what was seen */
      v = nv;
      cap = nc;
    }
    lru_entry *x = &v[n++];
    memcpy(x->key, e->d_name, FBX_SHA256_HEX_LEN);
    x->key[FBX_SHA256_HEX_LEN] = '\0';
    x->atime = st.st_atim;
    x->bytes = (long long)st.st_size;
    x->has_so = is_so;
  }
  closedir(dir);
  if (n) qsort(v, n, sizeof *v, key_cmp);
  size_t m = 0;
  long long total = 0;
  for (size_t i = 0; i < n; i++) {
    total += v[i].bytes;
    if (m && !strcmp(v[m - 1].key, v[i].key)) {
      lru_entry *y = &v[m - 1];
      y->bytes += v[i].bytes;
      if (v[i].has_so) y->atime = v[i].atime, y->has_so = 1;
      else if (!y->has_so && ts_before(y->atime, v[i].atime)) y->atime = v[i].atime;
    } else {
      v[m++] = v[i];
    }
  }
  if (total > max && m > 0) {
    qsort(v, m, sizeof *v, lru_cmp);
    int dropped = 0;
    for (size_t i = 0; i < m && total > max; i++) {
      if (!strcmp(v[i].key, keep)) continue;
      entry_names nm;
      names_make(&nm, v[i].key);
      unlinkat(d->fd, nm.meta, 0); /* meta first: a reader never trusts a .so without it */
      unlinkat(d->fd, nm.so, 0);
      unlinkat(d->fd, nm.src, 0);
      total -= v[i].bytes;
      dropped++;
    }
    fbx_log(FBX_LOG_CACHE, "cc: evicted %d least recently used entr%s (FUSEBOX_CACHE_MAX_MB)", dropped,
            dropped == 1 ? "y" : "ies");
  }
  fbx_free(v);
  pthread_mutex_lock(&dirs_lock);
  if (s) s->bytes = total;
  pthread_mutex_unlock(&dirs_lock);
}

/* Something that is not a regular file of ours sits at `name`: remove it if
 * that can be done safely (an empty directory; anything else rename
 * replaces). 0 when the name is free for a rename. */
static int clear_obstruction(const cache_dir *d, const char *name) {
  struct stat st;
  if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : -1;
  if (S_ISDIR(st.st_mode)) return unlinkat(d->fd, name, AT_REMOVEDIR);
  return 0;
}

/* Compile into the entry's names (temp + rename), write the meta, load. */
static fbxp_status *build_entry(cc_info *ci, char **flagv, int nflags, const char *flags_str, const char *source,
                                const cache_dir *d, const entry_names *n, const char *key, double deadline,
                                void **handle) {
  /* the source at its key's name; if something there cannot be replaced
   * (a non-empty directory), at a temporary name (then the object may differ
   * between processes in the file name GCC records, which is harmless) */
  char *src_tmp = NULL;
  if (clear_obstruction(d, n->src) != 0 || write_atomic(d, n->src, source, strlen(source)) != 0) {
    int fd = -1;
    if (errno == ENOMEM || !(src_tmp = make_temp(d, n->src)) ||
        (fd = openat(d->fd, src_tmp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        write_all(fd, source, strlen(source)) != 0) {
      int e = errno;
      if (fd >= 0) close(fd);
      if (src_tmp) unlinkat(d->fd, src_tmp, 0);
      fbx_free(src_tmp);
      return e == ENOMEM ? nomem()
                         : fbx_svc_status(FBXP_ERR_INTERNAL, "cannot write %s/%s: %s", d->path, n->src, strerror(e));
    }
    close(fd);
  }
  char *tmp = make_temp(d, n->so);
  if (!tmp) {
    int e = errno;
    if (src_tmp) unlinkat(d->fd, src_tmp, 0);
    fbx_free(src_tmp);
    return e == ENOMEM ? nomem()
                       : fbx_svc_status(FBXP_ERR_INTERNAL, "cannot create a temporary file in %s: %s", d->path,
                                        strerror(e));
  }
  char *src_path = fmt_str("%s/%s", d->path, src_tmp ? src_tmp : n->src), *tmp_path = fmt_str("%s/%s", d->path, tmp);
  double t0 = now_ms();
  fbxp_status *st = src_path && tmp_path ? run_compiler(ci, flagv, nflags, src_path, tmp_path, deadline) : nomem();
  fbx_free(src_path);
  fbx_free(tmp_path);
  if (src_tmp) {
    unlinkat(d->fd, src_tmp, 0);
    fbx_free(src_tmp);
  }
  char sha[FBX_SHA256_HEX_LEN + 1];
  long long size = 0;
  int fd = -1, beside = 0;
  if (!st) {
    struct stat sst;
    const char *why;
    char buf[160];
    /* the linker made it anew with the umask's mode (0777 under umask 0) */
    fchmodat(d->fd, tmp, 0600, 0);
    fd = open_entry(d, tmp, MAX_OBJ_BYTES, &sst, &why, buf, sizeof buf);
    if (fd < 0 || fd_sha256(fd, sha, &size) != 0 || size == 0)
      st = fbx_svc_status(FBXP_ERR_COMPILE, "C compiler succeeded but left no usable object at %s/%s%s%s", d->path,
                          tmp, why ? ": " : "", why ? why : "");
  }
  if (!st && renameat(d->fd, tmp, d->fd, n->so) != 0) {
    if (clear_obstruction(d, n->so) == 0 && renameat(d->fd, tmp, d->fd, n->so) == 0) {
      fbx_log(FBX_LOG_CACHE, "cc: replaced a non-file at %s/%s", d->path, n->so);
    } else {
      warn_once("cannot store %s/%s (%s); compiling that kernel beside it, uncached", d->path, n->so,
                strerror(errno));
      beside = 1;
    }
  }
  if (st) {
    if (fd >= 0) close(fd);
    unlinkat(d->fd, tmp, 0);
    fbx_free(tmp);
    return st;
  }
  atomic_fetch_add(&n_compiles, 1);
  fbx_log(FBX_LOG_CACHE, "cc: compiled %.12s in %.1f ms", key, now_ms() - t0);
  if (!beside) {
    char *meta =
        fmt_str(META_MAGIC "\nkey %s\nso-size %lld\nso-sha256 %s\ncc %s\ncc-path %s\ncc-version %s\nflags %s\n", key,
                size, sha, ci->spec, ci->path, ci->version, flags_str);
    if (!meta) {
      close(fd);
      fbx_free(tmp);
      return nomem();
    }
    if (clear_obstruction(d, n->meta) != 0 || write_atomic(d, n->meta, meta, strlen(meta)) != 0)
      fbx_log(FBX_LOG_CACHE, "cc: cannot write %s/%s: %s (entry will be rebuilt next time)", d->path, n->meta,
              strerror(errno));
    fbx_free(meta);
  }
  char *dl = dl_path(d, beside ? tmp : n->so);
  if (!dl) {
    close(fd);
    if (beside) unlinkat(d->fd, tmp, 0);
    fbx_free(tmp);
    return nomem();
  }
  *handle = load_object(dl);
  fbx_free(dl);
  close(fd);
  if (!*handle) {
    const char *e = dlerror();
    st = fbx_svc_status(FBXP_ERR_COMPILE, "compiled object %s/%s does not load: %s", d->path, beside ? tmp : n->so,
                        e ? e : "?");
    if (!beside) {
      unlinkat(d->fd, n->meta, 0);
      unlinkat(d->fd, n->so, 0);
    }
  }
  if (beside) unlinkat(d->fd, tmp, 0);
  fbx_free(tmp);
  if (!st && !d->scratch) evict(d, key, size + (long long)strlen(source) + 512 /* meta */);
  return st;
}

/* ---- the service --------------------------------------------------------------------------- */

/* Flags the compile really uses (OpenMP dropped if unavailable), as words
 * and as one string. While the compiler's OpenMP verdict is unknown (no
 * probe file yet) the flags are kept and *speculative set: the compile
 * itself is the probe (it succeeding means OpenMP works; if it fails the
 * real probe decides and the request is retried), which saves a compiler
 * run in the first process that uses a compiler. */
static fbxp_status *final_flags(cc_info *ci, const cache_dir *d, double deadline, const char *flags, char ***flagv,
                                int *nflags, char **joined, int *speculative) {
  char **v = split_words(flags, nflags);
  if (!v) return nomem();
  *speculative = 0;
  pthread_mutex_lock(&omp_lock);
  const int unknown = ci->openmp < 0 && !ci->openmp_unknown;
  pthread_mutex_unlock(&omp_lock);
  int k = 0, omp = -2; /* -2: not asked yet (asked at most once per request) */
  for (int i = 0; i < *nflags; i++) {
    /* -fopenmp-simd goes with it: a compiler without OpenMP (the probe
     * failed) is not assumed to know the simd-only flag either. */
    if (!strcmp(v[i], "-fopenmp") || !strcmp(v[i], "-fopenmp-simd")) {
      if (omp == -2 && unknown) {
        omp = 1;
        *speculative = 1;
      }
      if (omp == -2) omp = openmp_works(ci, d, deadline);
      if (omp < 0) {
        fbx_free(v);
        return nomem();
      }
      if (!omp) continue;
    }
    v[k++] = v[i];
  }
  v[k] = NULL;
  *nflags = k;
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, BASE_FLAGS);
  for (int i = 0; i < k; i++) fbx_strbuf_printf(&b, " %s", v[i]);
  *joined = fbx_strbuf_take(&b);
  if (!*joined) {
    fbx_free(v);
    return nomem();
  }
  *flagv = v;
  return NULL;
}

static void compute_key(cc_info *ci, const char *flags, const char *source, char key[FBX_SHA256_HEX_LEN + 1]) {
  fbx_sha256 h;
  fbx_sha256_init(&h);
  const char *parts[] = {"fusebox-cc 1", ci->spec, ci->path, ci->version, flags, source};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    fbx_sha256_update(&h, parts[i], strlen(parts[i]) + 1); /* with the NUL: unambiguous */
  fbx_sha256_final_hex(&h, key);
}

/* Obtain the handle for key: disk or compiler (the caller holds a building
 * placeholder in the table). */
static fbxp_status *obtain(cc_info *ci, char **flagv, int nflags, const char *flags_str, const char *source,
                           const cache_dir *d, const char *key, double deadline, void **handle) {
  entry_names n;
  names_make(&n, key);
  double t0 = now_ms();
  if (!d->scratch && disk_cache_on() && (*handle = cache_load(d, &n, key))) {
    atomic_fetch_add(&n_disk_hits, 1);
    fbx_svc_count_disk_hit();
    fbx_log(FBX_LOG_CACHE, "cc: disk cache hit %.12s (%.2f ms)", key, now_ms() - t0);
    return NULL;
  }
  return build_entry(ci, flagv, nflags, flags_str, source, d, &n, key, deadline, handle);
}

fbxp_status *fbx_svc_cc_compile(const char *source, const char *flags, fbxp_shlib **out) {
  if (!out) return fbx_svc_status(FBXP_ERR_INVALID, "cc_compile: out is NULL");
  *out = NULL;
  if (!source) return fbx_svc_status(FBXP_ERR_INVALID, "cc_compile: source is NULL");
  double deadline = now_ms() + cc_timeout_s() * 1e3; /* one deadline for the whole request */
  cache_dir d;
  fbxp_status *st = cache_open(&d);
  if (st) {
    atomic_fetch_add(&n_failures, 1);
    return st;
  }
  cc_info *ci = NULL;
  char **flagv = NULL, *flags_str = NULL;
  int nflags = 0, speculative = 0;
  st = get_cc(&d, deadline, &ci);
  if (st) goto done;
again:
  st = final_flags(ci, &d, deadline, flags, &flagv, &nflags, &flags_str, &speculative);
  if (st) goto done;
  char key[FBX_SHA256_HEX_LEN + 1];
  compute_key(ci, flags_str, source, key);

  /* One builder per key in this process; the others wait and share. */
  fbxp_shlib *lib = NULL;
  pthread_mutex_lock(&lib_lock);
  for (;;) {
    fbxp_shlib *l = find_lib(key);
    if (!l) break;
    if (l->handle) {
      l->refs++;
      lib = l;
      break;
    }
    pthread_cond_wait(&lib_built, &lib_lock);
  }
  if (lib) {
    pthread_mutex_unlock(&lib_lock);
    atomic_fetch_add(&n_memory_hits, 1);
    fbx_log(FBX_LOG_CACHE, "cc: %.12s already loaded", key);
    *out = lib;
    goto done;
  }
  lib = fbx_calloc(1, sizeof *lib);
  if (!lib) {
    pthread_mutex_unlock(&lib_lock);
    st = nomem();
    goto done;
  }
  memcpy(lib->key, key, sizeof key);
  lib->next = libs;
  libs = lib; /* placeholder: handle NULL while building */
  pthread_mutex_unlock(&lib_lock);

  void *handle = NULL;
  st = obtain(ci, flagv, nflags, flags_str, source, &d, key, deadline, &handle);

  pthread_mutex_lock(&lib_lock);
  if (st) {
    unlink_lib(lib);
    fbx_free(lib);
    lib = NULL;
  } else {
    lib->handle = handle;
    lib->refs = 1;
  }
  pthread_cond_broadcast(&lib_built);
  pthread_mutex_unlock(&lib_lock);
  *out = lib;
  if (speculative && !st) {
    openmp_confirmed(ci, &d);
  } else if (speculative && st->code != FBXP_ERR_NOMEM) {
    /* the compile with OpenMP failed before we knew whether the compiler
     * has it: ask now; if it has none, compile again without the flags
     * (a probe that could not run decides nothing: the failure stands) */
    int omp = openmp_works(ci, &d, deadline);
    pthread_mutex_lock(&omp_lock);
    const int none = ci->openmp == 0;
    pthread_mutex_unlock(&omp_lock);
    if (omp < 0) {
      fbx_host_drop_status(st);
      st = nomem();
    } else if (none) {
      fbx_log(FBX_LOG_CACHE, "cc: the compile with -fopenmp failed and '%s' has no OpenMP: compiling without it",
              ci->spec);
      fbx_host_drop_status(st);
      st = NULL;
      fbx_free(flagv);
      fbx_free(flags_str);
      flagv = NULL;
      flags_str = NULL;
      goto again;
    }
  }
done:
  if (st) atomic_fetch_add(&n_failures, 1);
  fbx_free(flagv);
  fbx_free(flags_str);
  cache_close(&d);
  return st;
}
