/* Composite kernels (ops/list_reduce.h): softmax, log_softmax, layer_norm,
 * batch_norm, dropout; group_norm (ops/list_extra.h).
 *
 * softmax/log_softmax run in the input's own precision (float for float32,
 * float16 and bfloat16, double for float64), max-subtracted; rows along the
 * softmax dim are either contiguous (dim last) or walked as tiles of
 * neighbouring columns. float32 runs on the vectorized row primitives
 * (ops/rowops.h: fbx_vm_expf, 16 float lanes for the sum).
 * layer_norm takes statistics in two passes (mean, then squared
 * deviations); float32 inputs with float32 (or no) weight and bias run
 * on fbx_row_layer_norm_f32 (blocked float lanes with double totals over a
 * row in cache, ops/rowops.h), others on the chunked double loop.
 * layer_norm's backward (native_layer_norm_backward; fusebox::layer_norm_backward,
 * which takes the statistics again: fbx_row_layer_norm_bwd_x_f32) runs fbx_row_layer_norm_bwd_f32 over rows
 * (float64 inputs: the same formula in double), weight and bias gradients
 * summed in float32 (float64) per block of rows as PyTorch does. batch_norm in inference on float32 applies its
 * per-channel scale and shift with fbx_row_affine_f32; group_norm takes
 * each group's statistics and applies a scale and shift per image and
 * channel the same way.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/reduce.h"
#include "ops/rowops.h"

#define CH FBX_RED_CHUNK

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- softmax / log_softmax ------------------------------------------------------------ */

typedef struct smax_job {
  const void *x;
  void *y;
  int64_t A, R, B;
  bool log;
  bool stream; /* float32 rows: y written past the cache (fbx_row_stream_wanted) */
} smax_job;

#define SOFTMAX_IMPL(T, EXP, LOG, SUFFIX)                                                      \
  static void smax_rows_##SUFFIX(void *c, int64_t begin, int64_t end) {                        \
    const smax_job *j = c;                                                                     \
    for (int64_t a = begin; a < end; a++) {                                                    \
      const T *x = (const T *)j->x + a * j->R;                                                 \
      T *y = (T *)j->y + a * j->R;                                                             \
      T m = -INFINITY;                                                                         \
      for (int64_t r = 0; r < j->R; r++)                                                       \
        if (!(x[r] <= m)) m = x[r]; /* NaN sticks */                                           \
      T s = 0;                                                                                 \
      if (j->log) {                                                                            \
        for (int64_t r = 0; r < j->R; r++) s += EXP(x[r] - m);                                 \
        T ls = LOG(s);                                                                         \
        for (int64_t r = 0; r < j->R; r++) y[r] = x[r] - m - ls;                               \
      } else {                                                                                 \
        for (int64_t r = 0; r < j->R; r++) s += (y[r] = EXP(x[r] - m));                        \
        T inv = 1 / s;                                                                         \
        for (int64_t r = 0; r < j->R; r++) y[r] *= inv;                                        \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
  static void smax_tiles_##SUFFIX(void *c, int64_t begin, int64_t end) {                       \
    const smax_job *j = c;                                                                     \
    int64_t ntiles = (j->B + CH - 1) / CH;                                                     \
    T m[CH], s[CH];                                                                            \
    for (int64_t t = begin; t < end; t++) {                                                    \
      int64_t a = t / ntiles, b0 = (t % ntiles) * CH, n = min64(CH, j->B - b0);                \
      const T *x = (const T *)j->x + a * j->R * j->B + b0;                                     \
      T *y = (T *)j->y + a * j->R * j->B + b0;                                                 \
      for (int64_t k = 0; k < n; k++) m[k] = -INFINITY, s[k] = 0;                              \
      for (int64_t r = 0; r < j->R; r++)                                                       \
        for (int64_t k = 0; k < n; k++)                                                        \
          if (!(x[r * j->B + k] <= m[k])) m[k] = x[r * j->B + k];                              \
      for (int64_t r = 0; r < j->R; r++)                                                       \
        for (int64_t k = 0; k < n; k++) {                                                      \
          T e = EXP(x[r * j->B + k] - m[k]);                                                   \
          s[k] += e;                                                                           \
          if (!j->log) y[r * j->B + k] = e;                                                    \
        }                                                                                      \
      for (int64_t k = 0; k < n; k++) s[k] = j->log ? LOG(s[k]) : 1 / s[k];                    \
      for (int64_t r = 0; r < j->R; r++)                                                       \
        for (int64_t k = 0; k < n; k++) {                                                      \
          if (j->log) y[r * j->B + k] = x[r * j->B + k] - m[k] - s[k];                         \
          else y[r * j->B + k] *= s[k];                                                        \
        }                                                                                      \
    }                                                                                          \
  }

SOFTMAX_IMPL(double, exp, log, f64)

/* float32: the vectorized row primitives (ops/rowops.h). */
static void smax_rows_f32(void *c, int64_t begin, int64_t end) {
  const smax_job *j = c;
  void (*row)(const float *, float *, int64_t, bool) = j->stream ? fbx_row_softmax_stream_f32 : fbx_row_softmax_f32;
  for (int64_t a = begin; a < end; a++) row((const float *)j->x + a * j->R, (float *)j->y + a * j->R, j->R, j->log);
  if (j->stream) fbx_row_stream_fence();
}
static void smax_tiles_f32(void *c, int64_t begin, int64_t end) {
  const smax_job *j = c;
  int64_t ntiles = (j->B + CH - 1) / CH;
  for (int64_t t = begin; t < end; t++) {
    int64_t a = t / ntiles, b0 = (t % ntiles) * CH, off = a * j->R * j->B + b0;
    fbx_cols_softmax_f32((const float *)j->x + off, (float *)j->y + off, j->R, j->B, min64(CH, j->B - b0), j->log);
  }
}

/* softmax.int(self, dim, dtype=None): the input is converted to dtype
 * first; integral inputs need a dtype (PyTorch has no integral kernel). */
static fbx_status *softmax_common(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool log) {
  fbx_tensor *x, *c = NULL, *y = NULL, *r = NULL;
  int64_t d;
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dim must be an int");
  FBX_TRY(fbx_red_wrap_dim(ctx, &d, args[1].u.i, x));
  FBX_TRY(fbx_red_dtype_arg(ctx, &args[2], &dt));
  fbx_dtype out = dt != FBX_DTYPE_UNDEFINED ? dt : x->dtype;
  if (!fbx_dtype_is_floating(out))
    return fbx_kernel_error(ctx, "expected a floating point input or dtype, got %s", fbx_dtype_name(out));
  fbx_dtype work = out == FBX_DTYPE_FLOAT64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  fbx_status *st;
  if (x->dtype != work) st = fbx_tensor_clone_as(&c, x, work);
  else st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_empty(&y, work, x->ndim, x->sizes);
  if (st) goto done;
  smax_job j = {.x = c->data, .y = y->data, .A = 1, .R = 1, .B = 1, .log = log};
  for (int i = 0; i < x->ndim; i++) {
    if (i < d) j.A *= x->sizes[i];
    else if (i == d) j.R = x->sizes[i];
    else j.B *= x->sizes[i];
  }
  if (x->numel > 0) {
    bool f64 = work == FBX_DTYPE_FLOAT64;
    if (j.B == 1) {
      /* an output converted to another dtype next is read at once: not streamed */
      j.stream = !f64 && out == work && fbx_row_stream_wanted(2 * x->numel * (int64_t)sizeof(float));
      fbx_parallel_for(j.A, j.R >= 8192 ? 1 : 8192 / j.R + 1, f64 ? smax_rows_f64 : smax_rows_f32, &j);
    } else {
      int64_t ntiles = (j.B + CH - 1) / CH, per = j.R * min64(j.B, CH);
      fbx_parallel_for(j.A * ntiles, per >= 8192 ? 1 : 8192 / per + 1, f64 ? smax_tiles_f64 : smax_tiles_f32, &j);
    }
  }
  if (out != work) {
    st = fbx_tensor_clone_as(&r, y, out);
    if (st) goto done;
    fbx_tensor_release(y);
    y = r;
  }
  fbx_set_out_tensor(outs, 0, y);
  y = NULL;
done:
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}

fbx_status *fbx_k_softmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return softmax_common(ctx, args, outs, false);
}
fbx_status *fbx_k_log_softmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return softmax_common(ctx, args, outs, true);
}

