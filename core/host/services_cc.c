/* Host service: C source -> shared object, with an on-disk cache.
 *
 * Cache layout ($FUSEBOX_CACHE_DIR, else $XDG_CACHE_HOME/fusebox, else
 * $HOME/.cache/fusebox; created 0700):
 *
 *   <key>.c     the source, at a path that depends only on the key, so the
 *               compiler's output is byte-identical in every process (GCC
 *               records the source file name in the object)
 *   <key>.so    the object
 *   <key>.meta  "fusebox-cc-cache 1", the key, the object's size and SHA-256,
 *               and (for people) the compiler, its version and the flags
 *
 * key = SHA-256 of (compiler as named, its resolved path, the first line of
 * its --version, the final flags, the source). Every file is written to a
 * unique temporary name in the same directory (pid + counter, O_EXCL) and
 * renamed into place, .so before .meta. A reader trusts an entry only when
 * the meta matches the key and the object's size and SHA-256, and dlopen
 * succeeds; anything else is logged, deleted and rebuilt. Concurrent
 * processes building the same key at worst both compile: each rename
 * publishes a complete, identical file.
 *
 * In-process, one fbxp_shlib per key: a second request while the object is
 * loaded takes a reference; concurrent requests for a key being built wait
 * for the builder instead of compiling it again. The compiler runs through
 * posix_spawn in its own process group (killed as a group on timeout), stdout
 * and stderr captured through a pipe.
 *
 * Environment: FUSEBOX_CC (default cc; may carry arguments: "ccache gcc"),
 * FUSEBOX_CACHE_DIR, FUSEBOX_CC_TIMEOUT (seconds, default 120),
 * FUSEBOX_CC_CACHE=0 (off switch: never read the disk cache; still writes it).
 * Flags are split on blanks (no shell quoting).
 */
#define _GNU_SOURCE /* pipe2 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "host/services.h"
#include "host/services_cc.h"

extern char **environ;

#define BASE_FLAGS "-O3 -fPIC -shared -std=c11"
#define DIAG_KEEP 4096 /* bytes of compiler output kept for the error message */
#define META_MAGIC "fusebox-cc-cache 1"

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

/* Read a whole file into fbx_malloc'd memory (NUL-terminated). NULL with
 * errno set on failure. */
