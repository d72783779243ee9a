/* Vectorized float32 row primitives (ops/rowops.h). Lanes are written as
 * small fixed-width inner loops over local arrays, which GCC and clang turn
 * into vector registers at -O2 with the kernels' settings (ops/kopt.h). */
#include "ops/kopt.h" /* first: the loops' compiler settings */
#include <math.h>
#include <stdint.h>

#include "ops/vmath.h"
#include "ops/pointwise.h" /* FBX_PW_CLONES */
#include "ops/rowops.h"

#define FL 16 /* float lanes */
#define DL 8  /* double lanes */

#if defined(__GNUC__)
#define ROW_INLINE static inline __attribute__((always_inline))
#else
#define ROW_INLINE static inline
#endif

/* Lane combination, pairwise. */
ROW_INLINE float fold_f(float *acc) {
  for (int w = FL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) acc[k] += acc[k + w];
  return acc[0];
}
ROW_INLINE double fold_d(double *acc) {
  for (int w = DL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) acc[k] += acc[k + w];
  return acc[0];
}

/* NaN sticks: once m is NaN neither test replaces it; a NaN x replaces m. */
ROW_INLINE float max_body(const float *x, int64_t n) {
  float m[FL];
  for (int k = 0; k < FL; k++) m[k] = -INFINITY;
  int64_t i = 0;
  for (; i + FL <= n; i += FL)
    for (int k = 0; k < FL; k++) m[k] = (x[i + k] > m[k] || x[i + k] != x[i + k]) ? x[i + k] : m[k];
  for (; i < n; i++) m[0] = (x[i] > m[0] || x[i] != x[i]) ? x[i] : m[0];
  float r = m[0];
  for (int k = 1; k < FL; k++) r = (m[k] > r || m[k] != m[k]) ? m[k] : r;
  return r;
}

FBX_PW_CLONES float fbx_row_max_f32(const float *x, int64_t n) { return max_body(x, n); }

FBX_PW_CLONES float fbx_row_min_f32(const float *x, int64_t n) {
  float m[FL];
  for (int k = 0; k < FL; k++) m[k] = INFINITY;
  int64_t i = 0;
  for (; i + FL <= n; i += FL)
    for (int k = 0; k < FL; k++) m[k] = (x[i + k] < m[k] || x[i + k] != x[i + k]) ? x[i + k] : m[k];
  for (; i < n; i++) m[0] = (x[i] < m[0] || x[i] != x[i]) ? x[i] : m[0];
  float r = m[0];
  for (int k = 1; k < FL; k++) r = (m[k] < r || m[k] != m[k]) ? m[k] : r;
  return r;
}

ROW_INLINE double sum_body(const float *x, int64_t n) {
  double acc[DL] = {0};
  int64_t i = 0;
  for (; i + DL <= n; i += DL)
    for (int k = 0; k < DL; k++) acc[k] += (double)x[i + k];
  double t = 0;
  for (; i < n; i++) t += (double)x[i];
  return fold_d(acc) + t;
}

ROW_INLINE double sqdev_body(const float *x, int64_t n, double c) {
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

FBX_PW_CLONES double fbx_row_sum_f32(const float *x, int64_t n) { return sum_body(x, n); }
FBX_PW_CLONES double fbx_row_sqdev_f32(const float *x, int64_t n, double c) { return sqdev_body(x, n, c); }

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

/* Three simple loops over a row in cache: the exponentials (written to y),
 * their sum in float lanes, then the scaling (or x - m - log(sum)). */
FBX_PW_CLONES void fbx_row_softmax_f32(const float *x, float *y, int64_t n, bool log) {
  float m = max_body(x, n);
  for (int64_t i = 0; i < n; i++) y[i] = fbx_vm_expf(x[i] - m);
  float s = sumf_body(y, n);
  if (log) {
    float ls = logf(s); /* (x - m) - ls, as PyTorch: x - (m + ls) would lose ls's bits next to a big m */
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) - ls;
  } else {
    float inv = 1.0f / s;
    for (int64_t i = 0; i < n; i++) y[i] *= inv;
  }
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

ROW_INLINE void moments_body(const float *x, int64_t n, float eps, float *mean, float *rstd) {
  double md = sum_body(x, n) / (double)n;
  double var = sqdev_body(x, n, md) / (double)n;
  *mean = (float)md;
  *rstd = (float)(1.0 / sqrt(var + (double)eps));
}

FBX_PW_CLONES void fbx_row_moments_f32(const float *x, int64_t n, float eps, float *mean, float *rstd) {
  moments_body(x, n, eps, mean, rstd);
}

FBX_PW_CLONES void fbx_row_layer_norm_f32(const float *x, float *y, int64_t n, const float *w, const float *b,
                                          float eps, float *mean, float *rstd) {
  float mf, r;
  moments_body(x, n, eps, &mf, &r);
  *mean = mf, *rstd = r;
  if (w && b)
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r * w[i] + b[i];
  else if (w)
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r * w[i];
  else if (b)
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r + b[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - mf) * r;
}

FBX_PW_CLONES void fbx_row_layer_norm_bwd_f32(const float *g, const float *x, float *dx, int64_t n, const float *w,
                                              float mean, float rstd, float *dw, float *db) {
  if (dw) {
    float nb = -rstd * mean;
    for (int64_t i = 0; i < n; i++) dw[i] += g[i] * (rstd * x[i] + nb);
  }
  if (db)
    for (int64_t i = 0; i < n; i++) db[i] += g[i];
  if (!dx) return;
  double as[DL] = {0}, ab[DL] = {0}, ts = 0, tb = 0;
  int64_t i = 0;
  if (w) {
    for (; i + DL <= n; i += DL)
      for (int k = 0; k < DL; k++) {
        float gw = g[i + k] * w[i + k];
        as[k] += (double)(gw * x[i + k]);
        ab[k] += (double)gw;
      }
    for (; i < n; i++) {
      float gw = g[i] * w[i];
      ts += (double)(gw * x[i]);
      tb += (double)gw;
    }
  } else {
    for (; i + DL <= n; i += DL)
      for (int k = 0; k < DL; k++) {
        as[k] += (double)(g[i + k] * x[i + k]);
        ab[k] += (double)g[i + k];
      }
    for (; i < n; i++) {
      ts += (double)(g[i] * x[i]);
      tb += (double)g[i];
    }
  }
  double ds = fold_d(as) + ts, dbs = fold_d(ab) + tb, scale = 1.0 / (double)n, a = rstd;
  double bd = (dbs * (double)mean - ds) * a * a * a * scale;
  float b = (float)bd, c = (float)(-bd * (double)mean - dbs * a * scale);
  if (w)
    for (int64_t k = 0; k < n; k++) dx[k] = rstd * g[k] * w[k] + b * x[k] + c;
  else
    for (int64_t k = 0; k < n; k++) dx[k] = rstd * g[k] + b * x[k] + c;
}

FBX_PW_CLONES void fbx_row_affine_f32(const float *x, float *y, int64_t n, float scale, float shift) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale + shift;
}
