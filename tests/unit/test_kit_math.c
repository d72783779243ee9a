/* The kit's math prelude (sdk/kit/kit_prelude.inc), compiled into the kit:
 * fbxk_vexpf, fbxk_vexpm1f, fbxk_vtanhf, fbxk_vlogf, fbxk_vlog1pf, fbxk_verff,
 * fbxk_vsinf, fbxk_vcosf, the ports of the interpreter's exp2, log2,
 * log10, sinh, cosh, tan, atan, asin, acos and erfc, and fbxk_vpowf,
 * fbxk_vatan2f and fbxk_vfmodf (over pairs)
 * swept against libm in long double (the exact result rounded once), over
 * float bit patterns spread over every float (NaNs, infinities, subnormals,
 * both zeros) and a dense grid where the functions do their work. The
 * bounds are the measured maxima (printed) rounded up: a change to the
 * prelude that loses accuracy fails here. Special values (NaN, infinities,
 * signed zeros) must match C99 Annex F exactly. Also fbxk_floordiv(f) and
 * fbxk_rem(f) against PyTorch's definitions on edge values. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/kit/kit.h>
#include "ops/vmath.h"

/* A quarter of the values under the sanitizers (CI runs this suite in both
 * builds; the spread over every float and the grid keep their shape): the
 * math is checked in the normal build, the memory use in both. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define N_BITS (1 << 17)
#define N_GRID (1 << 17)
#else
#define N_BITS (1 << 19)
#define N_GRID (1 << 19)
#endif

/* Check writes a record of every ck_assert it passes: a sweep over a million
 * values asserts once at its end, counting the failures and keeping the
 * first one's message */
static int64_t sweep_fails;
static char sweep_first[256];
#define SWEEP_CHECK(cond, ...)                                                             \
  do {                                                                                     \
    if (!(cond) && !sweep_fails++) snprintf(sweep_first, sizeof sweep_first, __VA_ARGS__); \
  } while (0)
#define SWEEP_BEGIN() (sweep_fails = 0, sweep_first[0] = 0)
#define SWEEP_END() ck_assert_msg(sweep_fails == 0, "%lld failures, the first: %s", (long long)sweep_fails, sweep_first)

static int64_t ord(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i < 0 ? (int64_t)INT32_MIN - i : i;
}

typedef struct fn {
  const char *name;
  float (*kit)(float);
  long double (*ref)(long double);
  float lo, hi; /* the grid */
  int64_t bound; /* ulps */
} fn;

static long double erf_l(long double x) { return erfl(x); }
static long double exp_l(long double x) { return expl(x); }
static long double expm1_l(long double x) { return expm1l(x); }
static long double tanh_l(long double x) { return tanhl(x); }
static long double log_l(long double x) { return logl(x); }
static long double log1p_l(long double x) { return log1pl(x); }
static long double sin_l(long double x) { return sinl(x); }
static long double cos_l(long double x) { return cosl(x); }
static long double exp2_l(long double x) { return exp2l(x); }
static long double log2_l(long double x) { return log2l(x); }
static long double log10_l(long double x) { return log10l(x); }
static long double sinh_l(long double x) { return sinhl(x); }
static long double cosh_l(long double x) { return coshl(x); }
static long double tan_l(long double x) { return tanl(x); }
static long double atan_l(long double x) { return atanl(x); }
static long double asin_l(long double x) { return asinl(x); }
static long double acos_l(long double x) { return acosl(x); }
static long double erfc_l(long double x) { return erfcl(x); }

