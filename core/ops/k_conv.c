/* Convolution kernels (ops/list_linalg.h): conv1d, conv2d, conv3d, the
 * transposed convolutions conv_transpose1d/2d/3d, aten::convolution and
 * aten::_convolution (either kind, by the weight's rank), and their
 * gradients fusebox::conv_backward / fusebox::convolution_backward; and
 * im2col, col2im (F.unfold, F.fold: rows of ops/list_extra.h), which are
 * the convolution's 2-D patch loops on their own.
 *
 * All run as one convolution over (D, H, W) (conv2d: depth 1, conv1d:
 * depth and height 1; the missing dims have kernel 1, stride 1, padding
 * 0). The forward is a set of independent tasks (image, group, band of
 * output rows, a row being one (depth, height) position) spread over the
 * kernels' pool, each calling OpenBLAS's sgemm/dgemm on its own thread
 * (see conv_fwd below): a 1x1 kernel with stride 1 and no padding
 * multiplies the input itself, 1-D and 2-D stride-1 convolutions with
 * enough channels sum shifted GEMMs over a padded copy of the band's input
 * rows (float32 on AVX2+FMA or AVX-512: the same sums in the direct kernel
 * of conv_direct.c instead of GEMMs, written straight into the output),
 * the rest multiply the band's im2col matrix.
 * The bias is written into the output first and the GEMM adds to it (the
 * direct kernel starts its sums from it).
 * float32 and float64 compute in their own type; float16 and bfloat16 in
 * float32, rounded back; integral and bool inputs are errors, as in
 * PyTorch's CPU kernels. Inputs may be unbatched ([C, spatial...]), as in
 * PyTorch.
 *
 * Three shared pieces make the gradients and the transposed convolution
 * (a convolution's adjoint: its forward is the convolution's grad_input):
 *   conv_forward     y = conv(x, w) + b                      (the forward)
 *   conv_input_grad  col2im(wᵀ · g) (+ b), or for stride 1 a forward
 *                    convolution of g by the flipped weight (input_grad_by_fwd)
 *   conv_weight_grad sum over images of g · im2col(x)ᵀ
 * With a convolution C of geometry g (input [N, C, D, H, W], output
 * [N, O, Do, Ho, Wo], weight [O, C / G, k...]):
 *   conv:  y = conv_forward(x)        gx = conv_input_grad(gy)   gw = conv_weight_grad(x, gy)
 *   convT: y = conv_input_grad(x) + b gx = conv_forward(gy)      gw = conv_weight_grad(gy, x)
 * where convT's input is C's output and its output C's input (so convT's
 * weight [C_in, C_out / G, k...] is C's weight as it is).
 */
#include <cblas.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/conv_direct.h"
#include "ops/reduce.h"

/* A convolution of x [N, C, D, H, W] by w [O, C / G, kD, kH, kW] into
 * y [N, O, Do, Ho, Wo]; a dim that a 1-D or 2-D convolution does not have
 * is 1 (its stride and dilation 1, its padding 0). The output sizes are
 * the usual (in + 2 pad - dil (k - 1) - 1) / stride + 1, except for a
 * transposed convolution's adjoint, whose output is the transposed
 * convolution's input: with output_padding >= stride (allowed where it is
 * below the dilation) that is shorter than the usual size, and the rows
 * past it are never computed. */
typedef struct conv_geom {
  int64_t N, C, D, H, W, O, kD, kH, kW, Do, Ho, Wo, sD, sH, sW, pD, pH, pW, dD, dH, dW, G;
} conv_geom;

/* im2col of output rows [q0, q1) for the patch rows [r0, r1). An output
 * row q is the (depth, height) position (q / Ho, q % Ho); a patch row r is
 * input channel r / taps and tap r % taps = (kd, ki, kj) in row-major
 * order over (kD, kH, kW). Row r of the matrix starts at cols + r * ld and
 * holds (q1 - q0) * Wo positions. Each output row copies the input row's
 * columns that the taps reach and zeroes the ones hanging over the
 * padding. */
#define IM2COL(T)                                                                              \
  for (int64_t r = r0; r < r1; r++) {                                                          \
    int64_t c = r / taps, t = r % taps, kd = t / (g->kH * g->kW), ki = (t / g->kW) % g->kH;    \
    int64_t kj = t % g->kW;                                                                    \
    const T *xc = (const T *)x + c * g->D * g->H * g->W;                                       \
    T *dst = (T *)cols + r * ld;                                                               \
    int64_t off = kj * g->dW - g->pW, sw = g->sW;                                              \
    /* output columns lo <= ow < hi read inside the input row */                               \
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                          \
    int64_t hi = g->W - off <= 0 ? 0 : (g->W - off + sw - 1) / sw;                             \
    if (lo > g->Wo) lo = g->Wo;                                                                \
    if (hi > g->Wo) hi = g->Wo;                                                                \
    if (hi < lo) hi = lo;                                                                      \
    int64_t od = q0 / g->Ho, oh = q0 % g->Ho;                                                  \
    for (int64_t q = q0; q < q1; q++, oh = oh + 1 == g->Ho ? (od++, 0) : oh + 1) {             \
      int64_t id = od * g->sD - g->pD + kd * g->dD, ih = oh * g->sH - g->pH + ki * g->dH;      \
      T *d = dst + (q - q0) * g->Wo;                                                           \
      if (id < 0 || id >= g->D || ih < 0 || ih >= g->H) {                                      \
        memset(d, 0, sizeof(T) * (size_t)g->Wo);                                               \
        continue;                                                                              \
      }                                                                                        \
      const T *xr = xc + (id * g->H + ih) * g->W;                                              \
      memset(d, 0, sizeof(T) * (size_t)lo);                                                    \
      if (sw == 1 && hi > lo) memcpy(d + lo, xr + lo + off, sizeof(T) * (size_t)(hi - lo));    \
      else if (sw != 1)                                                                        \
        for (int64_t ow = lo; ow < hi; ow++) d[ow] = xr[ow * sw + off];                        \
      memset(d + hi, 0, sizeof(T) * (size_t)(g->Wo - hi));                                     \
    }                                                                                          \
  }

/* x: one image's channels of one group, [Cg][D][H][W]. */
static void im2col_rows(const conv_geom *g, bool f64, const void *x, void *cols, int64_t ld, int64_t r0, int64_t r1,
                        int64_t q0, int64_t q1) {
  int64_t taps = g->kD * g->kH * g->kW;
  if (f64) {
    IM2COL(double)
  } else {
    IM2COL(float)
  }
}

/* The whole image's im2col, [Cg * taps][Do * Ho * Wo], rows spread over threads. */
typedef struct col_job {
  const conv_geom *g;
  const void *x; /* one image's channels of one group: [Cg][D][H][W] */
  void *cols;    /* [Cg * taps][Do * Ho * Wo] */
  bool f64;
} col_job;

static void im2col_body(void *jv, int64_t begin, int64_t end) {
  const col_job *j = jv;
  const conv_geom *g = j->g;
  im2col_rows(g, j->f64, j->x, j->cols, g->Do * g->Ho * g->Wo, begin, end, 0, g->Do * g->Ho);
}

/* col2im: the transpose of im2col, adding each column entry back into the
 * input position it was read from (rows [begin, end) of one channel each:
 * a channel's rows are its taps, so a job of whole channels writes
 * disjoint input planes). */
#define COL2IM(T)                                                                              \
  for (int64_t c = begin; c < end; c++) {                                                      \
    T *xc = (T *)j->x_out + c * g->D * g->H * g->W;                                            \
    const T *src = (const T *)j->cols + c * taps * P;                                          \
    for (int64_t kd = 0; kd < g->kD; kd++)                                                     \
      for (int64_t ki = 0; ki < g->kH; ki++)                                                   \
        for (int64_t kj = 0; kj < g->kW; kj++, src += P) {                                     \
          int64_t off = kj * g->dW - g->pW;                                                    \
          for (int64_t od = 0; od < g->Do; od++) {                                             \
            int64_t id = od * g->sD - g->pD + kd * g->dD;                                      \
            if (id < 0 || id >= g->D) continue;                                                \
            for (int64_t oh = 0; oh < g->Ho; oh++) {                                           \
              int64_t ih = oh * g->sH - g->pH + ki * g->dH;                                    \
              if (ih < 0 || ih >= g->H) continue;                                              \
              T *xr = xc + (id * g->H + ih) * g->W;                                            \
              const T *sr = src + (od * g->Ho + oh) * g->Wo;                                   \
              for (int64_t ow = 0; ow < g->Wo; ow++) {                                         \
                int64_t iw = ow * g->sW + off;                                                 \
                if (iw >= 0 && iw < g->W) xr[iw] += sr[ow];                                    \
              }                                                                                \
            }                                                                                  \
          }                                                                                    \
        }                                                                                      \
  }

typedef struct col2im_job {
  const conv_geom *g;
  void *x_out;      /* one image's channels of one group: [Cg][D][H][W], accumulated into */
  const void *cols; /* [Cg * taps][Do * Ho * Wo] */
  bool f64;
} col2im_job;

static void col2im_body(void *jv, int64_t begin, int64_t end) {
  const col2im_job *j = jv;
  const conv_geom *g = j->g;
  int64_t taps = g->kD * g->kH * g->kW, P = g->Do * g->Ho * g->Wo;
  if (j->f64) {
    COL2IM(double)
  } else {
    COL2IM(float)
  }
}

