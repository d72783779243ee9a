/* runtime_cl.c — the nvfuser_like runtime on OpenCL.
 *
 * Programs are built by the host's opencl_build service (the first device of
 * the first platform: PoCL's CPU device on a machine without a GPU), which
 * also hands out that device's context. The rest of the API — kernels,
 * buffers, launches — comes from the same ICD loader, libOpenCL.so.1, loaded
 * here with dlopen as the host does, so that the plugin loads (and reports
 * OpenCL as unsupported) where OpenCL is absent. Types come from <CL/cl.h>;
 * no function of it is linked.
 *
 * The runtime has its own in-order command queue on the host's context. A
 * run enqueues, in order: buffer creation (copies in, or host memory wrapped
 * with CL_MEM_USE_HOST_PTR), every launch, the reads back (or a map/unmap of
 * wrapped outputs), then waits once (clFinish). Kernel objects carry their
 * arguments, so runs of one runtime are serialized (a CPU device uses all of
 * its cores for each launch anyway).
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "rt_impl.h"

/* Options every program is built with. */
#define NVF_CL_OPTIONS "-cl-std=CL1.2"

typedef struct {
  void *lib;
  cl_context context;
  cl_device_id device;
  cl_command_queue queue;
  int unified;        /* the device shares host memory */
  size_t device_align; /* bytes: CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8 */
  size_t align;        /* host pointers aligned so are wrapped (nvf_rt_set_wrap_align) */
  pthread_mutex_t run_lock;
#define F(name) __typeof__(name) *name
  F(clGetDeviceInfo);
  F(clGetPlatformInfo);
  F(clRetainContext);
  F(clReleaseContext);
  F(clCreateCommandQueue);
  F(clReleaseCommandQueue);
  F(clReleaseProgram);
  F(clCreateKernel);
  F(clReleaseKernel);
  F(clSetKernelArg);
  F(clCreateBuffer);
  F(clReleaseMemObject);
  F(clEnqueueNDRangeKernel);
  F(clEnqueueReadBuffer);
  F(clEnqueueMapBuffer);
  F(clEnqueueUnmapMemObject);
  F(clFinish);
#undef F
} cl_rt;

typedef struct {
  cl_program program;
  cl_kernel kernel;
} cl_prog;

static const char *cl_name(cl_int e) {
  switch (e) {
  case CL_SUCCESS: return "CL_SUCCESS";
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
  case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
  case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
  case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_DEVICE_TYPE: return "CL_INVALID_DEVICE_TYPE";
  case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
  case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
  case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
  case CL_INVALID_QUEUE_PROPERTIES: return "CL_INVALID_QUEUE_PROPERTIES";
  case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
  case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
  case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
  case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
  case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_DEFINITION: return "CL_INVALID_KERNEL_DEFINITION";
  case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
  case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
  case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_GLOBAL_OFFSET: return "CL_INVALID_GLOBAL_OFFSET";
  case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
  case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
  default: return "an unnamed OpenCL error";
  }
}

/* ---- programs ---------------------------------------------------------------------------------- */

static fbxp_status *cl_compile(nvf_rt *rt, const char *source, const char *entry, void **handle) {
  cl_rt *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  void *prog = NULL, *ctx = NULL, *dev = NULL, *queue = NULL;
  fbxp_status *st = h->opencl_build(source, NVF_CL_OPTIONS, &prog, &ctx, &dev, &queue, NULL);
  if (st) {
    if (h->struct_size < FBXP_HOST_API_SIZE_V1_1) return st;
    fbxp_status *mine = nvf_rt_errf(h, h->status_code(st), "nvfuser_like OpenCL: building '%s': %s", entry,
                                    h->status_message(st));
    h->status_free(st);
    return mine;
  }
  if ((cl_context)ctx != c->context || (cl_device_id)dev != c->device) {
    c->clReleaseProgram(prog);
    return h->status_new(FBXP_ERR_COMPILE, "nvfuser_like OpenCL: the host's OpenCL device changed");
  }
  cl_int e = CL_SUCCESS;
  cl_kernel k = c->clCreateKernel(prog, entry, &e);
  if (!k) {
    c->clReleaseProgram(prog);
    return nvf_rt_errf(h, FBXP_ERR_COMPILE, "nvfuser_like OpenCL: clCreateKernel('%s'): %s (%d)", entry, cl_name(e),
                       (int)e);
  }
  cl_prog *p = h->alloc(sizeof *p);
  if (!p) {
    c->clReleaseKernel(k);
    c->clReleaseProgram(prog);
    return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like OpenCL: out of memory");
  }
  p->program = prog;
  p->kernel = k;
  *handle = p;
  return NULL;
}

