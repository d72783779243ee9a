/* The tensorexpr plugin: PyTorch's NNC fuser (fuser1) on the fusebox SDK.
 *
 * compile: the group's subgraph is lowered to the loop-nest IR for the
 * exact input specs (lower.c), scheduled (schedule.c) and either printed as
 * C and compiled through host->cc_compile (codegen_c.c) or kept for the IR
 * interpreter (eval.c). Output specs are known at compile time (concrete
 * sizes); the host guards each group with its input types and
 * respecializes on a mismatch (FBXP_GUARDS_OUTSIDE).
 * run: checks the inputs against the specs, allocates the temporaries the
 * schedule kept (row statistics), calls the kernel. Runs share nothing
 * mutable: FBXP_RUN_THREAD_SAFE.
 *
 * Environment, read once when the plugin is loaded (a bad value is
 * reported with the variable's name and the default is used):
 * FUSEBOX_TE_BACKEND = c (default) | eval | cuda: generated C, the IR
 *   interpreter, or CUDA C (codegen_cuda.c) run on the GPU through the
 *   kit's CUDA driver module (kit_cuda.h: NVRTC to PTX, module load, one
 *   launch per kernel, inputs copied to the device and outputs back on
 *   every run). The driver is opened at the first cuda compile (libcuda.so.1,
 *   or FUSEBOX_LIBCUDA); when it cannot be (no driver, no device, no NVRTC,
 *   a 1.0 host) the backend falls back, with a warning once naming the
 *   reason, to what it did before it had a runtime: the CUDA C is compiled to
 *   PTX to check it (when NVRTC is there) and the group runs as the C
 *   backend's kernel on the CPU. An NVRTC failure fails the compile (the
 *   group runs in the interpreter, counted). When the C compiler fails, a
 *   kernel runs on the interpreter (logged once).
 * FUSEBOX_TE_DYNAMIC = 1 (default) | 0: with an ABI 1.1 host the plugin
 *   accepts symbolic sizes (FBXP_ACCEPTS_SYMBOLIC): at the dynamic levels of
 *   FUSEBOX_FUSION_STRATEGY one kernel serves every size of a pattern
 *   (dynamic.c; every backend); 0: kernels are specialized on concrete sizes
 *   only.
 * FUSEBOX_TE_DISABLE = comma list of inline, rowblock, registers, flatten,
 *   parallel, vectorize (or all): transformations left out of the schedule.
 * FUSEBOX_TE_PARALLEL_MIN = elements (default 32768): a nest moving fewer
 *   runs on the calling thread.
 * FUSEBOX_TE_MARCH = the -march of compiled kernels (default native; none:
 *   the compiler's default). The first line of the C names it and, for
 *   native, the CPU (cpuid), so the disk cache never serves a kernel built
 *   for another CPU.
 * FUSEBOX_NUM_THREADS: OpenMP team size of parallel loops (the host pool's
 *   rule: positive value, else the online CPUs, at most 64).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <fusebox/kit/kit_cuda.h>

#include "te.h"

const fbxp_host_api *te_host;

typedef void (*te_fn)(char *const *bufs, const double *fs, const int64_t *is, int nt);

enum { TE_BACKEND_C, TE_BACKEND_EVAL, TE_BACKEND_CUDA };
static int backend = TE_BACKEND_C;
static unsigned transforms = TE_T_ALL;
static int64_t par_min = 32768;
static int nthreads = 1;
static char cc_flags[160];
static char target_line[256];
static atomic_int told_fallback, told_serial, told_no_nvrtc, gomp_pinned;

/* The GPU runtime of the cuda backend: opened once, at the first cuda
 * compile (compiles are serialized by the host); NULL when it could not be
 * (gpu_why says why). Closed by shutdown, before the host unloads the
 * plugin (every kernel released); a compile after that opens it again. */
static fbxk_cuda *gpu;
static int gpu_tried;
static char gpu_why[600];

typedef struct te_kernel {
  te_kernel_ir *ir;
  fbxp_shlib *lib;
  te_fn fn;
  char *text; /* explain --source: IR before/after the schedule, then the C */
  /* the cuda backend on a GPU: the module, kernel i's entry and blocks */
  fbxk_cuda_module *cu_mod;
  int ncu;
  fbxk_cuda_fn **cu_fns;
  te_cuda_grid *cu_grids;
} te_kernel;

static fbxp_status *nomem(void) { return te_host->status_new(FBXP_ERR_NOMEM, "tensorexpr: out of memory"); }