/* Reads an int[n] argument (a single int is repeated) into v; each entry >= lo. */
static fbx_status *int_params(const fbx_kctx *ctx, int argi, const fbx_ivalue *arg, int n, int64_t *v, int64_t lo,
                              const char *what) {
  fbx_status *st = NULL;
  int64_t tmp[FBX_MAX_DIMS];
  int k = fbx_arg_int_list(ctx->op, argi, arg, tmp, FBX_MAX_DIMS, &st);
  if (k < 0) return st;
  if (k != 1 && k != n) return fbx_kernel_error(ctx, "expected %s to be a single integer value or a list of %d values, got %d", what, n, k);
  for (int i = 0; i < n; i++) {
    v[i] = tmp[k == 1 ? 0 : i];
    if (v[i] < lo)
      return fbx_kernel_error(ctx, "%s must be %s, got %" PRId64, what, lo > 0 ? "positive" : "non-negative", v[i]);
  }
  return NULL;
}

/* A convolution's parameters, one entry per spatial dim (nsp of them). */
typedef struct conv_params {
  int64_t s[3], p[3], d[3], op[3]; /* stride, padding, dilation, output_padding (transposed only) */
  int64_t groups;
} conv_params;

/* Reads the parameters from args[is], args[ip], args[id], args[iop] (-1:
 * none, output_padding 0) and args[ig]. */
static fbx_status *read_params(const fbx_kctx *ctx, const fbx_ivalue *args, int nsp, int is, int ip, int id, int iop,
                               int ig, conv_params *cp) {
  FBX_TRY(int_params(ctx, is, &args[is], nsp, cp->s, 1, "stride"));
  FBX_TRY(int_params(ctx, ip, &args[ip], nsp, cp->p, 0, "padding"));
  FBX_TRY(int_params(ctx, id, &args[id], nsp, cp->d, 1, "dilation"));
  if (iop >= 0) FBX_TRY(int_params(ctx, iop, &args[iop], nsp, cp->op, 0, "output_padding"));
  else memset(cp->op, 0, sizeof cp->op);
  if (args[ig].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "groups must be an int");
  cp->groups = args[ig].u.i;
  if (cp->groups < 1)
    return fbx_kernel_error(ctx, "non-positive groups is not supported (got %" PRId64 ")", cp->groups);
  return NULL;
}

/* What both kinds check of x, w and b: ranks, one floating dtype, a bias
 * of `bias_len` values. Also [N, C, spatial...] of x into xs (N = 1 where
 * x has no batch dim: *batched false). */
static fbx_status *check_operands(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *w, const fbx_tensor *b,
                                  int nsp, int64_t *xs, bool *batched) {
  *batched = x->ndim == nsp + 2;
  if (!*batched && x->ndim != nsp + 1)
    return fbx_kernel_error(ctx, "expected a %dD (unbatched) or %dD (batched) input, got %dD", nsp + 1, nsp + 2,
                            x->ndim);
  if (w->ndim != nsp + 2) return fbx_kernel_error(ctx, "expected a %dD weight, got %dD", nsp + 2, w->ndim);
  if (x->dtype != w->dtype || (b && b->dtype != x->dtype))
    return fbx_kernel_error(ctx, "expected input, weight and bias of one dtype, got %s, %s and %s",
                            fbx_dtype_name(x->dtype), fbx_dtype_name(w->dtype),
                            b ? fbx_dtype_name(b->dtype) : "None");
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "not implemented for %s inputs (as in PyTorch)", fbx_dtype_name(x->dtype));
  xs[0] = 1;
  for (int i = 0; i < x->ndim; i++) xs[i + (*batched ? 0 : 1)] = x->sizes[i];
  return NULL;
}

/* g's spatial fields: v[0..nsp) of each array are the last nsp of (D, H,
 * W); the dims before them are 1 (kernel, stride, dilation, sizes) or 0
 * (padding). in: the input's sizes, out: the output's (NULL: later). */
static void geom_spatial(conv_geom *g, int nsp, const int64_t *in, const int64_t *k, const int64_t *out,
                         const conv_params *cp) {
  int64_t v[7][3];
  for (int j = 0; j < 3; j++) {
    int i = j - (3 - nsp);
    v[0][j] = i >= 0 ? in[i] : 1, v[1][j] = i >= 0 ? k[i] : 1, v[2][j] = i >= 0 && out ? out[i] : 1;
    v[3][j] = i >= 0 ? cp->s[i] : 1, v[4][j] = i >= 0 ? cp->p[i] : 0, v[5][j] = i >= 0 ? cp->d[i] : 1;
  }
  g->D = v[0][0], g->H = v[0][1], g->W = v[0][2], g->kD = v[1][0], g->kH = v[1][1], g->kW = v[1][2];
  g->Do = v[2][0], g->Ho = v[2][1], g->Wo = v[2][2], g->sD = v[3][0], g->sH = v[3][1], g->sW = v[3][2];
  g->pD = v[4][0], g->pH = v[4][1], g->pW = v[4][2], g->dD = v[5][0], g->dH = v[5][1], g->dW = v[5][2];
}

/* Sizes that the GEMMs take as int. */
static fbx_status *check_blas_dims(const fbx_kctx *ctx, const conv_geom *g) {
  int64_t Og = g->O / g->G, K = g->C / g->G * g->kD * g->kH * g->kW, P = g->Do * g->Ho * g->Wo;
  if (Og > INT_MAX || P > INT_MAX || K > INT_MAX) return fbx_kernel_error(ctx, "convolution too large for the BLAS");
  return NULL;
}

/* "(a x b x c)" of n values. */
static void sizes_str(char *buf, size_t len, int n, const int64_t *v) {
  size_t at = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64, i ? " x " : "", v[i]);
  if (at < len) snprintf(buf + at, len - at, ")");
}

/* The geometry of a convolution of x by w (bias b or NULL) with the
 * parameters cp; checks what PyTorch checks. *batched: x has the batch
 * dim. */
static fbx_status *conv_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *w, const fbx_tensor *b,
                                 int nsp, const conv_params *cp, conv_geom *gp, bool *batched) {
  int64_t xs[5];
  FBX_TRY(check_operands(ctx, x, w, b, nsp, xs, batched));
  int64_t groups = cp->groups;
  conv_geom g = {.N = xs[0], .C = xs[1], .O = w->sizes[0], .G = groups};
  if (g.C % groups || g.O % groups || w->sizes[1] * groups != g.C) {
    char ws[256];
    fbx_red_shape_str(ws, sizeof ws, w->ndim, w->sizes);
    return fbx_kernel_error(ctx,
                            "weight of shape %s with groups=%" PRId64 " expects %" PRId64
                            " input channels (and output channels divisible by groups), got %" PRId64,
                            ws, groups, w->sizes[1] * groups, g.C);
  }
  if (b && (b->ndim != 1 || b->sizes[0] != g.O))
    return fbx_kernel_error(ctx, "expected a bias of shape [%" PRId64 "]", g.O);
  int64_t out[3];
  for (int i = 0; i < nsp; i++) {
    int64_t n = xs[2 + i], k = w->sizes[2 + i], e; /* e: the padded input less the kernel's reach */
    bool ovf = __builtin_mul_overflow(cp->d[i], k - 1, &e) || __builtin_sub_overflow(n, e, &e) ||
               __builtin_add_overflow(e, cp->p[i], &e) || __builtin_add_overflow(e, cp->p[i], &e);
    if (ovf || e < 1 || k < 1) {
      char xsz[256];
      fbx_red_shape_str(xsz, sizeof xsz, x->ndim, x->sizes);
      return fbx_kernel_error(ctx, "kernel size can't be greater than the (padded) input size: input %s", xsz);
    }
    out[i] = (e - 1) / cp->s[i] + 1;
  }
  geom_spatial(&g, nsp, xs + 2, w->sizes + 2, out, cp);
  FBX_TRY(check_blas_dims(ctx, &g));
  *gp = g;
  return NULL;
}

/* The geometry of a transposed convolution of x [N, C_in, spatial...] by
 * w [C_in, C_out / groups, k...] (bias b [C_out] or NULL) with the
 * parameters cp, as the convolution it is the adjoint of: input
 * [N, C_out, out...], output x's shape, the weight as it is. out = (in -
 * 1) stride - 2 padding + dilation (k - 1) + output_padding + 1; checks
 * what PyTorch checks (output_padding below the stride or the dilation, a
 * positive output size). */
static fbx_status *convt_geometry(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *w, const fbx_tensor *b,
                                  int nsp, const conv_params *cp, conv_geom *gp, bool *batched) {
  int64_t xs[5];
  FBX_TRY(check_operands(ctx, x, w, b, nsp, xs, batched));
  int64_t groups = cp->groups;
  char ws[256];
  fbx_red_shape_str(ws, sizeof ws, w->ndim, w->sizes);
  if (w->sizes[0] % groups)
    return fbx_kernel_error(ctx,
                            "weight of shape %s: its %" PRId64 " input channels are not divisible by groups=%" PRId64,
                            ws, w->sizes[0], groups);
  if (w->sizes[0] != xs[1])
    return fbx_kernel_error(ctx, "transposed convolution with a weight of shape %s expects %" PRId64
                            " input channels, got %" PRId64, ws, w->sizes[0], xs[1]);
  conv_geom g = {.N = xs[0], .C = w->sizes[1] * groups, .O = w->sizes[0], .G = groups};
  if (b && (b->ndim != 1 || b->sizes[0] != g.C))
    return fbx_kernel_error(ctx, "expected a bias of shape [%" PRId64 "]", g.C);
  int64_t in[3];
  bool ok = true;
  for (int i = 0; i < nsp; i++) {
    if (cp->op[i] >= cp->s[i] && cp->op[i] >= cp->d[i]) {
      char o[96], s[96], d[96];
      sizes_str(o, sizeof o, nsp, cp->op), sizes_str(s, sizeof s, nsp, cp->s), sizes_str(d, sizeof d, nsp, cp->d);
      return fbx_kernel_error(ctx, "output padding must be smaller than either stride or dilation, got "
                              "output_padding %s, stride %s, dilation %s", o, s, d);
    }
    int64_t k = w->sizes[2 + i], a, e;
    bool ovf = __builtin_mul_overflow(xs[2 + i] - 1, cp->s[i], &a) || __builtin_mul_overflow(cp->d[i], k - 1, &e) ||
               __builtin_add_overflow(a, e, &a) || __builtin_sub_overflow(a, cp->p[i], &a) ||
               __builtin_sub_overflow(a, cp->p[i], &a) || __builtin_add_overflow(a, cp->op[i], &a) ||
               __builtin_add_overflow(a, 1, &a);
    if (ovf) return fbx_kernel_error(ctx, "output size overflow");
    in[i] = a;
    ok = ok && a > 0 && k > 0;
  }
  if (!ok) {
    char is[96], os[96];
    sizes_str(is, sizeof is, nsp, xs + 2), sizes_str(os, sizeof os, nsp, in);
    return fbx_kernel_error(ctx, "input size per channel %s gives the output size %s: output size is too small", is,
                            os);
  }
  geom_spatial(&g, nsp, in, w->sizes + 2, xs + 2, cp);
  FBX_TRY(check_blas_dims(ctx, &g));
  *gp = g;
  return NULL;
}

