/* runtime_cuda.c — the nvfuser_like runtime on CUDA.
 *
 * Kernels are CUDA C compiled to PTX by the host's nvrtc_compile service
 * (for the device's compute capability; NVRTC's default where it does not
 * know that one) and loaded with cuModuleLoadData, which JIT-compiles the PTX
 * for the device. The driver, libcuda.so.1 (FUSEBOX_NVF_LIBCUDA: another
 * path, e.g. a stand-in driver in the tests), is loaded with dlopen and the few
 * types and entry points used are declared below (no CUDA header), so the
 * plugin loads everywhere and a machine without a driver or a device gets
 * FBXP_ERR_UNSUPPORTED with the reason.
 *
 * Device 0's primary context is retained at open and made current (pushed
 * and popped) around every call, so the caller's own current context is
 * left as it was. A run allocates device memory for every buffer, copies
 * NVF_BUF_IN buffers in, launches in order on the default stream, waits once
 * (cuCtxSynchronize) and copies NVF_BUF_OUT buffers back. Entry points must
 * be extern "C" (the name given is looked up as is).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_impl.h"

/* ---- the slice of the driver API we use (cuda.h, stable ABI) ----------------------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit pointers */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
  CUDA_SUCCESS = 0,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};
/* dynamic shared memory a kernel may use without opting in */
#define NVF_CU_DEFAULT_SHARED 49152u

typedef struct {
  void *lib;
  CUdevice dev;
  CUcontext ctx;
  char arch[32]; /* "compute_90", or "" for NVRTC's default */
  int max_shared; /* opt-in limit of dynamic shared memory per block */
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
} cu_rt;

typedef struct {
  CUmodule module;
  CUfunction fn;
  int shared_optin; /* dynamic shared bytes the function was opted in to (0: the default 48 KiB) */
} cu_prog;