static void kernel_free(te_kernel *k) {
  if (!k) return;
  if (k->lib) te_host->shlib_release(k->lib);
  if (k->cu_mod) fbxk_cuda_module_unload(gpu, k->cu_mod);
  te_host->free(k->cu_fns);
  fbxk_free(k->cu_grids);
  if (k->ir) te_arena_destroy(k->ir->arena);
  te_host->free(k->ir);
  fbxk_free(k->text);
  te_host->free(k);
}

static void transforms_text(char *out, size_t cap) {
  out[0] = 0;
  for (int i = 0; i < 6; i++)
    if (transforms & (1u << i)) {
      size_t l = strlen(out);
      snprintf(out + l, cap - l, "%s%s", l ? "," : "", te_transform_names[i]);
    }
  if (!out[0]) snprintf(out, cap, "none");
}

static int v11(void) { return te_host->struct_size >= FBXP_HOST_API_SIZE_V1_1; }

static void gpu_open(void) {
  fbxp_status *st = fbxk_cuda_open(te_host, "tensorexpr CUDA", NULL, &gpu);
  char msg[800];
  if (st) {
    snprintf(gpu_why, sizeof gpu_why, "%s", v11() ? te_host->status_message(st) : "the host is older than ABI 1.1");
    if (v11()) te_host->status_free(st);
    snprintf(msg, sizeof msg,
             "tensorexpr: FUSEBOX_TE_BACKEND=cuda: no GPU runtime (%s); kernels are compiled to PTX to check them "
             "and run as C kernels on the CPU",
             gpu_why);
    te_host->log(FBXP_LOG_WARN, msg);
  } else {
    snprintf(msg, sizeof msg, "tensorexpr: FUSEBOX_TE_BACKEND=cuda: kernels run on %s", fbxk_cuda_device(gpu));
    te_host->log(FBXP_LOG_INFO, msg);
  }
}

/* The cuda backend with a GPU: the CUDA C compiled and loaded, an entry and
 * a grid per kernel. */
static fbxp_status *cuda_load(te_kernel *k, char **cu, char *note, size_t cap) {
  int nk = 0;
  const char *bad = NULL;
  *cu = te_codegen_cuda(k->ir, "te_kernel", NULL, &nk, &bad, &k->cu_grids);
  if (!*cu) {
    if (!bad) return nomem();
    char msg[200];
    snprintf(msg, sizeof msg, "tensorexpr: the CUDA backend cannot print this kernel: %s", bad);
    return te_host->status_new(FBXP_ERR_COMPILE, msg);
  }
  fbxp_status *st = fbxk_cuda_module_load(gpu, *cu, "te_kernel.cu", &k->cu_mod);
  if (st) return st;
  if (!(k->cu_fns = te_host->alloc((size_t)(nk ? nk : 1) * sizeof *k->cu_fns))) return nomem();
  k->ncu = nk;
  for (int i = 0; i < nk; i++) {
    char entry[32];
    snprintf(entry, sizeof entry, "te_kernel_%d", i);
    if ((st = fbxk_cuda_function(gpu, k->cu_mod, entry, &k->cu_fns[i]))) return st;
  }
  snprintf(note, cap, "%d kernel%s, NVRTC: %d PTX entr%s loaded, run on %s", nk, nk == 1 ? "" : "s", nk,
           nk == 1 ? "y" : "ies", fbxk_cuda_device(gpu));
  return NULL;
}

/* The CUDA C of a scheduled kernel, compiled to PTX by NVRTC to check it
 * (no GPU runtime: the PTX is not kept). *note says how it went (for
 * explain --source). NVRTC absent: a warning once, the CUDA C is shown
 * uncompiled. */