/* The forward runs as independent tasks (image, group, band of output
 * rows; a row is one (depth, height) position of the output, Do * Ho of
 * them), spread over the pool, each calling OpenBLAS on its own thread and
 * writing its band of the output: y[n, group's channels, band] = bias + the
 * group's weight [Og, Cg * taps] @ the band's patches. A band's working
 * set takes about TILE_BYTES, so that it is still in the core's cache when
 * the GEMM reads it; the bands of an image are as even as their count
 * allows. The patches come one of three ways:
 *   - a 1x1 kernel with stride 1 and no padding: the input itself;
 *   - 1-D and 2-D convolutions of stride 1 with at least SHIFT_MIN_CG
 *     input channels per group ("shifted" GEMMs): the band's input rows are copied once, padded,
 *     into [Cg, band rows + (kH - 1) * dH, Wp]; Wp = W + 2 * pW, or W + pW
 *     where one gap of pW zeros can pad both a row's right and the next
 *     row's left. On that grid the tap (ki, kj) of every output position
 *     is the same position moved by ki * dH rows and kj * dW columns, so
 *     the output band (computed Wp wide, the columns past Wo discarded) is
 *     the sum over the kH * kW taps of weight_tap [Og, Cg] @ the grid
 *     shifted by the tap's offset, a plain strided operand: no im2col
 *     matrix at all. float32 on a CPU with AVX2 and FMA or AVX-512 sums
 *     the same products in registers instead (conv_direct.h), starting
 *     from the bias and storing the kept columns straight into y: faster
 *     than the kH * kW GEMMs with K = Cg, each of which packed its operand
 *     and read and wrote the whole output band (ops/README.md);
 *   - otherwise the band's im2col [Cg * taps, rows * Wo]. */
#define TILE_BYTES (512 * 1024)
#define SHIFT_MIN_CG 16
/* Below this many multiply-adds per task, tasks are grouped (a pool
 * dispatch costs a few µs). */
#define TASK_MIN_MACS (1 << 19)

enum { CONV_DIRECT, CONV_SHIFTED, CONV_IM2COL };

typedef struct conv_fwd {
  const conv_geom *g;
  bool f64;
  int how;                  /* CONV_* */
  const void *x, *w, *bias; /* contiguous input, weight, bias or NULL, in the work dtype */
  const void *wt;           /* CONV_SHIFTED with GEMMs: the weight as [kH * kW][O][Cg] */
  const float *wd;          /* CONV_SHIFTED float32 direct: per group, fbx_conv_direct_pack's weight */
  const int64_t *off;       /* ... and each tap's offset on the grid */
  int64_t wdg;              /* ... floats of wd per group */
  void *y;
  int64_t Cg, Og, K, P, rows, ntiles; /* output rows per band; bands per image and group */
  int64_t ntasks;                     /* images x groups x bands */
  bool ahead;                         /* tasks claimed one ahead from next (conv_fwd_body) */
  atomic_llong next;
  int64_t Wp, rows_in;                /* CONV_SHIFTED: grid width, input rows per band */
  atomic_bool nomem;                  /* a task's buffer could not be allocated */
} conv_fwd;

/* C [Og][ldc] := the bias of the group's channels (0 without one), n wide. */
static void fill_bias(const conv_fwd *f, int64_t gi, void *c, int64_t ldc, int64_t n) {
  for (int64_t o = 0; o < f->Og; o++) {
    int64_t oc = gi * f->Og + o;
    if (f->f64) {
      double *r = (double *)c + o * ldc, bv = f->bias ? ((const double *)f->bias)[oc] : 0;
      for (int64_t i = 0; i < n; i++) r[i] = bv;
    } else {
      float *r = (float *)c + o * ldc, bv = f->bias ? ((const float *)f->bias)[oc] : 0;
      for (int64_t i = 0; i < n; i++) r[i] = bv;
    }
  }
}

static void gemm1(bool f64, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda, const void *b, int64_t ldb,
                  double beta, void *c, int64_t ldc) {
  if (f64)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0, a, (int)lda, b, (int)ldb, beta,
                c, (int)ldc);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a, (int)lda, b, (int)ldb,
                (float)beta, c, (int)ldc);
}

/* acc [Og][pn] += the sum over the taps of weight_tap [Og, Cg] @ the grid
 * shifted by the tap's offset. */
static void conv_taps_gemm(const conv_fwd *f, int64_t gi, const char *grid, char *acc, int64_t pn) {
  const conv_geom *g = f->g;
  size_t es = f->f64 ? 8 : 4;
  int64_t Wp = f->Wp, plane = f->rows_in * Wp;
  for (int64_t ki = 0; ki < g->kH; ki++)
    for (int64_t kj = 0; kj < g->kW; kj++) {
      const char *wtap = (const char *)f->wt + (size_t)(((ki * g->kW + kj) * g->O + gi * f->Og) * f->Cg) * es;
      const char *b = grid + (size_t)(ki * g->dH * Wp + kj * g->dW) * es;
      gemm1(f->f64, f->Og, pn, f->Cg, wtap, f->Cg, b, plane, 1.0, acc, pn);
    }
}

/* The input rows of a task (the band's rows of the group's channels), to
 * prefetch while the task before it computes: per_chan cache lines from
 * each of nchan channels, chan bytes apart; (c, line) is the next one. */
typedef struct prefetch_rows {
  const char *base;            /* the first row of the first channel; NULL: nothing */
  int64_t chan, per_chan;      /* bytes from one channel to the next; cache lines per channel */
  int64_t lines, done, c, line; /* lines in all, prefetched so far; the next one's channel and line */
} prefetch_rows;

static void prefetch_plan(const conv_fwd *f, int64_t t, prefetch_rows *pf) {
  const conv_geom *g = f->g;
  size_t es = f->f64 ? 8 : 4;
  pf->base = NULL, pf->lines = pf->done = pf->c = pf->line = 0;
  if (t < 0) return;
  int64_t n = t / (g->G * f->ntiles), gi = (t / f->ntiles) % g->G, tile = t % f->ntiles;
  int64_t ih0 = tile * f->rows - g->pH, ih1 = ih0 + f->rows_in;
  if (ih0 < 0) ih0 = 0;
  if (ih1 > g->H) ih1 = g->H;
  if (ih1 <= ih0) return;
  pf->base = (const char *)f->x + (size_t)(((n * g->C + gi * f->Cg) * g->H + ih0) * g->W) * es;
  pf->chan = g->H * g->W * (int64_t)es;
  pf->per_chan = ((ih1 - ih0) * g->W * (int64_t)es + 63) / 64;
  pf->lines = f->Cg * pf->per_chan;
}

static void prefetch_upto(prefetch_rows *pf, int64_t upto) {
  for (; pf->base && pf->done < upto; pf->done++) { /* into the L2 cache, not the L1 the weights use */
    __builtin_prefetch(pf->base + pf->c * pf->chan + pf->line * 64, 0, 2);
    if (++pf->line == pf->per_chan) pf->line = 0, pf->c++;
  }
}

/* The shifted sums of one band (float32 on AVX2+FMA or AVX-512: the
 * direct kernel, straight into the output; otherwise GEMMs into acc, then
 * copied): grid = [Cg][rows_in][Wp] (+ slack), acc = [Og][rows * Wp]. */
