/* Vectorized float32 row primitives (ops/rowops.h). Lanes are written as
 * small fixed-width inner loops over local arrays, which GCC and clang turn
 * into vector registers at -O2 with the kernels' settings (ops/kopt.h). */
#include "ops/kopt.h" /* first: the loops' compiler settings */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ops/vmath.h"
#include "ops/pointwise.h" /* FBX_PW_CLONES */
#include "ops/rowops.h"

#define FL 16  /* float lanes */
#define DL 8   /* double lanes */
#define SL 32  /* float lanes of the blocked sums */
#define SBLK 512 /* elements per block of the blocked sums: each lane adds SBLK / SL = 16 values in float */

#if defined(__GNUC__)
#define ROW_INLINE static inline __attribute__((always_inline))
/* A loop unrolled whole (a lane fold's tree: its steps then stay in
 * registers instead of a loop over a stack array). */
#if defined(__clang__)
#define ROW_UNROLL _Pragma("clang loop unroll(full)")
#else
#define ROW_UNROLL _Pragma("GCC unroll 16")
#endif
/* Prefetch hints: a load of an address that is not mapped is never a fault
 * for them, so callers may name bytes past the end of a row (the next row
 * of a contiguous tensor, which is what they are for); the address goes
 * through an integer so no out-of-bounds pointer is formed. */
#define ROW_PREFETCH(p, off) __builtin_prefetch((const void *)((uintptr_t)(p) + (uintptr_t)(off)), 0, 3)
#define ROW_PREFETCH_W(p, off) __builtin_prefetch((const void *)((uintptr_t)(p) + (uintptr_t)(off)), 1, 3)
#else
#define ROW_INLINE static inline
#define ROW_UNROLL
#define ROW_PREFETCH(p, off) ((void)0)
#define ROW_PREFETCH_W(p, off) ((void)0)
#endif
/* Memory-bound passes stream ahead by this many bytes (4 KiB: the hardware
 * prefetchers stop at page boundaries); passes over a row in cache fetch
 * the next row's matching line (the row's own length ahead). */
#define PF_AHEAD 4096
#define PF_SPAN 256 /* values per burst of next-row prefetches */

/* Ask for the lines of [p, p + n) moved `ahead` bytes. */
ROW_INLINE void prefetch_span(const float *p, int64_t n, int64_t ahead) {
  for (int64_t k = 0; k < n; k += 16) ROW_PREFETCH(p + k, ahead);
}

/* Lane combination, pairwise. */
ROW_INLINE float fold_f(float *acc) {
  ROW_UNROLL
  for (int w = FL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) acc[k] += acc[k + w];
  return acc[0];
}
ROW_INLINE double fold_d(double *acc) {
  ROW_UNROLL
  for (int w = DL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) acc[k] += acc[k + w];
  return acc[0];
}
/* SL float lanes (two halves) combined pairwise in double. */
ROW_INLINE double fold_sd(const float *a0, const float *a1) {
  double d[SL / 2];
  ROW_UNROLL
  for (int k = 0; k < SL / 2; k++) d[k] = (double)a0[k] + (double)a1[k];
  ROW_UNROLL
  for (int w = SL / 4; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) d[k] += d[k + w];
  return d[0];
}

/* NaN sticks: once m is NaN neither test replaces it; a NaN x replaces m.
 * The exact form, which GCC leaves scalar (the || does not vectorize); the
 * fallback of extreme_body. */
ROW_INLINE float extreme_exact(const float *x, int64_t n, bool is_max) {
  float r = is_max ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < n; i++) {
    bool better = is_max ? x[i] > r : x[i] < r;
    r = (better || x[i] != x[i]) ? x[i] : r;
  }
  return r;
}

/* max (is_max) or min of x[0, n): 16 lanes (two 8-float vectors, in GCC's
 * vector extension: the autovectorizer left the select of a lane loop
 * scalar) of plain compare-selects, where a NaN x never wins a compare,
 * and beside them 16 lanes adding x - x, which is 0 for every finite x and
 * NaN once an inf or NaN has passed. A row whose check is not 0 is taken
 * again by extreme_exact, so NaN propagates as in PyTorch (and rows
 * holding +-inf, rare, pay a second pass). */
typedef float row_v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t row_i8 __attribute__((vector_size(32)));
/* take_a ? a : b per lane (a macro: a function returning a 32-byte vector
 * would warn of the ABI in the default clone) */
