/* Grid sampling and affine grids (rows in ops/list_nn.h): grid_sampler,
 * grid_sampler_2d, grid_sampler_3d, their backward ops (and
 * fusebox::grid_sampler_backward, the gradient of grid_sampler for either
 * rank), affine_grid_generator and affine_grid_generator_backward: what a
 * scripted F.grid_sample and F.affine_grid call (spatial transformers,
 * optical-flow warping).
 *
 * grid_sampler(input [N, C, *in], grid [N, *out, S], mode, padding_mode,
 * align_corners) -> [N, C, *out], S = 2 (in = H, W) or 3 (D, H, W); grid's
 * last dim holds (x, y[, z]): x indexes W, y H, z D. mode 0 bilinear
 * (trilinear in 3-D), 1 nearest, 2 bicubic (2-D only); padding_mode 0
 * zeros, 1 border, 2 reflection. PyTorch 1.13's CPU kernels, per axis of
 * size n:
 *   unnormalize  2-D (the vectorized CPU kernel): (x + 1) (n - 1) / 2
 *                (align_corners) or (x + 1) (n / 2) - 0.5; 3-D: ((x + 1) /
 *                2) (n - 1) or ((x + 1) n - 1) / 2; computed in the input's
 *                precision (float32 rounds after every operation);
 *   padding      border clips to [0, n - 1] (NaN to 0); reflection mirrors
 *                over [0, n - 1] (align_corners) or [-0.5, n - 0.5], then
 *                clips; zeros leaves the coordinate, and taps outside the
 *                input read 0;
 *   bilinear     taps floor(c) and floor(c) + 1 per axis, weights 1 - t and
 *                t, t = c - floor(c);
 *   nearest      the tap nearbyint(c) (ties to even);
 *   bicubic      c unnormalized only; taps floor(c) - 1 .. floor(c) + 2, each
 *                tap's coordinate padded on its own, Keys' weights (A = -0.75)
 *                at t.
 * Sums in double, the result in the input's dtype (float32 or float64).
 * The backward ops give (d input, d grid): the output gradient scattered
 * along the same taps, and per grid value the derivative of the weights
 * times the tapped values, times d c / d x (the unnormalize factor, and for
 * bilinear and nearest the padding's: 0 where a clip is active, -1 where a
 * reflection flips; nearest's d grid is 0). output_mask is read but both
 * gradients are always computed.
 *
 * affine_grid_generator(theta [N, 2, 3] or [N, 3, 4], size [N, C, H, W] or
 * [N, C, D, H, W], align_corners) -> grid [N, H, W, 2] or [N, D, H, W, 3]:
 * theta times the base grid (x, y[, z], 1), whose coordinates along an
 * axis of n points are linspace(-1, 1, n), times (n - 1) / n without
 * align_corners, and 0 for n = 1. Its backward is d theta = sum over points
 * of grad (outer) base. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/cubic.h"
#include "ops/kutil.h"
#include "ops/reduce.h"

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct grid_geom {
  int nsp;            /* spatial dims: 2 or 3 */
  int64_t N, C;
  int64_t in[3];      /* input sizes, axes D, H, W (D = 1 in 2-D) */
  int64_t P;          /* grid points per batch */
  int64_t plane;      /* in[0] * in[1] * in[2] */
  int mode, pad;
  bool align, f32;
} grid_geom;

/* ---- coordinates ---------------------------------------------------------------------------- */

static double rnd(const grid_geom *g, double v) { return g->f32 ? (double)(float)v : v; }

/* The grid value x as a coordinate along an axis of n points, before
 * padding; *m = d c / d x. */
static double unnormalize(const grid_geom *g, double x, int64_t n, double *m) {
  if (g->nsp == 2) {
    double s = rnd(g, g->align ? (double)(n - 1) / 2 : (double)n / 2);
    *m = s;
    double c = rnd(g, rnd(g, x + 1) * s);
    return g->align ? c : rnd(g, c - 0.5);
  }
  *m = g->align ? (double)(n - 1) / 2 : (double)n / 2;
  if (g->align) return rnd(g, rnd(g, rnd(g, x + 1) / 2) * (double)(n - 1));
  return rnd(g, rnd(g, rnd(g, rnd(g, x + 1) * (double)n) - 1) / 2);
}

/* Clip to [0, n - 1] (NaN to 0); *m *= 0 where the clip is active, the
 * borders included (PyTorch's gradient treats them as outside). */