static char *read_file(const char *path, size_t *len_out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return NULL;
  }
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = fbx_malloc(cap);
  if (!buf) {
    close(fd);
    errno = ENOMEM;
    return NULL;
  }
  for (;;) {
    if (n + 1 == cap) {
      char *nb = fbx_realloc(buf, cap *= 2);
      if (!nb) {
        fbx_free(buf);
        close(fd);
        errno = ENOMEM;
        return NULL;
      }
      buf = nb;
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      fbx_free(buf);
      close(fd);
      errno = e;
      return NULL;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *len_out = n;
  return buf;
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

/* A fresh unique name "<base>.<pid>.<n>.tmp", created empty with O_EXCL so
 * nobody else can have it. NULL (errno set) on failure. */
static char *make_temp(const char *base) {
  for (int tries = 0; tries < 100; tries++) {
    char *p = fmt_str("%s.%ld.%u.tmp", base, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    if (!p) {
      errno = ENOMEM;
      return NULL;
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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

/* Write data to `path` atomically (temp file + rename). 0 or -1 (errno). */
static int write_atomic(const char *path, const char *data, size_t n) {
  char *tmp = make_temp(path);
  if (!tmp) return -1;
  int fd = open(tmp, O_WRONLY | O_TRUNC | O_CLOEXEC);
  int rc = fd < 0 ? -1 : write_all(fd, data, n);
  if (fd >= 0 && close(fd) != 0) rc = -1;
  if (rc == 0 && rename(tmp, path) != 0) rc = -1;
  int e = errno;
  if (rc != 0) unlink(tmp);
  fbx_free(tmp);
  errno = e;
  return rc;
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
  if (rc == 0) {
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
      errno = ENOTDIR;
      return -1;
    }
  }
  errno = e;
  return rc;
}

char *fbx_svc_cc_cache_dir(void) {
  const char *d = getenv("FUSEBOX_CACHE_DIR");
  if (d && *d) return fbx_strdup(d);
  d = getenv("XDG_CACHE_HOME");
  if (d && *d == '/') return fmt_str("%s/fusebox", d);
  d = getenv("HOME");
  if (d && *d) return fmt_str("%s/.cache/fusebox", d);
  return fmt_str("/tmp/fusebox-cache-%ld", (long)getuid());
}

/* When the cache directory cannot be created or written (a read-only HOME),
 * compiles still work: they go to one private directory per process, made
 * on first need, and nothing is shared between processes. */
static pthread_mutex_t fallback_lock = PTHREAD_MUTEX_INITIALIZER;
static char fallback[PATH_MAX];

static char *fallback_dir(const char *wanted, const char *why) {
  pthread_mutex_lock(&fallback_lock);
  if (!fallback[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(fallback, sizeof fallback, "%s/fusebox-cc-XXXXXX", t && *t == '/' ? t : "/tmp");
    if (!mkdtemp(fallback)) fallback[0] = '\0';
    fbx_log(FBX_LOG_CACHE, "cc: cache directory %s unusable (%s); compiling into %s, not shared", wanted, why,
            fallback[0] ? fallback : "(none: mkdtemp failed)");
  } else if (mkdir_p(fallback) != 0) { /* a tmp cleaner may have removed it */
    fallback[0] = '\0';
  }
  char *r = fallback[0] ? fbx_strdup(fallback) : NULL;
  pthread_mutex_unlock(&fallback_lock);
  return r;
}

/* ---- running a program ------------------------------------------------------------------ */

typedef struct run_result {
  int spawn_errno; /* nonzero: the program could not be started */
  int timed_out;
  int exit_code;   /* exit status, or 128 + signal */
  char *out;       /* first DIAG_KEEP bytes of stdout+stderr (fbx_malloc'd, NUL-terminated) */
  int truncated;
} run_result;

static double cc_timeout_s(void) {
  const char *t = getenv("FUSEBOX_CC_TIMEOUT");
  double v = t && *t ? strtod(t, NULL) : 0;
  return v > 0 ? v : 120.0;
}

/* Run argv (PATH lookup) with stdin from /dev/null and stdout+stderr into a
 * pipe, in its own process group; SIGKILL the group after timeout_s. */
static void run_capture(char *const argv[], double timeout_s, run_result *r) {
  memset(r, 0, sizeof *r);
  r->out = fbx_malloc(DIAG_KEEP + 1);
  if (!r->out) {
    r->spawn_errno = ENOMEM;
    return;
  }
  r->out[0] = '\0';
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r->spawn_errno = errno;
    return;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawnattr_init(&at);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r->spawn_errno = rc;
    return;
  }
  size_t n = 0;
  double deadline = now_ms() + timeout_s * 1e3;
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
  char *path;     /* resolved argv[0] */
  char *version;  /* first line of --version */
  int openmp;     /* -1 not probed, 0 dropped, 1 works */
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

/* The cc_info for the current FUSEBOX_CC, probing it (path, --version) the
 * first time. Entries live until exit. */
static fbxp_status *get_cc(cc_info **out) {
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
  if (!ci->path) {
    st = fbx_svc_status(FBXP_ERR_UNSUPPORTED, "C compiler '%s' not found%s (FUSEBOX_CC=%s)", ci->argv[0],
                        strchr(ci->argv[0], '/') ? "" : " on PATH", spec);
    goto done;
  }
  char **vargv = fbx_malloc(sizeof(char *) * (size_t)(ci->argc + 2));
  if (!vargv) {
    st = nomem();
    goto done;
  }
  memcpy(vargv, ci->argv, sizeof(char *) * (size_t)ci->argc);
  vargv[ci->argc] = "--version";
  vargv[ci->argc + 1] = NULL;
  run_result r;
  run_capture(vargv, 30.0, &r);
  fbx_free(vargv);
  if (r.spawn_errno) {
    st = r.spawn_errno == ENOMEM ? nomem()
                                 : fbx_svc_status(FBXP_ERR_UNSUPPORTED, "cannot run C compiler '%s' (FUSEBOX_CC=%s): %s",
                                                  ci->path, spec, strerror(r.spawn_errno));
    fbx_free(r.out);
    goto done;
  }
  r.out[strcspn(r.out, "\n")] = '\0';
  ci->version = r.out;
  if (r.exit_code != 0 || !*ci->version)
    fbx_log(FBX_LOG_CACHE, "cc: '%s --version' exited %d; keying the cache on the path only", spec, r.exit_code);
  fbx_log(FBX_LOG_CACHE, "cc: %s = %s (%s)", spec, ci->path, ci->version);
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
                            run_result *r, char **cmd) {
  int nbase;
  char **base = split_words(BASE_FLAGS, &nbase);
  char **argv = fbx_malloc(sizeof(char *) * (size_t)(ci->argc + nbase + nflags + 4));
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
  argv[k++] = (char *)src_path;
  /* after the source, so that -l options resolve its symbols */
  for (int i = 0; i < nflags; i++) argv[k++] = flagv[i];
  argv[k] = NULL;
  run_capture(argv, cc_timeout_s(), r);
  if (cmd) *cmd = join_argv(argv);
  fbx_free(argv);
  fbx_free(base);
  return r->spawn_errno == ENOMEM ? -1 : 0;
}

/* Compile `src_path` to `out_path`. NULL or an error status carrying the
 * command line and the compiler's output. */
static fbxp_status *run_compiler(cc_info *ci, char **flagv, int nflags, const char *src_path,
                                 const char *out_path) {
  run_result r;
  char *cmd = NULL;
  fbxp_status *st = NULL;
  if (run_compiler_raw(ci, flagv, nflags, src_path, out_path, &r, &cmd) != 0)
    st = nomem();
  else if (r.spawn_errno)
    st = fbx_svc_status(r.spawn_errno == ENOENT ? FBXP_ERR_UNSUPPORTED : FBXP_ERR_COMPILE,
                        "cannot run C compiler '%s': %s\ncommand: %s", ci->argv[0], strerror(r.spawn_errno),
                        cmd ? cmd : "?");
  else if (r.timed_out)
    st = fbx_svc_status(FBXP_ERR_COMPILE, "C compiler timed out after %g s (FUSEBOX_CC_TIMEOUT)\ncommand: %s",
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
 * 1 or 0, decided once per compiler from what the compiler did (a "no" is
 * logged once); -1 when out of memory. A probe that could not run (I/O
 * error, timeout) decides nothing: this compile goes without OpenMP and the
 * next one asks again. */
static int openmp_works(cc_info *ci, const char *dir) {
  pthread_mutex_lock(&omp_lock);
  if (ci->openmp >= 0) {
    int s = ci->openmp;
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
  char *base = fmt_str("%s/openmp-probe", dir);
  char *src = NULL, *obj = NULL, *src_c = NULL;
  char why[DIAG_KEEP + 64] = "";
  int verdict = -1, oom = 0;
  if (base && (src = make_temp(base)) && (obj = make_temp(base)) && (src_c = fmt_str("%s.c", src))) {
    run_result r = {0};
    char *flag = "-fopenmp";
    if (write_atomic(src_c, probe, sizeof probe - 1) != 0) {
      oom = errno == ENOMEM;
      snprintf(why, sizeof why, "%s", strerror(errno));
    } else if (run_compiler_raw(ci, &flag, 1, src_c, obj, &r, NULL) != 0) {
      oom = 1;
    } else if (r.spawn_errno || r.timed_out) {
      snprintf(why, sizeof why, "%s", r.spawn_errno ? strerror(r.spawn_errno) : "the compiler timed out");
    } else if (r.exit_code != 0) {
      verdict = 0;
      snprintf(why, sizeof why, "%s", r.out);
    } else {
      void *h = load_object(obj);
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
    oom = !base || errno == ENOMEM;
    snprintf(why, sizeof why, "%s", strerror(oom ? ENOMEM : errno));
  }
  if (verdict == 1)
    fbx_log(FBX_LOG_CACHE, "cc: OpenMP works with '%s'", ci->spec);
  else if (verdict == 0) /* on the fusion channel: a plugin asked for OpenMP and gets serial code */
    fbx_log(FBX_LOG_FUSION, "cc: OpenMP unavailable with '%s', dropping -fopenmp from every compile: %s", ci->spec,
            why);
  else if (!oom)
    fbx_log(FBX_LOG_FUSION, "cc: cannot probe OpenMP with '%s' now (%s); compiling without -fopenmp", ci->spec, why);
  if (src_c) unlink(src_c);
  if (src) unlink(src);
  if (obj) unlink(obj);
  fbx_free(src_c);
  fbx_free(src);
  fbx_free(obj);
  fbx_free(base);
  if (verdict >= 0) ci->openmp = verdict;
  pthread_mutex_unlock(&omp_lock);
  return oom ? -1 : verdict > 0;
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

typedef struct entry_paths {
  char *so, *meta, *src;
} entry_paths;

static void paths_free(entry_paths *p) {
  fbx_free(p->so);
  fbx_free(p->meta);
  fbx_free(p->src);
}

static int paths_make(entry_paths *p, const char *dir, const char *key) {
  p->so = fmt_str("%s/%s.so", dir, key);
  p->meta = fmt_str("%s/%s.meta", dir, key);
  p->src = fmt_str("%s/%s.c", dir, key);
  return p->so && p->meta && p->src;
}

static int file_sha256(const char *path, char hex[FBX_SHA256_HEX_LEN + 1], long long *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  fbx_sha256 h;
  fbx_sha256_init(&h);
  char buf[16384];
  long long n = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      close(fd);
      return -1;
    }
    if (r == 0) break;
    fbx_sha256_update(&h, buf, (size_t)r);
    n += r;
  }
  close(fd);
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

static void drop_corrupt(const entry_paths *p, const char *key, const char *why) {
  fbx_log(FBX_LOG_CACHE, "cc: corrupt cache entry %.12s (%s): deleting and rebuilding", key, why);
  atomic_fetch_add(&n_corrupt, 1);
  unlink(p->meta);
  unlink(p->so);
}

/* Load <key>.so if the entry is complete and intact. Returns the dlopen
 * handle, or NULL (a miss; a corrupt entry was deleted). */
static void *cache_load(const entry_paths *p, const char *key) {
  struct stat st;
  if (stat(p->so, &st) != 0) return NULL;
  size_t mlen;
  char *meta = read_file(p->meta, &mlen);
  if (!meta) {
    if (errno == ENOENT)
      fbx_log(FBX_LOG_CACHE, "cc: %.12s.so has no meta (being written, or a writer died): recompiling", key);
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
  } else if (file_sha256(p->so, sha, &size) != 0) {
    snprintf(why, sizeof why, "cannot read object: %s", strerror(errno));
  } else if (size != strtoll(msize, NULL, 10)) {
    snprintf(why, sizeof why, "object is %lld bytes, meta says %s", size, msize);
  } else if (strcmp(sha, msha) != 0) {
    snprintf(why, sizeof why, "object checksum does not match its meta");
  } else if (!(h = load_object(p->so))) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "dlopen failed: %s", e ? e : "?");
  }
  fbx_free(meta);
  if (!h) drop_corrupt(p, key, why);
  return h;
}

/* Compile into the entry's paths (temp + rename), write the meta, load. */
static fbxp_status *build_entry(cc_info *ci, char **flagv, int nflags, const char *flags_str, const char *source,
                                const entry_paths *p, const char *key, void **handle) {
  if (write_atomic(p->src, source, strlen(source)) != 0)
    return fbx_svc_status(FBXP_ERR_INTERNAL, "cannot write %s: %s", p->src, strerror(errno));
  char *tmp = make_temp(p->so);
  if (!tmp) return fbx_svc_status(FBXP_ERR_INTERNAL, "cannot create a temporary file next to %s: %s", p->so,
                                  strerror(errno));
  double t0 = now_ms();
  fbxp_status *st = run_compiler(ci, flagv, nflags, p->src, tmp);
  char sha[FBX_SHA256_HEX_LEN + 1];
  long long size = 0;
  if (!st && (file_sha256(tmp, sha, &size) != 0 || size == 0))
    st = fbx_svc_status(FBXP_ERR_COMPILE, "C compiler succeeded but left no object at %s", tmp);
  if (!st && rename(tmp, p->so) != 0)
    st = fbx_svc_status(FBXP_ERR_INTERNAL, "cannot rename %s to %s: %s", tmp, p->so, strerror(errno));
  if (st) {
    unlink(tmp);
    fbx_free(tmp);
    return st;
  }
  fbx_free(tmp);
  char *meta = fmt_str(META_MAGIC "\nkey %s\nso-size %lld\nso-sha256 %s\ncc %s\ncc-path %s\ncc-version %s\nflags %s\n",
                       key, size, sha, ci->spec, ci->path, ci->version, flags_str);
  if (!meta) return nomem();
  if (write_atomic(p->meta, meta, strlen(meta)) != 0)
    fbx_log(FBX_LOG_CACHE, "cc: cannot write %s: %s (entry will be rebuilt next time)", p->meta, strerror(errno));
  fbx_free(meta);
  atomic_fetch_add(&n_compiles, 1);
  fbx_log(FBX_LOG_CACHE, "cc: compiled %.12s in %.1f ms", key, now_ms() - t0);
  *handle = load_object(p->so);
  if (!*handle) {
    const char *e = dlerror();
    st = fbx_svc_status(FBXP_ERR_COMPILE, "compiled object %s does not load: %s", p->so, e ? e : "?");
    unlink(p->meta);
    unlink(p->so);
  }
  return st;
}

/* ---- the service --------------------------------------------------------------------------- */

static int disk_cache_on(void) {
  const char *s = getenv("FUSEBOX_CC_CACHE");
  return !(s && !strcmp(s, "0"));
}

/* Flags the compile really uses (OpenMP dropped if unavailable), as words and as one string. */
static fbxp_status *final_flags(cc_info *ci, const char *dir, const char *flags, char ***flagv, int *nflags,
                                char **joined) {
  char **v = split_words(flags, nflags);
  if (!v) return nomem();
  int k = 0;
  for (int i = 0; i < *nflags; i++) {
    /* -fopenmp-simd goes with it: a compiler without OpenMP (the probe
     * failed) is not assumed to know the simd-only flag either. */
    if (!strcmp(v[i], "-fopenmp") || !strcmp(v[i], "-fopenmp-simd")) {
      int w = openmp_works(ci, dir);
      if (w < 0) {
        fbx_free(v);
        return nomem();
      }
      if (!w) continue;
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

/* Obtain the handle for key: memory, disk or compiler (the caller holds a
 * building placeholder in the table). */
static fbxp_status *obtain(cc_info *ci, char **flagv, int nflags, const char *flags_str, const char *source,
                           const char *dir, const char *key, void **handle) {
  entry_paths p = {0};
  if (!paths_make(&p, dir, key)) {
    paths_free(&p);
    return nomem();
  }
  fbxp_status *st = NULL;
  double t0 = now_ms();
  if (disk_cache_on() && (*handle = cache_load(&p, key))) {
    atomic_fetch_add(&n_disk_hits, 1);
    fbx_svc_count_disk_hit();
    fbx_log(FBX_LOG_CACHE, "cc: disk cache hit %.12s (%.2f ms)", key, now_ms() - t0);
  } else {
    st = build_entry(ci, flagv, nflags, flags_str, source, &p, key, handle);
  }
  paths_free(&p);
  return st;
}

fbxp_status *fbx_svc_cc_compile(const char *source, const char *flags, fbxp_shlib **out) {
  if (!out) return fbx_svc_status(FBXP_ERR_INVALID, "cc_compile: out is NULL");
  *out = NULL;
  if (!source) return fbx_svc_status(FBXP_ERR_INVALID, "cc_compile: source is NULL");
  cc_info *ci = NULL;
  fbxp_status *st = get_cc(&ci);
  if (st) {
    atomic_fetch_add(&n_failures, 1);
    return st;
  }
  char *dir = fbx_svc_cc_cache_dir();
  if (!dir) return nomem();
  if (mkdir_p(dir) != 0 || access(dir, W_OK | X_OK) != 0) {
    char *fb = fallback_dir(dir, strerror(errno));
    fbx_free(dir);
    if (!fb) {
      atomic_fetch_add(&n_failures, 1);
      return fbx_svc_status(FBXP_ERR_INTERNAL, "no usable cache directory (set FUSEBOX_CACHE_DIR)");
    }
    dir = fb;
  }
  char **flagv = NULL, *flags_str = NULL;
  int nflags = 0;
  st = final_flags(ci, dir, flags, &flagv, &nflags, &flags_str);
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
  st = obtain(ci, flagv, nflags, flags_str, source, dir, key, &handle);

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
done:
  if (st) atomic_fetch_add(&n_failures, 1);
  fbx_free(flagv);
  fbx_free(flags_str);
  fbx_free(dir);
  return st;
}
