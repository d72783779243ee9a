/* Upsampling and pixel shuffle kernels (rows in ops/list_nn.h).
 *
 * One kernel runs every aten::upsample_{nearest1d,nearest2d,nearest3d,
 * linear1d,bilinear2d,trilinear3d,bicubic2d} row, every
 * aten::_upsample_nearest_exact{1,2,3}d row (F.interpolate's
 * mode="nearest-exact") and their _backward: the
 * op's name gives the mode and the number of spatial dims S, the overload
 * how the sizes come (.vec: output_size or scale_factors, exactly one;
 * otherwise output_size and one optional scale per dim). The input is
 * [N, C, *spatial] with exactly S spatial dims, every spatial size and C
 * non-zero (N may be 0). .vec's output size from scale factors is
 * int64(double(in) * scale), as PyTorch's compute_output_size.
 *
 * Each spatial dim gets a table of taps, (input index, weight) per output
 * index, computed as PyTorch 1.13's CPU kernels compute them, in the
 * kernel's precision: double for float64, float for the others. The scale
 * s = 1 / scale when a positive scale is given, else in / out
 * (align_corners: (in - 1) / (out - 1), 0 when out is 1); for bfloat16 s
 * is rounded to bfloat16 (its operands too), as the CPU kernel keeps it in
 * the input's type:
 *   nearest   floor(float(s * o)), at most in - 1 (float16, which PyTorch
 *             1.13's CPU refuses, takes float32's rules, as its CUDA
 *             kernels do); nearest-exact floor(float((o + 0.5) * s)), the
 *             product in double (measured against torch 1.13 over every
 *             input size 1..29, output 1..69 and five scale factors;
 *             float16 and bfloat16, which 1.13's CPU kernel refuses for
 *             nearest-exact, take float32's rules);
 *   linear    r = s * o (align_corners) or max(s * (o + 0.5) - 0.5, 0);
 *             taps int64(r) and the next (the last index repeats), weights
 *             1 - l and l = r - int64(r); an output the size of the input
 *             copies it. bfloat16 rounds l, then 1 - l, to bfloat16;
 *   cubic     r as linear without the clamp at 0; taps floor(r) - 1 ..
 *             floor(r) + 2 clamped to [0, in - 1], Keys' cubic convolution
 *             weights with A = -0.75 at t = r - floor(r) (bfloat16: every
 *             operation of the polynomials rounded to bfloat16).
 * The forward sums the taps in double, innermost dim first, and rounds once
 * to float32 or float64 (float16 and bfloat16 are read and written through
 * float32): float32 results differ from PyTorch's float32 arithmetic (which
 * its AVX2 build contracts into FMAs) by rounding only. Nearest copies
 * elements instead (any dtype it takes, uint8 too, as PyTorch). Rows of the
 * output are spread over fbx_parallel_for.
 * The backward ops scatter grad_output along the same taps into [N, C,
 * *input_size] (in double, one (n, c) plane per task), except nearest's,
 * whose indices are PyTorch's backward kernel's own: the copy when out ==
 * in, o / 2 when out == 2 * in, else floor(float(o) * float(s)) for every
 * dtype. Where that differs from the forward's index (a scale of 1.1 that
 * keeps a size of 5), PyTorch's gradient is not the forward's transpose,
 * and neither is fusebox's.
 *
 * pixel_shuffle(self [*, C r^2, H, W], r) -> [*, C, H r, W r] and
 * pixel_unshuffle, its inverse: a strided copy, any dtype. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/cubic.h"
#include "ops/kutil.h"
#include "ops/reduce.h"
#include "tensor/half.h"

enum { UPS_NEAREST, UPS_LINEAR, UPS_CUBIC };
enum { PREC_F32, PREC_F64, PREC_BF16 };

/* One upsample call, its spatial dims padded to 3 (D, H, W) with size-1
 * dims in front. */