#define ROW_SEL(take_a, a, b) ((row_v8)(((row_i8)(a) & (take_a)) | ((row_i8)(b) & ~(take_a))))
ROW_INLINE float extreme_body(const float *x, int64_t n, bool is_max) {
  float init = is_max ? -INFINITY : INFINITY;
  row_v8 m0 = {init, init, init, init, init, init, init, init}, m1 = m0, b0 = {0}, b1 = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    ROW_PREFETCH(x + i, PF_AHEAD);
    row_v8 v0 = *(const row_v8 *)(x + i), v1 = *(const row_v8 *)(x + i + 8);
    m0 = ROW_SEL(is_max ? v0 > m0 : v0 < m0, v0, m0);
    m1 = ROW_SEL(is_max ? v1 > m1 : v1 < m1, v1, m1);
    b0 += v0 - v0;
    b1 += v1 - v1;
  }
  m0 = ROW_SEL(is_max ? m1 > m0 : m1 < m0, m1, m0);
  b0 += b1;
  float r = m0[0], b = 0;
  for (int k = 1; k < 8; k++) r = (is_max ? m0[k] > r : m0[k] < r) ? m0[k] : r;
  for (int k = 0; k < 8; k++) b += b0[k];
  for (; i < n; i++) {
    r = (is_max ? x[i] > r : x[i] < r) ? x[i] : r;
    b += x[i] - x[i];
  }
  return b == 0 ? r : extreme_exact(x, n, is_max);
}
ROW_INLINE float max_body(const float *x, int64_t n) { return extreme_body(x, n, true); }

FBX_PW_CLONES float fbx_row_max_f32(const float *x, int64_t n) { return max_body(x, n); }
FBX_PW_CLONES float fbx_row_min_f32(const float *x, int64_t n) { return extreme_body(x, n, false); }

/* The double-lane sums: the exact fallback of the blocked float sums. */
ROW_INLINE double sum_body_d(const float *x, int64_t n) {
  double acc[DL] = {0};
  int64_t i = 0;
  for (; i + DL <= n; i += DL)
    for (int k = 0; k < DL; k++) acc[k] += (double)x[i + k];
  double t = 0;
  for (; i < n; i++) t += (double)x[i];
  return fold_d(acc) + t;
}

ROW_INLINE double sqdev_body_d(const float *x, int64_t n, double c) {
  double acc[DL] = {0};
  int64_t i = 0;
  for (; i + DL <= n; i += DL)
    for (int k = 0; k < DL; k++) {
      double d = (double)x[i + k] - c;
      acc[k] += d * d;
    }
  double t = 0;
  for (; i < n; i++) {
    double d = (double)x[i] - c;
    t += d * d;
  }
  return fold_d(acc) + t;
}

/* Blocked sums of x - c: SL float lanes over blocks of SBLK elements,
 * each block's lanes added into a double total (so a lane holds at most 16
 * values and the error is that of a 16-term float sum: see rowops.h).
 * layer_norm's mean shifts by the row's first value, so that a mean far
 * from zero next to a small spread keeps its bits (the plain sums: c = 0).
 * A float lane can overflow where the double sum would not (|x| near
 * FLT_MAX); a total that is not finite is taken again in double lanes,
 * which also gives inf/NaN inputs their exact result. `ahead`: prefetch
 * distance in bytes, 0 for none. */
ROW_INLINE double sum_body(const float *x, int64_t n, int64_t ahead, float c) {
  double tot = 0;
  int64_t i = 0, nv = n - n % SL;
  while (i < nv) {
    int64_t e = i + SBLK < nv ? i + SBLK : nv;
    /* two arrays: GCC keeps each in registers; one of SL lanes it spills */
    float a0[SL / 2] = {0}, a1[SL / 2] = {0};
    for (; i < e; i += SL) {
      if (ahead) {
        ROW_PREFETCH(x + i, ahead);
        ROW_PREFETCH(x + i + 16, ahead);
      }
      for (int k = 0; k < SL / 2; k++) a0[k] += x[i + k] - c;
      for (int k = 0; k < SL / 2; k++) a1[k] += x[i + SL / 2 + k] - c;
    }
    tot += fold_sd(a0, a1);
  }
  tot += (double)c * (double)nv; /* the body's shift back; the tail is added unshifted */
  for (; i < n; i++) tot += (double)x[i];
  return isfinite(tot) ? tot : sum_body_d(x, n);
}