static void band_shifted(const conv_fwd *f, const char *xp, int64_t gi, int64_t oh0, int64_t oh1, char *grid, char *acc,
                         char *yp, int64_t tnext) {
  const conv_geom *g = f->g;
  size_t es = f->f64 ? 8 : 4;
  int64_t nr = oh1 - oh0, rin = nr + (g->kH - 1) * g->dH, Wp = f->Wp, plane = f->rows_in * Wp;
  int64_t rpad = Wp - g->W - g->pW; /* pW, or 0 where the next row's left padding serves */
  for (int64_t c = 0; c < f->Cg; c++)
    for (int64_t r = 0; r < rin; r++) {
      int64_t ih = oh0 - g->pH + r;
      char *d = grid + (size_t)(c * plane + r * Wp) * es;
      if (ih < 0 || ih >= g->H) {
        memset(d, 0, es * (size_t)Wp);
        continue;
      }
      memset(d, 0, es * (size_t)g->pW);
      memcpy(d + (size_t)g->pW * es, xp + (size_t)((c * g->H + ih) * g->W) * es, es * (size_t)g->W);
      memset(d + (size_t)(g->pW + g->W) * es, 0, es * (size_t)rpad);
    }
  if (rin < f->rows_in) /* a short last band: the rest of each plane is read for discarded columns only */
    for (int64_t c = 0; c < f->Cg; c++)
      memset(grid + (size_t)(c * plane + rin * Wp) * es, 0, es * (size_t)((f->rows_in - rin) * Wp));
  int64_t pn = nr * Wp;
  if (f->wd) { /* a block of output channels at a time, a share of the next task's rows prefetched after each */
    int64_t taps = g->kH * g->kW, OB = fbx_conv_direct_ob(), nob = (f->Og + OB - 1) / OB;
    prefetch_rows pf;
    prefetch_plan(f, tnext, &pf);
    for (int64_t ob = 0; ob < nob; ob++) {
      int64_t o0 = ob * OB, on = f->Og - o0 < OB ? f->Og - o0 : OB;
      fbx_conv_direct_out out = {.y = (float *)yp + o0 * f->P, .ldy = f->P, .Wp = Wp, .Wo = g->Wo};
      fbx_conv_direct_f32((const float *)grid, plane, f->off, taps, f->Cg, f->wd + gi * f->wdg + o0 * f->Cg * taps,
                          on, f->bias ? (const float *)f->bias + gi * f->Og + o0 : NULL, pn, &out);
      prefetch_upto(&pf, pf.lines * (ob + 1) / nob);
    }
    return;
  }
  fill_bias(f, gi, acc, pn, pn);
  conv_taps_gemm(f, gi, grid, acc, pn);
  for (int64_t o = 0; o < f->Og; o++)
    for (int64_t r = 0; r < nr; r++)
      memcpy(yp + (size_t)(o * f->P + r * g->Wo) * es, acc + (size_t)(o * pn + r * Wp) * es, es * (size_t)g->Wo);
}

/* Task t (image, group, band); tnext: the task this thread runs next, or
 * -1 (the direct kernel prefetches its input rows). A band is output rows
 * [oh0, oh1) of the Do * Ho rows (CONV_SHIFTED: Do = 1). */
static void conv_task(const conv_fwd *f, int64_t t, int64_t tnext, char *buf, char *acc) {
  const conv_geom *g = f->g;
  size_t es = f->f64 ? 8 : 4;
  int64_t n = t / (g->G * f->ntiles), gi = (t / f->ntiles) % g->G, tile = t % f->ntiles, R = g->Do * g->Ho;
  int64_t oh0 = tile * f->rows, oh1 = oh0 + f->rows < R ? oh0 + f->rows : R;
  int64_t p0 = oh0 * g->Wo, pn = (oh1 - oh0) * g->Wo;
  const char *xp = (const char *)f->x + (size_t)((n * g->C + gi * f->Cg) * g->D * g->H * g->W) * es;
  char *yp = (char *)f->y + (size_t)((n * g->O + gi * f->Og) * f->P + p0) * es;
  if (f->how == CONV_SHIFTED) {
    band_shifted(f, xp, gi, oh0, oh1, buf, acc, yp, tnext);
    return;
  }
  const void *bm = xp + (size_t)p0 * es;
  int64_t ldb = f->P;
  if (f->how == CONV_IM2COL) {
    im2col_rows(g, f->f64, xp, buf, pn, 0, f->K, oh0, oh1);
    bm = buf, ldb = pn;
  }
  if (f->bias) fill_bias(f, gi, yp, f->P, pn);
  gemm1(f->f64, f->Og, pn, f->K, (const char *)f->w + (size_t)(gi * f->Og * f->K) * es, f->K, bm, ldb,
        f->bias ? 1.0 : 0.0, yp, f->P);
}

/* A thread's share: tasks [begin, end), or with `ahead` the tasks it
 * claims from f->next (begin and end then count threads). */
static void conv_fwd_body(void *ctx, int64_t begin, int64_t end) {
  conv_fwd *f = ctx;
  const conv_geom *g = f->g;
  size_t es = f->f64 ? 8 : 4;
  char *buf = NULL, *acc = NULL;
  /* taps read (kW - 1) * dW past the last plane; the direct kernel also reads whole vectors */
  size_t slack = (size_t)((g->kW - 1) * g->dW + (f->wd ? fbx_conv_direct_slack() : 0));
  if (f->how == CONV_SHIFTED) {
    size_t grid = (size_t)(f->Cg * f->rows_in * f->Wp) + slack;
    buf = fbx_malloc(es * (grid + (f->wd ? 0 : (size_t)(f->Og * f->rows * f->Wp))));
    if (buf) {
      memset(buf + (grid - slack) * es, 0, slack * es); /* past the last plane: padding zeros, then discarded columns */
      if (!f->wd) acc = buf + grid * es;
    }
  } else if (f->how == CONV_IM2COL) {
    buf = fbx_malloc(es * (size_t)(f->K * f->rows * g->Wo));
  }
  if (!buf && f->how != CONV_DIRECT) {
    atomic_store(&f->nomem, true);
    return;
  }
  if (f->ahead) { /* tasks claimed one at a time, each before the one it follows runs */
    int64_t t = atomic_fetch_add(&f->next, 1);
    while (t < f->ntasks) {
      int64_t tn = atomic_fetch_add(&f->next, 1);
      conv_task(f, t, tn < f->ntasks ? tn : -1, buf, acc);
      t = tn;
    }
  } else
    for (int64_t t = begin; t < end; t++) conv_task(f, t, -1, buf, acc);
  fbx_free(buf);
}


/* y[n, c, :] += bias[c] over the P positions of each of the Cc channels. */
static void add_bias(bool f64, void *y, int64_t N, int64_t Cc, int64_t P, const void *bias) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < Cc; c++) {
      if (f64) {
        double *yp = (double *)y + (n * Cc + c) * P, bv = ((const double *)bias)[c];
        for (int64_t i = 0; i < P; i++) yp[i] += bv;
      } else {
        float *yp = (float *)y + (n * Cc + c) * P, bv = ((const float *)bias)[c];
        for (int64_t i = 0; i < P; i++) yp[i] += bv;
      }
    }
}

/* A new [N, Cc, spatial...] tensor of the last nsp of (d, h, w), zeroed or not. */
static fbx_status *new_nchw(fbx_tensor **out, fbx_dtype dt, bool zero, int nsp, int64_t N, int64_t Cc, int64_t d,
                            int64_t h, int64_t w) {
  int64_t s[5] = {N, Cc, d, h, w}, sz[5];
  sz[0] = N, sz[1] = Cc;
  for (int i = 0; i < nsp; i++) sz[2 + i] = s[5 - nsp + i];
  return zero ? fbx_tensor_zeros(out, dt, nsp + 2, sz) : fbx_tensor_empty(out, dt, nsp + 2, sz);
}

/* y [N, O, Do, Ho, Wo] (the last nsp spatial dims; the work dtype, new) =
 * the convolution of x by w plus bias (NULL: none) with geometry g; x, w
 * and bias contiguous in the work dtype (float32 or float64). */