static void cl_release_program(nvf_rt *rt, void *handle) {
  cl_rt *c = rt->impl;
  cl_prog *p = handle;
  c->clReleaseKernel(p->kernel);
  c->clReleaseProgram(p->program);
  rt->host->free(p);
}

/* ---- running ----------------------------------------------------------------------------------- */

static fbxp_status *cl_err(nvf_rt *rt, int32_t launch, const nvf_launch *launches, const char *call, cl_int e,
                           const char *what) {
  if (launch >= 0)
    return nvf_rt_errf(rt->host, FBXP_ERR_RUN, "nvfuser_like OpenCL: launch %d (%s): %s%s: %s (%d)", (int)launch,
                       launches[launch].program->entry, call, what, cl_name(e), (int)e);
  return nvf_rt_errf(rt->host, FBXP_ERR_RUN, "nvfuser_like OpenCL: %s%s: %s (%d)", call, what, cl_name(e), (int)e);
}

static fbxp_status *cl_run_locked(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                                  int32_t nlaunches, cl_mem *mem, int *wrapped) {
  cl_rt *c = rt->impl;
  char what[64];
  cl_int e = CL_SUCCESS;
  uint64_t to_dev = 0, from_dev = 0, zero_copy = 0;
  for (int32_t b = 0; b < nbufs; b++) {
    nvf_buffer *x = &bufs[b];
    snprintf(what, sizeof what, " (buffer %d, %zu bytes)", (int)b, x->bytes);
    if (x->flags & NVF_BUF_TEMP) {
      mem[b] = c->clCreateBuffer(c->context, CL_MEM_READ_WRITE, x->bytes, NULL, &e);
    } else if (c->unified && (uintptr_t)x->data % c->align == 0) {
      mem[b] = c->clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, x->bytes, x->data, &e);
      wrapped[b] = 1;
      zero_copy++;
    } else if (x->flags & NVF_BUF_IN) {
      mem[b] = c->clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, x->bytes, x->data, &e);
      to_dev += x->bytes;
    } else {
      mem[b] = c->clCreateBuffer(c->context, CL_MEM_READ_WRITE, x->bytes, NULL, &e);
    }
    if (!mem[b]) return cl_err(rt, -1, launches, "clCreateBuffer", e, what);
  }
  for (int32_t l = 0; l < nlaunches; l++) {
    const nvf_launch *x = &launches[l];
    cl_kernel k = ((cl_prog *)x->program->handle)->kernel;
    for (int32_t a = 0; a < x->nargs; a++) {
      const nvf_arg *g = &x->args[a];
      snprintf(what, sizeof what, " (argument %d)", (int)a);
      cl_long i64;
      cl_int i32;
      cl_float f32;
      cl_double f64;
      switch (g->kind) {
      case NVF_ARG_BUFFER: e = c->clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &mem[g->buffer]); break;
      case NVF_ARG_I64:
        i64 = (cl_long)g->i;
        e = c->clSetKernelArg(k, (cl_uint)a, sizeof i64, &i64);
        break;
      case NVF_ARG_I32:
        i32 = (cl_int)g->i;
        e = c->clSetKernelArg(k, (cl_uint)a, sizeof i32, &i32);
        break;
      case NVF_ARG_F32:
        f32 = (cl_float)g->f;
        e = c->clSetKernelArg(k, (cl_uint)a, sizeof f32, &f32);
        break;
      case NVF_ARG_F64:
        f64 = (cl_double)g->f;
        e = c->clSetKernelArg(k, (cl_uint)a, sizeof f64, &f64);
        break;
      case NVF_ARG_LOCAL: e = c->clSetKernelArg(k, (cl_uint)a, g->local_bytes, NULL); break;
      }
      if (e != CL_SUCCESS) return cl_err(rt, l, launches, "clSetKernelArg", e, what);
    }
    e = c->clEnqueueNDRangeKernel(c->queue, k, (cl_uint)x->dims, NULL, x->global, x->local, 0, NULL, NULL);
    if (e != CL_SUCCESS) return cl_err(rt, l, launches, "clEnqueueNDRangeKernel", e, "");
  }
  for (int32_t b = 0; b < nbufs; b++) {
    nvf_buffer *x = &bufs[b];
    if (!(x->flags & NVF_BUF_OUT)) continue;
    snprintf(what, sizeof what, " (buffer %d, %zu bytes)", (int)b, x->bytes);
    if (wrapped[b]) {
      /* makes the device's writes visible in the host memory (a no-op on a
       * device that wrote there directly) */
      void *p = c->clEnqueueMapBuffer(c->queue, mem[b], CL_FALSE, CL_MAP_READ, 0, x->bytes, 0, NULL, NULL, &e);
      if (!p) return cl_err(rt, -1, launches, "clEnqueueMapBuffer", e, what);
      e = c->clEnqueueUnmapMemObject(c->queue, mem[b], p, 0, NULL, NULL);
      if (e != CL_SUCCESS) return cl_err(rt, -1, launches, "clEnqueueUnmapMemObject", e, what);
    } else {
      e = c->clEnqueueReadBuffer(c->queue, mem[b], CL_FALSE, 0, x->bytes, x->data, 0, NULL, NULL);
      if (e != CL_SUCCESS) return cl_err(rt, -1, launches, "clEnqueueReadBuffer", e, what);
      from_dev += x->bytes;
    }
  }
  e = c->clFinish(c->queue);
  if (e != CL_SUCCESS) return cl_err(rt, -1, launches, "clFinish", e, " (after the last launch)");
  pthread_mutex_lock(&rt->lock);
  rt->stats.bytes_to_device += to_dev;
  rt->stats.bytes_from_device += from_dev;
  rt->stats.zero_copy_buffers += zero_copy;
  pthread_mutex_unlock(&rt->lock);
  return NULL;
}