typedef struct ups_call {
  int mode, nsp;   /* UPS_*; spatial dims 1..3 */
  bool bwd, align;
  bool exact;      /* nearest-exact (the _upsample_nearest_exact rows) */
  int prec;        /* PREC_*: the precision of scales and weights */
  int64_t N, C, P; /* P = N * C planes */
  int64_t in_numel, out_numel;
  int64_t in[3], out[3];
  double scale[3]; /* the given scale per dim; <= 0 or NaN: none */
} ups_call;

/* The taps of one dim: n per output index. */
typedef struct ups_taps {
  int n;
  int64_t *idx;
  double *w;
} ups_taps;

static float bf16_round(float v) { return fbx_bf16_to_float(fbx_float_to_bf16(v)); }


/* PyTorch's area_pixel_compute_scale in the kernel's scalar type: double,
 * float, or for bfloat16 every operand and the quotient rounded to bfloat16
 * (the CPU kernel keeps the scale in the input's type). */
static double ups_scale(int prec, int64_t in, int64_t out, bool align, double sc) {
  if (align && out <= 1) return 0;
  if (!align && sc > 0) return prec == PREC_F64 ? 1.0 / sc : prec == PREC_F32 ? (float)(1.0 / sc) : bf16_round((float)(1.0 / sc));
  int64_t a = align ? in - 1 : in, b = align ? out - 1 : out;
  if (prec == PREC_F64) return (double)a / (double)b;
  if (prec == PREC_F32) return (float)a / (float)b;
  return bf16_round(bf16_round((float)a) / bf16_round((float)b));
}

/* Keys' weights at t as the bfloat16 kernel computes them: t and the
 * result of every operation rounded to bfloat16 (up to 0.05 from the exact
 * weights; PyTorch 1.13's CPU bicubic in bfloat16 is that coarse). */
static void cubic_weights_bf16(float t, double w[4]) {
#define R_ bf16_round
#define C1_(x) R_(R_(R_(R_(R_(1.25f * (x)) - 2.25f) * (x)) * (x)) + 1)
#define C2_(x) R_(R_(R_(R_(R_(R_(-0.75f * (x)) + 3.75f) * (x)) - 6) * (x)) + 3)
  float x1 = R_(t), x2 = R_(1 - x1);
  w[0] = C2_(R_(x1 + 1)), w[1] = C1_(x1), w[2] = C1_(x2), w[3] = C2_(R_(x2 + 1));
#undef C1_
#undef C2_
#undef R_
}

/* The linear and cubic taps of one dim in precision T (float or double),
 * from the scale s; bf16: the bfloat16 kernel's weights (linear: l, then
 * 1 - l, rounded to bfloat16; cubic: cubic_weights_bf16). */
#define UPS_TAPS_FNS_(T, sfx)                                                                           \
  static T source_##sfx(T s, int64_t o, bool align) {                                                  \
    return align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                                            \
  }                                                                                                     \
  static void linear_taps_##sfx(int64_t in, int64_t out, bool align, T s, bool bf16, ups_taps *t) {     \
    for (int64_t o = 0; o < out; o++) {                                                                 \
      int64_t i0 = o;                                                                                   \
      T l1 = 0;                                                                                         \
      if (out != in) {                                                                                  \
        T r = source_##sfx(s, o, align);                                                                \
        if (r < 0) r = 0;                                                                               \
        i0 = (int64_t)r;                                                                                \
        if (i0 > in - 1) i0 = in - 1; /* only for scales that disagree with the sizes */                \
        l1 = r - (T)i0;                                                                                 \
      }                                                                                                 \
      T l0 = 1 - l1;                                                                                    \
      if (bf16) l1 = (T)bf16_round((float)l1), l0 = (T)bf16_round((float)(1 - l1));                     \
      t->idx[2 * o] = i0, t->idx[2 * o + 1] = i0 + (i0 < in - 1);                                       \
      t->w[2 * o] = (double)l0, t->w[2 * o + 1] = (double)l1;                                           \
    }                                                                                                   \
  }                                                                                                     \
  static void cubic_taps_##sfx(int64_t in, int64_t out, bool align, T s, bool bf16, ups_taps *t) {      \
    const T A = (T)-0.75;                                                                               \
    for (int64_t o = 0; o < out; o++) {                                                                 \
      T r = source_##sfx(s, o, align);                                                                  \
      int64_t i0 = (int64_t)floorf((float)r);                                                           \
      T x1 = r - (T)i0, x2 = 1 - x1;                                                                    \
      double w[4] = {FBX_CUBIC2(A, x1 + 1), FBX_CUBIC1(A, x1), FBX_CUBIC1(A, x2), FBX_CUBIC2(A, x2 + 1)}; \
      if (bf16) cubic_weights_bf16((float)x1, w);                                                       \
      for (int k = 0; k < 4; k++) {                                                                     \
        int64_t i = i0 - 1 + k;                                                                         \
        t->idx[4 * o + k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;                                        \
        t->w[4 * o + k] = w[k];                                                                         \
      }                                                                                                 \
    }                                                                                                   \
  }