static fbxp_status *cuda_compile(const te_kernel_ir *ir, char **cu, char *note, size_t cap) {
  int nk = 0;
  const char *bad = NULL;
  *cu = te_codegen_cuda(ir, "te_kernel", NULL, &nk, &bad, NULL);
  if (!*cu) {
    if (!bad) return nomem();
    char msg[200];
    snprintf(msg, sizeof msg, "tensorexpr: the CUDA backend cannot print this kernel: %s", bad);
    return te_host->status_new(FBXP_ERR_COMPILE, msg);
  }
  char *ptx = NULL, *log = NULL;
  fbxp_status *cs = te_host->nvrtc_compile(*cu, "te_kernel.cu", NULL, &ptx, &log);
  fbxp_status *st = NULL;
  if (!cs) {
    int entries = 0;
    for (const char *p = ptx; p && (p = strstr(p, ".entry ")); p++) entries++;
    snprintf(note, cap, "%d kernel%s, NVRTC: %d PTX entr%s, %zu bytes", nk, nk == 1 ? "" : "s", entries,
             entries == 1 ? "y" : "ies", ptx ? strlen(ptx) : (size_t)0);
  } else if (v11() && te_host->status_code(cs) == FBXP_ERR_UNSUPPORTED) {
    snprintf(note, cap, "%d kernel%s, not compiled: NVRTC is not available", nk, nk == 1 ? "" : "s");
    if (!atomic_exchange(&told_no_nvrtc, 1)) {
      char why[400];
      snprintf(why, sizeof why, "tensorexpr: FUSEBOX_TE_BACKEND=cuda: %s; CUDA C is printed, not compiled",
               te_host->status_message(cs));
      te_host->log(FBXP_LOG_WARN, why);
    }
  } else {
    char msg[2048];
    snprintf(msg, sizeof msg, "tensorexpr: NVRTC rejected the CUDA C: %s\n%.1500s", v11() ? te_host->status_message(cs) : "",
             log ? log : "");
    st = te_host->status_new(FBXP_ERR_COMPILE, msg);
  }
  if (cs && v11()) te_host->status_free(cs);
  te_host->free(ptx);
  te_host->free(log);
  return st;
}

/* Dynamic shapes: a status for why this group's kernel cannot serve every
 * size (the host runs the group in the interpreter for this pattern). */
static fbxp_status *dyn_unsupported(const char *why) {
  char msg[400];
  snprintf(msg, sizeof msg, "tensorexpr: dynamic shapes: %s", why);
  return te_host->status_new(FBXP_ERR_UNSUPPORTED, msg);
}

/* A lowering or schedule failure at a representative size: unsupported. */
static fbxp_status *dyn_status(fbxp_status *st) {
  if (!st || te_host->status_code(st) == FBXP_ERR_NOMEM) return st;
  fbxp_status *mine = dyn_unsupported(te_host->status_message(st));
  te_host->status_free(st);
  return mine;
}

/* The second representative binding lowered and scheduled, and the kernel
 * at the first (a) matched against it (dynamic.c). */
static fbxp_status *dyn_match(te_kernel_ir *a, const fbxp_graph *g, const fbxp_arg_spec *rep_b,
                              const fbxp_arg_spec *in, int32_t nin) {
  te_kernel_ir *b = te_host->alloc(sizeof *b);
  if (!b) return nomem();
  memset(b, 0, sizeof *b);
  if (!(b->arena = te_arena_create())) {
    te_host->free(b);
    return nomem();
  }
  fbxp_status *st = dyn_status(te_lower(b, g, rep_b, nin));
  if (!st) st = dyn_status(te_schedule(b, transforms, 0));
  const char *why = st ? NULL : te_dyn_match(a, b, in, nin);
  if (why) st = dyn_unsupported(why);
  for (int o = 0; o < a->noutputs && !st; o++) { /* output sizes: constants or one symbol */
    const te_buf *ob = &a->bufs[a->output_buf[o]];
    for (int d = 0; d < ob->ndim && !st; d++) {
      if (!ob->sizes_sx[d]) continue;
      const te_sizex *x = &a->sx[ob->sizes_sx[d] - 1];
      int n = 0;
      for (int j = 0; j < TE_MAX_SYMS; j++) n += x->e[j];
      if (x->c != 1 || n != 1) st = dyn_unsupported("an output size that is not one of the inputs' sizes");
    }
  }
  te_arena_destroy(b->arena);
  te_host->free(b);
  return st;
}

/* The one symbol of a size expression that is one input size. */
static int dyn_symbol(const te_sizex *x) {
  for (int j = 0; j < TE_MAX_SYMS; j++)
    if (x->e[j]) return j;
  return 0;
}

