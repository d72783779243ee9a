/* The nvfuser_like plugin: PyTorch's nvFuser (fuser2) on the fusebox SDK.
 *
 * compile: the group's subgraph and input specs -> fusion IR (fusion.c) ->
 * segments, each scheduled and lowered to kernel IR (lower.c, sched_*.c) ->
 * OpenCL C or CUDA C (print.c) -> a program of the device runtime (nvf_rt.h).
 * run: one launch per segment over a table of buffers (inputs, outputs,
 * temporaries between segments), mapped once for the whole sequence.
 * Guards are outside (FBXP_GUARDS_OUTSIDE): kernels are compiled for the
 * exact specs; runs share nothing mutable (FBXP_RUN_THREAD_SAFE; the
 * runtime is thread-safe).
 *
 * Environment, read when the plugin is loaded (bad values are reported with
 * the variable's name and the default is used):
 * FUSEBOX_NVF_TARGET = opencl | cuda: the device API; default cuda when a
 *   CUDA device opens, else opencl. `fusebox plugins` says which and why
 *   not CUDA.
 * FUSEBOX_NVF_DISABLE = comma list of vectorize, persistent, rows, vload,
 *   stream (or all): the pointwise scheduler's 4 elements per thread;
 *   keeping rows in local memory (the reduction scheduler then recomputes
 *   them); a CPU device's row per work-item; CUDA's 16-byte pointwise
 *   accesses; a persistent kernel's non-temporal stores of outputs larger
 *   than the device's cache.
 * FUSEBOX_NVF_NVRTC_CHECK = a file: every fusion is also scheduled as for a
 *   GPU, printed as CUDA C and compiled with NVRTC (host->nvrtc_compile), one
 *   line per kernel appended ("ok <kernel>" or "fail <kernel>: <log>"),
 *   whatever the target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvf.h"
#include "nvf_rt.h"

const fbxp_host_api *nvf_host;

static nvf_rt *rt;
static nvf_target target;
static char rt_why[512];
static char description[900];
static int disable_vec, disable_persist, disable_rows, disable_vload, disable_stream;
static const char *nvrtc_check;

typedef struct seg_launch {
  nvf_program *prog;
  int nargs;
  nvf_arg *args;
  int *arg_input; /* per arg: graph input index of a scalar, -1 */
  int block;
  int64_t groups;
} seg_launch;

#define NVF_MAX_BUFS 128

typedef struct nvf_kernel {
  int ninputs, noutputs, nbufs, nsegs;
  int input_kind[NVF_MAX_IO];
  int input_buf[NVF_MAX_IO]; /* -1 for scalars */
  int output_buf[NVF_MAX_IO];
  /* buffers: dtype, shape (inputs: with strides), bytes */
  int buf_dtype[NVF_MAX_BUFS];
  int buf_ndim[NVF_MAX_BUFS];
  int64_t buf_sizes[NVF_MAX_BUFS][NVF_MAX_DIMS];
  int64_t buf_strides[NVF_MAX_BUFS][NVF_MAX_DIMS];
  size_t buf_bytes[NVF_MAX_BUFS];
  uint32_t buf_flags[NVF_MAX_BUFS];
  seg_launch seg[NVF_MAX_SEGS];
  char *text;
} nvf_kernel;