static const fn fns[] = {
    {"exp", fbxk_vexpf, exp_l, -104, 89, 2},      {"expm1", fbxk_vexpm1f, expm1_l, -30, 89, 3},
    {"tanh", fbxk_vtanhf, tanh_l, -12, 12, 4},    {"log", fbxk_vlogf, log_l, 0, 1000, 2},
    {"log1p", fbxk_vlog1pf, log1p_l, -1, 1000, 4}, {"erf", fbxk_verff, erf_l, -5, 5, 3},
    {"sin", fbxk_vsinf, sin_l, -100, 100, 4},     {"cos", fbxk_vcosf, cos_l, -100, 100, 4},
    {"exp2", fbxk_vexp2f, exp2_l, -152, 129, 2},  {"log2", fbxk_vlog2f, log2_l, 0, 1000, 2},
    {"log10", fbxk_vlog10f, log10_l, 0, 1000, 2}, {"sinh", fbxk_vsinhf, sinh_l, -90, 90, 4},
    {"cosh", fbxk_vcoshf, cosh_l, -90, 90, 4},    {"tan", fbxk_vtanf, tan_l, -100, 100, 4},
    {"atan", fbxk_vatanf, atan_l, -100, 100, 4},  {"asin", fbxk_vasinf, asin_l, -1, 1, 2},
    {"acos", fbxk_vacosf, acos_l, -1, 1, 2},      {"erfc", fbxk_verfcf, erfc_l, -10, 10, 5},
};

START_TEST(vector_math_ulps) {
  SWEEP_BEGIN();
  const fn *f = &fns[_i];
  int64_t worst = 0;
  float at = 0;
  for (int64_t i = 0; i < N_BITS + N_GRID + 6; i++) {
    float x;
    if (i < N_BITS) {
      uint32_t b = (uint32_t)(i * (0x100000000LL / N_BITS)) + (uint32_t)(i * 2654435761u % 4093u);
      memcpy(&x, &b, 4);
    } else if (i < N_BITS + N_GRID) {
      x = f->lo + (f->hi - f->lo) * (float)(i - N_BITS) / N_GRID;
    } else {
      x = (float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f}[i - N_BITS - N_GRID];
    }
    float got = f->kit(x);
    long double e = f->ref((long double)x);
    float want = (float)e;
    if (isnan(want)) {
      SWEEP_CHECK(isnan(got), "%s(%a) = %a, want NaN", f->name, x, got);
      continue;
    }
    SWEEP_CHECK(!isnan(got), "%s(%a) = NaN, want %a", f->name, x, want);
    if (isinf(want) || want == 0) {
      /* overflow/underflow thresholds may differ by an ulp: then within range */
      if (got == want && signbit(got) == signbit(want)) continue;
      SWEEP_CHECK(fabsl((long double)got - e) <= FLT_MIN || (isinf(want) && fabsf(got) >= FLT_MAX * 0.99999f),
                    "%s(%a) = %a, want %a", f->name, x, got, want);
      continue;
    }
    if (fabsl((long double)got - e) < FLT_MIN) continue; /* subnormal results: absolute */
    int64_t d = llabs(ord(got) - ord(want));
    if (d > worst) worst = d, at = x;
  }
  SWEEP_END();
  printf("kit math: %-6s max %lld ulps (at %a), bound %lld\n", f->name, (long long)worst, at, (long long)f->bound);
  ck_assert_msg(worst <= f->bound, "%s: %lld ulps at %a", f->name, (long long)worst, at);
}
END_TEST

/* Input i of the bit-for-bit comparisons below, i < SAME_N: 2^19 bit
 * patterns spread over every float, 2^19 grid points on [lo, lo + width],
 * then +inf, -inf, +0, -0. */
#define SAME_N ((1 << 20) + 4)
static float same_bits_input(int64_t i, float lo, float width) {
  float x;
  if (i < (1 << 19)) {
    uint32_t b = (uint32_t)(i * 8192) + (uint32_t)(i * 2654435761u % 8191u);
    memcpy(&x, &b, 4);
  } else if (i < (1 << 20)) {
    x = lo + width * (float)(i - (1 << 19)) / (float)(1 << 19);
  } else {
    x = (float[]){INFINITY, -INFINITY, 0.0f, -0.0f}[i - (1 << 20)];
  }
  return x;
}

