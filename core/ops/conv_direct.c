/* The float32 direct convolution kernel (conv_direct.h). */
#include "ops/conv_direct.h"

#include <stdlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONV_X86 1
#include <immintrin.h>
#endif

bool fbx_conv_direct_avx512 = true;

/* Block sizes of the two kernels: output channels, positions per vector,
 * vectors per block, input channels per chunk. With a block's weights in
 * the L1 cache its grid reads come from the L2 cache. On the EPYC here
 * (3x3, 64 -> 64 channels, a 14-row band of 56-wide rows on one thread, in
 * a harness that timed the sums alone, without storing them into an
 * output) the AVX-512 block ran at 99% of the core's FMA peak over the
 * positions it computed with all 64 channels in one chunk (98% with 32,
 * 97% with 16), the AVX2 block at 95%; with the stores, bench_conv_direct
 * measures 94% and 87% of the output's FLOPs. Earlier the AVX2 kernel over
 * [8, 64, 56, 56] on 2 threads took 11.4 ms with chunks of 32, 11.8 with
 * 16, 12.2 with 8 and 12.7 with all 64. */
enum { OB16 = 8, PV16 = 16, CCH16 = 64, OB8 = 4, PV8 = 8, CCH8 = 32, NV = 3 };

#ifdef CONV_X86
static bool use512(void) {
  __builtin_cpu_init();
  return fbx_conv_direct_avx512 && __builtin_cpu_supports("avx512f");
}

bool fbx_conv_direct_ok(void) {
  __builtin_cpu_init();
  return use512() || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}
#else
static bool use512(void) { return false; }
bool fbx_conv_direct_ok(void) { return false; }
#endif

int64_t fbx_conv_direct_ob(void) { return use512() ? OB16 : OB8; }

int64_t fbx_conv_direct_slack(void) { return PV16; }

int64_t fbx_conv_direct_wsize(int64_t Og, int64_t Cg, int64_t taps) {
  int64_t ob = fbx_conv_direct_ob();
  return (Og + ob - 1) / ob * Cg * taps * ob;
}

void fbx_conv_direct_pack(const float *w, int64_t Og, int64_t Cg, int64_t taps, float *wd) {
  int64_t OB = fbx_conv_direct_ob(), nob = (Og + OB - 1) / OB;
  for (int64_t ob = 0; ob < nob; ob++)
    for (int64_t c = 0; c < Cg; c++)
      for (int64_t t = 0; t < taps; t++)
        for (int64_t k = 0; k < OB; k++) {
          int64_t o = ob * OB + k;
          wd[((ob * Cg + c) * taps + t) * OB + k] = o < Og ? w[(o * Cg + c) * taps + t] : 0.0f;
        }
}

#ifdef CONV_X86
/* Where one vector of a block goes in the output: its lanes (positions
 * q0 + i) are kept in runs, one per output row that they reach; the run of
 * row r is lanes [lo, hi) with hi - lo <= Wo, which go to y + q0 - r * (Wp
 * - Wo) + i: run s is stored with lane mask mask[s] at y + off[s] (lanes
 * outside the mask are neither read nor written). full: one run of all
 * lanes (a plain vector store). */
#define MAXRUNS 16
typedef struct vec_runs {
  int n;
  bool full;
  int64_t off[MAXRUNS];
  uint32_t mask[MAXRUNS];
} vec_runs;

/* The runs of the vector of `lanes` positions from q0, positions < pn only. */
static void vec_runs_of(vec_runs *vr, const fbx_conv_direct_out *out, int64_t q0, int lanes, int64_t pn) {
  int64_t Wp = out->Wp, Wo = out->Wo, end = pn - q0 < lanes ? pn - q0 : lanes;
  vr->n = 0;
  for (int64_t r = q0 / Wp; r * Wp < q0 + end; r++) {
    int64_t lo = r * Wp - q0 > 0 ? r * Wp - q0 : 0, hi = r * Wp + Wo - q0 < end ? r * Wp + Wo - q0 : end;
    if (hi <= lo) continue;
    vr->off[vr->n] = q0 - r * (Wp - Wo);
    vr->mask[vr->n++] = (uint32_t)(((1ull << hi) - 1) & ~((1ull << lo) - 1));
  }
  vr->full = vr->n == 1 && vr->mask[0] == (uint32_t)((1ull << lanes) - 1);
}

__attribute__((target("avx512f"), always_inline)) static inline void put16(float *y, const vec_runs *vr, __m512 a) {
  if (vr->full) _mm512_storeu_ps(y + vr->off[0], a);
  else
    for (int s = 0; s < vr->n; s++) _mm512_mask_storeu_ps(y + vr->off[s], (__mmask16)vr->mask[s], a);
}