static fbx_status *conv_forward(const conv_geom *gp, int nsp, const fbx_tensor *xc, const fbx_tensor *wc,
                                const fbx_tensor *bc, fbx_tensor **out) {
  const conv_geom g = *gp;
  int64_t groups = g.G, taps = g.kD * g.kH * g.kW, R = g.Do * g.Ho;
  int64_t Cg = g.C / groups, Og = g.O / groups, K = Cg * taps, P = R * g.Wo;
  bool f64 = xc->dtype == FBX_DTYPE_FLOAT64;
  size_t esz = f64 ? 8 : 4;
  fbx_tensor *y = NULL;
  void *wt = NULL;
  /* the GEMM writes every element (beta 0) unless K or O/groups is 0 */
  FBX_TRY(new_nchw(&y, xc->dtype, !(K > 0 && Og > 0), nsp, g.N, g.O, g.Do, g.Ho, g.Wo));
  fbx_status *st = NULL;
  if (K > 0 && P > 0 && Og > 0) {
    fbx_linalg_blas_init();
    bool direct = taps == 1 && g.sD == 1 && g.sH == 1 && g.sW == 1 && g.pD == 0 && g.pH == 0 && g.pW == 0 &&
                  g.Do == g.D && g.Ho == g.H && g.Wo == g.W;
    bool shifted = !direct && nsp <= 2 && g.sH == 1 && g.sW == 1 && Cg >= SHIFT_MIN_CG;
    conv_fwd f = {.g = &g, .f64 = f64, .how = direct ? CONV_DIRECT : shifted ? CONV_SHIFTED : CONV_IM2COL,
                  .x = xc->data, .w = wc->data, .bias = bc ? bc->data : NULL, .y = y->data, .Cg = Cg, .Og = Og,
                  .K = K, .P = P, .Wp = g.W + 2 * g.pW};
    /* Where the taps reach no further left or right than pW columns past
     * the row ((kW - 1) * dW >= pW, as in "same" padding), one gap of pW
     * zeros serves as a row's right padding and the next row's left: the
     * grid rows are W + pW wide, fewer discarded columns to compute. */
    if (shifted && g.pW <= (g.kW - 1) * g.dW) f.Wp = g.W + g.pW;
    /* bytes per output row of a band's working set */
    int64_t per_row = shifted ? (int64_t)esz * (Cg + Og) * f.Wp : (int64_t)esz * K * g.Wo;
    f.rows = TILE_BYTES / per_row;
    if (f.rows < 1) f.rows = 1;
    if (f.rows > R) f.rows = R;
    f.ntiles = (R + f.rows - 1) / f.rows;
    f.rows = (R + f.ntiles - 1) / f.ntiles; /* as many bands, as even as they go */
    f.rows_in = f.rows + (g.kH - 1) * g.dH;
    if (shifted && !f64 && fbx_conv_direct_ok()) { /* the direct kernel's weight, per group, and tap offsets */
      f.wdg = fbx_conv_direct_wsize(Og, Cg, taps);
      wt = fbx_malloc(sizeof(float) * (size_t)(groups * f.wdg) + sizeof(int64_t) * (size_t)taps);
      if (!wt) {
        st = fbx_status_nomem();
        goto done;
      }
      float *wd = wt;
      int64_t *off = (int64_t *)(wd + groups * f.wdg);
      for (int64_t gi = 0; gi < groups; gi++)
        fbx_conv_direct_pack((const float *)wc->data + gi * Og * Cg * taps, Og, Cg, taps, wd + gi * f.wdg);
      for (int64_t t = 0; t < taps; t++) off[t] = (t / g.kW) * g.dH * f.Wp + (t % g.kW) * g.dW;
      f.wd = wd, f.off = off;
    } else if (shifted) { /* the weight by tap: wt[tap][o][c] = w[o][c][tap] */
      wt = fbx_malloc(esz * (size_t)(taps * g.O * Cg));
      if (!wt) {
        st = fbx_status_nomem();
        goto done;
      }
      for (int64_t o = 0; o < g.O; o++)
        for (int64_t c = 0; c < Cg; c++)
          for (int64_t t = 0; t < taps; t++) {
            size_t to = (size_t)((t * g.O + o) * Cg + c), from = (size_t)((o * Cg + c) * taps + t);
            if (f64) ((double *)wt)[to] = ((const double *)wc->data)[from];
            else ((float *)wt)[to] = ((const float *)wc->data)[from];
          }
      f.wt = wt;
    }
    atomic_init(&f.nomem, false);
    atomic_init(&f.next, 0);
    f.ntasks = g.N * groups * f.ntiles;
    int64_t per = Og * f.rows * g.Wo * K + 1, group = per >= TASK_MIN_MACS ? 1 : TASK_MIN_MACS / per + 1;
    /* Bands are claimed as threads come free: under other processes' load
     * on the cores this ran faster than one fixed share per thread in 5 of
     * 6 alternated rounds (fusebox bench, the 3x3 [8, 64, 56, 56] row).
     * The direct kernel's tasks are claimed one ahead, so that each can
     * prefetch the next one's input rows (read from memory, they took
     * about 35 us of a 600 us band here: ops/README.md); a thread slowed
     * by other load then holds at most one task the others could run. */
    f.ahead = f.wd && f.ntasks > group;
    if (f.ahead) fbx_parallel_for_tasks(fbx_parallel_threads(), 1, conv_fwd_body, &f);
    else fbx_parallel_for_tasks(f.ntasks, group, conv_fwd_body, &f);
    if (atomic_load(&f.nomem)) st = fbx_status_nomem();
  } else if (bc && P > 0) { /* no product: the output is the bias */
    add_bias(f64, y->data, g.N, g.O, P, bc->data);
  }
done:
  fbx_free(wt);
  if (st) fbx_tensor_release(y);
  else *out = y;
  return st;
}

/* grad_input of a stride-1 convolution whose padding is at most the taps'
 * reach (pad <= dilation * (k - 1)), as a forward convolution: grad_input
 * = conv(grad, w') with w'[group's channel c][o] = w[group's o][c] flipped
 * in space, padding dilation * (k - 1) - pad, the same dilation and
 * groups; so the forward's kernels (the direct kernel for float32) do the
 * work. Its output has the usual size Do + dilation * (k - 1) - 2 pad,
 * which is the input's size unless g is a transposed convolution's
 * adjoint with output_padding (then false: take col2im). */
static bool input_grad_by_fwd_ok(const conv_geom *g) {
  const int64_t in[3] = {g->D, g->H, g->W}, out[3] = {g->Do, g->Ho, g->Wo}, k[3] = {g->kD, g->kH, g->kW};
  const int64_t s[3] = {g->sD, g->sH, g->sW}, p[3] = {g->pD, g->pH, g->pW}, d[3] = {g->dD, g->dH, g->dW};
  for (int i = 0; i < 3; i++)
    if (s[i] != 1 || p[i] > d[i] * (k[i] - 1) || out[i] + d[i] * (k[i] - 1) - 2 * p[i] != in[i]) return false;
  return true;
}

/* gc: grad [N, O, Do, Ho, Wo] and wc the weight, contiguous in the work
 * dtype; bc: a bias of the C input channels to add, or NULL; *out gets
 * [N, C, D, H, W] (the last nsp spatial dims). */
static fbx_status *input_grad_by_fwd(const conv_geom *g, int nsp, const fbx_tensor *gc, const fbx_tensor *wc,
                                     const fbx_tensor *bc, fbx_tensor **out) {
  int64_t Cg = g->C / g->G, Og = g->O / g->G, taps = g->kD * g->kH * g->kW;
  fbx_tensor *wt = NULL;
  int64_t ws[3] = {g->C, Og, taps}; /* [C, Og, k...] flattened; conv_forward reads the data only */
  FBX_TRY(fbx_tensor_empty(&wt, wc->dtype, 3, ws));
  bool f64 = wc->dtype == FBX_DTYPE_FLOAT64;
  for (int64_t gi = 0; gi < g->G; gi++)
    for (int64_t o = 0; o < Og; o++)
      for (int64_t c = 0; c < Cg; c++)
        for (int64_t t = 0; t < taps; t++) {
          size_t to = (size_t)(((gi * Cg + c) * Og + o) * taps + t);
          size_t from = (size_t)(((gi * Og + o) * Cg + c) * taps + (taps - 1 - t));
          if (f64) ((double *)wt->data)[to] = ((const double *)wc->data)[from];
          else ((float *)wt->data)[to] = ((const float *)wc->data)[from];
        }
  conv_geom gf = {.N = g->N, .C = g->O, .D = g->Do, .H = g->Ho, .W = g->Wo, .O = g->C, .kD = g->kD, .kH = g->kH,
                  .kW = g->kW, .Do = g->D, .Ho = g->H, .Wo = g->W, .sD = 1, .sH = 1, .sW = 1,
                  .pD = g->dD * (g->kD - 1) - g->pD, .pH = g->dH * (g->kH - 1) - g->pH,
                  .pW = g->dW * (g->kW - 1) - g->pW, .dD = g->dD, .dH = g->dH, .dW = g->dW, .G = g->G};
  fbx_status *st = conv_forward(&gf, nsp, gc, wt, bc, out);
  fbx_tensor_release(wt);
  return st;
}

/* grad_input [N, C, D, H, W] (the last nsp spatial dims; the work dtype,
 * new) of a convolution of geometry g, from its output's gradient gc
 * [N, O, Do, Ho, Wo] and its weight wc, contiguous in the work dtype; plus
 * bias bc (NULL: none) per input channel. That is also the transposed
 * convolution of gc. Per image and group, col2im(weightᵀ · grad), or
 * input_grad_by_fwd where it applies. */
static fbx_status *conv_input_grad(const conv_geom *g, int nsp, const fbx_tensor *gc, const fbx_tensor *wc,
                                   const fbx_tensor *bc, fbx_tensor **out) {
  int64_t Cg = g->C / g->G, Og = g->O / g->G, K = Cg * g->kD * g->kH * g->kW, P = g->Do * g->Ho * g->Wo;
  int64_t plane = g->D * g->H * g->W;
  bool f64 = gc->dtype == FBX_DTYPE_FLOAT64;
  size_t esz = f64 ? 8 : 4;
  if (K > 0 && P > 0 && Og > 0 && input_grad_by_fwd_ok(g)) return input_grad_by_fwd(g, nsp, gc, wc, bc, out);
  fbx_tensor *gi = NULL;
  FBX_TRY(new_nchw(&gi, gc->dtype, true, nsp, g->N, g->C, g->D, g->H, g->W));
  if (K > 0 && P > 0 && Og > 0) {
    void *cols = fbx_malloc(esz * (size_t)(K * P));
    if (!cols) {
      fbx_tensor_release(gi);
      return fbx_status_nomem();
    }
    fbx_linalg_blas_init();
    for (int64_t n = 0; n < g->N; n++)
      for (int64_t grp = 0; grp < g->G; grp++) {
        const char *gp = (const char *)gc->data + (size_t)((n * g->O + grp * Og) * P) * esz;
        const char *wp = (const char *)wc->data + (size_t)(grp * Og * K) * esz;
        /* cols = weight[group]^T (K x Og) . grad[n, group] (Og x P), then col2im into grad_input */
        fbx_linalg_gemm(f64, true, false, K, P, Og, 1.0, wp, K, gp, P, 0.0, cols, P);
        col2im_job cj = {.g = g, .x_out = (char *)gi->data + (size_t)((n * g->C + grp * Cg) * plane) * esz,
                         .cols = cols, .f64 = f64};
        fbx_parallel_for(Cg, 1, col2im_body, &cj);
      }
    fbx_free(cols);
  }
  if (bc) add_bias(f64, gi->data, g->N, g->C, plane, bc->data);
  *out = gi;
  return NULL;
}

/* gw [O, C / G, k...] (zeroed, contiguous, the work dtype) += per image
 * and group grad (Og x P) · im2col(x)ᵀ (P x K): the weight gradient of a
 * convolution of geometry g from its input x [N, C, D, H, W] and its
 * output's gradient gy [N, O, Do, Ho, Wo], contiguous in the work dtype. */
