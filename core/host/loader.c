/* Finding and loading fuser plugins: selection names, search directories,
 * dlopen, version negotiation and the checks of a plugin's table, lifetime
 * (never dlclose while a kernel lives), and discovery for `fusebox plugins`.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "host/hostimpl.h"

#ifndef FBX_PLUGIN_DIR
#define FBX_PLUGIN_DIR "plugins"
#endif
#ifndef FBX_BUILD_DIR
#define FBX_BUILD_DIR "."
#endif
#ifndef FBX_BIN_TO_PLUGINS
#define FBX_BIN_TO_PLUGINS "../lib/fusebox/plugins"
#endif
#ifndef FBX_PLUGIN_INSTALL_DIR
#define FBX_PLUGIN_INSTALL_DIR "/usr/local/lib/fusebox/plugins"
#endif

#define TRACE(...) fbx_log(FBX_LOG_LOADER, __VA_ARGS__)

/* The built-in fusers and PyTorch's names for them (torch._C._jit_set_fusion_strategy
 * era: fuser0 legacy, fuser1 NNC, fuser2 nvFuser). */
static const struct {
  const char *name, *alias;
} builtins[] = {{"legacy", "fuser0"}, {"tensorexpr", "fuser1"}, {"nvfuser_like", "fuser2"}};
#define NBUILTINS (int)(sizeof builtins / sizeof builtins[0])

/* ---- search directories ----------------------------------------------------------- */

/* Directory strings handed out by fbx_fuser_search_dirs stay valid for the
 * process: they are interned here (a handful, never freed). */
typedef struct interned {
  struct interned *next;
  char s[];
} interned;
static interned *interned_dirs;
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *intern_dir(const char *s, size_t n) {
  for (interned *i = interned_dirs; i; i = i->next)
    if (strlen(i->s) == n && !strncmp(i->s, s, n)) return i->s;
  /* Plain malloc: this is process-lifetime memory, not subject to the
   * fault-injection hook. */
  interned *i = malloc(sizeof *i + n + 1);
  if (!i) return NULL;
  memcpy(i->s, s, n);
  i->s[n] = 0;
  i->next = interned_dirs;
  interned_dirs = i;
  return i->s;
}

static int add_dir(const char **dirs, int n, int cap, const char *s, size_t len) {
  if (!len || n >= cap) return n;
  const char *d = intern_dir(s, len);
  if (!d) return n;
  for (int i = 0; i < n; i++)
    if (dirs[i] == d) return n;
  dirs[n] = d;
  return n + 1;
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fbx_exe_relative(char *out, size_t cap, const char *rel, bool *in_build_tree) {
  char exe[PATH_MAX];
  if (in_build_tree) *in_build_tree = false;
  if (!realpath("/proc/self/exe", exe)) return -1;
  char build[PATH_MAX];
  const char *bd = realpath(FBX_BUILD_DIR, build) ? build : FBX_BUILD_DIR;
  size_t b = strlen(bd);
  if (in_build_tree) *in_build_tree = !strncmp(exe, bd, b) && exe[b] == '/';
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = 0;
  int k = snprintf(out, cap, "%s/%s", exe, rel);
  return k < 0 || (size_t)k >= cap ? -1 : 0;
}

#ifndef FBX_BIN_TO_CORPUS
#define FBX_BIN_TO_CORPUS FBX_CORPUS_FROM_BIN_DEFAULT
#endif
const char *fbx_corpus_from_bin(void) { return FBX_BIN_TO_CORPUS; }

int fbx_fuser_search_dirs(const char **dirs, int cap) {
  if (!dirs || cap <= 0) return 0;
  int n = 0;
  pthread_mutex_lock(&dirs_lock);
  const char *env = getenv("FUSEBOX_PLUGIN_PATH");
  for (const char *p = env; p && *p;) {
    size_t len = strcspn(p, ":");
    n = add_dir(dirs, n, cap, p, len);
    p += len;
    if (*p == ':') p++;
  }
  /* The built-in plugins: a program in the build tree uses the build's
   * plugins; anywhere else (an installed fusebox, with or without the build
   * tree around) the plugins installed next to the executable, like $ORIGIN:
   * <bin>/../lib/fusebox/plugins. Then the configured install prefix. */
  bool in_build = false;
  char rel[PATH_MAX];
  int have_rel = fbx_exe_relative(rel, sizeof rel, FBX_BIN_TO_PLUGINS, &in_build);
  if (in_build || have_rel != 0) n = add_dir(dirs, n, cap, FBX_PLUGIN_DIR, strlen(FBX_PLUGIN_DIR));
  if (!in_build && have_rel == 0 && is_dir(rel)) {
    char real[PATH_MAX];
    const char *d = realpath(rel, real) ? real : rel;
    n = add_dir(dirs, n, cap, d, strlen(d));
  }
  n = add_dir(dirs, n, cap, FBX_PLUGIN_INSTALL_DIR, strlen(FBX_PLUGIN_INSTALL_DIR));
  pthread_mutex_unlock(&dirs_lock);
  return n;
}

#define MAX_DIRS 64

static char *dirs_joined(void) {
  const char *dirs[MAX_DIRS];
  int n = fbx_fuser_search_dirs(dirs, MAX_DIRS);
  fbx_strbuf b = {0};
  for (int i = 0; i < n; i++) fbx_strbuf_printf(&b, "%s%s", i ? ":" : "", dirs[i]);
  if (!n) fbx_strbuf_puts(&b, "(none)");
  return fbx_strbuf_take(&b);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first dir/file that exists, malloc'd; NULL when none. */
static char *find_in_dirs(const char *file) {
  const char *dirs[MAX_DIRS];
  int n = fbx_fuser_search_dirs(dirs, MAX_DIRS);
  for (int i = 0; i < n; i++) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "%s/%s", dirs[i], file);
    char *path = fbx_strbuf_take(&b);
    if (!path) return NULL;
    TRACE("looking for %s", path);
    if (is_file(path)) return path;
    fbx_free(path);
  }
  return NULL;
}