__attribute__((target("avx512f"), always_inline)) static inline __m512 get16(const float *y, const vec_runs *vr) {
  if (vr->full) return _mm512_loadu_ps(y + vr->off[0]);
  __m512 a = _mm512_setzero_ps();
  for (int s = 0; s < vr->n; s++) a = _mm512_mask_loadu_ps(a, (__mmask16)vr->mask[s], y + vr->off[s]);
  return a;
}

__attribute__((target("avx2"), always_inline)) static inline __m256i lanes8(uint32_t mask) {
  __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)mask), bit), bit);
}

__attribute__((target("avx2"), always_inline)) static inline void put8(float *y, const vec_runs *vr, __m256 a) {
  if (vr->full) _mm256_storeu_ps(y + vr->off[0], a);
  else
    for (int s = 0; s < vr->n; s++) _mm256_maskstore_ps(y + vr->off[s], lanes8(vr->mask[s]), a);
}

__attribute__((target("avx2"), always_inline)) static inline __m256 get8(const float *y, const vec_runs *vr) {
  if (vr->full) return _mm256_loadu_ps(y + vr->off[0]);
  __m256 a = _mm256_setzero_ps();
  for (int s = 0; s < vr->n; s++)
    a = _mm256_or_ps(a, _mm256_maskload_ps(y + vr->off[s], lanes8(vr->mask[s])));
  return a;
}

/* The AVX-512 block: 8 output channels by nv (a constant once inlined: 3,
 * or 1 or 2 for a band's last block) vectors of 16 positions, over input
 * channels [0, cn) of grid and w, vector v going to the output as vr[v]
 * says, output channel k at y + k * ldy (k < nrows; the rest are
 * computed on zero weights and dropped). It starts from `init` (8 values,
 * broadcast: the bias or zeros) when given, else from the output. Named
 * accumulators: an array would live in memory. */
#define ACC16(k) __m512 a##k##0, a##k##1, a##k##2;
#define INIT16(k)                                                                             \
  if (init) a##k##0 = a##k##1 = a##k##2 = _mm512_set1_ps(init[k]);                            \
  else if (k < nrows) {                                                                       \
    a##k##0 = get16(y + k * ldy, &vr[0]);                                                     \
    a##k##1 = nv > 1 ? get16(y + k * ldy, &vr[1]) : a##k##0;                                  \
    a##k##2 = nv > 2 ? get16(y + k * ldy, &vr[2]) : a##k##0;                                  \
  } else                                                                                      \
    a##k##0 = a##k##1 = a##k##2 = _mm512_setzero_ps();
#define FMA16(k)                                                                              \
  wk = _mm512_set1_ps(w[k]);                                                                  \
  a##k##0 = _mm512_fmadd_ps(wk, x0, a##k##0);                                                 \
  if (nv > 1) a##k##1 = _mm512_fmadd_ps(wk, x1, a##k##1);                                     \
  if (nv > 2) a##k##2 = _mm512_fmadd_ps(wk, x2, a##k##2);
