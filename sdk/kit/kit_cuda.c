/* kit_cuda.c — the CUDA driver API for fuser plugins (kit_cuda.h).
 *
 * The slice of cuda.h used here is declared below (the driver's ABI is
 * stable: versioned entry points such as cuMemAlloc_v2 are looked up first),
 * so the kit needs no CUDA installation to build and a plugin that links it
 * loads on any machine. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/kit/kit_cuda.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit pointers */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
  CUDA_SUCCESS = 0,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};
/* dynamic shared memory a kernel may use without opting in */
#define KC_DEFAULT_SHARED 49152u
/* Device memory kept between runs (a caching allocator, as PyTorch's CUDA
 * allocator is): at most KC_POOL blocks and KC_POOL_BYTES in all. A run
 * takes the smallest kept block of at least its size and at most twice it,
 * else allocates; its blocks come back after the run's one synchronize, so
 * a run of the same shapes as the last calls neither cuMemAlloc nor
 * cuMemFree (which waits for the device). */
enum { KC_POOL = 32 };
#define KC_POOL_BYTES ((size_t)2 << 30)

typedef struct kc_block {
  CUdeviceptr ptr;
  size_t bytes;
} kc_block;

struct fbxk_cuda {
  const fbxp_host_api *host;
  const char *who;
  void *lib;
  CUdevice dev;
  CUcontext ctx;
  char arch[32];  /* "compute_90", or "" for NVRTC's default */
  int max_shared; /* opt-in limit of dynamic shared memory per block */
  char device[320];
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
  /* optional: kernel timing (FUSEBOX_CUDA_KERNEL_TIMING=1) and the copy bandwidth */
  int timing;
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  /* the pool of kept device blocks (KC_POOL) */
  pthread_mutex_t pool_mu;
  int pool_inited;
  int npool;
  size_t pooled;
  kc_block pool[KC_POOL];
};

struct fbxk_cuda_fn {
  struct fbxk_cuda_fn *next; /* the module's list */
  CUfunction fn;
  int shared_optin; /* dynamic shared bytes the function was opted in to (0: the default 48 KiB) */
  char name[];
};

struct fbxk_cuda_module {
  CUmodule module;
  fbxk_cuda_fn *fns;
};

/* A status "<who>: <message>" (the message truncated at 16 KiB). */
__attribute__((format(printf, 3, 4))) static fbxp_status *err(const fbxk_cuda *cu, fbxp_code code, const char *fmt,
                                                                ...) {
  enum { CAP = 16384 };
  const fbxp_host_api *h = cu->host;
  char *buf = h->alloc(CAP);
  if (!buf) return h->status_new(code, fmt); /* at least the shape of the message */
  int n = snprintf(buf, CAP, "%s: ", cu->who);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, CAP - (size_t)n, fmt, ap);
  va_end(ap);
  fbxp_status *st = h->status_new(code, buf);
  h->free(buf);
  return st;
}

