/* The legacy fuser plugin: PyTorch's original fuser (fuser0) rebuilt on the
 * fusebox SDK header alone.
 *
 * compile: the group's kernel IR for the dtypes and ranks of its inputs
 * (kir.c), C source for the CPU and CUDA C for NVRTC (codegen.c); the C is
 * compiled through host->cc_compile, whose in-process and disk caches make
 * a kernel for new sizes of the same dtypes a cache hit: the source does not
 * depend on sizes. Outputs are dynamic (dynamic_outputs = 1).
 *
 * output_specs/run: lay out the operands for the actual inputs (chunk
 * views, broadcasting, collapsed dimensions) and decline (FBXP_DECLINE) when
 * the inputs do not broadcast, a chunk does not divide, or an output would
 * not have the kernel's iteration shape; the host then interprets the group.
 * No host guard: FBXP_SELF_FALLBACK. Runs share nothing mutable:
 * FBXP_RUN_THREAD_SAFE.
 *
 * Environment, read once when the plugin is loaded:
 * FUSEBOX_LEGACY_PARALLEL = omp (default, as PyTorch's fuser did) | pool:
 *   omp: the kernel's loop carries an OpenMP pragma, compiled with -fopenmp
 *   (cc_compile drops it where the compiler lacks OpenMP: the kernel is then
 *   serial, logged once); run calls it once with the whole range, and the
 *   team has nt threads, nt being the host's thread count. pool: no pragma;
 *   run hands ranges to the host's thread pool (host->parallel_for), one
 *   per thread. Both stay on the calling thread below
 *   FUSEBOX_LEGACY_OMP_MIN elements (default 32768). The mode is in the
 *   source, so in the disk cache's key.
 * FUSEBOX_LEGACY_MARCH, FUSEBOX_LEGACY_CPU_ID: the compile target (below).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "lf.h"

const fbxp_host_api *lf_host;
static int64_t par_min = 32768;
static lf_parallel par_mode = LF_PAR_OMP;
/* OpenMP team size: the host's thread count (host->num_threads, ABI 1.1;
 * on a 1.0 host the pool's own rule, repeated here: FUSEBOX_NUM_THREADS
 * when positive, else the online CPUs), at most 64. */
static int32_t omp_threads = 1;
static atomic_int told_serial;

#define CUDA_MARK "\n/* ==== CUDA C for NVRTC (the same kernel; compiled, not run, by this CPU executor) ==== */\n"

/* [begin, end): elements of the flat path, rows of the strided one */
typedef void (*lf_kernel_fn)(int64_t begin, int64_t end, int32_t nd, const int64_t *sizes, char *const *ptrs,
                             const int64_t *strides, int32_t flat, const double *fs, const int64_t *is,
                             int64_t par_min, int32_t nt);

typedef struct lf_kernel {
  lf_kir kir;
  fbxp_shlib *lib;
  lf_kernel_fn fn;
  char *source; /* C, then the CUDA C after CUDA_MARK */
} lf_kernel;

/* ---- compile ------------------------------------------------------------------------- */

/* ---- the compile target ---------------------------------------------------------------
 *
 * Kernels are compiled for the CPU they run on (-march=native: AVX2/AVX-512
 * instead of SSE2's four lanes), which is fair for a JIT but makes a kernel
 * in the on-disk cache (FUSEBOX_CACHE_DIR, keyed by source, compiler and
 * flags) wrong for another CPU reading the same directory. So the first line
 * of the C names the target: the -march value and, for native, the CPU's
 * identity and ISA features (host->cpu_features, ABI 1.1; on a 1.0 host
 * the vendor, family/model/stepping and feature words from cpuid); the cache
 * hashes the source, so two CPUs never share an entry.
 *
 * FUSEBOX_LEGACY_MARCH: the -march value (default native; "none" for the
 * compiler's default target); letters, digits, '-', '_', '.' only.
 * FUSEBOX_LEGACY_CPU_ID: replaces the cpuid identity in that line (where
 * cpuid cannot tell two targets apart; tests use it to stand for another
 * CPU); the same characters only, at most 100.
 *
 * Both values end up in the generated C (and MARCH on the compiler's command
 * line), so target_word() is the one gate: anything else is refused with a
 * warning naming the variable and the default is used. Nothing else from the
 * environment or a graph reaches the source as text: codegen prints value
 * ids, op names from its own table, the fixed kernel name, and constants as
 * %a / LF_NAN / LF_INF. */