static fbxp_status *te_compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                               fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state;
  te_kernel *k = te_host->alloc(sizeof *k);
  if (!k) return nomem();
  memset(k, 0, sizeof *k);
  k->ir = te_host->alloc(sizeof *k->ir);
  if (!k->ir) {
    kernel_free(k);
    return nomem();
  }
  memset(k->ir, 0, sizeof *k->ir);
  if (!(k->ir->arena = te_arena_create())) {
    kernel_free(k);
    return nomem();
  }
  /* symbolic sizes (ABI 1.1): lowered at two representative bindings,
   * one kernel for every size (dynamic.c) */
  const int dyn = te_specs_symbolic(in, nin);
  fbxp_arg_spec *rep = dyn ? te_host->alloc(2 * (size_t)nin * sizeof *rep) : NULL;
  fbxp_status *st = NULL;
  if (dyn && !rep) st = nomem();
  const char *dyn_why = st || !dyn ? NULL : te_dyn_specs(in, nin, 0, rep);
  if (!dyn_why && !st && dyn) dyn_why = te_dyn_specs(in, nin, 1, rep + nin);
  if (dyn_why) st = dyn_unsupported(dyn_why);
  if (!st) st = dyn ? dyn_status(te_lower(k->ir, g, rep, nin)) : te_lower(k->ir, g, in, nin);
  char msg[200];
  if (!st && te_ir_verify(k->ir, msg, sizeof msg)) {
    char full[260];
    snprintf(full, sizeof full, "tensorexpr: the lowered IR is invalid: %s", msg);
    st = te_host->status_new(FBXP_ERR_INTERNAL, full);
  }
  if (!st && k->ir->noutputs != res->noutputs)
    st = te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: output count differs from the host's");
  char *before = st ? NULL : te_ir_print(k->ir);
  if (!st && !before) st = nomem();
  if (!st) st = dyn ? dyn_status(te_schedule(k->ir, transforms, 0)) : te_schedule(k->ir, transforms, par_min);
  if (!st && dyn) st = dyn_match(k->ir, g, rep + nin, in, nin);
  te_host->free(rep);
  char *after = st ? NULL : te_ir_print(k->ir);
  if (!st && !after) st = nomem();
  char *c = NULL, *cu = NULL, cu_note[160] = "";
  if (!st && !(c = te_codegen_c(k->ir, "te_kernel", target_line))) st = nomem();
  if (!st && backend == TE_BACKEND_CUDA) {
    if (!gpu_tried) {
      gpu_tried = 1;
      gpu_open();
    }
    st = gpu ? cuda_load(k, &cu, cu_note, sizeof cu_note) : cuda_compile(k->ir, &cu, cu_note, sizeof cu_note);
  }
  if (!st) {
    char tl[96];
    transforms_text(tl, sizeof tl);
    fbxk_buf b = {0};
    if (dyn) te_dyn_describe(k->ir, &b);
    fbxk_printf(&b, "/* ==== tensorexpr: loop IR as lowered ==== */\n%s", before);
    fbxk_printf(&b, "/* ==== loop IR after the schedule (%s) ==== */\n%s", tl, after);
    if (cu) fbxk_printf(&b, "/* ==== CUDA C (backend cuda: %s) ==== */\n%s", cu_note, cu);
    fbxk_printf(&b, "/* ==== C (backend %s) ==== */\n%s",
                backend == TE_BACKEND_EVAL    ? "eval: not compiled"
                : k->cu_mod                   ? "cuda: not compiled, the kernels run on the GPU"
                : backend == TE_BACKEND_CUDA ? "cuda: no GPU runtime, what runs on the CPU"
                                              : "c",
                c);
    if (!(k->text = fbxk_take(&b))) st = nomem();
  }
  fbxk_free(cu);
  fbxk_free(before);
  fbxk_free(after);
  if (!st && backend != TE_BACKEND_EVAL && !k->cu_mod) {
    fbxp_status *cs = te_host->cc_compile(c, cc_flags, &k->lib);
    if (!cs) {
      void *sym = te_host->shlib_symbol(k->lib, "te_kernel");
      if (sym) memcpy(&k->fn, &sym, sizeof sym);
      const int *omp = te_host->shlib_symbol(k->lib, "te_openmp");
      if ((!omp || !*omp) && !atomic_exchange(&told_serial, 1))
        te_host->log(FBXP_LOG_WARN, "tensorexpr: the C compiler has no OpenMP: parallel loops run serially");
      /* The kernels bring libgomp, whose worker threads outlive any kernel:
       * once loaded it stays (NODELETE), or releasing the last kernel would
       * unload it under its sleeping threads (LeakSanitizer's thread walk at
       * exit crashed on the stale thread-local block). */
      if (omp && *omp && !atomic_exchange(&gomp_pinned, 1)) (void)dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    }
    if (!k->fn) {
      /* no working compiler: the interpreter runs this kernel. A 1.1 host
       * lets us say why (once) and free the status it returned. */
      const int v11 = te_host->struct_size >= FBXP_HOST_API_SIZE_V1_1;
      if (!atomic_exchange(&told_fallback, 1)) {
        char why[512];
        snprintf(why, sizeof why, "tensorexpr: C compilation failed; kernels run on the loop-IR interpreter%s%s",
                 cs && v11 ? ": " : "", cs && v11 ? te_host->status_message(cs) : "");
        te_host->log(FBXP_LOG_WARN, why);
      }
      if (k->lib) te_host->shlib_release(k->lib);
      k->lib = NULL;
    }
    /* a 1.0 host has no call that frees a status a plugin received */
    if (cs && te_host->struct_size >= FBXP_HOST_API_SIZE_V1_1) te_host->status_free(cs);
  }
  fbxk_free(c);
  if (st) {
    kernel_free(k);
    return st;
  }
  for (int o = 0; o < res->noutputs; o++) {
    const te_buf *b = &k->ir->bufs[k->ir->output_buf[o]];
    fbxp_arg_spec *s = &res->outputs[o];
    s->kind = FBXP_ARG_TENSOR;
    s->dtype = b->dtype;
    s->ndim = b->ndim;
    for (int d = 0; d < b->ndim; d++)
      s->sizes[d] = b->sizes_sx[d] ? FBXP_SYMBOL(dyn_symbol(&k->ir->sx[b->sizes_sx[d] - 1])) : b->sizes[d];
    s->device_type = kDLCPU;
    s->device_id = 0;
  }
  res->dynamic_outputs = 0;
  res->nkernels = 1;
  *out = (fbxp_kernel *)k;
  return NULL;
}

