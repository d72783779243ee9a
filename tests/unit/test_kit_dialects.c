/* Every kit template (kit_oplist.h) for every compute dtype class, printed
 * by the kit in all three dialects and run on edge values (NaN, +-Inf,
 * -0.0, subnormals, the largest finite values, integer extremes, division
 * by zero):
 *
 *   C        compiled with the system compiler (the host's cc_compile, the
 *            flags legacy's kernels use) and run: its results must equal
 *            fbxk_op_eval bit for bit (the scalar evaluator is generated from
 *            the same templates over the compiled prelude);
 *   CUDA C   compiled to PTX with NVRTC (the host's nvrtc service; skipped
 *            with a message without libnvrtc);
 *   OpenCL C built and run on the OpenCL platform (PoCL; skipped with a
 *            message without one): equal to fbxk_op_eval for integer and
 *            bool results; floats within 4 ulps (the head contracts a * b + c
 *            into FMAs, rounded once where the evaluator rounds twice; a
 *            product that overflows unfused only, counted), 16 where the
 *            template calls the platform's math library (sin, pow, ...:
 *            OpenCL allows 4-16 ulps), the count and worst case printed.
 *
 * And fbxk_op_eval against the reference interpreter (core's kernels through
 * the public API, fuser none) for EVERY row, variant and compute class: a
 * one-node graph per row with the variant's constants (gelu's approximate,
 * clamp's None bounds, alpha, rounding_mode, pow's constant exponent,
 * to.dtype's target), tensor operands over the edge values per element and
 * Scalar operands/parameters (and masked_fill.Tensor's 0-d value) as graph
 * inputs, one run per edge value: same result dtype, values equal
 * (integers, bool) or within 8 ulps of the result dtype (floats; the two
 * math libraries differ by a few ulps), NaN where the reference has NaN,
 * infinities with their sign; the few stated divergences (known_divergence)
 * are counted and printed. A row neither compared nor in no_reference fails. */
#include <check.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fusebox.h>
#include <fusebox/kit/kit.h>

#include "exec/executor.h"
#include "host/host.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ops/list_pointwise.h"
#include "ops/optable.h"

/* compute dtype classes tested: each row's template for this cdtype */
static const int classes[] = {FBXK_F32, FBXK_F16, FBXK_BF16, FBXK_F64, FBXK_I64, FBXK_I32, FBXK_U8, FBXK_BOOL};
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

static const double fvals[] = {0.0, -0.0, 1, -1, 0.5, -2.5, 3, 7.25, -0.75, 100, 1e-40, -3e-39, 3.4e38, -3.4e38,
                               1e30, INFINITY, -INFINITY, NAN};
static const double dvals[] = {0.0, -0.0, 1, -1, 0.5, -2.5, 3, 7.25, -0.75, 100, 1e-310, -3e-309, 1.7e308, -1.7e308,
                               1e300, INFINITY, -INFINITY, NAN};
static const int64_t ivals[] = {0, 1, -1, 2, -7, 5, 3, 100, INT64_MAX, INT64_MIN, INT32_MAX, -128};
#define NF ((int)(sizeof fvals / sizeof fvals[0]))
#define NI ((int)(sizeof ivals / sizeof ivals[0]))
#define MAXN (NF * NF)
#define NA 4 /* argument slots per element */

typedef struct inputs {
  int n;
  float af[MAXN * NA];
  double ad[MAXN * NA];
  int64_t ai[MAXN * NA];
  int64_t as[MAXN * NA]; /* selectors (where, masked_fill): bools independent of the other arguments */
} inputs;

static int is_fclass(int cd) { return cd == FBXK_F32 || cd == FBXK_F16 || cd == FBXK_BF16; }


static void fill(inputs *in, int cd) {
  int L = fbxk_is_float(cd) ? NF : cd == FBXK_BOOL ? 2 : NI;
  in->n = L * L;
  for (int e = 0; e < in->n; e++)
    for (int j = 0; j < NA; j++) {
      int k = j == 0 ? e % L : j == 1 ? (e / L) % L : (e * 7 + j * 5) % L;
      fbxk_scalar x = {0, 0};
      if (fbxk_is_float(cd)) {
        x.f = cd == FBXK_F64 ? dvals[k] : fvals[k];
        x = fbxk_scalar_cast(FBXK_F64, cd, x);
      } else {
        x.i = cd == FBXK_BOOL ? k : ivals[k];
        x = fbxk_scalar_cast(FBXK_I64, cd, x);
      }
      in->af[e * NA + j] = (float)x.f;
      in->ad[e * NA + j] = x.f;
      in->ai[e * NA + j] = x.i;
      in->as[e * NA + j] = (e / 3 + j) % 2;
    }
}

static int rd_of(int op, int cd) { return fbxk_op_is_bool_valued(op) ? FBXK_BOOL : cd; }

static const char *class_name(int cd) { return fbxk_dtype_name(cd); }

