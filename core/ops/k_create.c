/* Kernels for ops/list_create.h (zeros, ones, full, empty, the *_like
 * family, arange, seeded rand/randn) and for aten::clone, which shares the
 * *_like layout rule.
 *
 * Arguments as TorchScript passes them: dtype is a ScalarType code (an int,
 * equal to fbx_dtype) or None; layout must be None or 0 (strided); device
 * and pin_memory are accepted and ignored (the reference runs on the CPU).
 *
 * Layout of *_like and clone results follows PyTorch's preserve_format: a
 * non-overlapping dense input's strides are kept (a transposed input gives
 * a transposed result), anything else gets dense strides in the input's
 * stride order (at::infer_dense_strides).
 *
 * Random numbers: a counter-based generator keyed from ctx->rng_state.
 * Each rand/randn call draws one key with splitmix64 (advancing the state
 * by one step), and element i is the splitmix64 output finalizer applied to
 * key + (i + 1) * golden-ratio increment — the same stream splitmix64 would
 * produce from state `key`, but computable in any order, so large fills run
 * in parallel and stay deterministic. Uniform values use the top 24 bits
 * (float32), 53 (float64), 11 (float16) or 8 (bfloat16): k/2^bits, in
 * [0, 1). Normal values use Box-Muller on pairs of draws, in double. The
 * numbers are deterministic for a seed and node order but are NOT
 * PyTorch's (PyTorch uses mt19937 on the CPU). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kutil.h"
#include "tensor/half.h"

/* c10::MemoryFormat */
enum { MF_CONTIGUOUS = 0, MF_PRESERVE = 1, MF_CHANNELS_LAST = 2, MF_CHANNELS_LAST_3D = 3 };

/* ---- argument helpers ------------------------------------------------------------------ */

/* A ScalarType? argument: None gives `def`. */
static fbx_status *dtype_arg(fbx_kctx *ctx, const fbx_ivalue *v, fbx_dtype def, fbx_dtype *out) {
  if (v->kind == FBX_IV_NONE) {
    *out = def;
    return NULL;
  }
  if (v->kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dtype must be a ScalarType code, got %s", fbx_iv_kind_name(v->kind));
  if (!fbx_dtype_valid((int)v->u.i)) return fbx_kernel_error(ctx, "unsupported dtype code %" PRId64, v->u.i);
  *out = (fbx_dtype)v->u.i;
  return NULL;
}

static fbx_status *layout_arg(fbx_kctx *ctx, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_NONE || (v->kind == FBX_IV_INT && v->u.i == 0)) return NULL;
  return fbx_kernel_error(ctx, "only the strided layout (torch.strided) is supported");
}