static fbxp_status *nomem(void) { return nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory"); }

static void kernel_free(nvf_kernel *k) {
  if (!k) return;
  for (int s = 0; s < k->nsegs; s++) {
    nvf_host->free(k->seg[s].args);
    nvf_host->free(k->seg[s].arg_input);
  }
  fbxk_free(k->text);
  nvf_host->free(k);
}

static const char *status_text(fbxp_status *s) {
  return s && nvf_host->struct_size >= FBXP_HOST_API_SIZE_V1_1 ? nvf_host->status_message(s) : "";
}

static void drop_status(fbxp_status *s) {
  if (s && nvf_host->struct_size >= FBXP_HOST_API_SIZE_V1_1) nvf_host->status_free(s);
}

static void nvrtc_check_segment(nvf_plan *pl, int s) {
  nvf_kernel_ir saved = pl->seg[s].k;
  nvf_params saved_p = pl->seg[s].p;
  int cpu_rows = pl->cpu_rows;
  memset(&pl->seg[s].k, 0, sizeof pl->seg[s].k);
  pl->cpu_rows = 0; /* scheduled as for a GPU: the kernel the CUDA target would compile */
  fbxp_status *st = nvf_schedule_segment(pl, s, FBXK_CUDA);
  pl->cpu_rows = cpu_rows;
  char *src = st ? NULL : nvf_print(&pl->seg[s].k);
  char *ptx = NULL, *log = NULL;
  fbxp_status *cs = src ? nvf_host->nvrtc_compile(src, pl->seg[s].k.name, NULL, &ptx, &log) : st;
  FILE *fp = fopen(nvrtc_check, "a");
  if (fp) {
    if (!cs && src) fprintf(fp, "ok %s\n", pl->seg[s].k.name);
    else fprintf(fp, "fail %s: %s %s\n", pl->seg[s].k.name, status_text(cs), log ? log : "");
    fclose(fp);
  }
  if (cs != st) drop_status(cs);
  drop_status(st);
  nvf_host->free(ptx);
  nvf_host->free(log);
  fbxk_free(src);
  nvf_kir_free(&pl->seg[s].k);
  pl->seg[s].k = saved;
  pl->seg[s].p = saved_p;
}

static fbxp_status *nvf_compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state;
  if (!rt) return nvf_host->status_new(FBXP_ERR_UNSUPPORTED, rt_why);
  nvf_fusion *f = nvf_host->alloc(sizeof *f);
  nvf_kernel *k = nvf_host->alloc(sizeof *k);
  nvf_plan pl;
  memset(&pl, 0, sizeof pl);
  fbxk_buf text = {0};
  fbxp_status *st = NULL;
  if (!f || !k) {
    nvf_host->free(f);
    nvf_host->free(k);
    return nomem();
  }
  memset(f, 0, sizeof *f);
  memset(k, 0, sizeof *k);
  st = nvf_fusion_build(f, g, in, nin);
  if (!st && f->noutputs != res->noutputs)
    st = nvf_host->status_new(FBXP_ERR_INVALID, "nvfuser_like: output count differs from the host's");
  for (int i = 0; i < nin && !st; i++)
    if (in[i].kind == FBXP_ARG_TENSOR)
      for (int d = 0; d < in[i].ndim; d++)
        if (in[i].strides[d] < 0) st = nvf_host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like: negative strides");
  if (!st) st = nvf_segment_fusion(&pl, f);
  pl.persist_limit = 32 * 1024;
  pl.disable_vec = disable_vec;
  pl.disable_vload = disable_vload;
  pl.disable_persist = disable_persist;
  pl.cpu_rows = nvf_rt_cpu_device(rt) && !disable_rows;
  pl.stream_bytes = disable_stream ? 0 : nvf_rt_cache_bytes(rt);
  if (!st) {
    fbxk_printf(&text, "/* ==== nvfuser_like: fusion IR ==== */\n/*\n");
    nvf_fusion_print(f, &text);
    fbxk_printf(&text, "*/\n/* %d segment%s, target %s */\n", pl.nsegs, pl.nsegs == 1 ? "" : "s",
                target == NVF_TARGET_CUDA ? "CUDA C" : "OpenCL C");
  }
  /* buffers: graph inputs, then every materialized TV */
  int *buf_of = st ? NULL : nvf_host->alloc(sizeof(int) * (size_t)f->ntv);
  if (!st && !buf_of) st = nomem();
  for (int t = 0; !st && t < f->ntv; t++) buf_of[t] = -1;
  k->ninputs = nin;
  k->noutputs = f->noutputs;
  for (int i = 0; !st && i < nin; i++) {
    k->input_kind[i] = in[i].kind;
    k->input_buf[i] = -1;
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    int b = k->nbufs++;
    buf_of[f->input_tv[i]] = b;
    k->input_buf[i] = b;
    k->buf_dtype[b] = in[i].dtype;
    k->buf_ndim[b] = in[i].ndim;
    int64_t span = 1;
    for (int d = 0; d < in[i].ndim; d++) {
      k->buf_sizes[b][d] = in[i].sizes[d];
      k->buf_strides[b][d] = in[i].strides[d];
      if (in[i].sizes[d] == 0) span = 0;
    }
    if (span)
      for (int d = 0; d < in[i].ndim; d++) span += (in[i].sizes[d] - 1) * in[i].strides[d];
    k->buf_bytes[b] = (size_t)span * (size_t)fbxk_dtype_size(in[i].dtype);
    k->buf_flags[b] = NVF_BUF_IN;
  }
  for (int t = 0; !st && t < f->ntv; t++) {
    if (!pl.materialize[t] || buf_of[t] >= 0) continue;
    if (k->nbufs >= NVF_MAX_BUFS) {
      st = nvf_host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like: too many buffers");
      break;
    }
    int b = k->nbufs++;
    buf_of[t] = b;
    int64_t sizes[NVF_MAX_DIMS];
    int r = nvf_tv_logical(&f->tv[t], sizes);
    int64_t n = 1;
    for (int d = 0; d < r; d++) n *= sizes[d];
    k->buf_dtype[b] = f->tv[t].dtype;
    k->buf_ndim[b] = r;
    memcpy(k->buf_sizes[b], sizes, sizeof(int64_t) * (size_t)r);
    k->buf_bytes[b] = (size_t)n * (size_t)fbxk_dtype_size(f->tv[t].dtype);
    k->buf_flags[b] = f->tv[t].output ? NVF_BUF_OUT : NVF_BUF_TEMP;
  }
  for (int o = 0; !st && o < f->noutputs; o++) k->output_buf[o] = buf_of[f->output_tv[o]];
  fbxk_dialect dl = target == NVF_TARGET_CUDA ? FBXK_CUDA : FBXK_OPENCL;
  for (int s = 0; !st && s < pl.nsegs; s++) {
    if ((st = nvf_schedule_segment(&pl, s, dl))) break;
    if (nvrtc_check) nvrtc_check_segment(&pl, s);
    char *src = nvf_print(&pl.seg[s].k);
    if (!src) {
      st = nomem();
      break;
    }
    fbxk_printf(&text, "/* ==== segment %d: ", s);
    nvf_params_print(&pl.seg[s].p, &text);
    fbxk_printf(&text, " ==== */\n%s", src);
    seg_launch *L = &k->seg[s];
    k->nsegs = s + 1;
    L->block = pl.seg[s].p.block;
    L->groups = pl.seg[s].p.groups;
    const nvf_kernel_ir *kir = &pl.seg[s].k;
    L->nargs = kir->nparams;
    L->args = nvf_host->alloc(sizeof *L->args * (size_t)(kir->nparams + 1));
    L->arg_input = nvf_host->alloc(sizeof(int) * (size_t)(kir->nparams + 1));
    if (!L->args || !L->arg_input) st = nomem();
    for (int a = 0; !st && a < kir->nparams; a++) {
      int t = atoi(kir->pname[a] + 1);
      memset(&L->args[a], 0, sizeof L->args[a]);
      L->arg_input[a] = -1;
      if (kir->params[a].kind == FBXK_PARAM_VALUE) {
        L->args[a].kind = f->tv[t].dtype == FBXK_F64 ? NVF_ARG_F64 : NVF_ARG_I64;
        L->arg_input[a] = f->tv[t].input;
      } else {
        L->args[a].kind = NVF_ARG_BUFFER;
        L->args[a].buffer = buf_of[t];
      }
    }
    if (!st) {
      fbxp_status *cs = nvf_rt_compile(rt, src, kir->name, &L->prog);
      if (cs) {
        char msg[1200];
        snprintf(msg, sizeof msg, "nvfuser_like: the kernel of segment %d does not compile: %.1100s", s, status_text(cs));
        drop_status(cs);
        st = nvf_host->status_new(FBXP_ERR_COMPILE, msg);
      }
    }
    fbxk_free(src);
  }
  nvf_host->free(buf_of);
  if (!st && !(k->text = fbxk_take(&text))) st = nomem();
  fbxk_buf_free(&text);
  if (!st)
    for (int o = 0; o < f->noutputs; o++) {
      fbxp_arg_spec *s = &res->outputs[o];
      int b = k->output_buf[o];
      s->kind = FBXP_ARG_TENSOR;
      s->dtype = k->buf_dtype[b];
      s->ndim = k->buf_ndim[b];
      for (int d = 0; d < s->ndim; d++) s->sizes[d] = k->buf_sizes[b][d];
      s->device_type = kDLCPU;
      s->device_id = 0;
    }
  if (!st) {
    res->dynamic_outputs = 0;
    res->nkernels = k->nsegs;
  }
  nvf_plan_free(&pl);
  nvf_host->free(f);
  if (st) {
    kernel_free(k);
    return st;
  }
  *out = (fbxp_kernel *)k;
  return NULL;
}