/* one kernel per (op, class): out = cast(rd, cast(raw, template(args))) */
static void print_kernel(fbxk_printer *p, int op, int cd) {
  static const fbxk_param ps[] = {{"af", FBXK_F32, FBXK_PARAM_IN},  {"ad", FBXK_F64, FBXK_PARAM_IN},
                                  {"ai", FBXK_I64, FBXK_PARAM_IN},  {"as", FBXK_I64, FBXK_PARAM_IN},
                                  {"of", FBXK_F32, FBXK_PARAM_OUT},
                                  {"od", FBXK_F64, FBXK_PARAM_OUT}, {"oi", FBXK_I64, FBXK_PARAM_OUT},
                                  {"n", FBXK_I64, FBXK_PARAM_VALUE}};
  char name[96];
  snprintf(name, sizeof name, "k_%s_%s", fbxk_op_id(op), class_name(cd));
  fbxk_p_kernel_begin(p, name, ps, 8);
  if (p->dialect == FBXK_C) {
    fbxk_p_for(p, NULL, "e", "0", "n", "1");
  } else {
    fbxk_p_line(p, "const int64_t e = %s;", fbxk_p_global_id(p, 0));
    fbxk_p_open(p, "if (e < n)");
  }
  int nargs = fbxk_op_noperands(op) + fbxk_op_nparams(op), sel = fbxk_op_selector(op);
  char names[NA][16];
  const char *args[NA];
  for (int j = 0; j < nargs; j++) {
    snprintf(names[j], sizeof names[j], "a%d", j);
    args[j] = names[j];
    const char *src = j == sel ? "as" : !fbxk_is_float(cd) ? "ai" : cd == FBXK_F64 ? "ad" : "af";
    fbxk_p_line(p, "const %s a%d = %s[e * %d + %d];", j == sel ? "int64_t" : fbxk_compute_type(cd, p->dialect), j, src,
                NA, j);
  }
  fbxk_buf e = {0}, c1 = {0}, c2 = {0};
  fbxk_op_print(&e, op, cd, p->dialect, args);
  char *expr = fbxk_take(&e);
  int rawdt = fbxk_op_is_bool_valued(op) ? FBXK_BOOL : cd, rd = rd_of(op, cd);
  fbxk_print_cast(&c1, rawdt, expr ? expr : "0", p->dialect);
  char *x1 = fbxk_take(&c1);
  if (rawdt != rd) fbxk_print_cast(&c2, rd, x1 ? x1 : "0", p->dialect);
  char *x2 = rawdt != rd ? fbxk_take(&c2) : NULL;
  const char *out = is_fclass(rd) ? "of" : rd == FBXK_F64 ? "od" : "oi";
  fbxk_p_line(p, "%s[e] = %s;", out, x2 ? x2 : x1 ? x1 : "0");
  fbxk_free(expr);
  fbxk_free(x1);
  fbxk_free(x2);
  fbxk_p_close(p);
  fbxk_p_close(p);
}

static char *print_all(fbxk_dialect d, int *nkernels) {
  fbxk_printer p;
  fbxk_p_init(&p, d);
  fbxk_p_puts(&p, fbxk_prelude(d));
  *nkernels = 0;
  for (int op = 0; op < FBXK_NOPS; op++)
    for (int c = 0; c < NCLASSES; c++)
      if (fbxk_op_template(op, classes[c])) {
        print_kernel(&p, op, classes[c]);
        ++*nkernels;
      }
  return fbxk_p_take(&p);
}

static int same_bits(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

static double eps_of(int dt) {
  return dt == FBXK_F64 ? DBL_EPSILON : dt == FBXK_F16 ? 0x1p-10 : dt == FBXK_BF16 ? 0x1p-7 : FLT_EPSILON;
}

/* within `ulps` of the result dtype (relative), NaN with NaN, infinities and zeros exact */
static int close_to(double got, double want, int dt, double ulps) {
  if (same_bits(got, want)) return 1;
  if (isnan(got) || isnan(want) || isinf(got) || isinf(want)) return 0;
  double tiny = dt == FBXK_F64 ? DBL_MIN : FLT_MIN;
  if (fabs(got - want) < tiny) return 1; /* subnormal results (flush, or 1 / (1 + inf)) */
  return fabs(got - want) <= ulps * eps_of(dt) * fabs(want);
}

static void expect(const inputs *in, int op, int cd, int e, fbxk_scalar *want) {
  fbxk_scalar a[NA];
  int sel = fbxk_op_selector(op);
  for (int j = 0; j < NA; j++) {
    a[j].f = fbxk_is_float(cd) ? (cd == FBXK_F64 ? in->ad[e * NA + j] : in->af[e * NA + j]) : 0;
    a[j].i = j == sel ? in->as[e * NA + j] : in->ai[e * NA + j];
    if (j == sel) a[j].f = 0;
  }
  ck_assert_int_eq(fbxk_op_eval(op, cd, rd_of(op, cd), a, want), 0);
}

/* ---- C ---------------------------------------------------------------------------------------- */

typedef void (*kernel_fn)(const float *, const double *, const int64_t *, const int64_t *, float *, double *, int64_t *,
                          int64_t);

START_TEST(c_kernels_equal_eval) {
  int nk = 0;
  char *src = print_all(FBXK_C, &nk);
  ck_assert_ptr_nonnull(src);
  fbxp_shlib *lib = NULL;
  fbxp_status *st = fbx_svc_cc_compile(src, "-march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -lm", &lib);
  ck_assert_msg(!st, "%s", st ? st->msg : "");
  static inputs in;
  static float of[MAXN];
  static double od[MAXN];
  static int64_t oi[MAXN];
  int checked = 0;
  for (int c = 0; c < NCLASSES; c++) {
    int cd = classes[c];
    fill(&in, cd);
    for (int op = 0; op < FBXK_NOPS; op++) {
      if (!fbxk_op_template(op, cd)) continue;
      char name[96];
      snprintf(name, sizeof name, "k_%s_%s", fbxk_op_id(op), class_name(cd));
      kernel_fn k = (kernel_fn)fbx_svc_shlib_symbol(lib, name);
      ck_assert_msg(k != NULL, "%s not in the C", name);
      k(in.af, in.ad, in.ai, in.as, of, od, oi, in.n);
      int rd = rd_of(op, cd);
      for (int e = 0; e < in.n; e++) {
        fbxk_scalar w;
        expect(&in, op, cd, e, &w);
        if (fbxk_is_float(rd)) {
          double got = rd == FBXK_F64 ? od[e] : of[e];
          ck_assert_msg(same_bits(got, w.f), "%s element %d (%a, %a, %a): C %a, eval %a", name, e, in.ad[e * NA],
                        in.ad[e * NA + 1], in.ad[e * NA + 2], got, w.f);
        } else {
          ck_assert_msg(oi[e] == w.i, "%s element %d (%lld, %lld): C %lld, eval %lld", name, e, (long long)in.ai[e * NA],
                        (long long)in.ai[e * NA + 1], (long long)oi[e], (long long)w.i);
        }
        checked++;
      }
    }
  }
  printf("kit C: %d kernels, %d elements equal to fbxk_op_eval\n", nk, checked);
  fbx_svc_shlib_release(lib);
  fbxk_free(src);
}
END_TEST

/* ---- CUDA C ----------------------------------------------------------------------------------- */

START_TEST(cuda_kernels_compile_with_nvrtc) {
  int nk = 0;
  char *src = print_all(FBXK_CUDA, &nk);
  ck_assert_ptr_nonnull(src);
  char *ptx = NULL, *log = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile(src, "kit.cu", NULL, &ptx, &log);
  if (st && st->code == FBXP_ERR_UNSUPPORTED) {
    printf("cuda_kernels_compile_with_nvrtc: skipped: %s\n", st->msg);
  } else {
    ck_assert_msg(!st, "nvrtc: %s\n%.4000s", st ? st->msg : "", log ? log : "");
    int entries = 0;
    for (const char *p = ptx; (p = strstr(p, ".entry k_")); p++) entries++;
    ck_assert_int_eq(entries, nk);
    printf("kit CUDA C: %d kernels compiled to PTX\n", nk);
  }
  if (st) fbx_host_drop_status(st);
  fbx_free(ptx);
  fbx_free(log);
  fbxk_free(src);
}
END_TEST

/* ---- OpenCL C --------------------------------------------------------------------------------- */

typedef struct _cl_mem *cl_mem;
typedef struct _cl_kernel *cl_kernel;
static struct {
  void *lib;
  cl_mem (*create_buffer)(void *, uint64_t, size_t, void *, int32_t *);
  cl_kernel (*create_kernel)(void *, const char *, int32_t *);
  int32_t (*set_arg)(cl_kernel, uint32_t, size_t, const void *);
  int32_t (*enqueue)(void *, cl_kernel, uint32_t, const size_t *, const size_t *, const size_t *, uint32_t,
                     const void *, void *);
  int32_t (*read)(void *, cl_mem, uint32_t, size_t, size_t, void *, uint32_t, const void *, void *);
  int32_t (*release_mem)(cl_mem);
  int32_t (*release_kernel)(cl_kernel);
  int32_t (*release_program)(void *);
} CL;

static int cl_syms(void) {
  CL.lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!CL.lib) return 0;
  *(void **)&CL.create_buffer = dlsym(CL.lib, "clCreateBuffer");
  *(void **)&CL.create_kernel = dlsym(CL.lib, "clCreateKernel");
  *(void **)&CL.set_arg = dlsym(CL.lib, "clSetKernelArg");
  *(void **)&CL.enqueue = dlsym(CL.lib, "clEnqueueNDRangeKernel");
  *(void **)&CL.read = dlsym(CL.lib, "clEnqueueReadBuffer");
  *(void **)&CL.release_mem = dlsym(CL.lib, "clReleaseMemObject");
  *(void **)&CL.release_kernel = dlsym(CL.lib, "clReleaseKernel");
  *(void **)&CL.release_program = dlsym(CL.lib, "clReleaseProgram");
  return CL.create_buffer && CL.create_kernel && CL.set_arg && CL.enqueue && CL.read && CL.release_mem &&
         CL.release_kernel && CL.release_program;
}

