/* Pooling kernels (rows in ops/list_nn.h): max_pool2d,
 * max_pool2d_with_indices, avg_pool2d and their backward ops,
 * _adaptive_avg_pool2d_backward, adaptive_max_pool2d (and 1d) and
 * adaptive_max_pool2d_backward.
 *
 * The input, [C, H, W] or [N, C, H, W], is seen as P = N * C planes of
 * H x W: float32, float64 or bfloat16, and for avg_pool2d integers too
 * (each average truncated, as C's integer division); float16 is an error,
 * as on PyTorch's CPU. It is read once into doubles (any layout),
 * the planes are spread over fbx_parallel_for, and the result is stored in
 * the input's dtype. The windows are PyTorch's CPU kernels' (MaxPoolKernel,
 * AvgPoolKernel, AdaptiveAvgPoolKernel in 1.13):
 *   output size  floor_div(H + 2p - d (k - 1) - 1 (+ s - 1 with ceil_mode), s) + 1,
 *                one less with ceil_mode when the last window starts past H + p;
 *   max          window rows oh * s - p + i * d inside [0, H); the first
 *                largest value wins, a NaN always wins (the last NaN);
 *                index ih * W + iw; an empty window gives -inf at its start;
 *   adaptive     rows [floor(oh * H / Ho), ceil((oh + 1) * H / Ho)), the
 *                same for columns; max's rules (adaptive_max_pool2d);
 *   avg          window [oh * s - p, min(.. + k, H + p)) sized before clipping
 *                to [0, H) (count_include_pad), or after (otherwise), or
 *                divisor_override; an empty clipped window gives 0.
 * Backward ops scatter the output gradient back along the same windows,
 * summing where windows overlap (in double, one plane per task). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kutil.h"
#include "ops/reduce.h"

typedef struct pool_geom {
  int64_t P, H, W, Ho, Wo, kH, kW, sH, sW, pH, pW, dH, dW;
  bool ceil;
  bool adaptive; /* adaptive_max_pool2d: windows [floor(o * in / out), ceil((o + 1) * in / out)) */
  int ndim; /* 3 or 4 */
  int64_t N, C;
} pool_geom;

/* An int[2] argument (one int is used for both); an empty list gives
 * `def` (stride: the kernel size). */
static fbx_status *pair_arg(const fbx_kctx *ctx, int argi, const fbx_ivalue *args, const char *what, const int64_t *def,
                            int64_t *out) {
  int64_t v[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, argi, &args[argi], v, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n == 0 && def) {
    out[0] = def[0], out[1] = def[1];
    return NULL;
  }
  if (n == 1) v[1] = v[0];
  else if (n != 2)
    return fbx_kernel_error(ctx, "%s must either be a single int, or a tuple of two ints, got %d ints", what, n);
  out[0] = v[0], out[1] = v[1];
  return NULL;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil) {
  int64_t o = floor_div(in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0), s) + 1;
  if (ceil && (o - 1) * s >= in + pad) o--;
  return o;
}

/* The geometry of a pooling call: x and the kernel_size, stride, padding
 * (and dilation when dil_arg >= 0) arguments starting at args[karg]. */
