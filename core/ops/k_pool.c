/* Pooling kernels (rows in ops/list_nn.h): max_pool2d / 3d,
 * max_pool{2,3}d_with_indices, avg_pool{2,3}d and their backward ops,
 * adaptive_avg_pool3d, _adaptive_avg_pool{2,3}d_backward,
 * adaptive_max_pool{1,2,3}d and adaptive_max_pool{2,3}d_backward.
 *
 * The input, [C, *sp] or [N, C, *sp] with 2 or 3 spatial dims sp, is seen
 * as P = N * C planes (a 2-D plane is a volume of depth 1): float32,
 * float64, in 2-D bfloat16, and for avg_pool integers too (each average
 * truncated, as C's integer division); float16 is an error, as on
 * PyTorch's CPU. It is read once into doubles (any layout), the planes are
 * spread over fbx_parallel_for, and the result is stored in the input's
 * dtype. The windows are PyTorch's CPU kernels' (MaxPoolKernel,
 * AvgPoolKernel, AdaptiveAvgPoolKernel, the 3-D frames in 1.13), per axis:
 *   output size  floor_div(in + 2p - d (k - 1) - 1 (+ s - 1 with ceil_mode), s) + 1,
 *                one less with ceil_mode when the last window starts past in + p;
 *   max          taps o * s - p + i * d inside [0, in); the first
 *                largest value wins, a NaN always wins (the last NaN);
 *                index (t * H + h) * W + w; an empty window gives -inf at its start;
 *   adaptive     [floor(o * in / out), ceil((o + 1) * in / out)); max's
 *                rules (adaptive_max_pool) or the mean (adaptive_avg_pool);
 *   avg          window [o * s - p, min(.. + k, in + p)) sized before clipping
 *                to [0, in) (count_include_pad), or after (otherwise), or
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

/* Spatial axes are 0 (depth), 1 (height), 2 (width); a 2-D pool has depth
 * 1 with a window of 1 (k 1, s 1, p 0, d 1), so one code path serves both. */
typedef struct pool_geom {
  int64_t P;                        /* planes: N * C */
  int64_t in[3], out[3];            /* spatial sizes of the input and the output */
  int64_t k[3], s[3], p[3], d[3];   /* kernel, stride, padding, dilation */
  bool ceil;
  bool adaptive; /* adaptive max: windows [floor(o * in / out), ceil((o + 1) * in / out)) */
  int ndim;      /* the input's rank: nsp + 1 or nsp + 2 */
  int nsp;       /* spatial dims: 2 or 3 */
  int64_t N, C;
} pool_geom;

static int64_t plane_in(const pool_geom *g) { return g->in[0] * g->in[1] * g->in[2]; }
static int64_t plane_out(const pool_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }

/* An int[nsp] argument (one int is used for every axis) into out[3 - nsp
 * ..2] (the depth of a 2-D pool keeps `one`); an empty list gives `def`
 * (stride: the kernel size). */