/* The kit's exp is the interpreter's (core/ops/vmath.h) step for step: the
 * same bits for every non-NaN float, so a fused exp and `none`'s agree. */
START_TEST(exp_is_the_interpreters) {
  int64_t diff = 0;
  float at = 0;
  for (int64_t i = 0; i < SAME_N; i++) {
    float x = same_bits_input(i, -110.0f, 205.0f);
    if (x != x) continue;
    float k = fbxk_vexpf(x), v = fbx_vm_expf(x);
    if (memcmp(&k, &v, 4) && !diff++) at = x;
  }
  ck_assert_msg(diff == 0, "%lld inputs differ, the first %a: kit %a, interpreter %a", (long long)diff, at,
                fbxk_vexpf(at), fbx_vm_expf(at));
}
END_TEST

/* exp for operands known <= 0 (FBXK_FACT_NONPOS) has fbxk_vexpf's bits on
 * every such float, -inf and -0 included, and NaN stays NaN. */
START_TEST(exp_np_is_exp) {
  int64_t diff = 0, n = 0;
  float at = 0;
  for (int64_t i = 0; i < SAME_N; i++) {
    float x = same_bits_input(i, -110.0f, 205.0f);
    if (x != x) {
      ck_assert_msg(fbxk_vexpf_np(x) != fbxk_vexpf_np(x), "NaN in, %a out", fbxk_vexpf_np(x));
      continue;
    }
    if (!(x <= 0)) continue;
    n++;
    float k = fbxk_vexpf_np(x), v = fbxk_vexpf(x);
    if (memcmp(&k, &v, 4) && !diff++) at = x;
  }
  ck_assert_int_gt(n, SAME_N / 4);
  ck_assert_msg(diff == 0, "%lld of %lld inputs differ, the first %a: np %a, exp %a", (long long)diff, (long long)n, at,
                fbxk_vexpf_np(at), fbxk_vexpf(at));
}
END_TEST

/* The interpreter's sin and cos: its float path where that applies
 * (fbx_vm_trig_rare false), libm's beyond. */
static float interp_sinf(float x) { return fbx_vm_trig_rare(x) ? sinf(x) : fbx_vm_sinf(x); }
static float interp_cosf(float x) { return fbx_vm_trig_rare(x) ? cosf(x) : fbx_vm_cosf(x); }

/* The kit's sin and cos are the interpreter's for |x| <= 2^15: the same
 * bits, so a fused sin and `none`'s agree; beyond, where the interpreter
 * calls libm and the kit reduces by Payne and Hanek, within 2 ulps. */
START_TEST(trig_is_the_interpreters) {
  SWEEP_BEGIN();
  int64_t diff = 0, far = 0;
  float at = 0;
  for (int64_t i = 0; i < SAME_N; i++) {
    float x = same_bits_input(i, -40000.0f, 80000.0f);
    float ks = fbxk_vsinf(x), vs = interp_sinf(x);
    float kc = fbxk_vcosf(x), vc = interp_cosf(x);
    if (x != x) {
      SWEEP_CHECK(ks != ks && kc != kc, "sin/cos(NaN) = %a, %a", ks, kc);
      continue;
    }
    if (fabsf(x) > 32768.0f) { /* the interpreter's libm; the kit's own reduction: within 2 ulps */
      far++;
      SWEEP_CHECK((ks == vs || llabs(ord(ks) - ord(vs)) <= 2) && (kc == vc || llabs(ord(kc) - ord(vc)) <= 2),
                  "sin/cos(%a): kit %a %a, libm %a %a", x, ks, kc, vs, vc);
      continue;
    }
    if ((memcmp(&ks, &vs, 4) || memcmp(&kc, &vc, 4)) && !diff++) at = x;
  }
  ck_assert_msg(diff == 0, "%lld inputs differ, the first %a: kit sin %a cos %a, interpreter %a %a", (long long)diff,
                at, fbxk_vsinf(at), fbxk_vcosf(at), interp_sinf(at), interp_cosf(at));
  ck_assert_int_gt(far, 100000);
  SWEEP_END();
}
END_TEST