/* does the template call the platform's math library (beyond the prelude)? */
static int uses_libm(int op, int cd) {
  static const char *const fns[] = {"sqrt", "exp2", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                                    "sinh", "cosh", "erfc", "pow", "hypot", "fmod", "floordiv", "rem"};
  const char *t = fbxk_op_template(op, cd);
  for (size_t i = 0; t && i < sizeof fns / sizeof fns[0]; i++)
    if (strstr(t, fns[i])) return 1;
  /* float64 computes exp, log, tanh, erf with the platform's functions */
  return cd == FBXK_F64 && t && strchr(t, '$') && strstr(t, "$v");
}

/* Elements where the kit and the reference differ for a stated reason (each
 * counted and printed; anything else fails):
 *   0 contraction: the kit's a + b * c (add/sub with alpha, addcmul,
 *     addcdiv, lerp) overflows to +-Inf or NaN where PyTorch's vectorized
 *     fmadd and the reference's FMA clone keep the product exact;
 *   1 softplus: the kit's log1p(exp(x * beta)) overflows to +Inf in float, as
 *     PyTorch's float kernel does, where the reference's stable
 *     max(x, 0) + log1p(exp(-|x|)) stays finite;
 *   2 to.dtype from a float outside the integral target's range (NaN, +-Inf,
 *     too large): undefined in C, platform-defined in PyTorch. */
enum { KD_CONTRACT, KD_SOFTPLUS, KD_TO_RANGE, KD_N };
static const char *const kd_name[KD_N] = {"FMA contraction", "softplus overflow", "to.dtype out of range"};

static int known_divergence(int op, int cd, int rd, const fbxk_scalar *a, double want, double got) {
  switch (op) {
    case FBXK_OP_ADD_T_ALPHA: case FBXK_OP_ADD_S_ALPHA: case FBXK_OP_SUB_T_ALPHA: case FBXK_OP_SUB_S_ALPHA:
    case FBXK_OP_ADDCMUL: case FBXK_OP_ADDCDIV: case FBXK_OP_LERP_T: case FBXK_OP_LERP_S:
      return fbxk_is_float(rd) && ((isnan(want) && isinf(got)) || (isinf(want) && isfinite(got))) ? KD_CONTRACT : -1;
    case FBXK_OP_SOFTPLUS:
      return cd != FBXK_F64 && isinf(want) && want > 0 && a[0].f * a[1].f > 88.7 && isfinite(got) ? KD_SOFTPLUS : -1;
    case FBXK_OP_TO_DTYPE: {
      if (!fbxk_is_float(cd) || fbxk_is_float(rd)) return -1;
      double x = a[0].f, lo = rd == FBXK_I64 ? -0x1p63 : rd == FBXK_I32 ? -0x1p31 : rd == FBXK_U8 ? 0 : -1;
      double hi = rd == FBXK_I64 ? 0x1p63 : rd == FBXK_I32 ? 0x1p31 : rd == FBXK_U8 ? 256 : 2;
      return rd != FBXK_BOOL && !(x > lo - 1 && x < hi) ? KD_TO_RANGE : -1;
    }
    default: return -1;
  }
}