static fbx_status *tuple_arg(const fbx_kctx *ctx, int argi, const fbx_ivalue *args, const char *what, int nsp,
                             const int64_t *def, int64_t one, int64_t *out) {
  int64_t v[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, argi, &args[argi], v, FBX_MAX_DIMS, &st);
  if (st) return st;
  out[0] = one;
  if (n == 0 && def) {
    for (int a = 3 - nsp; a < 3; a++) out[a] = def[a];
    return NULL;
  }
  if (n != 1 && n != nsp)
    return fbx_kernel_error(ctx, "%s must either be a single int, or a tuple of %s ints, got %d ints", what,
                            nsp == 3 ? "three" : "two", n);
  for (int a = 0; a < nsp; a++) out[3 - nsp + a] = v[n == 1 ? 0 : a];
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

/* The geometry of an nsp-D pooling call: x and the kernel_size, stride,
 * padding (and dilation when dil_arg >= 0) arguments starting at
 * args[karg]. */
static fbx_status *pool_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_ivalue *args, int karg, int dil_arg,
                                 bool ceil, int nsp, pool_geom *g) {
  static const char *const AX[3] = {"T", "H", "W"};
  int64_t k[3], s[3], p[3], d[3] = {1, 1, 1};
  FBX_TRY(tuple_arg(ctx, karg, args, "kernel_size", nsp, NULL, 1, k));
  FBX_TRY(tuple_arg(ctx, karg + 1, args, "stride", nsp, k, 1, s));
  FBX_TRY(tuple_arg(ctx, karg + 2, args, "padding", nsp, NULL, 0, p));
  if (dil_arg >= 0) FBX_TRY(tuple_arg(ctx, dil_arg, args, "dilation", nsp, NULL, 1, d));
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
    return fbx_kernel_error(ctx, "expected a %dD or %dD (batch mode) input, got %dD", nsp + 1, nsp + 2, x->ndim);
  for (int i = x->ndim == nsp + 2 ? 1 : 0; i < x->ndim; i++)
    if (x->sizes[i] == 0)
      return fbx_kernel_error(ctx, "expected a %dD or %dD input with a zero size only in the batch dim (dim %d is 0)",
                              nsp + 1, nsp + 2, i);
  /* PyTorch 1.13's CPU kernels: float32, float64, and in 2-D bfloat16;
   * avg_pool (forward) also integers; no float16 */
  bool ints_ok = dil_arg < 0 && karg == 1;
  if (x->dtype == FBX_DTYPE_FLOAT16 || x->dtype == FBX_DTYPE_BOOL || (nsp == 3 && x->dtype == FBX_DTYPE_BFLOAT16) ||
      (!fbx_dtype_is_floating(x->dtype) && !ints_ok))
    return fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(x->dtype));
  for (int a = 3 - nsp; a < 3; a++) {
    if (k[a] <= 0)
      return fbx_kernel_error(ctx, "kernel size should be greater than zero, but got k%s: %lld", AX[a], (long long)k[a]);
    if (s[a] <= 0)
      return fbx_kernel_error(ctx, "stride should be greater than zero, but got d%s: %lld", AX[a], (long long)s[a]);
    if (d[a] <= 0)
      return fbx_kernel_error(ctx, "dilation should be greater than zero, but got dilation%s: %lld", AX[a],
                              (long long)d[a]);
    if (p[a] < 0 || p[a] > k[a] / 2)
      return fbx_kernel_error(ctx, "pad should be smaller than or equal to half of kernel size, but got pad%s = %lld, "
                                   "k%s = %lld", AX[a], (long long)p[a], AX[a], (long long)k[a]);
  }
  int r = x->ndim;
  g->ndim = r, g->nsp = nsp;
  g->N = r == nsp + 2 ? x->sizes[0] : 1;
  g->C = x->sizes[r - nsp - 1];
  g->P = g->N * g->C;
  g->in[0] = nsp == 3 ? x->sizes[r - 3] : 1;
  g->in[1] = x->sizes[r - 2], g->in[2] = x->sizes[r - 1];
  for (int a = 0; a < 3; a++) {
    g->k[a] = k[a], g->s[a] = s[a], g->p[a] = p[a], g->d[a] = d[a];
    g->out[a] = out_size(g->in[a], k[a], p[a], s[a], d[a], ceil);
  }
  g->ceil = ceil;
  g->adaptive = false;
  if (g->out[0] < 1 || g->out[1] < 1 || g->out[2] < 1) {
    char a[96], b[96];
    int64_t is[4] = {g->C, g->in[0], g->in[1], g->in[2]}, os[4] = {g->C, g->out[0], g->out[1], g->out[2]};
    if (nsp == 2) is[1] = is[0], os[1] = os[0]; /* drop the depth */
    fbx_red_shape_str(a, sizeof a, nsp + 1, is + (nsp == 2));
    fbx_red_shape_str(b, sizeof b, nsp + 1, os + (nsp == 2));
    return fbx_kernel_error(ctx, "Given input size: %s. Calculated output size: %s. Output size is too small", a, b);
  }
  return NULL;
}