/* Sum of (x - c)^2 with c = chi + clo split into floats: (x - chi) is
 * exact near chi and clo keeps c's low bits, so the deviation has float
 * precision whatever the mean's magnitude; squares are added as sum_body
 * adds. */
ROW_INLINE double sqdev_body(const float *x, int64_t n, double c, int64_t ahead) {
  float chi = (float)c, clo = (float)(c - (double)chi);
  if (!isfinite(chi)) return sqdev_body_d(x, n, c);
  double tot = 0;
  int64_t i = 0, nv = n - n % SL;
  while (i < nv) {
    int64_t e = i + SBLK < nv ? i + SBLK : nv;
    float a0[SL / 2] = {0}, a1[SL / 2] = {0};
    for (; i < e; i += SL) {
      ROW_PREFETCH(x + i, ahead);
      ROW_PREFETCH(x + i + 16, ahead);
      for (int k = 0; k < SL / 2; k++) {
        float d = (x[i + k] - chi) - clo;
        a0[k] += d * d;
      }
      for (int k = 0; k < SL / 2; k++) {
        float d = (x[i + SL / 2 + k] - chi) - clo;
        a1[k] += d * d;
      }
    }
    tot += fold_sd(a0, a1);
  }
  for (; i < n; i++) {
    double d = (double)x[i] - c;
    tot += d * d;
  }
  return isfinite(tot) ? tot : sqdev_body_d(x, n, c);
}

/* No prefetches: in 2 MiB pages (core/tensor/hugepages.h) the hardware
 * streams this loop faster without them (fusebox bench of a [4096, 1024]
 * row sum, 2 threads, 3 alternated rounds: 0.66-0.74 ms against
 * 0.79-0.87; in 4 KiB pages no difference). */
FBX_PW_CLONES double fbx_row_sum_f32(const float *x, int64_t n) { return sum_body(x, n, 0, 0.0f); }
FBX_PW_CLONES double fbx_row_sqdev_f32(const float *x, int64_t n, double c) {
  return sqdev_body(x, n, c, (int64_t)sizeof(float) * n);
}

/* e^d for d <= 0 (or -inf), never NaN: fbx_vm_expf's steps without its
 * upper clamp and NaN selects, which cannot act on such d. */
ROW_INLINE float exp_nonpos(float d) {
  float xc = d < -104.0f ? -104.0f : d;
  float kf = fbx_vm_rint_small(xc * FBX_VM_LOG2EF);
  float r = (xc - kf * FBX_VM_LN2HF) - kf * FBX_VM_LN2LF;
  float e = 1.0f + (r + fbx_vm_exp_poly(r));
  return fbx_vm_ldexpf(e, (int32_t)kf);
}

FBX_PW_CLONES double fbx_row_sumexp_f32(const float *x, int64_t n, float m) {
  double acc[DL] = {0};
  int64_t i = 0;
  for (; i + DL <= n; i += DL)
    for (int k = 0; k < DL; k++) acc[k] += (double)fbx_vm_expf(x[i + k] - m);
  double t = 0;
  for (; i < n; i++) t += (double)fbx_vm_expf(x[i] - m);
  return fold_d(acc) + t;
}

ROW_INLINE float sumf_body(const float *x, int64_t n) {
  float acc[FL] = {0};
  int64_t i = 0;
  for (; i + FL <= n; i += FL)
    for (int k = 0; k < FL; k++) acc[k] += x[i + k];
  float t = 0;
  for (; i < n; i++) t += x[i];
  return fold_f(acc) + t;
}

/* The last pass of softmax (y = e / s) or log_softmax (y = (x - m) - log s). */
ROW_INLINE void softmax_finish(const float *x, float *y, int64_t n, bool log, float m, float s) {
  if (log) {
    float ls = logf(s); /* (x - m) - ls, as PyTorch: x - (m + ls) would lose ls's bits next to a big m */
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
  } else {
    float inv = 1.0f / s;
    for (int64_t i = 0; i < n; i++) y[i] *= inv;
  }
}

/* After the max (from memory, streaming ahead): the exponentials written
 * to y, in spans of PF_SPAN values, each span first asking for the same
 * span of the next row (this loop is bound by arithmetic, so the next
 * row's fetch overlaps it); their sum in float lanes; then the scaling (or
 * x - m - log(sum)). A max that is NaN or infinite makes every result NaN
 * (inf - inf, or NaN, reaches the sum). */
