/* ops/vmath.h: every function against the double-precision libm result
 * rounded to float (the error is measured in float ulps against the
 * double value, so a correctly rounded function scores <= 0.5).
 *
 * Inputs: (a) bit patterns evenly spaced over all finite floats, both
 * signs (2^21 per function by default; FBX_VMATH_SWEEP=24 sweeps 2^24),
 * (b) a dense sweep of the range where the function is interesting
 * (2^19 consecutive floats), (c) special values: +-0, +-inf, NaN,
 * subnormals, FLT_MIN/FLT_MAX and the overflow/underflow thresholds.
 * atan2 and pow take random pairs plus every pair of special values.
 * Special values must match exactly in kind (NaN, infinity, sign of a zero
 * result). The maximum ulp error of each function is printed and must be
 * within the bound vmath.h documents. Rounding functions and fmod are
 * compared bit for bit. */
/* The batch loops compile as the kernels do (core/ops/k_unary.c): the
 * same settings (ops/kopt.h), and the same clones (FBX_PW_CLONES), in
 * which GCC may contract a * b + c into an FMA; every function is checked
 * both in the clone this machine dispatches to and in the baseline build. */
#include "ops/kopt.h"
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/pointwise.h"
#include "ops/vmath.h"
#include "testutil.h"

#define BATCH 4096

static float u2f(uint32_t u) { return fbx_vm_u2f(u); }
static uint32_t f2u(float x) { return fbx_vm_f2u(x); }

static int sweep_log2(void) {
  const char *e = getenv("FBX_VMATH_SWEEP");
  int n = e ? atoi(e) : 21;
  return n < 10 ? 10 : (n > 30 ? 30 : n);
}

/* error of y against the exact value ref, in ulps of the float format at
 * ref; INFINITY for a wrong kind (NaN, infinity, sign of zero) */
static double ulp_err(float y, double ref) {
  if (ref != ref) return y != y ? 0.0 : INFINITY;
  float rf = (float)ref;
  if (isinf(rf)) return y == rf ? 0.0 : INFINITY;
  if (y != y || isinf(y)) return INFINITY;
  if (ref == 0.0) return (y == 0.0f && !signbit(y) == !signbit(ref)) ? 0.0 : INFINITY;
  int e;
  frexp(fabs(ref), &e);
  double u = ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
  return fabs((double)y - ref) / u;
}

/* ---- unary functions ---------------------------------------------------------------- */

typedef void (*batch_fn)(float *o, const float *x, int n);
typedef double (*ref_fn)(double);
typedef int (*rare_fn)(float);

/* b_NAME: the clones (the one for this CPU runs); b0_NAME: the baseline */
#define BATCH_FN(name, expr)                                                             \
  FBX_PW_CLONES static void b_##name(float *restrict o, const float *restrict x, int n) { \
    for (int i = 0; i < n; i++) o[i] = expr(x[i]);                                      \
  }                                                                                      \
  static void b0_##name(float *restrict o, const float *restrict x, int n) {             \
    for (int i = 0; i < n; i++) o[i] = expr(x[i]);                                      \
  }