/* ---- layer_norm ----------------------------------------------------------------------------- */

typedef struct ln_job {
  const void *x;
  fbx_dtype dt;
  void *y;
  int64_t M, N;
  const double *w, *b; /* N each, or NULL */
  double eps;
} ln_job;

static void ln_body(void *c, int64_t begin, int64_t end) {
  const ln_job *j = c;
  double buf[CH];
  for (int64_t m = begin; m < end; m++) {
    int64_t base = m * j->N;
    double s = 0, ss = 0;
    for (int64_t r = 0; r < j->N; r += CH) {
      int64_t n = min64(CH, j->N - r);
      fbx_red_load_f64(buf, j->x, j->dt, base + r, n);
      for (int64_t k = 0; k < n; k++) s += buf[k];
    }
    double mean = s / (double)j->N;
    for (int64_t r = 0; r < j->N; r += CH) {
      int64_t n = min64(CH, j->N - r);
      fbx_red_load_f64(buf, j->x, j->dt, base + r, n);
      for (int64_t k = 0; k < n; k++) ss += (buf[k] - mean) * (buf[k] - mean);
    }
    double rstd = 1 / sqrt(ss / (double)j->N + j->eps);
    for (int64_t r = 0; r < j->N; r += CH) {
      int64_t n = min64(CH, j->N - r);
      fbx_red_load_f64(buf, j->x, j->dt, base + r, n);
      for (int64_t k = 0; k < n; k++) {
        double v = (buf[k] - mean) * rstd;
        if (j->w) v *= j->w[r + k];
        v += j->b ? j->b[r + k] : 0.0; /* a zero result is +0, as PyTorch's zero bias leaves it */
        buf[k] = v;
      }
      fbx_red_store_f64(j->y, j->dt, base + r, buf, n);
    }
  }
}

typedef struct ln32_job {
  const float *x, *w, *b;
  float *y;
  int64_t N;
  float eps;
  bool stream;
} ln32_job;

static void ln32_body(void *c, int64_t begin, int64_t end) {
  const ln32_job *j = c;
  float mean, rstd;
  for (int64_t m = begin; m < end; m++)
    fbx_row_layer_norm_f32(j->x + m * j->N, j->y + m * j->N, j->N, j->w, j->b, j->eps, &mean, &rstd, j->stream);
  if (j->stream) fbx_row_stream_fence();
}