static const char *cu_name(const fbxk_cuda *c, CUresult r, char *buf, size_t cap) {
  const char *s = NULL;
  if (c->cuGetErrorName && c->cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  snprintf(buf, cap, "CUDA error %d", (int)r);
  return buf;
}

static fbxp_status *push(fbxk_cuda *c) {
  CUresult r = c->cuCtxPushCurrent(c->ctx);
  char nb[32];
  if (r != CUDA_SUCCESS) return err(c, FBXP_ERR_RUN, "cuCtxPushCurrent: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
  return NULL;
}

static void pop(fbxk_cuda *c) {
  CUcontext dummy;
  c->cuCtxPopCurrent(&dummy);
}

/* Frees every kept block (the context current). */
static void pool_drain(fbxk_cuda *c) {
  pthread_mutex_lock(&c->pool_mu);
  for (int i = 0; i < c->npool; i++) c->cuMemFree(c->pool[i].ptr);
  c->npool = 0;
  c->pooled = 0;
  pthread_mutex_unlock(&c->pool_mu);
}

/* A device block of at least `bytes` (the context current): a kept one, or
 * a new one (after the pool is emptied when the device is out of memory). */
static CUresult pool_take(fbxk_cuda *c, size_t bytes, kc_block *out) {
  pthread_mutex_lock(&c->pool_mu);
  int best = -1;
  for (int i = 0; i < c->npool; i++)
    if (c->pool[i].bytes >= bytes && c->pool[i].bytes / 2 <= bytes &&
        (best < 0 || c->pool[i].bytes < c->pool[best].bytes))
      best = i;
  if (best >= 0) {
    *out = c->pool[best];
    c->pool[best] = c->pool[--c->npool];
    c->pooled -= out->bytes;
  }
  pthread_mutex_unlock(&c->pool_mu);
  if (best >= 0) return CUDA_SUCCESS;
  out->bytes = bytes;
  CUresult r = c->cuMemAlloc(&out->ptr, bytes);
  if (r != CUDA_SUCCESS) {
    pool_drain(c);
    r = c->cuMemAlloc(&out->ptr, bytes);
  }
  if (r != CUDA_SUCCESS) out->ptr = 0;
  return r;
}

/* Gives a block back once nothing uses it: kept while the pool has room,
 * else the largest of it and the kept ones is freed. */
static void pool_give(fbxk_cuda *c, kc_block b) {
  pthread_mutex_lock(&c->pool_mu);
  while (b.ptr && (c->npool == KC_POOL || c->pooled + b.bytes > KC_POOL_BYTES)) {
    int big = -1;
    for (int i = 0; i < c->npool; i++)
      if (big < 0 || c->pool[i].bytes > c->pool[big].bytes) big = i;
    if (big < 0 || c->pool[big].bytes <= b.bytes) {
      c->cuMemFree(b.ptr);
      b.ptr = 0;
    } else {
      c->cuMemFree(c->pool[big].ptr);
      c->pooled -= c->pool[big].bytes;
      c->pool[big] = c->pool[--c->npool];
    }
  }
  if (b.ptr) {
    c->pool[c->npool++] = b;
    c->pooled += b.bytes;
  }
  pthread_mutex_unlock(&c->pool_mu);
}

const char *fbxk_cuda_device(const fbxk_cuda *cu) { return cu->device; }
const char *fbxk_cuda_arch(const fbxk_cuda *cu) { return cu->arch; }
const char *fbxk_cuda_fn_name(const fbxk_cuda_fn *f) { return f->name; }

/* ---- modules ----------------------------------------------------------------------------------- */

fbxp_status *fbxk_cuda_module_load(fbxk_cuda *c, const char *source, const char *name, fbxk_cuda_module **out) {
  const fbxp_host_api *h = c->host;
  *out = NULL;
  char *ptx = NULL, *log = NULL, nb[32];
  fbxp_status *st = h->nvrtc_compile(source, name, c->arch[0] ? c->arch : NULL, &ptx, &log);
  if (st) {
    const char *m = h->status_message(st);
    int extra = log && *log && !strstr(m, log);
    fbxp_status *mine = err(c, h->status_code(st) == FBXP_ERR_UNSUPPORTED ? FBXP_ERR_UNSUPPORTED : FBXP_ERR_COMPILE,
                            "NVRTC building '%s' for %s: %s%s%s", name, c->arch[0] ? c->arch : "the default arch", m,
                            extra ? "\n" : "", extra ? log : "");
    h->status_free(st);
    h->free(log);
    h->free(ptx);
    return mine;
  }
  h->free(log);
  fbxk_cuda_module *m = h->alloc(sizeof *m);
  if (!m) {
    h->free(ptx);
    return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: out of memory");
  }
  memset(m, 0, sizeof *m);
  if ((st = push(c))) {
    h->free(ptx);
    h->free(m);
    return st;
  }
  CUresult r = c->cuModuleLoadData(&m->module, ptx);
  pop(c);
  h->free(ptx);
  if (r != CUDA_SUCCESS) {
    h->free(m);
    return err(c, FBXP_ERR_COMPILE, "cuModuleLoadData ('%s'): %s (%d)", name, cu_name(c, r, nb, sizeof nb), r);
  }
  *out = m;
  return NULL;
}

fbxp_status *fbxk_cuda_function(fbxk_cuda *c, fbxk_cuda_module *m, const char *entry, fbxk_cuda_fn **out) {
  const fbxp_host_api *h = c->host;
  *out = NULL;
  for (fbxk_cuda_fn *f = m->fns; f; f = f->next)
    if (!strcmp(f->name, entry)) {
      *out = f;
      return NULL;
    }
  size_t len = strlen(entry);
  fbxk_cuda_fn *f = h->alloc(sizeof *f + len + 1);
  if (!f) return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: out of memory");
  memset(f, 0, sizeof *f);
  memcpy(f->name, entry, len + 1);
  fbxp_status *st = push(c);
  if (st) {
    h->free(f);
    return st;
  }
  char nb[32];
  CUresult r = c->cuModuleGetFunction(&f->fn, m->module, entry);
  pop(c);
  if (r != CUDA_SUCCESS) {
    h->free(f);
    return err(c, FBXP_ERR_COMPILE, "cuModuleGetFunction('%s'): %s (%d) (entry points must be extern \"C\")", entry,
               cu_name(c, r, nb, sizeof nb), r);
  }
  f->next = m->fns;
  m->fns = f;
  *out = f;
  return NULL;
}

void fbxk_cuda_module_unload(fbxk_cuda *c, fbxk_cuda_module *m) {
  if (!m) return;
  const fbxp_host_api *h = c->host;
  fbxp_status *st = push(c);
  if (!st) {
    c->cuModuleUnload(m->module);
    pop(c);
  } else {
    h->status_free(st);
  }
  for (fbxk_cuda_fn *f = m->fns, *next; f; f = next) {
    next = f->next;
    h->free(f);
  }
  h->free(m);
}

/* ---- running ----------------------------------------------------------------------------------- */

static fbxp_status *check(fbxk_cuda *c, const fbxk_cuda_buf *bufs, int32_t nbufs, const fbxk_cuda_launch *launches,
                          int32_t nlaunches) {
  if (nbufs < 0 || nlaunches < 0 || (nbufs && !bufs) || (nlaunches && !launches))
    return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: bad buffer or launch table");
  for (int32_t b = 0; b < nbufs; b++) {
    const fbxk_cuda_buf *x = &bufs[b];
    if (!x->bytes) return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: buffer %d has 0 bytes", (int)b);
    if (!x->flags || (x->flags & ~(uint32_t)(FBXK_CUDA_IN | FBXK_CUDA_OUT | FBXK_CUDA_TEMP)) ||
        ((x->flags & FBXK_CUDA_TEMP) && (x->flags & (FBXK_CUDA_IN | FBXK_CUDA_OUT))))
      return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: buffer %d has flags 0x%x (IN and/or OUT, or TEMP alone)", (int)b,
                 (unsigned)x->flags);
    if (!x->data && !(x->flags & FBXK_CUDA_TEMP))
      return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: buffer %d has no host memory", (int)b);
  }
  for (int32_t l = 0; l < nlaunches; l++) {
    const fbxk_cuda_launch *x = &launches[l];
    if (!x->fn) return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: launch %d has no function", (int)l);
    for (int d = 0; d < 3; d++)
      if (!x->grid[d] || !x->block[d])
        return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: launch %d (%s): grid %ux%ux%u, block %ux%ux%u (each >= 1)",
                   (int)l, x->fn->name, x->grid[0], x->grid[1], x->grid[2], x->block[0], x->block[1], x->block[2]);
    if (x->nargs < 0 || (x->nargs && !x->args))
      return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: launch %d (%s): bad argument table", (int)l, x->fn->name);
    for (int32_t a = 0; a < x->nargs; a++) {
      const fbxk_cuda_arg *g = &x->args[a];
      if (g->kind == FBXK_CUDA_ARG_BUFFER && (g->buffer < 0 || g->buffer >= nbufs))
        return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: launch %d (%s): argument %d names buffer %d of %d", (int)l,
                   x->fn->name, (int)a, (int)g->buffer, (int)nbufs);
      if ((unsigned)g->kind > FBXK_CUDA_ARG_F64)
        return err(c, FBXP_ERR_INVALID, "fbxk_cuda_run: launch %d (%s): argument %d has unknown kind %d", (int)l,
                   x->fn->name, (int)a, (int)g->kind);
    }
  }
  return NULL;
}