static fbx_status *pool_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_ivalue *args, int karg, int dil_arg,
                                 bool ceil, pool_geom *g) {
  int64_t k[2], s[2], p[2], d[2] = {1, 1};
  FBX_TRY(pair_arg(ctx, karg, args, "kernel_size", NULL, k));
  FBX_TRY(pair_arg(ctx, karg + 1, args, "stride", k, s));
  FBX_TRY(pair_arg(ctx, karg + 2, args, "padding", NULL, p));
  if (dil_arg >= 0) FBX_TRY(pair_arg(ctx, dil_arg, args, "dilation", NULL, d));
  if (x->ndim != 3 && x->ndim != 4)
    return fbx_kernel_error(ctx, "expected a 3D or 4D (batch mode) input, got %dD", x->ndim);
  for (int i = x->ndim == 4 ? 1 : 0; i < x->ndim; i++)
    if (x->sizes[i] == 0)
      return fbx_kernel_error(ctx, "expected a 3D or 4D input with a zero size only in the batch dim (dim %d is 0)", i);
  /* PyTorch 1.13's CPU kernels: float32, float64, bfloat16; avg_pool2d
   * (forward) also integers, not float16 */
  bool ints_ok = dil_arg < 0 && karg == 1;
  if (x->dtype == FBX_DTYPE_FLOAT16 || x->dtype == FBX_DTYPE_BOOL ||
      (!fbx_dtype_is_floating(x->dtype) && !ints_ok))
    return fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(x->dtype));
  if (k[0] <= 0 || k[1] <= 0)
    return fbx_kernel_error(ctx, "kernel size should be greater than zero, but got kH: %lld kW: %lld", (long long)k[0],
                            (long long)k[1]);
  if (s[0] <= 0 || s[1] <= 0)
    return fbx_kernel_error(ctx, "stride should be greater than zero, but got dH: %lld dW: %lld", (long long)s[0],
                            (long long)s[1]);
  if (d[0] <= 0 || d[1] <= 0)
    return fbx_kernel_error(ctx, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                            (long long)d[0], (long long)d[1]);
  if (p[0] < 0 || p[1] < 0 || p[0] > k[0] / 2 || p[1] > k[1] / 2)
    return fbx_kernel_error(ctx,
                            "pad should be smaller than or equal to half of kernel size, but got padW = %lld, "
                            "padH = %lld, kW = %lld, kH = %lld",
                            (long long)p[1], (long long)p[0], (long long)k[1], (long long)k[0]);
  int r = x->ndim;
  g->ndim = r;
  g->N = r == 4 ? x->sizes[0] : 1;
  g->C = x->sizes[r - 3];
  g->P = g->N * g->C;
  g->H = x->sizes[r - 2], g->W = x->sizes[r - 1];
  g->kH = k[0], g->kW = k[1], g->sH = s[0], g->sW = s[1], g->pH = p[0], g->pW = p[1], g->dH = d[0], g->dW = d[1];
  g->ceil = ceil;
  g->adaptive = false;
  g->Ho = out_size(g->H, k[0], p[0], s[0], d[0], ceil);
  g->Wo = out_size(g->W, k[1], p[1], s[1], d[1], ceil);
  if (g->Ho < 1 || g->Wo < 1)
    return fbx_kernel_error(ctx, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). "
                                 "Output size is too small",
                            (long long)g->C, (long long)g->H, (long long)g->W, (long long)g->C, (long long)g->Ho,
                            (long long)g->Wo);
  return NULL;
}