UPS_TAPS_FNS_(float, f)
UPS_TAPS_FNS_(double, d)
#undef UPS_TAPS_FNS_

/* The forward nearest index table (HelperInterpNearest of the CPU kernel):
 * s * o in the kernel's precision, then floorf. nearest-exact
 * (HelperInterpNearestExact): (o + 0.5) * s in double, s in the kernel's
 * precision (float32 for every dtype but float64), then floorf. */
static void nearest_taps(int prec, bool exact, int64_t in, int64_t out, double sc, ups_taps *t) {
  double s = ups_scale(prec, in, out, false, sc);
  for (int64_t o = 0; o < out; o++) {
    int64_t i = exact ? (int64_t)floorf((float)(((double)o + 0.5) * (prec == PREC_F64 ? s : (double)(float)s)))
                : prec == PREC_F64 ? (int64_t)floorf((float)(s * (double)o))
                                   : (int64_t)floorf((float)o * (float)s);
    t->idx[o] = i > in - 1 ? in - 1 : i;
    t->w[o] = 1;
  }
}

/* The backward nearest index table (nearest_idx of PyTorch's UpSample.h;
 * nearest_exact_idx: (o + 0.5) * float(s) in double, floorf, for every
 * dtype, no special cases). */
static void nearest_bwd_taps(bool exact, int64_t in, int64_t out, double sc, ups_taps *t) {
  float s = (float)ups_scale(PREC_F32, in, out, false, sc);
  for (int64_t o = 0; o < out; o++) {
    int64_t i = exact             ? (int64_t)floorf((float)(((double)o + 0.5) * (double)s))
                : out == in       ? o
                : out == 2 * in   ? o >> 1
                                  : (int64_t)floorf((float)o * s);
    t->idx[o] = i > in - 1 ? in - 1 : i;
    t->w[o] = 1;
  }
}

/* Tap tables for the three dims (fbx_malloc'd in one block: free tp[0].idx). */
static fbx_status *make_taps(const ups_call *u, ups_taps tp[3]) {
  int n = u->mode == UPS_NEAREST ? 1 : u->mode == UPS_LINEAR ? 2 : 4;
  int64_t total = 0;
  for (int d = 0; d < 3; d++) {
    tp[d].n = d < 3 - u->nsp ? 1 : n;
    total += u->out[d] * tp[d].n;
  }
  int64_t *idx = fbx_malloc((size_t)total * (sizeof(int64_t) + sizeof(double)));
  if (!idx) return fbx_status_nomem();
  double *w = (double *)(idx + total);
  bool bf16 = u->prec == PREC_BF16;
  for (int d = 0; d < 3; d++) {
    ups_taps *t = &tp[d];
    t->idx = idx, t->w = w;
    idx += u->out[d] * t->n, w += u->out[d] * t->n;
    double sc = d < 3 - u->nsp ? 0 : u->scale[d];
    if (d < 3 - u->nsp) { /* a padding dim of size 1 */
      t->idx[0] = 0, t->w[0] = 1;
    } else if (u->mode == UPS_NEAREST) {
      if (u->bwd) nearest_bwd_taps(u->exact, u->in[d], u->out[d], sc, t);
      else nearest_taps(u->prec, u->exact, u->in[d], u->out[d], sc, t);
    } else {
      double s = ups_scale(u->prec, u->in[d], u->out[d], u->align, sc);
      bool lin = u->mode == UPS_LINEAR;
      if (u->prec == PREC_F64) (lin ? linear_taps_d : cubic_taps_d)(u->in[d], u->out[d], u->align, s, false, t);
      else (lin ? linear_taps_f : cubic_taps_f)(u->in[d], u->out[d], u->align, (float)s, bf16, t);
    }
  }
  return NULL;
}