/* ---- the fuser object ------------------------------------------------------------- */

static char *dup_or_null(const char *s) { return s ? fbx_strdup(s) : NULL; }

static void fuser_free(fbx_fuser *f) {
  if (!f) return;
  if (f->dl) dlclose(f->dl);
  fbx_free(f->path);
  fbx_free(f->name);
  fbx_free(f->version);
  fbx_free(f->vendor);
  fbx_free(f->description);
  fbx_free(f->compat_key);
  pthread_mutex_destroy(&f->lock);
  pthread_mutex_destroy(&f->run_lock);
  fbx_free(f);
}

static void fuser_destroy(fbx_fuser *f) {
  void (*shutdown)(void *) = FBX_PLUGIN_FN(f, shutdown);
  TRACE("unloading %s (%s)", f->name, f->path);
  if (shutdown) {
    fbx_fuser *prev = fbx_host_set_current(f);
    fbx_host_set_stage("shutdown", "the plugin");
    shutdown(f->state);
    fbx_host_set_current(prev);
  }
  fuser_free(f);
}

void fbx_fuser_hold(fbx_fuser *f) { atomic_fetch_add(&f->holds, 1); }

void fbx_fuser_unhold(fbx_fuser *f) {
  if (atomic_fetch_sub(&f->holds, 1) == 1) fuser_destroy(f);
}

fbx_fuser *fbx_fuser_retain(fbx_fuser *f) {
  if (!f) return NULL;
  atomic_fetch_add(&f->refs, 1);
  atomic_fetch_add(&f->holds, 1);
  return f;
}

void fbx_fuser_release(fbx_fuser *f) {
  if (!f) return;
  if (atomic_fetch_sub(&f->refs, 1) == 1) {
    /* No user left: cached kernels go; kernels users still hold stay (and
     * keep the plugin loaded through their holds). */
    pthread_mutex_lock(&f->lock);
    fbx_kcache_flush_locked(f);
    pthread_mutex_unlock(&f->lock);
  }
  fbx_fuser_unhold(f);
}

const char *fbx_fuser_name(const fbx_fuser *f) { return f ? f->name : "none"; }
const char *fbx_fuser_version(const fbx_fuser *f) { return f && f->version ? f->version : ""; }
const char *fbx_fuser_path(const fbx_fuser *f) { return f && f->path ? f->path : ""; }
uint32_t fbx_fuser_flags(const fbx_fuser *f) { return f ? f->flags : 0; }
uint32_t fbx_fuser_devices(const fbx_fuser *f) { return f ? f->devices : 0; }
const struct fbxp_plugin_api *fbx_fuser_api(const fbx_fuser *f) { return f ? f->api : NULL; }