static fbx_status *size_arg(fbx_kctx *ctx, fbx_ivalue *args, int i, int64_t *sizes, int *n) {
  fbx_status *st = NULL;
  int k = fbx_arg_int_list(ctx->op, i, &args[i], sizes, FBX_MAX_DIMS, &st);
  if (k < 0) return st;
  for (int j = 0; j < k; j++)
    if (sizes[j] < 0) {
      char buf[256];
      size_t len = 0;
      buf[0] = 0;
      for (int m = 0; m < k && len < sizeof buf; m++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%" PRId64, m ? ", " : "", sizes[m]);
      return fbx_kernel_error(ctx, "Trying to create tensor with negative dimension %" PRId64 ": [%s]", sizes[j], buf);
    }
  *n = k;
  return NULL;
}

/* ---- layouts ----------------------------------------------------------------------------- */

/* c10's compute_non_overlapping_and_dense. */
static bool non_overlapping_and_dense(const fbx_tensor *t) {
  int n = t->ndim;
  if (n == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
  int perm[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = i;
  /* insertion sort: size < 2 dims last, else by stride */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0; j--) {
      int a = perm[j - 1], b = perm[j];
      bool b_first = t->sizes[a] < 2 ? t->sizes[b] >= 2 : (t->sizes[b] >= 2 && t->strides[b] < t->strides[a]);
      if (!b_first) break;
      perm[j - 1] = b;
      perm[j] = a;
    }
  int64_t require = 1;
  for (int i = 0; i < n; i++) {
    int64_t s = t->sizes[perm[i]];
    if (s < 2) return true;
    if (t->strides[perm[i]] != require) return false;
    require *= s;
  }
  return true;
}

/* at::infer_dense_strides: dense strides in the order of t's strides. */
static void infer_dense_strides(const fbx_tensor *t, int64_t *out) {
  int n = t->ndim;
  if (n == 0) return;
  if (n == 1) {
    out[0] = 1;
    return;
  }
  int perm[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
  for (int i = 1; i < n; i++) {
    int dim1 = i;
    for (int j = 1; j <= i; j++) {
      int dim0 = i - j;
      int64_t s0 = t->strides[perm[dim0]], s1 = t->strides[perm[dim1]];
      int cmp = 0;
      if (s0 != 0 && s1 != 0) {
        if (s0 < s1) cmp = -1;
        else if (s0 > s1) cmp = 1;
        else if (t->sizes[perm[dim0]] > t->sizes[perm[dim1]]) cmp = 1;
      }
      if (cmp > 0) {
        int tmp = perm[dim0];
        perm[dim0] = perm[dim1];
        perm[dim1] = tmp;
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  int64_t cur = 1;
  for (int i = 0; i < n; i++) {
    int d = perm[i];
    out[d] = cur;
    if (t->sizes[d] > 1) cur *= t->sizes[d];
  }
}

static fbx_status *memfmt_strides(fbx_kctx *ctx, int ndim, const int64_t *sizes, int64_t mf, int64_t *strides) {
  if (mf == MF_CONTIGUOUS) {
    fbx_contiguous_strides(ndim, sizes, strides);
    return NULL;
  }
  if (mf != MF_CHANNELS_LAST && mf != MF_CHANNELS_LAST_3D) return fbx_kernel_error(ctx, "unknown memory format %" PRId64, mf);
  int want = mf == MF_CHANNELS_LAST ? 4 : 5;
  if (ndim != want)
    return fbx_kernel_error(ctx, "required rank %d tensor to use %s format", want,
                            want == 4 ? "channels_last" : "channels_last_3d");
  static const int order4[] = {1, 3, 2, 0}, order5[] = {1, 4, 3, 2, 0};
  const int *order = ndim == 4 ? order4 : order5;
  int64_t acc = 1;
  for (int k = 0; k < ndim; k++) {
    strides[order[k]] = acc;
    FBX_TRY(fbx_size_mul(ctx, acc, sizes[order[k]] > 1 ? sizes[order[k]] : 1, &acc, "channels_last strides"));
  }
  return NULL;
}

/* An uninitialized tensor shaped like t in dtype d with memory format arg
 * mfv (None: preserve). Its storage holds exactly numel elements. */
static fbx_status *empty_like(fbx_kctx *ctx, fbx_tensor **out, const fbx_tensor *t, fbx_dtype d, const fbx_ivalue *mfv) {
  int64_t strides[FBX_MAX_DIMS];
  int64_t mf = mfv->kind == FBX_IV_NONE ? MF_PRESERVE : fbx_iv_to_int(mfv);
  if (mf == MF_PRESERVE) {
    if (non_overlapping_and_dense(t)) memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    else infer_dense_strides(t, strides);
  } else {
    FBX_TRY(memfmt_strides(ctx, t->ndim, t->sizes, mf, strides));
  }
  return fbx_tensor_empty_strided(out, d, t->ndim, t->sizes, strides);
}

/* ---- fills ----------------------------------------------------------------------------- */

/* Fill a dense fresh tensor (its storage is exactly its numel elements). */
static void fill_value(fbx_tensor *t, const fbx_ivalue *v) {
  if (t->numel == 0) return;
  if (v->kind == FBX_IV_FLOAT) fbx_tensor_set_f64(t, 0, v->u.f);
  else fbx_tensor_set_i64(t, 0, fbx_iv_to_int(v));
  size_t es = fbx_dtype_size(t->dtype), total = (size_t)t->numel * es, have = es;
  char *p = t->data;
  while (have < total) {
    size_t n = have < total - have ? have : total - have;
    memcpy(p + have, p, n);
    have += n;
  }
}

static void fill_zero(fbx_tensor *t) {
  if (t->numel) memset(t->data, 0, (size_t)t->numel * fbx_dtype_size(t->dtype));
}

/* ---- zeros / ones / empty / full ---------------------------------------------------------- */

typedef enum { FILL_ZERO, FILL_ONE, FILL_NONE, FILL_ARG, FILL_RAND, FILL_RANDN } fill_kind;

static fbx_status *random_fill(fbx_kctx *ctx, fbx_tensor *t, bool normal);

static fbx_status *finish(fbx_kctx *ctx, fbx_tensor *t, fill_kind k, const fbx_ivalue *fill, fbx_ivalue *outs) {
  fbx_status *st = NULL;
  static const fbx_ivalue one = {.kind = FBX_IV_INT, .u.i = 1};
  switch (k) {
    case FILL_ZERO: fill_zero(t); break;
    case FILL_ONE: fill_value(t, &one); break;
    case FILL_ARG: fill_value(t, fill); break;
    case FILL_RAND: st = random_fill(ctx, t, false); break;
    case FILL_RANDN: st = random_fill(ctx, t, true); break;
    case FILL_NONE: break;
  }
  if (st) {
    fbx_tensor_release(t);
    return st;
  }
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* size, [fill], dtype, layout, device, pin_memory, [memory_format] */
static fbx_status *sized(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, fill_kind k) {
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = 0, a = k == FILL_ARG ? 2 : 1;
  fbx_dtype def = FBX_DTYPE_FLOAT32, d = FBX_DTYPE_UNDEFINED;
  FBX_TRY(size_arg(ctx, args, 0, sizes, &n));
  if (k == FILL_ARG) {
    /* torch.full infers bool / int64 / default float from the fill value */
    if (args[1].kind == FBX_IV_BOOL) def = FBX_DTYPE_BOOL;
    else if (args[1].kind == FBX_IV_INT) def = FBX_DTYPE_INT64;
  }
  FBX_TRY(dtype_arg(ctx, &args[a], def, &d));
  FBX_TRY(layout_arg(ctx, &args[a + 1]));
  if ((k == FILL_RAND || k == FILL_RANDN) && !fbx_dtype_is_floating(d))
    return fbx_kernel_error(ctx, "expected a floating point dtype, got %s", fbx_dtype_name(d));
  int64_t mf = MF_CONTIGUOUS;
  if (ctx->op->schema.nargs > a + 4 && args[a + 4].kind != FBX_IV_NONE) mf = fbx_iv_to_int(&args[a + 4]);
  if (mf == MF_PRESERVE) mf = MF_CONTIGUOUS;
  FBX_TRY(memfmt_strides(ctx, n, sizes, mf, strides));
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty_strided(&t, d, n, sizes, strides));
  return finish(ctx, t, k, &args[1], outs);
}

/* aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) */
fbx_status *fbx_k_zeros(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_ones(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_ONE); }
/* aten::empty.memory_format(...): the values are unspecified; fusebox zeroes them so runs are reproducible. */
fbx_status *fbx_k_empty(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_full(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_ARG); }
fbx_status *fbx_k_rand(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_RAND); }
fbx_status *fbx_k_randn(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return sized(ctx, args, outs, FILL_RANDN); }

/* ---- *_like ---------------------------------------------------------------------------- */

/* self, [fill], dtype, layout, device, pin_memory, memory_format */
static fbx_status *like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, fill_kind k) {
  fbx_tensor *self, *t = NULL;
  int a = k == FILL_ARG ? 2 : 1;
  fbx_dtype d = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(dtype_arg(ctx, &args[a], self->dtype, &d));
  FBX_TRY(layout_arg(ctx, &args[a + 1]));
  if ((k == FILL_RAND || k == FILL_RANDN) && !fbx_dtype_is_floating(d))
    return fbx_kernel_error(ctx, "expected a floating point dtype, got %s", fbx_dtype_name(d));
  FBX_TRY(empty_like(ctx, &t, self, d, &args[a + 4]));
  return finish(ctx, t, k, &args[1], outs);
}

fbx_status *fbx_k_zeros_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_ones_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_ONE); }
fbx_status *fbx_k_empty_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_full_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_ARG); }
fbx_status *fbx_k_rand_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_RAND); }
fbx_status *fbx_k_randn_like(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return like(ctx, args, outs, FILL_RANDN); }