static void out_sizes(const pool_geom *g, const fbx_tensor *x, int64_t *sizes) {
  memcpy(sizes, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  sizes[x->ndim - 2] = g->Ho;
  sizes[x->ndim - 1] = g->Wo;
}

static fbx_status *bool_arg(const fbx_kctx *ctx, const fbx_ivalue *v, const char *what, bool *out) {
  if (v->kind != FBX_IV_BOOL && v->kind != FBX_IV_INT) return fbx_kernel_error(ctx, "%s must be a bool", what);
  *out = fbx_iv_to_int(v) != 0;
  return NULL;
}

/* PyTorch's adaptive window: [floor(i * in / out), ceil((i + 1) * in / out)). */
static void adaptive_range(int64_t i, int64_t in, int64_t out, int64_t *a, int64_t *b) {
  *a = (i * in) / out;
  *b = ((i + 1) * in + out - 1) / out;
}

/* ---- max ---------------------------------------------------------------------------------- */

typedef struct max_job {
  const pool_geom *g;
  const double *x;
  double *y;
  int64_t *idx;
} max_job;

static void max_body(void *jv, int64_t begin, int64_t end) {
  const max_job *j = jv;
  const pool_geom *g = j->g;
  for (int64_t pl = begin; pl < end; pl++) {
    const double *x = j->x + pl * g->H * g->W;
    double *y = j->y + pl * g->Ho * g->Wo;
    int64_t *ix = j->idx + pl * g->Ho * g->Wo;
    for (int64_t oh = 0; oh < g->Ho; oh++)
      for (int64_t ow = 0; ow < g->Wo; ow++) {
        int64_t h0, h1, w0, w1;
        if (g->adaptive) {
          adaptive_range(oh, g->H, g->Ho, &h0, &h1);
          adaptive_range(ow, g->W, g->Wo, &w0, &w1);
        } else {
          h0 = oh * g->sH - g->pH, w0 = ow * g->sW - g->pW;
          h1 = h0 + (g->kH - 1) * g->dH + 1, w1 = w0 + (g->kW - 1) * g->dW + 1;
          if (h1 > g->H) h1 = g->H;
          if (w1 > g->W) w1 = g->W;
          while (h0 < 0) h0 += g->dH;
          while (w0 < 0) w0 += g->dW;
        }
        int64_t best = h0 * g->W + w0;
        double m = -INFINITY;
        for (int64_t ih = h0; ih < h1; ih += g->dH)
          for (int64_t iw = w0; iw < w1; iw += g->dW) {
            double v = x[ih * g->W + iw];
            if (v > m || isnan(v)) m = v, best = ih * g->W + iw;
          }
        y[oh * g->Wo + ow] = m;
        ix[oh * g->Wo + ow] = best;
      }
  }
}

/* The max windows of geometry g over x: values in x's dtype into outs[0],
 * int64 indices into outs[1] when want_idx. */
static fbx_status *max_run(fbx_tensor *x, const pool_geom *g, bool want_idx, fbx_ivalue *outs) {
  fbx_tensor *y = NULL, *ix = NULL;
  int64_t sizes[4];
  out_sizes(g, x, sizes);
  int64_t nout = g->P * g->Ho * g->Wo;
  double *xv = NULL, *yv = fbx_malloc(sizeof(double) * (size_t)(nout ? nout : 1));
  fbx_status *st = yv ? NULL : fbx_status_nomem();
  if (!st) st = fbx_tensor_empty(&ix, FBX_DTYPE_INT64, x->ndim, sizes);
  if (!st) st = fbx_red_load_all_f64(&xv, x);
  if (st) goto done;
  max_job j = {g, xv, yv, ix->data};
  fbx_parallel_for(g->P, 1, max_body, &j);
  if ((st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, sizes, yv))) goto done;
  fbx_set_out_tensor(outs, 0, y);
  if (want_idx) fbx_set_out_tensor(outs, 1, ix);
  else fbx_tensor_release(ix);
  y = ix = NULL;
done:
  fbx_tensor_release(ix);
  fbx_free(xv);
  fbx_free(yv);
  return st;
}

/* max_pool2d / max_pool2d_with_indices(self, kernel_size, stride, padding,
 * dilation, ceil_mode): values in self's dtype, indices int64. */
fbx_status *fbx_k_max_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool ceil = false;
  FBX_TRY(bool_arg(ctx, &args[5], "ceil_mode", &ceil));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 1, 4, ceil, &g));
  return max_run(x, &g, ctx->op->schema.nrets == 2, outs);
}

/* The backward ops' common start: grad_output (args[0]) must have the
 * output's shape for self (args[1]); gi gets zeros of self's size. */
static fbx_status *bwd_start(const fbx_kctx *ctx, const fbx_ivalue *args, const pool_geom *g, fbx_tensor *x, double **go,
                             double **gi) {
  fbx_tensor *gt;
  *go = *gi = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  int64_t sizes[4];
  out_sizes(g, x, sizes);
  bool ok = gt->ndim == x->ndim;
  for (int i = 0; ok && i < x->ndim; i++) ok = gt->sizes[i] == sizes[i];
  if (!ok) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, gt->ndim, gt->sizes);
    fbx_red_shape_str(b, sizeof b, x->ndim, sizes);
    return fbx_kernel_error(ctx, "grad_output has shape %s, expected %s", a, b);
  }
  *gi = fbx_calloc((size_t)(x->numel ? x->numel : 1), sizeof(double));
  if (!*gi) return fbx_status_nomem();
  fbx_status *st = fbx_red_load_all_f64(go, gt);
  if (st) {
    fbx_free(*gi);
    *gi = NULL;
  }
  return st;
}