static fbx_status *conv_weight_grad(const conv_geom *g, const fbx_tensor *xc, const fbx_tensor *gc, fbx_tensor *gw) {
  int64_t Cg = g->C / g->G, Og = g->O / g->G, K = Cg * g->kD * g->kH * g->kW, P = g->Do * g->Ho * g->Wo;
  int64_t plane = g->D * g->H * g->W;
  bool f64 = xc->dtype == FBX_DTYPE_FLOAT64;
  size_t esz = f64 ? 8 : 4;
  if (!(K > 0 && P > 0 && Og > 0)) return NULL;
  void *cols = fbx_malloc(esz * (size_t)(K * P));
  if (!cols) return fbx_status_nomem();
  fbx_linalg_blas_init();
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t grp = 0; grp < g->G; grp++) {
      col_job j = {.g = g, .x = (const char *)xc->data + (size_t)((n * g->C + grp * Cg) * plane) * esz,
                   .cols = cols, .f64 = f64};
      fbx_parallel_for(K, P >= 4096 ? 1 : 4096 / P + 1, im2col_body, &j);
      const char *gp = (const char *)gc->data + (size_t)((n * g->O + grp * Og) * P) * esz;
      char *gwp = (char *)gw->data + (size_t)(grp * Og * K) * esz;
      fbx_linalg_gemm(f64, false, true, Og, K, P, 1.0, gp, P, cols, P, 1.0, gwp, K);
    }
  fbx_free(cols);
  return NULL;
}

/* gb[c] = the sum of t [N, Cc, P] (contiguous, the work dtype) over images and positions, in double. */
static void bias_grad(const fbx_tensor *t, int64_t N, int64_t Cc, int64_t P, fbx_tensor *gb) {
  bool f64 = t->dtype == FBX_DTYPE_FLOAT64;
  for (int64_t c = 0; c < Cc; c++) {
    double acc = 0;
    for (int64_t n = 0; n < N; n++) {
      size_t off = (size_t)((n * Cc + c) * P);
      if (f64)
        for (int64_t i = 0; i < P; i++) acc += ((const double *)t->data)[off + i];
      else
        for (int64_t i = 0; i < P; i++) acc += ((const float *)t->data)[off + i];
    }
    if (f64) ((double *)gb->data)[c] = acc;
    else ((float *)gb->data)[c] = (float)acc;
  }
}

/* float32 for float16/bfloat16/float32, float64 for float64. */
static fbx_dtype work_dtype(fbx_dtype dt) { return dt == FBX_DTYPE_FLOAT64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32; }

/* *t without its batch dim (unless batched) and in dtype dt: what the
 * kernels return from a result computed batched in the work dtype. */
static fbx_status *finish(fbx_tensor **t, bool drop_batch, fbx_dtype dt) {
  if (drop_batch) { /* a view of the same storage */
    fbx_tensor *v = NULL;
    FBX_TRY(fbx_tensor_view(&v, *t, (*t)->ndim - 1, (*t)->sizes + 1, NULL, (*t)->offset));
    fbx_tensor_release(*t);
    *t = v;
  }
  if ((*t)->dtype != dt) {
    fbx_tensor *r = NULL;
    FBX_TRY(fbx_tensor_clone_as(&r, *t, dt));
    fbx_tensor_release(*t);
    *t = r;
  }
  return NULL;
}

/* A convolution (transposed: a transposed convolution) of x by w plus b
 * (NULL: none) with nsp spatial dims and parameters cp into outs[0]. */
static fbx_status *conv_run(fbx_kctx *ctx, fbx_tensor *x, fbx_tensor *w, fbx_tensor *b, int nsp, const conv_params *cp,
                            bool transposed, fbx_ivalue *outs) {
  conv_geom g;
  bool batched = false;
  if (transposed) FBX_TRY(convt_geometry(ctx, x, w, b, nsp, cp, &g, &batched));
  else FBX_TRY(conv_geometry(ctx, x, w, b, nsp, cp, &g, &batched));
  fbx_dtype work = work_dtype(x->dtype);
  fbx_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL;
  fbx_status *st = fbx_contiguous_as(&xc, x, work);
  if (!st) st = fbx_contiguous_as(&wc, w, work);
  if (!st) st = fbx_contiguous_as(&bc, b, work);
  if (!st) st = transposed ? conv_input_grad(&g, nsp, xc, wc, bc, &y) : conv_forward(&g, nsp, xc, wc, bc, &y);
  if (!st) st = finish(&y, !batched, x->dtype);
  if (!st) fbx_set_out_tensor(outs, 0, y), y = NULL;
  fbx_tensor_release(xc);
  fbx_tensor_release(wc);
  fbx_tensor_release(bc);
  fbx_tensor_release(y);
  return st;
}

/* The tensors args[0 .. n - 2] and the optional bias args[n - 1] (NULL for None) into t. */
static fbx_status *conv_tensors(const fbx_kctx *ctx, const fbx_ivalue *args, int n, fbx_tensor **t) {
  for (int i = 0; i < n - 1; i++) FBX_TRY(fbx_arg_tensor(ctx, args, i, &t[i]));
  t[n - 1] = NULL;
  if (args[n - 1].kind == FBX_IV_TENSOR) t[n - 1] = args[n - 1].u.t;
  else if (args[n - 1].kind != FBX_IV_NONE) return fbx_kernel_error(ctx, "bias must be a Tensor or None");
  return NULL;
}

/* The spatial rank of aten::convolution's and the backward ops' weight (1
 * to 3), with a batched input of the same rank for the former; and their
 * `transposed` flag at args[itr]. */
static fbx_status *convolution_kind(const fbx_kctx *ctx, const fbx_ivalue *args, const fbx_tensor *x,
                                    const fbx_tensor *w, bool need_batch, int itr, int *nsp, bool *transposed) {
  *nsp = w->ndim - 2;
  if (*nsp < 1 || *nsp > 3) return fbx_kernel_error(ctx, "expected a 3D, 4D or 5D weight, got %dD", w->ndim);
  if (need_batch && x->ndim != w->ndim)
    return fbx_kernel_error(ctx, "expected a %dD input for a %dD weight, got %dD", w->ndim, w->ndim, x->ndim);
  *transposed = false;
  if (itr < 0) return NULL;
  if (args[itr].kind != FBX_IV_BOOL) return fbx_kernel_error(ctx, "transposed must be a bool");
  *transposed = args[itr].u.b;
  return NULL;
}

/* conv{1,2,3}d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) and (transposed)
 * conv_transpose{1,2,3}d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) */
static fbx_status *conv_named(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, int nsp, bool transposed) {
  fbx_tensor *t[3];
  conv_params cp;
  FBX_TRY(conv_tensors(ctx, args, 3, t));
  if (transposed) FBX_TRY(read_params(ctx, args, nsp, 3, 4, 7, 5, 6, &cp));
  else FBX_TRY(read_params(ctx, args, nsp, 3, 4, 5, -1, 6, &cp));
  return conv_run(ctx, t[0], t[1], t[2], nsp, &cp, transposed, outs);
}

/* conv{1,2,3}d.padding(input, weight, bias=None, stride=1, str padding="valid", dilation=1, groups=1):
 * "valid" is no padding; "same" (stride 1 only) pads each spatial dim by
 * dilation * (k - 1) in all, half of it (rounded down) before the input
 * and the rest after, as PyTorch does. An odd total is uneven: the input
 * then gets one extra zero at the end of that dim (a padded copy, *extra
 * per dim, 0 when even) and the convolution the even padding. */
static fbx_status *padding_mode(const fbx_kctx *ctx, const fbx_ivalue *args, int nsp, conv_params *cp,
                                const fbx_tensor *w, int64_t extra[3]) {
  if (args[4].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "padding must be a string or a list of ints");
  const char *mode = fbx_iv_str_data(&args[4]);
  fbx_ivalue zero = fbx_iv_int(0);
  FBX_TRY(int_params(ctx, 3, &args[3], nsp, cp->s, 1, "stride"));
  FBX_TRY(int_params(ctx, 4, &zero, nsp, cp->p, 0, "padding"));
  FBX_TRY(int_params(ctx, 5, &args[5], nsp, cp->d, 1, "dilation"));
  memset(cp->op, 0, sizeof cp->op);
  if (args[6].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "groups must be an int");
  cp->groups = args[6].u.i;
  if (cp->groups < 1)
    return fbx_kernel_error(ctx, "non-positive groups is not supported (got %" PRId64 ")", cp->groups);
  memset(extra, 0, 3 * sizeof *extra);
  if (!strcmp(mode, "valid")) return NULL;
  if (strcmp(mode, "same"))
    return fbx_kernel_error(ctx, "invalid padding string '%s' (expected 'same' or 'valid')", mode);
  for (int i = 0; i < nsp; i++)
    if (cp->s[i] != 1) return fbx_kernel_error(ctx, "padding='same' is not supported for strided convolutions");
  if (w->ndim != nsp + 2) return fbx_kernel_error(ctx, "expected a %dD weight, got %dD", nsp + 2, w->ndim);
  for (int i = 0; i < nsp; i++) {
    int64_t k = w->sizes[2 + i], total;
    if (k < 1 || __builtin_mul_overflow(cp->d[i], k - 1, &total))
      return fbx_kernel_error(ctx, "padding='same': kernel size %" PRId64 " with dilation %" PRId64 " out of range",
                              k, cp->d[i]);
    cp->p[i] = total / 2;
    extra[i] = total % 2;
  }
  return NULL;
}

/* x with extra[i] zeros after each of its last nsp dims, or (sign -1) as
 * many cropped there: aten::constant_pad_nd's row (a new reference) */