static const char *cu_name(const cu_rt *c, CUresult r, char *buf, size_t cap) {
  const char *s = NULL;
  if (c->cuGetErrorName && c->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  snprintf(buf, cap, "CUDA error %d", (int)r);
  return buf;
}

#define CU_ERR(rt, code, fmt, ...)                                                                  \
  nvf_rt_errf((rt)->host, code, "nvfuser_like CUDA: " fmt, __VA_ARGS__)

static fbxp_status *push(nvf_rt *rt) {
  cu_rt *c = rt->impl;
  CUresult r = c->cuCtxPushCurrent(c->ctx);
  char nb[32];
  if (r != CUDA_SUCCESS) return CU_ERR(rt, FBXP_ERR_RUN, "cuCtxPushCurrent: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
  return NULL;
}

static void pop(nvf_rt *rt) {
  cu_rt *c = rt->impl;
  CUcontext dummy;
  c->cuCtxPopCurrent(&dummy);
}

/* ---- programs ---------------------------------------------------------------------------------- */

static fbxp_status *cu_compile(nvf_rt *rt, const char *source, const char *entry, void **handle) {
  cu_rt *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  char *ptx = NULL, *log = NULL, nb[32];
  fbxp_status *st = h->nvrtc_compile(source, entry, c->arch[0] ? c->arch : NULL, &ptx, &log);
  if (st) {
    fbxp_status *mine = CU_ERR(rt, h->status_code(st) == FBXP_ERR_UNSUPPORTED ? FBXP_ERR_UNSUPPORTED : FBXP_ERR_COMPILE,
                               "NVRTC building '%s' for %s: %s%s%s", entry, c->arch[0] ? c->arch : "the default arch",
                               h->status_message(st), log && !strstr(h->status_message(st), log) ? "\n" : "",
                               log && !strstr(h->status_message(st), log) ? log : "");
    h->status_free(st);
    h->free(log);
    return mine;
  }
  h->free(log);
  if ((st = push(rt))) {
    h->free(ptx);
    return st;
  }
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  CUresult r = c->cuModuleLoadData(&mod, ptx);
  h->free(ptx);
  if (r != CUDA_SUCCESS) {
    pop(rt);
    return CU_ERR(rt, FBXP_ERR_COMPILE, "cuModuleLoadData ('%s'): %s (%d)", entry, cu_name(c, r, nb, sizeof nb), r);
  }
  r = c->cuModuleGetFunction(&fn, mod, entry);
  if (r != CUDA_SUCCESS) {
    c->cuModuleUnload(mod);
    pop(rt);
    return CU_ERR(rt, FBXP_ERR_COMPILE, "cuModuleGetFunction('%s'): %s (%d) (entry points must be extern \"C\")",
                  entry, cu_name(c, r, nb, sizeof nb), r);
  }
  pop(rt);
  cu_prog *p = h->alloc(sizeof *p);
  if (!p) {
    if (!push(rt)) {
      c->cuModuleUnload(mod);
      pop(rt);
    }
    return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
  }
  p->module = mod;
  p->fn = fn;
  p->shared_optin = 0;
  *handle = p;
  return NULL;
}

static void cu_release_program(nvf_rt *rt, void *handle) {
  cu_rt *c = rt->impl;
  cu_prog *p = handle;
  fbxp_status *st = push(rt);
  if (!st) {
    c->cuModuleUnload(p->module);
    pop(rt);
  } else {
    rt->host->status_free(st);
  }
  rt->host->free(p);
}

/* ---- running ----------------------------------------------------------------------------------- */

typedef union {
  CUdeviceptr ptr;
  long long i64;
  int i32;
  float f32;
  double f64;
} cu_val;

static fbxp_status *cu_run_pushed(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                                  int32_t nlaunches, CUdeviceptr *mem) {
  cu_rt *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  char nb[32];
  CUresult r;
  uint64_t to_dev = 0, from_dev = 0;
  for (int32_t b = 0; b < nbufs; b++) {
    nvf_buffer *x = &bufs[b];
    if ((r = c->cuMemAlloc(&mem[b], x->bytes)) != CUDA_SUCCESS) {
      mem[b] = 0;
      return CU_ERR(rt, FBXP_ERR_RUN, "cuMemAlloc (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                    cu_name(c, r, nb, sizeof nb), r);
    }
    if (x->flags & NVF_BUF_IN) {
      if ((r = c->cuMemcpyHtoD(mem[b], x->data, x->bytes)) != CUDA_SUCCESS)
        return CU_ERR(rt, FBXP_ERR_RUN, "cuMemcpyHtoD (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                      cu_name(c, r, nb, sizeof nb), r);
      to_dev += x->bytes;
    }
  }
  for (int32_t l = 0; l < nlaunches; l++) {
    const nvf_launch *x = &launches[l];
    cu_prog *p = x->program->handle;
    const char *entry = x->program->entry;
    cu_val vals_stack[16];
    void *params_stack[16];
    cu_val *vals = vals_stack;
    void **params = params_stack;
    if (x->nargs > 16) {
      vals = h->alloc((size_t)x->nargs * sizeof *vals);
      params = h->alloc((size_t)x->nargs * sizeof *params);
      if (!vals || !params) {
        h->free(vals);
        h->free(params);
        return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
      }
    }
    unsigned shared = 0;
    int np = 0;
    for (int32_t a = 0; a < x->nargs; a++) {
      const nvf_arg *g = &x->args[a];
      switch (g->kind) {
      case NVF_ARG_BUFFER: vals[np].ptr = mem[g->buffer]; break;
      case NVF_ARG_I64: vals[np].i64 = (long long)g->i; break;
      case NVF_ARG_I32: vals[np].i32 = (int)g->i; break;
      case NVF_ARG_F32: vals[np].f32 = (float)g->f; break;
      case NVF_ARG_F64: vals[np].f64 = g->f; break;
      case NVF_ARG_LOCAL: shared = (unsigned)g->local_bytes; continue; /* not a parameter */
      }
      params[np] = &vals[np];
      np++;
    }
    fbxp_status *st = NULL;
    if (shared > NVF_CU_DEFAULT_SHARED && (int)shared > p->shared_optin) {
      if ((int)shared > c->max_shared)
        st = CU_ERR(rt, FBXP_ERR_RUN, "launch %d (%s): %u bytes of dynamic shared memory; the device allows %d",
                    (int)l, entry, shared, c->max_shared);
      else if ((r = c->cuFuncSetAttribute(p->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared)) !=
               CUDA_SUCCESS)
        st = CU_ERR(rt, FBXP_ERR_RUN, "launch %d (%s): cuFuncSetAttribute(max dynamic shared %u): %s (%d)", (int)l,
                    entry, shared, cu_name(c, r, nb, sizeof nb), r);
      else
        p->shared_optin = (int)shared; /* a benign race: concurrent runs set the same attribute */
    }
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    for (int32_t d = 0; d < x->dims; d++) {
      block[d] = (unsigned)x->local[d];
      grid[d] = (unsigned)(x->global[d] / x->local[d]);
    }
    if (!st && (r = c->cuLaunchKernel(p->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, NULL,
                                      params, NULL)) != CUDA_SUCCESS)
      st = CU_ERR(rt, FBXP_ERR_RUN, "launch %d (%s): cuLaunchKernel (grid %ux%ux%u, block %ux%ux%u, %u shared bytes): "
                  "%s (%d)",
                  (int)l, entry, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                  cu_name(c, r, nb, sizeof nb), r);
    if (vals != vals_stack) {
      h->free(vals);
      h->free(params);
    }
    if (st) return st;
  }
  /* one wait; a fault in any launch surfaces here */
  if ((r = c->cuCtxSynchronize()) != CUDA_SUCCESS)
    return CU_ERR(rt, FBXP_ERR_RUN, "cuCtxSynchronize after launches 0..%d (%s .. %s): %s (%d)", (int)nlaunches - 1,
                  launches[0].program->entry, launches[nlaunches - 1].program->entry, cu_name(c, r, nb, sizeof nb), r);
  for (int32_t b = 0; b < nbufs; b++) {
    nvf_buffer *x = &bufs[b];
    if (!(x->flags & NVF_BUF_OUT)) continue;
    if ((r = c->cuMemcpyDtoH(x->data, mem[b], x->bytes)) != CUDA_SUCCESS)
      return CU_ERR(rt, FBXP_ERR_RUN, "cuMemcpyDtoH (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                    cu_name(c, r, nb, sizeof nb), r);
    from_dev += x->bytes;
  }
  pthread_mutex_lock(&rt->lock);
  rt->stats.bytes_to_device += to_dev;
  rt->stats.bytes_from_device += from_dev;
  pthread_mutex_unlock(&rt->lock);
  return NULL;
}

static fbxp_status *cu_run(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                           int32_t nlaunches) {
  cu_rt *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  CUdeviceptr stack_mem[16];
  CUdeviceptr *mem = stack_mem;
  if (nbufs > 16 && !(mem = h->alloc((size_t)nbufs * sizeof *mem)))
    return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
  for (int32_t b = 0; b < nbufs; b++) mem[b] = 0;
  fbxp_status *st = push(rt);
  if (!st) {
    st = cu_run_pushed(rt, bufs, nbufs, launches, nlaunches, mem);
    if (st) c->cuCtxSynchronize(); /* nothing may still use the memory freed below */
    for (int32_t b = 0; b < nbufs; b++)
      if (mem[b]) c->cuMemFree(mem[b]);
    pop(rt);
  }
  if (mem != stack_mem) h->free(mem);
  return st;
}

/* ---- opening ----------------------------------------------------------------------------------- */

static void cu_close(nvf_rt *rt) {
  cu_rt *c = rt->impl;
  if (!c) return;
  if (c->ctx) c->cuDevicePrimaryCtxRelease(c->dev);
  /* libcuda stays loaded: drivers do not like to be unloaded */
  rt->host->free(c);
  rt->impl = NULL;
}

static const nvf_backend CU_BACKEND = {
    .compile = cu_compile, .release_program = cu_release_program, .run = cu_run, .close = cu_close};

/* The first of the names that the driver exports (versioned names first). */
static void *sym(void *lib, const char *a, const char *b) {
  void *p = dlsym(lib, a);
  return p || !b ? p : dlsym(lib, b);
}

fbxp_status *nvf_rt_open_cuda(nvf_rt *rt) {
  const fbxp_host_api *h = rt->host;
  rt->be = &CU_BACKEND;
  if (h->struct_size < FBXP_HOST_API_SIZE_V1_1)
    return h->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like CUDA: the host is older than fuser ABI 1.1");
  const char *path = getenv("FUSEBOX_NVF_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "no CUDA driver (%s)", why ? why : path);
  }
  cu_rt *c = h->alloc(sizeof *c);
  if (!c) return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
  memset(c, 0, sizeof *c);
  c->lib = lib;
  struct {
    void **slot;
    const char *name, *alt;
  } syms[] = {
      {(void **)&c->cuInit, "cuInit", NULL},
      {(void **)&c->cuGetErrorName, "cuGetErrorName", NULL},
      {(void **)&c->cuDeviceGetCount, "cuDeviceGetCount", NULL},
      {(void **)&c->cuDeviceGet, "cuDeviceGet", NULL},
      {(void **)&c->cuDeviceGetName, "cuDeviceGetName", NULL},
      {(void **)&c->cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL},
      {(void **)&c->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL},
      {(void **)&c->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
      {(void **)&c->cuCtxPushCurrent, "cuCtxPushCurrent_v2", "cuCtxPushCurrent"},
      {(void **)&c->cuCtxPopCurrent, "cuCtxPopCurrent_v2", "cuCtxPopCurrent"},
      {(void **)&c->cuCtxSynchronize, "cuCtxSynchronize", NULL},
      {(void **)&c->cuModuleLoadData, "cuModuleLoadData", NULL},
      {(void **)&c->cuModuleUnload, "cuModuleUnload", NULL},
      {(void **)&c->cuModuleGetFunction, "cuModuleGetFunction", NULL},
      {(void **)&c->cuFuncSetAttribute, "cuFuncSetAttribute", NULL},
      {(void **)&c->cuMemAlloc, "cuMemAlloc_v2", NULL},
      {(void **)&c->cuMemFree, "cuMemFree_v2", NULL},
      {(void **)&c->cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL},
      {(void **)&c->cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL},
      {(void **)&c->cuLaunchKernel, "cuLaunchKernel", NULL},
  };
  fbxp_status *st = NULL;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    if (!(*syms[i].slot = sym(lib, syms[i].name, syms[i].alt))) {
      st = CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "the CUDA driver lacks %s", syms[i].name);
      h->free(c);
      return st;
    }
  }
  rt->impl = c;
  char nb[32];
  CUresult r = c->cuInit(0);
  if (r != CUDA_SUCCESS) {
    st = CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "cuInit: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
    goto fail;
  }
  int count = 0;
  if ((r = c->cuDeviceGetCount(&count)) != CUDA_SUCCESS || count < 1) {
    st = r != CUDA_SUCCESS ? CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "cuDeviceGetCount: %s (%d)", cu_name(c, r, nb, sizeof nb), r)
                           : h->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like CUDA: no CUDA device (0 devices)");
    goto fail;
  }
  if ((r = c->cuDeviceGet(&c->dev, 0)) != CUDA_SUCCESS) {
    st = CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "cuDeviceGet(0): %s (%d)", cu_name(c, r, nb, sizeof nb), r);
    goto fail;
  }
  if ((r = c->cuDevicePrimaryCtxRetain(&c->ctx, c->dev)) != CUDA_SUCCESS) {
    c->ctx = NULL;
    st = CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "cuDevicePrimaryCtxRetain: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
    goto fail;
  }
  char name[256] = "?";
  int major = 0, minor = 0, sms = 0;
  c->cuDeviceGetName(name, (int)sizeof name, c->dev);
  name[sizeof name - 1] = '\0';
  c->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev);
  c->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev);
  c->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->dev);
  if (c->cuDeviceGetAttribute(&c->max_shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->dev) !=
          CUDA_SUCCESS ||
      c->max_shared < (int)NVF_CU_DEFAULT_SHARED)
    c->max_shared = (int)NVF_CU_DEFAULT_SHARED;
  if (major > 0) snprintf(c->arch, sizeof c->arch, "compute_%d%d", major, minor);
  /* NVRTC present, and does it know this arch? (else its default: the
   * driver JIT-compiles PTX of an older arch for the device) */
  static const char probe[] = "extern \"C\" __global__ void nvf_probe() {}\n";
  char *ptx = NULL, *log = NULL;
  st = h->nvrtc_compile(probe, "nvf_probe", c->arch[0] ? c->arch : NULL, &ptx, &log);
  if (st && h->status_code(st) != FBXP_ERR_UNSUPPORTED && c->arch[0]) {
    h->status_free(st);
    h->free(log);
    log = NULL;
    c->arch[0] = '\0';
    st = h->nvrtc_compile(probe, "nvf_probe", NULL, &ptx, &log);
  }
  h->free(ptx);
  h->free(log);
  if (st) {
    fbxp_status *mine = CU_ERR(rt, FBXP_ERR_UNSUPPORTED, "NVRTC cannot build for %s: %s", name, h->status_message(st));
    h->status_free(st);
    st = mine;
    goto fail;
  }
  snprintf(rt->device, sizeof rt->device, "CUDA: %s (sm_%d%d), %d SMs%s", name, major, minor, sms,
           c->arch[0] ? "" : ", PTX for NVRTC's default arch");
  return NULL;
fail:
  cu_close(rt);
  return st;
}