START_TEST(opencl_kernels_run) {
  int nk = 0;
  char *src = print_all(FBXK_OPENCL, &nk);
  ck_assert_ptr_nonnull(src);
  void *prog = NULL, *ctx = NULL, *queue = NULL;
  char *log = NULL;
  fbxp_status *st = fbx_svc_opencl_build(src, "-cl-std=CL1.2", &prog, &ctx, NULL, &queue, &log);
  if (st && st->code == FBXP_ERR_UNSUPPORTED) {
    printf("opencl_kernels_run: skipped: %s\n", st->msg);
    fbx_host_drop_status(st);
    fbxk_free(src);
    fbx_free(log);
    return;
  }
  ck_assert_msg(!st, "%s", st ? st->msg : "");
  fbx_free(log);
  ck_assert(cl_syms());
  static inputs in;
  static float of[MAXN];
  static double od[MAXN];
  static int64_t oi[MAXN];
  int checked = 0, inexact = 0, contracted = 0;
  double worst = 0;
  char worst_at[160] = "";
  const uint64_t RO_COPY = (1u << 2) | (1u << 5), WO = 1u << 1;
  for (int c = 0; c < NCLASSES; c++) {
    int cd = classes[c];
    fill(&in, cd);
    int32_t err;
    cl_mem b[7];
    b[0] = CL.create_buffer(ctx, RO_COPY, sizeof in.af, in.af, &err);
    b[1] = CL.create_buffer(ctx, RO_COPY, sizeof in.ad, in.ad, &err);
    b[2] = CL.create_buffer(ctx, RO_COPY, sizeof in.ai, in.ai, &err);
    b[3] = CL.create_buffer(ctx, RO_COPY, sizeof in.as, in.as, &err);
    b[4] = CL.create_buffer(ctx, WO, sizeof of, NULL, &err);
    b[5] = CL.create_buffer(ctx, WO, sizeof od, NULL, &err);
    b[6] = CL.create_buffer(ctx, WO, sizeof oi, NULL, &err);
    for (int i = 0; i < 7; i++) ck_assert(b[i]);
    for (int op = 0; op < FBXK_NOPS; op++) {
      if (!fbxk_op_template(op, cd)) continue;
      char name[96];
      snprintf(name, sizeof name, "k_%s_%s", fbxk_op_id(op), class_name(cd));
      cl_kernel k = CL.create_kernel(prog, name, &err);
      ck_assert_msg(k != NULL, "clCreateKernel %s: %d", name, err);
      int64_t n = in.n;
      for (int i = 0; i < 7; i++) ck_assert_int_eq(CL.set_arg(k, (uint32_t)i, sizeof b[i], &b[i]), 0);
      ck_assert_int_eq(CL.set_arg(k, 7, sizeof n, &n), 0);
      size_t global = (size_t)((n + 63) / 64 * 64);
      ck_assert_int_eq(CL.enqueue(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), 0);
      int rd = rd_of(op, cd);
      if (is_fclass(rd)) ck_assert_int_eq(CL.read(queue, b[4], 1, 0, sizeof of, of, 0, NULL, NULL), 0);
      else if (rd == FBXK_F64) ck_assert_int_eq(CL.read(queue, b[5], 1, 0, sizeof od, od, 0, NULL, NULL), 0);
      else ck_assert_int_eq(CL.read(queue, b[6], 1, 0, sizeof oi, oi, 0, NULL, NULL), 0);
      int libm = uses_libm(op, cd);
      for (int e = 0; e < in.n; e++) {
        fbxk_scalar w;
        expect(&in, op, cd, e, &w);
        checked++;
        if (!fbxk_is_float(rd)) {
          ck_assert_msg(oi[e] == w.i, "%s element %d: OpenCL %lld, eval %lld", name, e, (long long)oi[e],
                        (long long)w.i);
          continue;
        }
        double got = rd == FBXK_F64 ? od[e] : of[e];
        if (same_bits(got, w.f)) continue;
        /* subnormals: the platform may flush them (OpenCL allows it for float) */
        double tiny = rd == FBXK_F64 ? DBL_MIN : FLT_MIN;
        int sub_in = 0;
        for (int j = 0; j < NA; j++) {
          double x = cd == FBXK_F64 ? in.ad[e * NA + j] : in.af[e * NA + j];
          if (x != 0 && fabs(x) < tiny) sub_in = 1;
        }
        if (sub_in || (!isnan(got) && !isnan(w.f) && fabs(got - w.f) < tiny)) continue;
        /* FMA contraction (the head's FP_CONTRACT ON) rounds a * b + c once where the evaluator rounds twice */
        fbxk_scalar a[NA];
        for (int j = 0; j < NA; j++) a[j].f = cd == FBXK_F64 ? in.ad[e * NA + j] : in.af[e * NA + j];
        if (known_divergence(op, cd, rd, a, w.f, got) == KD_CONTRACT) {
          contracted++;
          continue;
        }
        ck_assert_msg(close_to(got, w.f, rd, libm ? 16 : 4), "%s element %d (%a, %a, %a): OpenCL %a, eval %a", name, e,
                      in.ad[e * NA], in.ad[e * NA + 1], in.ad[e * NA + 2], got, w.f);
        inexact++;
        double rel = fabs(got - w.f) / (eps_of(rd) * fabs(w.f));
        if (rel > worst) {
          worst = rel;
          snprintf(worst_at, sizeof worst_at, "%s at (%a, %a): %a vs %a", name, in.ad[e * NA], in.ad[e * NA + 1], got,
                   w.f);
        }
      }
      CL.release_kernel(k);
    }
    for (int i = 0; i < 7; i++) CL.release_mem(b[i]);
  }
  CL.release_program(prog);
  printf("kit OpenCL: %d kernels, %d elements; %d differ from fbxk_op_eval by rounding (worst %.1f ulps: %s), %d by a "
         "contracted product's overflow\n",
         nk, checked, inexact, worst, worst_at, contracted);
  fbxk_free(src);
}
END_TEST

/* The prelude's 16-lane exps (fbxk_v16expf, fbxk_v16expf_np: nvfuser_like's
 * CPU row loops; on an AVX-512 device the vrndscaleps/vscalefps form) run
 * on the OpenCL platform over a sweep of [-110, 95] and the edge values:
 * NaN stays NaN, -inf and past -104 give 0, past 89 and +inf give inf
 * (fbxk_v16expf), and every other value is within 1 ulp of the kit's
 * scalar fbxk_vexpf as the host compiles it (the same reduction and
 * polynomial; the device contracts products into FMAs, and the AVX-512
 * round may pick the other integer at a near-tie). */
static const char V16_EXP_SRC[] =
    "__kernel void k_v16exp(__global const float *x, __global float *y, __global float *z) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float16 v = vload16(i, x);\n"
    "  vstore16(fbxk_v16expf(v), i, y);\n"
    "  vstore16(fbxk_v16expf_np(v <= 0.0f ? v : -v), i, z);\n"
    "}\n";

