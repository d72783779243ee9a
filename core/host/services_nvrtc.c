/* Host service: CUDA C -> PTX through NVRTC.
 *
 * libnvrtc is loaded with dlopen on first use (no link-time dependency, no
 * CUDA headers: the handful of declarations below are NVRTC's stable C API),
 * so fusebox builds and runs where CUDA is absent, and compiles PTX where the
 * toolkit is installed but no GPU is. Search order: $FUSEBOX_NVRTC (a path),
 * the loader's own search (libnvrtc.so, .so.13, .so.12, .so.11.2), then the
 * toolkit next to `nvcc` on PATH and /usr/local/cuda*.
 *
 * Default architecture ($FUSEBOX_NVRTC_ARCH overrides): the newest of
 * compute_90/80/75/70 that the loaded NVRTC supports, decided once.
 */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "host/services.h"

typedef int nvrtcResult; /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;
enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6, NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7 };

static struct {
  void *lib;
  char path[PATH_MAX];
  int major, minor;
  char arch[32];         /* default --gpu-architecture value */
  char *tried;           /* when lib is NULL: what was tried (for the message) */
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
  nvrtcResult (*get_ptx)(nvrtcProgram, char *);
  nvrtcResult (*log_size)(nvrtcProgram, size_t *);
  nvrtcResult (*get_log)(nvrtcProgram, char *);
  nvrtcResult (*destroy)(nvrtcProgram *);
  const char *(*error_string)(nvrtcResult);
  nvrtcResult (*version)(int *, int *);
  nvrtcResult (*num_archs)(int *);  /* optional (11.2+) */
  nvrtcResult (*archs)(int *);      /* optional (11.2+) */
} N;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *err_str(nvrtcResult r) {
  const char *s = N.error_string ? N.error_string(r) : NULL;
  return s ? s : "unknown NVRTC error";
}

static int try_open(const char *name, fbx_strbuf *tried) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (tried->len) fbx_strbuf_puts(tried, ", ");
  fbx_strbuf_puts(tried, name);
  if (!h) {
    fbx_log(FBX_LOG_LOADER, "nvrtc: %s: %s", name, dlerror());
    return 0;
  }
  void **slots[] = {(void **)&N.create,   (void **)&N.compile,  (void **)&N.ptx_size,
                    (void **)&N.get_ptx,  (void **)&N.log_size, (void **)&N.get_log,
                    (void **)&N.destroy,  (void **)&N.error_string, (void **)&N.version};
  static const char *const names[] = {"nvrtcCreateProgram",     "nvrtcCompileProgram", "nvrtcGetPTXSize",
                                      "nvrtcGetPTX",            "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
                                      "nvrtcDestroyProgram",    "nvrtcGetErrorString", "nvrtcVersion"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    *slots[i] = dlsym(h, names[i]);
    if (!*slots[i]) {
      fbx_log(FBX_LOG_LOADER, "nvrtc: %s lacks %s", name, names[i]);
      fbx_strbuf_printf(tried, " (lacks %s)", names[i]);
      dlclose(h);
      return 0;
    }
  }
  *(void **)&N.num_archs = dlsym(h, "nvrtcGetNumSupportedArchs");
  *(void **)&N.archs = dlsym(h, "nvrtcGetSupportedArchs");
  N.lib = h;
  snprintf(N.path, sizeof N.path, "%s", name);
  return 1;
}

static int try_glob(const char *pattern, fbx_strbuf *tried) {
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0) return 0;
  int ok = 0;
  /* glob sorts; walk backwards so the newest toolkit wins */
  for (size_t i = g.gl_pathc; i-- > 0 && !ok;) ok = try_open(g.gl_pathv[i], tried);
  globfree(&g);
  return ok;
}

/* NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by bare name at compile
 * time. When libnvrtc itself came from a path the dynamic loader does not
 * search, load the builtins from the same directory first, so that the bare
 * name resolves to the already-loaded object (matched by soname). */