FBX_PW_CLONES void fbx_row_softmax_portable_f32(const float *x, float *y, int64_t n, bool log) {
  float m = max_body(x, n);
  if (!isfinite(m)) {
    for (int64_t i = 0; i < n; i++) y[i] = NAN;
    return;
  }
  int64_t ahead = (int64_t)sizeof(float) * n;
  for (int64_t i0 = 0; i0 < n; i0 += PF_SPAN) {
    int64_t e = i0 + PF_SPAN < n ? i0 + PF_SPAN : n;
    prefetch_span(x + i0, e - i0, ahead);
    for (int64_t i = i0; i < e; i++) y[i] = exp_nonpos(x[i] - m);
  }
  softmax_finish(x, y, n, log, m, sumf_body(y, n));
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(FBX_PW_NO_FMA)
#include <immintrin.h>
#define ROW_AVX512 1

/* Row y[0, n) from VEC, an __m512 expression of the element index I and
 * the lane mask K (names the caller picks): masked ordinary stores up to
 * y's first 64-byte boundary, non-temporal stores (vmovntps: the line is
 * not read from memory first) from there, the tail masked. A y that is not
 * float-aligned gets ordinary stores throughout. For AVX-512 functions; the
 * caller fences once after its rows (fbx_row_stream_fence). */
#define ROW_STREAM(y, n, I, K, VEC)                                                                                    \
  do {                                                                                                                 \
    int64_t i_ = 0, h_ = (int64_t)(((64 - ((uintptr_t)(y) & 63)) & 63) / sizeof(float));                               \
    if ((uintptr_t)(y) % sizeof(float) || h_ > (n)) h_ = (n);                                                           \
    for (; i_ < h_; i_ += 16) {                                                                                        \
      int64_t I = i_, c_ = h_ - i_;                                                                                    \
      __mmask16 K = c_ >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << c_) - 1u);                                       \
      _mm512_mask_storeu_ps((y) + I, K, (VEC));                                                                        \
    }                                                                                                                  \
    for (i_ = h_; i_ + 16 <= (n); i_ += 16) {                                                                          \
      int64_t I = i_;                                                                                                  \
      __mmask16 K = (__mmask16)0xffff;                                                                                 \
      _mm512_stream_ps((y) + I, (VEC));                                                                                \
    }                                                                                                                  \
    if (i_ < (n)) {                                                                                                    \
      int64_t I = i_;                                                                                                  \
      __mmask16 K = (__mmask16)((1u << ((n) - i_)) - 1u);                                                              \
      _mm512_mask_storeu_ps((y) + I, K, (VEC));                                                                        \
    }                                                                                                                  \
  } while (0)
#define ROW_STREAM_MAXN 4096 /* softmax's exponentials kept on the stack for a streamed row: 16 KiB */

/* e^(v - m) for v - m <= 0 (or NaN) in 16 lanes: exp_nonpos's reduction
 * and polynomial, with the instructions generic C cannot reach: a
 * round-to-nearest (vrndscaleps) for the magic-number add and subtract,
 * and vscalefps for the ldexp, which also gives the subnormal results and
 * 0 past the clamp. NaN lanes stay NaN. */
__attribute__((target("avx512f"))) static inline __m512 exp_nonpos16(__m512 v, __m512 m) {
  __m512 d = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_sub_ps(v, m)); /* NaN: the second operand, d */
  __m512 kf = _mm512_roundscale_ps(_mm512_mul_ps(d, _mm512_set1_ps(FBX_VM_LOG2EF)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(FBX_VM_LN2HF), d);
  r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(FBX_VM_LN2LF), r);
  __m512 r2 = _mm512_mul_ps(r, r);
  __m512 p01 = _mm512_fmadd_ps(r, _mm512_set1_ps(1.666666716e-01f), _mm512_set1_ps(5.000000000e-01f));
  __m512 p23 = _mm512_fmadd_ps(r, _mm512_set1_ps(8.333310485e-03f), _mm512_set1_ps(4.166646674e-02f));
  __m512 p45 = _mm512_fmadd_ps(r, _mm512_set1_ps(1.989098091e-04f), _mm512_set1_ps(1.393364160e-03f));
  __m512 p = _mm512_mul_ps(r2, _mm512_fmadd_ps(r2, _mm512_fmadd_ps(r2, p45, p23), p01));
  __m512 e = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(r, p));
  return _mm512_scalef_ps(e, kf);
}