static char cc_flags[192] = "-march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -lm";
static char target_line[512];

static void cpu_identity(char *out, size_t cap) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d, max;
  __asm__ volatile("cpuid" : "=a"(max), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
  char vendor[13];
  memcpy(vendor, &b, 4);
  memcpy(vendor + 4, &d, 4);
  memcpy(vendor + 8, &c, 4);
  vendor[12] = 0;
  unsigned sig = 0, f1c = 0, f1d = 0, f7b = 0, f7c = 0, f7d = 0;
  if (max >= 1) __asm__ volatile("cpuid" : "=a"(sig), "=b"(b), "=c"(f1c), "=d"(f1d) : "a"(1), "c"(0));
  if (max >= 7) __asm__ volatile("cpuid" : "=a"(a), "=b"(f7b), "=c"(f7c), "=d"(f7d) : "a"(7), "c"(0));
  /* leaf 1 ecx bit 27 (OSXSAVE) and the APIC id in ebx vary per core/boot: left out */
  snprintf(out, cap, "x86 %s sig %08x features %08x %08x %08x %08x %08x", vendor, sig, f1c & ~(1u << 27), f1d,
           f7b, f7c, f7d);
#else
  snprintf(out, cap, "unknown cpu");
#endif
}

/* The value of environment variable `name` when it is made of [A-Za-z0-9._-]
 * only and at most max bytes; NULL (with a warning naming the variable) for
 * anything else, and NULL when it is unset or empty. */
static const char *target_word(const char *name, size_t max) {
  const char *v = getenv(name);
  if (!v || !*v) return NULL;
  size_t n = 0;
  for (const char *p = v; *p; p++, n++)
    if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') && !strchr("-_.", *p))
      break;
  if (!v[n] && n <= max) return v;
  char msg[256];
  snprintf(msg, sizeof msg, "legacy: ignoring %s: only letters, digits, '-', '_' and '.' (at most %zu) are allowed",
           name, max);
  lf_host->log(FBXP_LOG_WARN, msg);
  return NULL;
}

static void set_target(void) {
  const char *m = target_word("FUSEBOX_LEGACY_MARCH", 40);
  if (!m) m = "native";
  char cpu[400] = "";
  const char *id = target_word("FUSEBOX_LEGACY_CPU_ID", 100);
  if (!strcmp(m, "native")) {
    if (id && *id) snprintf(cpu, sizeof cpu, "%s", id);
    else if (lf_host->struct_size >= FBXP_HOST_API_SIZE_V1_1) snprintf(cpu, sizeof cpu, "%s", lf_host->cpu_features());
    else cpu_identity(cpu, sizeof cpu);
  }
  int none = !strcmp(m, "none");
  snprintf(cc_flags, sizeof cc_flags, "%s%s%s-ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp-simd%s -lm",
           none ? "" : "-march=", none ? "" : m, none ? "" : " ", par_mode == LF_PAR_OMP ? " -fopenmp" : "");
  snprintf(target_line, sizeof target_line, "/* target: -march=%s%s%s; parallel: %s */\n",
           none ? "(compiler default)" : m, *cpu ? ", " : "", cpu, par_mode == LF_PAR_OMP ? "omp" : "pool");
}

static fbxp_status *nomem(void) { return lf_host->status_new(FBXP_ERR_NOMEM, "legacy: out of memory"); }

static void kernel_free(lf_kernel *k) {
  if (!k) return;
  if (k->lib) lf_host->shlib_release(k->lib);
  lf_host->free(k->source);
  lf_host->free(k);
}