/* ---- checking a plugin's table ------------------------------------------------------ */

static fbx_status *check_table(const fbxp_plugin_api *api, const char *origin) {
  const size_t need_version = FBXP_SIZE_UPTO(fbxp_plugin_api, abi_minor);
  if (api->struct_size < need_version)
    return fbx_status_new(FBX_ERR_PLUGIN,
                          "%s: plugin table is undersized: struct_size %zu, this host needs at least %zu "
                          "(the fusebox ABI %u.%u table is %zu bytes)",
                          origin, api->struct_size, (size_t)FBX_PLUGIN_API_MIN_SIZE, FBXP_ABI_MAJOR,
                          FBXP_ABI_MINOR, (size_t)FBXP_PLUGIN_API_SIZE_V1_0);
  if (api->abi_major != FBXP_ABI_MAJOR)
    return fbx_status_new(FBX_ERR_PLUGIN, "%s: plugin built for fusebox ABI %u.%u, this host speaks %u.%u",
                          origin, api->abi_major, api->abi_minor, FBXP_ABI_MAJOR, FBXP_ABI_MINOR);
  if (api->struct_size < FBX_PLUGIN_API_MIN_SIZE)
    return fbx_status_new(FBX_ERR_PLUGIN,
                          "%s: plugin table is undersized: struct_size %zu, this host needs at least %zu "
                          "(the fusebox ABI %u.%u table is %zu bytes)",
                          origin, api->struct_size, (size_t)FBX_PLUGIN_API_MIN_SIZE, FBXP_ABI_MAJOR,
                          FBXP_ABI_MINOR, (size_t)FBXP_PLUGIN_API_SIZE_V1_0);
  const char *missing = !api->partition ? "partition"
                        : !api->compile ? "compile"
                        : !api->run     ? "run"
                        : !api->release ? "release"
                                        : NULL;
  if (missing)
    return fbx_status_new(FBX_ERR_PLUGIN, "%s: plugin table lacks the required function '%s'", origin, missing);
  if (!api->name || !*api->name)
    return fbx_status_new(FBX_ERR_PLUGIN, "%s: plugin table has no name", origin);
  uint32_t g = api->flags & (FBXP_GUARDS_OUTSIDE | FBXP_SELF_FALLBACK);
  if (g != FBXP_GUARDS_OUTSIDE && g != FBXP_SELF_FALLBACK)
    return fbx_status_new(FBX_ERR_PLUGIN,
                          "%s: plugin '%s' flags 0x%x must set exactly one of FBXP_GUARDS_OUTSIDE and "
                          "FBXP_SELF_FALLBACK",
                          origin, api->name, api->flags);
  return NULL;
}

/* FUSEBOX_KERNEL_CACHE_MAX: kernels a fuser keeps in its in-memory cache
 * (least recently used ones go first); default 1024. */
static int64_t kernel_cache_max(void) {
  const char *e = getenv("FUSEBOX_KERNEL_CACHE_MAX");
  if (!e || !*e) return 1024;
  char *end;
  long long v = strtoll(e, &end, 10);
  if (*end || v < 1) {
    static atomic_bool warned;
    if (!atomic_exchange(&warned, true))
      fprintf(stderr, "[fusebox:loader] warning: FUSEBOX_KERNEL_CACHE_MAX='%s' is not a positive integer; using 1024\n", e);
    return 1024;
  }
  return v;
}

/* Call the entry, check its table, make the fuser. `dl` (may be NULL) is
 * owned by the fuser on success and closed by the caller on failure. */