static fbxp_status *cl_run(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                           int32_t nlaunches) {
  cl_rt *c = rt->impl;
  const fbxp_host_api *h = rt->host;
  cl_mem stack_mem[16];
  int stack_wrapped[16];
  cl_mem *mem = stack_mem;
  int *wrapped = stack_wrapped;
  if (nbufs > 16) {
    mem = h->alloc((size_t)nbufs * sizeof *mem);
    wrapped = h->alloc((size_t)nbufs * sizeof *wrapped);
    if (!mem || !wrapped) {
      h->free(mem);
      h->free(wrapped);
      return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like OpenCL: out of memory");
    }
  }
  for (int32_t b = 0; b < nbufs; b++) {
    mem[b] = NULL;
    wrapped[b] = 0;
  }
  pthread_mutex_lock(&c->run_lock);
  fbxp_status *st = cl_run_locked(rt, bufs, nbufs, launches, nlaunches, mem, wrapped);
  if (st) c->clFinish(c->queue); /* nothing enqueued may still use a buffer released below */
  pthread_mutex_unlock(&c->run_lock);
  for (int32_t b = 0; b < nbufs; b++)
    if (mem[b]) c->clReleaseMemObject(mem[b]);
  if (mem != stack_mem) {
    h->free(mem);
    h->free(wrapped);
  }
  return st;
}

/* ---- opening ----------------------------------------------------------------------------------- */

static void cl_close(nvf_rt *rt) {
  cl_rt *c = rt->impl;
  if (!c) return;
  if (c->queue) c->clReleaseCommandQueue(c->queue);
  if (c->context) c->clReleaseContext(c->context);
  pthread_mutex_destroy(&c->run_lock);
  /* libOpenCL stays loaded: the host holds it too, and ICDs do not like to be unloaded */
  rt->host->free(c);
  rt->impl = NULL;
}

static void cl_set_wrap_align(nvf_rt *rt, size_t bytes) {
  cl_rt *c = rt->impl;
  pthread_mutex_lock(&c->run_lock);
  c->align = bytes && !(bytes & (bytes - 1)) ? bytes : c->device_align;
  pthread_mutex_unlock(&c->run_lock);
}