static fbxp_status *lf_compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                               fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state;
  lf_kernel *k = lf_host->alloc(sizeof *k);
  if (!k) return nomem();
  memset(k, 0, sizeof *k);
  fbxp_status *st = lf_kir_build(&k->kir, g, in, nin);
  if (st) {
    kernel_free(k);
    return st;
  }
  if (k->kir.noutputs != res->noutputs) {
    kernel_free(k);
    return lf_host->status_new(FBXP_ERR_INVALID, "legacy: output count differs from the host's");
  }
  char *c = lf_codegen(&k->kir, FBXK_C, par_mode, "lf_kernel", target_line);
  char *cuda = lf_codegen(&k->kir, FBXK_CUDA, par_mode, "lf_kernel", NULL);
  fbxk_buf b = {0};
  if (c && cuda) {
    fbxk_puts(&b, c);
    fbxk_puts(&b, CUDA_MARK);
    fbxk_puts(&b, cuda);
  }
  k->source = c && cuda ? fbxk_take(&b) : NULL;
  fbxk_buf_free(&b);
  if (!k->source) {
    lf_host->free(c);
    lf_host->free(cuda);
    kernel_free(k);
    return nomem();
  }
  lf_host->free(cuda);
  /* The compiler sees the C part only. Nothing reads errno or FP exception
   * flags: that lets GCC vectorize libm calls and if-convert the selects. */
  st = lf_host->cc_compile(c, cc_flags, &k->lib);
  lf_host->free(c);
  if (!st) {
    void *sym = lf_host->shlib_symbol(k->lib, "lf_kernel");
    if (!sym) st = lf_host->status_new(FBXP_ERR_COMPILE, "legacy: compiled kernel lacks its symbol");
    else memcpy(&k->fn, &sym, sizeof sym);
  }
  if (!st && par_mode == LF_PAR_OMP) {
    const int *omp = lf_host->shlib_symbol(k->lib, "lf_openmp");
    if ((!omp || !*omp) && !atomic_exchange(&told_serial, 1))
      lf_host->log(FBXP_LOG_WARN, "legacy: the C compiler has no OpenMP (-fopenmp dropped): kernels run serially; "
                                  "FUSEBOX_LEGACY_PARALLEL=pool runs them on the host's thread pool");
  }
  if (st) {
    kernel_free(k);
    return st;
  }
  /* sizes are known per run only */
  for (int o = 0; o < res->noutputs; o++) {
    res->outputs[o].kind = FBXP_ARG_TENSOR;
    res->outputs[o].dtype = k->kir.out_dtype[o];
    res->outputs[o].ndim = k->kir.rank;
    res->outputs[o].device_type = kDLCPU;
  }
  res->dynamic_outputs = 1;
  res->nkernels = 1;
  *out = (fbxp_kernel *)k;
  return NULL;
}

/* ---- run-time layout ------------------------------------------------------------------ */

typedef struct layout {
  int rank;
  int64_t sizes[FBXP_MAX_DIMS];                  /* the iteration shape */
  int64_t osizes[LF_MAX_ARGS][FBXP_MAX_DIMS];    /* operand views over it */
  int64_t ostrides[LF_MAX_ARGS][FBXP_MAX_DIMS];
  int64_t ooffset[LF_MAX_ARGS];                  /* elements */
} layout;

static fbxp_status *decline(const char *why) { return lf_host->status_new(FBXP_DECLINE, why); }

/* input i's size along dim d of a rank-r alignment (1 where it has no such dim) */
static int64_t aligned_size(const DLTensor *t, int d, int r) {
  int di = d - (r - t->ndim);
  return di >= 0 ? t->shape[di] : 1;
}

static int64_t aligned_stride(const DLTensor *t, int d, int r) {
  int di = d - (r - t->ndim);
  if (di < 0) return 0;
  if (t->strides) return t->strides[di];
  int64_t s = 1;
  for (int e = t->ndim - 1; e > di; e--) s *= t->shape[e];
  return s;
}