/* ---- new_* (size given, dtype defaults to self's) -------------------------------------- */

/* self, size, [fill], dtype, layout, device, pin_memory */
static fbx_status *new_sized(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, fill_kind k) {
  fbx_tensor *self, *t = NULL;
  int64_t sizes[FBX_MAX_DIMS];
  int n = 0, a = k == FILL_ARG ? 3 : 2;
  fbx_dtype d = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(size_arg(ctx, args, 1, sizes, &n));
  FBX_TRY(dtype_arg(ctx, &args[a], self->dtype, &d));
  FBX_TRY(layout_arg(ctx, &args[a + 1]));
  FBX_TRY(fbx_tensor_empty(&t, d, n, sizes));
  return finish(ctx, t, k, &args[2], outs);
}

fbx_status *fbx_k_new_zeros(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return new_sized(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_new_ones(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return new_sized(ctx, args, outs, FILL_ONE); }
fbx_status *fbx_k_new_empty(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return new_sized(ctx, args, outs, FILL_ZERO); }
fbx_status *fbx_k_new_full(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return new_sized(ctx, args, outs, FILL_ARG); }

/* aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor */
fbx_status *fbx_k_clone(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *t = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(empty_like(ctx, &t, self, self->dtype, &args[1]));
  fbx_status *st = fbx_tensor_copy_(t, self);
  if (st) {
    fbx_tensor_release(t);
    return st;
  }
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* ---- arange ---------------------------------------------------------------------------- */

/* Values as PyTorch 1.13's CPU kernel (AVX2 build) computes them, bit for
 * bit: element i is start + step * i in the accumulate type (double for
 * float32/float64, float for float16/bfloat16, int64 for integers), with
 * the compiler's fused multiply-add; inside the vectorized part (all but
 * the last n % (2 * lanes) elements) a vector of `lanes` elements starts
 * from base = start + step * i0 stored in the output type, and lane k is
 * base + k * step. PyTorch splits arrays longer than 32768 elements across
 * threads, which moves those vector boundaries; fusebox always computes
 * them as one chunk. */
typedef struct arange_job {
  fbx_tensor *t;
  double start, step;      /* floating accumulate values */
  int64_t istart, istep;   /* integer accumulate values */
  int64_t full;            /* elements covered by vectors */
} arange_job;

static void arange_body(void *p, int64_t begin, int64_t end) {
  arange_job *j = p;
  void *data = j->t->data;
  switch (j->t->dtype) {
    case FBX_DTYPE_FLOAT64:
      for (int64_t i = begin; i < end; i++) {
        double v;
        if (i < j->full) v = fma((double)(i & 3), j->step, fma(j->step, (double)(i & ~(int64_t)3), j->start));
        else v = fma(j->step, (double)i, j->start);
        ((double *)data)[i] = v;
      }
      break;
    case FBX_DTYPE_FLOAT32:
      for (int64_t i = begin; i < end; i++) {
        double v;
        if (i < j->full) {
          float base = (float)fma(j->step, (double)(i & ~(int64_t)7), j->start);
          v = fma((double)(i & 7), j->step, (double)base);
        } else {
          v = fma(j->step, (double)i, j->start);
        }
        ((float *)data)[i] = (float)v;
      }
      break;
    case FBX_DTYPE_FLOAT16:
    case FBX_DTYPE_BFLOAT16: {
      bool half = j->t->dtype == FBX_DTYPE_FLOAT16;
      float start = (float)j->start, step = (float)j->step;
      for (int64_t i = begin; i < end; i++) {
        float v;
        if (i < j->full) {
          float b = fmaf(step, (float)(i & ~(int64_t)15), start);
          float base = half ? fbx_half_to_float(fbx_float_to_half(b)) : fbx_bf16_to_float(fbx_float_to_bf16(b));
          v = fmaf((float)(i & 15), step, base);
        } else {
          v = fmaf(step, (float)i, start);
        }
        ((uint16_t *)data)[i] = half ? fbx_float_to_half(v) : fbx_float_to_bf16(v);
      }
      break;
    }
    default:
      for (int64_t i = begin; i < end; i++)
        fbx_tensor_set_i64(j->t, i, (int64_t)((uint64_t)j->istart + (uint64_t)j->istep * (uint64_t)i));
      break;
  }
}

static fbx_status *arange_impl(fbx_kctx *ctx, const fbx_ivalue *vstart, const fbx_ivalue *vend,
                               const fbx_ivalue *vstep, fbx_ivalue *args_tail, fbx_ivalue *outs) {
  bool any_float = vstart->kind == FBX_IV_FLOAT || vend->kind == FBX_IV_FLOAT || vstep->kind == FBX_IV_FLOAT;
  fbx_dtype d = FBX_DTYPE_UNDEFINED;
  FBX_TRY(dtype_arg(ctx, &args_tail[0], any_float ? FBX_DTYPE_FLOAT32 : FBX_DTYPE_INT64, &d));
  FBX_TRY(layout_arg(ctx, &args_tail[1]));
  if (d == FBX_DTYPE_BOOL) return fbx_kernel_error(ctx, "\"arange_cpu\" not implemented for 'Bool'");
  bool fl = fbx_dtype_is_floating(d);
  double ds = fbx_iv_to_double(vstart), de = fbx_iv_to_double(vend), dst = fbx_iv_to_double(vstep);
  arange_job j = {0};
  /* the checks run on the accumulate-type values, as in PyTorch */
  double xs, xe, xst;
  if (fl) {
    if (d == FBX_DTYPE_FLOAT16 || d == FBX_DTYPE_BFLOAT16) {
      xs = (float)ds, xe = (float)de, xst = (float)dst;
    } else {
      xs = ds, xe = de, xst = dst;
    }
    j.start = xs;
    j.step = xst;
  } else {
    j.istart = fbx_iv_to_int(vstart);
    j.istep = fbx_iv_to_int(vstep);
    xs = (double)j.istart, xe = (double)fbx_iv_to_int(vend), xst = (double)j.istep;
  }
  if (!(xst > 0 || xst < 0)) return fbx_kernel_error(ctx, "step must be nonzero");
  if (!isfinite(xs) || !isfinite(xe)) return fbx_kernel_error(ctx, "unsupported range: %g -> %g", xs, xe);
  if (!((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs)))
    return fbx_kernel_error(ctx, "upper bound and larger bound inconsistent with step sign (start %g, end %g, step %g)",
                            xs, xe, xst);
  double size_d;
  if (d == FBX_DTYPE_INT64) {
    int64_t ie = fbx_iv_to_int(vend), sgn = j.istep > 0 ? 1 : -1, span;
    /* (end - start + step - sgn) / step, checked: ints from the graph may be anything */
    if (__builtin_sub_overflow(ie, j.istart, &span) || __builtin_add_overflow(span, j.istep - sgn, &span) ||
        (span == INT64_MIN && j.istep == -1))
      return fbx_kernel_error(ctx, "invalid size, possible overflow? (start %" PRId64 ", end %" PRId64 ", step %" PRId64
                              ")", j.istart, ie, j.istep);
    size_d = (double)(span / j.istep);
  } else {
    size_d = ceil((de - ds) / dst);
  }
  if (!(size_d >= 0 && size_d < 9.2233720368547758e18)) /* 2^63 itself does not convert */
    return fbx_kernel_error(ctx, "invalid size, possible overflow?");
  int64_t n = (int64_t)size_d;
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, d, 1, &n));
  int lanes = d == FBX_DTYPE_FLOAT64 ? 4 : d == FBX_DTYPE_FLOAT32 ? 8 : 16;
  j.t = t;
  j.full = n - n % (2 * lanes);
  fbx_parallel_for(n, 32768, arange_body, &j);
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) */
fbx_status *fbx_k_arange(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  static const fbx_ivalue zero = {.kind = FBX_IV_INT, .u.i = 0}, one = {.kind = FBX_IV_INT, .u.i = 1};
  return arange_impl(ctx, &zero, &args[0], &one, &args[1], outs);
}

/* aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, ...) */
fbx_status *fbx_k_arange_start(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  static const fbx_ivalue one = {.kind = FBX_IV_INT, .u.i = 1};
  return arange_impl(ctx, &args[0], &args[1], &one, &args[2], outs);
}

/* aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, ...) */
fbx_status *fbx_k_arange_start_step(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return arange_impl(ctx, &args[0], &args[1], &args[2], &args[3], outs);
}

/* ---- random ---------------------------------------------------------------------------- */

#define GOLDEN 0x9E3779B97F4A7C15ull

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* splitmix64 step */
static uint64_t next_key(uint64_t *state) {
  *state += GOLDEN;
  return mix64(*state);
}

static inline uint64_t draw(uint64_t key, int64_t i) { return mix64(key + (uint64_t)(i + 1) * GOLDEN); }

typedef struct rand_job {
  void *data;
  fbx_dtype dtype;
  uint64_t key;
  int64_t n;
  bool normal;
} rand_job;

static inline void store(void *data, fbx_dtype d, int64_t i, double v) {
  switch (d) {
    case FBX_DTYPE_FLOAT64: ((double *)data)[i] = v; break;
    case FBX_DTYPE_FLOAT32: ((float *)data)[i] = (float)v; break;
    case FBX_DTYPE_FLOAT16: ((uint16_t *)data)[i] = fbx_float_to_half((float)v); break;
    default: ((uint16_t *)data)[i] = fbx_float_to_bf16((float)v); break;
  }
}

static void rand_body(void *p, int64_t begin, int64_t end) {
  const rand_job *j = p;
  if (!j->normal) {
    int shift = j->dtype == FBX_DTYPE_FLOAT64 ? 11 : j->dtype == FBX_DTYPE_FLOAT32 ? 40
              : j->dtype == FBX_DTYPE_FLOAT16 ? 53 : 56;
    double scale = ldexp(1.0, -(64 - shift));
    for (int64_t i = begin; i < end; i++) store(j->data, j->dtype, i, (double)(draw(j->key, i) >> shift) * scale);
    return;
  }
  /* begin/end count pairs */
  const double two_pi = 6.283185307179586476925286766559;
  for (int64_t k = begin; k < end; k++) {
    double u1 = (double)((draw(j->key, 2 * k) >> 11) + 1) * 0x1p-53; /* (0, 1] */
    double u2 = (double)(draw(j->key, 2 * k + 1) >> 11) * 0x1p-53;
    double r = sqrt(-2.0 * log(u1));
    store(j->data, j->dtype, 2 * k, r * cos(two_pi * u2));
    if (2 * k + 1 < j->n) store(j->data, j->dtype, 2 * k + 1, r * sin(two_pi * u2));
  }
}

static _Thread_local uint64_t fallback_state = 0x853c49e6748fea9bull;

/* t is a fresh dense tensor: fill its storage in memory order. */
static fbx_status *random_fill(fbx_kctx *ctx, fbx_tensor *t, bool normal) {
  uint64_t *state = ctx->rng_state ? ctx->rng_state : &fallback_state;
  rand_job j = {t->data, t->dtype, next_key(state), t->numel, normal};
  int64_t count = normal ? (t->numel + 1) / 2 : t->numel;
  fbx_parallel_for(count, 16384, rand_body, &j);
  return NULL;
}

/* ---- aten::tensor ------------------------------------------------------------------------ */

/* torch.tensor(data): a new tensor from a Python scalar or a (nested,
 * rectangular) list of them. Without a dtype argument the result is float32
 * (the default dtype) if any element is a float or there are no elements,
 * else int64 if any is an int, else bool — as torch.tensor infers it. */

typedef struct tensor_data {
  int ndim;
  int64_t sizes[FBX_MAX_DIMS];
  bool any_float, any_int;
} tensor_data;

static fbx_status *tensor_shape(fbx_kctx *ctx, const fbx_ivalue *v, int depth, tensor_data *d) {
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) {
    if (depth >= FBX_MAX_DIMS) return fbx_kernel_error(ctx, "data nests deeper than %d lists", FBX_MAX_DIMS);
    int64_t n = fbx_iv_list_len(v);
    if (depth == d->ndim) {
      d->sizes[d->ndim++] = n;
    } else if (d->sizes[depth] != n) {
      return fbx_kernel_error(ctx, "data is not rectangular: a list at depth %d has %" PRId64 " entries, expected %" PRId64,
                              depth, n, d->sizes[depth]);
    }
    for (int64_t i = 0; i < n; i++) FBX_TRY(tensor_shape(ctx, fbx_iv_list_at(v, (int)i), depth + 1, d));
    return NULL;
  }
  if (!fbx_iv_is_scalar(v)) return fbx_kernel_error(ctx, "data must hold ints, floats or bools, got %s", fbx_iv_kind_name(v->kind));
  if (depth != d->ndim) return fbx_kernel_error(ctx, "data is not rectangular: a scalar at depth %d", depth);
  d->any_float |= v->kind == FBX_IV_FLOAT;
  d->any_int |= v->kind == FBX_IV_INT;
  return NULL;
}