typedef struct scatter_job {
  const pool_geom *g;
  const double *go;
  const int64_t *idx; /* max: indices */
  double *gi;
  int mode;           /* 0 max, 1 avg, 2 adaptive */
  bool count_pad;
  int64_t divisor;    /* avg: 0 when None */
} scatter_job;

static void avg_window(const pool_geom *g, int64_t oh, int64_t ow, bool count_pad, int64_t divisor, int64_t *h0,
                       int64_t *h1, int64_t *w0, int64_t *w1, double *div) {
  int64_t a0 = oh * g->sH - g->pH, b0 = ow * g->sW - g->pW;
  int64_t a1 = a0 + g->kH, b1 = b0 + g->kW;
  if (a1 > g->H + g->pH) a1 = g->H + g->pH;
  if (b1 > g->W + g->pW) b1 = g->W + g->pW;
  int64_t pool = (a1 - a0) * (b1 - b0);
  if (a0 < 0) a0 = 0;
  if (b0 < 0) b0 = 0;
  if (a1 > g->H) a1 = g->H;
  if (b1 > g->W) b1 = g->W;
  *h0 = a0, *h1 = a1, *w0 = b0, *w1 = b1;
  *div = divisor ? (double)divisor : count_pad ? (double)pool : (double)((a1 - a0) * (b1 - b0));
}

static void scatter_body(void *jv, int64_t begin, int64_t end) {
  const scatter_job *j = jv;
  const pool_geom *g = j->g;
  for (int64_t pl = begin; pl < end; pl++) {
    double *gi = j->gi + pl * g->H * g->W;
    const double *go = j->go + pl * g->Ho * g->Wo;
    for (int64_t oh = 0; oh < g->Ho; oh++)
      for (int64_t ow = 0; ow < g->Wo; ow++) {
        int64_t o = oh * g->Wo + ow;
        if (j->mode == 0) {
          int64_t k = j->idx[pl * g->Ho * g->Wo + o];
          if (k >= 0 && k < g->H * g->W) gi[k] += go[o];
          continue;
        }
        int64_t h0, h1, w0, w1;
        double div;
        if (j->mode == 1) {
          avg_window(g, oh, ow, j->count_pad, j->divisor, &h0, &h1, &w0, &w1, &div);
        } else {
          adaptive_range(oh, g->H, g->Ho, &h0, &h1);
          adaptive_range(ow, g->W, g->Wo, &w0, &w1);
          div = (double)((h1 - h0) * (w1 - w0));
        }
        double v = go[o] / div;
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) gi[ih * g->W + iw] += v;
      }
  }
}

/* max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices): grad_output added at each
 * window's index. */
fbx_status *fbx_k_max_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *it, *ic = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 7, &it));
  bool ceil = false;
  FBX_TRY(bool_arg(ctx, &args[6], "ceil_mode", &ceil));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 2, 5, ceil, &g));
  if (it->dtype != FBX_DTYPE_INT64 || it->numel != g.P * g.Ho * g.Wo)
    return fbx_kernel_error(ctx, "indices must be int64 with the output's %lld elements",
                            (long long)(g.P * g.Ho * g.Wo));
  double *go, *gi;
  FBX_TRY(bwd_start(ctx, args, &g, x, &go, &gi));
  fbx_status *st = fbx_tensor_contiguous(&ic, it);
  if (st) goto done;
  scatter_job j = {.g = &g, .go = go, .idx = ic->data, .gi = gi, .mode = 0};
  fbx_parallel_for(g.P, 1, scatter_body, &j);
  if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, x->sizes, gi))) fbx_set_out_tensor(outs, 0, y);
done:
  fbx_tensor_release(ic);
  fbx_free(go);
  fbx_free(gi);
  return st;
}

/* ---- avg ---------------------------------------------------------------------------------- */

typedef struct avg_job {
  const pool_geom *g;
  const double *x;
  double *y;
  bool count_pad;
  int64_t divisor;
  bool ints; /* integral input */
} avg_job;