static fbx_status *pad_end(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x, int nsp, const int64_t extra[3],
                           int sign) {
  fbx_ivalue pad;
  FBX_TRY(fbx_iv_list_new(&pad, 2 * nsp));
  fbx_status *st = NULL;
  for (int i = nsp - 1; i >= 0 && !st; i--) { /* (before, after) pairs from the last dim */
    st = fbx_iv_list_push(&pad, fbx_iv_int(0));
    if (!st) st = fbx_iv_list_push(&pad, fbx_iv_int(sign * extra[i]));
  }
  fbx_ivalue a[3] = {fbx_iv_tensor(x), pad, fbx_iv_int(0)}; /* x borrowed */
  if (!st) st = fbx_row_tensor(ctx, out, FBX_OP_constant_pad_nd, a, 3);
  fbx_iv_release(&pad);
  return st;
}

static bool any_extra(const int64_t extra[3]) { return extra[0] || extra[1] || extra[2]; }

static fbx_status *conv_named_padding(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, int nsp) {
  fbx_tensor *t[3], *xp = NULL;
  conv_params cp;
  int64_t extra[3];
  FBX_TRY(conv_tensors(ctx, args, 3, t));
  FBX_TRY(padding_mode(ctx, args, nsp, &cp, t[1], extra));
  if (any_extra(extra)) {
    bool batched = t[0]->ndim == nsp + 2;
    if (!batched && t[0]->ndim != nsp + 1)
      return fbx_kernel_error(ctx, "expected a %dD (unbatched) or %dD (batched) input, got %dD", nsp + 1, nsp + 2,
                              t[0]->ndim);
    FBX_TRY(pad_end(ctx, &xp, t[0], nsp, extra, 1));
  }
  fbx_status *st = conv_run(ctx, xp ? xp : t[0], t[1], t[2], nsp, &cp, false, outs);
  fbx_tensor_release(xp);
  return st;
}

/* aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups) and
 * aten::_convolution (the same, then benchmark, deterministic, cudnn_enabled, allow_tf32: ignored). */
fbx_status *fbx_k_convolution(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t[3];
  conv_params cp;
  int nsp;
  bool transposed;
  FBX_TRY(conv_tensors(ctx, args, 3, t));
  FBX_TRY(convolution_kind(ctx, args, t[0], t[1], true, 6, &nsp, &transposed));
  FBX_TRY(read_params(ctx, args, nsp, 3, 4, 5, transposed ? 7 : -1, 8, &cp));
  return conv_run(ctx, t[0], t[1], t[2], nsp, &cp, transposed, outs);
}

/* The three gradients of a convolution (transposed: of a transposed
 * convolution) of x by w with bias b (NULL: none) and parameters cp, given
 * the output's gradient gy, into outs[0..2] (grad_bias None without a
 * bias). Computed in float32 for float16/bfloat16, rounded back. */
static fbx_status *conv_backward_run(fbx_kctx *ctx, fbx_tensor *gy, fbx_tensor *x, fbx_tensor *w, fbx_tensor *b,
                                     int nsp, const conv_params *cp, bool transposed, fbx_ivalue *outs) {
  conv_geom g;
  bool batched = false;
  if (transposed) FBX_TRY(convt_geometry(ctx, x, w, b, nsp, cp, &g, &batched));
  else FBX_TRY(conv_geometry(ctx, x, w, b, nsp, cp, &g, &batched));
  /* the output: conv [N, O, Do, Ho, Wo], transposed [N, C, D, H, W] */
  int64_t ys[5] = {g.N, transposed ? g.C : g.O, 0, 0, 0}, sp[3] = {g.Do, g.Ho, g.Wo}, tsp[3] = {g.D, g.H, g.W};
  for (int i = 0; i < nsp; i++) ys[2 + i] = (transposed ? tsp : sp)[3 - nsp + i];
  const int64_t *want = ys + (batched ? 0 : 1);
  bool shape_ok = gy->ndim == x->ndim;
  for (int i = 0; shape_ok && i < gy->ndim; i++) shape_ok = gy->sizes[i] == want[i];
  if (!shape_ok || gy->dtype != x->dtype) {
    char gs[256];
    fbx_red_shape_str(gs, sizeof gs, gy->ndim, gy->sizes);
    return fbx_kernel_error(ctx, "grad of shape %s (%s) does not match the convolution's output", gs,
                            fbx_dtype_name(gy->dtype));
  }
  fbx_dtype work = work_dtype(x->dtype);
  fbx_tensor *xc = NULL, *wc = NULL, *gc = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
  fbx_status *st = fbx_contiguous_as(&xc, x, work);
  if (!st) st = fbx_contiguous_as(&wc, w, work);
  if (!st) st = fbx_contiguous_as(&gc, gy, work);
  if (!st) st = fbx_tensor_zeros(&gw, work, w->ndim, w->sizes);
  if (!st && b) st = fbx_tensor_zeros(&gb, work, 1, b->sizes);
  if (st) goto done;
  /* the convolution's input and output gradient: transposed, gy is the input and x the gradient */
  const fbx_tensor *cin = transposed ? gc : xc, *cgrad = transposed ? xc : gc;
  st = transposed ? conv_forward(&g, nsp, gc, wc, NULL, &gi) : conv_input_grad(&g, nsp, gc, wc, NULL, &gi);
  if (!st) st = conv_weight_grad(&g, cin, cgrad, gw);
  if (st) goto done;
  if (gb) bias_grad(gc, g.N, transposed ? g.C : g.O, transposed ? g.D * g.H * g.W : g.Do * g.Ho * g.Wo, gb);
  fbx_tensor **res[3] = {&gi, &gw, &gb};
  for (int k = 0; k < 3 && !st; k++)
    if (*res[k]) st = finish(res[k], k == 0 && !batched, x->dtype);
  if (st) goto done;
  for (int k = 0; k < 3; k++) {
    outs[k] = *res[k] ? fbx_iv_tensor(*res[k]) : fbx_iv_none();
    *res[k] = NULL;
  }
done:
  fbx_tensor_release(xc);
  fbx_tensor_release(wc);
  fbx_tensor_release(gc);
  fbx_tensor_release(gi);
  fbx_tensor_release(gw);
  fbx_tensor_release(gb);
  return st;
}

/* The backward ops: (grad, input, weight, bias?, stride, padding,
 * dilation) at args[0 .. 6], then transposed at args[itr], output_padding
 * at args[iop] (-1: neither, a convolution) and groups at args[ig]. */
static fbx_status *backward_common(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, int itr, int iop, int ig) {
  fbx_tensor *t[4]; /* grad, input, weight, bias */
  conv_params cp;
  int nsp;
  bool transposed;
  FBX_TRY(conv_tensors(ctx, args, 4, t));
  FBX_TRY(convolution_kind(ctx, args, t[1], t[2], false, itr, &nsp, &transposed));
  FBX_TRY(read_params(ctx, args, nsp, 4, 5, 6, transposed ? iop : -1, ig, &cp));
  return conv_backward_run(ctx, t[0], t[1], t[2], t[3], nsp, &cp, transposed, outs);
}

/* fusebox::conv_backward(grad, input, weight, bias?, stride, padding,
 * dilation, groups) -> (grad_input, grad_weight, grad_bias): the three
 * gradients of conv1d/conv2d/conv3d (the spatial rank is the weight's
 * rank - 2): grad_input by conv_input_grad, grad_weight by
 * conv_weight_grad, grad_bias the sum of grad over the batch and positions
 * (None when bias is None). */
fbx_status *fbx_k_fbx_conv_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return backward_common(ctx, args, outs, -1, -1, 7);
}

/* fusebox::conv_padding_backward(grad, input, weight, bias?, stride, str
 * padding, dilation, groups) -> (grad_input, grad_weight, grad_bias): the
 * gradients of conv{1,2,3}d.padding: those of the convolution of the
 * (padded, for an uneven "same") input, grad_input cropped back to the
 * input's sizes. */
fbx_status *fbx_k_fbx_conv_padding_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t[4], *xp = NULL; /* grad, input, weight, bias */
  conv_params cp;
  int64_t extra[3];
  FBX_TRY(conv_tensors(ctx, args, 4, t));
  int nsp = t[2]->ndim - 2;
  if (nsp < 1 || nsp > 3) return fbx_kernel_error(ctx, "expected a 3D, 4D or 5D weight, got %dD", t[2]->ndim);
  FBX_TRY(padding_mode(ctx, args + 1, nsp, &cp, t[2], extra));
  if (any_extra(extra)) {
    if (t[1]->ndim != nsp + 2 && t[1]->ndim != nsp + 1)
      return fbx_kernel_error(ctx, "expected a %dD (unbatched) or %dD (batched) input, got %dD", nsp + 1, nsp + 2,
                              t[1]->ndim);
    FBX_TRY(pad_end(ctx, &xp, t[1], nsp, extra, 1));
  }
  fbx_status *st = conv_backward_run(ctx, t[0], xp ? xp : t[1], t[2], t[3], nsp, &cp, false, outs);
  if (!st && xp) { /* grad_input of the padded input, cropped */
    fbx_tensor *gi = NULL;
    st = pad_end(ctx, &gi, outs[0].u.t, nsp, extra, -1);
    if (!st) {
      fbx_iv_release(&outs[0]);
      outs[0] = fbx_iv_tensor(gi);
    } else {
      for (int k = 0; k < 3; k++) fbx_iv_release(&outs[k]);
    }
  }
  fbx_tensor_release(xp);
  return st;
}

/* fusebox::convolution_backward(grad, input, weight, bias?, stride,
 * padding, dilation, transposed, output_padding, groups) -> (grad_input,
 * grad_weight, grad_bias): aten::convolution's gradients, either kind, and
 * so those of conv_transpose1d/2d/3d (unbatched inputs too). Transposed:
 * grad_input is the forward convolution of grad by the weight,
 * grad_weight the convolution's weight gradient with grad as its input and
 * input as its output's gradient, grad_bias grad summed per channel. */
fbx_status *fbx_k_fbx_convolution_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return backward_common(ctx, args, outs, 7, 8, 9);
}