static double clip(double c, int64_t n, double *m) {
  double hi = (double)(n - 1);
  if (!(c > 0)) {
    *m = 0;
    return 0;
  }
  if (c >= hi) {
    *m = 0;
    return hi;
  }
  return c;
}

/* Mirror c into [lo2 / 2, hi2 / 2] (bounds doubled so half-integers stay
 * exact); *m *= -1 where the mirror flips the direction. */
static double reflect(const grid_geom *g, double c, int64_t lo2, int64_t hi2, double *m) {
  if (lo2 == hi2) {
    *m = 0;
    return 0;
  }
  double lo = (double)lo2 / 2, span = (double)(hi2 - lo2) / 2, v = rnd(g, c - lo), sign = 1;
  if (v < 0) v = -v, sign = -1;
  double extra = fmod(v, span), flips = floor(v / span);
  if (fmod(flips, 2) == 0) {
    *m *= sign;
    return rnd(g, extra + lo);
  }
  *m *= -sign;
  return rnd(g, rnd(g, span - extra) + lo);
}

/* The padding mode applied to a coordinate c along an axis of n points. */
static double padded(const grid_geom *g, double c, int64_t n, double *m) {
  if (g->pad == GS_BORDER) return clip(c, n, m);
  if (g->pad == GS_REFLECTION) {
    c = g->align ? reflect(g, c, 0, 2 * (n - 1), m) : reflect(g, c, -1, 2 * n - 1, m);
    return clip(c, n, m);
  }
  return c;
}

/* floor(c) as an index; coordinates past +-2^40 (far outside any input,
 * and beyond int64 for +-inf and NaN) become -2^40, read as 0 by zeros
 * padding. */
static int64_t floor_index(double c) {
  if (!(fabs(c) < 0x1p40)) return -((int64_t)1 << 40);
  return (int64_t)floor(c);
}

/* ---- taps ----------------------------------------------------------------------------------- */

typedef struct gs_taps {
  int n;
  int64_t off[16];   /* offset in the input plane; -1: outside (reads 0); at most 16 (bicubic) */
  double w[16];      /* weight */
  double dw[16][3];  /* d weight / d coordinate, per axis D, H, W */
  double m[3];       /* d coordinate / d grid value, per axis */
} gs_taps;

static void add_tap(const grid_geom *g, gs_taps *t, const int64_t *ix, double w, const double *dw) {
  bool in = true;
  for (int a = 0; a < 3; a++) in = in && ix[a] >= 0 && ix[a] < g->in[a];
  int k = t->n++;
  t->off[k] = in ? (ix[0] * g->in[1] + ix[1]) * g->in[2] + ix[2] : -1;
  t->w[k] = w;
  for (int a = 0; a < 3; a++) t->dw[k][a] = dw[a];
}

/* The taps of the grid point whose values (x, y[, z]) are at gp. */
static void point_taps(const grid_geom *g, const double *gp, gs_taps *t) {
  int a0 = 3 - g->nsp;
  double c[3] = {0, 0, 0};
  t->n = 0;
  for (int a = 0; a < 3; a++) t->m[a] = 0;
  for (int a = a0; a < 3; a++) {
    c[a] = unnormalize(g, gp[2 - a], g->in[a], &t->m[a]);
    if (g->mode != GS_BICUBIC) c[a] = padded(g, c[a], g->in[a], &t->m[a]);
  }
  int64_t ix[3] = {0, 0, 0};
  double dw[3] = {0, 0, 0};
  if (g->mode == GS_NEAREST) {
    for (int a = a0; a < 3; a++) ix[a] = fabs(c[a]) < 0x1p40 ? (int64_t)nearbyint(c[a]) : -((int64_t)1 << 40);
    add_tap(g, t, ix, 1, dw);
    return;
  }
  if (g->mode == GS_BILINEAR) {
    int64_t x0[3] = {0, 0, 0};
    double d[3] = {0, 0, 0};
    for (int a = a0; a < 3; a++) x0[a] = floor_index(c[a]), d[a] = c[a] - (double)x0[a];
    for (int corner = 0; corner < 1 << g->nsp; corner++) {
      double wa[3] = {1, 1, 1}, sa[3] = {0, 0, 0};
      for (int a = a0; a < 3; a++) {
        int bit = (corner >> (2 - a)) & 1;
        ix[a] = x0[a] + bit;
        wa[a] = bit ? d[a] : 1 - d[a];
        sa[a] = bit ? 1 : -1;
      }
      for (int a = a0; a < 3; a++) {
        dw[a] = sa[a];
        for (int b = a0; b < 3; b++)
          if (b != a) dw[a] *= wa[b];
      }
      add_tap(g, t, ix, wa[0] * wa[1] * wa[2], dw);
    }
    return;
  }
  /* bicubic (2-D): 4 x 4 taps, each coordinate padded on its own */
  int64_t x0[3] = {0, floor_index(c[1]), floor_index(c[2])};
  double wy[4], wx[4], dy[4], dx[4];
  fbx_cubic_weights(c[1] - (double)x0[1], wy);
  fbx_cubic_weights(c[2] - (double)x0[2], wx);
  fbx_cubic_weights_dt(c[1] - (double)x0[1], dy);
  fbx_cubic_weights_dt(c[2] - (double)x0[2], dx);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double unused = 1;
      double py = padded(g, (double)(x0[1] - 1 + i), g->in[1], &unused);
      double px = padded(g, (double)(x0[2] - 1 + j), g->in[2], &unused);
      ix[1] = fabs(py) < 0x1p40 ? (int64_t)py : -1, ix[2] = fabs(px) < 0x1p40 ? (int64_t)px : -1;
      dw[1] = dy[i] * wx[j], dw[2] = wy[i] * dx[j];
      add_tap(g, t, ix, wy[i] * wx[j], dw);
    }
}