/* The largest of x[0, n) in 16-lane vmaxps steps, four chains, for
 * softmax only: vmaxps drops a NaN that meets a number in its first
 * operand, so a row holding NaN may give a number here. softmax does not
 * need this max to see NaN: the NaN value's e^(x - m) is NaN, the sum is
 * NaN, and every result of the row is NaN, as with a NaN max. One
 * instruction a vector where the NaN-aware select takes three (compare,
 * unordered compare, blend). */
__attribute__((target("avx512f"))) static inline float max_plain16(const float *x, int64_t n) {
  __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
    m2 = _mm512_max_ps(m2, _mm512_loadu_ps(x + i + 32));
    m3 = _mm512_max_ps(m3, _mm512_loadu_ps(x + i + 48));
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
    m0 = _mm512_mask_max_ps(m0, k, m0, _mm512_maskz_loadu_ps(k, x + i));
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

/* softmax on AVX-512 (measured on this project's zen4 machine, one thread,
 * a 1024-value row in L1: 0.37 ns a value against the generic clone's
 * 0.50): the max (max_plain16), then one pass that writes e^(x - m) and
 * sums it in two (the generic code sums y in a pass of its own), asking
 * for the next row's matching lines as it goes (this pass is bound by
 * arithmetic, the max pass by memory), the tail masked. The sum is in
 * float lanes as before. */
__attribute__((target("avx512f"))) static void row_softmax_avx512(const float *x, float *y, int64_t n, bool log,
                                                                 bool stream) {
  float m = max_plain16(x, n);
  if (!isfinite(m)) {
    for (int64_t i = 0; i < n; i++) y[i] = NAN;
    return;
  }
  /* streamed (fbx_row_softmax_stream_f32): the exponentials go to the stack
   * and y is written once, in the last pass */
  float tmp[ROW_STREAM_MAXN] __attribute__((aligned(64)));
  float *ev = stream && !log && n <= ROW_STREAM_MAXN ? tmp : y;
  stream = stream && (log || ev == tmp);
  __m512 vm = _mm512_set1_ps(m), a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    ROW_PREFETCH(x + i, (int64_t)sizeof(float) * n);
    ROW_PREFETCH(x + i + 16, (int64_t)sizeof(float) * n);
    __m512 e0 = exp_nonpos16(_mm512_loadu_ps(x + i), vm), e1 = exp_nonpos16(_mm512_loadu_ps(x + i + 16), vm);
    if (!log) _mm512_storeu_ps(ev + i, e0), _mm512_storeu_ps(ev + i + 16, e1);
    a0 = _mm512_add_ps(a0, e0), a1 = _mm512_add_ps(a1, e1);
  }
  for (; i < n; i += 16) {
    __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
    __m512 e = exp_nonpos16(_mm512_maskz_loadu_ps(k, x + i), vm);
    if (!log) _mm512_mask_storeu_ps(ev + i, k, e);
    a0 = _mm512_mask_add_ps(a0, k, a0, e);
  }
  float s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
  if (!stream) {
    softmax_finish(x, y, n, log, m, s);
  } else if (log) { /* softmax_finish's operations */
    __m512 vl = _mm512_set1_ps(logf(s));
    ROW_STREAM(y, n, q, kq, _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(kq, x + q), vm), vl));
  } else {
    __m512 vi = _mm512_set1_ps(1.0f / s);
    ROW_STREAM(y, n, q, kq, _mm512_mul_ps(_mm512_maskz_loadu_ps(kq, ev + q), vi));
  }
}
#endif

void fbx_row_softmax_f32(const float *x, float *y, int64_t n, bool log) {
#ifdef ROW_AVX512
  if (__builtin_cpu_supports("avx512f")) {
    row_softmax_avx512(x, y, n, log, false);
    return;
  }
#endif
  fbx_row_softmax_portable_f32(x, y, n, log);
}

void fbx_row_softmax_stream_f32(const float *x, float *y, int64_t n, bool log) {
#ifdef ROW_AVX512
  if (__builtin_cpu_supports("avx512f")) {
    row_softmax_avx512(x, y, n, log, true);
    return;
  }
#endif
  fbx_row_softmax_portable_f32(x, y, n, log);
}