/* A Tensor? parameter of n elements loaded into a fresh double array (NULL when None). */
static fbx_status *param_f64(const fbx_kctx *ctx, double **out, const fbx_ivalue *v, const char *what, int64_t n,
                             int nd, const int64_t *shape) {
  *out = NULL;
  if (v->kind == FBX_IV_NONE) return NULL;
  if (v->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "%s must be a Tensor or None", what);
  fbx_tensor *t = v->u.t, *c = NULL;
  bool ok = t->numel == n;
  if (ok && shape) {
    ok = t->ndim == nd;
    for (int i = 0; ok && i < nd; i++) ok = t->sizes[i] == shape[i];
  }
  if (!ok) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, t->ndim, t->sizes);
    if (shape) fbx_red_shape_str(b, sizeof b, nd, shape);
    else snprintf(b, sizeof b, "[%lld]", (long long)n);
    return fbx_kernel_error(ctx, "expected %s of shape %s, got %s", what, b, a);
  }
  if (!fbx_dtype_is_floating(t->dtype))
    return fbx_kernel_error(ctx, "%s must be floating point, got %s", what, fbx_dtype_name(t->dtype));
  double *p = fbx_malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (!p) return fbx_status_nomem();
  fbx_status *st = fbx_tensor_contiguous(&c, t);
  if (st) {
    fbx_free(p);
    return st;
  }
  for (int64_t i = 0; i < n; i += CH) fbx_red_load_f64(p + i, c->data, c->dtype, i, min64(CH, n - i));
  fbx_tensor_release(c);
  *out = p;
  return NULL;
}

/* layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
 * cudnn_enable=True): weight and bias must have normalized_shape; any
 * floating dtype is accepted for them (PyTorch wants the input's). */
fbx_status *fbx_k_layer_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *c = NULL, *y = NULL;
  int64_t ns[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int nn = fbx_arg_int_list(ctx->op, 1, &args[1], ns, FBX_MAX_DIMS, &st);
  if (nn < 0) return st;
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  if (args[4].kind != FBX_IV_FLOAT && args[4].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "eps must be a float");
  char a[256], b[256];
  bool ok = nn >= 1 && nn <= x->ndim;
  for (int i = 0; ok && i < nn; i++) ok = x->sizes[x->ndim - nn + i] == ns[i];
  if (!ok) {
    fbx_red_shape_str(a, sizeof a, nn, ns);
    fbx_red_shape_str(b, sizeof b, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "normalized_shape %s does not match the trailing dims of an input of shape %s", a,
                            b);
  }
  ln_job j = {.dt = x->dtype, .M = 1, .N = 1, .eps = fbx_iv_to_double(&args[4])};
  for (int i = 0; i < x->ndim; i++) {
    if (i < x->ndim - nn) j.M *= x->sizes[i];
    else j.N *= x->sizes[i];
  }
  double *w = NULL, *bias = NULL;
  st = param_f64(ctx, &w, &args[2], "weight", j.N, nn, ns);
  if (!st) st = param_f64(ctx, &bias, &args[3], "bias", j.N, nn, ns);
  if (!st) st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes);
  /* float32 with float32 (or no) parameters: the vectorized rows */
  bool f32 = x->dtype == FBX_DTYPE_FLOAT32 &&
             (args[2].kind == FBX_IV_NONE || (args[2].kind == FBX_IV_TENSOR && args[2].u.t->dtype == FBX_DTYPE_FLOAT32)) &&
             (args[3].kind == FBX_IV_NONE || (args[3].kind == FBX_IV_TENSOR && args[3].u.t->dtype == FBX_DTYPE_FLOAT32));
  float *wb = NULL;
  if (!st && f32 && x->numel > 0 && (w || bias)) {
    wb = fbx_malloc(sizeof(float) * (size_t)(2 * j.N));
    if (!wb) st = fbx_status_nomem();
    for (int64_t i = 0; !st && i < j.N; i++) wb[i] = w ? (float)w[i] : 1, wb[j.N + i] = bias ? (float)bias[i] : 0;
  }
  if (!st && f32) {
    ln32_job k = {.x = c->data, .y = y->data, .N = j.N, .eps = (float)j.eps, .w = w ? wb : NULL,
                  .b = bias && wb ? wb + j.N : NULL, .stream = fbx_row_stream_wanted(2 * x->numel * (int64_t)sizeof(float))};
    if (x->numel > 0) fbx_parallel_for(j.M, j.N >= 8192 ? 1 : 8192 / j.N + 1, ln32_body, &k);
    fbx_set_out_tensor(outs, 0, y);
    y = NULL;
  } else if (!st) {
    j.x = c->data, j.y = y->data, j.w = w, j.b = bias;
    if (x->numel > 0) fbx_parallel_for(j.M, j.N >= 8192 ? 1 : 8192 / j.N + 1, ln_body, &j);
    fbx_set_out_tensor(outs, 0, y);
    y = NULL;
  }
  fbx_free(w);
  fbx_free(bias);
  fbx_free(wb);
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}

/* ---- layer_norm backward ------------------------------------------------------------------------ */

/* One backward over [M, N] rows (ops/rowops.h's formula), in float32 or
 * float64: rows in nblk fixed blocks (a function of M and N only, so the
 * result does not depend on the thread count), each block accumulating its
 * own partial dw and db sums, which are added in block order at the end. */