/* ---- checks --------------------------------------------------------------------------------- */

static fbx_status *int_arg(const fbx_kctx *ctx, const fbx_ivalue *v, const char *what, int64_t *out) {
  if (v->kind != FBX_IV_INT && v->kind != FBX_IV_BOOL) return fbx_kernel_error(ctx, "%s must be an int", what);
  *out = fbx_iv_to_int(v);
  return NULL;
}

/* The geometry of a grid_sampler call on input x and grid gr with the
 * mode, padding_mode and align_corners at args[mi..]; nsp_want 0 takes
 * the input's rank. */
static fbx_status *grid_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *gr, const fbx_ivalue *args,
                                 int mi, int nsp_want, grid_geom *g) {
  int64_t mode = 0, pad = 0, align = 0;
  FBX_TRY(int_arg(ctx, &args[mi], "interpolation_mode", &mode));
  FBX_TRY(int_arg(ctx, &args[mi + 1], "padding_mode", &pad));
  FBX_TRY(int_arg(ctx, &args[mi + 2], "align_corners", &align));
  int nsp = x->ndim - 2;
  if (nsp_want && x->ndim != nsp_want + 2)
    return fbx_kernel_error(ctx, "expected %dD input, got %dD", nsp_want + 2, x->ndim);
  if (nsp != 2 && nsp != 3)
    return fbx_kernel_error(ctx, "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
                                 "but got input with %dD and grid with %dD", x->ndim, gr->ndim);
  if (gr->ndim != x->ndim)
    return fbx_kernel_error(ctx, "grid_sampler(): expected grid to have the input's %d dims, but got %dD", x->ndim,
                            gr->ndim);
  if (x->dtype != gr->dtype)
    return fbx_kernel_error(ctx, "grid_sampler(): expected input and grid to have same dtype, but input has %s and "
                                 "grid has %s", fbx_dtype_name(x->dtype), fbx_dtype_name(gr->dtype));
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "grid_sampler: not implemented for %s", fbx_dtype_name(x->dtype));
  if (x->sizes[0] != gr->sizes[0])
    return fbx_kernel_error(ctx, "grid_sampler(): expected grid and input to have same batch size, but got input with "
                                 "sizes [%lld, ...] and grid with sizes [%lld, ...]", (long long)x->sizes[0],
                            (long long)gr->sizes[0]);
  if (gr->sizes[gr->ndim - 1] != nsp)
    return fbx_kernel_error(ctx, "grid_sampler(): expected grid to have size %d in last dimension, but got %lld", nsp,
                            (long long)gr->sizes[gr->ndim - 1]);
  for (int i = 2; i < x->ndim; i++)
    if (x->sizes[i] <= 0)
      return fbx_kernel_error(ctx, "grid_sampler(): expected input to have non-empty spatial dimensions, but dim %d "
                                   "is 0", i);
  if (mode < 0 || mode > 2) return fbx_kernel_error(ctx, "grid_sampler(): unknown interpolation_mode %lld", (long long)mode);
  if (pad < 0 || pad > 2) return fbx_kernel_error(ctx, "grid_sampler(): unknown padding_mode %lld", (long long)pad);
  if (mode == GS_BICUBIC && nsp != 2)
    return fbx_kernel_error(ctx, "grid_sampler(): bicubic interpolation only supports 4D input");
  *g = (grid_geom){.nsp = nsp, .N = x->sizes[0], .C = x->sizes[1], .in = {1, 1, 1}, .P = 1, .mode = (int)mode,
                   .pad = (int)pad, .align = align != 0, .f32 = x->dtype == FBX_DTYPE_FLOAT32};
  for (int a = 0; a < nsp; a++) g->in[3 - nsp + a] = x->sizes[2 + a];
  for (int i = 1; i < gr->ndim - 1; i++) g->P *= gr->sizes[i];
  g->plane = g->in[0] * g->in[1] * g->in[2];
  return NULL;
}