static void preload_builtins(void) {
  const char *slash = strrchr(N.path, '/');
  if (!slash) return;
  char soname[64], p[PATH_MAX + 64];
  snprintf(soname, sizeof soname, "libnvrtc-builtins.so.%d.%d", N.major, N.minor);
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL); /* already findable? */
  if (!h) {
    snprintf(p, sizeof p, "%.*s/%s", (int)(slash - N.path), N.path, soname);
    h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    snprintf(p, sizeof p, "%.*s/libnvrtc-builtins.so.*", (int)(slash - N.path), N.path);
    glob_t g;
    if (glob(p, 0, NULL, &g) == 0) {
      for (size_t i = g.gl_pathc; i-- > 0 && !h;) h = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
      globfree(&g);
    }
  }
  /* kept open for the life of the process, like libnvrtc */
  fbx_log(FBX_LOG_LOADER, "nvrtc: builtins %s", h ? "loaded" : "not found next to libnvrtc (compiles may fail)");
}

/* Is compute_<a> accepted by the loaded NVRTC? */
static int arch_supported(int a) {
  if (N.num_archs && N.archs) {
    int n = 0;
    if (N.num_archs(&n) == NVRTC_SUCCESS && n > 0 && n < 1024) {
      int v[1024];
      if (N.archs(v) == NVRTC_SUCCESS) {
        for (int i = 0; i < n; i++)
          if (v[i] == a) return 1;
        return 0;
      }
    }
  }
  /* Older NVRTC: compile an empty kernel. */
  nvrtcProgram p;
  if (N.create(&p, "extern \"C\" __global__ void fbx_probe() {}", "probe.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
    return 0;
  char opt[64];
  snprintf(opt, sizeof opt, "--gpu-architecture=compute_%d", a);
  const char *opts[] = {opt};
  int ok = N.compile(p, 1, opts) == NVRTC_SUCCESS;
  N.destroy(&p);
  return ok;
}

/* compute_NN / sm_NN (optionally a letter suffix: sm_90a), as NVRTC names them */
static int arch_name_ok(const char *a) {
  const char *d = !strncmp(a, "compute_", 8) ? a + 8 : !strncmp(a, "sm_", 3) ? a + 3 : NULL;
  if (!d) return 0;
  size_t n = strspn(d, "0123456789");
  return n >= 2 && n <= 4 && (!d[n] || (d[n] >= 'a' && d[n] <= 'z' && !d[n + 1]));
}

static void load(void) {
  fbx_strbuf tried = {0};
  int ok = 0;
  /* FUSEBOX_NVRTC_ARCH is checked first, so that a bad value is reported
   * whether or not NVRTC is installed */
  const char *arch = getenv("FUSEBOX_NVRTC_ARCH");
  if (arch && *arch && !arch_name_ok(arch)) {
    fprintf(stderr,
            "[fusebox:nvrtc] warning: FUSEBOX_NVRTC_ARCH='%.64s' is not an NVRTC architecture like compute_80 or "
            "sm_90; using the default\n",
            arch);
    arch = NULL;
  }
  const char *env = getenv("FUSEBOX_NVRTC");
  if (env && *env) {
    ok = try_open(env, &tried);
    if (!ok)
      fprintf(stderr, "[fusebox:nvrtc] warning: FUSEBOX_NVRTC='%.256s' does not load as libnvrtc; searching the "
                      "usual places\n",
              env);
  }
  static const char *const sonames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
  for (size_t i = 0; !ok && i < sizeof sonames / sizeof sonames[0]; i++) ok = try_open(sonames[i], &tried);
  /* the toolkit of the nvcc on PATH */
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; !ok && *p;) {
    size_t n = strcspn(p, ":");
    char nvcc[PATH_MAX], pat[PATH_MAX + 64];
    if (n > 0 && n < PATH_MAX - 16) {
      snprintf(nvcc, sizeof nvcc, "%.*s/nvcc", (int)n, p);
      if (access(nvcc, X_OK) == 0) {
        snprintf(pat, sizeof pat, "%.*s/../lib64/libnvrtc.so*", (int)n, p);
        ok = try_glob(pat, &tried);
        if (!ok) {
          snprintf(pat, sizeof pat, "%.*s/../targets/*-linux/lib/libnvrtc.so*", (int)n, p);
          ok = try_glob(pat, &tried);
        }
      }
    }
    p += n;
    if (*p == ':') p++;
  }
  if (!ok) ok = try_glob("/usr/local/cuda/lib64/libnvrtc.so*", &tried);
  if (!ok) ok = try_glob("/usr/local/cuda-*/lib64/libnvrtc.so*", &tried);
  if (!ok) ok = try_glob("/usr/local/cuda*/targets/*-linux/lib/libnvrtc.so*", &tried);
  if (!ok) {
    fbx_strbuf_puts(&tried, ""); /* make sure data is non-NULL */
    N.tried = fbx_strbuf_take(&tried);
    fbx_log(FBX_LOG_LOADER, "nvrtc: not found (tried: %s)", N.tried ? N.tried : "?");
    return;
  }
  fbx_strbuf_free(&tried);
  if (N.version(&N.major, &N.minor) != NVRTC_SUCCESS) N.major = N.minor = 0;
  preload_builtins();
  if (arch && *arch) {
    snprintf(N.arch, sizeof N.arch, "%s", arch);
  } else {
    static const int prefs[] = {90, 80, 75, 70};
    for (size_t i = 0; i < sizeof prefs / sizeof prefs[0] && !N.arch[0]; i++)
      if (arch_supported(prefs[i])) snprintf(N.arch, sizeof N.arch, "compute_%d", prefs[i]);
    if (!N.arch[0]) snprintf(N.arch, sizeof N.arch, "compute_52");
  }
  fbx_log(FBX_LOG_LOADER, "nvrtc: loaded %s (NVRTC %d.%d), default arch %s", N.path, N.major, N.minor, N.arch);
}

/* A copy of the program log (fbx_malloc'd), NULL when empty. */
static char *program_log(nvrtcProgram p) {
  size_t n = 0;
  if (N.log_size(p, &n) != NVRTC_SUCCESS || n <= 1) return NULL;
  char *s = fbx_malloc(n + 1);
  if (!s) return NULL;
  if (N.get_log(p, s) != NVRTC_SUCCESS) {
    fbx_free(s);
    return NULL;
  }
  s[n] = '\0';
  return s;
}

fbxp_status *fbx_svc_nvrtc_compile(const char *source, const char *name, const char *arch, char **ptx,
                                   char **log) {
  if (log) *log = NULL;
  if (!ptx) return fbx_svc_status(FBXP_ERR_INVALID, "nvrtc_compile: ptx is NULL");
  *ptx = NULL;
  if (!source) return fbx_svc_status(FBXP_ERR_INVALID, "nvrtc_compile: source is NULL");
  pthread_once(&once, load);
  if (!N.lib)
    return fbx_svc_status(FBXP_ERR_UNSUPPORTED, "NVRTC not found (tried: %s)", N.tried ? N.tried : "?");
  char opt_arch[96];
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch && *arch ? arch : N.arch);
  const char *opts[] = {opt_arch, "-default-device"};
  nvrtcProgram p;
  nvrtcResult r = N.create(&p, source, name && *name ? name : "fusebox_kernel.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return fbx_svc_status(r == 1 ? FBXP_ERR_NOMEM : FBXP_ERR_INTERNAL, "nvrtcCreateProgram: %s", err_str(r));
  r = N.compile(p, 2, opts);
  char *text = program_log(p);
  fbxp_status *st = NULL;
  if (r != NVRTC_SUCCESS) {
    /* The message carries the log (first 4 KB); *log the whole of it. A
     * builtins failure is an incomplete installation, not the source's fault. */
    st = fbx_svc_status(r == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE ? FBXP_ERR_UNSUPPORTED : FBXP_ERR_COMPILE, "NVRTC %s (%s -default-device):\n%.4096s", err_str(r), opt_arch,
                        text ? text : "(no log)");
  } else {
    size_t n = 0;
    r = N.ptx_size(p, &n);
    char *out = r == NVRTC_SUCCESS ? fbx_malloc(n + 1) : NULL;
    if (r != NVRTC_SUCCESS) {
      st = fbx_svc_status(FBXP_ERR_INTERNAL, "nvrtcGetPTXSize: %s", err_str(r));
    } else if (!out) {
      st = fbx_svc_status(FBXP_ERR_NOMEM, "out of memory (PTX of %zu bytes)", n);
    } else if ((r = N.get_ptx(p, out)) != NVRTC_SUCCESS) {
      fbx_free(out);
      st = fbx_svc_status(FBXP_ERR_INTERNAL, "nvrtcGetPTX: %s", err_str(r));
    } else {
      out[n] = '\0';
      *ptx = out;
    }
  }
  N.destroy(&p);
  if (log) *log = text;
  else fbx_free(text);
  return st;
}