static void out_sizes(const pool_geom *g, const fbx_tensor *x, int64_t *sizes) {
  memcpy(sizes, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  for (int a = 3 - g->nsp; a < 3; a++) sizes[x->ndim - 3 + a] = g->out[a];
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

/* The taps of output o along axis a of a max window: lo, lo + d, .. < hi. */
static void max_axis(const pool_geom *g, int a, int64_t o, int64_t *lo, int64_t *hi) {
  if (g->adaptive) {
    adaptive_range(o, g->in[a], g->out[a], lo, hi);
    return;
  }
  int64_t l = o * g->s[a] - g->p[a], h = l + (g->k[a] - 1) * g->d[a] + 1;
  if (h > g->in[a]) h = g->in[a];
  while (l < 0) l += g->d[a];
  *lo = l, *hi = h;
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
  const int64_t H = g->in[1], W = g->in[2], dT = g->d[0], dH = g->d[1], dW = g->d[2];
  for (int64_t pl = begin; pl < end; pl++) {
    const double *x = j->x + pl * plane_in(g);
    double *y = j->y + pl * plane_out(g);
    int64_t *ix = j->idx + pl * plane_out(g), o = 0;
    for (int64_t ot = 0; ot < g->out[0]; ot++)
      for (int64_t oh = 0; oh < g->out[1]; oh++)
        for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {
          int64_t t0, t1, h0, h1, w0, w1;
          max_axis(g, 0, ot, &t0, &t1);
          max_axis(g, 1, oh, &h0, &h1);
          max_axis(g, 2, ow, &w0, &w1);
          int64_t best = (t0 * H + h0) * W + w0;
          double m = -INFINITY;
          for (int64_t it = t0; it < t1; it += dT)
            for (int64_t ih = h0; ih < h1; ih += dH)
              for (int64_t iw = w0; iw < w1; iw += dW) {
                int64_t at = (it * H + ih) * W + iw;
                double v = x[at];
                if (v > m || isnan(v)) m = v, best = at;
              }
          y[o] = m;
          ix[o] = best;
        }
  }
}

/* The max windows of geometry g over x: values in x's dtype into outs[0],
 * int64 indices into outs[1] when want_idx. */
static fbx_status *max_run(fbx_tensor *x, const pool_geom *g, bool want_idx, fbx_ivalue *outs) {
  fbx_tensor *y = NULL, *ix = NULL;
  int64_t sizes[FBX_MAX_DIMS];
  out_sizes(g, x, sizes);
  int64_t nout = g->P * plane_out(g);
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

/* Spatial dims of a pooling row: 3 for the *pool3d* rows, else 2. */
static int row_nsp(const fbx_kctx *ctx) { return strstr(fbx_sym_unqual(ctx->op->schema.name), "3d") ? 3 : 2; }

/* max_pool{2,3}d / max_pool{2,3}d_with_indices(self, kernel_size, stride,
 * padding, dilation, ceil_mode): values in self's dtype, indices int64. */
fbx_status *fbx_k_max_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool ceil = false;
  FBX_TRY(bool_arg(ctx, &args[5], "ceil_mode", &ceil));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 1, 4, ceil, row_nsp(ctx), &g));
  return max_run(x, &g, ctx->op->schema.nrets == 2, outs);
}

/* The backward ops' common start: grad_output (args[0]) must have the
 * output's shape for self (args[1]); gi gets zeros of self's size. */