static void avg_body(void *jv, int64_t begin, int64_t end) {
  const avg_job *j = jv;
  const pool_geom *g = j->g;
  for (int64_t pl = begin; pl < end; pl++) {
    const double *x = j->x + pl * g->H * g->W;
    double *y = j->y + pl * g->Ho * g->Wo;
    for (int64_t oh = 0; oh < g->Ho; oh++)
      for (int64_t ow = 0; ow < g->Wo; ow++) {
        int64_t h0, h1, w0, w1;
        double div, s = 0;
        avg_window(g, oh, ow, j->count_pad, j->divisor, &h0, &h1, &w0, &w1, &div);
        if (h0 >= h1 || w0 >= w1) {
          y[oh * g->Wo + ow] = 0;
          continue;
        }
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) s += x[ih * g->W + iw];
        y[oh * g->Wo + ow] = j->ints ? trunc(s / div) : s / div; /* integers divide as C does */
      }
  }
}

/* avg_pool2d's flags at args[fi] (ceil_mode, count_include_pad, divisor_override). */
static fbx_status *avg_flags(const fbx_kctx *ctx, const fbx_ivalue *args, int fi, bool *ceil, bool *count_pad,
                             int64_t *divisor) {
  FBX_TRY(bool_arg(ctx, &args[fi], "ceil_mode", ceil));
  FBX_TRY(bool_arg(ctx, &args[fi + 1], "count_include_pad", count_pad));
  *divisor = 0;
  if (args[fi + 2].kind == FBX_IV_NONE) return NULL;
  if (args[fi + 2].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "divisor_override must be an int or None");
  *divisor = args[fi + 2].u.i;
  if (*divisor == 0) return fbx_kernel_error(ctx, "divisor must be not zero");
  return NULL;
}

/* avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) */
fbx_status *fbx_k_avg_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool ceil = false, count_pad = false;
  int64_t divisor = 0;
  FBX_TRY(avg_flags(ctx, args, 4, &ceil, &count_pad, &divisor));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 1, -1, ceil, &g));
  int64_t sizes[4];
  out_sizes(&g, x, sizes);
  int64_t nout = g.P * g.Ho * g.Wo;
  double *xv = NULL, *yv = fbx_malloc(sizeof(double) * (size_t)(nout ? nout : 1));
  fbx_status *st = yv ? fbx_red_load_all_f64(&xv, x) : fbx_status_nomem();
  if (!st) {
    avg_job j = {&g, xv, yv, count_pad, divisor, !fbx_dtype_is_floating(x->dtype)};
    fbx_parallel_for(g.P, 1, avg_body, &j);
    if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, sizes, yv))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(xv);
  fbx_free(yv);
  return st;
}

/* avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override) */
fbx_status *fbx_k_avg_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  bool ceil = false, count_pad = false;
  int64_t divisor = 0;
  FBX_TRY(avg_flags(ctx, args, 5, &ceil, &count_pad, &divisor));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 2, -1, ceil, &g));
  double *go, *gi;
  FBX_TRY(bwd_start(ctx, args, &g, x, &go, &gi));
  scatter_job j = {.g = &g, .go = go, .gi = gi, .mode = 1, .count_pad = count_pad, .divisor = divisor};
  fbx_parallel_for(g.P, 1, scatter_body, &j);
  fbx_status *st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, x->sizes, gi);
  if (!st) fbx_set_out_tensor(outs, 0, y);
  fbx_free(go);
  fbx_free(gi);
  return st;
}

/* _adaptive_avg_pool2d_backward(grad_output [.., oh, ow], self [.., H, W]):
 * each output cell's gradient spread evenly over its adaptive window. */