static fbxp_status *run_error(const char *fmt, int i) {
  char msg[200];
  snprintf(msg, sizeof msg, fmt, i);
  return te_host->status_new(FBXP_ERR_RUN, msg);
}

static int dl_matches(const DLTensor *t, const te_buf *bb, const int64_t *sxv) {
  if (!t || t->ndim != bb->ndim || t->device.device_type != kDLCPU || t->dtype.bits != 8 * fbxk_dtype_size(bb->dtype))
    return 0;
  te_buf concrete, *b = &concrete; /* this run's sizes and strides (dynamic shapes) */
  concrete = *bb;
  te_dyn_buf(bb, sxv, concrete.sizes, concrete.strides, NULL);
  int64_t acc = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    if (t->shape[d] != b->sizes[d]) return 0;
    int64_t s = t->strides ? t->strides[d] : acc;
    acc *= t->shape[d];
    if (b->sizes[d] != 1 && b->kind == TE_BUF_INPUT && s != b->strides[d]) return 0;
    if (b->sizes[d] != 1 && b->kind == TE_BUF_OUTPUT && s != b->strides[d]) return 0;
  }
  return 1;
}

/* Bytes a buffer's elements span (0 when it has none). */
static size_t buf_bytes(const te_buf *b) {
  int64_t span = 1;
  for (int d = 0; d < b->ndim; d++) {
    if (b->sizes[d] == 0) return 0;
    int64_t s = b->strides[d] < 0 ? -b->strides[d] : b->strides[d];
    span += (b->sizes[d] - 1) * s;
  }
  return (size_t)span * (size_t)fbxk_dtype_size(b->dtype);
}

/* One run on the GPU: every kernel parameter buffer in buffer order (what
 * codegen_cuda.c declares: views and inlined temporaries are not
 * parameters), inputs copied in, outputs back, temporaries on the device
 * only; then fs<j>, is<j> per scalar input; one launch per kernel. */
