/* runtime_cuda.c — the nvfuser_like runtime on CUDA, over the kit's CUDA
 * driver module (sdk/kit, <fusebox/kit/kit_cuda.h>): the driver API loaded
 * with dlopen, CUDA C compiled to PTX by the host's nvrtc_compile service for
 * the device's compute capability, modules, launches and copies. This file
 * maps nvf_rt's programs, buffers and launches onto it.
 *
 * The driver is libcuda.so.1; FUSEBOX_NVF_LIBCUDA (or the kit's
 * FUSEBOX_LIBCUDA) names another file, e.g. a stand-in driver in the tests.
 * A program is one module (its source compiled once) and one entry point
 * (extern "C"). A run allocates device memory for every buffer, copies
 * NVF_BUF_IN buffers in, launches in order on the default stream, waits once
 * and copies NVF_BUF_OUT buffers back (the kit's fbxk_cuda_run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/kit/kit_cuda.h>

#include "rt_impl.h"

typedef struct {
  fbxk_cuda_module *module;
  fbxk_cuda_fn *fn;
} cu_prog;

static fbxp_status *cu_compile(nvf_rt *rt, const char *source, const char *entry, void **handle) {
  fbxk_cuda *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  fbxk_cuda_module *m = NULL;
  fbxk_cuda_fn *fn = NULL;
  fbxp_status *st = fbxk_cuda_module_load(c, source, entry, &m);
  if (!st) st = fbxk_cuda_function(c, m, entry, &fn);
  cu_prog *p = st ? NULL : h->alloc(sizeof *p);
  if (!st && !p) st = h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
  if (st) {
    fbxk_cuda_module_unload(c, m);
    return st;
  }
  p->module = m;
  p->fn = fn;
  *handle = p;
  return NULL;
}

static void cu_release_program(nvf_rt *rt, void *handle) {
  cu_prog *p = handle;
  fbxk_cuda_module_unload(rt->impl, p->module);
  rt->host->free(p);
}

/* Launches were checked by runtime.c: one LOCAL argument at most, the last. */
static fbxp_status *cu_run(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                           int32_t nlaunches) {
  const fbxp_host_api *h = rt->host;
  int32_t nargs = 0;
  for (int32_t l = 0; l < nlaunches; l++) nargs += launches[l].nargs;
  fbxk_cuda_buf *kb = h->alloc((size_t)(nbufs ? nbufs : 1) * sizeof *kb);
  fbxk_cuda_launch *kl = h->alloc((size_t)nlaunches * sizeof *kl);
  fbxk_cuda_arg *ka = h->alloc((size_t)(nargs ? nargs : 1) * sizeof *ka);
  fbxp_status *st = NULL;
  if (!kb || !kl || !ka) {
    st = h->status_new(FBXP_ERR_NOMEM, "nvfuser_like CUDA: out of memory");
    goto done;
  }
  for (int32_t b = 0; b < nbufs; b++) {
    uint32_t f = bufs[b].flags;
    kb[b] = (fbxk_cuda_buf){bufs[b].data, bufs[b].bytes,
                            ((f & NVF_BUF_IN) ? FBXK_CUDA_IN : 0u) | ((f & NVF_BUF_OUT) ? FBXK_CUDA_OUT : 0u) |
                                ((f & NVF_BUF_TEMP) ? FBXK_CUDA_TEMP : 0u)};
  }
  fbxk_cuda_arg *a = ka;
  for (int32_t l = 0; l < nlaunches; l++) {
    const nvf_launch *x = &launches[l];
    fbxk_cuda_launch *y = &kl[l];
    memset(y, 0, sizeof *y);
    y->fn = ((cu_prog *)x->program->handle)->fn;
    y->args = a;
    for (int d = 0; d < 3; d++) y->grid[d] = y->block[d] = 1;
    for (int32_t d = 0; d < x->dims; d++) {
      y->block[d] = (unsigned)x->local[d];
      y->grid[d] = (unsigned)(x->global[d] / x->local[d]);
    }
    for (int32_t i = 0; i < x->nargs; i++) {
      const nvf_arg *g = &x->args[i];
      switch (g->kind) {
      case NVF_ARG_BUFFER: *a = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_BUFFER, .buffer = g->buffer}; break;
      case NVF_ARG_I64: *a = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_I64, .i = g->i}; break;
      case NVF_ARG_I32: *a = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_I32, .i = g->i}; break;
      case NVF_ARG_F32: *a = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_F32, .f = g->f}; break;
      case NVF_ARG_F64: *a = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_F64, .f = g->f}; break;
      case NVF_ARG_LOCAL: y->shared = (unsigned)g->local_bytes; continue; /* not a parameter */
      }
      a++;
      y->nargs++;
    }
  }
  fbxk_cuda_copied copied = {0, 0, -1};
  st = fbxk_cuda_run(rt->impl, kb, nbufs, kl, nlaunches, &copied);
  pthread_mutex_lock(&rt->lock);
  rt->stats.bytes_to_device += copied.to_device;
  rt->stats.bytes_from_device += copied.from_device;
  if (!st && copied.kernel_ms >= 0) {
    rt->stats.timed_runs++;
    rt->stats.kernel_ms += copied.kernel_ms;
  }
  pthread_mutex_unlock(&rt->lock);
done:
  h->free(kb);
  h->free(kl);
  h->free(ka);
  return st;
}

static void cu_close(nvf_rt *rt) {
  fbxk_cuda_close(rt->impl);
  rt->impl = NULL;
}

static fbxp_status *cu_copy_bandwidth(nvf_rt *rt, size_t bytes, int reps, double *gbps) {
  return fbxk_cuda_copy_bandwidth(rt->impl, bytes, reps, gbps);
}

static const nvf_backend CU_BACKEND = {
    .compile = cu_compile, .release_program = cu_release_program, .run = cu_run, .close = cu_close,
    .copy_bandwidth = cu_copy_bandwidth};

fbxp_status *nvf_rt_open_cuda(nvf_rt *rt) {
  rt->be = &CU_BACKEND;
  fbxk_cuda *c = NULL;
  fbxp_status *st = fbxk_cuda_open(rt->host, "nvfuser_like CUDA", getenv("FUSEBOX_NVF_LIBCUDA"), &c);
  if (st) return st;
  rt->impl = c;
  snprintf(rt->device, sizeof rt->device, "CUDA: %s", fbxk_cuda_device(c));
  return NULL;
}