/* ---- arguments ---------------------------------------------------------------------------------- */

static fbx_status *float_opt(const fbx_kctx *ctx, const fbx_ivalue *v, const char *what, double *out) {
  *out = NAN;
  if (v->kind == FBX_IV_NONE) return NULL;
  if (!fbx_iv_is_scalar(v)) return fbx_kernel_error(ctx, "%s must be a float or None", what);
  *out = fbx_iv_to_double(v);
  return NULL;
}

/* What an upsample row's name and arguments ask for; *t is args[0]. */
static fbx_status *ups_parse(const fbx_kctx *ctx, const fbx_ivalue *args, ups_call *u, fbx_tensor **t) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  name += (*name == '_') + strlen("upsample_"); /* _upsample_nearest_exact2d */
  bool vec = !strcmp(ctx->op->schema.overload, "vec");
  memset(u, 0, sizeof *u);
  u->mode = !strncmp(name, "nearest", 7) ? UPS_NEAREST : strstr(name, "cubic") ? UPS_CUBIC : UPS_LINEAR;
  u->exact = !strncmp(name, "nearest_exact", 13);
  u->nsp = (int)(strchr(name, 'd')[-1] - '0');
  u->bwd = strstr(name, "_backward") != NULL;
  int nsp = u->nsp, pad = 3 - nsp, nfull = nsp + 2;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, t));
  int64_t full[FBX_MAX_DIMS], v[FBX_MAX_DIMS];
  int a = 2;
  fbx_status *st = NULL;
  if (u->bwd) {
    int n = fbx_arg_int_list(ctx->op, 2, &args[2], full, FBX_MAX_DIMS, &st);
    if (st) return st;
    if (n != nfull) return fbx_kernel_error(ctx, "It is expected input_size equals to %d, but got size %d", nfull, n);
    a = 3;
  } else {
    if ((*t)->ndim != nfull)
      return fbx_kernel_error(ctx, "It is expected input_size equals to %d, but got size %d (a %d-D input; "
                                   "expected [N, C%s])", nfull, (*t)->ndim, (*t)->ndim,
                              nsp == 1 ? ", W" : nsp == 2 ? ", H, W" : ", D, H, W");
    memcpy(full, (*t)->sizes, sizeof(int64_t) * (size_t)nfull);
  }
  if (u->mode != UPS_NEAREST) {
    if (args[a].kind != FBX_IV_BOOL && args[a].kind != FBX_IV_INT)
      return fbx_kernel_error(ctx, "align_corners must be a bool");
    u->align = fbx_iv_to_int(&args[a++]) != 0;
  }
  u->N = full[0], u->C = full[1];
  for (int d = 0; d < 3; d++) u->in[d] = u->out[d] = 1, u->scale[d] = NAN;
  for (int d = 0; d < nsp; d++) u->in[pad + d] = full[2 + d];
  /* the scales */
  bool have_scales = false;
  if (vec) {
    const fbx_ivalue *sf = &args[a];
    if (sf->kind == FBX_IV_LIST) {
      if (fbx_iv_list_len(sf) != nsp)
        return fbx_kernel_error(ctx, "scale_factors has %d values for %d spatial dims", fbx_iv_list_len(sf), nsp);
      for (int d = 0; d < nsp; d++) FBX_TRY(float_opt(ctx, fbx_iv_list_at(sf, d), "a scale factor", &u->scale[pad + d]));
      have_scales = true;
    } else if (sf->kind != FBX_IV_NONE) {
      return fbx_kernel_error(ctx, "scale_factors must be a list of floats or None");
    }
  } else {
    static const char *const names[3][3] = {{"scales"}, {"scales_h", "scales_w"}, {"scales_d", "scales_h", "scales_w"}};
    for (int d = 0; d < nsp; d++) FBX_TRY(float_opt(ctx, &args[a + d], names[nsp - 1][d], &u->scale[pad + d]));
  }
  /* the output size */
  if (args[1].kind == FBX_IV_NONE && !vec) return fbx_kernel_error(ctx, "output_size must be given");
  if (args[1].kind != FBX_IV_NONE) {
    if (vec && have_scales) return fbx_kernel_error(ctx, "Must specify exactly one of output_size and scale_factors");
    int n = fbx_arg_int_list(ctx->op, 1, &args[1], v, FBX_MAX_DIMS, &st);
    if (st) return st;
    if (n != nsp) return fbx_kernel_error(ctx, "It is expected output_size equals to %d, but got size %d", nsp, n);
    for (int d = 0; d < nsp; d++) u->out[pad + d] = v[d];
  } else if (!have_scales) {
    return fbx_kernel_error(ctx, "Must specify exactly one of output_size and scale_factors");
  } else {
    for (int d = 0; d < nsp; d++) {
      double o = (double)u->in[pad + d] * u->scale[pad + d];
      if (!(fabs(o) < 9.2e18)) return fbx_kernel_error(ctx, "scale factor %g gives no valid output size", u->scale[pad + d]);
      u->out[pad + d] = (int64_t)o;
    }
  }
  bool pos = true;
  for (int d = pad; d < 3; d++) pos = pos && u->in[d] > 0 && u->out[d] > 0;
  if (!pos) {
    char a1[128], b1[128];
    fbx_red_shape_str(a1, sizeof a1, nsp, u->in + pad);
    fbx_red_shape_str(b1, sizeof b1, nsp, u->out + pad);
    return fbx_kernel_error(ctx, "Input and output sizes should be greater than 0, but got input %s and output %s", a1,
                            b1);
  }
  if (u->N < 0 || u->C <= 0)
    return fbx_kernel_error(ctx, "Non-empty %dD data tensor expected but got one with %lld channels", nfull,
                            (long long)u->C);
  FBX_TRY(fbx_size_mul(ctx, u->N, u->C, &u->P, "upsample"));
  u->in_numel = u->out_numel = u->P;
  for (int d = pad; d < 3; d++) {
    FBX_TRY(fbx_size_mul(ctx, u->in_numel, u->in[d], &u->in_numel, "upsample input"));
    FBX_TRY(fbx_size_mul(ctx, u->out_numel, u->out[d], &u->out_numel, "upsample output"));
  }
  /* dtypes: floating point (float16 computed in float32); nearest's forward also uint8 */
  fbx_dtype dt = (*t)->dtype;
  if (!fbx_dtype_is_floating(dt) && !(dt == FBX_DTYPE_UINT8 && u->mode == UPS_NEAREST && !u->bwd))
    return fbx_kernel_error(ctx, "not implemented for %s input", fbx_dtype_name(dt));
  u->prec = dt == FBX_DTYPE_FLOAT64 ? PREC_F64 : dt == FBX_DTYPE_BFLOAT16 ? PREC_BF16 : PREC_F32;
  if (u->bwd) { /* grad_output must be [N, C, *output] */
    int64_t want[5] = {u->N, u->C};
    for (int d = 0; d < nsp; d++) want[2 + d] = u->out[pad + d];
    bool ok = (*t)->ndim == nfull;
    for (int d = 0; ok && d < nfull; d++) ok = (*t)->sizes[d] == want[d];
    if (!ok) {
      char a1[256], b1[256];
      fbx_red_shape_str(a1, sizeof a1, (*t)->ndim, (*t)->sizes);
      fbx_red_shape_str(b1, sizeof b1, nfull, want);
      return fbx_kernel_error(ctx, "grad_output has shape %s, expected %s", a1, b1);
    }
  }
  return NULL;
}