/* Which clone FBX_PW_CLONES dispatches to here (for the report). */
static const char *clone_name(int baseline) {
  if (baseline) return "baseline";
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(FBX_PW_NO_CLONES) && \
    !defined(FBX_PW_NO_FMA)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
#endif
  return "dispatched";
}
BATCH_FN(exp, fbx_vm_expf)
BATCH_FN(exp2, fbx_vm_exp2f)
BATCH_FN(expm1, fbx_vm_expm1f)
BATCH_FN(log, fbx_vm_logf)
BATCH_FN(log2, fbx_vm_log2f)
BATCH_FN(log10, fbx_vm_log10f)
BATCH_FN(log1p, fbx_vm_log1pf)
BATCH_FN(sin, fbx_vm_sinf)
BATCH_FN(cos, fbx_vm_cosf)
BATCH_FN(tan, fbx_vm_tanf)
BATCH_FN(sinh, fbx_vm_sinhf)
BATCH_FN(cosh, fbx_vm_coshf)
BATCH_FN(tanh, fbx_vm_tanhf)
BATCH_FN(sigmoid, fbx_vm_sigmoidf)
BATCH_FN(softplus, fbx_vm_softplusf)
BATCH_FN(erf, fbx_vm_erff)
/* erfc runs as the kernels run it, a block at a time */
FBX_PW_CLONES static void b_erfc(float *restrict o, const float *restrict x, int n) {
  for (int i = 0; i < n; i += FBX_VM_ERFC_BLOCK)
    fbx_vm_erfcf_block(o + i, x + i, n - i < FBX_VM_ERFC_BLOCK ? n - i : FBX_VM_ERFC_BLOCK);
}
static void b0_erfc(float *restrict o, const float *restrict x, int n) {
  for (int i = 0; i < n; i += FBX_VM_ERFC_BLOCK)
    fbx_vm_erfcf_block(o + i, x + i, n - i < FBX_VM_ERFC_BLOCK ? n - i : FBX_VM_ERFC_BLOCK);
}
BATCH_FN(atan, fbx_vm_atanf)
BATCH_FN(asin, fbx_vm_asinf)
BATCH_FN(acos, fbx_vm_acosf)
/* lgamma too, each block through the loop its range picks; lgamma_el:
 * every element through the general form */