fbx_status *fbx_k_adaptive_avg_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *gt, *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  if ((x->ndim != 3 && x->ndim != 4) || gt->ndim != x->ndim)
    return fbx_kernel_error(ctx, "expected 3D or 4D self and grad_output of the same rank, got %dD and %dD", x->ndim,
                            gt->ndim);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  for (int i = 0; i < x->ndim - 2; i++)
    if (gt->sizes[i] != x->sizes[i]) return fbx_kernel_error(ctx, "grad_output's dim %d differs from self's", i);
  int r = x->ndim;
  pool_geom g = {.ndim = r, .N = r == 4 ? x->sizes[0] : 1, .C = x->sizes[r - 3], .H = x->sizes[r - 2],
                 .W = x->sizes[r - 1], .Ho = gt->sizes[r - 2], .Wo = gt->sizes[r - 1]};
  g.P = g.N * g.C;
  if (g.Ho <= 0 || g.Wo <= 0)
    return fbx_kernel_error(ctx, "grad_output has an empty spatial dim");
  double *go = NULL, *gi = fbx_calloc((size_t)(x->numel ? x->numel : 1), sizeof(double));
  fbx_status *st = gi ? fbx_red_load_all_f64(&go, gt) : fbx_status_nomem();
  if (!st) {
    scatter_job j = {.g = &g, .go = go, .gi = gi, .mode = 2};
    fbx_parallel_for(g.P, 1, scatter_body, &j);
    if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, x->sizes, gi))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(go);
  fbx_free(gi);
  return st;
}

/* ---- 1-D pooling: the 2-D kernels on [.., C, 1, L] ------------------------------------------------ */

/* An int[1] argument as the 2-D pair [h, v] (empty stays empty: stride). */
static fbx_status *pair_1d(const fbx_kctx *ctx, const fbx_ivalue *arg, int argi, int64_t h, fbx_ivalue *out) {
  int64_t v[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, argi, arg, v, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n > 1) return fbx_kernel_error(ctx, "%s must be a single int, got %d ints", ctx->op->schema.args[argi].name, n);
  FBX_TRY(fbx_iv_list_new(out, 2));
  if (n == 0) return NULL;
  if ((st = fbx_iv_list_push(out, fbx_iv_int(h))) || (st = fbx_iv_list_push(out, fbx_iv_int(v[0])))) {
    fbx_iv_release(out);
    *out = fbx_iv_none();
  }
  return st;
}

/* x [.., C, L] viewed as [.., C, 1, L] (retained into *out). */
static fbx_status *unsq(const fbx_kctx *ctx, fbx_tensor *x, fbx_tensor **out) {
  if (x->ndim != 2 && x->ndim != 3)
    return fbx_kernel_error(ctx, "expected a 2D or 3D (batch mode) input, got %dD", x->ndim);
  int64_t sz[4], sd[4];
  int r = x->ndim;
  for (int i = 0; i < r - 1; i++) sz[i] = x->sizes[i], sd[i] = x->strides[i];
  sz[r - 1] = 1, sd[r - 1] = x->sizes[r - 1] * (x->strides[r - 1] ? x->strides[r - 1] : 1);
  sz[r] = x->sizes[r - 1], sd[r] = x->strides[r - 1];
  return fbx_tensor_view(out, x, r + 1, sz, sd, x->offset);
}

/* A view of t without its dim d (of size 1), retained into *out. */
static fbx_status *squeeze_view(fbx_tensor *t, int d, fbx_tensor **out) {
  int64_t sz[FBX_MAX_DIMS], sd[FBX_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d) sz[n] = t->sizes[i], sd[n++] = t->strides[i];
  return fbx_tensor_view(out, t, n, sz, sd, t->offset);
}