static void tensor_fill(fbx_tensor *t, const fbx_ivalue *v, int64_t *next) {
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < fbx_iv_list_len(v); i++) tensor_fill(t, fbx_iv_list_at(v, i), next);
  } else if (v->kind == FBX_IV_FLOAT) {
    fbx_tensor_set_f64(t, (*next)++, v->u.f);
  } else {
    fbx_tensor_set_i64(t, (*next)++, fbx_iv_to_int(v));
  }
}

fbx_status *fbx_k_tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  tensor_data d = {0};
  FBX_TRY(tensor_shape(ctx, &args[0], 0, &d));
  int64_t numel = 1;
  for (int i = 0; i < d.ndim; i++) numel *= d.sizes[i];
  /* no elements at all (torch.tensor([])) also gives the default float dtype */
  fbx_dtype def = d.any_float || numel == 0 ? FBX_DTYPE_FLOAT32 : d.any_int ? FBX_DTYPE_INT64 : FBX_DTYPE_BOOL;
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(dtype_arg(ctx, &args[1], def, &dt));
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, dt, d.ndim, d.sizes));
  int64_t next = 0;
  tensor_fill(t, &args[0], &next);
  outs[0] = fbx_iv_tensor(t);
  return NULL;
}

/* aten::eye(n) / eye.m(n, m)(*, dtype, layout, device, pin_memory): ones on
 * the main diagonal of an n x m (n x n) matrix, float32 by default. */