FBX_PW_CLONES static void b_lgamma(float *restrict o, const float *restrict x, int n) {
  for (int i = 0; i < n; i += FBX_PW_BLOCK) (void)fbx_vm_lgammaf_block(o + i, x + i, n - i < FBX_PW_BLOCK ? n - i : FBX_PW_BLOCK);
}
static void b0_lgamma(float *restrict o, const float *restrict x, int n) {
  for (int i = 0; i < n; i += FBX_PW_BLOCK) (void)fbx_vm_lgammaf_block(o + i, x + i, n - i < FBX_PW_BLOCK ? n - i : FBX_PW_BLOCK);
}
BATCH_FN(lgamma_el, fbx_vm_lgammaf)

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_softplus(double x) { return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

typedef struct ufn {
  const char *name;
  batch_fn vm, vm0; /* clones, baseline */
  ref_fn ref;
  double bound;
  float lo, hi; /* dense sweep: 2^19 consecutive floats from lo, and from hi downwards */
  rare_fn rare;  /* elements the kernels recompute with libm (not checked) */
} ufn;

static const ufn UFNS[] = {
    {"expf", b_exp, b0_exp, exp, 2, -1.0f, 88.0f, NULL},
    {"exp2f", b_exp2, b0_exp2, exp2, 2, -0.5f, -140.0f, NULL},
    {"expm1f", b_expm1, b0_expm1, expm1, 2, -0.01f, 0.5f, NULL},
    {"logf", b_log, b0_log, log, 2, 0.999f, 1e-40f, NULL},
    {"log2f", b_log2, b0_log2, log2, 2, 0.999f, 0.70710677f, NULL},
    {"log10f", b_log10, b0_log10, log10, 2, 0.999f, 1.41421f, NULL},
    {"log1pf", b_log1p, b0_log1p, log1p, 2, -0.01f, -0.9999f, NULL},
    {"sinf", b_sin, b0_sin, sin, 4, 3.14159f, 32000.0f, fbx_vm_trig_rare},
    {"cosf", b_cos, b0_cos, cos, 4, 1.5707f, 32000.0f, fbx_vm_trig_rare},
    {"tanf", b_tan, b0_tan, tan, 4, 1.5707f, 1e3f, fbx_vm_trig_rare},
    {"sinhf", b_sinh, b0_sinh, sinh, 4, 0.99f, 89.4f, NULL},
    {"coshf", b_cosh, b0_cosh, cosh, 4, 0.99f, 89.4f, NULL},
    {"tanhf", b_tanh, b0_tanh, tanh, 4, 0.0002f, 0.6f, NULL},
    {"sigmoidf", b_sigmoid, b0_sigmoid, ref_sigmoid, 3, -0.01f, -100.0f, NULL},
    {"softplusf", b_softplus, b0_softplus, ref_softplus, 3, -0.01f, 15.0f, NULL},
    {"erff", b_erf, b0_erf, erf, 2, 0.49f, 3.5f, NULL},
    {"erfcf", b_erfc, b0_erfc, erfc, 5, 0.49f, 10.0f, NULL},
    {"atanf", b_atan, b0_atan, atan, 4, 0.4f, 2.4f, NULL},
    {"asinf", b_asin, b0_asin, asin, 2, 0.99f, 1e-3f, NULL},
    {"acosf", b_acos, b0_acos, acos, 2, -0.99f, 0.99f, NULL},
    /* dense across both zeros (and the join at 1): up from 0.99, down from
     * 2.01; across the join at 3 and the pole at -1; across the pole at -2
     * and 2^23, where x - 1/2 turns inexact */
    {"lgammaf", b_lgamma, b0_lgamma, lgamma, 3, 0.99f, 2.01f, fbx_vm_lgamma_rare},
    {"lgammaf", b_lgamma, b0_lgamma, lgamma, 3, 2.99f, -1.01f, fbx_vm_lgamma_rare},
    {"lgammaf", b_lgamma, b0_lgamma, lgamma, 3, -1.99f, 8.5e6f, fbx_vm_lgamma_rare},
};
#define NUFNS ((int)(sizeof UFNS / sizeof UFNS[0]))

static const float SPECIALS[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f, -0x1.fffffcp-127f,
    FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, 0x1p-24f, -0x1p-24f, 0x1p-12f,
    88.72283935546875f, 88.7228317f, 88.72284f, 89.0f, 89.4159851f, 89.41599f, -87.33654f, -103.972076f,
    -103.97209f, -104.0f, -110.0f, 127.99999f, 128.0f, -126.0f, -149.0f, -150.0f, -151.0f, -17.0f, -18.0f,
    -25.0f, 9.0f, 9.1f, 10.0f, 10.05f, 10.1f, 26.55f, 0x1p15f, -0x1p15f, 0x1.000002p15f, 0x1p26f, -0x1p26f, 0x1.000002p26f, 1e30f, -1e30f,
    3.14159274f, 1.57079637f, -1.57079637f, 0.99999994f, 1.00000012f, -0.99999994f, 0.41421357f, 2.4142137f,
    1e-3f, -7.25f, 100.0f, 0.75f};
#define NSPECIALS ((int)(sizeof SPECIALS / sizeof SPECIALS[0]))

typedef struct stats {
  double max_err;
  float worst_x;
  int64_t n, bad_kind;
} stats;

static void check_batch(const ufn *f, int baseline, const float *x, int n, stats *st) {
  static float y[BATCH];
  (baseline ? f->vm0 : f->vm)(y, x, n);
  for (int i = 0; i < n; i++) {
    if (f->rare && f->rare(x[i])) continue;
    double e = ulp_err(y[i], f->ref((double)x[i]));
    st->n++;
    if (e > st->max_err || e != e) {
      st->max_err = e;
      st->worst_x = x[i];
    }
    if (isinf(e)) {
      if (st->bad_kind++ < 5)
        fprintf(stderr, "  %s(%a = %.9g) = %.9g, want %.9g\n", f->name, (double)x[i], (double)x[i], (double)y[i],
                f->ref((double)x[i]));
    }
  }
}

static void run_ufn(const ufn *f, int baseline, stats *st) {
  static float x[BATCH];
  memset(st, 0, sizeof *st);
  int k = 0;
  /* (a) spaced bit patterns */
  int lg = sweep_log2();
  uint64_t count = (uint64_t)1 << lg, stride = ((uint64_t)1 << 32) >> lg;
  for (uint64_t i = 0; i < count; i++) {
    uint32_t b = (uint32_t)(i * stride + (stride > 1 ? 0x9e37u % stride : 0));
    float v = u2f(b);
    if (!isfinite(v)) continue;
    x[k++] = v;
    if (k == BATCH) check_batch(f, baseline, x, k, st), k = 0;
  }
  /* (b) dense: consecutive floats up from lo and down from hi */
  for (int s = 0; s < 2; s++) {
    uint32_t b = f2u(s ? f->hi : f->lo);
    for (int i = 0; i < (1 << 18); i++) {
      x[k++] = u2f(s ? b - (uint32_t)i : b + (uint32_t)i);
      if (k == BATCH) check_batch(f, baseline, x, k, st), k = 0;
    }
  }
  /* (c) special values */
  for (int i = 0; i < NSPECIALS; i++) {
    x[k++] = SPECIALS[i];
    if (k == BATCH) check_batch(f, baseline, x, k, st), k = 0;
  }
  if (k) check_batch(f, baseline, x, k, st);
}

START_TEST(unary_ulps) {
  const ufn *f = &UFNS[_i];
  for (int baseline = 0; baseline < 2; baseline++) {
    stats st;
    clock_t t0 = clock();
    run_ufn(f, baseline, &st);
    printf("vmath %-9s max %.3f ulp at %.9g (bound %g, %lld values, %s, %.2f s)\n", f->name, st.max_err,
           (double)st.worst_x, f->bound, (long long)st.n, clone_name(baseline), (double)(clock() - t0) / CLOCKS_PER_SEC);
    fflush(stdout);
    ck_assert_msg(st.bad_kind == 0, "%s (%s): %lld results of the wrong kind (NaN/inf/signed zero)", f->name,
                  clone_name(baseline), (long long)st.bad_kind);
    ck_assert_msg(st.max_err <= f->bound, "%s (%s): max error %.3f ulp at %a exceeds %g", f->name,
                  clone_name(baseline), st.max_err, (double)st.worst_x, f->bound);
  }
}
END_TEST

/* ---- rounding: bit-exact --------------------------------------------------------------- */

static void rounding_check(const float *x, int n) {
  for (int i = 0; i < n; i++) {
    float v = x[i];
/* (ck_assert costs a system call per use: plain ifs in the loops) */
#define SAME(a, b) (f2u(a) == f2u(b) || ((a) != (a) && (b) != (b)))
#define SAMED(a, b) (fbx_vm_d2u(a) == fbx_vm_d2u(b) || ((a) != (a) && (b) != (b)))
    if (!SAME(fbx_vm_truncf(v), truncf(v))) ck_abort_msg("truncf(%a)", (double)v);
    if (!SAME(fbx_vm_floorf(v), floorf(v))) ck_abort_msg("floorf(%a)", (double)v);
    if (!SAME(fbx_vm_ceilf(v), ceilf(v))) ck_abort_msg("ceilf(%a)", (double)v);
    if (!SAME(fbx_vm_rintf(v), nearbyintf(v))) ck_abort_msg("rintf(%a)", (double)v);
    double d = (double)v * 1.0000001;
    if (!SAMED(fbx_vm_truncd(d), trunc(d))) ck_abort_msg("truncd(%a)", d);
    if (!SAMED(fbx_vm_floord(d), floor(d))) ck_abort_msg("floord(%a)", d);
    if (!SAMED(fbx_vm_ceild(d), ceil(d))) ck_abort_msg("ceild(%a)", d);
    if (!SAMED(fbx_vm_rintd(d), nearbyint(d))) ck_abort_msg("rintd(%a)", d);
  }
}

START_TEST(rounding_exact) {
  static float x[BATCH];
  int k = 0, lg = sweep_log2();
  uint64_t count = (uint64_t)1 << lg, stride = ((uint64_t)1 << 32) >> lg;
  for (uint64_t i = 0; i < count; i++) {
    x[k++] = u2f((uint32_t)(i * stride + 77u % stride));
    if (k == BATCH) rounding_check(x, k), k = 0;
  }
  /* around every half-integer up to 64 and near 2^23 */
  for (int i = -128; i <= 128; i++) {
    float h = (float)i * 0.5f;
    float near[] = {h, nextafterf(h, INFINITY), nextafterf(h, -INFINITY), 0x1p23f + (float)i, -0x1p23f - (float)i,
                    0x1p22f + (float)i + 0.5f, -0x1p22f - (float)i - 0.5f};
    for (int j = 0; j < (int)(sizeof near / sizeof near[0]); j++) {
      x[k++] = near[j];
      if (k == BATCH) rounding_check(x, k), k = 0;
    }
  }
  for (int i = 0; i < NSPECIALS; i++) {
    x[k++] = SPECIALS[i];
    if (k == BATCH) rounding_check(x, k), k = 0;
  }
  if (k) rounding_check(x, k);
}
END_TEST

/* ---- binary: atan2 (ulps), fmod (exact) --------------------------------------------------- */


typedef void (*batch2_fn)(float *o, const float *a, const float *b, int n);
#define BATCH2_FN(name, expr)                                                                       \
  FBX_PW_CLONES static void b_##name(float *restrict o, const float *restrict a, const float *restrict b, \
                                     int n) {                                                       \
    for (int i = 0; i < n; i++) o[i] = expr(a[i], b[i]);                                           \
  }                                                                                                 \
  static void b0_##name(float *restrict o, const float *restrict a, const float *restrict b, int n) { \
    for (int i = 0; i < n; i++) o[i] = expr(a[i], b[i]);                                           \
  }