/* ---- forward ------------------------------------------------------------------------------------ */

typedef struct ups_job {
  const ups_call *u;
  const ups_taps *tp;
  const void *x;
  void *y;
  int esize; /* the element size of x and y */
  const double *xd; /* backward: grad_output and grad_input in double */
  double *yd;
} ups_job;

/* Row r of the output (over P * OD * OH rows) as (plane, od, oh). */
#define UPS_ROW_(u, r, p, od, oh)                        \
  int64_t oh = (r) % (u)->out[1];                        \
  int64_t od = ((r) / (u)->out[1]) % (u)->out[0];        \
  int64_t p = (r) / ((u)->out[1] * (u)->out[0])

#define UPS_GATHER_(T)                                                                                  \
  do {                                                                                                  \
    const T *x = j->x;                                                                                  \
    T *y = j->y;                                                                                        \
    for (int64_t r = begin; r < end; r++) {                                                             \
      UPS_ROW_(u, r, p, od, oh);                                                                        \
      const T *row = x + ((p * u->in[0] + tp[0].idx[od]) * u->in[1] + tp[1].idx[oh]) * u->in[2];       \
      T *yr = y + r * u->out[2];                                                                        \
      for (int64_t ow = 0; ow < u->out[2]; ow++) yr[ow] = row[iw[ow]];                                  \
    }                                                                                                   \
  } while (0)