fbx_status *fbx_k_eye(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int a = ctx->op->schema.nargs == 6 ? 2 : 1; /* eye.m: n, m, then the options */
  for (int i = 0; i < a; i++)
    if (args[i].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "%s must be an int", i ? "m" : "n");
  int64_t sizes[2] = {args[0].u.i, a == 2 ? args[1].u.i : args[0].u.i};
  if (sizes[0] < 0) return fbx_kernel_error(ctx, "n must be greater or equal to 0, got %" PRId64, sizes[0]);
  if (sizes[1] < 0) return fbx_kernel_error(ctx, "m must be greater or equal to 0, got %" PRId64, sizes[1]);
  fbx_dtype d = FBX_DTYPE_UNDEFINED;
  FBX_TRY(dtype_arg(ctx, &args[a], FBX_DTYPE_FLOAT32, &d));
  FBX_TRY(layout_arg(ctx, &args[a + 1]));
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_zeros(&t, d, 2, sizes));
  int64_t k = sizes[0] < sizes[1] ? sizes[0] : sizes[1];
  for (int64_t i = 0; i < k; i++) fbx_tensor_set_f64(t, i * sizes[1] + i, 1.0);
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* ---- linspace / logspace ---------------------------------------------------------------- */

/* T(v) for the integral dtypes: truncation toward zero, wrapped (as C++'s
 * double -> int64 -> narrower conversions on x86). */