static double ulps_apart(float a, float b) {
  if (a == b) return 0;
  double u = fmax(fabs((double)a), fabs((double)b));
  int e;
  frexp(u, &e);
  double ulp = ldexp(1.0, (e - 24 < -149 ? -149 : e - 24));
  return fabs((double)a - (double)b) / ulp;
}

START_TEST(opencl_v16_exp) {
  fbxk_buf sb = {0};
  fbxk_puts(&sb, fbxk_prelude(FBXK_OPENCL));
  fbxk_puts(&sb, V16_EXP_SRC);
  char *src = fbxk_take(&sb);
  ck_assert_ptr_nonnull(src);
  void *prog = NULL, *ctx = NULL, *queue = NULL;
  char *log = NULL;
  fbxp_status *st = fbx_svc_opencl_build(src, "-cl-std=CL1.2", &prog, &ctx, NULL, &queue, &log);
  fbxk_free(src);
  if (st && st->code == FBXP_ERR_UNSUPPORTED) {
    printf("opencl_v16_exp: skipped: %s\n", st->msg);
    fbx_host_drop_status(st);
    fbx_free(log);
    return;
  }
  ck_assert_msg(!st, "%s", st ? st->msg : "");
  fbx_free(log);
  ck_assert(cl_syms());
  enum { N = 16 * 4096 };
  static float x[N], y[N], z[N];
  const float edges[] = {NAN, -INFINITY, INFINITY, 0.0f, -0.0f, -104.0f, -104.5f, -103.97f, -103.2f, -87.4f,
                         -87.3f, 88.72f, 88.73f, 89.0f, 89.5f, 1e-30f, -1e-30f, 0.34657359f, -0.34657359f};
  int ne = (int)(sizeof edges / sizeof edges[0]);
  for (int i = 0; i < N; i++) x[i] = i < ne ? edges[i] : -110.0f + 205.0f * (float)(i - ne) / (float)(N - ne);
  int32_t err;
  const uint64_t RO_COPY = (1u << 2) | (1u << 5), WO = 1u << 1;
  cl_mem bx = CL.create_buffer(ctx, RO_COPY, sizeof x, x, &err);
  cl_mem by = CL.create_buffer(ctx, WO, sizeof y, NULL, &err);
  cl_mem bz = CL.create_buffer(ctx, WO, sizeof z, NULL, &err);
  ck_assert(bx && by && bz);
  cl_kernel k = CL.create_kernel(prog, "k_v16exp", &err);
  ck_assert_msg(k != NULL, "clCreateKernel: %d", err);
  ck_assert_int_eq(CL.set_arg(k, 0, sizeof bx, &bx), 0);
  ck_assert_int_eq(CL.set_arg(k, 1, sizeof by, &by), 0);
  ck_assert_int_eq(CL.set_arg(k, 2, sizeof bz, &bz), 0);
  size_t global = N / 16;
  ck_assert_int_eq(CL.enqueue(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), 0);
  ck_assert_int_eq(CL.read(queue, by, 1, 0, sizeof y, y, 0, NULL, NULL), 0);
  ck_assert_int_eq(CL.read(queue, bz, 1, 0, sizeof z, z, 0, NULL, NULL), 0);
  int off = 0;
  for (int i = 0; i < N; i++) {
    float xn = x[i] <= 0.0f ? x[i] : -x[i];
    float wy = fbxk_vexpf(x[i]), wz = fbxk_vexpf(xn);
    if (isnan(x[i])) {
      ck_assert_msg(isnan(y[i]) && isnan(z[i]), "exp(NaN): %g %g", y[i], z[i]);
      continue;
    }
    if (x[i] < -104.0f) ck_assert_msg(y[i] == 0 && z[i] == 0, "exp(%a): %a %a, want 0", x[i], y[i], z[i]);
    if (x[i] > 89.0f) ck_assert_msg(isinf(y[i]) && y[i] > 0, "exp(%a): %a, want inf", x[i], y[i]);
    ck_assert_msg(ulps_apart(y[i], wy) <= 1, "fbxk_v16expf(%a) = %a, fbxk_vexpf %a", x[i], y[i], wy);
    ck_assert_msg(ulps_apart(z[i], wz) <= 1, "fbxk_v16expf_np(%a) = %a, fbxk_vexpf %a", xn, z[i], wz);
    off += y[i] != wy || z[i] != wz;
  }
  printf("kit OpenCL 16-lane exp: %d values, %d one ulp from fbxk_vexpf\n", N, off);
  CL.release_kernel(k);
  CL.release_mem(bx);
  CL.release_mem(by);
  CL.release_mem(bz);
  CL.release_program(prog);
}
END_TEST

/* ---- the reference interpreter ---------------------------------------------------------------- */

/* the core schema of an overload; NULL if none */
static const char *core_schema(const char *qual) {
#define CORE_SCHEMA_(id, schema, ...) schema,
  static const char *const core[] = {FBX_OPS_POINTWISE(CORE_SCHEMA_)};
#undef CORE_SCHEMA_
  size_t n = strlen(qual);
  for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
    if (!strncmp(core[i], qual, n) && core[i][n] == '(') return core[i];
  return NULL;
}

/* the type (its first word) of schema argument idx ("Tensor", "Tensor?",
 * "Scalar", ...) into buf; 0 if the schema has no such argument */
static int schema_arg_type(const char *schema, int idx, char *buf, size_t cap) {
  const char *p = strchr(schema, '(') + 1;
  for (int i = 0;;) {
    while (*p == ' ') p++;
    if (*p == ')' || !*p) return 0;
    const char *a = p;
    for (int depth = 0, quote = 0; *p; p++) {
      if (quote) quote = *p != '"';
      else if (*p == '"') quote = 1;
      else if (*p == '[' || *p == '(') depth++;
      else if ((*p == ']' || *p == ')') && depth) depth--;
      else if ((*p == ',' || *p == ')') && !depth) break;
    }
    if (!(*a == '*' && (a[1] == ',' || a[1] == ')'))) {
      if (i++ == idx) {
        size_t n = strcspn(a, " ,)");
        snprintf(buf, cap, "%.*s", (int)n, a);
        return 1;
      }
    }
    if (*p == ',') p++;
  }
}