static void nearest_rows(void *jv, int64_t begin, int64_t end) {
  const ups_job *j = jv;
  const ups_call *u = j->u;
  const ups_taps *tp = j->tp;
  const int64_t *iw = tp[2].idx;
  switch (j->esize) {
    case 1: UPS_GATHER_(uint8_t); break;
    case 2: UPS_GATHER_(uint16_t); break;
    case 4: UPS_GATHER_(uint32_t); break;
    default: UPS_GATHER_(uint64_t); break;
  }
}

/* Linear and cubic rows: each output the sum over its taps, in double. */
#define UPS_INTERP_(T)                                                                                  \
  do {                                                                                                  \
    const T *x = j->x;                                                                                  \
    T *y = j->y;                                                                                        \
    for (int64_t r = begin; r < end; r++) {                                                             \
      UPS_ROW_(u, r, p, od, oh);                                                                        \
      T *yr = y + r * u->out[2];                                                                        \
      for (int64_t ow = 0; ow < u->out[2]; ow++) {                                                      \
        const int64_t *iw = tp[2].idx + ow * nw;                                                        \
        const double *ww = tp[2].w + ow * nw;                                                           \
        double acc = 0;                                                                                 \
        for (int a = 0; a < nd; a++) {                                                                  \
          double sd = 0;                                                                                \
          for (int b = 0; b < nh; b++) {                                                                \
            const T *row = x + ((p * u->in[0] + tp[0].idx[od * nd + a]) * u->in[1] +                    \
                                tp[1].idx[oh * nh + b]) * u->in[2];                                     \
            double s = 0;                                                                               \
            for (int c = 0; c < nw; c++) s += (double)row[iw[c]] * ww[c];                               \
            sd += s * tp[1].w[oh * nh + b];                                                             \
          }                                                                                             \
          acc += sd * tp[0].w[od * nd + a];                                                             \
        }                                                                                               \
        yr[ow] = (T)acc;                                                                                \
      }                                                                                                 \
    }                                                                                                   \
  } while (0)

static void interp_rows(void *jv, int64_t begin, int64_t end) {
  const ups_job *j = jv;
  const ups_call *u = j->u;
  const ups_taps *tp = j->tp;
  int nd = tp[0].n, nh = tp[1].n, nw = tp[2].n;
  if (j->esize == 8) UPS_INTERP_(double);
  else UPS_INTERP_(float);
}

/* ---- backward ----------------------------------------------------------------------------------- */