/* The output's sizes: [N, C, *grid's spatial sizes]. */
static void out_sizes(const fbx_tensor *x, const fbx_tensor *gr, int64_t *sizes) {
  sizes[0] = x->sizes[0], sizes[1] = x->sizes[1];
  for (int i = 1; i < gr->ndim - 1; i++) sizes[i + 1] = gr->sizes[i];
}

/* ---- forward -------------------------------------------------------------------------------- */

typedef struct gs_job {
  const grid_geom *g;
  const double *x, *grid, *go;
  double *y, *gx, *gg;
} gs_job;

/* Work items are (n, p) points. */
static void fwd_body(void *jv, int64_t begin, int64_t end) {
  const gs_job *j = jv;
  const grid_geom *g = j->g;
  gs_taps t;
  for (int64_t q = begin; q < end; q++) {
    int64_t n = q / g->P, p = q % g->P;
    point_taps(g, j->grid + q * g->nsp, &t);
    for (int64_t c = 0; c < g->C; c++) {
      const double *xp = j->x + (n * g->C + c) * g->plane;
      double s = 0;
      for (int k = 0; k < t.n; k++)
        if (t.off[k] >= 0) s += t.w[k] * xp[t.off[k]];
      j->y[(n * g->C + c) * g->P + p] = s;
    }
  }
}

/* Work items are batches: the input gradient of one batch is scattered by
 * its own points only. */
static void bwd_body(void *jv, int64_t begin, int64_t end) {
  const gs_job *j = jv;
  const grid_geom *g = j->g;
  gs_taps t;
  for (int64_t n = begin; n < end; n++)
    for (int64_t p = 0; p < g->P; p++) {
      int64_t q = n * g->P + p;
      point_taps(g, j->grid + q * g->nsp, &t);
      double dc[3] = {0, 0, 0};
      for (int64_t c = 0; c < g->C; c++) {
        const double *xp = j->x + (n * g->C + c) * g->plane;
        double *gxp = j->gx + (n * g->C + c) * g->plane, go = j->go[(n * g->C + c) * g->P + p];
        for (int k = 0; k < t.n; k++) {
          if (t.off[k] < 0) continue;
          gxp[t.off[k]] += t.w[k] * go;
          double v = xp[t.off[k]] * go;
          for (int a = 0; a < 3; a++) dc[a] += t.dw[k][a] * v;
        }
      }
      for (int a = 3 - g->nsp; a < 3; a++)
        j->gg[q * g->nsp + (2 - a)] = g->mode == GS_NEAREST ? 0 : dc[a] * t.m[a];
    }
}

/* grid_sampler, grid_sampler_2d, grid_sampler_3d(input, grid, mode,
 * padding_mode, align_corners) */