static fbxp_status *run_error(const char *fmt, int i) {
  char msg[200];
  snprintf(msg, sizeof msg, fmt, i);
  return nvf_host->status_new(FBXP_ERR_RUN, msg);
}

static int dl_matches(const DLTensor *t, const nvf_kernel *k, int b, int strided) {
  if (!t || t->ndim != k->buf_ndim[b] || t->device.device_type != kDLCPU ||
      t->dtype.bits != 8 * fbxk_dtype_size(k->buf_dtype[b]))
    return 0;
  int64_t acc = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != k->buf_sizes[b][d]) return 0;
    int64_t s = t->strides ? t->strides[d] : acc;
    int64_t want = strided ? k->buf_strides[b][d] : acc;
    if (t->shape[d] != 1 && s != want) return 0;
    acc *= t->shape[d];
  }
  return 1;
}

static fbxp_status *nvf_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                            int32_t nout) {
  (void)state;
  const nvf_kernel *k = (const nvf_kernel *)kernel;
  if (nin != k->ninputs || nout != k->noutputs)
    return nvf_host->status_new(FBXP_ERR_INVALID, "nvfuser_like: wrong number of inputs or outputs");
  nvf_buffer *bufs = nvf_host->alloc(sizeof *bufs * (size_t)(k->nbufs + 1));
  nvf_launch launches[NVF_MAX_SEGS];
  nvf_arg *args[NVF_MAX_SEGS] = {0};
  double dummy[NVF_MAX_BUFS]; /* stand-ins of zero-size buffers: per run (runs may be concurrent) */
  fbxp_status *st = bufs ? NULL : nomem();
  for (int b = 0; !st && b < k->nbufs; b++) {
    bufs[b].data = NULL;
    bufs[b].bytes = k->buf_bytes[b];
    bufs[b].flags = k->buf_flags[b];
  }
  for (int i = 0; !st && i < nin; i++) {
    if (in[i].kind != k->input_kind[i]) st = run_error("nvfuser_like: input %d has another kind than at compile time", i);
    else if (k->input_buf[i] >= 0) {
      const DLTensor *t = in[i].u.tensor;
      if (!dl_matches(t, k, k->input_buf[i], 1))
        st = run_error("nvfuser_like: input %d differs from the spec the kernel was compiled for", i);
      else bufs[k->input_buf[i]].data = (char *)t->data + t->byte_offset;
    }
  }
  for (int o = 0; !st && o < nout; o++) {
    if (!dl_matches(outs[o], k, k->output_buf[o], 0)) st = run_error("nvfuser_like: output %d differs from its spec", o);
    else bufs[k->output_buf[o]].data = (char *)outs[o]->data + outs[o]->byte_offset;
  }
  /* zero-size buffers never reach the runtime: a stand-in element */
  for (int b = 0; !st && b < k->nbufs; b++)
    if (!bufs[b].bytes) {
      bufs[b].bytes = sizeof(double);
      if (bufs[b].flags != NVF_BUF_TEMP) bufs[b].data = &dummy[b];
    }
  int nl = 0;
  for (int s = 0; !st && s < k->nsegs; s++) {
    const seg_launch *L = &k->seg[s];
    if (L->groups <= 0) continue;
    if (!(args[s] = nvf_host->alloc(sizeof(nvf_arg) * (size_t)(L->nargs + 1)))) {
      st = nomem();
      break;
    }
    for (int a = 0; a < L->nargs; a++) {
      args[s][a] = L->args[a];
      int gi = L->arg_input[a];
      if (gi >= 0) {
        if (args[s][a].kind == NVF_ARG_F64) args[s][a].f = in[gi].kind == FBXP_ARG_FLOAT ? in[gi].u.f : (double)in[gi].u.i;
        else args[s][a].i = in[gi].kind == FBXP_ARG_FLOAT ? (int64_t)in[gi].u.f : in[gi].u.i;
      }
    }
    nvf_launch *l = &launches[nl++];
    memset(l, 0, sizeof *l);
    l->program = L->prog;
    l->args = args[s];
    l->nargs = L->nargs;
    l->dims = 1;
    l->local[0] = (size_t)L->block;
    l->global[0] = (size_t)L->groups * (size_t)L->block;
  }
  if (!st && nl) st = nvf_rt_run(rt, bufs, k->nbufs, launches, nl);
  for (int s = 0; s < NVF_MAX_SEGS; s++) nvf_host->free(args[s]);
  nvf_host->free(bufs);
  return st;
}