static fbxp_status *lay_out(const lf_kernel *kk, const fbxp_arg *in, int32_t nin, layout *L) {
  const lf_kir *k = &kk->kir;
  if (nin != k->ninputs) return lf_host->status_new(FBXP_ERR_INVALID, "legacy: wrong number of inputs");
  for (int i = 0; i < nin; i++) {
    if (in[i].kind != k->input_kind[i]) return lf_host->status_new(FBXP_ERR_INVALID, "legacy: input kind differs");
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    const DLTensor *t = in[i].u.tensor;
    if (!t || t->ndim != k->input_ndim[i]) return decline("legacy: input rank differs from the kernel's");
    if (t->device.device_type != kDLCPU) return decline("legacy: input not on the CPU");
  }
  int R = k->rank;
  L->rank = R;
  int64_t S[LF_MAX_CHUNKS];
  for (int c = 0; c < k->nchunks; c++) {
    const lf_chunk *ch = &k->chunks[c];
    S[c] = 1;
    for (int j = 0; j < ch->ncone; j++) {
      int64_t s = aligned_size(in[ch->cone[j]].u.tensor, ch->dim, ch->rank);
      if (s != 1 && S[c] != 1 && s != S[c]) return decline("legacy: the inputs of a chunk do not broadcast");
      if (s != 1) S[c] = s;
    }
    if (S[c] % ch->nchunks) return decline("legacy: a chunk does not divide its dimension");
  }
  for (int d = 0; d < R; d++) L->sizes[d] = 1;
  for (int j = 0; j < k->noperands; j++) {
    const lf_operand *o = &k->operands[j];
    const DLTensor *t = in[o->input].u.tensor;
    L->ooffset[j] = 0;
    for (int d = 0; d < R; d++) {
      L->osizes[j][d] = aligned_size(t, d, R);
      L->ostrides[j][d] = aligned_stride(t, d, R);
    }
    if (o->chunk >= 0) {
      const lf_chunk *ch = &k->chunks[o->chunk];
      int d = ch->dim + (R - ch->rank);
      if (L->osizes[j][d] != 1) {
        int64_t piece = S[o->chunk] / ch->nchunks;
        L->osizes[j][d] = piece;
        L->ooffset[j] = o->piece * piece * L->ostrides[j][d];
      }
    }
    for (int d = 0; d < R; d++) {
      int64_t s = L->osizes[j][d];
      if (s != 1 && L->sizes[d] != 1 && s != L->sizes[d]) return decline("legacy: the inputs do not broadcast");
      if (s != 1) L->sizes[d] = s;
    }
  }
  for (int j = 0; j < k->noperands; j++)
    for (int d = 0; d < R; d++)
      if (L->osizes[j][d] == 1) L->ostrides[j][d] = 0;
  /* every stored value must have the iteration shape: no smaller outputs,
   * and no cat piece smaller than the others along any dim (PyTorch's
   * fuser does not broadcast the pieces of a cat: (2, 4) and (1, 4) cat to
   * (3, 4), which this kernel cannot write; found by fusebox fuzz too:
   * cat([ceil(x[2, 1]), y[1, 1]]) gave [4, 1]) */
  for (int st = 0; st < k->nstores; st++)
    for (int d = 0; d < R; d++) {
      int64_t s = 1;
      for (int j = 0; j < k->noperands; j++)
        if (k->stores[st].cone >> j & 1 && L->osizes[j][d] != 1) s = L->osizes[j][d];
      if (s != L->sizes[d])
        return decline(k->stores[st].npieces ? "legacy: the pieces of an aten::cat differ in shape"
                                              : "legacy: an output is smaller than the kernel's iteration shape");
    }
  return NULL;
}

static void out_spec(const lf_kir *k, const layout *L, int o, fbxp_arg_spec *s) {
  s->kind = FBXP_ARG_TENSOR;
  s->dtype = k->out_dtype[o];
  s->ndim = L->rank;
  for (int d = 0; d < L->rank; d++) s->sizes[d] = L->sizes[d];
  if (k->out_npieces[o]) s->sizes[k->out_cat_dim[o]] *= k->out_npieces[o];
  s->device_type = kDLCPU;
  s->device_id = 0;
}

static fbxp_status *lf_output_specs(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin,
                                    fbxp_arg_spec *outs, int32_t nout) {
  (void)state;
  const lf_kernel *k = (const lf_kernel *)kernel;
  layout L;
  fbxp_status *st = lay_out(k, in, nin, &L);
  if (st) return st;
  if (nout != k->kir.noutputs) return lf_host->status_new(FBXP_ERR_INVALID, "legacy: wrong number of outputs");
  for (int o = 0; o < nout; o++) out_spec(&k->kir, &L, o, &outs[o]);
  return NULL;
}