static fbx_status *bwd_start(const fbx_kctx *ctx, const fbx_ivalue *args, const pool_geom *g, fbx_tensor *x, double **go,
                             double **gi) {
  fbx_tensor *gt;
  *go = *gi = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  int64_t sizes[FBX_MAX_DIMS];
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

/* An average window along axis a: the taps [*lo, *hi) inside the input;
 * returns the window's size clipped to the padded input only (what
 * count_include_pad divides by). */
static int64_t avg_axis(const pool_geom *g, int a, int64_t o, int64_t *lo, int64_t *hi) {
  int64_t l = o * g->s[a] - g->p[a], h = l + g->k[a];
  if (h > g->in[a] + g->p[a]) h = g->in[a] + g->p[a];
  int64_t pool = h - l;
  *lo = l < 0 ? 0 : l;
  *hi = h > g->in[a] ? g->in[a] : h;
  return pool;
}

/* The window of output (ot, oh, ow): its taps in lo/hi per axis and the
 * divisor of its sum (adaptive: the window's size). */
static void avg_window(const pool_geom *g, int mode, bool count_pad, int64_t divisor, const int64_t *o, int64_t *lo,
                       int64_t *hi, double *div) {
  int64_t pool = 1, in = 1;
  for (int a = 0; a < 3; a++) {
    if (mode == 2) adaptive_range(o[a], g->in[a], g->out[a], &lo[a], &hi[a]);
    else pool *= avg_axis(g, a, o[a], &lo[a], &hi[a]);
    in *= hi[a] > lo[a] ? hi[a] - lo[a] : 0;
  }
  *div = mode == 2 ? (double)in : divisor ? (double)divisor : count_pad ? (double)pool : (double)in;
}

static void scatter_body(void *jv, int64_t begin, int64_t end) {
  const scatter_job *j = jv;
  const pool_geom *g = j->g;
  const int64_t H = g->in[1], W = g->in[2], pin = plane_in(g), pout = plane_out(g);
  for (int64_t pl = begin; pl < end; pl++) {
    double *gi = j->gi + pl * pin;
    const double *go = j->go + pl * pout;
    if (j->mode == 0) {
      for (int64_t o = 0; o < pout; o++) {
        int64_t k = j->idx[pl * pout + o];
        if (k >= 0 && k < pin) gi[k] += go[o];
      }
      continue;
    }
    int64_t oc[3], o = 0;
    for (oc[0] = 0; oc[0] < g->out[0]; oc[0]++)
      for (oc[1] = 0; oc[1] < g->out[1]; oc[1]++)
        for (oc[2] = 0; oc[2] < g->out[2]; oc[2]++, o++) {
          int64_t lo[3], hi[3];
          double div;
          avg_window(g, j->mode, j->count_pad, j->divisor, oc, lo, hi, &div);
          double v = go[o] / div;
          for (int64_t it = lo[0]; it < hi[0]; it++)
            for (int64_t ih = lo[1]; ih < hi[1]; ih++)
              for (int64_t iw = lo[2]; iw < hi[2]; iw++) gi[(it * H + ih) * W + iw] += v;
        }
  }
}

/* max_pool{2,3}d_with_indices_backward(grad_output, self, kernel_size,
 * stride, padding, dilation, ceil_mode, indices): grad_output added at each
 * window's index. */
fbx_status *fbx_k_max_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *it, *ic = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 7, &it));
  bool ceil = false;
  FBX_TRY(bool_arg(ctx, &args[6], "ceil_mode", &ceil));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 2, 5, ceil, row_nsp(ctx), &g));
  if (it->dtype != FBX_DTYPE_INT64 || it->numel != g.P * plane_out(&g))
    return fbx_kernel_error(ctx, "indices must be int64 with the output's %lld elements",
                            (long long)(g.P * plane_out(&g)));
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
  int mode; /* 1 avg, 2 adaptive */
  bool count_pad;
  int64_t divisor;
  bool ints; /* integral input */
} avg_job;

static void avg_body(void *jv, int64_t begin, int64_t end) {
  const avg_job *j = jv;
  const pool_geom *g = j->g;
  const int64_t H = g->in[1], W = g->in[2];
  for (int64_t pl = begin; pl < end; pl++) {
    const double *x = j->x + pl * plane_in(g);
    double *y = j->y + pl * plane_out(g);
    int64_t oc[3], o = 0;
    for (oc[0] = 0; oc[0] < g->out[0]; oc[0]++)
      for (oc[1] = 0; oc[1] < g->out[1]; oc[1]++)
        for (oc[2] = 0; oc[2] < g->out[2]; oc[2]++, o++) {
          int64_t lo[3], hi[3];
          double div, s = 0;
          avg_window(g, j->mode, j->count_pad, j->divisor, oc, lo, hi, &div);
          if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) {
            y[o] = 0;
            continue;
          }
          for (int64_t it = lo[0]; it < hi[0]; it++)
            for (int64_t ih = lo[1]; ih < hi[1]; ih++)
              for (int64_t iw = lo[2]; iw < hi[2]; iw++) s += x[(it * H + ih) * W + iw];
          y[o] = j->ints ? trunc(s / div) : s / div; /* integers divide as C does */
        }
  }
}

/* The averages of geometry g over x into outs[0], in x's dtype. */
static fbx_status *avg_run(fbx_tensor *x, const pool_geom *g, int mode, bool count_pad, int64_t divisor,
                           fbx_ivalue *outs) {
  fbx_tensor *y = NULL;
  int64_t sizes[FBX_MAX_DIMS];
  out_sizes(g, x, sizes);
  int64_t nout = g->P * plane_out(g);
  double *xv = NULL, *yv = fbx_malloc(sizeof(double) * (size_t)(nout ? nout : 1));
  fbx_status *st = yv ? fbx_red_load_all_f64(&xv, x) : fbx_status_nomem();
  if (!st) {
    avg_job j = {g, xv, yv, mode, count_pad, divisor, !fbx_dtype_is_floating(x->dtype)};
    fbx_parallel_for(g->P, 1, avg_body, &j);
    if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, sizes, yv))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(xv);
  fbx_free(yv);
  return st;
}