static fbx_status *make_fuser(fbx_fuser **out, fbx_fuser_entry_fn entry, void *dl, const char *origin,
                              uint32_t host_major, uint32_t host_minor) {
  const char *reason = NULL;
  TRACE("%s: calling %s(host ABI %u.%u)", origin, FBXP_ENTRY_SYMBOL, host_major, host_minor);
  const fbxp_plugin_api *api = entry(fbx_host_api_table_for(host_minor), host_major, host_minor, &reason);
  if (!api)
    return fbx_status_new(FBX_ERR_PLUGIN, "%s: the plugin refused to load: %s", origin,
                          reason && *reason ? reason : "(no reason given)");
  TRACE("%s: table of %zu bytes (this host knows %zu), ABI %u.%u", origin, api->struct_size,
        (size_t)FBXP_PLUGIN_API_SIZE_V1_0, api->abi_major, api->abi_minor);
  FBX_TRY(check_table(api, origin));

  fbx_host_crash_note_install(); /* a plugin from here on: name it if it crashes */
  fbx_fuser *f = fbx_calloc(1, sizeof *f);
  if (!f) return fbx_status_nomem();
  if (pthread_mutex_init(&f->lock, NULL)) {
    fbx_free(f);
    return fbx_status_new(FBX_ERR_INTERNAL, "%s: cannot create a mutex", origin);
  }
  if (pthread_mutex_init(&f->run_lock, NULL)) {
    pthread_mutex_destroy(&f->lock);
    fbx_free(f);
    return fbx_status_new(FBX_ERR_INTERNAL, "%s: cannot create a mutex", origin);
  }
  atomic_init(&f->refs, 1);
  atomic_init(&f->holds, 1);
  atomic_init(&f->cached, 0);
  f->cache_max = kernel_cache_max();
  f->api = api;
  /* A newer plugin's appended fields are simply not read. */
  f->api_size = api->struct_size < FBXP_PLUGIN_API_SIZE_V1_0 ? api->struct_size : FBXP_PLUGIN_API_SIZE_V1_0;
  f->abi_major = api->abi_major;
  f->abi_minor = api->abi_minor;
  f->flags = api->flags;
  f->devices = api->devices;
  f->path = fbx_strdup(origin);
  f->name = fbx_strdup(api->name);
  f->version = dup_or_null(api->version);
  f->vendor = dup_or_null(api->vendor);
  f->description = dup_or_null(api->description);
  f->compat_key = dup_or_null(api->compat_key);
  if (!f->path || !f->name || (api->version && !f->version) || (api->vendor && !f->vendor) ||
      (api->description && !f->description) || (api->compat_key && !f->compat_key)) {
    fuser_free(f);
    return fbx_status_nomem();
  }
  fbxp_status *(*init)(void **) = FBX_PLUGIN_FN(f, init);
  if (init) {
    fbx_fuser *prev = fbx_host_set_current(f);
    fbx_host_set_stage("init", "the plugin");
    fbxp_status *ps = init(&f->state);
    fbx_host_set_current(prev);
    if (ps) {
      fuser_free(f);
      return fbx_host_take_status(ps, FBX_ERR_PLUGIN, "%s: plugin '%s' failed to initialize", origin, api->name);
    }
  }
  f->dl = dl;
  TRACE("loaded '%s' %s (%s, ABI %u.%u) from %s", f->name, fbx_fuser_version(f), f->vendor ? f->vendor : "?",
        f->abi_major, f->abi_minor, origin);
  *out = f;
  return NULL;
}

fbx_status *fbx_fuser_from_entry(fbx_fuser **out, fbx_fuser_entry_fn entry, const char *origin) {
  if (!out || !entry) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_from_entry: NULL argument");
  return make_fuser(out, entry, NULL, origin ? origin : "(in-process)", FBXP_ABI_MAJOR, FBXP_ABI_MINOR);
}

fbx_status *fbx_fuser_load_path_as(fbx_fuser **out, const char *path, uint32_t host_major, uint32_t host_minor) {
  /* A truncated or foreign file would fault inside dlopen: check it first. */
  fbx_status *bad = fbx_plugin_file_check(path);
  if (bad) {
    TRACE("rejected before dlopen: %s", fbx_status_message(bad));
    return bad;
  }
  TRACE("dlopen %s", path);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *err = dlerror();
    return fbx_status_new(FBX_ERR_PLUGIN, "cannot load fuser plugin %s: %s", path, err ? err : "dlopen failed");
  }
  void *sym = dlsym(dl, FBXP_ENTRY_SYMBOL);
  if (!sym) {
    dlclose(dl);
    return fbx_status_new(FBX_ERR_PLUGIN, "%s: not a fuser plugin: it does not export the entry symbol '%s'", path,
                          FBXP_ENTRY_SYMBOL);
  }
  fbx_fuser_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object to function pointer, as POSIX allows */
  fbx_status *st = make_fuser(out, entry, dl, path, host_major, host_minor);
  if (st) {
    TRACE("rejected: %s", fbx_status_message(st));
    dlclose(dl);
  }
  return st;
}