typedef union {
  CUdeviceptr ptr;
  long long i64;
  int i32;
  float f32;
  double f64;
} cu_val;

static fbxp_status *launch_one(fbxk_cuda *c, int32_t l, const fbxk_cuda_launch *x, const CUdeviceptr *mem) {
  const fbxp_host_api *h = c->host;
  fbxk_cuda_fn *p = x->fn;
  char nb[32];
  CUresult r;
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
      return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: out of memory");
    }
  }
  for (int32_t a = 0; a < x->nargs; a++) {
    const fbxk_cuda_arg *g = &x->args[a];
    switch (g->kind) {
    case FBXK_CUDA_ARG_BUFFER: vals[a].ptr = mem[g->buffer]; break;
    case FBXK_CUDA_ARG_I64: vals[a].i64 = (long long)g->i; break;
    case FBXK_CUDA_ARG_I32: vals[a].i32 = (int)g->i; break;
    case FBXK_CUDA_ARG_F32: vals[a].f32 = (float)g->f; break;
    case FBXK_CUDA_ARG_F64: vals[a].f64 = g->f; break;
    }
    params[a] = &vals[a];
  }
  fbxp_status *st = NULL;
  unsigned shared = x->shared;
  if (shared > KC_DEFAULT_SHARED && (int)shared > p->shared_optin) {
    if ((int)shared > c->max_shared)
      st = err(c, FBXP_ERR_RUN, "launch %d (%s): %u bytes of dynamic shared memory; the device allows %d", (int)l,
               p->name, shared, c->max_shared);
    else if ((r = c->cuFuncSetAttribute(p->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared)) !=
             CUDA_SUCCESS)
      st = err(c, FBXP_ERR_RUN, "launch %d (%s): cuFuncSetAttribute(max dynamic shared %u): %s (%d)", (int)l, p->name,
               shared, cu_name(c, r, nb, sizeof nb), r);
    else
      p->shared_optin = (int)shared; /* a benign race: concurrent runs set the same attribute */
  }
  if (!st && (r = c->cuLaunchKernel(p->fn, x->grid[0], x->grid[1], x->grid[2], x->block[0], x->block[1], x->block[2],
                                    shared, NULL, x->nargs ? params : NULL, NULL)) != CUDA_SUCCESS)
    st = err(c, FBXP_ERR_RUN, "launch %d (%s): cuLaunchKernel (grid %ux%ux%u, block %ux%ux%u, %u shared bytes): %s (%d)",
             (int)l, p->name, x->grid[0], x->grid[1], x->grid[2], x->block[0], x->block[1], x->block[2], shared,
             cu_name(c, r, nb, sizeof nb), r);
  if (vals != vals_stack) {
    h->free(vals);
    h->free(params);
  }
  return st;
}