typedef struct lnb_job {
  const void *g, *x, *w;    /* contiguous in the work dtype; w NULL: none */
  const void *mean, *rstd;  /* M each, or NULL: taken from x with eps */
  double eps;
  void *dx;                 /* or NULL */
  void *part;               /* nblk x [dw | db] partial sums, or NULL */
  bool want_dw, want_db, f64;
  int64_t M, N, nblk;
} lnb_job;

static void lnb_row_f64(const double *g, const double *x, double *dx, int64_t n, const double *w, double mean,
                        double rstd, double *dw, double *db) {
  if (dw)
    for (int64_t i = 0; i < n; i++) dw[i] += g[i] * (rstd * x[i] - rstd * mean);
  if (db)
    for (int64_t i = 0; i < n; i++) db[i] += g[i];
  if (!dx) return;
  double ds = 0, dbs = 0;
  for (int64_t i = 0; i < n; i++) {
    double gw = w ? g[i] * w[i] : g[i];
    ds += gw * x[i], dbs += gw;
  }
  double scale = 1.0 / (double)n, b = (dbs * mean - ds) * rstd * rstd * rstd * scale;
  double c = -b * mean - dbs * rstd * scale;
  for (int64_t i = 0; i < n; i++) dx[i] = rstd * (w ? g[i] * w[i] : g[i]) + b * x[i] + c;
}

static void lnb_body(void *c, int64_t begin, int64_t end) {
  const lnb_job *j = c;
  int64_t N = j->N;
  for (int64_t blk = begin; blk < end; blk++) {
    int64_t r0 = blk * j->M / j->nblk, r1 = (blk + 1) * j->M / j->nblk;
    if (j->f64) {
      double *pw = j->part ? (double *)j->part + blk * 2 * N : NULL;
      if (pw) memset(pw, 0, sizeof(double) * (size_t)(2 * N));
      for (int64_t m = r0; m < r1; m++) {
        const double *x = (const double *)j->x + m * N;
        double mean, rstd;
        if (j->mean) {
          mean = ((const double *)j->mean)[m], rstd = ((const double *)j->rstd)[m];
        } else {
          double s = 0, ss = 0;
          for (int64_t i = 0; i < N; i++) s += x[i];
          mean = s / (double)N;
          for (int64_t i = 0; i < N; i++) ss += (x[i] - mean) * (x[i] - mean);
          rstd = 1 / sqrt(ss / (double)N + j->eps);
        }
        lnb_row_f64((const double *)j->g + m * N, x, j->dx ? (double *)j->dx + m * N : NULL, N, j->w, mean, rstd,
                    j->want_dw ? pw : NULL, j->want_db ? pw + N : NULL);
      }
    } else {
      float *pw = j->part ? (float *)j->part + blk * 2 * N : NULL;
      if (pw) memset(pw, 0, sizeof(float) * (size_t)(2 * N));
      for (int64_t m = r0; m < r1; m++) {
        const float *x = (const float *)j->x + m * N;
        const float *g = (const float *)j->g + m * N;
        float *dx = j->dx ? (float *)j->dx + m * N : NULL;
        if (j->mean)
          fbx_row_layer_norm_bwd_f32(g, x, dx, N, j->w, ((const float *)j->mean)[m], ((const float *)j->rstd)[m],
                                     j->want_dw ? pw : NULL, j->want_db ? pw + N : NULL);
        else
          fbx_row_layer_norm_bwd_x_f32(g, x, dx, N, j->w, (float)j->eps, j->want_dw ? pw : NULL,
                                       j->want_db ? pw + N : NULL);
      }
    }
  }
}

/* t in dtype `work`, contiguous (a new reference). */
static fbx_status *as_work(fbx_tensor **out, fbx_tensor *t, fbx_dtype work) {
  return t->dtype != work ? fbx_tensor_clone_as(out, t, work) : fbx_tensor_contiguous(out, t);
}

/* A Tensor? parameter of normalized_shape (NULL when None). */
static fbx_status *ln_param(const fbx_kctx *ctx, fbx_tensor **out, const fbx_ivalue *v, const char *what, int nn,
                            const int64_t *ns) {
  *out = NULL;
  if (v->kind == FBX_IV_NONE) return NULL;
  if (v->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "%s must be a Tensor or None", what);
  const fbx_tensor *t = v->u.t;
  bool ok = t->ndim == nn;
  for (int i = 0; ok && i < nn; i++) ok = t->sizes[i] == ns[i];
  if (!ok) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, t->ndim, t->sizes);
    fbx_red_shape_str(b, sizeof b, nn, ns);
    return fbx_kernel_error(ctx, "expected %s of shape %s, got %s", what, b, a);
  }
  if (!fbx_dtype_is_floating(t->dtype))
    return fbx_kernel_error(ctx, "%s must be floating point, got %s", what, fbx_dtype_name(t->dtype));
  *out = v->u.t;
  return NULL;
}

/* The backward of layer_norm over the trailing dims `ns` of x: outputs 0..2
 * are d input (x's shape and dtype), d weight and d bias (their shapes and
 * dtypes), each computed where want[k] (and, for 1 and 2, weight or bias is
 * given), else None. mean/rstd (M values each, any layout) or eps. Work in
 * float64 for float64 inputs, else float32 (as PyTorch for half types). */