/* The interpreter's forms of the functions ported from core/ops/vmath.h:
 * its float path, libm where it hands elements to libm (tan past 2^15) */
static float interp_tanf(float x) { return fbx_vm_trig_rare(x) ? tanf(x) : fbx_vm_tanf(x); }
static float interp_erfcf(float x) {
  float y;
  fbx_vm_erfcf_block(&y, &x, 1);
  return y;
}
static const struct {
  const char *name;
  float (*kit)(float), (*interp)(float);
  float lo, width; /* the dense grid */
  float exact_max; /* the same bits for |x| <= this; beyond (tan: libm's there), within tan's bound, 4 ulps */
} ported[] = {
    {"exp2", fbxk_vexp2f, fbx_vm_exp2f, -160, 300, INFINITY},  {"log2", fbxk_vlog2f, fbx_vm_log2f, 0, 100, INFINITY},
    {"log10", fbxk_vlog10f, fbx_vm_log10f, 0, 100, INFINITY},  {"sinh", fbxk_vsinhf, fbx_vm_sinhf, -100, 200, INFINITY},
    {"cosh", fbxk_vcoshf, fbx_vm_coshf, -100, 200, INFINITY},  {"tan", fbxk_vtanf, interp_tanf, -40000, 80000, 32768},
    {"atan", fbxk_vatanf, fbx_vm_atanf, -50, 100, INFINITY},   {"asin", fbxk_vasinf, fbx_vm_asinf, -1.5f, 3, INFINITY},
    {"acos", fbxk_vacosf, fbx_vm_acosf, -1.5f, 3, INFINITY},   {"erfc", fbxk_verfcf, interp_erfcf, -12, 24, INFINITY},
};

/* The same bits as the interpreter for every input but NaN (NaN for NaN),
 * so that a fused op and `none` agree; tan past 2^15, where the
 * interpreter calls libm, within 4 ulps of it (tan's bound) */
START_TEST(ported_are_the_interpreters) {
  SWEEP_BEGIN();
  int64_t diff = 0;
  float at = 0;
  for (int64_t i = 0; i < SAME_N; i++) {
    float x = same_bits_input(i, ported[_i].lo, ported[_i].width);
    float k = ported[_i].kit(x), v = ported[_i].interp(x);
    if (x != x) {
      SWEEP_CHECK(k != k, "%s(NaN) = %a", ported[_i].name, k);
      continue;
    }
    if (fabsf(x) > ported[_i].exact_max) {
      SWEEP_CHECK(k == v || llabs(ord(k) - ord(v)) <= 4, "%s(%a) = %a, interpreter %a", ported[_i].name, x, k, v);
      continue;
    }
    if (memcmp(&k, &v, 4) && !diff++) at = x;
  }
  ck_assert_msg(diff == 0, "%s: %lld inputs differ, the first %a: kit %a, interpreter %a", ported[_i].name,
                (long long)diff, at, ported[_i].kit(at), ported[_i].interp(at));
  SWEEP_END();
}
END_TEST

/* ---- pow ---------------------------------------------------------------------------------------- */

/* Operands of the pow checks: edge values (C99's special cases, parity
 * beyond 2^23, subnormals, both sides of 1) and spread ones */
static const float pow_edge[] = {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1.8p-140f, FLT_MIN, -FLT_MIN, 0.25f,
                                 -0.5f, 0.5f, 0x1.fffffep-1f, 1.0f, -1.0f, 0x1.000002p+0f, 1.5f, -1.5f, 2.0f,
                                 -2.0f, 3.0f, -3.0f, 2.5f, 10.0f, -7.0f, 0x1p23f, 0x1.000002p+23f,
                                 -0x1.000002p+23f, 0x1p24f, -0x1.000002p+24f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX,
                                 INFINITY, -INFINITY, NAN};