static fbxp_status *gpu_run(const te_kernel *kk, char *const *bufs, const double *fs, const int64_t *is,
                            const int64_t *sym) {
  const te_kernel_ir *k = kk->ir;
  int nargs = 0;
  for (int b = 0; b < k->nbufs; b++) nargs += !(k->bufs[b].kind == TE_BUF_TEMP && !k->bufs[b].numel);
  nargs += 2 * k->ninputs + k->nsx;
  fbxk_cuda_buf *cb = te_host->alloc((size_t)(k->nbufs ? k->nbufs : 1) * sizeof *cb);
  fbxk_cuda_arg *ca = te_host->alloc((size_t)(nargs ? nargs : 1) * sizeof *ca);
  fbxk_cuda_launch *cl = te_host->alloc((size_t)(kk->ncu ? kk->ncu : 1) * sizeof *cl);
  fbxp_status *st = NULL;
  if (!cb || !ca || !cl) st = nomem();
  int nb = 0, na = 0;
  for (int b = 0; b < k->nbufs && !st; b++) {
    const te_buf *bf = &k->bufs[b];
    if (bf->kind == TE_BUF_TEMP && !bf->numel) continue;
    te_buf run_bf = *bf; /* this run's sizes, strides and count (dynamic shapes) */
    te_dyn_buf(bf, is + k->ninputs, run_bf.sizes, run_bf.strides, &run_bf.numel);
    size_t bytes = bf->kind == TE_BUF_TEMP ? (size_t)run_bf.numel * (size_t)fbxk_dtype_size(bf->dtype)
                                           : buf_bytes(&run_bf);
    uint32_t flags = bf->kind == TE_BUF_INPUT ? FBXK_CUDA_IN : bf->kind == TE_BUF_OUTPUT ? FBXK_CUDA_OUT : FBXK_CUDA_TEMP;
    if (!bytes) { /* an empty tensor: a parameter all the same, nothing to copy */
      bytes = (size_t)fbxk_dtype_size(bf->dtype);
      flags = FBXK_CUDA_TEMP;
    }
    cb[nb] = (fbxk_cuda_buf){flags == FBXK_CUDA_TEMP ? NULL : bufs[b], bytes, flags};
    ca[na++] = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_BUFFER, .buffer = nb++};
  }
  for (int i = 0; i < k->ninputs && !st; i++) {
    if (k->input_kind[i] == FBXP_ARG_TENSOR) continue;
    ca[na++] = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_F64, .f = fs[i]};
    ca[na++] = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_I64, .i = is[i]};
  }
  for (int i = 0; i < k->nsx && !st; i++) /* dynamic shapes: the size arguments */
    ca[na++] = (fbxk_cuda_arg){.kind = FBXK_CUDA_ARG_I64, .i = is[k->ninputs + i]};
  for (int i = 0; i < kk->ncu && !st; i++)
    cl[i] = (fbxk_cuda_launch){.fn = kk->cu_fns[i], .args = ca, .nargs = na,
                               .grid = {(unsigned)te_cuda_blocks(&kk->cu_grids[i], sym), 1, 1},
                               .block = {TE_CUDA_BLOCK, 1, 1}};
  if (!st) st = fbxk_cuda_run(gpu, cb, nb, cl, kk->ncu, NULL);
  te_host->free(cb);
  te_host->free(ca);
  te_host->free(cl);
  return st;
}