static fbx_status *lnb_run(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *g, fbx_tensor *x, const fbx_ivalue *nsv,
                           int ns_arg, const fbx_ivalue *wv, const fbx_ivalue *bv, fbx_tensor *mean, fbx_tensor *rstd,
                           double eps, const bool want[3]) {
  int64_t ns[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int nn = fbx_arg_int_list(ctx->op, ns_arg, nsv, ns, FBX_MAX_DIMS, &st);
  if (nn < 0) return st;
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  char a[256], b[256];
  bool ok = nn >= 1 && nn <= x->ndim;
  for (int i = 0; ok && i < nn; i++) ok = x->sizes[x->ndim - nn + i] == ns[i];
  if (!ok) {
    fbx_red_shape_str(a, sizeof a, nn, ns);
    fbx_red_shape_str(b, sizeof b, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "normalized_shape %s does not match the trailing dims of an input of shape %s", a,
                            b);
  }
  if (!fbx_tensor_same_shape(g, x)) {
    fbx_red_shape_str(a, sizeof a, g->ndim, g->sizes);
    fbx_red_shape_str(b, sizeof b, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "the gradient's shape %s is not the input's %s", a, b);
  }
  if (!fbx_dtype_is_floating(g->dtype))
    return fbx_kernel_error(ctx, "expected a floating point gradient, got %s", fbx_dtype_name(g->dtype));
  lnb_job j = {.eps = eps, .M = 1, .N = 1};
  for (int i = 0; i < x->ndim; i++) {
    if (i < x->ndim - nn) j.M *= x->sizes[i];
    else j.N *= x->sizes[i];
  }
  fbx_tensor *w, *bias;
  FBX_TRY(ln_param(ctx, &w, wv, "weight", nn, ns));
  FBX_TRY(ln_param(ctx, &bias, bv, "bias", nn, ns));
  if (mean && (mean->numel != j.M || rstd->numel != j.M))
    return fbx_kernel_error(ctx, "mean and rstd must hold one value per normalized row (%lld), got %lld and %lld",
                            (long long)j.M, (long long)mean->numel, (long long)rstd->numel);
  fbx_dtype work = x->dtype == FBX_DTYPE_FLOAT64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  size_t es = fbx_dtype_size(work);
  j.f64 = work == FBX_DTYPE_FLOAT64;
  j.want_dw = want[1] && w, j.want_db = want[2] && bias;
  fbx_tensor *gc = NULL, *xc = NULL, *wc = NULL, *mc = NULL, *rc = NULL, *dx = NULL, *dw = NULL, *db = NULL;
  fbx_tensor *r = NULL;
  st = as_work(&gc, g, work);
  if (!st) st = as_work(&xc, x, work);
  if (!st && w) st = as_work(&wc, w, work);
  if (!st && mean) st = as_work(&mc, mean, work);
  if (!st && mean) st = as_work(&rc, rstd, work);
  if (!st && want[0]) st = fbx_tensor_empty(&dx, work, x->ndim, x->sizes);
  if (!st && j.want_dw) st = fbx_tensor_empty(&dw, work, w->ndim, w->sizes);
  if (!st && j.want_db) st = fbx_tensor_empty(&db, work, bias->ndim, bias->sizes);
  if (st) goto done;
  /* at most 32 blocks, and at most 64 MiB of partial sums */
  j.nblk = min64(j.M, 32);
  if ((j.want_dw || j.want_db) && j.N > 0) {
    int64_t cap = ((int64_t)64 << 20) / (int64_t)(2 * (size_t)j.N * es);
    j.nblk = min64(j.nblk, cap > 1 ? cap : 1);
    j.part = fbx_malloc(es * (size_t)(2 * j.N * (j.nblk > 0 ? j.nblk : 1)));
    if (!j.part) {
      st = fbx_status_nomem();
      goto done;
    }
    if (j.M == 0) memset(j.part, 0, es * (size_t)(2 * j.N));
  }
  j.g = gc->data, j.x = xc->data, j.w = wc ? wc->data : NULL, j.mean = mc ? mc->data : NULL;
  j.rstd = rc ? rc->data : NULL, j.dx = dx ? dx->data : NULL;
  if (j.M > 0 && j.N > 0) fbx_parallel_for(j.nblk, 1, lnb_body, &j);
  /* partial sums added in block order */
  fbx_tensor *pt[2] = {dw, db};
  for (int k = 0; k < 2; k++) {
    if (!pt[k] || !j.part) continue; /* no part: N == 0, nothing to sum */
    int64_t nb = j.M > 0 ? j.nblk : 1;
    if (j.f64) {
      double *o = pt[k]->data;
      const double *p = (const double *)j.part + k * j.N;
      for (int64_t i = 0; i < j.N; i++) o[i] = p[i];
      for (int64_t blk = 1; blk < nb; blk++)
        for (int64_t i = 0; i < j.N; i++) o[i] += p[blk * 2 * j.N + i];
    } else {
      float *o = pt[k]->data;
      const float *p = (const float *)j.part + k * j.N;
      for (int64_t i = 0; i < j.N; i++) o[i] = p[i];
      for (int64_t blk = 1; blk < nb; blk++)
        for (int64_t i = 0; i < j.N; i++) o[i] += p[blk * 2 * j.N + i];
    }
  }
  /* back to the callers' dtypes */
  fbx_tensor **res[3] = {&dx, &dw, &db};
  fbx_dtype want_dt[3] = {x->dtype, w ? w->dtype : work, bias ? bias->dtype : work};
  for (int k = 0; k < 3 && !st; k++)
    if (*res[k] && (*res[k])->dtype != want_dt[k]) {
      st = fbx_tensor_clone_as(&r, *res[k], want_dt[k]);
      if (st) break;
      fbx_tensor_release(*res[k]);
      *res[k] = r;
      r = NULL;
    }
  if (st) goto done;
  for (int k = 0; k < 3; k++) {
    outs[k] = *res[k] ? fbx_iv_tensor(*res[k]) : fbx_iv_none();
    *res[k] = NULL;
  }
done:
  fbx_free(j.part);
  fbx_tensor_release(gc);
  fbx_tensor_release(xc);
  fbx_tensor_release(wc);
  fbx_tensor_release(mc);
  fbx_tensor_release(rc);
  fbx_tensor_release(dx);
  fbx_tensor_release(dw);
  fbx_tensor_release(db);
  return st;
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight?, bias?, output_mask): PyTorch's op, with the mean and rstd that
 * native_layer_norm saved; masked-off gradients are None, and so are
 * weight's and bias's when that parameter is None. */
fbx_status *fbx_k_native_layer_norm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *mean, *rstd;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &mean));
  FBX_TRY(fbx_arg_tensor(ctx, args, 4, &rstd));
  if (args[7].kind != FBX_IV_LIST || fbx_iv_list_len(&args[7]) != 3)
    return fbx_kernel_error(ctx, "output_mask must be a list of 3 bools");
  bool want[3];
  for (int k = 0; k < 3; k++) {
    const fbx_ivalue *e = fbx_iv_list_at(&args[7], k);
    if (e->kind != FBX_IV_BOOL && e->kind != FBX_IV_INT) return fbx_kernel_error(ctx, "output_mask must hold bools");
    want[k] = fbx_iv_to_int(e) != 0;
  }
  if (!fbx_dtype_is_floating(mean->dtype) || !fbx_dtype_is_floating(rstd->dtype))
    return fbx_kernel_error(ctx, "mean and rstd must be floating point");
  return lnb_run(ctx, outs, g, x, &args[2], 2, &args[5], &args[6], mean, rstd, 0, want);
}