/* max_pool1d, avg_pool1d and their fusebox backward ops. */
fbx_status *fbx_k_pool1d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  bool bwd = strstr(name, "_backward") != NULL, max = name[0] == 'm';
  int xi = bwd ? 1 : 0, k0 = xi + 1; /* kernel_size, stride, padding[, dilation] follow self */
  fbx_tensor *x, *g = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, xi, &x));
  if (bwd) FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  fbx_ivalue a[8] = {{0}}, o[2] = {fbx_iv_none(), fbx_iv_none()};
  fbx_tensor *xu = NULL, *gu = NULL, *res = NULL;
  fbx_status *st = unsq(ctx, x, &xu);
  if (!st && g) st = unsq(ctx, g, &gu);
  static const int64_t hval[4] = {1, 1, 0, 1}; /* kernel, stride, padding, dilation heights */
  int nlist = max ? 4 : 3;
  fbx_ivalue lists[4] = {{0}};
  for (int i = 0; !st && i < nlist; i++) st = pair_1d(ctx, &args[k0 + i], k0 + i, hval[i], &lists[i]);
  if (st) goto done;
  fbx_kctx c2 = *ctx;
  if (!bwd) {
    /* 2-D forward: self, kernel, stride, padding, (dilation, ceil) | (ceil, count_include_pad, divisor) */
    a[0] = fbx_iv_tensor(xu);
    for (int i = 0; i < nlist; i++) a[1 + i] = lists[i];
    if (max) {
      a[5] = args[5];
      c2.op = fbx_op_get(FBX_OP_max_pool2d);
      st = fbx_k_max_pool2d(&c2, a, o);
    } else {
      a[4] = args[4], a[5] = args[5], a[6] = fbx_iv_none();
      c2.op = fbx_op_get(FBX_OP_avg_pool2d);
      st = fbx_k_avg_pool2d(&c2, a, o);
    }
  } else if (max) {
    /* recompute the indices, then the 2-D backward */
    a[0] = fbx_iv_tensor(xu);
    for (int i = 0; i < 4; i++) a[1 + i] = lists[i];
    a[5] = args[6];
    c2.op = fbx_op_get(FBX_OP_max_pool2d_with_indices);
    fbx_ivalue r[2] = {fbx_iv_none(), fbx_iv_none()};
    if (!(st = fbx_k_max_pool2d(&c2, a, r))) {
      fbx_ivalue b[8] = {fbx_iv_tensor(gu), fbx_iv_tensor(xu), lists[0], lists[1], lists[2], lists[3], args[6], r[1]};
      c2.op = fbx_op_get(FBX_OP_max_pool2d_with_indices_backward);
      st = fbx_k_max_pool2d_backward(&c2, b, o);
    }
    fbx_iv_release(&r[0]);
    fbx_iv_release(&r[1]);
  } else {
    fbx_ivalue b[8] = {fbx_iv_tensor(gu), fbx_iv_tensor(xu), lists[0], lists[1], lists[2], args[5], args[6], fbx_iv_none()};
    c2.op = fbx_op_get(FBX_OP_avg_pool2d_backward);
    st = fbx_k_avg_pool2d_backward(&c2, b, o);
  }
  if (st) goto done;
  /* drop the size-1 height again */
  if (!(st = squeeze_view(o[0].u.t, o[0].u.t->ndim - 2, &res))) fbx_set_out_tensor(outs, 0, res);
done:
  fbx_iv_release(&o[0]);
  for (int i = 0; i < 4; i++) fbx_iv_release(&lists[i]);
  fbx_tensor_release(xu);
  fbx_tensor_release(gu);
  return st;
}

/* ---- adaptive max pooling ------------------------------------------------------------------------- */

/* x has lo or lo + 1 dims, none empty but the first (PyTorch checks them so:
 * a 3-D input of adaptive_max_pool2d may have no channels). */
static fbx_status *adaptive_dims(const fbx_kctx *ctx, const fbx_tensor *x, const char *what, int lo) {
  if (x->ndim != lo && x->ndim != lo + 1)
    return fbx_kernel_error(ctx, "%s(): Expected %dD or %dD tensor, but got %dD", what, lo, lo + 1, x->ndim);
  for (int i = 1; i < x->ndim; i++)
    if (x->sizes[i] == 0)
      return fbx_kernel_error(ctx, "%s(): Expected input to have non-zero size for non-batch dimensions, "
                                   "but dimension %d is empty", what, i);
  return NULL;
}

/* The geometry of adaptive_max_pool2d over x [C, H, W] or [N, C, H, W]
 * with output_size os; `what` names the op in messages, as PyTorch's. */
static fbx_status *adaptive_max_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const int64_t *os, const char *what,
                                         pool_geom *g) {
  FBX_TRY(adaptive_dims(ctx, x, what, 3));
  if (x->dtype == FBX_DTYPE_FLOAT16 || !fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(x->dtype));
  if (os[0] < 0 || os[1] < 0)
    return fbx_kernel_error(ctx, "output_size must be non-negative, got [%lld, %lld]", (long long)os[0],
                            (long long)os[1]);
  int r = x->ndim;
  *g = (pool_geom){.ndim = r, .N = r == 4 ? x->sizes[0] : 1, .C = x->sizes[r - 3], .H = x->sizes[r - 2],
                   .W = x->sizes[r - 1], .Ho = os[0], .Wo = os[1], .dH = 1, .dW = 1, .adaptive = true};
  g->P = g->N * g->C;
  return NULL;
}