static void scatter_planes(void *jv, int64_t begin, int64_t end) {
  const ups_job *j = jv;
  const ups_call *u = j->u;
  const ups_taps *tp = j->tp;
  int nd = tp[0].n, nh = tp[1].n, nw = tp[2].n;
  int64_t in_plane = u->in[0] * u->in[1] * u->in[2], out_plane = u->out[0] * u->out[1] * u->out[2];
  for (int64_t p = begin; p < end; p++) {
    double *gi = j->yd + p * in_plane;
    const double *go = j->xd + p * out_plane;
    for (int64_t od = 0; od < u->out[0]; od++)
      for (int64_t oh = 0; oh < u->out[1]; oh++)
        for (int64_t ow = 0; ow < u->out[2]; ow++) {
          double g = go[(od * u->out[1] + oh) * u->out[2] + ow];
          for (int a = 0; a < nd; a++)
            for (int b = 0; b < nh; b++) {
              double gab = g * tp[0].w[od * nd + a] * tp[1].w[oh * nh + b];
              double *row = gi + (tp[0].idx[od * nd + a] * u->in[1] + tp[1].idx[oh * nh + b]) * u->in[2];
              for (int c = 0; c < nw; c++) row[tp[2].idx[ow * nw + c]] += gab * tp[2].w[ow * nw + c];
            }
        }
  }
}

/* Every aten::upsample_* row and its _backward (see the top of the file). */
fbx_status *fbx_k_upsample(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  ups_call u;
  fbx_tensor *t, *c = NULL, *y = NULL;
  FBX_TRY(ups_parse(ctx, args, &u, &t));
  int pad = 3 - u.nsp, nfull = u.nsp + 2;
  int64_t sizes[5] = {u.N, u.C};
  const int64_t *sp = u.bwd ? u.in : u.out;
  for (int d = 0; d < u.nsp; d++) sizes[2 + d] = sp[pad + d];
  ups_taps tp[3];
  FBX_TRY(make_taps(&u, tp));
  double *xd = NULL, *yd = NULL;
  fbx_status *st = NULL;
  ups_job j = {.u = &u, .tp = tp};
  int64_t rows = u.P * u.out[0] * u.out[1], grain = 1 + 32768 / (u.out[2] * tp[2].n * tp[1].n * tp[0].n);
  if (u.mode == UPS_NEAREST && !u.bwd) { /* a gather in the input's own dtype */
    if ((st = fbx_tensor_contiguous(&c, t)) || (st = fbx_tensor_empty(&y, t->dtype, nfull, sizes))) goto done;
    j.x = c->data, j.y = y->data, j.esize = (int)fbx_tensor_elem_size(t);
    fbx_parallel_for(rows, grain, nearest_rows, &j);
    fbx_set_out_tensor(outs, 0, y);
    y = NULL;
    goto done;
  }
  if (!u.bwd) { /* float32 and float64 in their own type; float16 and bfloat16 through float32 */
    fbx_dtype work = t->dtype == FBX_DTYPE_FLOAT64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
    st = t->dtype == work ? fbx_tensor_contiguous(&c, t) : fbx_tensor_clone_as(&c, t, work);
    if (st || (st = fbx_tensor_empty(&y, work, nfull, sizes))) goto done;
    j.x = c->data, j.y = y->data, j.esize = (int)fbx_tensor_elem_size(c);
    fbx_parallel_for(rows, grain, interp_rows, &j);
    if (work != t->dtype) {
      fbx_tensor *r = NULL;
      if ((st = fbx_tensor_clone_as(&r, y, t->dtype))) goto done;
      fbx_tensor_release(y);
      y = r;
    }
    fbx_set_out_tensor(outs, 0, y);
    y = NULL;
    goto done;
  }
  yd = fbx_calloc((size_t)(u.in_numel ? u.in_numel : 1), sizeof(double));
  if (!yd) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = fbx_red_load_all_f64(&xd, t))) goto done;
  j.xd = xd, j.yd = yd;
  fbx_parallel_for(u.P, 1, scatter_planes, &j);
  if (!(st = fbx_red_store_all_f64(&y, t->dtype, nfull, sizes, yd))) {
    fbx_set_out_tensor(outs, 0, y);
    y = NULL;
  }
done:
  fbx_free(tp[0].idx);
  fbx_free(xd);
  fbx_free(yd);
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}

/* ---- pixel shuffle ------------------------------------------------------------------------------ */

/* pixel_shuffle(self, upscale_factor) and pixel_unshuffle(self,
 * downscale_factor): self's leading dims, flattened to B, then a copy
 * through a 6-D view: shuffle reads [B, C, H, r, W, r] from channel
 * c r^2 + i r + j, row h, column w; unshuffle the reverse. */