static void nvf_release(void *state, fbxp_kernel *k) {
  (void)state;
  kernel_free((nvf_kernel *)k);
}

static const char *nvf_kernel_source(void *state, fbxp_kernel *k) {
  (void)state;
  return ((const nvf_kernel *)k)->text;
}

static fbxp_status *nvf_partition_or_not(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  if (!rt) return NULL; /* no device: nothing is fused (the description says why) */
  return nvf_partition(state, g, p);
}

static void open_runtime(void);

/* The runtime is opened when the plugin is loaded (the description names
 * its device) and closed by shutdown, before the host unloads the plugin;
 * an init after a shutdown opens it again. */
static fbxp_status *nvf_init(void **state) {
  *state = NULL;
  if (!rt) open_runtime();
  return NULL;
}

static void nvf_shutdown(void *state) {
  (void)state;
  if (rt) {
    nvf_rt_stats s;
    nvf_rt_get_stats(rt, &s);
    if (s.timed_runs) { /* FUSEBOX_CUDA_KERNEL_TIMING=1: the device time of the kernels (FUSEBOX_LOG=fusion) */
      char msg[256];
      snprintf(msg, sizeof msg, "%llu runs timed on the device: %.4f ms of kernels per run (%llu launches in %llu runs)",
               (unsigned long long)s.timed_runs, s.kernel_ms / (double)s.timed_runs, (unsigned long long)s.launches,
               (unsigned long long)s.runs);
      nvf_host->log(FBXP_LOG_INFO, msg);
    }
    nvf_rt_close(rt);
  }
  rt = NULL;
}