/* fusebox::layer_norm_backward(grad, input, normalized_shape, weight?, bias?,
 * eps): layer_norm's gradients with the row statistics taken again from
 * the input (as the forward took them), for graphs that ran aten::layer_norm
 * and kept no mean or rstd. */
fbx_status *fbx_k_fbx_layer_norm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  if (!fbx_iv_is_scalar(&args[5])) return fbx_kernel_error(ctx, "eps must be a float");
  bool want[3] = {true, true, true};
  return lnb_run(ctx, outs, g, x, &args[2], 2, &args[3], &args[4], NULL, NULL, fbx_iv_to_double(&args[5]), want);
}

/* ---- batch_norm -------------------------------------------------------------------------------- */

typedef struct bn_job {
  const void *x;
  fbx_dtype dt;
  void *y;
  int64_t N, C, S;
  const double *scale, *shift; /* y = x * scale + shift, row t = n * C + ch taking entry t % period */
  int64_t period;              /* C (batch_norm: per channel) or N * C (group_norm: per image and channel) */
  double *mean, *var;          /* training: per-channel statistics (group_norm: mean per image and group) */
  double *rstd;                /* group_norm: 1 / sqrt(biased var + eps) per image and group */
  int64_t G;                   /* group_norm: groups */
  double eps;                  /* group_norm */
} bn_job;

static void bn_stats_body(void *c, int64_t begin, int64_t end) {
  const bn_job *j = c;
  double buf[CH];
  for (int64_t ch = begin; ch < end; ch++) {
    double s = 0, ss = 0;
    for (int64_t n = 0; n < j->N; n++)
      for (int64_t r = 0; r < j->S; r += CH) {
        int64_t m = min64(CH, j->S - r);
        fbx_red_load_f64(buf, j->x, j->dt, (n * j->C + ch) * j->S + r, m);
        for (int64_t k = 0; k < m; k++) s += buf[k];
      }
    double cnt = (double)(j->N * j->S), mean = s / cnt;
    for (int64_t n = 0; n < j->N; n++)
      for (int64_t r = 0; r < j->S; r += CH) {
        int64_t m = min64(CH, j->S - r);
        fbx_red_load_f64(buf, j->x, j->dt, (n * j->C + ch) * j->S + r, m);
        for (int64_t k = 0; k < m; k++) ss += (buf[k] - mean) * (buf[k] - mean);
      }
    j->mean[ch] = mean;
    j->var[ch] = ss / cnt; /* biased, as used for normalizing */
  }
}

static void bn_apply_body(void *c, int64_t begin, int64_t end) {
  const bn_job *j = c;
  if (j->dt == FBX_DTYPE_FLOAT32) {
    for (int64_t t = begin; t < end; t++) {
      int64_t ch = t % j->period;
      fbx_row_affine_f32((const float *)j->x + t * j->S, (float *)j->y + t * j->S, j->S, (float)j->scale[ch],
                         (float)j->shift[ch]);
    }
    return;
  }
  double buf[CH];
  for (int64_t t = begin; t < end; t++) { /* t = n * C + ch */
    int64_t ch = t % j->period;
    double sc = j->scale[ch], sh = j->shift[ch];
    for (int64_t r = 0; r < j->S; r += CH) {
      int64_t m = min64(CH, j->S - r);
      fbx_red_load_f64(buf, j->x, j->dt, t * j->S + r, m);
      for (int64_t k = 0; k < m; k++) buf[k] = buf[k] * sc + sh;
      fbx_red_store_f64(j->y, j->dt, t * j->S + r, buf, m);
    }
  }
}

