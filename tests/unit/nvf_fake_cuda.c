/* A stand-in CUDA driver (libcuda.so.1's entry points used by the kit's
 * CUDA module, sdk/kit/kit_cuda.c) for test_nvf_rt and test_te_gpu on
 * machines without a GPU, loaded through FUSEBOX_NVF_LIBCUDA or
 * FUSEBOX_LIBCUDA. Device memory is host memory;
 * modules keep the PTX and find entries by ".entry name("; a launch of one of
 * the four kernels test_nvf_rt writes in CUDA C (padd, wg_sum, part, fin) is
 * carried out here in C over the grid and block it was given, reading the
 * kernel parameters as the CUDA C declares them — so a wrong grid, block,
 * parameter or shared-memory size gives wrong results or an error.
 *
 * FAKE_CUDA_MODE (read by cuInit): "init_fail" (cuInit returns
 * CUDA_ERROR_NO_DEVICE), "zero" (no devices), "sync_fail"
 * (cuCtxSynchronize returns CUDA_ERROR_LAUNCH_FAILED); unset: one device.
 * fake_cuda_counters() exposes what the test checks. A launch of any other
 * entry goes to the function a test set with fake_cuda_set_kernel (it gets
 * the entry's name, grid, block, shared bytes and the parameter pointers, as
 * cuLaunchKernel does); without one it fails.
 * Events read a fake clock that a launch advances by 0.25 ms and a
 * device-to-device copy of n bytes by n / 1e6 ms (2 GB/s read + written),
 * so that timed figures have known values.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  OK = 0,
  ERR_INVALID_VALUE = 1,
  ERR_NO_DEVICE = 100,
  ERR_INVALID_PTX = 218,
  ERR_NOT_FOUND = 500,
  ERR_LAUNCH_FAILED = 719
};

typedef struct {
  long live_allocs, ctx_depth, ctx_retained, modules, launches, last_shared, max_dyn_shared_set, total_allocs;
} fake_counters;

static fake_counters K;
static int mode_zero, mode_sync_fail;
static int ctx_token;

__attribute__((visibility("default"))) fake_counters *fake_cuda_counters(void) { return &K; }

typedef struct {
  char *ptx;
} fake_module;
typedef struct {
  char name[64];
  int max_dyn_shared;
} fake_function;

#define API __attribute__((visibility("default")))

typedef CUresult (*fake_kernel_fn)(const char *name, unsigned gx, unsigned bx, unsigned shared, void **params);
static fake_kernel_fn other_kernels;
__attribute__((visibility("default"))) void fake_cuda_set_kernel(fake_kernel_fn fn) { other_kernels = fn; }

API CUresult cuInit(unsigned flags) {
  const char *m = getenv("FAKE_CUDA_MODE");
  mode_zero = m && !strcmp(m, "zero");
  mode_sync_fail = m && !strcmp(m, "sync_fail");
  if (flags) return ERR_INVALID_VALUE;
  return m && !strcmp(m, "init_fail") ? ERR_NO_DEVICE : OK;
}

API CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
  case OK: *s = "CUDA_SUCCESS"; return OK;
  case ERR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
  case ERR_NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; return OK;
  case ERR_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
  case ERR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
  case ERR_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; return OK;
  default: *s = NULL; return ERR_INVALID_VALUE;
  }
}

API CUresult cuDeviceGetCount(int *n) {
  *n = mode_zero ? 0 : 1;
  return OK;
}
API CUresult cuDeviceGet(int *d, int i) {
  if (mode_zero || i != 0) return ERR_INVALID_VALUE;
  *d = 0;
  return OK;
}
API CUresult cuDeviceGetName(char *buf, int len, int d) {
  strncpy(buf, "Fake GPU", (size_t)len);
  return OK;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  switch (attr) {
  case 16: *v = 2; return OK;          /* SMs */
  case 75: *v = 8; return OK;          /* compute capability 8.0 */
  case 76: *v = 0; return OK;
  case 97: *v = 100 * 1024; return OK; /* opt-in shared memory per block */
  default: return ERR_INVALID_VALUE;
  }
}
API CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) {
  *ctx = &ctx_token;
  K.ctx_retained++;
  return OK;
}
API CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  K.ctx_retained--;
  return OK;
}
API CUresult cuCtxPushCurrent_v2(void *ctx) {
  if (ctx != &ctx_token) return ERR_INVALID_VALUE;
  K.ctx_depth++;
  return OK;
}
API CUresult cuCtxPopCurrent_v2(void **ctx) {
  if (K.ctx_depth <= 0) return ERR_INVALID_VALUE;
  K.ctx_depth--;
  if (ctx) *ctx = &ctx_token;
  return OK;
}
API CUresult cuCtxSynchronize(void) {
  if (K.ctx_depth <= 0) return ERR_INVALID_VALUE; /* no current context */
  return mode_sync_fail ? ERR_LAUNCH_FAILED : OK;
}