#define N_POW_EDGE ((int)(sizeof pow_edge / sizeof pow_edge[0]))

/* pair i of the sweep: edge x edge, then spread bases (all signs and
 * magnitudes) against exponents that are integers, halves, or drawn from
 * [-40, 40], then bases near 1 against large exponents */
static void pow_pair(int64_t i, float *a, float *b) {
  int64_t ne = (int64_t)N_POW_EDGE * N_POW_EDGE;
  if (i < ne) {
    *a = pow_edge[i / N_POW_EDGE], *b = pow_edge[i % N_POW_EDGE];
    return;
  }
  i -= ne;
  uint32_t h = (uint32_t)i * 2654435761u;
  if (i < N_BITS) {
    uint32_t bits = (uint32_t)(i * (0x100000000LL / N_BITS)) + h % 4093u;
    memcpy(a, &bits, 4);
    int kind = (int)(h >> 28) & 3;
    *b = kind == 0 ? (float)((int)(h >> 8 & 15) - 7)
         : kind == 1 ? (float)((int)(h >> 8 & 15) - 7) + 0.5f
                     : -40.0f + 80.0f * (float)(h >> 8 & 0xfffff) / (float)0x100000;
  } else {
    *a = 1.0f + ((float)(h >> 8 & 0xffff) - 32768.0f) * 0x1p-22f;
    *b = ((h & 1) ? -1.0f : 1.0f) * (float)(h >> 12 & 0xfffff) * 64.0f;
  }
}
#define N_POW ((int64_t)N_POW_EDGE * N_POW_EDGE + N_BITS + N_GRID)

/* fbxk_vpowf against powl rounded once: within 1 ulp (the interpreter's
 * double path is accurate to about 2^-28 before that rounding), C99's
 * special cases exactly (NaN, infinities and zeros with their sign) */
START_TEST(pow_ulps) {
  SWEEP_BEGIN();
  int64_t worst = 0;
  float wa = 0, wb = 0;
  for (int64_t i = 0; i < N_POW; i++) {
    float a, b;
    pow_pair(i, &a, &b);
    float got = fbxk_vpowf(a, b), lib = powf(a, b);
    long double e = powl((long double)a, (long double)b);
    float want = (float)e;
    if (isnan(lib)) {
      SWEEP_CHECK(isnan(got), "pow(%a, %a) = %a, want NaN", a, b, got);
      continue;
    }
    SWEEP_CHECK(!isnan(got), "pow(%a, %a) = NaN, want %a", a, b, lib);
    if (isinf(want) || want == 0) {
      if (got == want && signbit(got) == signbit(want)) continue;
      /* the overflow and underflow thresholds may differ by an ulp */
      SWEEP_CHECK(isfinite(a) && isfinite(b) && a != 0 && b != 0 &&
                        (fabsl((long double)got - e) <= 0x1p-149L ||
                         (isinf(want) && fabsf(got) >= FLT_MAX * 0.99999f)),
                    "pow(%a, %a) = %a, want %a", a, b, got, want);
      continue;
    }
    int64_t d = llabs(ord(got) - ord(want));
    if (d > worst) worst = d, wa = a, wb = b;
  }
  printf("kit math: pow    max %lld ulps (at %a, %a), bound 1, %lld pairs\n", (long long)worst, wa, wb,
         (long long)N_POW);
  ck_assert_msg(worst <= 1, "pow: %lld ulps at (%a, %a)", (long long)worst, wa, wb);
  SWEEP_END();
}
END_TEST

/* Where the interpreter computes pow itself (fbx_vm_pow_rare false), the
 * kit's pow has its very bits; where it asks libm, the same value class
 * and within 1 ulp of libm's */