#define PUT16(k)                                                                              \
  if (k < nrows) {                                                                            \
    put16(y + k * ldy, &vr[0], a##k##0);                                                      \
    if (nv > 1) put16(y + k * ldy, &vr[1], a##k##1);                                          \
    if (nv > 2) put16(y + k * ldy, &vr[2], a##k##2);                                          \
  }

__attribute__((target("avx512f"), always_inline)) static inline void
block16(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t cn, const float *w,
        const float *init, float *y, int64_t ldy, int nrows, const vec_runs *vr, const int nv) {
  ACC16(0) ACC16(1) ACC16(2) ACC16(3) ACC16(4) ACC16(5) ACC16(6) ACC16(7)
  INIT16(0) INIT16(1) INIT16(2) INIT16(3) INIT16(4) INIT16(5) INIT16(6) INIT16(7)
  for (int64_t c = 0; c < cn; c++, grid += plane)
    for (int64_t t = 0; t < taps; t++, w += OB16) {
      const float *xs = grid + off[t];
      __m512 x0 = _mm512_loadu_ps(xs), wk;
      __m512 x1 = nv > 1 ? _mm512_loadu_ps(xs + PV16) : x0, x2 = nv > 2 ? _mm512_loadu_ps(xs + 2 * PV16) : x0;
      FMA16(0) FMA16(1) FMA16(2) FMA16(3) FMA16(4) FMA16(5) FMA16(6) FMA16(7)
    }
  PUT16(0) PUT16(1) PUT16(2) PUT16(3) PUT16(4) PUT16(5) PUT16(6) PUT16(7)
}

__attribute__((target("avx512f"))) static void block16_nv(const float *grid, int64_t plane, const int64_t *off,
                                                           int64_t taps, int64_t cn, const float *w, const float *init,
                                                           float *y, int64_t ldy, int nrows, const vec_runs *vr,
                                                           int nv) {
  if (nv == 3) block16(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 3);
  else if (nv == 2) block16(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 2);
  else block16(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 1);
}

/* The AVX2 block: 4 output channels by nv vectors of 8 positions, as above. */
#define ACC8(k) __m256 a##k##0, a##k##1, a##k##2;
#define INIT8(k)                                                                              \
  if (init) a##k##0 = a##k##1 = a##k##2 = _mm256_broadcast_ss(init + k);                      \
  else if (k < nrows) {                                                                       \
    a##k##0 = get8(y + k * ldy, &vr[0]);                                                      \
    a##k##1 = nv > 1 ? get8(y + k * ldy, &vr[1]) : a##k##0;                                   \
    a##k##2 = nv > 2 ? get8(y + k * ldy, &vr[2]) : a##k##0;                                   \
  } else                                                                                      \
    a##k##0 = a##k##1 = a##k##2 = _mm256_setzero_ps();
#define FMA8(k)                                                                               \
  wk = _mm256_broadcast_ss(w + k);                                                            \
  a##k##0 = _mm256_fmadd_ps(wk, x0, a##k##0);                                                 \
  if (nv > 1) a##k##1 = _mm256_fmadd_ps(wk, x1, a##k##1);                                     \
  if (nv > 2) a##k##2 = _mm256_fmadd_ps(wk, x2, a##k##2);
#define PUT8(k)                                                                               \
  if (k < nrows) {                                                                            \
    put8(y + k * ldy, &vr[0], a##k##0);                                                       \
    if (nv > 1) put8(y + k * ldy, &vr[1], a##k##1);                                           \
    if (nv > 2) put8(y + k * ldy, &vr[2], a##k##2);                                           \
  }

__attribute__((target("avx2,fma"), always_inline)) static inline void
block8(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t cn, const float *w,
       const float *init, float *y, int64_t ldy, int nrows, const vec_runs *vr, const int nv) {
  ACC8(0) ACC8(1) ACC8(2) ACC8(3)
  INIT8(0) INIT8(1) INIT8(2) INIT8(3)
  for (int64_t c = 0; c < cn; c++, grid += plane)
    for (int64_t t = 0; t < taps; t++, w += OB8) {
      const float *xs = grid + off[t];
      __m256 x0 = _mm256_loadu_ps(xs), wk;
      __m256 x1 = nv > 1 ? _mm256_loadu_ps(xs + PV8) : x0, x2 = nv > 2 ? _mm256_loadu_ps(xs + 2 * PV8) : x0;
      FMA8(0) FMA8(1) FMA8(2) FMA8(3)
    }
  PUT8(0) PUT8(1) PUT8(2) PUT8(3)
}

__attribute__((target("avx2,fma"))) static void block8_nv(const float *grid, int64_t plane, const int64_t *off,
                                                          int64_t taps, int64_t cn, const float *w, const float *init,
                                                          float *y, int64_t ldy, int nrows, const vec_runs *vr,
                                                          int nv) {
  if (nv == 3) block8(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 3);
  else if (nv == 2) block8(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 2);
  else block8(grid, plane, off, taps, cn, w, init, y, ldy, nrows, vr, 1);
}
#endif

void fbx_conv_direct_f32(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t Cg,
                         const float *wd, int64_t Og, const float *bias, int64_t pn, const fbx_conv_direct_out *out) {
#ifdef CONV_X86
  if (!fbx_conv_direct_ok()) abort(); /* the caller's check (conv_direct.h): neither kernel runs on this CPU */
  bool wide = use512();
  int64_t OB = wide ? OB16 : OB8, PV = wide ? PV16 : PV8, CCH = wide ? CCH16 : CCH8, PT = PV * NV;
  int64_t nob = (Og + OB - 1) / OB, wob = Cg * taps * OB;
  for (int64_t c0 = 0; c0 < Cg; c0 += CCH) {
    int64_t cn = Cg - c0 < CCH ? Cg - c0 : CCH;
    for (int64_t ob = 0; ob < nob; ob++) { /* the block's weights stay in the L1 cache over the positions */
      int nrows = Og - ob * OB < OB ? (int)(Og - ob * OB) : (int)OB;
      float init[OB16] = {0};
      for (int k = 0; k < nrows && bias; k++) init[k] = bias[ob * OB + k];
      for (int64_t p = 0; p < pn; p += PT) {
        int nv = (int)(((pn - p < PT ? pn - p : PT) + PV - 1) / PV);
        vec_runs vr[NV];
        for (int v = 0; v < nv; v++) vec_runs_of(&vr[v], out, p + v * PV, (int)PV, pn);
        (wide ? block16_nv : block8_nv)(grid + c0 * plane + p, plane, off, taps, cn, wd + ob * wob + c0 * taps * OB,
                                        c0 == 0 ? init : NULL, out->y + ob * OB * out->ldy, out->ldy, nrows, vr, nv);
      }
    }
  }
#else
  (void)grid, (void)plane, (void)off, (void)taps, (void)Cg, (void)wd, (void)Og, (void)bias, (void)pn, (void)out;
  abort(); /* fbx_conv_direct_ok() is false here: the caller keeps its GEMMs (conv_direct.h) */
#endif
}
