/* Vectorizable float32 math for the pointwise kernels.
 *
 *   #include "ops/vmath.h"
 *   for (i = 0; i < n; i++) out[i] = fbx_vm_expf(in[i]);   // GCC/clang vectorize this loop
 *
 * Every function here is `static inline`, branch-free (conditions are
 * selects the compiler if-converts), calls nothing, and uses only
 * operations that SSE2 and AVX2 have in packed form: float<->int32 and
 * float<->double conversions, integer bit tricks on the representation,
 * +, -, *, / and sqrt. So a plain contiguous loop over one of them
 * vectorizes at -O2 (with the kernels' settings, ops/kopt.h) on the
 * x86-64 baseline (4 lanes) and in the AVX2 and AVX-512 clones of the
 * loops (8 and 16 lanes). pow and erfc come as block functions
 * (fbx_vm_powf_block, fbx_vm_erfcf_block) that run their stages as
 * separate passes over up to 256 elements: short dependency chains
 * overlap better in the out-of-order core than one long one. lgamma's
 * block function (fbx_vm_lgammaf_block) first scans the block's range and
 * runs a loop with only the parts of the function that range needs.
 *
 * No reassociation: each function rounds as written, except that the
 * kernel files let GCC contract a * b + c into one FMA in the clones that
 * have it (see FBX_PW_CLONES in ops/pointwise.h). So a result may differ by
 * rounding between the baseline and the AVX2/AVX-512 clones; the bounds
 * below hold for both, and the test checks both. Code that needs a
 * product rounded on its own (an exact split) must not rely on it: every
 * such step here is exact with or without the FMA. Where both operands of
 * a sum are products (a * b + c * d), GCC picks the one to fuse by
 * statement order, which differs between loops and between the vector
 * body and the scalar epilogue of one loop, so that an element's bits
 * could depend on where it sits: where that showed (lgamma, and expm1 and
 * tanh through fbx_vm_half_sq_plus) the sums have one product, and
 * tests/unit/test_ops_posdet.c checks every op for it.
 *
 * Accuracy, measured by tests/unit/test_vmath.c against the double
 * precision libm result rounded to float (max error in float ulps over
 * 2^24 bit patterns spread over all finite floats plus special values;
 * the bound each is tested against in brackets):
 *
 *   expf, exp2f, expm1f, logf, log2f, log10f, log1pf, erff    [2]
 *   sinf, cosf, tanf, tanhf, sinhf, coshf,
 *   atanf, atan2f (float arithmetic)                            [4]
 *   erfcf_block (float arithmetic)                              [5]
 *   asinf, acosf (float arithmetic)                             [2]
 *   softplusf (float arithmetic)                                [3]
 *   powf (double arithmetic)                                    [1]
 *   lgammaf (float arithmetic)                                  [3]
 *   sigmoidf                                                    [3]
 *   truncf, floorf, ceilf, rintf (round half to even)           exact
 *   fmodf                                                       exact
 *
 * powf computes in double (half the lanes per vector): float arithmetic
 * cannot reach its bound cheaply (b log2 a needs ~2^-35). The *_block_d
 * functions are the float64 forms of the block functions, libm per element.
 *
 * Limits: sinf/cosf/tanf reduce the argument in float with a 4-part
 * Cody-Waite pi/2 that is valid for |x| <= FBX_VM_TRIG_MAX (2^15); larger finite
 * arguments give a meaningless value and fbx_vm_trig_rare() is true for
 * them: callers recompute those elements with libm (see
 * FBX_PW_LOOP1X in pointwise.h). fbx_vm_fmodf is likewise exact only where
 * fbx_vm_fmod_rare() is false, and fbx_vm_powf leaves C99's special
 * cases (a zero, infinite or NaN operand), subnormal bases and |b| >= 2^23
 * to libm: fbx_vm_pow_rare(), and
 * fbx_vm_lgammaf leaves x < -2 (where lgamma has zeros between the poles),
 * |x| < FLT_MIN (zeros, subnormals) and x > 3.99e36 (+inf, and a band
 * below the overflow threshold) to libm: fbx_vm_lgamma_rare().
 * Float64 kernels keep using libm.
 *
 * Special values follow C99 Annex F (NaN in -> NaN out, exp(-inf) = 0,
 * log(0) = -inf, log(x < 0) = NaN, tanh(+-inf) = +-1, ...), signed zeros
 * included where the function is odd.
 */
#ifndef FBX_OPS_VMATH_H
#define FBX_OPS_VMATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Always inlined: a call in a loop body stops vectorization, and GCC's
 * -O2 heuristics leave the larger bodies out of line. */
#if defined(__GNUC__)
#define FBX_VM_INLINE static inline __attribute__((always_inline))
#else
#define FBX_VM_INLINE static inline
#endif

/* ---- representation ----------------------------------------------------------------- */