START_TEST(pow_is_the_interpreters) {
  SWEEP_BEGIN();
  int64_t diff = 0, rare = 0;
  float at_a = 0, at_b = 0;
  for (int64_t i = 0; i < N_POW; i++) {
    float a, b;
    pow_pair(i, &a, &b);
    float k = fbxk_vpowf(a, b);
    if (fbx_vm_pow_rare(a, b)) {
      float l = powf(a, b);
      rare++;
      SWEEP_CHECK((isnan(k) && isnan(l)) || (k == l && signbit(k) == signbit(l)) ||
                        (isfinite(l) && l != 0 && llabs(ord(k) - ord(l)) <= 1),
                    "pow(%a, %a): kit %a, libm %a", a, b, k, l);
      continue;
    }
    float v = fbx_vm_powf(a, b);
    if (memcmp(&k, &v, 4) && !diff++) at_a = a, at_b = b;
  }
  ck_assert_msg(diff == 0, "%lld pairs differ, the first (%a, %a): kit %a, interpreter %a", (long long)diff, at_a,
                at_b, fbxk_vpowf(at_a, at_b), fbx_vm_powf(at_a, at_b));
  ck_assert_int_gt(rare, N_POW_EDGE); /* the special cases were reached */
  SWEEP_END();
}
END_TEST

/* PyTorch's float floor division and remainder (c10 div_floor_floating,
 * ATen's remainder kernel), on libm's fmodf */
static float torch_floordivf(float a, float b) {
  if (b == 0) return a / b;
  float m = fmodf(a, b), d = (a - m) / b;
  if (m != 0 && (b < 0) != (m < 0)) d -= 1;
  if (d == 0) return copysignf(0.0f, a / b);
  float fd = floorf(d);
  return d - fd > 0.5f ? fd + 1 : fd;
}
static float torch_remf(float a, float b) {
  float m = fmodf(a, b);
  return m != 0 && (b < 0) != (m < 0) ? m + b : m;
}

/* atan2, fmod, hypot, floor division and remainder over pow's pairs: atan2
 * within 4 ulps of atan2l and the interpreter's bits; fmod and hypot equal
 * to libm's, floor_divide and remainder to PyTorch's formulas (signed
 * zeros and NaN included) */
START_TEST(atan2_and_fmod) {
  SWEEP_BEGIN();
  int64_t worst = 0, diff = 0;
  float wa = 0, wb = 0;
  for (int64_t i = 0; i < N_POW; i++) {
    float a, b;
    pow_pair(i, &a, &b);
    float m = fbxk_vfmodf(a, b), lm = fmodf(a, b);
    SWEEP_CHECK((isnan(m) && isnan(lm)) || (m == lm && signbit(m) == signbit(lm)), "fmod(%a, %a) = %a, libm %a",
                  a, b, m, lm);
    float h = fbxk_vhypotf(a, b), lh = hypotf(a, b);
    SWEEP_CHECK((isnan(h) && isnan(lh)) || (h == lh && signbit(h) == signbit(lh)), "hypot(%a, %a) = %a, libm %a",
                  a, b, h, lh);
    float fd = fbxk_floordivf(a, b), tfd = torch_floordivf(a, b);
    SWEEP_CHECK((isnan(fd) && isnan(tfd)) || (fd == tfd && signbit(fd) == signbit(tfd)),
                  "floordiv(%a, %a) = %a, PyTorch %a", a, b, fd, tfd);
    float rm = fbxk_remf(a, b), trm = torch_remf(a, b);
    SWEEP_CHECK((isnan(rm) && isnan(trm)) || (rm == trm && signbit(rm) == signbit(trm)),
                  "remainder(%a, %a) = %a, PyTorch %a", a, b, rm, trm);
    float t = fbxk_vatan2f(a, b), vt = fbx_vm_atan2f(a, b);
    if (memcmp(&t, &vt, 4) && !(t != t && vt != vt)) diff++;
    float want = (float)atan2l((long double)a, (long double)b);
    if (isnan(want)) {
      SWEEP_CHECK(isnan(t), "atan2(%a, %a) = %a, want NaN", a, b, t);
      continue;
    }
    if (want == 0 || fabsf(want) < FLT_MIN) {
      SWEEP_CHECK(fabsf(t - want) <= FLT_MIN && (want != 0 || signbit(t) == signbit(want)),
                    "atan2(%a, %a) = %a, want %a", a, b, t, want);
      continue;
    }
    int64_t d = llabs(ord(t) - ord(want));
    if (d > worst) worst = d, wa = a, wb = b;
  }
  printf("kit math: atan2  max %lld ulps (at %a, %a), bound 4\n", (long long)worst, wa, wb);
  ck_assert_msg(worst <= 4, "atan2: %lld ulps at (%a, %a)", (long long)worst, wa, wb);
  ck_assert_msg(diff == 0, "atan2: %lld pairs differ from the interpreter's", (long long)diff);
  SWEEP_END();
}
END_TEST