static fbxp_status *te_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                           int32_t nout) {
  (void)state;
  const te_kernel *kk = (const te_kernel *)kernel;
  const te_kernel_ir *k = kk->ir;
  if (nin != k->ninputs || nout != k->noutputs)
    return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: wrong number of inputs or outputs");
  char *small[32];
  char **bufs = k->nbufs <= 32 ? small : te_host->alloc(sizeof(char *) * (size_t)k->nbufs);
  double fsmall[32];
  int64_t ismall[32 + TE_MAX_SX]; /* the scalar inputs, then (dynamic shapes) the size expressions' values */
  double *fs = nin <= 32 ? fsmall : te_host->alloc(sizeof(double) * (size_t)nin);
  int64_t *is = nin <= 32 ? ismall : te_host->alloc(sizeof(int64_t) * (size_t)(nin + TE_MAX_SX));
  const int64_t *sxv = is ? is + nin : NULL;
  fbxp_status *st = NULL;
  if (!bufs || !fs || !is) st = nomem();
  for (int b = 0; b < k->nbufs && !st; b++) bufs[b] = NULL;
  int64_t sym[TE_MAX_SYMS] = {0};
  if (!st && k->nsx && te_dyn_bind(k, in, nin, is + nin, sym))
    st = run_error("tensorexpr: the inputs do not bind the kernel's %d symbolic sizes", k->nsyms);
  for (int i = 0; i < nin && !st; i++) {
    if (in[i].kind != k->input_kind[i]) {
      st = run_error("tensorexpr: input %d has another kind than at compile time", i);
      break;
    }
    fs[i] = in[i].kind == FBXP_ARG_FLOAT ? in[i].u.f : 0;
    is[i] = in[i].kind == FBXP_ARG_INT ? in[i].u.i : 0;
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    const DLTensor *t = in[i].u.tensor;
    const te_buf *b = &k->bufs[k->input_buf[i]];
    if (!dl_matches(t, b, sxv)) st = run_error("tensorexpr: input %d differs from the spec the kernel was compiled for", i);
    else bufs[k->input_buf[i]] = (char *)t->data + t->byte_offset;
  }
  for (int o = 0; o < nout && !st; o++) {
    const DLTensor *t = outs[o];
    const te_buf *b = &k->bufs[k->output_buf[o]];
    if (!dl_matches(t, b, sxv)) st = run_error("tensorexpr: output %d differs from its spec", o);
    else bufs[k->output_buf[o]] = (char *)t->data + t->byte_offset;
  }
  for (int b = 0; b < k->nbufs && !st; b++) {
    const te_buf *bf = &k->bufs[b];
    if (bf->kind != TE_BUF_TEMP || !bf->numel) continue;
    int64_t sz[TE_MAX_DIMS], sd[TE_MAX_DIMS], numel;
    te_dyn_buf(bf, sxv, sz, sd, &numel);
    if (!(bufs[b] = te_host->alloc(numel ? (size_t)numel * (size_t)fbxk_dtype_size(bf->dtype) : 1))) st = nomem();
  }
  if (!st) {
    if (kk->cu_mod) st = gpu_run(kk, bufs, fs, is, sym);
    else if (kk->fn) kk->fn(bufs, fs, is, nthreads);
    else if (te_eval(k, bufs, fs, is)) st = nomem();
  }
  for (int b = 0; bufs && b < k->nbufs; b++)
    if (k->bufs[b].kind == TE_BUF_TEMP) te_host->free(bufs[b]);
  if (bufs != small) te_host->free(bufs);
  if (fs != fsmall) te_host->free(fs);
  if (is != ismall) te_host->free(is);
  return st;
}

static void te_release(void *state, fbxp_kernel *k) {
  (void)state;
  kernel_free((te_kernel *)k);
}

static void te_shutdown(void *state) {
  (void)state;
  fbxk_cuda_close(gpu);
  gpu = NULL;
  gpu_tried = 0;
}

static const char *te_kernel_source(void *state, fbxp_kernel *k) {
  (void)state;
  return ((const te_kernel *)k)->text;
}

/* not const: the entry adds FBXP_ACCEPTS_SYMBOLIC (dynamic shapes) where it applies */
static fbxp_plugin_api api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "tensorexpr",
    .version = "0.1.0",
    .vendor = "fusebox",
    .description = "NNC: a loop-nest IR; pointwise, reductions and softmax fused; C and an IR interpreter",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .compat_key = "tensorexpr-0.1",
    .partition = te_partition,
    .compile = te_compile,
    .run = te_run,
    .release = te_release,
    .kernel_source = te_kernel_source,
    .shutdown = te_shutdown,
};

/* ---- environment ------------------------------------------------------------------------ */

static void warn_env(const char *var, const char *value, const char *why) {
  char msg[300];
  snprintf(msg, sizeof msg, "tensorexpr: %s='%.64s' %s", var, value, why);
  te_host->log(FBXP_LOG_WARN, msg);
}

static void read_disable(void) {
  const char *e = getenv("FUSEBOX_TE_DISABLE");
  transforms = TE_T_ALL;
  if (!e || !*e) return;
  char word[32];
  for (const char *p = e; *p;) {
    size_t n = strcspn(p, ",");
    if (n && n < sizeof word) {
      memcpy(word, p, n);
      word[n] = 0;
      int found = -1;
      for (int i = 0; i < 6; i++)
        if (!strcmp(word, te_transform_names[i])) found = i;
      if (!strcmp(word, "all")) transforms = 0;
      else if (found < 0) warn_env("FUSEBOX_TE_DISABLE", e, "names an unknown transformation (inline, rowblock, flatten, parallel, vectorize, registers, all); ignored");
      else transforms &= ~(1u << found);
    } else if (n) {
      warn_env("FUSEBOX_TE_DISABLE", e, "has an unknown transformation; ignored");
    }
    p += n;
    if (*p == ',') p++;
  }
}