static fbx_status *load_path(fbx_fuser **out, const char *path) {
  return fbx_fuser_load_path_as(out, path, FBXP_ABI_MAJOR, FBXP_ABI_MINOR);
}

/* ---- selection by name --------------------------------------------------------------- */

static fbx_status *unknown_name(const char *name) {
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "unknown fuser '%s'; built-in fusers:", name);
  for (int i = 0; i < NBUILTINS; i++)
    fbx_strbuf_printf(&b, " %s (alias %s),", builtins[i].name, builtins[i].alias);
  fbx_strbuf_puts(&b, " none");
  char *dirs = dirs_joined();
  fbx_strbuf_printf(&b, "; plugins found in %s:", dirs ? dirs : "?");
  fbx_free(dirs);
  fbx_fuser_candidate *c = NULL;
  int nc = 0;
  fbx_status *st = fbx_fuser_discover(&c, &nc);
  if (st) {
    fbx_strbuf_printf(&b, " (discovery failed: %s)", fbx_status_message(st));
    fbx_status_free(st);
  } else if (!nc) {
    fbx_strbuf_puts(&b, " none");
  }
  for (int i = 0; i < nc; i++) {
    fbx_strbuf_printf(&b, "%s %s (%s)", i ? "," : "", c[i].name, c[i].path);
    if (c[i].rejected) fbx_strbuf_puts(&b, " [rejected]");
  }
  fbx_fuser_candidates_free(c, nc);
  char *msg = fbx_strbuf_take(&b);
  if (!msg) return fbx_status_nomem();
  st = fbx_status_new(FBX_ERR_INVALID_ARG, "%s", msg);
  fbx_free(msg);
  return st;
}

fbx_status *fbx_fuser_load(fbx_fuser **out, const char *name) {
  if (!out) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_load: NULL out");
  if (!name || !*name || !strcmp(name, "none")) {
    TRACE("fuser '%s': no fusion", name ? name : "(unset)");
    *out = NULL;
    return NULL;
  }
  if (strchr(name, '/')) return load_path(out, name);
  for (int i = 0; i < NBUILTINS; i++) {
    if (strcmp(name, builtins[i].name) && strcmp(name, builtins[i].alias)) continue;
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "libfbx_%s.so", builtins[i].name);
    char *file = fbx_strbuf_take(&b);
    if (!file) return fbx_status_nomem();
    TRACE("fuser '%s' is the built-in '%s': looking for %s", name, builtins[i].name, file);
    char *path = find_in_dirs(file);
    if (!path) {
      char *dirs = dirs_joined();
      fbx_status *st = fbx_status_new(FBX_ERR_UNSUPPORTED, "fuser '%s' is not built in this tree: no %s in %s",
                                      builtins[i].name, file, dirs ? dirs : "?");
      fbx_free(dirs);
      fbx_free(file);
      return st;
    }
    fbx_free(file);
    fbx_status *st = load_path(out, path);
    fbx_free(path);
    return st;
  }
  const char *forms[2] = {"lib%s.so", "%s.so"};
  for (int k = 0; k < 2; k++) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, forms[k], name);
    char *file = fbx_strbuf_take(&b);
    if (!file) return fbx_status_nomem();
    char *path = find_in_dirs(file);
    fbx_free(file);
    if (path) {
      fbx_status *st = load_path(out, path);
      fbx_free(path);
      return st;
    }
  }
  /* Last resort: a plugin that calls itself `name` whatever its file is called. */
  fbx_fuser_candidate *c = NULL;
  int nc = 0;
  fbx_status *st = fbx_fuser_discover(&c, &nc);
  if (st) return st;
  char *path = NULL;
  for (int i = 0; i < nc && !path; i++)
    if (!c[i].rejected && !strcmp(c[i].name, name)) path = fbx_strdup(c[i].path);
  fbx_fuser_candidates_free(c, nc);
  if (path) {
    TRACE("fuser '%s' found by its declared name in %s", name, path);
    st = load_path(out, path);
    fbx_free(path);
    return st;
  }
  return unknown_name(name);
}