static fbxp_status *run_pushed(fbxk_cuda *c, const fbxk_cuda_buf *bufs, int32_t nbufs,
                               const fbxk_cuda_launch *launches, int32_t nlaunches, CUdeviceptr *mem,
                               size_t *held, fbxk_cuda_copied *copied) {
  char nb[32];
  CUresult r;
  for (int32_t b = 0; b < nbufs; b++) {
    const fbxk_cuda_buf *x = &bufs[b];
    kc_block blk;
    r = pool_take(c, x->bytes, &blk);
    mem[b] = blk.ptr;
    held[b] = blk.bytes;
    if (r != CUDA_SUCCESS) {
      return err(c, FBXP_ERR_RUN, "cuMemAlloc (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                 cu_name(c, r, nb, sizeof nb), r);
    }
    if (x->flags & FBXK_CUDA_IN) {
      if ((r = c->cuMemcpyHtoD(mem[b], x->data, x->bytes)) != CUDA_SUCCESS)
        return err(c, FBXP_ERR_RUN, "cuMemcpyHtoD (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                   cu_name(c, r, nb, sizeof nb), r);
      copied->to_device += x->bytes;
    }
  }
  CUevent ev[2] = {NULL, NULL};
  int timed = c->timing && c->cuEventCreate(&ev[0], 0) == CUDA_SUCCESS;
  if (timed && c->cuEventCreate(&ev[1], 0) != CUDA_SUCCESS) ev[1] = NULL, timed = 0;
  if (timed) timed = c->cuEventRecord(ev[0], NULL) == CUDA_SUCCESS;
  fbxp_status *st = NULL;
  for (int32_t l = 0; l < nlaunches && !st; l++) st = launch_one(c, l, &launches[l], mem);
  if (!st && timed) timed = c->cuEventRecord(ev[1], NULL) == CUDA_SUCCESS;
  /* one wait; a fault in any launch surfaces here */
  if (!st && (r = c->cuCtxSynchronize()) != CUDA_SUCCESS)
    st = err(c, FBXP_ERR_RUN, "cuCtxSynchronize after launches 0..%d (%s .. %s): %s (%d)", (int)nlaunches - 1,
             launches[0].fn->name, launches[nlaunches - 1].fn->name, cu_name(c, r, nb, sizeof nb), r);
  float ms = -1;
  if (!st && timed && c->cuEventElapsedTime(&ms, ev[0], ev[1]) != CUDA_SUCCESS) ms = -1;
  copied->kernel_ms = ms;
  for (int e = 0; e < 2; e++)
    if (ev[e]) c->cuEventDestroy(ev[e]);
  if (st) return st;
  for (int32_t b = 0; b < nbufs; b++) {
    const fbxk_cuda_buf *x = &bufs[b];
    if (!(x->flags & FBXK_CUDA_OUT)) continue;
    if ((r = c->cuMemcpyDtoH(x->data, mem[b], x->bytes)) != CUDA_SUCCESS)
      return err(c, FBXP_ERR_RUN, "cuMemcpyDtoH (buffer %d, %zu bytes): %s (%d)", (int)b, x->bytes,
                 cu_name(c, r, nb, sizeof nb), r);
    copied->from_device += x->bytes;
  }
  return NULL;
}

fbxp_status *fbxk_cuda_run(fbxk_cuda *c, const fbxk_cuda_buf *bufs, int32_t nbufs, const fbxk_cuda_launch *launches,
                           int32_t nlaunches, fbxk_cuda_copied *copied) {
  const fbxp_host_api *h = c->host;
  fbxk_cuda_copied dummy;
  if (!copied) copied = &dummy;
  copied->to_device = copied->from_device = 0;
  copied->kernel_ms = -1;
  fbxp_status *st = check(c, bufs, nbufs, launches, nlaunches);
  if (st || !nlaunches) return st;
  CUdeviceptr stack_mem[16];
  size_t stack_held[16];
  CUdeviceptr *mem = stack_mem;
  size_t *held = stack_held;
  if (nbufs > 16) {
    mem = h->alloc((size_t)nbufs * sizeof *mem);
    held = h->alloc((size_t)nbufs * sizeof *held);
    if (!mem || !held) {
      h->free(mem);
      h->free(held);
      return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: out of memory");
    }
  }
  for (int32_t b = 0; b < nbufs; b++) mem[b] = 0;
  st = push(c);
  if (!st) {
    st = run_pushed(c, bufs, nbufs, launches, nlaunches, mem, held, copied);
    /* after a failure nothing may still use the memory, which is freed (a
     * faulted context cannot be trusted to give it back clean); after
     * success run_pushed has synchronized and the blocks are kept */
    if (st) c->cuCtxSynchronize();
    for (int32_t b = 0; b < nbufs; b++) {
      if (!mem[b]) continue;
      if (st) c->cuMemFree(mem[b]);
      else pool_give(c, (kc_block){mem[b], held[b]});
    }
    pop(c);
  }
  if (mem != stack_mem) {
    h->free(mem);
    h->free(held);
  }
  return st;
}

fbxp_status *fbxk_cuda_copy_bandwidth(fbxk_cuda *c, size_t bytes, int reps, double *gbps) {
  *gbps = 0;
  if (!(c->cuEventCreate && c->cuEventRecord && c->cuEventSynchronize && c->cuEventElapsedTime && c->cuEventDestroy &&
        c->cuMemcpyDtoD))
    return err(c, FBXP_ERR_UNSUPPORTED, "the CUDA driver lacks the event or device-copy entry points");
  if (bytes == 0 || reps < 1) return err(c, FBXP_ERR_INVALID, "copy bandwidth: no bytes or no repetitions");
  fbxp_status *st = push(c);
  if (st) return st;
  char nb[32];
  CUresult r = CUDA_SUCCESS;
  CUdeviceptr a = 0, b = 0;
  CUevent ev[2] = {NULL, NULL};
  float ms = 0;
  const char *what = "cuMemAlloc";
  if ((r = c->cuMemAlloc(&a, bytes)) != CUDA_SUCCESS || (r = c->cuMemAlloc(&b, bytes)) != CUDA_SUCCESS) goto done;
  what = "cuEventCreate";
  if ((r = c->cuEventCreate(&ev[0], 0)) != CUDA_SUCCESS || (r = c->cuEventCreate(&ev[1], 0)) != CUDA_SUCCESS) goto done;
  what = "cuMemcpyDtoD";
  if ((r = c->cuMemcpyDtoD(b, a, bytes)) != CUDA_SUCCESS) goto done; /* warm-up */
  what = "cuEventRecord";
  if ((r = c->cuEventRecord(ev[0], NULL)) != CUDA_SUCCESS) goto done;
  what = "cuMemcpyDtoD";
  for (int i = 0; i < reps; i++)
    if ((r = c->cuMemcpyDtoD(i % 2 ? a : b, i % 2 ? b : a, bytes)) != CUDA_SUCCESS) goto done;
  what = "cuEventRecord";
  if ((r = c->cuEventRecord(ev[1], NULL)) != CUDA_SUCCESS) goto done;
  what = "cuEventSynchronize";
  if ((r = c->cuEventSynchronize(ev[1])) != CUDA_SUCCESS) goto done;
  what = "cuEventElapsedTime";
  if ((r = c->cuEventElapsedTime(&ms, ev[0], ev[1])) != CUDA_SUCCESS) goto done;
  if (ms > 0) *gbps = 2.0 * (double)bytes * reps / ((double)ms * 1e6);
done:
  if (r != CUDA_SUCCESS) st = err(c, FBXP_ERR_RUN, "copy bandwidth: %s: %s (%d)", what, cu_name(c, r, nb, sizeof nb), r);
  c->cuCtxSynchronize();
  for (int e = 0; e < 2; e++)
    if (ev[e]) c->cuEventDestroy(ev[e]);
  if (a) c->cuMemFree(a);
  if (b) c->cuMemFree(b);
  pop(c);
  return st;
}

/* ---- opening ----------------------------------------------------------------------------------- */

void fbxk_cuda_close(fbxk_cuda *c) {
  if (!c) return;
  if (c->pool_inited) {
    fbxp_status *ps = c->npool && c->ctx ? push(c) : NULL;
    if (c->npool && c->ctx && !ps) {
      pool_drain(c);
      pop(c);
    }
    if (ps) c->host->status_free(ps); /* the blocks go with the context */
    pthread_mutex_destroy(&c->pool_mu);
  }
  if (c->ctx) c->cuDevicePrimaryCtxRelease(c->dev);
  /* libcuda stays loaded: drivers do not like to be unloaded */
  c->host->free(c);
}

/* The first of the names that the driver exports (versioned names first). */
static void *sym(void *lib, const char *a, const char *b) {
  void *p = dlsym(lib, a);
  return p || !b ? p : dlsym(lib, b);
}

fbxp_status *fbxk_cuda_open(const fbxp_host_api *h, const char *who, const char *path, fbxk_cuda **out) {
  *out = NULL;
  if (!who) who = "kit CUDA";
  if (h->struct_size < FBXP_HOST_API_SIZE_V1_1) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: the host is older than fuser ABI 1.1", who);
    return h->status_new(FBXP_ERR_UNSUPPORTED, msg);
  }
  fbxk_cuda *c = h->alloc(sizeof *c);
  if (!c) return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: out of memory");
  memset(c, 0, sizeof *c);
  c->host = h;
  c->who = who;
  c->pool_inited = pthread_mutex_init(&c->pool_mu, NULL) == 0;
  if (!c->pool_inited) {
    h->free(c);
    return h->status_new(FBXP_ERR_NOMEM, "kit CUDA: cannot create a mutex");
  }
  if (!path || !*path) path = getenv("FUSEBOX_LIBCUDA");
  if (!path || !*path) path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  fbxp_status *st = NULL;
  if (!lib) {
    const char *why = dlerror();
    st = err(c, FBXP_ERR_UNSUPPORTED, "no CUDA driver (%s)", why ? why : path);
    pthread_mutex_destroy(&c->pool_mu);
    h->free(c);
    return st;
  }
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
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    if (!(*syms[i].slot = sym(lib, syms[i].name, syms[i].alt))) {
      st = err(c, FBXP_ERR_UNSUPPORTED, "the CUDA driver lacks %s", syms[i].name);
      pthread_mutex_destroy(&c->pool_mu);
      h->free(c);
      return st;
    }
  }
  /* optional entry points: timing is off without them */
  struct {
    void **slot;
    const char *name, *alt;
  } opt[] = {
      {(void **)&c->cuEventCreate, "cuEventCreate", NULL},
      {(void **)&c->cuEventRecord, "cuEventRecord", NULL},
      {(void **)&c->cuEventSynchronize, "cuEventSynchronize", NULL},
      {(void **)&c->cuEventElapsedTime, "cuEventElapsedTime", NULL},
      {(void **)&c->cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"},
      {(void **)&c->cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL},
  };
  for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) *opt[i].slot = sym(lib, opt[i].name, opt[i].alt);
  int events = c->cuEventCreate && c->cuEventRecord && c->cuEventSynchronize && c->cuEventElapsedTime &&
               c->cuEventDestroy;
  const char *tm = getenv("FUSEBOX_CUDA_KERNEL_TIMING");
  c->timing = events && tm && !strcmp(tm, "1");
  char nb[32];
  CUresult r = c->cuInit(0);
  if (r != CUDA_SUCCESS) {
    st = err(c, FBXP_ERR_UNSUPPORTED, "cuInit: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
    goto fail;
  }
  int count = 0;
  if ((r = c->cuDeviceGetCount(&count)) != CUDA_SUCCESS || count < 1) {
    st = r != CUDA_SUCCESS ? err(c, FBXP_ERR_UNSUPPORTED, "cuDeviceGetCount: %s (%d)", cu_name(c, r, nb, sizeof nb), r)
                           : err(c, FBXP_ERR_UNSUPPORTED, "no CUDA device (0 devices)");
    goto fail;
  }
  if ((r = c->cuDeviceGet(&c->dev, 0)) != CUDA_SUCCESS) {
    st = err(c, FBXP_ERR_UNSUPPORTED, "cuDeviceGet(0): %s (%d)", cu_name(c, r, nb, sizeof nb), r);
    goto fail;
  }
  if ((r = c->cuDevicePrimaryCtxRetain(&c->ctx, c->dev)) != CUDA_SUCCESS) {
    c->ctx = NULL;
    st = err(c, FBXP_ERR_UNSUPPORTED, "cuDevicePrimaryCtxRetain: %s (%d)", cu_name(c, r, nb, sizeof nb), r);
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
      c->max_shared < (int)KC_DEFAULT_SHARED)
    c->max_shared = (int)KC_DEFAULT_SHARED;
  if (major > 0) snprintf(c->arch, sizeof c->arch, "compute_%d%d", major, minor);
  /* NVRTC present, and does it know this arch? (else its default: the
   * driver JIT-compiles PTX of an older arch for the device) */
  static const char probe[] = "extern \"C\" __global__ void fbxk_probe() {}\n";
  char *ptx = NULL, *log = NULL;
  st = h->nvrtc_compile(probe, "fbxk_probe", c->arch[0] ? c->arch : NULL, &ptx, &log);
  if (st && h->status_code(st) != FBXP_ERR_UNSUPPORTED && c->arch[0]) {
    h->status_free(st);
    h->free(log);
    h->free(ptx);
    ptx = log = NULL;
    c->arch[0] = '\0';
    st = h->nvrtc_compile(probe, "fbxk_probe", NULL, &ptx, &log);
  }
  h->free(ptx);
  h->free(log);
  if (st) {
    fbxp_status *mine = err(c, FBXP_ERR_UNSUPPORTED, "NVRTC cannot build for %s: %s", name, h->status_message(st));
    h->status_free(st);
    st = mine;
    goto fail;
  }
  snprintf(c->device, sizeof c->device, "%s (sm_%d%d), %d SMs%s", name, major, minor, sms,
           c->arch[0] ? "" : ", PTX for NVRTC's default arch");
  *out = c;
  return NULL;
fail:
  fbxk_cuda_close(c);
  return st;
}