static void cpu_identity(char *out, size_t cap) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned r[4][4] = {{0}};
  unsigned leaves[3] = {0, 1, 7};
  for (int i = 0; i < 3; i++)
    __asm__ volatile("cpuid" : "=a"(r[i][0]), "=b"(r[i][1]), "=c"(r[i][2]), "=d"(r[i][3]) : "a"(leaves[i]), "c"(0));
  /* leaf 1: ebx holds the APIC id and ecx bit 27 the OS's XSAVE state, which vary per core and boot */
  snprintf(out, cap, "x86 %08x%08x%08x sig %08x f1 %08x %08x f7 %08x %08x %08x", r[0][1], r[0][3], r[0][2], r[1][0],
           r[1][2] & ~(1u << 27), r[1][3], r[2][1], r[2][2], r[2][3]);
#else
  snprintf(out, cap, "cpu unknown");
#endif
}

static void read_target(void) {
  const char *m = getenv("FUSEBOX_TE_MARCH");
  if (!m || !*m) m = "native";
  int ok = strlen(m) <= 40;
  for (const char *p = m; *p && ok; p++)
    ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.", *p);
  if (!ok) {
    warn_env("FUSEBOX_TE_MARCH", m, "is not a -march value (letters, digits, '-', '_', '.'); using native");
    m = "native";
  }
  char cpu[160] = "";
  if (!strcmp(m, "native")) cpu_identity(cpu, sizeof cpu);
  int none = !strcmp(m, "none");
  snprintf(cc_flags, sizeof cc_flags, "%s%s%s-fopenmp -fopenmp-simd -ffp-contract=off -fno-math-errno -fno-trapping-math -lm",
           none ? "" : "-march=", none ? "" : m, none ? "" : " ");
  snprintf(target_line, sizeof target_line, "/* tensorexpr kernel; target: -march=%s%s%s */\n",
           none ? "(compiler default)" : m, *cpu ? ", " : "", cpu);
}

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  (void)minor;
  if (major != FBXP_ABI_MAJOR) {
    *reason = "tensorexpr was built for fusebox ABI 1.x";
    return NULL;
  }
  if (!host || host->struct_size < FBXP_HOST_API_SIZE_V1_0) {
    *reason = "tensorexpr needs the fusebox ABI 1.0 host table";
    return NULL;
  }
  te_host = host;
  fbxk_set_allocator(host->alloc, host->free);
  const char *b = getenv("FUSEBOX_TE_BACKEND");
  backend = TE_BACKEND_C;
  if (b && !strcmp(b, "eval")) backend = TE_BACKEND_EVAL;
  else if (b && !strcmp(b, "cuda")) backend = TE_BACKEND_CUDA;
  else if (b && *b && strcmp(b, "c")) warn_env("FUSEBOX_TE_BACKEND", b, "is neither 'c' nor 'eval' nor 'cuda'; using c");
  read_disable();
  /* dynamic shapes: a 1.1 host, FUSEBOX_TE_DYNAMIC not 0 */
  const char *dy = getenv("FUSEBOX_TE_DYNAMIC");
  int dynamic = 1;
  if (dy && *dy && strcmp(dy, "0") && strcmp(dy, "1")) warn_env("FUSEBOX_TE_DYNAMIC", dy, "is neither 0 nor 1; using 1");
  else if (dy && !strcmp(dy, "0")) dynamic = 0;
  api.flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE;
  if (dynamic && v11()) api.flags |= FBXP_ACCEPTS_SYMBOLIC;
  const char *pm = getenv("FUSEBOX_TE_PARALLEL_MIN");
  par_min = 32768;
  if (pm && *pm) {
    char *end;
    long long v = strtoll(pm, &end, 10);
    if (*end || v < 0) warn_env("FUSEBOX_TE_PARALLEL_MIN", pm, "is not a non-negative integer; using 32768");
    else par_min = v;
  }
  long nt = sysconf(_SC_NPROCESSORS_ONLN);
  const char *t = getenv("FUSEBOX_NUM_THREADS");
  if (t && atoi(t) > 0) nt = atoi(t);
  nthreads = (int)(nt < 1 ? 1 : nt > 64 ? 64 : nt);
  /* libgomp's threads spin ~300000 rounds at each barrier before they sleep;
   * on a machine busier than its cores a spinning thread keeps the core its
   * partner needs (ratio-IoU 2^20 at load 16 on 2 cores: median 72-80 ms
   * spinning, 11-19 ms passive). Unless the user chose, the kernels' team
   * waits passively. libgomp reads this when it is loaded, with the first
   * kernel (a libgomp loaded before keeps its own setting). */
  if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) setenv("OMP_WAIT_POLICY", "passive", 0);
  read_target();
  return &api;
}