/* PyTorch: floor_divide rounds the true quotient down (c10 div_floor),
 * remainder takes the divisor's sign; division by zero gives a / b */
START_TEST(floordiv_and_remainder) {
  const double v[] = {7, -7, 2, -2, 0.5, -0.0, 0.0, 1e300, 3.5, INFINITY, -INFINITY, NAN, 1e-310};
  const int n = (int)(sizeof v / sizeof v[0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double a = v[i], b = v[j];
      double q = fbxk_floordiv(a, b), r = fbxk_rem(a, b);
      if (b == 0) {
        double w = a / b;
        ck_assert_msg(isnan(w) ? isnan(q) : q == w && signbit(q) == signbit(w), "floordiv(%g, %g) = %g", a, b, q);
      } else if (!isnan(a) && !isnan(b) && isfinite(a) && isfinite(b)) {
        double w = floor(a / b);
        /* fmod-based: exact where the quotient is exact */
        if (fabs(a / b) < 1e15) ck_assert_msg(q == w || (q == 0 && w == 0), "floordiv(%g, %g) = %g, want %g", a, b, q, w);
        ck_assert_msg(r == 0 || signbit(r) == signbit(b), "rem(%g, %g) = %g: not the divisor's sign", a, b, r);
        ck_assert_msg(fabs(r) <= fabs(b), "rem(%g, %g) = %g", a, b, r);
      }
      if (isnan(a) || isnan(b)) ck_assert(isnan(q) && isnan(r));
      float qf = fbxk_floordivf((float)a, (float)b), rf = fbxk_remf((float)a, (float)b);
      double qd = fbxk_floordiv((float)a, (float)b), rd = fbxk_rem((float)a, (float)b);
      ck_assert_msg((isnan(qf) && isnan(qd)) || qf == (float)qd, "floordivf(%g, %g)", a, b);
      ck_assert_msg((isnan(rf) && isnan(rd)) || rf == (float)rd, "remf(%g, %g)", a, b);
    }
  ck_assert(fbxk_floordiv(-7, 2) == -4 && fbxk_rem(-7, 2) == 1 && fbxk_rem(7, -2) == -1);
  ck_assert(signbit(fbxk_floordiv(-0.0, 3)) && signbit(fbxk_floordiv(1, -INFINITY)));
}
END_TEST

int main(void) {
  Suite *s = suite_create("kit_math");
  TCase *tc = tcase_create("kit_math");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, vector_math_ulps, 0, (int)(sizeof fns / sizeof fns[0]));
  tcase_add_test(tc, floordiv_and_remainder);
  tcase_add_test(tc, exp_is_the_interpreters);
  tcase_add_test(tc, exp_np_is_exp);
  tcase_add_test(tc, trig_is_the_interpreters);
  tcase_add_test(tc, pow_ulps);
  tcase_add_test(tc, pow_is_the_interpreters);
  tcase_add_loop_test(tc, ported_are_the_interpreters, 0, (int)(sizeof ported / sizeof ported[0]));
  tcase_add_test(tc, atan2_and_fmod);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