FBX_PW_CLONES void fbx_cols_softmax_f32(const float *x, float *y, int64_t R, int64_t stride, int64_t n, bool log) {
  float m[256], s[256];
  if (n > 256) n = 256; /* the caller's tiles are at most 256 wide */
  for (int64_t k = 0; k < n; k++) m[k] = -INFINITY, s[k] = 0;
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * stride;
    for (int64_t k = 0; k < n; k++) m[k] = (xr[k] > m[k] || xr[k] != xr[k]) ? xr[k] : m[k];
  }
  if (log) {
    for (int64_t r = 0; r < R; r++) {
      const float *xr = x + r * stride;
      for (int64_t k = 0; k < n; k++) s[k] += fbx_vm_expf(xr[k] - m[k]);
    }
    for (int64_t k = 0; k < n; k++) s[k] = logf(s[k]);
    for (int64_t r = 0; r < R; r++) {
      const float *xr = x + r * stride;
      float *yr = y + r * stride;
      for (int64_t k = 0; k < n; k++) yr[k] = (xr[k] - m[k]) - s[k];
    }
  } else {
    for (int64_t r = 0; r < R; r++) {
      const float *xr = x + r * stride;
      float *yr = y + r * stride;
      for (int64_t k = 0; k < n; k++) s[k] += (yr[k] = fbx_vm_expf(xr[k] - m[k]));
    }
    for (int64_t k = 0; k < n; k++) s[k] = 1.0f / s[k];
    for (int64_t r = 0; r < R; r++) {
      float *yr = y + r * stride;
      for (int64_t k = 0; k < n; k++) yr[k] *= s[k];
    }
  }
}

#ifdef ROW_AVX512
/* layer_norm's last pass, y = (x - m) r w + b (the generic loop's products
 * and its contraction: ((x - m) r) w + b as one FMA, (x - m) r + b without
 * w; a missing b is +0), with non-temporal stores (ROW_STREAM): the
 * output row goes to memory without its lines being read first. For
 * outputs that would not stay in cache (fbx_row_stream_wanted). In a
 * harness of 2 threads, the input evicted before each run, 300 runs
 * alternated with ordinary stores (medians): [2048, 1024] 0.78 -> 0.58 ms,
 * [4096, 1024] 1.59 -> 1.17 ms. */
__attribute__((target("avx512f"))) static inline __m512 ln_vec(const float *x, const float *w, const float *b,
                                                              int64_t i, __mmask16 k, __m512 vm, __m512 vr) {
  __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm);
  __m512 vb = b ? _mm512_maskz_loadu_ps(k, b + i) : _mm512_setzero_ps();
  if (!w) return _mm512_fmadd_ps(d, vr, vb);
  return _mm512_fmadd_ps(_mm512_mul_ps(d, vr), _mm512_maskz_loadu_ps(k, w + i), vb);
}

__attribute__((target("avx512f"))) static void ln_apply_stream(const float *x, float *y, int64_t n, const float *w,
                                                              const float *b, float m, float r) {
  __m512 vm = _mm512_set1_ps(m), vr = _mm512_set1_ps(r);
  ROW_STREAM(y, n, i, k, ln_vec(x, w, b, i, k, vm, vr));
}
#endif

void fbx_row_stream_fence(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_ia32_sfence();
#endif
}

/* The size of the largest cache cpu0 sees, from sysfs ("32768K"): on a
 * chip whose last level is split among core complexes this is one
 * complex's share, where sysconf(_SC_LEVEL3_CACHE_SIZE) may report the
 * whole chip's (320 MiB for 32 MiB a complex on this project's machine). */
static int64_t sysfs_cache_bytes(void) {
  int64_t best = 0;
  for (int i = 0; i < 8; i++) {
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (v <= 0) continue;
    int64_t b = *end == 'K' ? v << 10 : *end == 'M' ? v << 20 : *end == 'G' ? v << 30 : v;
    if (b > best) best = b;
  }
  return best;
}

int64_t fbx_row_stream_bytes(void) {
  static _Atomic int64_t cached;
  int64_t v = cached;
  if (v) return v;
  v = sysfs_cache_bytes();
  if (v <= 0) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    v = l3 > 0 ? l3 : l2 > 0 ? l2 : 32l << 20;
  }
  cached = v;
  return v;
}

bool fbx_row_stream_wanted(int64_t bytes) {
#ifdef ROW_AVX512
  return bytes >= fbx_row_stream_bytes() && __builtin_cpu_supports("avx512f");
#else
  (void)bytes;
  return false;
#endif
}