typedef struct run_ctx {
  lf_kernel_fn fn;
  int32_t nd;
  const int64_t *sizes;
  char *const *ptrs;
  const int64_t *strides;
  int32_t flat;
  const double *fs;
  const int64_t *is;
} run_ctx;

/* pool mode: the kernel's pragma-less loop over one range */
static void run_range(void *ctx, int64_t begin, int64_t end) {
  const run_ctx *c = ctx;
  c->fn(begin, end, c->nd, c->sizes, c->ptrs, c->strides, c->flat, c->fs, c->is, INT64_MAX, 1);
}

static fbxp_status *lf_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin, DLTensor *const *outs,
                           int32_t nout) {
  (void)state;
  const lf_kernel *kk = (const lf_kernel *)kernel;
  const lf_kir *k = &kk->kir;
  layout L;
  fbxp_status *st = lay_out(kk, in, nin, &L);
  if (st) return st;
  if (nout != k->noutputs) return lf_host->status_new(FBXP_ERR_INVALID, "legacy: wrong number of outputs");
  int R = L.rank, nargs = k->noperands + k->nstores;
  char *base[LF_MAX_ARGS];
  int64_t sizes[FBXP_MAX_DIMS], strides[LF_MAX_ARGS][FBXP_MAX_DIMS];
  for (int j = 0; j < k->noperands; j++) {
    const DLTensor *t = in[k->operands[j].input].u.tensor;
    base[j] = (char *)t->data + t->byte_offset + L.ooffset[j] * fbxk_dtype_size(k->operands[j].dtype);
    memcpy(strides[j], L.ostrides[j], sizeof strides[j]);
  }
  for (int s = 0; s < k->nstores; s++) {
    const lf_store *sto = &k->stores[s];
    const DLTensor *t = outs[sto->output];
    fbxp_arg_spec spec;
    out_spec(k, &L, sto->output, &spec);
    if (!t || t->ndim != R || t->dtype.bits != 8 * fbxk_dtype_size(sto->dtype))
      return lf_host->status_new(FBXP_ERR_INVALID, "legacy: output tensor differs from its spec");
    int64_t cs[FBXP_MAX_DIMS], acc = 1;
    for (int d = R - 1; d >= 0; d--) {
      if (t->shape[d] != spec.sizes[d]) return lf_host->status_new(FBXP_ERR_INVALID, "legacy: output shape differs");
      cs[d] = t->strides ? t->strides[d] : acc;
      acc *= spec.sizes[d];
    }
    int64_t off = sto->npieces ? sto->piece * L.sizes[sto->cat_dim] * cs[sto->cat_dim] : 0;
    base[k->noperands + s] = (char *)t->data + t->byte_offset + off * fbxk_dtype_size(sto->dtype);
    for (int d = 0; d < R; d++) strides[k->noperands + s][d] = L.sizes[d] == 1 ? 0 : cs[d];
  }
  /* collapse: drop size-1 dims, merge dims contiguous for every argument */
  int nd = 0;
  int64_t n = 1;
  int64_t cstr[LF_MAX_ARGS * FBXP_MAX_DIMS];
  int64_t tmp[LF_MAX_ARGS][FBXP_MAX_DIMS];
  for (int d = 0; d < R; d++) {
    n *= L.sizes[d];
    if (L.sizes[d] == 1) continue;
    int merge = nd > 0;
    for (int j = 0; j < nargs && merge; j++) merge = tmp[j][nd - 1] == strides[j][d] * L.sizes[d];
    if (merge) {
      sizes[nd - 1] *= L.sizes[d];
      for (int j = 0; j < nargs; j++) tmp[j][nd - 1] = strides[j][d];
    } else {
      sizes[nd] = L.sizes[d];
      for (int j = 0; j < nargs; j++) tmp[j][nd] = strides[j][d];
      nd++;
    }
  }
  if (n == 0) return NULL;
  int flat = nd <= 1;
  for (int j = 0; j < nargs && flat && nd == 1; j++) flat = tmp[j][0] == 1;
  for (int j = 0; j < nargs; j++)
    for (int d = 0; d < nd; d++) cstr[j * nd + d] = tmp[j][d];
  double fs[LF_MAX_ARGS * 2];
  int64_t is[LF_MAX_ARGS * 2];
  for (int i = 0; i < nin; i++) {
    fs[i] = in[i].kind == FBXP_ARG_FLOAT ? in[i].u.f : 0;
    is[i] = in[i].kind == FBXP_ARG_INT ? in[i].u.i : 0;
  }
  int64_t units = flat ? n : n / (nd > 0 ? sizes[nd - 1] : 1);
  /* omp: the pragma's `if` applies par_min, its team has omp_threads */
  if (par_mode == LF_PAR_OMP) {
    kk->fn(0, units, nd, sizes, base, cstr, flat, fs, is, units > 1 ? par_min : INT64_MAX, omp_threads);
    return NULL;
  }
  /* pool: ranges on the host's pool (FUSEBOX_NUM_THREADS), the threads the
   * interpreter's kernels and bench's memcpy use */
  run_ctx rc = {kk->fn, nd, sizes, base, cstr, flat, fs, is};
  /* grain 1: one range per pool thread (the pool's own grain would make
   * n / grain ranges, one for n just above par_min) */
  if (n >= par_min && units > 1) lf_host->parallel_for(units, 1, run_range, &rc);
  else run_range(&rc, 0, units);
  return NULL;
}