static void set_int(fbx_tensor *t, int64_t i, double v) { fbx_tensor_set_i64(t, i, (int64_t)v); }

static inline float round_half(float v, bool bf) {
  return bf ? fbx_bf16_to_float(fbx_float_to_bf16(v)) : fbx_half_to_float(fbx_float_to_half(v));
}

/* PyTorch's CPU linspace, value for value: element i is start + step * i
 * below steps / 2 and end - step * (steps - 1 - i) from there, computed in
 * the dtype (float types) or in double (integral ones, then truncated). The
 * AVX2 build of PyTorch fills the first steps - steps % (2 V) elements V at
 * a time (V = 32 bytes / element size): lane j of the vector at c is the
 * vector's base (c's own value, in the dtype) plus j * step, and the half is
 * chosen by c. Its compiler contracts start + step * c into an FMA (float,
 * double and the integral types' double arithmetic; not float16/bfloat16,
 * which round between the two) but not the lanes' base + j * step (a
 * separate multiply and add, checked against torch 1.13 value for value).
 * This reproduces all of that. */
static void linspace_fill(fbx_tensor *t, double ds, double de, int64_t steps) {
  fbx_dtype d = t->dtype;
  int64_t V = 32 / (int64_t)fbx_dtype_size(d), full = steps - steps % (2 * V), half = steps / 2;
  if (d == FBX_DTYPE_FLOAT16 || d == FBX_DTYPE_BFLOAT16) V = 16, full = steps - steps % 32;
  if (d == FBX_DTYPE_FLOAT64) {
    double *o = t->data, step = (de - ds) / (double)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
      int64_t c = i < full ? i - i % V : i, j = i - c;
      double base = c < half ? fma(step, (double)c, ds) : fma(-step, (double)(steps - c - 1), de);
      o[i] = j ? base + (double)j * step : base;
    }
  } else if (d == FBX_DTYPE_FLOAT32) {
    float *o = t->data, s = (float)ds, e = (float)de, step = (e - s) / (float)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
      int64_t c = i < full ? i - i % V : i, j = i - c;
      float base = c < half ? fmaf(step, (float)c, s) : fmaf(-step, (float)(steps - c - 1), e);
      o[i] = j ? base + (float)j * step : base;
    }
  } else if (d == FBX_DTYPE_FLOAT16 || d == FBX_DTYPE_BFLOAT16) {
    bool bf = d == FBX_DTYPE_BFLOAT16;
    uint16_t *o = t->data;
    float s = round_half((float)ds, bf), e = round_half((float)de, bf);
    /* c10::Half/BFloat16 arithmetic: integer operands are converted to the type
     * first (999 is 1000 in bfloat16), every result rounded to it */
    float step = round_half(round_half(e - s, bf) / round_half((float)(steps - 1), bf), bf);
    for (int64_t i = 0; i < steps; i++) {
      int64_t c = i < full ? i - i % V : i, j = i - c;
      float base = c < half ? round_half(s + round_half(step * round_half((float)c, bf), bf), bf)
                            : round_half(e - round_half(step * round_half((float)(steps - c - 1), bf), bf), bf);
      float v = j ? round_half(base + round_half((float)j * step, bf), bf) : base;
      o[i] = bf ? fbx_float_to_bf16(v) : fbx_float_to_half(v);
    }
  } else {
    double s = (double)(int64_t)ds, e = (double)(int64_t)de, step = (e - s) / (double)(steps - 1);
    fbx_tensor tmp = *t;
    for (int64_t i = 0; i < steps; i++) {
      int64_t c = i < full ? i - i % V : i, j = i - c;
      double base = c < half ? fma(step, (double)c, s) : fma(-step, (double)(steps - c - 1), e);
      if (j) base = (double)(int64_t)base + (double)j * step;
      set_int(&tmp, i, base);
    }
  }
}