/* batch_norm(input, weight, bias, running_mean, running_var, training,
 * momentum, eps, cudnn_enabled) on [N, C, *] inputs. training=False uses
 * the running statistics (required). training=True normalizes with the
 * batch's statistics (biased variance) and does NOT update running_mean /
 * running_var: the reference interpreter never mutates its inputs. */
fbx_status *fbx_k_batch_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *c = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->ndim < 2) {
    char s[256];
    fbx_red_shape_str(s, sizeof s, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "expected an input of at least 2 dims [N, C, ...], got shape %s", s);
  }
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  if (args[5].kind != FBX_IV_BOOL && args[5].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "training must be a bool");
  bool training = fbx_iv_to_int(&args[5]) != 0;
  if (!fbx_iv_is_scalar(&args[7])) return fbx_kernel_error(ctx, "eps must be a float");
  double eps = fbx_iv_to_double(&args[7]);
  bn_job j = {.dt = x->dtype, .N = x->sizes[0], .C = x->sizes[1], .S = 1, .period = x->sizes[1]};
  for (int i = 2; i < x->ndim; i++) j.S *= x->sizes[i];
  int64_t C = j.C;
  double *w = NULL, *b = NULL, *rm = NULL, *rv = NULL, *tmp = NULL;
  fbx_status *st = param_f64(ctx, &w, &args[1], "weight", C, 0, NULL);
  if (!st) st = param_f64(ctx, &b, &args[2], "bias", C, 0, NULL);
  if (!st && !training) {
    if (args[3].kind == FBX_IV_NONE || args[4].kind == FBX_IV_NONE)
      st = fbx_kernel_error(ctx, "running_mean and running_var must be given when training is False");
    if (!st) st = param_f64(ctx, &rm, &args[3], "running_mean", C, 0, NULL);
    if (!st) st = param_f64(ctx, &rv, &args[4], "running_var", C, 0, NULL);
  }
  if (!st) {
    tmp = fbx_malloc(sizeof(double) * (size_t)(4 * C + 1));
    if (!tmp) st = fbx_status_nomem();
  }
  if (!st) st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes);
  if (st) goto done;
  j.x = c->data, j.y = y->data;
  double *scale = tmp, *shift = tmp + C;
  if (training) {
    j.mean = tmp + 2 * C, j.var = tmp + 3 * C;
    if (x->numel > 0) fbx_parallel_for(C, 1, bn_stats_body, &j);
    rm = j.mean, rv = j.var;
  }
  for (int64_t ch = 0; ch < C; ch++) {
    double inv = 1 / sqrt(rv[ch] + eps);
    scale[ch] = (w ? w[ch] : 1) * inv;
    shift[ch] = (b ? b[ch] : 0) - rm[ch] * scale[ch];
  }
  j.scale = scale, j.shift = shift;
  if (x->numel > 0) fbx_parallel_for(j.N * C, j.S >= 8192 ? 1 : 8192 / j.S + 1, bn_apply_body, &j);
  if (training) rm = rv = NULL; /* they pointed into tmp */
  fbx_set_out_tensor(outs, 0, y);
  y = NULL;
done:
  fbx_free(w);
  fbx_free(b);
  fbx_free(rm);
  fbx_free(rv);
  fbx_free(tmp);
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}

/* ---- group_norm -------------------------------------------------------------------------------- */

/* Mean and rstd = 1 / sqrt(biased var + eps) of each (image, group): its
 * C / G channels of S values, contiguous (float32: layer_norm's row
 * statistics). */
static void gn_stats_body(void *c, int64_t begin, int64_t end) {
  const bn_job *j = c;
  int64_t len = j->C / j->G * j->S;
  if (j->dt == FBX_DTYPE_FLOAT32) {
    for (int64_t t = begin; t < end; t++) {
      float mean, rstd;
      fbx_row_moments_f32((const float *)j->x + t * len, len, (float)j->eps, &mean, &rstd);
      j->mean[t] = mean;
      j->rstd[t] = rstd;
    }
    return;
  }
  double buf[CH];
  for (int64_t t = begin; t < end; t++) { /* t = n * G + g: its values start at t * len */
    double s = 0, ss = 0;
    for (int64_t r = 0; r < len; r += CH) {
      int64_t m = min64(CH, len - r);
      fbx_red_load_f64(buf, j->x, j->dt, t * len + r, m);
      for (int64_t k = 0; k < m; k++) s += buf[k];
    }
    double mean = s / (double)len;
    for (int64_t r = 0; r < len; r += CH) {
      int64_t m = min64(CH, len - r);
      fbx_red_load_f64(buf, j->x, j->dt, t * len + r, m);
      for (int64_t k = 0; k < m; k++) ss += (buf[k] - mean) * (buf[k] - mean);
    }
    j->mean[t] = mean;
    j->rstd[t] = 1 / sqrt(ss / (double)len + j->eps);
  }
}