/* conv{1,2,3}d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) and
 * conv_transpose{1,2,3}d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) */
#define CONV_KERNEL_(name, nsp, transposed)                                \
  fbx_status *name(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {    \
    return conv_named(ctx, args, outs, nsp, transposed);                   \
  }
CONV_KERNEL_(fbx_k_conv1d, 1, false)
CONV_KERNEL_(fbx_k_conv2d, 2, false)
CONV_KERNEL_(fbx_k_conv3d, 3, false)
fbx_status *fbx_k_conv1d_padding(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return conv_named_padding(ctx, args, outs, 1);
}
fbx_status *fbx_k_conv2d_padding(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return conv_named_padding(ctx, args, outs, 2);
}
fbx_status *fbx_k_conv3d_padding(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return conv_named_padding(ctx, args, outs, 3);
}
CONV_KERNEL_(fbx_k_conv_transpose1d, 1, true)
CONV_KERNEL_(fbx_k_conv_transpose2d, 2, true)
CONV_KERNEL_(fbx_k_conv_transpose3d, 3, true)

/* ---- im2col / col2im (F.unfold / F.fold), rows of list_extra.h ------------------------------- */

/* kernel_size, dilation, padding, stride at args[first ..] into g (checks as PyTorch's). */
static fbx_status *fold_params(fbx_kctx *ctx, fbx_ivalue *args, int first, conv_geom *g) {
  int64_t k[2], d[2], p[2], s[2];
  FBX_TRY(int_params(ctx, first, &args[first], 2, k, 1, "kernel size"));
  FBX_TRY(int_params(ctx, first + 1, &args[first + 1], 2, d, 1, "dilation"));
  FBX_TRY(int_params(ctx, first + 2, &args[first + 2], 2, p, 0, "padding"));
  FBX_TRY(int_params(ctx, first + 3, &args[first + 3], 2, s, 1, "stride"));
  g->kH = k[0], g->kW = k[1], g->dH = d[0], g->dW = d[1], g->pH = p[0], g->pW = p[1], g->sH = s[0], g->sW = s[1];
  g->kD = 1, g->dD = 1, g->pD = 0, g->sD = 1, g->D = 1, g->Do = 1; /* the 2-D loops of a 3-D geometry */
  g->G = 1;
  return NULL;
}

/* The number of sliding blocks along one dim (at least one, as PyTorch requires). */
static int64_t fold_blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s) {
  int64_t span = n + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

/* x contiguous in the working dtype (float32 for float16/bfloat16). */
static fbx_status *fold_input(fbx_kctx *ctx, fbx_tensor *x, const char *name, fbx_tensor **xc, bool *f64) {
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "\"%s_out_cpu\" not implemented for '%s'", name, fbx_dtype_torch_name(x->dtype));
  *f64 = x->dtype == FBX_DTYPE_FLOAT64;
  fbx_dtype work = *f64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  return work == x->dtype ? fbx_tensor_contiguous(xc, x) : fbx_tensor_clone_as(xc, x, work);
}

/* The working result r (float32/float64) as the output in x's dtype. */
static fbx_status *fold_finish(fbx_tensor *r, fbx_dtype dt, fbx_ivalue *outs) {
  fbx_tensor *out = NULL;
  if (r->dtype != dt) {
    fbx_status *st = fbx_tensor_clone_as(&out, r, dt);
    fbx_tensor_release(r);
    if (st) return st;
  } else {
    out = r;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* aten::im2col(self, kernel_size, dilation, padding, stride): [N, C, H, W]
 * (or [C, H, W]) -> [N, C * kH * kW, L] (or [C * kH * kW, L]), row
 * (c, ki, kj) holding the input under tap (ki, kj) of channel c at each of
 * the L = Ho * Wo block positions, zeros in the padding. */
fbx_status *fbx_k_im2col(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *xc = NULL, *y = NULL;
  conv_geom g;
  bool f64;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fold_params(ctx, args, 1, &g));
  if (x->ndim != 3 && x->ndim != 4)
    return fbx_kernel_error(ctx, "Expected 3D or 4D (batch mode) tensor for input, but got %d dims", x->ndim);
  bool batched = x->ndim == 4;
  g.N = batched ? x->sizes[0] : 1, g.C = x->sizes[x->ndim - 3];
  g.H = x->sizes[x->ndim - 2], g.W = x->sizes[x->ndim - 1];
  if (g.C == 0 || g.H == 0 || g.W == 0)
    return fbx_kernel_error(ctx, "Expected non-zero channel and spatial dims for input (only the batch may be 0)");
  g.Ho = fold_blocks(g.H, g.kH, g.dH, g.pH, g.sH), g.Wo = fold_blocks(g.W, g.kW, g.dW, g.pW, g.sW);
  if (g.Ho < 1 || g.Wo < 1)
    return fbx_kernel_error(ctx, "Given input with spatial size (%" PRId64 ", %" PRId64 "), kernel_size=(%" PRId64
                                 ", %" PRId64 "), dilation=(%" PRId64 ", %" PRId64 "), padding=(%" PRId64 ", %" PRId64
                                 "), calculated shape of the array of sliding blocks as (%" PRId64 ", %" PRId64
                                 "), but its components must be at least one.",
                            g.H, g.W, g.kH, g.kW, g.dH, g.dW, g.pH, g.pW, g.Ho, g.Wo);
  int64_t rows, L;
  FBX_TRY(fbx_size_mul(ctx, g.C, g.kH * g.kW, &rows, "im2col"));
  FBX_TRY(fbx_size_mul(ctx, g.Ho, g.Wo, &L, "im2col"));
  FBX_TRY(fold_input(ctx, x, "im2col", &xc, &f64));
  int64_t osz[3] = {g.N, rows, L};
  fbx_status *st = fbx_tensor_empty(&y, xc->dtype, batched ? 3 : 2, batched ? osz : osz + 1);
  if (!st) {
    size_t es = fbx_dtype_size(xc->dtype);
    for (int64_t n = 0; n < g.N; n++) {
      col_job j = {.g = &g, .x = (const char *)xc->data + (size_t)(n * g.C * g.H * g.W) * es,
                   .cols = (char *)y->data + (size_t)(n * rows * L) * es, .f64 = f64};
      fbx_parallel_for(rows, L >= 4096 ? 1 : 4096 / L + 1, im2col_body, &j);
    }
  }
  fbx_tensor_release(xc);
  if (st) return st;
  return fold_finish(y, x->dtype, outs);
}

/* aten::col2im(self, output_size, kernel_size, dilation, padding, stride):
 * the adjoint of im2col, [N, C * kH * kW, L] (or 2-D) -> [N, C, H, W] (or
 * [C, H, W]) with (H, W) = output_size, each column entry added into the
 * position it was read from. */
fbx_status *fbx_k_col2im(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *xc = NULL, *y = NULL;
  conv_geom g;
  bool f64;
  int64_t os[2];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(int_params(ctx, 1, &args[1], 2, os, 1, "output size"));
  FBX_TRY(fold_params(ctx, args, 2, &g));
  if (x->ndim != 2 && x->ndim != 3)
    return fbx_kernel_error(ctx, "Expected 2D or 3D (batch mode) tensor for input, but got %d dims", x->ndim);
  bool batched = x->ndim == 3;
  int64_t rows = x->sizes[x->ndim - 2], L = x->sizes[x->ndim - 1], taps = g.kH * g.kW;
  if (rows == 0 || L == 0) return fbx_kernel_error(ctx, "Expected non-zero dims for input (only the batch may be 0)");
  if (rows % taps)
    return fbx_kernel_error(ctx, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                                 "but got input.size(1)=%" PRId64 " and kernel_size=(%" PRId64 ", %" PRId64 ").",
                            rows, g.kH, g.kW);
  g.N = batched ? x->sizes[0] : 1, g.C = rows / taps, g.H = os[0], g.W = os[1];
  g.Ho = fold_blocks(g.H, g.kH, g.dH, g.pH, g.sH), g.Wo = fold_blocks(g.W, g.kW, g.dW, g.pW, g.sW);
  if (g.Ho < 1 || g.Wo < 1 || g.Ho * g.Wo != L)
    return fbx_kernel_error(ctx, "Given output_size=(%" PRId64 ", %" PRId64 "), kernel_size=(%" PRId64 ", %" PRId64
                                 "), dilation=(%" PRId64 ", %" PRId64 "), padding=(%" PRId64 ", %" PRId64
                                 "), stride=(%" PRId64 ", %" PRId64 "), expected size of input's dimension 2 to match "
                                 "the calculated number of sliding blocks %" PRId64 " * %" PRId64 " = %" PRId64
                                 ", but got input.size(2)=%" PRId64 ".",
                            g.H, g.W, g.kH, g.kW, g.dH, g.dW, g.pH, g.pW, g.sH, g.sW, g.Ho, g.Wo, g.Ho * g.Wo, L);
  FBX_TRY(fold_input(ctx, x, "col2im", &xc, &f64));
  int64_t osz[4] = {g.N, g.C, g.H, g.W};
  fbx_status *st = fbx_tensor_zeros(&y, xc->dtype, batched ? 4 : 3, batched ? osz : osz + 1);
  if (!st) {
    size_t es = fbx_dtype_size(xc->dtype);
    for (int64_t n = 0; n < g.N; n++) {
      col2im_job j = {.g = &g, .x_out = (char *)y->data + (size_t)(n * g.C * g.H * g.W) * es,
                      .cols = (const char *)xc->data + (size_t)(n * rows * L) * es, .f64 = f64};
      fbx_parallel_for(g.C, 1, col2im_body, &j);
    }
  }
  fbx_tensor_release(xc);
  if (st) return st;
  return fold_finish(y, x->dtype, outs);
}