/* aten::linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, ...) -> Tensor
 * dtype: the argument, else float32. */
fbx_status *fbx_k_linspace(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_dtype d = FBX_DTYPE_FLOAT32;
  FBX_TRY(dtype_arg(ctx, &args[3], FBX_DTYPE_FLOAT32, &d));
  FBX_TRY(layout_arg(ctx, &args[4]));
  int64_t steps = fbx_iv_to_int(&args[2]);
  if (steps < 0) return fbx_kernel_error(ctx, "number of steps must be non-negative");
  if (d == FBX_DTYPE_BOOL) return fbx_kernel_error(ctx, "\"linspace_cpu\" not implemented for 'Bool'");
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, d, 1, &steps));
  double ds = fbx_iv_to_double(&args[0]), de = fbx_iv_to_double(&args[1]);
  if (steps == 1) fbx_tensor_set_f64(t, 0, fbx_dtype_is_floating(d) ? ds : (double)(int64_t)ds);
  else if (steps > 1) linspace_fill(t, ds, de, steps);
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* aten::logspace(Scalar start, Scalar end, int steps, float base=10., *, ScalarType? dtype=None, ...) -> Tensor
 * As PyTorch: base ** v in double, with v = start + step * i below steps / 2
 * and end - step * (steps - 1 - i) from there, start and end in the dtype,
 * step = (end - start) / (steps - 1) in double; stored in the dtype. */