/* ---- discovery ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && !strcmp(s + n - m, suffix);
}

typedef struct cand_list {
  fbx_fuser_candidate *items;
  int n, cap;
} cand_list;

static fbx_status *probe(cand_list *l, const char *path) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    fbx_fuser_candidate *items = fbx_realloc(l->items, (size_t)cap * sizeof *items);
    if (!items) return fbx_status_nomem();
    l->items = items;
    l->cap = cap;
  }
  fbx_fuser_candidate *c = &l->items[l->n];
  memset(c, 0, sizeof *c);
  c->path = fbx_strdup(path);
  if (!c->path) return fbx_status_nomem();
  l->n++;
  fbx_fuser *f = NULL;
  fbx_status *st = load_path(&f, path);
  if (st) {
    if (fbx_status_code(st) == FBX_ERR_NOMEM) return st;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!strncmp(base, "lib", 3)) base += 3;
    c->name = fbx_strndup(base, strlen(base) - 3); /* drop ".so" */
    c->rejected = fbx_strdup(fbx_status_message(st));
    fbx_status_free(st);
    return c->name && c->rejected ? NULL : fbx_status_nomem();
  }
  c->name = fbx_strdup(f->name);
  c->version = dup_or_null(f->version);
  c->vendor = dup_or_null(f->vendor);
  c->description = dup_or_null(f->description);
  c->abi_major = f->abi_major;
  c->abi_minor = f->abi_minor;
  c->flags = f->flags;
  c->devices = f->devices;
  fbx_fuser_release(f);
  return c->name ? NULL : fbx_status_nomem();
}

void fbx_fuser_candidates_free(fbx_fuser_candidate *c, int count) {
  if (!c) return;
  for (int i = 0; i < count; i++) {
    fbx_free(c[i].path);
    fbx_free(c[i].name);
    fbx_free(c[i].version);
    fbx_free(c[i].vendor);
    fbx_free(c[i].description);
    fbx_free(c[i].rejected);
  }
  fbx_free(c);
}

fbx_status *fbx_fuser_discover(fbx_fuser_candidate **out, int *count) {
  if (!out || !count) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_discover: NULL argument");
  const char *dirs[MAX_DIRS];
  int nd = fbx_fuser_search_dirs(dirs, MAX_DIRS);
  cand_list l = {0};
  char **seen = NULL; /* real paths already probed (a dir may be listed twice via links) */
  int nseen = 0;
  fbx_status *st = NULL;
  for (int d = 0; d < nd && !st; d++) {
    DIR *dir = opendir(dirs[d]);
    if (!dir) {
      TRACE("search dir %s: not readable, skipped", dirs[d]);
      continue;
    }
    char **names = NULL;
    int nn = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dir)) && !st;) {
      if (!ends_with(e->d_name, ".so")) continue;
      if (nn == cap) {
        cap = cap ? cap * 2 : 16;
        char **nv = fbx_realloc(names, (size_t)cap * sizeof *nv);
        if (!nv) {
          st = fbx_status_nomem();
          break;
        }
        names = nv;
      }
      if (!(names[nn] = fbx_strdup(e->d_name))) st = fbx_status_nomem();
      else nn++;
    }
    closedir(dir);
    if (nn) qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int i = 0; i < nn && !st; i++) {
      fbx_strbuf b = {0};
      fbx_strbuf_printf(&b, "%s/%s", dirs[d], names[i]);
      char *path = fbx_strbuf_take(&b);
      if (!path) {
        st = fbx_status_nomem();
        break;
      }
      char real[PATH_MAX];
      const char *key = realpath(path, real) ? real : path;
      bool dup = false;
      for (int k = 0; k < nseen && !dup; k++) dup = !strcmp(seen[k], key);
      if (!dup && is_file(path)) {
        char **ns = fbx_realloc(seen, (size_t)(nseen + 1) * sizeof *ns);
        if (!ns || !(ns[nseen] = fbx_strdup(key))) {
          if (ns) seen = ns;
          st = fbx_status_nomem();
        } else {
          seen = ns;
          nseen++;
          TRACE("candidate %s", path);
          st = probe(&l, path);
        }
      }
      fbx_free(path);
    }
    for (int i = 0; i < nn; i++) fbx_free(names[i]);
    fbx_free(names);
  }
  for (int k = 0; k < nseen; k++) fbx_free(seen[k]);
  fbx_free(seen);
  if (st) {
    fbx_fuser_candidates_free(l.items, l.n);
    return st;
  }
  *out = l.items;
  *count = l.n;
  return NULL;
}