static fbxp_plugin_api api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "nvfuser_like",
    .version = "0.1.0",
    .vendor = "fusebox",
    .description = description,
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .compat_key = "nvfuser_like-0.1",
    .init = nvf_init,
    .shutdown = nvf_shutdown,
    .partition = nvf_partition_or_not,
    .compile = nvf_compile,
    .run = nvf_run,
    .release = nvf_release,
    .kernel_source = nvf_kernel_source,
};

static void warn_env(const char *var, const char *value, const char *why) {
  char msg[300];
  snprintf(msg, sizeof msg, "nvfuser_like: %s='%.64s' %s", var, value, why);
  nvf_host->log(FBXP_LOG_WARN, msg);
}

static void read_disable(void) {
  const char *e = getenv("FUSEBOX_NVF_DISABLE");
  disable_vec = disable_persist = disable_rows = disable_vload = disable_stream = 0;
  if (!e || !*e) return;
  char word[32];
  for (const char *p = e; *p;) {
    size_t n = strcspn(p, ",");
    if (n && n < sizeof word) {
      memcpy(word, p, n);
      word[n] = 0;
      if (!strcmp(word, "vectorize")) disable_vec = 1;
      else if (!strcmp(word, "persistent")) disable_persist = 1;
      else if (!strcmp(word, "rows")) disable_rows = 1;
      else if (!strcmp(word, "vload")) disable_vload = 1;
      else if (!strcmp(word, "stream")) disable_stream = 1;
      else if (!strcmp(word, "all")) disable_vec = disable_persist = disable_rows = disable_vload = disable_stream = 1;
      else
        warn_env("FUSEBOX_NVF_DISABLE", e,
                 "names an unknown switch (vectorize, persistent, rows, vload, stream, all); ignored");
    }
    p += n;
    if (*p == ',') p++;
  }
}