static const nvf_backend CL_BACKEND = {.compile = cl_compile,
                                       .release_program = cl_release_program,
                                       .run = cl_run,
                                       .close = cl_close,
                                       .set_wrap_align = cl_set_wrap_align};

fbxp_status *nvf_rt_open_opencl(nvf_rt *rt) {
  const fbxp_host_api *h = rt->host;
  rt->be = &CL_BACKEND;
  /* A trivial build gives the host's context and device (and says whether
   * there is OpenCL at all). */
  void *prog = NULL, *ctx = NULL, *dev = NULL, *queue = NULL;
  fbxp_status *st = h->opencl_build("__kernel void nvf_probe(void) {}\n", NVF_CL_OPTIONS, &prog, &ctx, &dev,
                                    &queue, NULL);
  if (st) return st; /* FBXP_ERR_UNSUPPORTED "OpenCL unavailable: ..." from the host */
  void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return h->status_new(FBXP_ERR_UNSUPPORTED,
                         "nvfuser_like OpenCL: the host built a program but libOpenCL.so.1 does not load here");
  cl_rt *c = h->alloc(sizeof *c);
  if (!c) return h->status_new(FBXP_ERR_NOMEM, "nvfuser_like OpenCL: out of memory");
  memset(c, 0, sizeof *c);
  c->lib = lib;
  struct {
    void **slot;
    const char *name;
  } syms[] = {
#define S(name) {(void **)&c->name, #name}
      S(clGetDeviceInfo),     S(clGetPlatformInfo),      S(clRetainContext),   S(clReleaseContext),
      S(clCreateCommandQueue), S(clReleaseCommandQueue), S(clReleaseProgram),  S(clCreateKernel),
      S(clReleaseKernel),     S(clSetKernelArg),         S(clCreateBuffer),    S(clReleaseMemObject),
      S(clEnqueueNDRangeKernel), S(clEnqueueReadBuffer), S(clEnqueueMapBuffer), S(clEnqueueUnmapMemObject),
      S(clFinish),
#undef S
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    if (!(*syms[i].slot = dlsym(lib, syms[i].name))) {
      st = nvf_rt_errf(h, FBXP_ERR_UNSUPPORTED, "nvfuser_like OpenCL: the OpenCL loader lacks %s", syms[i].name);
      h->free(c);
      return st;
    }
  }
  c->clReleaseProgram(prog);
  pthread_mutex_init(&c->run_lock, NULL);
  rt->impl = c;
  c->context = ctx;
  c->device = dev;
  c->clRetainContext(c->context);
  cl_int e = CL_SUCCESS;
  c->queue = c->clCreateCommandQueue(c->context, c->device, 0, &e);
  if (!c->queue) {
    st = nvf_rt_errf(h, FBXP_ERR_UNSUPPORTED, "nvfuser_like OpenCL: clCreateCommandQueue: %s (%d)", cl_name(e),
                     (int)e);
    cl_close(rt);
    return st;
  }
  cl_bool unified = CL_FALSE;
  cl_device_type type = 0;
  cl_uint align_bits = 0, units = 0;
  cl_ulong cache = 0;
  cl_platform_id plat = NULL;
  char dname[256] = "?", pver[256] = "?";
  c->clGetDeviceInfo(c->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
  c->clGetDeviceInfo(c->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  c->clGetDeviceInfo(c->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
  c->clGetDeviceInfo(c->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  if (c->clGetDeviceInfo(c->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL) != CL_SUCCESS)
    cache = 0;
  c->clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  if (c->clGetDeviceInfo(c->device, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL) == CL_SUCCESS && plat)
    c->clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
  dname[sizeof dname - 1] = pver[sizeof pver - 1] = '\0';
  c->unified = unified == CL_TRUE || (type & CL_DEVICE_TYPE_CPU);
  rt->cpu_device = (type & CL_DEVICE_TYPE_CPU) != 0;
  rt->cache_bytes = cache <= (cl_ulong)INT64_MAX ? (int64_t)cache : 0;
  c->device_align = c->align = align_bits >= 8 ? align_bits / 8 : 1;
  snprintf(rt->device, sizeof rt->device, "OpenCL: %.200s (%.200s), %u compute units%s", dname, pver, (unsigned)units,
           c->unified ? ", host memory shared" : "");
  return NULL;
}