BATCH2_FN(atan2, fbx_vm_atan2f)

typedef struct pairs {
  float y[BATCH], x[BATCH], r[BATCH];
  int n;
  double max_err;
  float wy, wx;
  int64_t count, bad;
} pairs;

static void atan2_flush(pairs *p, batch2_fn fn) {
  fn(p->r, p->y, p->x, p->n);
  for (int i = 0; i < p->n; i++) {
    float y = p->y[i], x = p->x[i], r = p->r[i];
    double e = ulp_err(r, atan2((double)y, (double)x));
    p->count++;
    if (isinf(e) && p->bad++ < 5)
      fprintf(stderr, "  atan2f(%.9g, %.9g) = %.9g, want %.9g\n", (double)y, (double)x, (double)r,
              atan2((double)y, (double)x));
    if (e > p->max_err) p->max_err = e, p->wy = y, p->wx = x;
  }
  p->n = 0;
}

START_TEST(atan2_ulps) {
  static pairs p;
  for (int baseline = 0; baseline < 2; baseline++) {
    batch2_fn fn = baseline ? b0_atan2 : b_atan2;
    uint32_t seed = 12345;
    memset(&p, 0, sizeof p);
    int64_t total = (int64_t)1 << (sweep_log2() - 1);
    for (int64_t i = 0; i < total + NSPECIALS * NSPECIALS; i++) {
      float y, x;
      if (i < total) {
        y = u2f(tu_xs32(&seed));
        /* half the pairs with nearby exponents, where the quotient is moderate */
        x = (i & 1) ? u2f(tu_xs32(&seed))
                    : y * u2f(0x3f000000u + (tu_xs32(&seed) & 0x00ffffffu)) * ((i & 2) ? -1.0f : 1.0f);
      } else {
        int64_t j = i - total;
        y = SPECIALS[j / NSPECIALS], x = SPECIALS[j % NSPECIALS];
      }
      if (i < total && (!isfinite(x) || !isfinite(y))) continue;
      p.y[p.n] = y, p.x[p.n] = x;
      if (++p.n == BATCH) atan2_flush(&p, fn);
    }
    if (p.n) atan2_flush(&p, fn);
    printf("vmath %-9s max %.3f ulp at (%.9g, %.9g) (bound 4, %lld pairs, %s)\n", "atan2f", p.max_err, (double)p.wy,
           (double)p.wx, (long long)p.count, clone_name(baseline));
    ck_assert_int_eq(p.bad, 0);
    ck_assert_msg(p.max_err <= 4.0, "atan2f (%s): max error %.3f ulp", clone_name(baseline), p.max_err);
  }
}
END_TEST