fbx_status *fbx_k_grid_sampler(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  int want = strstr(name, "2d") ? 2 : strstr(name, "3d") ? 3 : 0;
  fbx_tensor *x, *gr, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &gr));
  grid_geom g;
  FBX_TRY(grid_geometry(ctx, x, gr, args, 2, want, &g));
  int64_t sizes[FBX_MAX_DIMS], nout = g.N * g.C * g.P;
  out_sizes(x, gr, sizes);
  double *xv = NULL, *gv = NULL, *yv = fbx_malloc(sizeof(double) * (size_t)(nout ? nout : 1));
  fbx_status *st = yv ? fbx_red_load_all_f64(&xv, x) : fbx_status_nomem();
  if (!st) st = fbx_red_load_all_f64(&gv, gr);
  if (!st) {
    gs_job j = {.g = &g, .x = xv, .grid = gv, .y = yv};
    fbx_parallel_for(g.N * g.P, 64, fwd_body, &j);
    if (!(st = fbx_red_store_all_f64(&y, x->dtype, x->ndim, sizes, yv))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(xv);
  fbx_free(gv);
  fbx_free(yv);
  return st;
}

/* grid_sampler_{2,3}d_backward(grad_output, input, grid, mode,
 * padding_mode, align_corners, output_mask) and
 * fusebox::grid_sampler_backward(grad_output, input, grid, mode,
 * padding_mode, align_corners) -> (d input, d grid) */
fbx_status *fbx_k_grid_sampler_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  int want = strstr(name, "2d") ? 2 : strstr(name, "3d") ? 3 : 0;
  fbx_tensor *got, *x, *gr, *dx = NULL, *dg = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &got));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &gr));
  grid_geom g;
  FBX_TRY(grid_geometry(ctx, x, gr, args, 3, want, &g));
  int64_t sizes[FBX_MAX_DIMS];
  out_sizes(x, gr, sizes);
  bool ok = got->ndim == x->ndim;
  for (int i = 0; ok && i < x->ndim; i++) ok = got->sizes[i] == sizes[i];
  if (!ok) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, got->ndim, got->sizes);
    fbx_red_shape_str(b, sizeof b, x->ndim, sizes);
    return fbx_kernel_error(ctx, "grad_output has shape %s, expected %s", a, b);
  }
  double *xv = NULL, *gv = NULL, *gov = NULL;
  double *gxv = fbx_calloc((size_t)(x->numel ? x->numel : 1), sizeof(double));
  double *ggv = fbx_calloc((size_t)(gr->numel ? gr->numel : 1), sizeof(double));
  fbx_status *st = gxv && ggv ? fbx_red_load_all_f64(&xv, x) : fbx_status_nomem();
  if (!st) st = fbx_red_load_all_f64(&gv, gr);
  if (!st) st = fbx_red_load_all_f64(&gov, got);
  if (!st) {
    gs_job j = {.g = &g, .x = xv, .grid = gv, .go = gov, .gx = gxv, .gg = ggv};
    fbx_parallel_for(g.N, 1, bwd_body, &j);
    if (!(st = fbx_red_store_all_f64(&dx, x->dtype, x->ndim, x->sizes, gxv)) &&
        !(st = fbx_red_store_all_f64(&dg, gr->dtype, gr->ndim, gr->sizes, ggv))) {
      fbx_set_out_tensor(outs, 0, dx);
      fbx_set_out_tensor(outs, 1, dg);
    } else {
      fbx_tensor_release(dx);
    }
  }
  fbx_free(xv);
  fbx_free(gv);
  fbx_free(gov);
  fbx_free(gxv);
  fbx_free(ggv);
  return st;
}

/* ---- affine grids --------------------------------------------------------------------------- */

/* linspace(-1, 1, n)[i] as torch.linspace computes it (from the start for
 * the first half, from the end for the rest), times (n - 1) / n without
 * align_corners; 0 for n <= 1. */
static double base_coord(int64_t i, int64_t n, bool align) {
  if (n <= 1) return 0;
  double step = 2.0 / (double)(n - 1);
  double v = i < n / 2 ? -1 + step * (double)i : 1 - step * (double)(n - 1 - i);
  return align ? v : v * (double)(n - 1) / (double)n;
}

/* The size argument (args[1]) of an affine grid op: [N, C, H, W] or
 * [N, C, D, H, W] into sz; *nsp gets 2 or 3. */
static fbx_status *affine_size(const fbx_kctx *ctx, const fbx_ivalue *args, int64_t *sz, int *nsp) {
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], sz, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n != 4 && n != 5)
    return fbx_kernel_error(ctx, "affine_grid: size must have 4 (2-D) or 5 (3-D) elements, got %d", n);
  for (int i = 0; i < n; i++)
    if (sz[i] < 0) return fbx_kernel_error(ctx, "affine_grid: size[%d] is negative (%lld)", i, (long long)sz[i]);
  *nsp = n - 2;
  return NULL;
}

/* The base grid of size sz: P points of (x, y[, z], 1) (nsp + 1 values). */
static double *base_grid(const int64_t *sz, int nsp, bool align, int64_t P) {
  double *b = fbx_malloc(sizeof(double) * (size_t)(P ? P * (nsp + 1) : 1));
  if (!b) return NULL;
  int64_t D = nsp == 3 ? sz[2] : 1, H = sz[nsp], W = sz[nsp + 1], p = 0;
  for (int64_t d = 0; d < D; d++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t w = 0; w < W; w++, p++) {
        double *q = b + p * (nsp + 1);
        q[0] = base_coord(w, W, align), q[1] = base_coord(h, H, align);
        if (nsp == 3) q[2] = base_coord(d, D, align);
        q[nsp] = 1;
      }
  return b;
}