FBX_VM_INLINE uint32_t fbx_vm_f2u(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
FBX_VM_INLINE float fbx_vm_u2f(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
FBX_VM_INLINE uint64_t fbx_vm_d2u(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
FBX_VM_INLINE double fbx_vm_u2d(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}
FBX_VM_INLINE float fbx_vm_absf(float x) { return fbx_vm_u2f(fbx_vm_f2u(x) & 0x7fffffffu); }
/* |m| with the sign of s */
FBX_VM_INLINE float fbx_vm_signf(float m, float s) {
  return fbx_vm_u2f((fbx_vm_f2u(m) & 0x7fffffffu) | (fbx_vm_f2u(s) & 0x80000000u));
}
FBX_VM_INLINE double fbx_vm_absd(double x) { return fbx_vm_u2d(fbx_vm_d2u(x) & 0x7fffffffffffffffull); }
FBX_VM_INLINE double fbx_vm_signd(double m, double s) {
  return fbx_vm_u2d((fbx_vm_d2u(m) & 0x7fffffffffffffffull) | (fbx_vm_d2u(s) & 0x8000000000000000ull));
}

/* ---- rounding (exact) ----------------------------------------------------------------- */

/* Round to nearest integer, ties to even (the default rounding mode) for
 * |t| < 2^22: adding 1.5 * 2^23 leaves no fraction bits. */
FBX_VM_INLINE float fbx_vm_rint_small(float t) { return (t + 0x1.8p23f) - 0x1.8p23f; }
FBX_VM_INLINE double fbx_vm_rint_small_d(double t) { return (t + 0x1.8p52) - 0x1.8p52; }

/* nearbyint: ties to even; every float with |x| >= 2^23 is an integer */
FBX_VM_INLINE float fbx_vm_rintf(float x) {
  float ax = fbx_vm_absf(x);
  float r = (ax + 0x1p23f) - 0x1p23f;
  return fbx_vm_signf(ax < 0x1p23f ? r : ax, x);
}
FBX_VM_INLINE float fbx_vm_truncf(float x) {
  /* |x| rounded to nearest, stepped down if that went up; no float->int
   * conversion (GCC would turn that into a roundss it cannot if-convert) */
  float ax = fbx_vm_absf(x);
  float r = (ax + 0x1p23f) - 0x1p23f;
  r = r > ax ? r - 1.0f : r;
  return fbx_vm_signf(ax < 0x1p23f ? r : ax, x);
}
FBX_VM_INLINE float fbx_vm_floorf(float x) {
  float t = fbx_vm_truncf(x);
  return t > x ? t - 1.0f : t;
}
FBX_VM_INLINE float fbx_vm_ceilf(float x) {
  float t = fbx_vm_truncf(x);
  return t < x ? t + 1.0f : t;
}

FBX_VM_INLINE double fbx_vm_rintd(double x) {
  double ax = fbx_vm_absd(x);
  double r = (ax + 0x1p52) - 0x1p52;
  return fbx_vm_signd(ax < 0x1p52 ? r : ax, x);
}
FBX_VM_INLINE double fbx_vm_truncd(double x) {
  double ax = fbx_vm_absd(x);
  double r = (ax + 0x1p52) - 0x1p52;
  r = r > ax ? r - 1.0 : r;
  return fbx_vm_signd(ax < 0x1p52 ? r : ax, x);
}
FBX_VM_INLINE double fbx_vm_floord(double x) {
  double t = fbx_vm_truncd(x);
  return t > x ? t - 1.0 : t;
}
FBX_VM_INLINE double fbx_vm_ceild(double x) {
  double t = fbx_vm_truncd(x);
  return t < x ? t + 1.0 : t;
}

/* ---- exp family (float arithmetic) ----------------------------------------------------- */

#define FBX_VM_LOG2EF 1.44269504088896341f
#define FBX_VM_LN2HF 0.693359375f       /* 9 bits: k * LN2HF is exact */
#define FBX_VM_LN2LF -2.12194440e-4f    /* ln 2 - LN2HF */

/* x * 2^k for k in [-252, 254] in two exact steps, so that a subnormal
 * result is rounded once: 2^floor(k/2) 2^ceil(k/2). The halves come from
 * a shift of k + 256 in unsigned arithmetic: signed division by 2 costs
 * three vector operations, and callers pass garbage k (from a NaN) on
 * lanes whose result they discard, which must not overflow. */
FBX_VM_INLINE float fbx_vm_ldexpf(float x, int32_t k) {
  uint32_t ku = (uint32_t)k + 256u, k1 = ku >> 1, k2 = ku - k1; /* floor(k/2) + 128, ceil(k/2) + 128 */
  return x * fbx_vm_u2f((k1 - 1u) << 23) * fbx_vm_u2f((k2 - 1u) << 23);
}

/* e^r - 1 - r = r^2 P(r) on |r| <= ln2/2 (Chebyshev fit) */
FBX_VM_INLINE float fbx_vm_exp_poly(float r) {
  /* Estrin's scheme: exp sits at the end of long dependency chains
   * (erf, erfc, softplus), where latency, not operation count, bounds a
   * loop */
  float r2 = r * r;
  float p01 = 5.000000000e-01f + r * 1.666666716e-01f;
  float p23 = 4.166646674e-02f + r * 8.333310485e-03f;
  float p45 = 1.393364160e-03f + r * 1.989098091e-04f;
  return r2 * (p01 + r2 * (p23 + r2 * p45));
}

/* e^x for x in [-87, 88] (finite, normal result): the clamps, the NaN
 * select and the two-step scaling of fbx_vm_expf are dead there, and the
 * composite functions that call this (erf) are bound by operation count */
FBX_VM_INLINE float fbx_vm_exp_normal(float x) {
  float kf = fbx_vm_rint_small(x * FBX_VM_LOG2EF);
  float r = (x - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  float e = 1.0f + (r + fbx_vm_exp_poly(r));
  return e * fbx_vm_u2f((uint32_t)((int32_t)kf + 127) << 23);
}

FBX_VM_INLINE float fbx_vm_expf(float x) {
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  xc = x == x ? xc : 0.0f;
  float kf = fbx_vm_rint_small(xc * FBX_VM_LOG2EF);
  float r = (xc - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  float e = 1.0f + (r + fbx_vm_exp_poly(r));
  float y = fbx_vm_ldexpf(e, (int32_t)kf);
  return x == x ? y : x;
}

FBX_VM_INLINE float fbx_vm_exp2f(float x) {
  float xc = x < -152.0f ? -152.0f : x;
  xc = xc > 129.0f ? 129.0f : xc;
  xc = x == x ? xc : 0.0f;
  float kf = fbx_vm_rint_small(xc);
  float f = xc - kf; /* exact, |f| <= 1/2 */
  /* 2^f = 1 + f Q(f) (Chebyshev fit) */
  float q = 1.529732435e-05f;
  q = q * f + 1.546144485e-04f;
  q = q * f + 1.333350199e-03f;
  q = q * f + 9.618056938e-03f;
  q = q * f + 5.550410971e-02f;
  q = q * f + 2.402265072e-01f;
  q = q * f + 6.931471825e-01f;
  float e = 1.0f + f * q;
  float y = fbx_vm_ldexpf(e, (int32_t)kf);
  return x == x ? y : x;
}

/* r^2/2 + r^3 q (expm1f, tanhf) with one product per sum. Written so,
 * the sum has two products; GCC contracts the one it meets first, and the
 * vector body and the scalar epilogue of one loop met them in different
 * orders (tanh: about 1 argument in 2000 got other bits in the epilogue
 * than in the body). Here the sum's only candidate is 2 (r^3 q) (r^2 also
 * feeds r^3, so it is never contracted) and the halving is exact (unless
 * the sum is subnormal, far below r's ulp): the value is
 * fl(r^2/2 + fl(r^3 q)) with or without FMA, as the vector body had it. */
FBX_VM_INLINE float fbx_vm_half_sq_plus(float r, float q) {
  float r2 = r * r;
  return 0.5f * (r2 + 2.0f * (r2 * r * q));
}

FBX_VM_INLINE float fbx_vm_expm1f(float x) {
  float xc = x < -18.0f ? -18.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  xc = x == x ? xc : 0.0f;
  float kf = fbx_vm_rint_small(xc * FBX_VM_LOG2EF);
  float r = (xc - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  /* e^r - 1 = r + r^2/2 + r^3 R(r) */
  float q = 1.988269069e-04f;
  q = q * r + 1.392617589e-03f;
  q = q * r + 8.333320729e-03f;
  q = q * r + 4.166655615e-02f;
  q = q * r + 1.666666716e-01f;
  float em = r + fbx_vm_half_sq_plus(r, q);
  int32_t k = (int32_t)kf; /* [-26, 128] */
  /* 2^k (1 + em) - 1: exactly 2^k - 1 + 2^k em while 2^k - 1 is exact */
  int32_t ks = k > 24 ? 24 : k;
  float s = fbx_vm_u2f((uint32_t)(ks + 127) << 23);
  float a = (s - 1.0f) + s * em;
  float b = fbx_vm_ldexpf(1.0f + em, k);
  float y = k > 24 ? b : a;
  return x == x && x != 0.0f ? y : x; /* NaN, +-0 */
}

/* ---- log family (float arithmetic) ------------------------------------------------------ */

/* x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)) for finite x > 0
 * (subnormals scaled first); ln(1 + f) = f + lo. */
/* The same for a normal x, minus the exponent bias adjustment eb (23 for
 * a subnormal scaled by 2^23, else 0). */
FBX_VM_INLINE void fbx_vm_log_split_n(float xs, int32_t eb, float *e, float *f, float *lo) {
  int32_t ix = (int32_t)(fbx_vm_f2u(xs) - 0x3f3504f3u);
  float m = fbx_vm_u2f(((uint32_t)ix & 0x7fffffu) + 0x3f3504f3u);
  *e = (float)((ix >> 23) - eb);
  float ff = m - 1.0f;
  /* ln(1 + f) - f + f^2/2 = f^3 P(f) (Chebyshev fit), P by Estrin's
   * scheme for a short dependency chain */
  float z = ff * ff, z2 = z * z;
  float p01 = 3.333333135e-01f + ff * -2.499999702e-01f;
  float p23 = 2.000071555e-01f + ff * -1.666780263e-01f;
  float p45 = 1.424905807e-01f + ff * -1.242568716e-01f;
  float p67 = 1.168541983e-01f + ff * -1.147973388e-01f;
  float p47 = p45 + z * (p67 + z * 6.971611828e-02f);
  float p = p01 + (z * p23 + z2 * p47);
  *f = ff;
  *lo = ff * z * p - 0.5f * z;
}

FBX_VM_INLINE void fbx_vm_log_split(float x, float *e, float *f, float *lo) {
  int sub = x < 0x1p-126f;
  fbx_vm_log_split_n(sub ? x * 0x1p23f : x, sub ? 23 : 0, e, f, lo);
}

/* log(x) for x's specials: NaN, x < 0 -> NaN, 0 -> -inf, inf -> inf */
FBX_VM_INLINE float fbx_vm_log_special(float x, float y) {
  y = x > 0.0f ? y : (x == 0.0f ? -INFINITY : NAN);
  y = x == INFINITY ? x : y;
  return x == x ? y : x;
}

FBX_VM_INLINE float fbx_vm_logf(float x) {
  float e, f, lo;
  fbx_vm_log_split(x, &e, &f, &lo);
  float y = (f + (lo + e * FBX_VM_LN2LF)) + e * FBX_VM_LN2HF;
  return fbx_vm_log_special(x, y);
}

FBX_VM_INLINE float fbx_vm_log2f(float x) {
  float e, f, lo;
  fbx_vm_log_split(x, &e, &f, &lo);
  /* log2(1+f) = (f + lo) log2(e), with log2(e) = 1 + L */
  float t = f + lo;
  float y = e + (t + t * 0.44269504088896341f);
  return fbx_vm_log_special(x, y);
}

FBX_VM_INLINE float fbx_vm_log10f(float x) {
  float e, f, lo;
  fbx_vm_log_split(x, &e, &f, &lo);
  float y = e * 3.010253906e-01f + ((f + lo) * 4.342944819e-01f + e * 4.605038981e-06f);
  return fbx_vm_log_special(x, y);
}

FBX_VM_INLINE float fbx_vm_log1pf(float x) {
  float u = 1.0f + x;
  /* log(1 + x) = log(u) + (x - (u - 1)) / u to first order */
  float c = (x - (u - 1.0f)) / u;
  c = u > 0.0f && u < INFINITY ? c : 0.0f;
  float e, f, lo;
  fbx_vm_log_split(u, &e, &f, &lo);
  float y = (f + ((lo + c) + e * FBX_VM_LN2LF)) + e * FBX_VM_LN2HF;
  y = fbx_vm_log_special(u, y);
  return x == 0.0f ? x : y; /* +-0 */
}

/* ---- double-precision cores --------------------------------------------------------------- */

#define FBX_VM_LN2HD 6.93147180369123816e-01 /* 32 bits */
#define FBX_VM_LN2LD 1.90821492927058770e-10

/* e^a = 2^k m for 0 <= a <= 90 (k integer, m in [0.7, 1.42]) */
FBX_VM_INLINE float fbx_vm_exp_split(float a, int32_t *k) {
  float kf = fbx_vm_rint_small(a * FBX_VM_LOG2EF);
  float r = (a - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  *k = (int32_t)kf;
  return 1.0f + (r + fbx_vm_exp_poly(r));
}

/* sinh a = a + a^3 P(a^2) for a < 1, else (e^a - e^-a) / 2 with
 * e^a = 2^k m: 2^(k-1) m - 2^(-k-1) / m (float arithmetic) */
FBX_VM_INLINE float fbx_vm_sinhf(float x) {
  float a = fbx_vm_absf(x);
  a = a > 90.0f ? 90.0f : a;
  a = x == x ? a : 0.0f;
  float z = a * a;
  float h = 2.806300699e-06f;
  h = h * z + 1.983809925e-04f;
  h = h * z + 8.333339356e-03f;
  h = h * z + 1.666666716e-01f;
  float small = a + a * z * h;
  int32_t k;
  float m = fbx_vm_exp_split(a, &k);
  float big = fbx_vm_ldexpf(m, k - 1) - fbx_vm_ldexpf(1.0f / m, -k - 1);
  float y = fbx_vm_signf(a < 1.0f ? small : big, x);
  return x == x ? y : x;
}

FBX_VM_INLINE float fbx_vm_coshf(float x) {
  float a = fbx_vm_absf(x);
  a = a > 90.0f ? 90.0f : a;
  a = x == x ? a : 0.0f;
  int32_t k;
  float m = fbx_vm_exp_split(a, &k);
  float y = fbx_vm_ldexpf(m, k - 1) + fbx_vm_ldexpf(1.0f / m, -k - 1);
  return x == x ? y : x;
}

/* tanh a = em / (em + 2) with em = e^2a - 1 (a = |x| <= 10, where tanh
 * rounds to 1), in float: 2a = k ln2 + r, em = (2^k - 1) + 2^k expm1(r),
 * exact steps while 2^k - 1 is (k <= 24; beyond, the quotient is 1 to
 * within rounding anyway). Tiny |x|: tanh x = x. */
FBX_VM_INLINE float fbx_vm_tanhf(float x) {
  float a = fbx_vm_absf(x);
  a = a > 10.0f ? 10.0f : a;
  a = x == x ? a : 0.0f;
  float a2 = a + a;
  float kf = fbx_vm_rint_small(a2 * FBX_VM_LOG2EF);
  float r = (a2 - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  float q = 1.988269069e-04f;
  q = q * r + 1.392617589e-03f;
  q = q * r + 8.333320729e-03f;
  q = q * r + 4.166655615e-02f;
  q = q * r + 1.666666716e-01f;
  float p = r + fbx_vm_half_sq_plus(r, q);
  float s = fbx_vm_u2f((uint32_t)((int32_t)kf + 127) << 23);
  float em = (s - 1.0f) + s * p;
  float y = fbx_vm_signf(em / (em + 2.0f), x);
  y = fbx_vm_absf(x) < 0x1p-12f ? x : y;
  return x == x ? y : x;
}

/* 1 / (1 + e^-x), as e / (1 + e) with e = e^x for x < 0 so that tiny
 * results keep their precision. */
FBX_VM_INLINE float fbx_vm_sigmoidf(float x) {
  float e = fbx_vm_expf(-fbx_vm_absf(x));
  float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : (x == x ? e * s : x);
}

/* softplus: log(1 + e^x) = max(x, 0) + log1p(e) with e = e^-|x| in (0, 1],
 * no overflow; log1p(e) = e + e^2 R(e) (fit/softplus.py, degree 9), whose
 * correction term is smaller than e, so R's error reaches the result
 * scaled down. e^-|x| is scaled by 2^(k + 64) and then 2^-64, so a
 * subnormal e is rounded once; below -104 it is 0. */
FBX_VM_INLINE float fbx_vm_softplusf(float x) {
  float v = x > 0.0f ? -x : x;
  v = v > -104.0f ? v : -104.0f; /* NaN too: the result is x */
  float kf = fbx_vm_rint_small(v * FBX_VM_LOG2EF);
  float r = (v - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  float sk = fbx_vm_u2f((uint32_t)((int32_t)kf + (127 + 64)) << 23);
  float e = ((1.0f + (r + fbx_vm_exp_poly(r))) * sk) * 0x1p-64f;
  float q = 2.835889114e-03f;
  q = q * e - 1.734032296e-02f;
  q = q * e + 4.960680008e-02f;
  q = q * e - 9.169926494e-02f;
  q = q * e + 1.305169463e-01f;
  q = q * e - 1.637164354e-01f;
  q = q * e + 1.995800436e-01f;
  q = q * e - 2.499689013e-01f;
  q = q * e + 3.333324194e-01f;
  q = q * e - 5.000000000e-01f;
  float l = e + (e * e) * q;
  float y = (x > 0.0f ? x : 0.0f) + l;
  return x == x ? y : x;
}

/* ---- erf, erfc (float arithmetic) ------------------------------------------------------------ */

/* erf(x) = x + x P(x^2) for |x| < 0.84375 (fit of erf(x)/x - 1) */
FBX_VM_INLINE float fbx_vm_erf_small(float x) {
  float z = x * x;
  float p = 8.897229418e-05f;
  p = p * z - 8.256745641e-04f;
  p = p * z + 5.210250616e-03f;
  p = p * z - 2.686281689e-02f;
  p = p * z + 1.128375232e-01f;
  p = p * z - 3.761263788e-01f;
  p = p * z + 1.283791661e-01f;
  return x * p; /* erf(x) - x */
}

/* erf(a) = 1 - erfc(a) for 0.84375 <= a <= 4 with erfc(a) = exp(Q(a) - a^2),
 * Q a fit of log(erfc(a)) + a^2 in t = a - 0.84375 (Chebyshev, degree 8).
 * No division: erfc <= 0.23 here, so its relative error (Q's and expf's)
 * reaches erf scaled down by that factor at least. */
FBX_VM_INLINE float fbx_vm_erf_big(float a) {
  /* Estrin's scheme: the Horner chain's latency, not the operation count,
   * bounded this loop */
  float t = a - 0.84375f, t2 = t * t, t4 = t2 * t2;
  float q01 = -7.457717061e-01f + t * -6.912006736e-01f;
  float q23 = 1.779334694e-01f + t * -4.838605598e-02f;
  float q45 = 1.178914867e-02f + t * -2.362774452e-03f;
  float q67 = 3.543801722e-04f + t * -3.446406117e-05f;
  float q47 = q45 + t2 * (q67 + t2 * 1.596944116e-06f);
  float q = q01 + (t2 * q23 + t4 * q47);
  return 1.0f - fbx_vm_exp_normal(q - a * a); /* q - a^2 in [-17, -0.7] */
}

/* on |x|, the sign put back at the end (erf is odd); both branches are
 * finite over all of [0, 4], so their arguments need no select */
FBX_VM_INLINE float fbx_vm_erff(float x) {
  float a = fbx_vm_absf(x);
  a = a < 4.0f ? a : 4.0f; /* erf rounds to 1; NaN too, replaced below */
  float y = a < 0.84375f ? a + fbx_vm_erf_small(a) : fbx_vm_erf_big(a);
  y = fbx_vm_signf(y, x);
  return x == x ? y : x;
}

/* erfc(a) = t e^(Q(t) - a^2) with t = 2 / (2 + a), a = |x| <= 10.1 (larger
 * rounds to 0), and erfc(x) = 2 - erfc(|x|) for x < 0. One formula for
 * every a, no branch to select: Q(t) = log(erfc(a) / t) + a^2 is smooth on
 * t in [0.165, 1] (fit/erfc.py: Q(t) / (t - 1), degree 9 in t - 1), and its
 * error is absolute in the exponent, so relative in erfc. The exponent
 * keeps a^2 exact: a^2 = ah^2 + d, ah = a to 12 bits (ah^2 exact),
 * d = (a - ah)(a + ah). */
/* The two stages, apart so that fbx_vm_erfcf_block runs them as two
 * passes (two short dependency chains overlap better than one long one:
 * about 1.1x): the first gives the multiplier t - tl and the exponent's
 * part Q - d, the second the rest. */
FBX_VM_INLINE float fbx_vm_erfc_a(float x) {
  float a = fbx_vm_absf(x);
  return a < 10.1f ? a : 10.1f; /* NaN too: replaced at the end */
}
FBX_VM_INLINE float fbx_vm_erfc_tq(float x, float *tl_out, float *qd) {
  float a = fbx_vm_erfc_a(x);
  /* 2 + a = sa + sl exactly (Fast2Sum, larger operand first), and t =
   * 2 / (2 + a) = 2 / sa - tl to first order: the rounding of 2 + a would
   * otherwise cost an ulp at large a */
  float sa = 2.0f + a;
  int abig = a > 2.0f;
  float sl = (abig ? 2.0f : a) - (sa - (abig ? a : 2.0f));
  float t = 2.0f / sa;
  float tl = (t * t) * (sl * 0.5f);
  /* Q = u c1 + u^2 (c2 + c3 u + ...), u = t - 1 (exact for t >= 1/4, a <= 6) */
  float u = t - 1.0f, u2 = u * u, u4 = u2 * u2;
  float p01 = -3.032381535e-01f + u * -1.615049392e-01f;
  float p23 = 1.918160468e-01f + u * -6.992179155e-02f;
  float p45 = -1.379798949e-01f + u * -1.686499715e-01f;
  float p67 = -4.940504730e-01f + u * -4.858742058e-01f;
  float p47 = p45 + u2 * (p67 + u2 * -1.513231248e-01f);
  float q = u * 1.256758332e+00f + u2 * (p01 + (u2 * p23 + u4 * p47));
  float ah = fbx_vm_u2f(fbx_vm_f2u(a) & 0xfffff000u);
  *qd = q - (a - ah) * (a + ah);
  *tl_out = tl;
  return t;
}
FBX_VM_INLINE float fbx_vm_erfc_fin(float x, float t, float tl, float qd) {
  float a = fbx_vm_erfc_a(x);
  float ah = fbx_vm_u2f(fbx_vm_f2u(a) & 0xfffff000u);
  float s = -(ah * ah);
  float kf = fbx_vm_rint_small((s + qd) * FBX_VM_LOG2EF);
  float r = ((s - kf * FBX_VM_LN2HF) + qd) - kf * FBX_VM_LN2LF;
  float e = 1.0f + (r + fbx_vm_exp_poly(r));
  /* times 2^k, k in [-150, 0]: by 2^(k + 64), exact (the product stays
   * normal), then by 2^-64, the one scaling step that may round */
  float sk = fbx_vm_u2f((uint32_t)((int32_t)kf + (127 + 64)) << 23);
  float y = ((e * t - e * tl) * sk) * 0x1p-64f;
  y = x < 0.0f ? 2.0f - y : y;
  return x == x ? y : x;
}

/* o[i] = erfc(a[i]) for n <= FBX_VM_ERFC_BLOCK, in two passes */
#define FBX_VM_ERFC_BLOCK 256
FBX_VM_INLINE int fbx_vm_erfcf_block(float *restrict o, const float *restrict a, int n) {
  float t[FBX_VM_ERFC_BLOCK], tl[FBX_VM_ERFC_BLOCK], qd[FBX_VM_ERFC_BLOCK];
  for (int i = 0; i < n; i++) t[i] = fbx_vm_erfc_tq(a[i], &tl[i], &qd[i]);
  for (int i = 0; i < n; i++) o[i] = fbx_vm_erfc_fin(a[i], t[i], tl[i], qd[i]);
  return 0; /* no rare inputs (the loops' convention, FBX_PW_LOOP1B) */
}
FBX_VM_INLINE int fbx_vm_erfc_block_d(double *restrict o, const double *restrict a, int n) {
  for (int i = 0; i < n; i++) o[i] = erfc(a[i]);
  return 0;
}

/* ---- sin, cos, tan ---------------------------------------------------------------------------- */

#define FBX_VM_TRIG_MAX 0x1p15f

/* r = x - k pi/2 (|r| <= ~pi/4) and the quadrant k mod 4, in float, for
 * |x| <= FBX_VM_TRIG_MAX (k < 2^15): Cody-Waite with pi/2 in four parts
 * (8, 9 and 9 significant bits and a full float), so that the first three
 * products k * part are exact. */
FBX_VM_INLINE float fbx_vm_trig_reduce(float x, uint32_t *q) {
  float d = fbx_vm_absf(x) <= FBX_VM_TRIG_MAX ? x : 0.0f;
  float km = d * 0.636619772367581382f + 0x1.8p23f;
  *q = fbx_vm_f2u(km) & 3u;
  float k = km - 0x1.8p23f;
  d = d - k * 1.5703125f;
  d = d - k * 4.83512878417968750e-4f;
  d = d - k * 3.13855707645416259766e-7f;
  d = d - k * 6.07710062827671038120e-11f;
  return d;
}
/* sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4 */
FBX_VM_INLINE float fbx_vm_sin_poly(float r, float z) {
  float s = -1.9515295891e-4f;
  s = s * z + 8.3321608736e-3f;
  s = s * z - 1.6666654611e-1f;
  return r + r * z * s;
}
FBX_VM_INLINE float fbx_vm_cos_poly(float z) {
  float c = 2.443315711809948e-5f;
  c = c * z - 1.388731625493765e-3f;
  c = c * z + 4.166664568298827e-2f;
  return (1.0f - 0.5f * z) + z * z * c;
}
/* True where sinf/cosf/tanf must be recomputed with libm. */
FBX_VM_INLINE int fbx_vm_trig_rare(float x) {
  float ax = fbx_vm_absf(x);
  return ax > FBX_VM_TRIG_MAX && ax < INFINITY;
}

/* The quadrant's choice of sin or cos and its sign, by bit operations */
FBX_VM_INLINE float fbx_vm_trig_pick(float s, float c, uint32_t q) {
  uint32_t odd = 0u - (q & 1u);
  uint32_t bits = (fbx_vm_f2u(c) & odd) | (fbx_vm_f2u(s) & ~odd);
  return fbx_vm_u2f(bits ^ ((q & 2u) << 30));
}

FBX_VM_INLINE float fbx_vm_sinf(float x) {
  uint32_t q;
  float r = fbx_vm_trig_reduce(x, &q);
  float z = r * r, s = fbx_vm_sin_poly(r, z), c = fbx_vm_cos_poly(z);
  float y = fbx_vm_trig_pick(s, c, q);
  y = x == 0.0f ? x : y; /* -0 */
  return x - x == 0.0f ? y : x - x; /* inf, NaN -> NaN */
}

FBX_VM_INLINE float fbx_vm_cosf(float x) {
  uint32_t q;
  float r = fbx_vm_trig_reduce(x, &q);
  float z = r * r, s = fbx_vm_sin_poly(r, z), c = fbx_vm_cos_poly(z);
  float y = fbx_vm_trig_pick(s, c, q + 1u); /* cos x = sin(x + pi/2) */
  return x - x == 0.0f ? y : x - x;
}

/* tan r = r + r^3 T(r^2) on |r| <= pi/4; odd quadrants: -1 / tan r */
FBX_VM_INLINE float fbx_vm_tanf(float x) {
  uint32_t q;
  float r = fbx_vm_trig_reduce(x, &q);
  float z = r * r;
  float t = 9.38540185543e-3f;
  t = t * z + 3.11992232697e-3f;
  t = t * z + 2.44301354525e-2f;
  t = t * z + 5.34112807005e-2f;
  t = t * z + 1.33387994085e-1f;
  t = t * z + 3.33331568548e-1f;
  t = r + r * z * t;
  float y = (q & 1u) ? -1.0f / t : t;
  y = x == 0.0f ? x : y; /* -0 */
  return x - x == 0.0f ? y : x - x;
}

/* ---- atan, atan2, asin, acos (float arithmetic) ------------------------------------------------ */

#define FBX_VM_PI_2 1.57079632679489661923
#define FBX_VM_PI_4 0.78539816339744830962

/* atan(a) for a >= 0 (inf included), in float: reduced to |s| <= tan(pi/8)
 * (s = a, (a - 1) / (a + 1) or -1 / a), atan s = s + s^3 P(s^2), plus
 * 0, pi/4 or pi/2 in two parts */
FBX_VM_INLINE float fbx_vm_atan_pos(float a) {
  int big = a > 2.41421356f, mid = a > 0.414213562f;
  float num = big ? -1.0f : (mid ? a - 1.0f : a);
  float den = big ? a : (mid ? a + 1.0f : 1.0f);
  float s = num / den, z = s * s;
  float p = -6.466609985e-02f;
  p = p * z + 1.074879020e-01f;
  p = p * z - 1.426450014e-01f;
  p = p * z + 1.999955922e-01f;
  p = p * z - 3.333333135e-01f;
  float bh = big ? 1.570796371f : (mid ? 7.853981853e-01f : 0.0f);
  float bl = big ? -4.371139000e-08f : (mid ? -2.185569500e-08f : 0.0f);
  return bh + ((s + s * z * p) + bl);
}

FBX_VM_INLINE float fbx_vm_atanf(float x) {
  float y = fbx_vm_signf(fbx_vm_atan_pos(fbx_vm_absf(x)), x);
  return x == x ? y : x;
}

FBX_VM_INLINE float fbx_vm_atan2f(float y, float x) {
  float ay = fbx_vm_absf(y), ax = fbx_vm_absf(x);
  /* atan(ay/ax) in [0, pi/2]; both infinite: pi/4; both zero: 0 */
  int yinf = ay == INFINITY, xinf = ax == INFINITY;
  float q = ay / (ax > 0.0f ? ax : 1.0f);
  q = ax > 0.0f ? q : (ay > 0.0f ? INFINITY : 0.0f);
  q = yinf && xinf ? 1.0f : q;
  float t = fbx_vm_atan_pos(q);
  /* x < 0 (or -0): pi - t */
  float u = (3.141592741f - t) + -8.742278000e-08f;
  t = fbx_vm_f2u(x) >> 31 ? u : t;
  float r = fbx_vm_signf(t, y);
  return x == x && y == y ? r : x + y;
}

/* asin(a) - a = a^3 P(a^2) for 0 <= a <= 0.5 (minimax fit) */
FBX_VM_INLINE float fbx_vm_asin_poly(float a, float z) {
  float p = 0x1.3af7d8p-5f;
  p = p * z + 0x1.b059dp-6f;
  p = p * z + 0x1.70d7dcp-5f;
  p = p * z + 0x1.33261ap-4f;
  p = p * z + 0x1.55555ep-3f;
  return a * z * p;
}

/* asin(a) and 2 asin(sqrt((1 - a) / 2)) = pi/2 - asin(a), for a = |x| <= 1,
 * in float: for a > 1/2, z = (1 - a) / 2 is exact and s = sqrt(z) is split
 * as sh + sl (sh = s to 12 bits, sh^2 exact) so that 2 asin(s) =
 * 2 sh + 2 (sl + s z P(z)) keeps the low part. */
FBX_VM_INLINE void fbx_vm_asin_core(float a, int big, float *hi, float *lo) {
  float z = big ? 0.5f - 0.5f * a : a * a;
  float s = sqrtf(z);
  float sh = fbx_vm_u2f(fbx_vm_f2u(s) & 0xfffff000u);
  float sl = (z - sh * sh) / (s + sh);
  sl = s > 0.0f ? sl : 0.0f;
  float b = big ? s : a;
  float t = fbx_vm_asin_poly(b, z);
  *hi = big ? 2.0f * sh : a;
  *lo = big ? 2.0f * (sl + t) : t;
}

#define FBX_VM_PIO2H 1.570796371f
#define FBX_VM_PIO2L -4.371139000e-08f

FBX_VM_INLINE float fbx_vm_asinf(float x) {
  float a = fbx_vm_absf(x);
  int big = a > 0.5f;
  float ac = a <= 1.0f ? a : 0.0f; /* NaN and |x| > 1 handled below */
  float hi, lo;
  fbx_vm_asin_core(ac, big, &hi, &lo);
  /* big: pi/2 - (hi + lo) */
  float y = big ? FBX_VM_PIO2H - (hi + (lo - FBX_VM_PIO2L)) : hi + lo;
  y = fbx_vm_signf(y, x);
  return a <= 1.0f ? y : (x == x ? NAN : x);
}

FBX_VM_INLINE float fbx_vm_acosf(float x) {
  float a = fbx_vm_absf(x);
  int big = a > 0.5f;
  float ac = a <= 1.0f ? a : 0.0f;
  float hi, lo;
  fbx_vm_asin_core(ac, big, &hi, &lo);
  int neg = x < 0.0f;
  /* small: pi/2 - asin(x); big: x > 0: 2 asin(s); x < 0: pi - 2 asin(s) */
  float hs = neg ? -hi : hi, ls = neg ? -lo : lo;
  float ys = FBX_VM_PIO2H - (hs + (ls - FBX_VM_PIO2L));
  float yn = 3.141592741f - (hi + (lo + 8.742278000e-08f));
  float y = big ? (neg ? yn : hi + lo) : ys;
  return a <= 1.0f ? y : (x == x ? NAN : x);
}

/* ---- pow (double arithmetic) ---------------------------------------------------------------- */

/* a^b = 2^y, y = b log2|a| in double: |y| up to ~150 needs log2|a| to
 * ~2^-35 relative for a result within 2^-28 before the final rounding to
 * float. Coefficients: core/ops/fit/pow.py (minimax fits, relative
 * error in brackets), rounded to double.
 *
 * The computation is one long dependency chain (two divisions in it), so
 * a loop over the whole of it keeps only about one vector of elements in
 * flight and waits on latency. fbx_vm_powf_block therefore runs it as four
 * passes over a block, each a short chain the out-of-order core overlaps
 * across iterations (2.4x the single loop on Zen 4); fbx_vm_powf is the
 * same stages for one element, with identical results. */
#define FBX_VM_POW_BLOCK 256

/* True where powf must be computed by libm: a zero, subnormal, infinite or
 * NaN a (C99's special cases are among these), infinite or NaN b, and
 * |b| >= 2^23, where the parity test below fails (b is an even integer
 * there; the result is 1, 0 or infinite unless a is within 2^-17 of +-1). */
FBX_VM_INLINE int fbx_vm_pow_rare(float a, float b) {
  float aa = fbx_vm_absf(a);
  return !(aa >= 0x1p-126f && aa < INFINITY && fbx_vm_absf(b) < 0x1p23f);
}

/* |a| = 2^e m with m in [sqrt(1/2), sqrt(2)) (a normal); the stages below
 * take s = (m - 1) / (m + 1), |s| <= 0.1716, log2 m = s Q(s^2). */
FBX_VM_INLINE uint32_t fbx_vm_pow_split(float a) { return (fbx_vm_f2u(a) & 0x7fffffffu) - 0x3f3504f3u; }
FBX_VM_INLINE double fbx_vm_pow_s(float a) {
  double m = (double)fbx_vm_u2f((fbx_vm_pow_split(a) & 0x7fffffu) + 0x3f3504f3u);
  return (m - 1.0) / (m + 1.0);
}
/* y = b (e + s Q(s^2)) clamped to [-150, 150] (where the float result is
 * 0 or infinite: 2^-150 rounds to 0), Q of degree 4 [2^-37.8] */
FBX_VM_INLINE double fbx_vm_pow_y(double s, float a, float b) {
  double e = (double)((int32_t)fbx_vm_pow_split(a) >> 23);
  double z = s * s, z2 = z * z;
  double q = (2.88539008179007928e+00 + z * 9.61796673350641451e-01) +
             z2 * ((5.77083583206781547e-01 + z * 4.11672829655761630e-01) + z2 * 3.40727969001746012e-01);
  double y = (double)b * (e + s * q);
  return fbx_vm_absd(y) < 150.0 ? y : fbx_vm_signd(150.0, y);
}
/* 2^y = 2^k 2^f, k = rint(y), 2^f = (E + O) / (E - O) with E, O the even
 * and odd parts of a tuned [3/3] Pade form [2^-29.6]; the scaling adds k
 * to the exponent field (k's low bits are those of y + 1.5 2^52) */
FBX_VM_INLINE double fbx_vm_pow_exp2(double y) {
  double t = y + 0x1.8p52;
  double f = y - (t - 0x1.8p52), f2 = f * f;
  double pe = 1.0 + f2 * 4.80453883918201402e-02;
  double po = f * (3.46573590279972643e-01 + f2 * 2.77521653324107895e-03);
  double p = (pe + po) / (pe - po);
  return fbx_vm_u2d(fbx_vm_d2u(p) + (fbx_vm_d2u(t) << 52));
}
/* |a|^b rounded to float, negated for a < 0 and odd b, NaN for a < 0 and
 * b not an integer: for |b| < 2^23, |b| + 2^23 is |b| rounded to an
 * integer, and its last bit that integer's parity */
FBX_VM_INLINE float fbx_vm_pow_sign(double p, float a, float b) {
  float ab = fbx_vm_absf(b);
  float tb = ab + 0x1p23f;
  float r = fbx_vm_u2f(fbx_vm_f2u((float)p) | (fbx_vm_f2u(a) & (fbx_vm_f2u(tb) << 31)));
  float rn = tb - 0x1p23f == ab ? r : NAN;
  return a < 0.0f ? rn : r;
}

FBX_VM_INLINE float fbx_vm_powf(float a, float b) {
  return fbx_vm_pow_sign(fbx_vm_pow_exp2(fbx_vm_pow_y(fbx_vm_pow_s(a), a, b)), a, b);
}

/* o[i] = fbx_vm_powf(a[i], b[i]) for n <= FBX_VM_POW_BLOCK, in passes */
FBX_VM_INLINE void fbx_vm_powf_block(float *restrict o, const float *restrict a, const float *restrict b, int n) {
  double w[FBX_VM_POW_BLOCK];
  for (int i = 0; i < n; i++) w[i] = fbx_vm_pow_s(a[i]);
  for (int i = 0; i < n; i++) w[i] = fbx_vm_pow_y(w[i], a[i], b[i]);
  for (int i = 0; i < n; i++) w[i] = fbx_vm_pow_exp2(w[i]);
  for (int i = 0; i < n; i++) o[i] = fbx_vm_pow_sign(w[i], a[i], b[i]);
}
/* double: libm, one element at a time */
FBX_VM_INLINE void fbx_vm_pow_block_d(double *restrict o, const double *restrict a, const double *restrict b, int n) {
  for (int i = 0; i < n; i++) o[i] = pow(a[i], b[i]);
}

/* ---- lgamma (float arithmetic) ---------------------------------------------------------------- */

/* True where lgammaf must be computed by libm: x < -2 (and -inf), where
 * lgamma has zeros between the poles that the reflection formula below
 * would compute with cancellation; |x| < FLT_MIN (zeros, subnormals: its
 * log takes normal arguments only); x > 3.99e36 (+inf, and a band below
 * the overflow threshold 4.085e36 where an intermediate overflows). */
FBX_VM_INLINE int fbx_vm_lgamma_rare(float x) {
  return x < -2.0f || x > 0x1.8p121f || fbx_vm_absf(x) < 0x1p-126f;
}

/* lgamma(x) for x >= -2 in float arithmetic, with one log whose argument
 * each range selects (log carried as hi + lo):
 *   1 <= x < 3:  lgamma(x) = (x - 1)(x - 2) P(x - 2), relative accuracy
 *                at both zeros from the exact factors;
 *   0 < x < 1:   lgamma(x + 1) - log x, the first term as above with
 *                factors x and x - 1;
 *   -2 <= x < 0: reflection, lgamma(x) = -log|r| - log(sin(pi r)/(pi r))
 *                - lgamma(1 - x) with r = x - rint(x) (exact), the middle
 *                term a polynomial z Q(z) in z = r^2 and lgamma(1 - x) as
 *                above with factors -x and -x - 1;
 *   x >= 3:      Stirling, (x - 1/2)(log x - 1) + log(2 pi)/2 - 1/2 +
 *                C(1/x^2)/x, where log x - 1 cancels: its low parts are
 *                kept apart and scaled separately.
 * P, Q, C and R were fitted by core/ops/fit/lgamma.py (minimax, float32
 * coefficients): P to 1.6e-8 relative, z Q(z) to 3.1e-9, C(u)/x to
 * 3.3e-9 and the log's s z R(z) to 2e-10 absolute. Every float in
 * [-2, -2^-10] and [2^-10, 8] checked against libm: at most 2.51 ulp
 * without FMA, 2.26 with (the worst near x = 1.13, where the three
 * roundings of (x - 1)(x - 2) P add up), 2.06 on [-2, -1]; every 5th
 * float elsewhere: below 1.7.
 *
 * The flags say which ranges the caller's inputs may hold (they are
 * constants: each combination compiles to its own loop, see
 * fbx_vm_lgammaf_block): big, some x >= 3 (or +NaN); small, some x < 3;
 * neg, some x with the sign bit set. An element gets the same bits from
 * every combination that covers it: the parts left out are only selected
 * away, and no expression gives the compiler a choice of which product to
 * fuse into an FMA (never a * b + c * d), so each combination contracts
 * alike. */
FBX_VM_INLINE float fbx_vm_lgammaf_k(float x, const int big, const int small, const int neg) {
  float lg = 0.0f, ls = 0.0f, r = 0.0f;
  if (small) {
    float ax = neg ? fbx_vm_absf(x) : x;
    /* lgamma(y) = (y - 1) t P(t), t = y - 2, for y = 1 - x, 1 + x or x */
    float t = ax - (x < 1.0f ? 1.0f : 2.0f);
    float a1 = x < 1.0f ? ax : x - 1.0f;
    /* Horner for the low orders, whose terms are as large as P (Estrin's
     * scheme rounds each partial sum there), Estrin's for the rest */
    float t2 = t * t, t4 = t2 * t2;
    float p45 = 4.994567484e-03f + t * -2.105778316e-03f;
    float p67 = 9.297872894e-04f + t * -4.165260470e-04f;
    float p89 = 1.612280321e-04f + t * -6.188868429e-05f;
    float p1011 = 4.907706170e-05f + t * -3.516864672e-05f;
    float p47 = p45 + t2 * p67, p811 = p89 + t2 * p1011;
    float p = p47 + t4 * (p811 + t4 * 1.022696051e-05f);
    p = -1.238436904e-02f + t * p;
    p = 3.296541050e-02f + t * p;
    p = -1.003172994e-01f + t * p;
    p = 4.227843285e-01f + t * p;
    lg = (a1 * t) * p;
  }
  if (neg) {
    /* log(sin(pi r) / (pi r)) = z Q(z) */
    r = x - fbx_vm_rint_small(x);
    float z = r * r, z2 = z * z;
    float q01 = -1.644933343e+00f + z * -5.412162542e-01f;
    float q23 = -3.377539217e-01f + z * -2.663627565e-01f;
    float q45 = -1.153073236e-01f + z * -3.803596795e-01f;
    ls = z * (q01 + z2 * (q23 + z2 * q45));
  }
  /* log(x < 0 ? |r| : x) = hi + lo: the argument is 2^e (1 + f) with
   * 1 + f in [sqrt(1/2), sqrt(2)), and log(1 + f) = f + s (z R(z) - f) for
   * s = f / (2 + f), z = s^2 (as f - 2s = s f, f is exact and s's rounding
   * only reaches the small part); e ln2 (exact) dominates f when e != 0.
   * Normal arguments only (subnormal x are rare); 0 (the poles) gives a
   * finite value that is replaced below. */
  float la = neg && x < 0.0f ? fbx_vm_absf(r) : x;
  int32_t ix = (int32_t)(fbx_vm_f2u(la) - 0x3f3504f3u);
  float e = (float)(ix >> 23);
  float f = fbx_vm_u2f(((uint32_t)ix & 0x7fffffu) + 0x3f3504f3u) - 1.0f;
  float sl = f / (2.0f + f), zl = sl * sl;
  /* (this chain is the longest: short forms after the division) */
  float rl = (6.666681767e-01f + zl * 3.997349143e-01f) + (zl * zl) * 2.996422350e-01f;
  float lp = sl * (zl * rl - f);
  float ae = e * FBX_VM_LN2HF;
  float hi = ae + f;
  float lo = (e * FBX_VM_LN2LF + ((ae - hi) + f)) + lp;
  float y = 0.0f;
  if (small) {
    float s = neg && x < 0.0f ? -(ls + lg) : lg;
    float sm = -hi + (s - lo);
    y = x >= 1.0f ? lg : sm; /* NaN: sm is NaN */
  }
  if (big) {
    /* Stirling: (x - 1/2)(log x - 1) cancels for small x, so it is
     * x (hi - 1) - (hi - 1)/2 + (x - 1/2) lo, with hi - 1 exact for x in
     * [3, e^4) (hi in [1, 4); beyond, nothing cancels) and lo not small
     * (it holds f's log polynomial). x - 1/2 is inexact beyond 2^23, where
     * lo's term is tiny. x near the overflow threshold, where x (hi - 1)
     * alone could overflow, is rare. */
    float w = 1.0f / x, u = w * w;
    float c = (8.333326876e-02f + u * -2.772808308e-03f) + (u * u) * 6.972313859e-04f;
    float d = hi - 1.0f;
    float yb = x * d + ((4.189385474e-01f + ((w * c + -1.416814488e-08f) - 0.5f * d)) + (x - 0.5f) * lo);
    y = small && !(x >= 3.0f) ? y : yb;
  }
  y = y + 0.0f; /* lgamma(1) = lgamma(2) = +0, not -0 */
  return neg && la == 0.0f ? INFINITY : y; /* the poles -1, -2 */
}
FBX_VM_INLINE float fbx_vm_lgammaf(float x) { return fbx_vm_lgammaf_k(x, 1, 1, 1); }

/* The key that orders floats as signed integers (-0 just below +0, NaNs
 * beyond the infinities): the sign bit kept, the other bits flipped when
 * it is set. */
FBX_VM_INLINE int32_t fbx_vm_fkey(float x) {
  uint32_t u = fbx_vm_f2u(x);
  return (int32_t)(u ^ ((uint32_t)((int32_t)u >> 31) >> 1));
}

/* o[i] = lgamma(a[i]) (n elements, any n), the loop chosen by the ranges
 * the block holds: a scan of its keys' bounds, then fbx_vm_lgammaf_k with
 * only the parts those ranges need (only x >= 3: Stirling alone; none:
 * no Stirling; no negatives: no reflection). Returns nonzero when the
 * block may hold inputs that fbx_vm_lgamma_rare() marks (the caller
 * recomputes those). */
#define FBX_VM_LGAMMA_LOOP_(big, small, neg) \
  for (int i = 0; i < n; i++) o[i] = fbx_vm_lgammaf_k(a[i], big, small, neg)
FBX_VM_INLINE int fbx_vm_lgammaf_block(float *restrict o, const float *restrict a, int n) {
  int32_t kmin = INT32_MAX, kmax = INT32_MIN;
  uint32_t amin = UINT32_MAX;
  for (int i = 0; i < n; i++) {
    int32_t k = fbx_vm_fkey(a[i]);
    uint32_t m = fbx_vm_f2u(a[i]) & 0x7fffffffu;
    kmin = k < kmin ? k : kmin;
    kmax = k > kmax ? k : kmax;
    amin = m < amin ? m : amin;
  }
  int32_t k3 = fbx_vm_fkey(3.0f);
  if (kmax < k3) {
    if (kmin < 0)
      FBX_VM_LGAMMA_LOOP_(0, 1, 1);
    else
      FBX_VM_LGAMMA_LOOP_(0, 1, 0);
  } else if (kmin >= k3) {
    FBX_VM_LGAMMA_LOOP_(1, 0, 0);
  } else if (kmin >= 0) {
    FBX_VM_LGAMMA_LOOP_(1, 1, 0);
  } else {
    FBX_VM_LGAMMA_LOOP_(1, 1, 1);
  }
  return kmin < fbx_vm_fkey(-2.0f) || kmax > fbx_vm_fkey(0x1.8p121f) || amin < 0x00800000u;
}
#undef FBX_VM_LGAMMA_LOOP_
FBX_VM_INLINE int fbx_vm_lgamma_block_d(double *restrict o, const double *restrict a, int n) {
  for (int i = 0; i < n; i++) o[i] = lgamma(a[i]);
  return 0;
}

/* ---- fmod (exact) ---------------------------------------------------------------------------------- */

/* fmod(a, b) = a - trunc(a/b) b, exactly: the double quotient of two floats
 * truncates to the right integer while |a/b| < 2^29, n b is exact in
 * double and so is the difference, whose value is a float. Elsewhere
 * (b = 0 or inf, a inf or NaN, huge quotients) fbx_vm_fmod_rare is true. */
FBX_VM_INLINE int fbx_vm_fmod_rare(float a, float b) {
  double q = (double)a / (double)b;
  return !(fbx_vm_absd(q) < 0x1p29) || fbx_vm_absf(b) == INFINITY;
}
FBX_VM_INLINE float fbx_vm_fmodf(float a, float b) {
  double q = (double)a / (double)b;
  q = fbx_vm_absd(q) < 0x1p29 ? q : 0.0;
  double n = fbx_vm_truncd(q);
  double r = (double)a - n * (double)b;
  return fbx_vm_signf((float)r, a);
}

/* ---- type-generic use from the kernels -------------------------------------------------------------- */

/* FBX_VM(exp, x): fbx_vm_expf for float, the libm function for double. */
#define FBX_VM(fn, x) _Generic((x), float: fbx_vm_##fn##f, default: fn)(x)
/* Exact rounding for both: FBX_VM_ROUND(floor, x), (ceil, trunc, rint). */
#define FBX_VM_ROUND(fn, x) _Generic((x), float: fbx_vm_##fn##f, default: fbx_vm_##fn##d)(x)
/* The elements a kernel recomputes with libm (never for double, which
 * uses libm throughout). */
FBX_VM_INLINE int fbx_vm_never(double x) { return (void)x, 0; }
FBX_VM_INLINE int fbx_vm_never2(double x, double y) { return (void)x, (void)y, 0; }
#define FBX_VM_TRIG_RARE(x) _Generic((x), float: fbx_vm_trig_rare, default: fbx_vm_never)(x)
#define FBX_VM_LGAMMA_RARE(x) _Generic((x), float: fbx_vm_lgamma_rare, default: fbx_vm_never)(x)
#define FBX_VM_FMOD_RARE(a, b) _Generic((a), float: fbx_vm_fmod_rare, default: fbx_vm_never2)(a, b)
#define FBX_VM_FMOD(a, b) _Generic((a), float: fbx_vm_fmodf, default: fmod)(a, b)
#define FBX_VM_POW_RARE(a, b) _Generic((a), float: fbx_vm_pow_rare, default: fbx_vm_never2)(a, b)
/* FBX_VM_ERFC_BLOCK_FN(o, a, n), FBX_VM_LGAMMA_BLOCK_FN(o, a, n): the
 * same for erfc and lgamma */
#define FBX_VM_ERFC_BLOCK_FN(o, a, n) _Generic((o), float *: fbx_vm_erfcf_block, default: fbx_vm_erfc_block_d)(o, a, n)
#define FBX_VM_LGAMMA_BLOCK_FN(o, a, n) \
  _Generic((o), float *: fbx_vm_lgammaf_block, default: fbx_vm_lgamma_block_d)(o, a, n)
/* FBX_VM_POW_BLOCK_FN(o, a, b, n): the block form for float arrays, libm for double */
#define FBX_VM_POW_BLOCK_FN(o, a, b, n) _Generic((o), float *: fbx_vm_powf_block, default: fbx_vm_pow_block_d)(o, a, b, n)

#endif