START_TEST(fmod_exact) {
  uint32_t seed = 777;
  int64_t n = 0, fast = 0, total = (int64_t)1 << (sweep_log2() - 1);
  for (int64_t i = 0; i < total + NSPECIALS * NSPECIALS; i++) {
    float a, b;
    if (i < total) {
      a = u2f(tu_xs32(&seed));
      /* quotients from 2^-4 to 2^30 and beyond, both signs */
      int sh = (int)(tu_xs32(&seed) % 40u) - 4;
      b = ldexpf(a, -sh) * u2f(0x3f800000u + (tu_xs32(&seed) & 0x007fffffu)) * ((i & 1) ? -1.0f : 1.0f);
      if (i & 2) b = u2f(tu_xs32(&seed));
    } else {
      int64_t j = i - total;
      a = SPECIALS[j / NSPECIALS], b = SPECIALS[j % NSPECIALS];
    }
    n++;
    if (fbx_vm_fmod_rare(a, b)) continue;
    fast++;
    float got = fbx_vm_fmodf(a, b), want = fmodf(a, b);
    if (f2u(got) != f2u(want)) ck_abort_msg("fmodf(%a, %a) = %a, want %a", (double)a, (double)b, (double)got,
                  (double)want);
  }
  printf("vmath %-9s exact on %lld of %lld pairs (the rest: libm)\n", "fmodf", (long long)fast, (long long)n);
}
END_TEST