/* affine_grid_generator(theta [N, S, S + 1], size, align_corners) */
fbx_status *fbx_k_affine_grid(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *th, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &th));
  int64_t sz[FBX_MAX_DIMS], align = 0;
  int nsp;
  FBX_TRY(affine_size(ctx, args, sz, &nsp));
  FBX_TRY(int_arg(ctx, &args[2], "align_corners", &align));
  if (!fbx_dtype_is_floating(th->dtype))
    return fbx_kernel_error(ctx, "affine_grid: expected a floating point theta, got %s", fbx_dtype_name(th->dtype));
  if (th->ndim != 3 || th->sizes[0] != sz[0] || th->sizes[1] != nsp || th->sizes[2] != nsp + 1)
    return fbx_kernel_error(ctx, "Expected a batch of %dD affine matrices of shape Nx%dx%d for size [%lld, ...], got "
                                 "theta of %d dims", nsp, nsp, nsp + 1, (long long)sz[0], th->ndim);
  int64_t P = 1, N = sz[0], osz[FBX_MAX_DIMS];
  for (int i = 2; i < nsp + 2; i++) FBX_TRY(fbx_size_mul(ctx, P, sz[i], &P, "affine_grid"));
  osz[0] = N;
  for (int i = 0; i < nsp; i++) osz[1 + i] = sz[2 + i];
  osz[nsp + 1] = nsp;
  double *tv = NULL, *b = base_grid(sz, nsp, align != 0, P), *yv = fbx_malloc(sizeof(double) * (size_t)(N * P * nsp + 1));
  fbx_status *st = b && yv ? fbx_red_load_all_f64(&tv, th) : fbx_status_nomem();
  if (!st) {
    for (int64_t n = 0; n < N; n++)
      for (int64_t p = 0; p < P; p++)
        for (int i = 0; i < nsp; i++) {
          double s = 0;
          for (int k = 0; k <= nsp; k++) s += b[p * (nsp + 1) + k] * tv[(n * nsp + i) * (nsp + 1) + k];
          yv[(n * P + p) * nsp + i] = s;
        }
    if (!(st = fbx_red_store_all_f64(&y, th->dtype, nsp + 2, osz, yv))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(tv);
  fbx_free(b);
  fbx_free(yv);
  return st;
}

/* affine_grid_generator_backward(grad [N, *sp, S], size, align_corners) ->
 * d theta [N, S, S + 1] (in grad's dtype) */
fbx_status *fbx_k_affine_grid_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *gt, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gt));
  int64_t sz[FBX_MAX_DIMS], align = 0;
  int nsp;
  FBX_TRY(affine_size(ctx, args, sz, &nsp));
  FBX_TRY(int_arg(ctx, &args[2], "align_corners", &align));
  bool ok = fbx_dtype_is_floating(gt->dtype) && gt->ndim == nsp + 2 && gt->sizes[0] == sz[0] &&
            gt->sizes[nsp + 1] == nsp;
  for (int i = 0; ok && i < nsp; i++) ok = gt->sizes[1 + i] == sz[2 + i];
  if (!ok) return fbx_kernel_error(ctx, "affine_grid_generator_backward: grad must be a floating [N, *size[2:], %d] "
                                        "tensor for the size given", nsp);
  int64_t P = 1, N = sz[0], tsz[3] = {N, nsp, nsp + 1};
  for (int i = 2; i < nsp + 2; i++) P *= sz[i];
  double *gv = NULL, *b = base_grid(sz, nsp, align != 0, P);
  double *tv = fbx_calloc((size_t)(N * nsp * (nsp + 1) + 1), sizeof(double));
  fbx_status *st = b && tv ? fbx_red_load_all_f64(&gv, gt) : fbx_status_nomem();
  if (!st) {
    for (int64_t n = 0; n < N; n++)
      for (int64_t p = 0; p < P; p++)
        for (int i = 0; i < nsp; i++)
          for (int k = 0; k <= nsp; k++)
            tv[(n * nsp + i) * (nsp + 1) + k] += gv[(n * P + p) * nsp + i] * b[p * (nsp + 1) + k];
    if (!(st = fbx_red_store_all_f64(&y, gt->dtype, 3, tsz, tv))) fbx_set_out_tensor(outs, 0, y);
  }
  fbx_free(gv);
  fbx_free(b);
  fbx_free(tv);
  return st;
}