/* Opens the runtime: the target asked for, else CUDA when it opens, else OpenCL. */
static void open_runtime(void) {
  const char *t = getenv("FUSEBOX_NVF_TARGET");
  int want = -1;
  if (t && !strcmp(t, "opencl")) want = NVF_TARGET_OPENCL;
  else if (t && !strcmp(t, "cuda")) want = NVF_TARGET_CUDA;
  else if (t && *t) warn_env("FUSEBOX_NVF_TARGET", t, "is neither 'opencl' nor 'cuda'; using the default");
  char cuda_why[300] = "";
  rt = NULL;
  if (want != NVF_TARGET_OPENCL) {
    fbxp_status *s = nvf_rt_open(nvf_host, NVF_TARGET_CUDA, &rt);
    if (s) {
      if (snprintf(cuda_why, sizeof cuda_why, "%s", status_text(s)) >= (int)sizeof cuda_why) cuda_why[sizeof cuda_why - 2] = '.';
      drop_status(s);
      rt = NULL;
    }
  }
  if (!rt && want != NVF_TARGET_CUDA) {
    fbxp_status *s = nvf_rt_open(nvf_host, NVF_TARGET_OPENCL, &rt);
    if (s) {
      if (snprintf(rt_why, sizeof rt_why, "nvfuser_like: no OpenCL device: %s", status_text(s)) >= (int)sizeof rt_why)
        rt_why[sizeof rt_why - 2] = '.';
      drop_status(s);
      rt = NULL;
    }
  } else if (!rt) {
    if (snprintf(rt_why, sizeof rt_why, "nvfuser_like: FUSEBOX_NVF_TARGET=cuda but CUDA does not open: %s", cuda_why) >=
        (int)sizeof rt_why)
      rt_why[sizeof rt_why - 2] = '.';
  }
  if (rt) target = nvf_rt_target(rt);
  /* kernels access single elements (8 bytes at most): every tensor can be
   * wrapped without a copy on a host-memory device */
  if (rt) nvf_rt_set_wrap_align(rt, 16);
  /* long device lines and reasons are cut to the buffers (the return value
   * is looked at, so that -Wformat-truncation knows it is meant) */
  int len = snprintf(description, sizeof description,
           "nvFuser: tensor views, schedulers (pointwise, reduction, persistent), kernel IR, OpenCL C / CUDA C; "
           "target %s%s%s%s%s",
           rt ? nvf_rt_device(rt) : "none (nothing is fused): ", rt ? "" : rt_why,
           rt && target == NVF_TARGET_OPENCL && want < 0 ? " (not CUDA: " : "",
           rt && target == NVF_TARGET_OPENCL && want < 0 ? (cuda_why[0] ? cuda_why : "no CUDA device") : "",
           rt && target == NVF_TARGET_OPENCL && want < 0 ? ")" : "");
  if (len >= (int)sizeof description) nvf_host->log(FBXP_LOG_DEBUG, "nvfuser_like: the description was cut");
}

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  (void)minor;
  if (major != FBXP_ABI_MAJOR) {
    *reason = "nvfuser_like was built for fusebox ABI 1.x";
    return NULL;
  }
  if (!host || host->struct_size < FBXP_HOST_API_SIZE_V1_0) {
    *reason = "nvfuser_like needs the fusebox ABI 1.0 host table";
    return NULL;
  }
  nvf_host = host;
  fbxk_set_allocator(host->alloc, host->free);
  read_disable();
  const char *c = getenv("FUSEBOX_NVF_NVRTC_CHECK");
  nvrtc_check = c && *c ? c : NULL;
  if (!rt) open_runtime();
  return &api;
}