/* one block of pairs through fbx_vm_powf_block (what the kernels run);
 * fbx_vm_powf, one element at a time, must give the same bits in the same
 * build (clones or baseline) */
static void powb(float *restrict o, const float *restrict a, const float *restrict b, int n) {
  fbx_vm_powf_block(o, a, b, n);
}
FBX_PW_CLONES static void powb_c(float *restrict o, const float *restrict a, const float *restrict b, int n) {
  fbx_vm_powf_block(o, a, b, n);
}
BATCH2_FN(powe, fbx_vm_powf)

typedef struct {
  double max_err;
  float wa, wb;
  int64_t n, bad;
} pow_stats;
static void pow_check_block(pow_stats *st, int baseline, const float *ba, const float *bb, int m) {
  float br[FBX_VM_POW_BLOCK], be[FBX_VM_POW_BLOCK];
  (baseline ? powb : powb_c)(br, ba, bb, m);
  (baseline ? b0_powe : b_powe)(be, ba, bb, m);
  for (int k = 0; k < m; k++) {
    float a = ba[k], b = bb[k], r = br[k], r1 = be[k];
    if (f2u(r1) != f2u(r))
      ck_abort_msg("powf(%a, %a) (%s): block %a, element %a", (double)a, (double)b, clone_name(baseline), (double)r,
                   (double)r1);
    double want = pow((double)a, (double)b), e = ulp_err(r, want);
    st->n++;
    if (isinf(e) && st->bad++ < 5)
      fprintf(stderr, "  powf(%.9g, %.9g) = %.9g, want %.9g\n", (double)a, (double)b, (double)r, want);
    if (e > st->max_err) st->max_err = e, st->wa = a, st->wb = b;
  }
}

START_TEST(pow_ulps) {
  for (int baseline = 0; baseline < 2; baseline++) {
    uint32_t seed = 4242;
    pow_stats st = {0, 0, 0, 0, 0};
    int64_t total = (int64_t)1 << (sweep_log2() - 1);
    float ba[FBX_VM_POW_BLOCK], bb[FBX_VM_POW_BLOCK];
    int m = 0;
    for (int64_t i = 0; i < total + NSPECIALS * NSPECIALS; i++) {
      float a, b;
      if (i < total) {
        /* bases anywhere (half negative), exponents mostly where the result stays finite */
        a = u2f(tu_xs32(&seed) & ((i & 1) ? 0xffffffffu : 0x7fffffffu));
        float la = fabsf(log2f(fabsf(a))) + 1.0f;
        b = (float)((double)(int32_t)tu_xs32(&seed) / 2147483648.0 * 160.0 / la);
        if ((i & 6) == 2) b = fbx_vm_truncf(b); /* integral exponents: signs of negative bases */
        /* bases near 1 with large exponents: where log2 a must be most accurate */
        if ((i & 14) == 4) a = 1.0f + (float)(int32_t)tu_xs32(&seed) * 0x1p-40f, b = (float)(int32_t)tu_xs32(&seed) * 0x1p-10f;
      } else {
        int64_t j = i - total;
        a = SPECIALS[j / NSPECIALS], b = SPECIALS[j % NSPECIALS];
      }
      if (!isfinite(a) || !isfinite(b)) continue;
      if (fbx_vm_pow_rare(a, b)) continue;
      ba[m] = a, bb[m] = b;
      if (++m == FBX_VM_POW_BLOCK) pow_check_block(&st, baseline, ba, bb, m), m = 0;
    }
    pow_check_block(&st, baseline, ba, bb, m);
    printf("vmath %-9s max %.3f ulp at (%.9g, %.9g) (bound 1, %lld pairs, %s)\n", "powf", st.max_err, (double)st.wa,
           (double)st.wb, (long long)st.n, clone_name(baseline));
    ck_assert_int_eq(st.bad, 0);
    ck_assert_msg(st.max_err <= 1.0, "powf (%s): max error %.3f ulp", clone_name(baseline), st.max_err);
  }
}
END_TEST