fbx_status *fbx_k_logspace(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_dtype d = FBX_DTYPE_FLOAT32;
  FBX_TRY(dtype_arg(ctx, &args[4], FBX_DTYPE_FLOAT32, &d));
  FBX_TRY(layout_arg(ctx, &args[5]));
  int64_t steps = fbx_iv_to_int(&args[2]);
  if (steps < 0) return fbx_kernel_error(ctx, "number of steps must be non-negative");
  if (d == FBX_DTYPE_BOOL) return fbx_kernel_error(ctx, "\"logspace_cpu\" not implemented for 'Bool'");
  double base = fbx_iv_to_double(&args[3]), ds = fbx_iv_to_double(&args[0]), de = fbx_iv_to_double(&args[1]);
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, d, 1, &steps));
  bool fl = fbx_dtype_is_floating(d);
  double s, e, span;
  if (d == FBX_DTYPE_FLOAT64) {
    s = ds, e = de, span = e - s;
  } else if (d == FBX_DTYPE_FLOAT32) {
    s = (float)ds, e = (float)de, span = (float)e - (float)s;
  } else if (fl) {
    bool bf = d == FBX_DTYPE_BFLOAT16;
    s = round_half((float)ds, bf), e = round_half((float)de, bf), span = round_half((float)(e - s), bf);
  } else {
    s = (double)(int64_t)ds, e = (double)(int64_t)de, span = e - s;
  }
  if (steps == 1) {
    double v = pow(base, fl ? ds : (double)(int64_t)ds);
    if (fl) fbx_tensor_set_f64(t, 0, v);
    else set_int(t, 0, v);
  } else if (steps > 1) {
    double step = span / (double)(steps - 1);
    for (int64_t i = 0; i < steps; i++) {
      double v = i < steps / 2 ? pow(base, s + step * (double)i) : pow(base, e - step * (double)(steps - i - 1));
      if (fl) fbx_tensor_set_f64(t, i, v);
      else set_int(t, i, v);
    }
  }
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}

/* ---- tril_indices / triu_indices --------------------------------------------------------- */

/* aten::tril_indices / triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, ...) -> Tensor
 * [2, N]: the (row, column) pairs of a row x col matrix's lower (col - row
 * <= offset) or upper (col - row >= offset) triangle, in row-major order. */
fbx_status *fbx_k_tri_indices(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_dtype d = FBX_DTYPE_FLOAT32;
  FBX_TRY(dtype_arg(ctx, &args[3], FBX_DTYPE_INT64, &d));
  FBX_TRY(layout_arg(ctx, &args[4]));
  int64_t row = fbx_iv_to_int(&args[0]), col = fbx_iv_to_int(&args[1]), off = fbx_iv_to_int(&args[2]);
  bool lower = ctx->op->id == FBX_OP_tril_indices;
  if (row < 0) return fbx_kernel_error(ctx, "row must be non-negative, got%" PRId64, row);
  if (col < 0) return fbx_kernel_error(ctx, "col must be non-negative, got%" PRId64, col);
  if (d == FBX_DTYPE_BOOL || fbx_dtype_is_floating(d))
    return fbx_kernel_error(ctx, "\"%s\" not implemented for '%s'", lower ? "tril_indices" : "triu_indices",
                            fbx_dtype_torch_name(d));
  int64_t n = 0;
  for (int64_t r = 0; r < row; r++) {
    /* columns c in [0, col) with c <= r + off (lower) or c >= r + off (upper) */
    int64_t lim = r + off;
    int64_t k = lower ? (lim < 0 ? 0 : lim + 1 > col ? col : lim + 1) : (lim <= 0 ? col : lim >= col ? 0 : col - lim);
    if (__builtin_add_overflow(n, k, &n)) return fbx_kernel_error(ctx, "size overflow");
  }
  int64_t sizes[2] = {2, n};
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, d, 2, sizes));
  int64_t k = 0;
  for (int64_t r = 0; r < row; r++) {
    int64_t lo = lower ? 0 : (r + off > 0 ? r + off : 0), hi = lower ? (r + off + 1 < col ? r + off + 1 : col) : col;
    for (int64_t c = lo; c < hi; c++, k++) {
      fbx_tensor_set_i64(t, k, r);
      fbx_tensor_set_i64(t, n + k, c);
    }
  }
  fbx_set_out_tensor(outs, 0, t);
  return NULL;
}