/* each row's operand and parameter node inputs (kit_oplist.h) */
#define ROW_IO_(id, name, operands, params, ...) {operands, params},
static const struct {
  const char *operands, *params;
} row_io[] = {FBXK_OPS(ROW_IO_)};
#undef ROW_IO_

/* Rows eval_matches_reference does not compare with the reference
 * interpreter, and why (a row with neither a comparison nor a reason fails
 * the test; a reason for a row that is compared is stale and fails too). */
static const struct {
  int op;
  const char *why;
} no_reference[] = {
    {-1, NULL},
};

/* A node input that is neither an operand nor a parameter of the row (or an
 * operand the variant fixes): the constant that selects the row's variant,
 * as IR (type and value), and for a fixed operand its value. 0: none. */
static int variant_const(int op, int v, int idx, const char **type, char *val, size_t cap, double *fixed) {
  *fixed = NAN;
  const char *s = NULL, *t = NULL;
  switch (op) {
    case FBXK_OP_GELU: if (idx == 1) t = "str", s = "\"none\""; break;
    case FBXK_OP_GELU_TANH: if (idx == 1) t = "str", s = "\"tanh\""; break;
    case FBXK_OP_CLAMP_LO: case FBXK_OP_CLAMP_T_LO: if (idx == 2) t = "NoneType"; break;
    case FBXK_OP_CLAMP_HI: case FBXK_OP_CLAMP_T_HI: if (idx == 1) t = "NoneType"; break;
    case FBXK_OP_ADD_T: case FBXK_OP_ADD_S: case FBXK_OP_SUB_T: case FBXK_OP_SUB_S: case FBXK_OP_RSUB_T:
    case FBXK_OP_RSUB_S: if (idx == 2) t = "int", s = "1"; break;
    case FBXK_OP_DIV_TRUNC: case FBXK_OP_DIV_S_TRUNC: if (idx == 2) t = "str", s = "\"trunc\""; break;
    case FBXK_OP_DIV_FLOOR: case FBXK_OP_DIV_S_FLOOR: if (idx == 2) t = "str", s = "\"floor\""; break;
    case FBXK_OP_DIV_TRUE: case FBXK_OP_DIV_S_TRUE: if (idx == 2) t = "NoneType"; break;
    case FBXK_OP_POW_2: case FBXK_OP_POW_3: case FBXK_OP_POW_HALF: case FBXK_OP_POW_M1: case FBXK_OP_POW_M2:
    case FBXK_OP_POW_MHALF:
      if (idx == 1) {
        t = "float";
        *fixed = op == FBXK_OP_POW_2 ? 2 : op == FBXK_OP_POW_3 ? 3 : op == FBXK_OP_POW_HALF ? 0.5
               : op == FBXK_OP_POW_M1 ? -1 : op == FBXK_OP_POW_M2 ? -2 : -0.5;
        snprintf(val, cap, "%.1f", *fixed);
        *type = t;
        return 1;
      }
      break;
    case FBXK_OP_TO_DTYPE:
      if (idx == 1) {
        *type = "int";
        snprintf(val, cap, "%d", classes[v]);
        return 1;
      }
      if (idx == 2 || idx == 3) t = "bool", s = "0";
      if (idx == 4) t = "NoneType";
      break;
    default: break;
  }
  if (!t) return 0;
  *type = t;
  snprintf(val, cap, "%s", s ? s : "");
  return 1;
}

/* the k-th edge value of class cd, in its compute representation */
static fbxk_scalar class_value(int cd, int k) {
  fbxk_scalar x = {0, 0};
  if (fbxk_is_float(cd)) {
    x.f = cd == FBXK_F64 ? dvals[k] : fvals[k];
    return fbxk_scalar_cast(FBXK_F64, cd, x);
  }
  x.i = cd == FBXK_BOOL ? k : ivals[k];
  return fbxk_scalar_cast(FBXK_I64, cd, x);
}

static int class_len(int cd) { return fbxk_is_float(cd) ? NF : cd == FBXK_BOOL ? 2 : NI; }

static fbx_dtype fbx_of(int dt) { return (fbx_dtype)dt; }

static double read_elem(const fbx_tensor *t, int64_t e, int dt) {
  const char *d = (const char *)t->data;
  switch (dt) {
    case FBXK_F32: return ((const float *)d)[e];
    case FBXK_F64: return ((const double *)d)[e];
    case FBXK_F16: return fbxk_h2f(((const uint16_t *)d)[e]);
    case FBXK_BF16: return fbxk_b2f(((const uint16_t *)d)[e]);
    default: return 0;
  }
}

static int64_t read_int(const fbx_tensor *t, int64_t e, int dt) {
  const char *d = (const char *)t->data;
  switch (dt) {
    case FBXK_I64: return ((const int64_t *)d)[e];
    case FBXK_I32: return ((const int32_t *)d)[e];
    case FBXK_U8: case FBXK_BOOL: return ((const uint8_t *)d)[e];
    default: return 0;
  }
}

static void write_elem(fbx_tensor *t, int64_t e, int dt, double f, int64_t i) {
  char *d = (char *)t->data;
  switch (dt) {
    case FBXK_F32: ((float *)d)[e] = (float)f; break;
    case FBXK_F64: ((double *)d)[e] = f; break;
    case FBXK_F16: ((uint16_t *)d)[e] = fbxk_f2h((float)f); break;
    case FBXK_BF16: ((uint16_t *)d)[e] = fbxk_f2b((float)f); break;
    case FBXK_I64: ((int64_t *)d)[e] = i; break;
    case FBXK_I32: ((int32_t *)d)[e] = (int32_t)i; break;
    case FBXK_U8: case FBXK_BOOL: ((uint8_t *)d)[e] = (uint8_t)i; break;
    default: break;
  }
}

/* how each argument of a row reaches the reference: a tensor of the class
 * (per element), the bool selector tensor, a scalar graph input or a 0-d
 * tensor (one value per run), or a constant the variant fixes */
enum { SL_TENSOR, SL_SELECTOR, SL_SCALAR, SL_ZERODIM, SL_FIXED };