/* adaptive_max_pool2d(self, output_size [oh, ow]) -> (values, indices) and
 * adaptive_max_pool1d(self [N,] C, L, output_size [ol]), which is the 2-D
 * op on [.., C, 1, L] with output_size [1, ol], its outputs squeezed again
 * (PyTorch's composite). Indices are flat positions h * W + w per plane. */
fbx_status *fbx_k_adaptive_max_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bool one_d = !strcmp(fbx_sym_unqual(ctx->op->schema.name), "adaptive_max_pool1d");
  const char *what = one_d ? "adaptive_max_pool1d" : "adaptive_max_pool2d";
  fbx_tensor *x, *xu = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t v[FBX_MAX_DIMS], os[2];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], v, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n != (one_d ? 1 : 2))
    return fbx_kernel_error(ctx, "%s(): argument 'output_size' should contain %s, got %d", what,
                            one_d ? "one int" : "two ints", n);
  if (one_d) {
    FBX_TRY(adaptive_dims(ctx, x, what, 2));
    os[0] = 1, os[1] = v[0];
    FBX_TRY(unsq(ctx, x, &xu));
  } else {
    os[0] = v[0], os[1] = v[1];
    xu = fbx_tensor_retain(x);
  }
  pool_geom g;
  fbx_ivalue o[2] = {fbx_iv_none(), fbx_iv_none()};
  fbx_tensor *a = NULL, *b = NULL;
  if ((st = adaptive_max_geometry(ctx, xu, os, what, &g)) || (st = max_run(xu, &g, true, o))) goto done;
  if (!one_d) {
    outs[0] = o[0], outs[1] = o[1];
    o[0] = o[1] = fbx_iv_none();
  } else if (!(st = squeeze_view(o[0].u.t, xu->ndim - 2, &a)) && !(st = squeeze_view(o[1].u.t, xu->ndim - 2, &b))) {
    fbx_set_out_tensor(outs, 0, a);
    fbx_set_out_tensor(outs, 1, b);
    a = b = NULL;
  }
done:
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  fbx_iv_release(&o[0]);
  fbx_iv_release(&o[1]);
  fbx_tensor_release(xu);
  return st;
}

/* adaptive_max_pool2d_backward(grad_output, self, indices): each output
 * cell's gradient added at its index in self's plane. */
fbx_status *fbx_k_adaptive_max_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *gt, *x, *it, *ic = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &it));
  if (gt->ndim != x->ndim)
    return fbx_kernel_error(ctx, "grad_output has %d dims, self %d", gt->ndim, x->ndim);
  if (gt->dtype != x->dtype)
    return fbx_kernel_error(ctx, "expected dtype %s for grad_output, got %s", fbx_dtype_name(x->dtype),
                            fbx_dtype_name(gt->dtype));
  int64_t os[2] = {gt->ndim >= 2 ? gt->sizes[gt->ndim - 2] : 0, gt->ndim >= 2 ? gt->sizes[gt->ndim - 1] : 0};
  pool_geom g;
  FBX_TRY(adaptive_max_geometry(ctx, x, os, "adaptive_max_pool2d_backward", &g));
  if (it->dtype != FBX_DTYPE_INT64 || !fbx_tensor_same_shape(it, gt))
    return fbx_kernel_error(ctx, "indices must be int64 with grad_output's shape");
  double *go, *gi;
  FBX_TRY(bwd_start(ctx, args, &g, x, &go, &gi));
  fbx_status *st = fbx_tensor_contiguous(&ic, it);
  if (!st) {
    scatter_job j = {.g = &g, .go = go, .idx = ic->data, .gi = gi, .mode = 0};
    fbx_parallel_for(g.P, 1, scatter_body, &j);
    if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, x->sizes, gi))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_tensor_release(ic);
  fbx_free(go);
  fbx_free(gi);
  return st;
}