/* avg_pool's flags at args[fi] (ceil_mode, count_include_pad, divisor_override). */
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

/* avg_pool{2,3}d(self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override) */
fbx_status *fbx_k_avg_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool ceil = false, count_pad = false;
  int64_t divisor = 0;
  FBX_TRY(avg_flags(ctx, args, 4, &ceil, &count_pad, &divisor));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 1, -1, ceil, row_nsp(ctx), &g));
  return avg_run(x, &g, 1, count_pad, divisor, outs);
}

/* avg_pool{2,3}d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override) */
fbx_status *fbx_k_avg_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  bool ceil = false, count_pad = false;
  int64_t divisor = 0;
  FBX_TRY(avg_flags(ctx, args, 5, &ceil, &count_pad, &divisor));
  pool_geom g;
  FBX_TRY(pool_geometry(ctx, x, args, 2, -1, ceil, row_nsp(ctx), &g));
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

/* ---- adaptive average pooling ------------------------------------------------------------- */

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

/* The geometry of an adaptive pool over x ([C, *sp] or [N, C, *sp], nsp
 * spatial dims) with output sizes os[nsp]; `what` names the op in messages,
 * as PyTorch's. */
static fbx_status *adaptive_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const int64_t *os, int nsp,
                                     const char *what, pool_geom *g) {
  FBX_TRY(adaptive_dims(ctx, x, what, nsp + 1));
  for (int a = 0; a < nsp; a++)
    if (os[a] < 0) return fbx_kernel_error(ctx, "%s(): output_size must be non-negative, got %lld", what,
                                           (long long)os[a]);
  int r = x->ndim;
  *g = (pool_geom){.ndim = r, .nsp = nsp, .N = r == nsp + 2 ? x->sizes[0] : 1, .C = x->sizes[r - nsp - 1],
                   .in = {nsp == 3 ? x->sizes[r - 3] : 1, x->sizes[r - 2], x->sizes[r - 1]},
                   .out = {nsp == 3 ? os[0] : 1, os[nsp - 2], os[nsp - 1]},
                   .k = {1, 1, 1}, .s = {1, 1, 1}, .d = {1, 1, 1}, .adaptive = true};
  g->P = g->N * g->C;
  return NULL;
}

/* output_size (args[1]) of an adaptive pool: nsp ints into os. */
static fbx_status *adaptive_sizes(const fbx_kctx *ctx, const fbx_ivalue *args, int nsp, const char *what, int64_t *os) {
  int64_t v[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], v, FBX_MAX_DIMS, &st);
  if (st) return st;
  static const char *const COUNT[4] = {"", "one int", "two ints", "three ints"};
  if (n != nsp) return fbx_kernel_error(ctx, "%s(): argument 'output_size' should contain %s, got %d", what, COUNT[nsp], n);
  memcpy(os, v, sizeof(int64_t) * (size_t)nsp);
  return NULL;
}

/* adaptive_avg_pool{2,3}d / _adaptive_avg_pool3d(self [N,] C, *sp,
 * output_size): each output cell averages its adaptive window. Every
 * floating dtype (PyTorch's CPU lacks float16 in 2-D and bfloat16 in 3-D;
 * the averages here are taken in double either way). */
fbx_status *fbx_k_adaptive_avg_pool(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int nsp = row_nsp(ctx);
  const char *what = nsp == 3 ? "adaptive_avg_pool3d" : "adaptive_avg_pool2d";
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t os[3];
  FBX_TRY(adaptive_sizes(ctx, args, nsp, what, os));
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "%s: not implemented for %s input", what, fbx_dtype_name(x->dtype));
  pool_geom g;
  FBX_TRY(adaptive_geometry(ctx, x, os, nsp, what, &g));
  return avg_run(x, &g, 2, false, 0, outs);
}

/* _adaptive_avg_pool{2,3}d_backward(grad_output [.., *out], self [.., *in]):
 * each output cell's gradient spread evenly over its adaptive window. */