/* ---- lgamma's loops: an element's bits do not depend on its block ---------------------- */

/* fbx_vm_lgammaf_block picks a loop by the ranges a block holds, leaving
 * out the parts the block does not need. Each set below is drawn at random
 * from its ranges, so that every block of it holds them all and takes one
 * loop: x >= 3 only; (0, 3); [-2, 0) and (0, 3); (0, 3) and [3, ...);
 * all. Every element that is not rare must come out as the general form
 * (fbx_vm_lgammaf, each element alone) gives it, bit for bit, in the
 * clone and in the baseline. */
static float lgamma_draw(uint32_t *s, int neg, float lo, float hi) {
  uint32_t r = tu_xs32(s);
  if (neg && (r & 1u)) { /* [-2, -FLT_MIN] */
    uint32_t a = f2u(FLT_MIN), b = f2u(2.0f);
    return -u2f(a + (r >> 1) % (b - a + 1u));
  }
  uint32_t a = f2u(lo), b = f2u(hi);
  return u2f(a + (r >> 1) % (b - a + 1u));
}

START_TEST(lgamma_loops_agree) {
  static const struct {
    int neg;
    float lo, hi;
  } SETS[] = {{0, 3.0f, 3.9e36f}, {0, FLT_MIN, 2.9999998f}, {1, FLT_MIN, 2.9999998f}, {0, FLT_MIN, 3.9e36f},
              {1, FLT_MIN, 3.9e36f}};
  static float x[BATCH], y[BATCH], z[BATCH];
  uint32_t seed = 12345u;
  for (int k = 0; k < (int)(sizeof SETS / sizeof SETS[0]); k++)
    for (int baseline = 0; baseline < 2; baseline++) {
      long differ = 0, checked = 0;
      float worst = 0.0f;
      for (int rep = 0; rep < 16; rep++) {
        for (int i = 0; i < BATCH; i++) x[i] = lgamma_draw(&seed, SETS[k].neg, SETS[k].lo, SETS[k].hi);
        (baseline ? b0_lgamma : b_lgamma)(y, x, BATCH);
        (baseline ? b0_lgamma_el : b_lgamma_el)(z, x, BATCH);
        for (int i = 0; i < BATCH; i++) {
          if (fbx_vm_lgamma_rare(x[i])) continue;
          checked++;
          if (f2u(y[i]) != f2u(z[i]) && !(y[i] != y[i] && z[i] != z[i])) differ++, worst = x[i];
        }
      }
      ck_assert_msg(checked > 60000, "set %d: only %ld inputs checked", k, checked);
      ck_assert_msg(differ == 0, "lgamma set %d (%s): %ld of %ld elements differ from the general form, e.g. at %a",
                    k, clone_name(baseline), differ, checked, (double)worst);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmath");
  TCase *tc = tcase_create("vmath");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, unary_ulps, 0, NUFNS);
  tcase_add_test(tc, lgamma_loops_agree);
  tcase_add_test(tc, rounding_exact);
  tcase_add_test(tc, atan2_ulps);
  tcase_add_test(tc, fmod_exact);
  tcase_add_test(tc, pow_ulps);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