/* aten::group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled)
 * on [N, C, *]: the statistics of each group of C / G channels of an
 * image (float32: fbx_row_moments_f32, as layer_norm's), then, as
 * PyTorch's CPU kernel, y = x * scale + shift per image and channel with
 * scale = rstd * weight and shift = bias - scale * mean, where a missing
 * weight is 1 and a missing bias +0 (so a zero result is +0 as PyTorch's),
 * or shift = -(scale * mean) when both are missing (an input of -0 then
 * stays -0, as PyTorch's does). */
fbx_status *fbx_k_group_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *c = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t G = fbx_iv_to_int(&args[1]);
  if (x->ndim < 2)
    return fbx_kernel_error(ctx, "Expected at least 2 dimensions for input tensor but received %d", x->ndim);
  int64_t N = x->sizes[0], C = x->sizes[1];
  if (G <= 0 || C % G)
    return fbx_kernel_error(ctx,
                            "Expected number of channels in input to be divisible by num_groups, but got input of "
                            "shape [%lld, %lld, ...] and num_groups=%lld",
                            (long long)N, (long long)C, (long long)G);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  if (!fbx_iv_is_scalar(&args[4])) return fbx_kernel_error(ctx, "eps must be a float");
  double eps = fbx_iv_to_double(&args[4]);
  bn_job j = {.dt = x->dtype, .N = N, .C = C, .S = 1, .period = N * C, .G = G, .eps = eps};
  for (int i = 2; i < x->ndim; i++) j.S *= x->sizes[i];
  double *w = NULL, *b = NULL, *tmp = NULL;
  fbx_status *st = param_f64(ctx, &w, &args[2], "weight", C, 0, NULL);
  if (!st) st = param_f64(ctx, &b, &args[3], "bias", C, 0, NULL);
  if (!st) {
    tmp = fbx_malloc(sizeof(double) * (size_t)(2 * N * C + 2 * N * G + 1));
    if (!tmp) st = fbx_status_nomem();
  }
  if (!st) st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes);
  if (st) goto done;
  if (x->numel > 0) {
    double *scale = tmp, *shift = tmp + N * C;
    j.x = c->data, j.y = y->data, j.mean = tmp + 2 * N * C, j.rstd = j.mean + N * G;
    int64_t len = C / G * j.S;
    fbx_parallel_for(N * G, len >= 8192 ? 1 : 8192 / len + 1, gn_stats_body, &j);
    for (int64_t n = 0; n < N; n++)
      for (int64_t ch = 0; ch < C; ch++) {
        int64_t t = n * C + ch, ng = n * G + ch / (C / G);
        double sc = (w ? w[ch] : 1) * j.rstd[ng], sm = sc * j.mean[ng];
        scale[t] = sc;
        shift[t] = w || b ? (b ? b[ch] : 0.0) - sm : -sm;
      }
    j.scale = scale, j.shift = shift;
    fbx_parallel_for(N * C, j.S >= 8192 ? 1 : 8192 / j.S + 1, bn_apply_body, &j);
  }
  fbx_set_out_tensor(outs, 0, y);
  y = NULL;
done:
  fbx_free(w);
  fbx_free(b);
  fbx_free(tmp);
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}

/* ---- dropout ---------------------------------------------------------------------------------- */

/* splitmix64 over the run's generator state. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* dropout(input, p, train): train=False returns the input itself (as
 * PyTorch does); train=True keeps each element with probability 1-p, drawn
 * from the run's generator (ctx->rng_state, splitmix64; the stream differs
 * from PyTorch's), and computes x * (keep ? 1/(1-p) : 0), so NaN stays NaN. */
fbx_status *fbx_k_dropout(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *c = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (!fbx_iv_is_scalar(&args[1])) return fbx_kernel_error(ctx, "p must be a float");
  double p = fbx_iv_to_double(&args[1]);
  if (!(p >= 0 && p <= 1)) return fbx_kernel_error(ctx, "dropout probability has to be between 0 and 1, but got %g", p);
  if (args[2].kind != FBX_IV_BOOL && args[2].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "train must be a bool");
  bool train = fbx_iv_to_int(&args[2]) != 0;
  if (!train) {
    fbx_set_out_tensor(outs, 0, fbx_tensor_retain(x));
    return NULL;
  }
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "training-mode dropout needs a floating point input, got %s", fbx_dtype_name(x->dtype));
  if (!ctx->rng_state)
    return fbx_kernel_error(ctx, "training-mode dropout needs the run's random generator, and none was given");
  FBX_TRY(fbx_tensor_contiguous(&c, x));
  fbx_status *st = fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes);
  if (st) {
    fbx_tensor_release(c);
    return st;
  }
  double scale = p < 1 ? 1 / (1 - p) : 0, buf[CH];
  for (int64_t i = 0; i < x->numel; i += CH) {
    int64_t n = min64(CH, x->numel - i);
    fbx_red_load_f64(buf, c->data, c->dtype, i, n);
    for (int64_t k = 0; k < n; k++) {
      double u = (double)(next_u64(ctx->rng_state) >> 11) * 0x1.0p-53;
      buf[k] *= u < 1 - p ? scale : 0;
    }
    fbx_red_store_f64(y->data, y->dtype, i, buf, n);
  }
  fbx_tensor_release(c);
  fbx_set_out_tensor(outs, 0, y);
  return NULL;
}