API CUresult cuModuleLoadData(void **mod, const void *image) {
  if (K.ctx_depth <= 0) return ERR_INVALID_VALUE;
  const char *ptx = image;
  if (!strstr(ptx, ".version") || !strstr(ptx, ".target")) return ERR_INVALID_PTX;
  fake_module *m = malloc(sizeof *m);
  m->ptx = strdup(ptx);
  *mod = m;
  K.modules++;
  return OK;
}
API CUresult cuModuleUnload(void *mod) {
  if (K.ctx_depth <= 0) return ERR_INVALID_VALUE;
  fake_module *m = mod;
  free(m->ptx);
  free(m);
  K.modules--;
  return OK;
}
API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  fake_module *m = mod;
  char pat[80];
  if (strlen(name) > 60) return ERR_NOT_FOUND;
  strcpy(pat, ".entry ");
  strcat(pat, name);
  strcat(pat, "(");
  if (!strstr(m->ptx, pat)) return ERR_NOT_FOUND;
  /* one function object per module and name would be leaked here by a real
   * driver's rules too: it lives as long as the module; keep it simple */
  static fake_function fns[256];
  static int nfns;
  if (nfns == 256) return ERR_INVALID_VALUE;
  fake_function *f = &fns[nfns++];
  strcpy(f->name, name);
  f->max_dyn_shared = 48 * 1024;
  *fn = f;
  return OK;
}
API CUresult cuFuncSetAttribute(void *fn, int attr, int v) {
  fake_function *f = fn;
  if (attr != 8 || v > 100 * 1024) return ERR_INVALID_VALUE;
  f->max_dyn_shared = v;
  K.max_dyn_shared_set = v;
  return OK;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  if (K.ctx_depth <= 0 || !n) return ERR_INVALID_VALUE;
  *p = (CUdeviceptr)(uintptr_t)malloc(n);
  K.live_allocs++;
  K.total_allocs++;
  return OK;
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  K.live_allocs--;
  return OK;
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return OK;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return OK;
}

static double fake_clock_ms;
typedef struct {
  double at;
  int recorded;
} fake_event;
API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  if (K.ctx_depth <= 0) return ERR_INVALID_VALUE;
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  fake_clock_ms += (double)n / 1e6;
  return OK;
}
API CUresult cuEventCreate(void **ev, unsigned flags) {
  (void)flags;
  if (K.ctx_depth <= 0 || !(*ev = calloc(1, sizeof(fake_event)))) return ERR_INVALID_VALUE;
  K.live_allocs++;
  return OK;
}
API CUresult cuEventRecord(void *ev, void *stream) {
  (void)stream;
  fake_event *e = ev;
  e->at = fake_clock_ms;
  e->recorded = 1;
  return OK;
}
API CUresult cuEventSynchronize(void *ev) { return ((fake_event *)ev)->recorded ? OK : ERR_INVALID_VALUE; }
API CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  fake_event *x = a, *y = b;
  if (!x->recorded || !y->recorded) return ERR_INVALID_VALUE;
  *ms = (float)(y->at - x->at);
  return OK;
}
API CUresult cuEventDestroy_v2(void *ev) {
  free(ev);
  K.live_allocs--;
  return OK;
}

#define PTR(i, T) ((T *)(uintptr_t)(*(CUdeviceptr *)params[i]))
#define VAL(i, T) (*(T *)params[i])

API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, void *stream, void **params, void **extra) {
  fake_function *f = fn;
  if (K.ctx_depth <= 0 || extra || !params || !gx || !gy || !gz || !bx || !by || !bz) return ERR_INVALID_VALUE;
  if ((int)shared > f->max_dyn_shared) return ERR_INVALID_VALUE;
  K.launches++;
  fake_clock_ms += 0.25;
  K.last_shared = shared;
  if (!strcmp(f->name, "padd")) { /* (const float *a, const float *b, float *c, long long n) */
    const float *a = PTR(0, const float), *b = PTR(1, const float);
    float *c = PTR(2, float);
    long long n = VAL(3, long long);
    for (unsigned long long i = 0; i < (unsigned long long)gx * bx; i++)
      if ((long long)i < n) c[i] = a[i] + b[i];
    return OK;
  }
  if (!strcmp(f->name, "wg_sum")) { /* (const float *x, float *out, int n), blockDim floats of shared */
    if (shared < bx * sizeof(float) || gx != 1) return ERR_LAUNCH_FAILED;
    const float *x = PTR(0, const float);
    float *out = PTR(1, float);
    int n = VAL(2, int);
    float acc = 0;
    for (int i = 0; i < n; i++) acc += x[i];
    out[0] = acc;
    return OK;
  }
  if (!strcmp(f->name, "part")) { /* (const float *x, float *partial, int cols, int groups), grid (groups, rows) */
    if (shared < bx * sizeof(float)) return ERR_LAUNCH_FAILED;
    const float *x = PTR(0, const float);
    float *partial = PTR(1, float);
    int cols = VAL(2, int), groups = VAL(3, int);
    for (unsigned row = 0; row < gy; row++)
      for (unsigned g = 0; g < gx; g++) {
        float acc = 0;
        for (unsigned t = 0; t < bx; t++)
          for (long long c = (long long)g * bx + t; c < cols; c += (long long)groups * bx)
            acc += x[(long long)row * cols + c];
        partial[row * groups + g] = acc;
      }
    return OK;
  }
  if (!strcmp(f->name, "fin")) { /* (const float *partial, float *out, int rows, int groups) */
    const float *partial = PTR(0, const float);
    float *out = PTR(1, float);
    int rows = VAL(2, int), groups = VAL(3, int);
    for (unsigned long long row = 0; row < (unsigned long long)gx * bx; row++) {
      if ((long long)row >= rows) continue;
      float acc = 0;
      for (int g = 0; g < groups; g++) acc += partial[row * groups + g];
      out[row] = acc;
    }
    return OK;
  }
  if (other_kernels && gy == 1 && gz == 1 && by == 1 && bz == 1) return other_kernels(f->name, gx, bx, shared, params);
  return ERR_LAUNCH_FAILED;
}
