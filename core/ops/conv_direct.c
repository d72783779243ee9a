/* The float32 direct convolution kernel (conv_direct.h). */
#include "ops/conv_direct.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CONV_X86 1
#include <immintrin.h>
#endif

int64_t fbx_conv_direct_wsize(int64_t Og, int64_t Cg, int64_t taps) {
  return (Og + FBX_CONV_OB - 1) / FBX_CONV_OB * Cg * taps * FBX_CONV_OB;
}

void fbx_conv_direct_pack(const float *w, int64_t Og, int64_t Cg, int64_t taps, float *wd) {
  int64_t nob = (Og + FBX_CONV_OB - 1) / FBX_CONV_OB;
  for (int64_t ob = 0; ob < nob; ob++)
    for (int64_t c = 0; c < Cg; c++)
      for (int64_t t = 0; t < taps; t++)
        for (int64_t k = 0; k < FBX_CONV_OB; k++) {
          int64_t o = ob * FBX_CONV_OB + k;
          wd[((ob * Cg + c) * taps + t) * FBX_CONV_OB + k] = o < Og ? w[(o * Cg + c) * taps + t] : 0.0f;
        }
}

#ifdef CONV_X86
bool fbx_conv_direct_ok(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* One register block: OB output channels (rows of acc; rows past the
 * group's last channel are neither read nor stored) by 24 positions,
 * over input channels [0, Cg) of grid and w. The block starts from
 * `init` (OB values, broadcast: the bias or zeros) when it is given, else
 * from what acc holds, and stores its sums into acc. */
__attribute__((target("avx2,fma"))) static void block(const float *grid, int64_t plane, const int64_t *off,
                                                      int64_t taps, int64_t Cg, const float *w, const float *init,
                                                      float *acc, int64_t ldacc, int nrows) {
  __m256 a[FBX_CONV_OB][3];
  for (int k = 0; k < FBX_CONV_OB; k++)
    for (int v = 0; v < 3; v++)
      a[k][v] = init ? _mm256_broadcast_ss(init + k)
                : k < nrows ? _mm256_loadu_ps(acc + k * ldacc + 8 * v)
                            : _mm256_setzero_ps();
  __m256 a00 = a[0][0], a01 = a[0][1], a02 = a[0][2], a10 = a[1][0], a11 = a[1][1], a12 = a[1][2];
  __m256 a20 = a[2][0], a21 = a[2][1], a22 = a[2][2], a30 = a[3][0], a31 = a[3][1], a32 = a[3][2];
  for (int64_t c = 0; c < Cg; c++, grid += plane)
    for (int64_t t = 0; t < taps; t++, w += FBX_CONV_OB) {
      const float *xs = grid + off[t];
      __m256 x0 = _mm256_loadu_ps(xs), x1 = _mm256_loadu_ps(xs + 8), x2 = _mm256_loadu_ps(xs + 16);
      __m256 wk = _mm256_broadcast_ss(w);
      a00 = _mm256_fmadd_ps(wk, x0, a00), a01 = _mm256_fmadd_ps(wk, x1, a01), a02 = _mm256_fmadd_ps(wk, x2, a02);
      wk = _mm256_broadcast_ss(w + 1);
      a10 = _mm256_fmadd_ps(wk, x0, a10), a11 = _mm256_fmadd_ps(wk, x1, a11), a12 = _mm256_fmadd_ps(wk, x2, a12);
      wk = _mm256_broadcast_ss(w + 2);
      a20 = _mm256_fmadd_ps(wk, x0, a20), a21 = _mm256_fmadd_ps(wk, x1, a21), a22 = _mm256_fmadd_ps(wk, x2, a22);
      wk = _mm256_broadcast_ss(w + 3);
      a30 = _mm256_fmadd_ps(wk, x0, a30), a31 = _mm256_fmadd_ps(wk, x1, a31), a32 = _mm256_fmadd_ps(wk, x2, a32);
    }
  __m256 r[FBX_CONV_OB][3] = {{a00, a01, a02}, {a10, a11, a12}, {a20, a21, a22}, {a30, a31, a32}};
  for (int k = 0; k < nrows; k++)
    for (int v = 0; v < 3; v++) _mm256_storeu_ps(acc + k * ldacc + 8 * v, r[k][v]);
}

__attribute__((target("avx2,fma"))) void fbx_conv_direct_f32(const float *grid, int64_t plane, const int64_t *off,
                                                              int64_t taps, int64_t Cg, const float *wd, int64_t Og,
                                                              const float *bias, float *acc, int64_t ldacc,
                                                              int64_t pn) {
  int64_t nob = (Og + FBX_CONV_OB - 1) / FBX_CONV_OB, wob = Cg * taps * FBX_CONV_OB;
  for (int64_t c0 = 0; c0 < Cg; c0 += FBX_CONV_CCH) {
    int64_t cn = Cg - c0 < FBX_CONV_CCH ? Cg - c0 : FBX_CONV_CCH;
    for (int64_t ob = 0; ob < nob; ob++) {
      int nrows = Og - ob * FBX_CONV_OB < FBX_CONV_OB ? (int)(Og - ob * FBX_CONV_OB) : FBX_CONV_OB;
      float init[FBX_CONV_OB] = {0};
      for (int k = 0; k < nrows && bias; k++) init[k] = bias[ob * FBX_CONV_OB + k];
      const float *w = wd + ob * wob + c0 * taps * FBX_CONV_OB;
      for (int64_t p = 0; p < pn; p += FBX_CONV_PT)
        block(grid + c0 * plane + p, plane, off, taps, cn, w, c0 == 0 ? init : NULL, acc + ob * FBX_CONV_OB * ldacc + p,
              ldacc, nrows);
    }
  }
}
#else
bool fbx_conv_direct_ok(void) { return false; }

/* Not called where fbx_conv_direct_ok() is false; the same sum in plain C. */
void fbx_conv_direct_f32(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t Cg,
                         const float *wd, int64_t Og, const float *bias, float *acc, int64_t ldacc, int64_t pn) {
  for (int64_t o = 0; o < Og; o++) {
    const float *w = wd + (o / FBX_CONV_OB) * Cg * taps * FBX_CONV_OB + o % FBX_CONV_OB;
    for (int64_t p = 0; p < pn; p++) {
      float s = bias ? bias[o] : 0.0f;
      for (int64_t c = 0; c < Cg; c++)
        for (int64_t t = 0; t < taps; t++) s += w[(c * taps + t) * FBX_CONV_OB] * grid[c * plane + p + off[t]];
      acc[o * ldacc + p] = s;
    }
  }
}
#endif