fbx_status *fbx_k_pixel_shuffle(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bool shuffle = !strcmp(fbx_sym_unqual(ctx->op->schema.name), "pixel_shuffle");
  const char *name = shuffle ? "pixel_shuffle" : "pixel_unshuffle";
  fbx_tensor *x, *c = NULL, *y = NULL, *vc = NULL, *vs = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "%s expects an int factor", name);
  int64_t r = args[1].u.i;
  if (x->ndim < 3)
    return fbx_kernel_error(ctx, "%s expects input to have at least 3 dimensions, but got input with %d dimension(s)",
                            name, x->ndim);
  if (r <= 0)
    return fbx_kernel_error(ctx, "%s expects a positive %s, but got %lld", name,
                            shuffle ? "upscale_factor" : "downscale_factor", (long long)r);
  int nd = x->ndim;
  int64_t C = x->sizes[nd - 3], H = x->sizes[nd - 2], W = x->sizes[nd - 1], B = 1, rr, Ho, Wo, Co;
  for (int d = 0; d < nd - 3; d++) B *= x->sizes[d];
  FBX_TRY(fbx_size_mul(ctx, r, r, &rr, name));
  int64_t osz[FBX_MAX_DIMS];
  memcpy(osz, x->sizes, sizeof(int64_t) * (size_t)nd);
  if (shuffle) {
    if (C % rr)
      return fbx_kernel_error(ctx, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                   "square of upscale_factor, but input.size(-3)=%lld is not divisible by %lld",
                              (long long)C, (long long)rr);
    FBX_TRY(fbx_size_mul(ctx, H, r, &Ho, name));
    FBX_TRY(fbx_size_mul(ctx, W, r, &Wo, name));
    osz[nd - 3] = C / rr, osz[nd - 2] = Ho, osz[nd - 1] = Wo;
  } else {
    if (H % r)
      return fbx_kernel_error(ctx, "pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                   "input.size(-2)=%lld is not divisible by %lld", (long long)H, (long long)r);
    if (W % r)
      return fbx_kernel_error(ctx, "pixel_unshuffle expects width to be divisible by downscale_factor, but "
                                   "input.size(-1)=%lld is not divisible by %lld", (long long)W, (long long)r);
    FBX_TRY(fbx_size_mul(ctx, C, rr, &Co, name));
    osz[nd - 3] = Co, osz[nd - 2] = H / r, osz[nd - 1] = W / r;
  }
  fbx_status *st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_empty(&y, x->dtype, nd, osz);
  if (st) goto done;
  if (y->numel) {
    /* the spatial side is [B, Cs, Hs, r, Ws, r], the channel side [B, Cs, r, r, Hs, Ws], both contiguous;
     * both are viewed in the spatial side's dim order */
    int64_t Cs = shuffle ? C / rr : C, Hs = shuffle ? H : H / r, Ws = shuffle ? W : W / r;
    int64_t six[6] = {B, Cs, Hs, r, Ws, r}, chs[6];
    fbx_contiguous_strides(6, six, chs);
    int64_t csz[6] = {B, Cs, r, r, Hs, Ws}, cst[6];
    fbx_contiguous_strides(6, csz, cst);
    /* the channel side's strides in the shuffled side's dim order */
    int64_t perm[6] = {cst[0], cst[1], cst[4], cst[2], cst[5], cst[3]};
    fbx_tensor *chan = shuffle ? c : y, *spat = shuffle ? y : c;
    if ((st = fbx_tensor_view(&vc, chan, 6, six, perm, chan->offset)) ||
        (st = fbx_tensor_view(&vs, spat, 6, six, chs, spat->offset)))
      goto done;
    if ((st = shuffle ? fbx_tensor_copy_(vs, vc) : fbx_tensor_copy_(vc, vs))) goto done;
  }
  fbx_set_out_tensor(outs, 0, y);
  y = NULL;
done:
  fbx_tensor_release(vc);
  fbx_tensor_release(vs);
  fbx_tensor_release(c);
  fbx_tensor_release(y);
  return st;
}