static int ir_cat(char *ir, size_t cap, int o, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int ir_cat(char *ir, size_t cap, int o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(ir + o, cap - (size_t)o, fmt, ap);
  va_end(ap);
  ck_assert(k >= 0 && (size_t)(o + k) < cap);
  return o + k;
}

/* a one-node graph of row op (variant v) for compute class cd; kind[] and
 * slot_in[] describe its nargs arguments; the graph's inputs are the
 * non-fixed arguments in node-input order */
static void row_graph(int op, int v, int cd, int nargs, const int *slot_in, const int *kind, char *ir, size_t cap) {
  int nin = 0;
  for (int j = 0; j < nargs; j++)
    if (slot_in[j] + 1 > nin) nin = slot_in[j] + 1;
  const char *ct;
  char cv[32];
  double fx;
  for (int idx = 0; idx < 8; idx++)
    if (variant_const(op, v, idx, &ct, cv, sizeof cv, &fx) && idx + 1 > nin) nin = idx + 1;
  const char *sty = fbxk_is_float(cd) ? "float" : cd == FBXK_BOOL ? "bool" : "int";
  int o = ir_cat(ir, cap, 0, "graph(");
  int first = 1;
  for (int idx = 0; idx < nin; idx++)
    for (int j = 0; j < nargs; j++)
      if (slot_in[j] == idx && kind[j] != SL_FIXED) {
        o = ir_cat(ir, cap, o, "%s%%i%d : %s", first ? "" : ", ", idx, kind[j] == SL_SCALAR ? sty : "Tensor");
        first = 0;
      }
  o = ir_cat(ir, cap, o, "):\n");
  for (int idx = 0; idx < nin; idx++) {
    if (!variant_const(op, v, idx, &ct, cv, sizeof cv, &fx)) {
      int is_slot = 0;
      for (int j = 0; j < nargs; j++) is_slot |= slot_in[j] == idx;
      ck_assert_msg(is_slot, "%s: node input %d is neither an argument nor a variant constant", fbxk_op_id(op), idx);
      continue;
    }
    if (!strcmp(ct, "NoneType")) o = ir_cat(ir, cap, o, "  %%i%d : NoneType = prim::Constant()\n", idx);
    else o = ir_cat(ir, cap, o, "  %%i%d : %s = prim::Constant[value=%s]()\n", idx, ct, cv);
  }
  size_t len = strcspn(fbxk_op_name(op), ".");
  o = ir_cat(ir, cap, o, "  %%y : Tensor = %.*s(", (int)len, fbxk_op_name(op));
  for (int idx = 0; idx < nin; idx++) o = ir_cat(ir, cap, o, "%s%%i%d", idx ? ", " : "", idx);
  ir_cat(ir, cap, o, ")\n  return (%%y)\n");
}

START_TEST(eval_matches_reference) {
  ck_assert(!fbx_op_table_init());
  static inputs in;
  static long compared[FBXK_NOPS];
  int rows = 0, runs = 0, bad = 0, kd_count[KD_N] = {0};
  long elems = 0;
  for (int op = 0; op < FBXK_NOPS; op++) {
    const char *schema = core_schema(fbxk_op_name(op));
    if (!schema) continue;
    int nops = fbxk_op_noperands(op), nargs = nops + fbxk_op_nparams(op), sel = fbxk_op_selector(op);
    ck_assert_int_le(nargs, NA);
    int slot_in[NA], kind[NA];
    double fixed[NA];
    for (int j = 0; j < nargs; j++)
      slot_in[j] = j < nops ? row_io[op].operands[j] - '0' : row_io[op].params[j - nops] - '0';
    int nvariants = op == FBXK_OP_TO_DTYPE ? NCLASSES : 1; /* to.dtype: every target class */
    for (int v = 0; v < nvariants; v++)
      for (int c = 0; c < NCLASSES; c++) {
        int cd = classes[c];
        if (!fbxk_op_template(op, cd)) continue;
        int has_run = 0;
        for (int j = 0; j < nargs; j++) {
          char ty[32], cv[32];
          const char *ct;
          ck_assert_msg(schema_arg_type(schema, slot_in[j], ty, sizeof ty), "%s: no argument %d", schema, slot_in[j]);
          if (variant_const(op, v, slot_in[j], &ct, cv, sizeof cv, &fixed[j])) kind[j] = SL_FIXED;
          else if (j == sel) kind[j] = SL_SELECTOR;
          else if (strncmp(ty, "Tensor", 6)) kind[j] = SL_SCALAR;
          else kind[j] = op == FBXK_OP_MASKED_FILL_T && j == 2 ? SL_ZERODIM : SL_TENSOR; /* its value is 0-d */
          has_run |= kind[j] == SL_SCALAR || kind[j] == SL_ZERODIM;
        }
        fbxk_typed ty[NA];
        int sdt = fbxk_is_float(cd) ? FBXK_F64 : cd == FBXK_BOOL ? FBXK_BOOL : FBXK_I64;
        for (int j = 0; j < nops; j++)
          ty[j] = kind[j] == SL_TENSOR     ? (fbxk_typed){cd, FBXK_PRIO_TENSOR}
                  : kind[j] == SL_SELECTOR ? (fbxk_typed){FBXK_BOOL, FBXK_PRIO_TENSOR}
                  : kind[j] == SL_ZERODIM  ? (fbxk_typed){cd, FBXK_PRIO_ZERODIM}
                  : kind[j] == SL_FIXED    ? (fbxk_typed){FBXK_F64, FBXK_PRIO_SCALAR}
                                           : (fbxk_typed){sdt, FBXK_PRIO_SCALAR};
        int kcd, krd;
        if (op == FBXK_OP_TO_DTYPE) kcd = cd, krd = classes[v];
        else if (fbxk_op_dtypes(op, ty, nops, &kcd, &krd) || kcd != cd) continue; /* a class the rule never computes in */
        char ir[1024];
        row_graph(op, v, cd, nargs, slot_in, kind, ir, sizeof ir);
        fbx_graph *g = NULL;
        fbx_status *st = fbx_graph_parse(&g, ir, strlen(ir), "kit.ir");
        ck_assert_msg(!st, "%s: %s", ir, st ? fbx_status_message(st) : "");
        fbx_executor *ex = NULL;
        fbx_executor_opts opts = {.struct_size = sizeof opts, .fuser = "none"};
        ck_assert(!fbx_executor_create(&ex, g, &opts));
        fill(&in, cd);
        int64_t n = in.n;
        int L = class_len(cd), R = has_run ? L : 1, shown = 0;
        for (int r = 0; r < R; r++) {
          fbx_ivalue args[NA];
          fbxk_scalar per_run[NA];
          int na = 0;
          for (int idx = 0; idx < 8; idx++)
            for (int j = 0, k = 0; j < nargs; j++) {
              if (kind[j] == SL_SCALAR || kind[j] == SL_ZERODIM) per_run[j] = class_value(cd, (r + 5 * k++) % L);
              if (slot_in[j] != idx || kind[j] == SL_FIXED) continue;
              fbx_tensor *t = NULL;
              int dt = kind[j] == SL_SELECTOR ? FBXK_BOOL : cd;
              if (kind[j] == SL_SCALAR) {
                args[na++] = fbxk_is_float(cd) ? fbx_iv_float(per_run[j].f)
                             : cd == FBXK_BOOL ? fbx_iv_bool(per_run[j].i != 0)
                                               : fbx_iv_int(per_run[j].i);
                continue;
              }
              if (kind[j] == SL_ZERODIM) {
                ck_assert(!fbx_tensor_empty(&t, fbx_of(dt), 0, NULL));
                write_elem(t, 0, dt, per_run[j].f, per_run[j].i);
              } else {
                ck_assert(!fbx_tensor_empty(&t, fbx_of(dt), 1, &n));
                for (int64_t e = 0; e < n; e++)
                  write_elem(t, e, dt, cd == FBXK_F64 ? in.ad[e * NA + j] : in.af[e * NA + j],
                             kind[j] == SL_SELECTOR ? in.as[e * NA + j] : in.ai[e * NA + j]);
              }
              args[na++] = fbx_iv_tensor(t);
            }
          fbx_ivalue out = {0};
          st = fbx_executor_run_values(ex, args, na, &out, 1, 0);
          ck_assert_msg(!st, "%s %s run %d: %s\n%s", fbxk_op_id(op), class_name(cd), r,
                        st ? fbx_status_message(st) : "", ir);
          runs++;
          ck_assert_msg((int)out.u.t->dtype == krd, "%s %s: reference dtype %d, kit %d", fbxk_op_id(op), class_name(cd),
                        (int)out.u.t->dtype, krd);
          for (int64_t e = 0; e < n; e++) {
            fbxk_scalar a[NA], w;
            for (int j = 0; j < nargs; j++) {
              int at = (int)e * NA + j;
              if (kind[j] == SL_SCALAR || kind[j] == SL_ZERODIM) a[j] = per_run[j];
              else if (kind[j] == SL_FIXED) a[j] = (fbxk_scalar){fixed[j], 0};
              else if (kind[j] == SL_SELECTOR) a[j] = (fbxk_scalar){0, in.as[at]};
              else a[j] = (fbxk_scalar){fbxk_is_float(cd) ? (cd == FBXK_F64 ? in.ad[at] : in.af[at]) : 0, in.ai[at]};
            }
            ck_assert_int_eq(fbxk_op_eval(op, kcd, krd, a, &w), 0);
            elems++;
            compared[op]++;
            int ok;
            char got_s[64];
            if (fbxk_is_float(krd)) {
              double got = read_elem(out.u.t, e, krd);
              ok = close_to(w.f, got, krd, 8);
              snprintf(got_s, sizeof got_s, "eval %a, reference %a", w.f, got);
            } else {
              int64_t got = read_int(out.u.t, e, krd);
              ok = w.i == got;
              snprintf(got_s, sizeof got_s, "eval %lld, reference %lld", (long long)w.i, (long long)got);
            }
            if (!ok) {
              int kd = known_divergence(op, cd, krd, a, fbxk_is_float(krd) ? w.f : (double)w.i,
                                        fbxk_is_float(krd) ? read_elem(out.u.t, e, krd) : (double)read_int(out.u.t, e, krd));
              if (kd >= 0) {
                kd_count[kd]++;
                continue;
              }
              bad++;
              if (shown++ < 4)
                printf("MISMATCH %s %s->%s element %lld (%a, %a, %a, %a | %lld, %lld): %s\n", fbxk_op_id(op),
                       class_name(cd), class_name(krd), (long long)e, a[0].f, nargs > 1 ? a[1].f : 0,
                       nargs > 2 ? a[2].f : 0, nargs > 3 ? a[3].f : 0, (long long)a[0].i,
                       nargs > 1 ? (long long)a[1].i : 0, got_s);
            }
          }
          for (int j = 0; j < na; j++) fbx_iv_release(&args[j]);
          fbx_iv_release(&out);
        }
        fbx_executor_destroy(ex);
        fbx_graph_destroy(g);
      }
  }
  int reasons = 0, missing = 0;
  for (int op = 0; op < FBXK_NOPS; op++) {
    int why = 0;
    for (size_t r = 0; r < sizeof no_reference / sizeof no_reference[0]; r++) why |= no_reference[r].op == op;
    ck_assert_msg(!(why && compared[op]), "%s is compared with the reference now: drop its reason", fbxk_op_id(op));
    if (compared[op]) rows++;
    else if (why) reasons++;
    else {
      printf("kit row %s (%s) is not compared with the reference interpreter and has no reason\n", fbxk_op_id(op),
             fbxk_op_name(op));
      missing++;
    }
  }
  printf("kit eval vs reference: %d of %d rows (every variant, every class), %ld elements in %d runs; %d rows with a "
         "reason; known divergences:", rows, FBXK_NOPS, elems, runs, reasons);
  for (int k = 0; k < KD_N; k++) printf(" %s %d%s", kd_name[k], kd_count[k], k + 1 < KD_N ? "," : "\n");
  fflush(stdout);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(missing, 0);
  ck_assert_int_eq(rows + reasons, FBXK_NOPS);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kit_dialects");
  TCase *tc = tcase_create("kit_dialects");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, c_kernels_equal_eval);
  tcase_add_test(tc, cuda_kernels_compile_with_nvrtc);
  tcase_add_test(tc, opencl_kernels_run);
  tcase_add_test(tc, opencl_v16_exp);
  tcase_add_test(tc, eval_matches_reference);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