fbx_status *fbx_k_adaptive_avg_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int nsp = row_nsp(ctx);
  fbx_tensor *gt, *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  if ((x->ndim != nsp + 1 && x->ndim != nsp + 2) || gt->ndim != x->ndim)
    return fbx_kernel_error(ctx, "expected %dD or %dD self and grad_output of the same rank, got %dD and %dD", nsp + 1,
                            nsp + 2, x->ndim, gt->ndim);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  for (int i = 0; i < x->ndim - nsp; i++)
    if (gt->sizes[i] != x->sizes[i]) return fbx_kernel_error(ctx, "grad_output's dim %d differs from self's", i);
  int r = x->ndim;
  pool_geom g = {.ndim = r, .nsp = nsp, .N = r == nsp + 2 ? x->sizes[0] : 1, .C = x->sizes[r - nsp - 1],
                 .in = {nsp == 3 ? x->sizes[r - 3] : 1, x->sizes[r - 2], x->sizes[r - 1]},
                 .out = {nsp == 3 ? gt->sizes[r - 3] : 1, gt->sizes[r - 2], gt->sizes[r - 1]}};
  g.P = g.N * g.C;
  if (g.out[0] <= 0 || g.out[1] <= 0 || g.out[2] <= 0) return fbx_kernel_error(ctx, "grad_output has an empty spatial dim");
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

/* adaptive_max_pool{2,3}d(self, output_size) -> (values, indices) and
 * adaptive_max_pool1d(self [N,] C, L, output_size [ol]), which is the 2-D
 * op on [.., C, 1, L] with output_size [1, ol], its outputs squeezed again
 * (PyTorch's composite). Indices are flat positions (d * H + h) * W + w
 * per plane. float32, float64, and in 2-D bfloat16. */
fbx_status *fbx_k_adaptive_max_pool2d(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *what = fbx_sym_unqual(ctx->op->schema.name);
  bool one_d = !strcmp(what, "adaptive_max_pool1d");
  int nsp = row_nsp(ctx);
  fbx_tensor *x, *xu = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t os[3];
  FBX_TRY(adaptive_sizes(ctx, args, one_d ? 1 : nsp, what, one_d ? os + 1 : os));
  fbx_status *st = NULL;
  if (one_d) {
    FBX_TRY(adaptive_dims(ctx, x, what, 2));
    os[0] = 1;
    FBX_TRY(unsq(ctx, x, &xu));
  } else {
    xu = fbx_tensor_retain(x);
  }
  pool_geom g;
  fbx_ivalue o[2] = {fbx_iv_none(), fbx_iv_none()};
  fbx_tensor *a = NULL, *b = NULL;
  if (x->dtype == FBX_DTYPE_FLOAT16 || !fbx_dtype_is_floating(x->dtype) ||
      (nsp == 3 && x->dtype == FBX_DTYPE_BFLOAT16)) {
    st = fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(x->dtype));
    goto done;
  }
  if ((st = adaptive_geometry(ctx, xu, os, nsp, what, &g)) || (st = max_run(xu, &g, true, o))) goto done;
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

/* adaptive_max_pool{2,3}d_backward(grad_output, self, indices): each
 * output cell's gradient added at its index in self's plane. */
fbx_status *fbx_k_adaptive_max_pool2d_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int nsp = row_nsp(ctx);
  const char *what = fbx_sym_unqual(ctx->op->schema.name);
  fbx_tensor *gt, *x, *it, *ic = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &it));
  if (gt->ndim != x->ndim)
    return fbx_kernel_error(ctx, "grad_output has %d dims, self %d", gt->ndim, x->ndim);
  if (gt->dtype != x->dtype)
    return fbx_kernel_error(ctx, "expected dtype %s for grad_output, got %s", fbx_dtype_name(x->dtype),
                            fbx_dtype_name(gt->dtype));
  if (x->dtype == FBX_DTYPE_FLOAT16 || !fbx_dtype_is_floating(x->dtype) ||
      (nsp == 3 && x->dtype == FBX_DTYPE_BFLOAT16))
    return fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(x->dtype));
  int64_t os[3] = {0, 0, 0};
  for (int a = 0; a < nsp && gt->ndim >= nsp; a++) os[a] = gt->sizes[gt->ndim - nsp + a];
  pool_geom g;
  FBX_TRY(adaptive_geometry(ctx, x, os, nsp, what, &g));
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