/* y (may be NULL): the row layer_norm will write, asked for (for writing)
 * before the pass over x in cache, so that its lines' reads from memory
 * overlap that pass instead of stalling the stores (measured: about 6% of
 * the row's time; softmax, whose stores follow exp, did not gain). */
ROW_INLINE void moments_body(const float *x, int64_t n, float eps, float *mean, float *rstd, float *y) {
  double md = sum_body(x, n, PF_AHEAD, x[0]) / (double)n;
  if (y)
    for (int64_t k = 0; k < n; k += 16) ROW_PREFETCH_W(y + k, 0);
  double var = sqdev_body(x, n, md, (int64_t)sizeof(float) * n) / (double)n;
  *mean = (float)md;
  *rstd = (float)(1.0 / sqrt(var + (double)eps));
}

FBX_PW_CLONES void fbx_row_moments_f32(const float *x, int64_t n, float eps, float *mean, float *rstd) {
  moments_body(x, n, eps, mean, rstd, NULL);
}

FBX_PW_CLONES void fbx_row_layer_norm_f32(const float *x, float *y, int64_t n, const float *w, const float *b,
                                          float eps, float *mean, float *rstd, bool stream) {
  float mf, r;
#ifdef ROW_AVX512
  stream = stream && __builtin_cpu_supports("avx512f");
#else
  stream = false;
#endif
  moments_body(x, n, eps, &mf, &r, stream ? NULL : y); /* streamed, y's lines are not read: none asked for */
  *mean = mf, *rstd = r;
#ifdef ROW_AVX512
  if (stream) {
    ln_apply_stream(x, y, n, w, b, mf, r);
    return;
  }
#endif
  if (w && b)
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r * w[i] + b[i];
  else if (w) /* + 0: PyTorch adds a zero bias, so a zero result is +0 (x = -0 with mean +0, say) */
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r * w[i] + 0.0f;
  else if (b)
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r + b[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r + 0.0f;
}

/* dw += g (rstd x + nb), db += g, dx = rstd g w + b x + c over n values;
 * the caller's buffers are distinct (dx a fresh output, dw and db its
 * partial sums), which restrict tells the vectorizer. */
ROW_INLINE void lnb_span(const float *restrict g, const float *restrict x, const float *restrict w, float *restrict dx,
                         float *restrict dw, float *restrict db, int64_t n, float rstd, float nb, float b, float c) {
  for (int64_t i = 0; i < n; i++) {
    dw[i] += g[i] * (rstd * x[i] + nb);
    db[i] += g[i];
    dx[i] = rstd * g[i] * w[i] + b * x[i] + c;
  }
}

/* dx, dw and db from the row sums ds = sum(g w x), dbs = sum(g w): one
 * pass over the row in cache (when all are wanted and w is given, the
 * common case; else a loop each), which asks for the next row's g and x
 * span by span. */
ROW_INLINE void lnb_apply(const float *g, const float *x, float *dx, int64_t n, const float *w, float mean,
                          float rstd, float *dw, float *db, double ds, double dbs) {
  float b = 0, c = 0, nb = -rstd * mean;
  if (dx) {
    double scale = 1.0 / (double)n, a = rstd;
    double bd = (dbs * (double)mean - ds) * a * a * a * scale;
    b = (float)bd, c = (float)(-bd * (double)mean - dbs * a * scale);
  }
  int64_t ahead = (int64_t)sizeof(float) * n;
  if (dx && w && dw && db) {
    for (int64_t i0 = 0; i0 < n; i0 += PF_SPAN) {
      int64_t e = i0 + PF_SPAN < n ? i0 + PF_SPAN : n;
      prefetch_span(g + i0, e - i0, ahead);
      prefetch_span(x + i0, e - i0, ahead);
      lnb_span(g + i0, x + i0, w + i0, dx + i0, dw + i0, db + i0, e - i0, rstd, nb, b, c);
    }
    return;
  }
  if (dw)
    for (int64_t i = 0; i < n; i++) dw[i] += g[i] * (rstd * x[i] + nb);
  if (db)
    for (int64_t i = 0; i < n; i++) db[i] += g[i];
  if (dx && w)
    for (int64_t i = 0; i < n; i++) dx[i] = rstd * g[i] * w[i] + b * x[i] + c;
  else if (dx)
    for (int64_t i = 0; i < n; i++) dx[i] = rstd * g[i] + b * x[i] + c;
}

/* The row sums first, while g and x come from memory; then lnb_apply. */
FBX_PW_CLONES void fbx_row_layer_norm_bwd_f32(const float *g, const float *x, float *dx, int64_t n, const float *w,
                                              float mean, float rstd, float *dw, float *db) {
  double ds = 0, dbs = 0;
  if (dx) {
    double as[DL] = {0}, ab[DL] = {0}, ts = 0, tb = 0;
    int64_t i = 0, nv = n - n % DL;
    for (int64_t i0 = 0; i0 < nv; i0 += PF_SPAN) {
      int64_t e = i0 + PF_SPAN < nv ? i0 + PF_SPAN : nv;
      prefetch_span(g + i0, e - i0, PF_AHEAD);
      prefetch_span(x + i0, e - i0, PF_AHEAD);
      if (w)
        for (i = i0; i < e; i += DL)
          for (int k = 0; k < DL; k++) {
            float gw = g[i + k] * w[i + k];
            as[k] += (double)(gw * x[i + k]);
            ab[k] += (double)gw;
          }
      else
        for (i = i0; i < e; i += DL)
          for (int k = 0; k < DL; k++) {
            as[k] += (double)(g[i + k] * x[i + k]);
            ab[k] += (double)g[i + k];
          }
    }
    for (i = nv; i < n; i++) {
      float gw = w ? g[i] * w[i] : g[i];
      ts += (double)(gw * x[i]);
      tb += (double)gw;
    }
    ds = fold_d(as) + ts, dbs = fold_d(ab) + tb;
  }
  lnb_apply(g, x, dx, n, w, mean, rstd, dw, db, ds, dbs);
}

/* One pass over g and x from memory for the sum of x - x[0] (exactly
 * sum_body's lanes, blocks and order, so the mean is moments_body's to the
 * bit) and the two gradient sums (8 double lanes each, over the same
 * 32-value steps); then the squared deviations in cache and lnb_apply. */
ROW_INLINE void lnb_stats_body(const float *g, const float *x, float *dx, int64_t n, const float *w, float eps,
                               float *dw, float *db) {
  float c = x[0];
  double tot = 0, as[DL] = {0}, ab[DL] = {0}, ts = 0, tb = 0;
  int64_t i = 0, nv = n - n % SL;
  while (i < nv) {
    int64_t e = i + SBLK < nv ? i + SBLK : nv;
    float a0[SL / 2] = {0}, a1[SL / 2] = {0};
    for (; i < e; i += SL) {
      ROW_PREFETCH(x + i, PF_AHEAD);
      ROW_PREFETCH(x + i + 16, PF_AHEAD);
      ROW_PREFETCH(g + i, PF_AHEAD);
      ROW_PREFETCH(g + i + 16, PF_AHEAD);
      for (int k = 0; k < SL / 2; k++) a0[k] += x[i + k] - c;
      for (int k = 0; k < SL / 2; k++) a1[k] += x[i + SL / 2 + k] - c;
      for (int q = 0; q < SL; q += DL)
        for (int k = 0; k < DL; k++) {
          float gw = w ? g[i + q + k] * w[i + q + k] : g[i + q + k];
          as[k] += (double)(gw * x[i + q + k]);
          ab[k] += (double)gw;
        }
    }
    tot += fold_sd(a0, a1);
  }
  tot += (double)c * (double)nv;
  for (int64_t k = nv; k < n; k++) {
    tot += (double)x[k];
    float gw = w ? g[k] * w[k] : g[k];
    ts += (double)(gw * x[k]);
    tb += (double)gw;
  }
  if (!isfinite(tot)) tot = sum_body_d(x, n);
  double md = tot / (double)n;
  double var = sqdev_body(x, n, md, (int64_t)sizeof(float) * n) / (double)n;
  float mean = (float)md, rstd = (float)(1.0 / sqrt(var + (double)eps));
  lnb_apply(g, x, dx, n, w, mean, rstd, dw, db, fold_d(as) + ts, fold_d(ab) + tb);
}

FBX_PW_CLONES void fbx_row_layer_norm_bwd_x_f32(const float *g, const float *x, float *dx, int64_t n, const float *w,
                                                float eps, float *dw, float *db) {
  if (w) lnb_stats_body(g, x, dx, n, w, eps, dw, db);
  else lnb_stats_body(g, x, dx, n, NULL, eps, dw, db);
}

FBX_PW_CLONES void fbx_row_affine_f32(const float *x, float *y, int64_t n, float scale, float shift) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale + shift;
}