static void lf_release(void *state, fbxp_kernel *k) {
  (void)state;
  kernel_free((lf_kernel *)k);
}

static const char *lf_kernel_source(void *state, fbxp_kernel *k) {
  (void)state;
  return ((const lf_kernel *)k)->source;
}

static const fbxp_plugin_api api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "legacy",
    .version = "1.0.0",
    .vendor = "fusebox",
    .description = "PyTorch's original fuser: pointwise groups (with chunk and cat), generated C and CUDA C",
    .flags = FBXP_SELF_FALLBACK | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .compat_key = "legacy-1",
    .partition = lf_partition,
    .compile = lf_compile,
    .output_specs = lf_output_specs,
    .run = lf_run,
    .release = lf_release,
    .kernel_source = lf_kernel_source,
};

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  if (major != FBXP_ABI_MAJOR) {
    *reason = "legacy was built for fusebox ABI 1.x";
    return NULL;
  }
  if (!host || host->struct_size < FBXP_HOST_API_SIZE_V1_0) {
    *reason = "legacy needs the fusebox ABI 1.0 host table";
    return NULL;
  }
  lf_host = host;
  fbxk_set_allocator(host->alloc, host->free); /* kit strings are host->alloc'd */
  const char *p = getenv("FUSEBOX_LEGACY_PARALLEL");
  par_mode = LF_PAR_OMP;
  if (p && !strcmp(p, "pool")) par_mode = LF_PAR_POOL;
  else if (p && *p && strcmp(p, "omp")) {
    char msg[256];
    snprintf(msg, sizeof msg, "legacy: FUSEBOX_LEGACY_PARALLEL='%.64s' is neither 'omp' nor 'pool'; using omp", p);
    host->log(FBXP_LOG_WARN, msg);
  }
  long nt;
  if (minor >= 1 && host->struct_size >= FBXP_HOST_API_SIZE_V1_1) {
    nt = host->num_threads();
  } else {
    nt = sysconf(_SC_NPROCESSORS_ONLN);
    const char *t = getenv("FUSEBOX_NUM_THREADS");
    if (t && atoi(t) > 0) nt = atoi(t);
  }
  omp_threads = (int32_t)(nt < 1 ? 1 : nt > 64 ? 64 : nt);
  set_target();
  const char *e = getenv("FUSEBOX_LEGACY_OMP_MIN");
  if (e && *e) {
    char *end;
    long long v = strtoll(e, &end, 10);
    if (!*end && v >= 0) par_min = v;
  }
  return &api;
}
