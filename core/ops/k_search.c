/* Binary search into sorted values (rows in ops/list_extra.h):
 * searchsorted (.Tensor, .Scalar) and bucketize (.Tensor, .Scalar).
 *
 * searchsorted(sorted_sequence, self, out_int32, right, side, sorter): for
 * each value v of self, the index of the first element of its row of
 * sorted_sequence that is >= v (side "left", the default) or > v (right /
 * side "right"; the two must not disagree). sorted_sequence is 1-D (one row
 * for every value) or has self's leading dims (one row per leading index);
 * sorter, when given, holds the indices that sort each row (argsort), and
 * the row is read through it. bucketize(self, boundaries, out_int32, right)
 * is searchsorted(boundaries, self, ...) with 1-D boundaries. The result
 * has self's shape (0-d for a Scalar self) and dtype int64, or int32 with
 * out_int32. Values and boundaries of any real dtypes are compared as
 * PyTorch promotes them (as int64 when both are integral, else in double);
 * a NaN value is past every element (index = row length), as PyTorch's
 * comparisons make it.
 *
 * Also here, the rows of ops/list_reduce.h and ops/list_linalg.h that are
 * compositions of other rows (kcompose.h) or small loops over doubles:
 * nansum, nanmean, aminmax, trapz/trapezoid, msort, renorm, quantile and
 * nanquantile (a sorted copy of each row), bincount, histc; the products
 * tensordot, inner, addmv, addr, addbmm (one mm of [n, B m] @ [B m, p]),
 * linalg_cross/cross, vdot, ger; the in-place rows renorm_, addmv_, addr_,
 * addbmm_; and the fusebox:: gradient helpers of those formulas
 * (aminmax, trapz, quantile, renorm, tensordot, inner _backward). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kcompose.h"
#include "ops/reduce.h"

typedef struct srch {
  const fbx_tensor *seq, *val, *sorter;
  int64_t rows, len; /* rows of seq (1: shared by every value), its last dim */
  int64_t per_row;   /* values per row of seq */
  bool right, ints;
  fbx_tensor *out;
} srch;

/* Element j of row r of the sequence (through sorter). */
static int64_t seq_index(const srch *s, int64_t r, int64_t j) {
  int64_t k = s->sorter ? fbx_tensor_get_i64(s->sorter, r * s->len + j) : j;
  return r * s->len + k;
}

/* seq[r][mid] < v (left) or <= v (right), i.e. the search goes on to the right. */
static bool goes_right(const srch *s, int64_t r, int64_t mid, int64_t i) {
  int64_t at = seq_index(s, r, mid);
  if (s->ints) {
    int64_t a = fbx_tensor_get_i64(s->seq, at), v = fbx_tensor_get_i64(s->val, i);
    return s->right ? !(a > v) : !(a >= v);
  }
  double a = fbx_tensor_get_f64(s->seq, at), v = fbx_tensor_get_f64(s->val, i);
  return s->right ? !(a > v) : !(a >= v);
}

static fbx_status *run_search(const fbx_kctx *ctx, srch *s, bool out_int32, fbx_ivalue *outs) {
  if (s->sorter) {
    if (s->sorter->dtype != FBX_DTYPE_INT64)
      return fbx_kernel_error(ctx, "torch.searchsorted(): sorter must be a tensor of long dtype but got %s",
                              fbx_dtype_name(s->sorter->dtype));
    if (!fbx_tensor_same_shape(s->sorter, s->seq))
      return fbx_kernel_error(ctx, "torch.searchsorted(): boundary and sorter must have the same size");
    for (int64_t i = 0; i < s->sorter->numel; i++) {
      int64_t k = fbx_tensor_get_i64(s->sorter, i);
      if (k < 0 || k >= s->len)
        return fbx_kernel_error(ctx, "torch.searchsorted(): sorter index out of range (%" PRId64 " for rows of %" PRId64 ")",
                                k, s->len);
    }
  }
  FBX_TRY(fbx_tensor_empty(&s->out, out_int32 ? FBX_DTYPE_INT32 : FBX_DTYPE_INT64, s->val->ndim, s->val->sizes));
  for (int64_t i = 0; i < s->val->numel; i++) {
    int64_t r = s->rows == 1 ? 0 : i / s->per_row, lo = 0, hi = s->len;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (goes_right(s, r, mid, i)) lo = mid + 1;
      else hi = mid;
    }
    fbx_tensor_set_i64(s->out, i, lo);
  }
  fbx_set_out_tensor(outs, 0, s->out);
  return NULL;
}

/* seq and val's shapes: seq 1-D, or seq's leading dims = val's. */
static fbx_status *search_shapes(const fbx_kctx *ctx, srch *s) {
  const fbx_tensor *q = s->seq, *v = s->val;
  if (q->ndim == 0) return fbx_kernel_error(ctx, "torch.searchsorted(): boundaries tensor should have at least 1 dim");
  bool ok = q->ndim == 1 || q->ndim == v->ndim;
  for (int d = 0; ok && q->ndim > 1 && d < q->ndim - 1; d++) ok = q->sizes[d] == v->sizes[d];
  if (!ok) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, q->ndim, q->sizes);
    fbx_red_shape_str(b, sizeof b, v->ndim, v->sizes);
    return fbx_kernel_error(ctx, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                                 "dimensions of boundaries tensor and input value tensor must match, but we got "
                                 "boundaries tensor %s and input value tensor %s", a, b);
  }
  if (q->dtype == FBX_DTYPE_BOOL || v->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "torch.searchsorted(): not implemented for %s boundaries and %s values",
                            fbx_dtype_name(q->dtype), fbx_dtype_name(v->dtype));
  s->len = q->sizes[q->ndim - 1];
  s->rows = q->numel / (s->len ? s->len : 1);
  if (q->ndim == 1) s->rows = 1;
  s->per_row = v->ndim ? v->sizes[v->ndim - 1] : 1;
  s->ints = !fbx_dtype_is_floating(q->dtype) && !fbx_dtype_is_floating(v->dtype);
  return NULL;
}

/* A Scalar `self` as a 0-d tensor of its own kind (int64 or float64). */
static fbx_status *scalar_value(const fbx_kctx *ctx, const fbx_ivalue *v, fbx_tensor **out) {
  if (v->kind == FBX_IV_INT || v->kind == FBX_IV_BOOL) return fbx_scalar_tensor(out, v, FBX_DTYPE_INT64);
  if (v->kind == FBX_IV_FLOAT) return fbx_scalar_tensor(out, v, FBX_DTYPE_FLOAT64);
  return fbx_kernel_error(ctx, "expected a number for self");
}

/* searchsorted.Tensor / .Scalar(sorted_sequence, self, *, out_int32, right, side, sorter) */
fbx_status *fbx_k_searchsorted(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  srch s = {0};
  fbx_tensor *seq, *own = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &seq));
  s.seq = seq;
  if (args[1].kind == FBX_IV_TENSOR) {
    s.val = args[1].u.t;
  } else {
    FBX_TRY(scalar_value(ctx, &args[1], &own));
    s.val = own;
  }
  bool out_int32 = fbx_iv_to_int(&args[2]) != 0;
  s.right = fbx_iv_to_int(&args[3]) != 0;
  fbx_status *st = NULL;
  if (args[4].kind == FBX_IV_STR) {
    const char *side = fbx_iv_str_data(&args[4]);
    bool r = !strcmp(side, "right");
    if (!r && strcmp(side, "left"))
      st = fbx_kernel_error(ctx, "torch.searchsorted(): side can only be 'left' or 'right' but got '%s'", side);
    else if (s.right && !r)
      st = fbx_kernel_error(ctx, "torch.searchsorted(): side and right can't be set to opposites, got side of left "
                                 "while right was True");
    s.right = r;
  }
  if (!st && args[5].kind == FBX_IV_TENSOR) s.sorter = args[5].u.t;
  if (!st && own && seq->ndim != 1)
    st = fbx_kernel_error(ctx, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                               "dimension is 1, but we got boundaries tensor dim(%d)", seq->ndim);
  if (!st) st = search_shapes(ctx, &s);
  if (!st) st = run_search(ctx, &s, out_int32, outs);
  fbx_tensor_release(own);
  return st;
}

/* bucketize.Tensor(self, boundaries, *, out_int32, right) / .Scalar(Scalar self, boundaries, ...) */
fbx_status *fbx_k_bucketize(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  srch s = {0};
  fbx_tensor *b, *own = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (b->ndim != 1) return fbx_kernel_error(ctx, "boundaries tensor must be 1 dimension, but got dim(%d)", b->ndim);
  if (args[0].kind == FBX_IV_TENSOR) {
    s.val = args[0].u.t;
  } else {
    FBX_TRY(scalar_value(ctx, &args[0], &own));
    s.val = own;
  }
  s.seq = b;
  s.right = fbx_iv_to_int(&args[3]) != 0;
  fbx_status *st = search_shapes(ctx, &s);
  if (!st) st = run_search(ctx, &s, fbx_iv_to_int(&args[2]) != 0, outs);
  fbx_tensor_release(own);
  return st;
}

/* ==== reductions and products composed of other rows (ops/list_reduce.h, ops/list_linalg.h) ==== */

/* In-place rows (renorm_, addmv_, addr_, addbmm_): the functional row's
 * result, which must have self's shape and cast to its dtype, copied into self. */
static fbx_op_id inplace_twin(fbx_op_id id) {
  switch (id) {
    case FBX_OP_renorm_: return FBX_OP_renorm;
    case FBX_OP_addmv_: return FBX_OP_addmv;
    case FBX_OP_addr_: return FBX_OP_addr;
    case FBX_OP_addbmm_: return FBX_OP_addbmm;
    default: return FBX_OP_COUNT;
  }
}

fbx_status *fbx_k_red_inplace(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *r = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  fbx_op_id twin = inplace_twin((fbx_op_id)ctx->op->id);
  if (twin == FBX_OP_COUNT) return fbx_kernel_error(ctx, "no functional form for this in-place row");
  FBX_TRY(fbx_row_tensor(ctx, &r, twin, args, ctx->op->schema.nargs));
  fbx_status *st = NULL;
  if (!fbx_tensor_same_shape(r, self)) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, self->ndim, self->sizes);
    fbx_red_shape_str(b, sizeof b, r->ndim, r->sizes);
    st = fbx_kernel_error(ctx, "output with shape %s doesn't match the broadcast shape %s", a, b);
  } else if (fbx_dtype_is_floating(r->dtype) && !fbx_dtype_is_floating(self->dtype)) {
    st = fbx_kernel_error(ctx, "result type %s can't be cast to the desired output type %s",
                          fbx_dtype_torch_name(r->dtype), fbx_dtype_torch_name(self->dtype));
  } else {
    st = fbx_tensor_copy_(self, r);
  }
  fbx_tensor_release(r);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, fbx_tensor_retain(self));
  return NULL;
}

/* x with its NaNs replaced by 0 (a new reference to x itself when it is not floating). */
static fbx_status *zero_nans(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x) {
  if (!fbx_dtype_is_floating(x->dtype)) {
    *out = fbx_tensor_retain(x);
    return NULL;
  }
  fbx_tensor *m = NULL;
  fbx_status *st = ROW(&m, isnan, TV(x));
  if (!st) st = ROW(out, masked_fill_Scalar, TV(x), TV(m), IV(0));
  fbx_tensor_release(m);
  return st;
}

/* nansum(self, dim=None, keepdim=False, *, dtype=None): sum with NaNs counted as 0. */
fbx_status *fbx_k_nansum(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *z = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_status *st = zero_nans(ctx, &z, x);
  if (!st) st = ROW(&out, sum_dim_IntList, TV(z), args[1], args[2], args[3]);
  fbx_tensor_release(z);
  return finish(st, outs, &out);
}

/* nanmean(self, dim=None, keepdim=False, *, dtype=None): nansum / the count of non-NaN elements. */
fbx_status *fbx_k_nanmean(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *z = NULL, *s = NULL, *m = NULL, *k = NULL, *c = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "nanmean(): expected input to have floating point dtype but got %s",
                            fbx_dtype_torch_name(x->dtype));
  fbx_status *st = zero_nans(ctx, &z, x);
  if (!st) st = ROW(&s, sum_dim_IntList, TV(z), args[1], args[2], args[3]);
  if (!st) st = ROW(&m, isnan, TV(x));
  if (!st) st = ROW(&k, logical_not, TV(m));
  if (!st) st = ROW(&c, sum_dim_IntList, TV(k), args[1], args[2], NV);
  if (!st) st = ROW(&out, div_Tensor, TV(s), TV(c));
  fbx_tensor *tmp[] = {z, s, m, k, c};
  release_all(tmp, 5);
  return finish(st, outs, &out);
}

/* aminmax(self, *, dim=None, keepdim=False) -> (amin, amax) over dim or every dim. */
fbx_status *fbx_k_aminmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *lo = NULL, *hi = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t d = 0;
  int nd = 0;
  if (args[1].kind != FBX_IV_NONE) {
    FBX_TRY(fbx_red_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), x));
    nd = 1;
  }
  if (x->numel == 0 && (nd == 0 || x->ndim == 0 || x->sizes[d] == 0))
    return fbx_kernel_error(ctx, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                                 "identity");
  fbx_ivalue dl;
  FBX_TRY(fbx_int_list_iv(&dl, nd, &d));
  fbx_status *st = ROW(&lo, amin, TV(x), dl, args[2]);
  if (!st) st = ROW(&hi, amax, TV(x), dl, args[2]);
  fbx_iv_release(&dl);
  return finish2(st, outs, &lo, &hi);
}

/* y with dim's extent narrowed to [start, start + len). */
static fbx_status *narrow_dim(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *y, int64_t dim, int64_t start,
                              int64_t len) {
  return ROW(out, narrow, TV(y), IV(dim), IV(start), IV(len));
}

/* trapz/trapezoid .x(y, x, *, dim=-1) and .dx(y, *, dx=1, dim=-1). */
fbx_status *fbx_k_trapz(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *y, *x = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &y));
  bool with_x = args[1].kind == FBX_IV_TENSOR;
  if (with_x) x = args[1].u.t;
  else if (!fbx_iv_is_scalar(&args[1])) return fbx_kernel_error(ctx, "dx must be a number");
  int64_t dim;
  FBX_TRY(fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[2]), y));
  int64_t n = y->ndim ? y->sizes[dim] : 1;
  fbx_ivalue dl;
  FBX_TRY(fbx_int_list_iv(&dl, 1, &dim));
  fbx_tensor *a = NULL, *b = NULL, *s = NULL, *xd = NULL, *xa = NULL, *xb = NULL, *xr = NULL, *p = NULL, *q = NULL;
  fbx_status *st = NULL;
  if (with_x && x->ndim == 1 && x->sizes[0] != n) {
    st = fbx_kernel_error(ctx, "trapezoid: There must be one `x` value for each sample point");
  } else if (n == 0) {
    /* no intervals: zeros of the reduced shape in y's dtype (integral too, as PyTorch's) */
    int64_t rs[FBX_MAX_DIMS];
    int rn = 0;
    for (int i = 0; i < y->ndim; i++)
      if (i != dim) rs[rn++] = y->sizes[i];
    st = fbx_tensor_zeros(&out, y->dtype, rn, rs);
  } else if (!with_x) {
    /* dx * (sum(y) - (y[0] + y[-1]) / 2) */
    st = ROW(&s, sum_dim_IntList, TV(y), dl, BV(false), NV);
    if (!st) st = ROW(&a, select_int, TV(y), IV(dim), IV(0));
    if (!st) st = ROW(&b, select_int, TV(y), IV(dim), IV(-1));
    if (!st) st = ROW(&p, add_Tensor, TV(a), TV(b));
    if (!st) st = ROW(&q, mul_Scalar, TV(p), FV(0.5));
    if (!st) st = ROW(&xr, sub_Tensor, TV(s), TV(q));
    if (!st) st = ROW(&out, mul_Scalar, TV(xr), args[1]);
  } else {
    /* sum((y[1:] + y[:-1]) * diff(x)) / 2 */
    st = narrow_dim(ctx, &a, y, dim, 1, n - 1);
    if (!st) st = narrow_dim(ctx, &b, y, dim, 0, n - 1);
    if (!st) st = ROW(&p, add_Tensor, TV(a), TV(b));
    if (!st && x->ndim == 1) {
      /* 1-D x runs along dim: a view [n, 1, ...] (trailing ones up to y's rank) */
      int64_t shape[FBX_MAX_DIMS];
      int nd = y->ndim - (int)dim;
      shape[0] = n;
      for (int i = 1; i < nd; i++) shape[i] = 1;
      fbx_ivalue sl;
      st = fbx_int_list_iv(&sl, nd, shape);
      if (!st) {
        st = ROW(&xr, reshape, TV(x), sl);
        fbx_iv_release(&sl);
      }
    } else if (!st) {
      xr = fbx_tensor_retain(x);
    }
    int64_t xdim = -(y->ndim - dim); /* dim counted from the end, so x may have fewer dims */
    if (!st && xr->ndim < -xdim)
      st = fbx_kernel_error(ctx, "trapezoid: x has %d dims, too few for dim %" PRId64, xr->ndim, dim);
    if (!st) st = ROW(&xa, narrow, TV(xr), IV(xdim), IV(1), IV(n - 1));
    if (!st) st = ROW(&xb, narrow, TV(xr), IV(xdim), IV(0), IV(n - 1));
    if (!st) st = ROW(&xd, sub_Tensor, TV(xa), TV(xb));
    if (!st) st = ROW(&q, mul_Tensor, TV(p), TV(xd));
    if (!st) st = ROW(&s, sum_dim_IntList, TV(q), dl, BV(false), NV);
    if (!st) st = ROW(&out, div_Scalar, TV(s), IV(2));
  }
  fbx_iv_release(&dl);
  fbx_tensor *tmp[] = {a, b, s, xd, xa, xb, xr, p, q};
  release_all(tmp, 9);
  return finish(st, outs, &out);
}

/* msort(self) = sort(self, dim=0).values */
fbx_status *fbx_k_msort(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_ivalue res[2] = {{0}};
  FBX_TRY(fbx_row_run(ctx, FBX_OP_sort, (fbx_ivalue[]){TV(x), IV(0), BV(false)}, 3, res));
  fbx_iv_release(&res[1]);
  outs[0] = res[0];
  return NULL;
}

/* renorm(self, p, dim, maxnorm): each slice along dim whose p-norm exceeds
 * maxnorm scaled by maxnorm / (norm + 1e-7). */
fbx_status *fbx_k_renorm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *nrm = NULL, *big = NULL, *den = NULL, *f = NULL, *fs = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "renorm: expected a floating point input, got %s", fbx_dtype_torch_name(x->dtype));
  if (!fbx_iv_is_scalar(&args[1]) || !fbx_iv_is_scalar(&args[3]))
    return fbx_kernel_error(ctx, "p and maxnorm must be numbers");
  double p = fbx_iv_to_double(&args[1]), maxnorm = fbx_iv_to_double(&args[3]);
  if (!(p > 0)) return fbx_kernel_error(ctx, "renorm: non-positive-norm not supported");
  if (!(maxnorm >= 0)) return fbx_kernel_error(ctx, "renorm: expected maxnorm to be >= 0 but got %g", maxnorm);
  int64_t dim;
  FBX_TRY(fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[2]), x));
  if (x->ndim <= 1) return fbx_kernel_error(ctx, "renorm: input needs at least 2 dimensions, got %d dimensions", x->ndim);
  int64_t others[FBX_MAX_DIMS];
  int no = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != dim) others[no++] = i;
  fbx_ivalue dl;
  FBX_TRY(fbx_int_list_iv(&dl, no, others));
  fbx_status *st = ROW(&nrm, linalg_vector_norm, TV(x), args[1], dl, BV(true), NV);
  fbx_iv_release(&dl);
  if (!st) st = ROW(&big, gt_Scalar, TV(nrm), args[3]);
  if (!st) st = ROW(&den, add_Scalar, TV(nrm), FV(1e-7), IV(1));
  if (!st) st = ROW(&f, reciprocal, TV(den));
  if (!st) st = ROW(&fs, mul_Scalar, TV(f), args[3]);
  fbx_tensor *g = NULL;
  if (!st) st = ROW(&g, where_ScalarOther, TV(big), TV(fs), IV(1));
  if (!st) st = ROW(&out, mul_Tensor, TV(x), TV(g));
  fbx_tensor *tmp[] = {nrm, big, den, f, fs, g};
  release_all(tmp, 6);
  return finish(st, outs, &out);
}

/* Rounds v to float32 when f32 (quantile's arithmetic runs in the input's dtype, as PyTorch's). */
static inline double qround(bool f32, double v) { return f32 ? (double)(float)v : v; }

static int cmp_nan_last(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a)) return isnan(b) ? 0 : 1;
  if (isnan(b)) return -1;
  return a < b ? -1 : a > b;
}

enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_MIDPOINT, Q_NEAREST };

/* The q-quantile of the sorted row v[0..n) (NaNs last, nn of them not NaN). */
static double quantile_of(const double *v, int64_t n, int64_t nn, double q, int mode, bool ignore_nan, bool f32) {
  if (!ignore_nan && nn < n) return NAN;
  if (nn == 0) return NAN;
  double rank = qround(f32, q * (double)(nn - 1));
  double lo = floor(rank), hi = ceil(rank);
  double a = v[(int64_t)lo], b = v[(int64_t)hi];
  switch (mode) {
    case Q_LOWER: return a;
    case Q_HIGHER: return b;
    case Q_NEAREST: return v[(int64_t)nearbyint(rank)];
    default: {
      double w = mode == Q_MIDPOINT ? 0.5 : qround(f32, rank - lo);
      double d = qround(f32, b - a);
      return w < 0.5 ? qround(f32, a + qround(f32, w * d)) : qround(f32, b - qround(f32, d * qround(f32, 1 - w)));
    }
  }
}

/* quantile / nanquantile (.scalar): q a float or a 0-d / 1-D tensor of self's dtype. */
fbx_status *fbx_k_quantile(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_op_id id = (fbx_op_id)ctx->op->id;
  bool ignore_nan = id == FBX_OP_nanquantile || id == FBX_OP_nanquantile_scalar;
  const char *fn = ignore_nan ? "nanquantile()" : "quantile()";
  if (x->numel == 0) return fbx_kernel_error(ctx, "%s input tensor must be non-empty", fn);
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "%s input tensor must be either float or double dtype", fn);
  const char *interp = args[4].kind == FBX_IV_STR ? fbx_iv_str_data(&args[4]) : "";
  static const char *const modes[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  int mode = -1;
  for (int i = 0; i < 5; i++)
    if (!strcmp(interp, modes[i])) mode = i;
  if (mode < 0)
    return fbx_kernel_error(ctx, "%s interpolation must be one of linear, lower, higher, midpoint or nearest. Got %s",
                            fn, interp);
  double qs1;
  double *qv = &qs1, *xv = NULL, *row = NULL, *res = NULL;
  int64_t nq = 1;
  bool qlist = false;
  if (args[1].kind == FBX_IV_TENSOR) {
    fbx_tensor *qt = args[1].u.t;
    if (qt->ndim > 1) return fbx_kernel_error(ctx, "%s q must be a scalar or 1D tensor", fn);
    if (qt->dtype != x->dtype) return fbx_kernel_error(ctx, "%s q tensor must be same dtype as the input tensor", fn);
    qlist = qt->ndim == 1;
    nq = qt->numel;
    FBX_TRY(fbx_red_load_all_f64(&qv, qt));
    for (int64_t i = 0; i < nq; i++)
      if (!(qv[i] >= 0 && qv[i] <= 1)) {
        fbx_free(qv);
        return fbx_kernel_error(ctx, "%s q values must be in the range [0, 1]", fn);
      }
  } else {
    if (!fbx_iv_is_scalar(&args[1])) return fbx_kernel_error(ctx, "q must be a number or a tensor");
    qs1 = fbx_iv_to_double(&args[1]);
    if (!(qs1 >= 0 && qs1 <= 1)) return fbx_kernel_error(ctx, "%s q must be in the range [0, 1] but got %g", fn, qs1);
  }
  bool f32 = x->dtype == FBX_DTYPE_FLOAT32;
  for (int64_t i = 0; f32 && i < nq; i++) qv[i] = (double)(float)qv[i];
  bool keep = fbx_iv_to_int(&args[3]) != 0;
  /* rows: [A, R, B] around dim (None: one row of everything) */
  int64_t A = 1, R = x->numel, B = 1, dim = -1;
  int64_t osz[FBX_MAX_DIMS + 1];
  int ond = 0;
  fbx_status *st = NULL;
  if (qlist) osz[ond++] = nq;
  if (args[2].kind == FBX_IV_NONE) {
    if (keep)
      for (int i = 0; i < x->ndim; i++) osz[ond++] = 1;
  } else {
    st = fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[2]), x);
    if (st) goto done;
    if (x->ndim) {
      R = x->sizes[dim];
      for (int i = 0; i < x->ndim; i++) {
        if (i < dim) A *= x->sizes[i];
        if (i > dim) B *= x->sizes[i];
        if (i != dim) osz[ond++] = x->sizes[i];
        else if (keep) osz[ond++] = 1;
      }
    }
    if (R == 0) {
      st = fbx_kernel_error(ctx, "%s input tensor must be non-empty", fn);
      goto done;
    }
  }
  st = fbx_red_load_all_f64(&xv, x);
  if (st) goto done;
  row = fbx_malloc(sizeof(double) * (size_t)R);
  res = fbx_malloc(sizeof(double) * (size_t)(nq * A * B > 0 ? nq * A * B : 1));
  if (!row || !res) {
    st = fbx_status_nomem();
    goto done;
  }
  for (int64_t a = 0; a < A; a++)
    for (int64_t b = 0; b < B; b++) {
      int64_t nn = 0;
      for (int64_t r = 0; r < R; r++) {
        row[r] = xv[(a * R + r) * B + b];
        nn += !isnan(row[r]);
      }
      qsort(row, (size_t)R, sizeof(double), cmp_nan_last);
      for (int64_t k = 0; k < nq; k++)
        res[k * A * B + a * B + b] = quantile_of(row, R, nn, qv[k], mode, ignore_nan, f32);
    }
  {
    fbx_tensor *out = NULL;
    st = fbx_red_store_all_f64(&out, x->dtype, ond, osz, res);
    if (!st) fbx_set_out_tensor(outs, 0, out);
  }
done:
  if (qv != &qs1) fbx_free(qv);
  fbx_free(xv);
  fbx_free(row);
  fbx_free(res);
  return st;
}

/* bincount(self, weights=None, minlength=0): counts (int64) or sums of
 * weights (float32 weights stay float32, others give float64) of each
 * value of a 1-D non-negative integral self. */
fbx_status *fbx_k_bincount(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *w = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind == FBX_IV_TENSOR) w = args[1].u.t;
  int64_t minlength = fbx_iv_to_int(&args[2]);
  if (minlength < 0) return fbx_kernel_error(ctx, "minlength should be >= 0");
  if (x->ndim != 1 || fbx_dtype_is_floating(x->dtype) || x->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "bincount only supports 1-d non-negative integral inputs.");
  if (w && (w->ndim != 1 || w->sizes[0] != x->sizes[0]))
    return fbx_kernel_error(ctx, "weights should be 1-d and have the same length as input");
  int64_t n = x->sizes[0], len = minlength;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = fbx_tensor_get_i64(x, i);
    if (v < 0) return fbx_kernel_error(ctx, "bincount only supports 1-d non-negative integral inputs.");
    if (v + 1 > len) len = v + 1;
  }
  fbx_dtype dt = !w ? FBX_DTYPE_INT64 : w->dtype == FBX_DTYPE_FLOAT32 ? FBX_DTYPE_FLOAT32 : FBX_DTYPE_FLOAT64;
  FBX_TRY(fbx_tensor_zeros(&out, dt, 1, &len));
  if (!w) {
    int64_t *o = out->data;
    for (int64_t i = 0; i < n; i++) o[fbx_tensor_get_i64(x, i)]++;
  } else {
    double *acc = fbx_calloc((size_t)(len ? len : 1), sizeof(double));
    if (!acc) {
      fbx_tensor_release(out);
      return fbx_status_nomem();
    }
    for (int64_t i = 0; i < n; i++) acc[fbx_tensor_get_i64(x, i)] += fbx_tensor_get_f64(w, i);
    for (int64_t i = 0; i < len; i++) fbx_tensor_set_f64(out, i, acc[i]);
    fbx_free(acc);
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* histc(self, bins=100, min=0, max=0): a histogram of bins equal bins over
 * [min, max] (the data's range when min == max, widened by 1 each way when
 * that is one value, an error when it is not finite); values outside are not
 * counted, max itself falls in the last bin, and a NaN counts in the first
 * bin (PyTorch 1.13's CPU kernel does so). */
fbx_status *fbx_k_histc(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "\"histogram_cpu\" not implemented for '%s'", fbx_dtype_torch_name(x->dtype));
  int64_t bins = fbx_iv_to_int(&args[1]);
  if (bins <= 0) return fbx_kernel_error(ctx, "bins must be > 0");
  if (!fbx_iv_is_scalar(&args[2]) || !fbx_iv_is_scalar(&args[3])) return fbx_kernel_error(ctx, "min and max must be numbers");
  bool f32 = x->dtype != FBX_DTYPE_FLOAT64;
  double lo = qround(f32, fbx_iv_to_double(&args[2])), hi = qround(f32, fbx_iv_to_double(&args[3]));
  double *v = NULL;
  FBX_TRY(fbx_red_load_all_f64(&v, x));
  int64_t n = x->numel;
  fbx_status *st = NULL;
  if (lo == hi && n > 0) {
    lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      if (isnan(v[i])) {
        lo = hi = NAN; /* the data's range is NaN: not finite */
        break;
      }
      lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
    }
  }
  if (lo == hi) lo -= 1, hi += 1;
  if (!isfinite(lo) || !isfinite(hi))
    st = fbx_kernel_error(ctx, "range of [%g, %g] is not finite", lo, hi);
  else if (lo > hi)
    st = fbx_kernel_error(ctx, "max must be larger than min");
  if (!st) st = fbx_tensor_zeros(&out, x->dtype, 1, &bins);
  if (!st) {
    double *cnt = fbx_calloc((size_t)bins, sizeof(double));
    if (!cnt) {
      st = fbx_status_nomem();
    } else {
      for (int64_t i = 0; i < n; i++) {
        double e = v[i];
        int64_t b = 0; /* a NaN counts in the first bin, as PyTorch 1.13's does */
        if (!isnan(e)) {
          if (!(e >= lo && e <= hi)) continue;
          b = (int64_t)qround(f32, qround(f32, qround(f32, e - lo) * (double)bins) / qround(f32, hi - lo));
          if (b >= bins) b = bins - 1;
        }
        cnt[b] += 1;
      }
      for (int64_t i = 0; i < bins; i++) fbx_tensor_set_f64(out, i, cnt[i]);
      fbx_free(cnt);
    }
  }
  fbx_free(v);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- products ------------------------------------------------------------------------------ */

static fbx_status *linalg_same_dtype(const fbx_kctx *ctx, const fbx_tensor *a, const fbx_tensor *b) {
  if (a->dtype != b->dtype)
    return fbx_kernel_error(ctx, "expected scalar type %s but found %s", fbx_dtype_torch_name(a->dtype),
                            fbx_dtype_torch_name(b->dtype));
  return NULL;
}

/* t permuted by perm[0..n) and reshaped to [rows, cols]. */
static fbx_status *perm_reshape(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *t, const int64_t *perm, int64_t rows,
                                int64_t cols) {
  fbx_ivalue pl, sl;
  fbx_tensor *p = NULL;
  int64_t sz[2] = {rows, cols};
  FBX_TRY(fbx_int_list_iv(&pl, t->ndim, perm));
  fbx_status *st = ROW(&p, permute, TV(t), pl);
  fbx_iv_release(&pl);
  if (!st) st = fbx_int_list_iv(&sl, 2, sz);
  if (!st) {
    st = ROW(out, reshape, TV(p), sl);
    fbx_iv_release(&sl);
  }
  fbx_tensor_release(p);
  return st;
}

/* Contraction plan of tensordot: dims of a and b (wrapped, checked), free dims in order. */
typedef struct tdplan {
  int nc, nfa, nfb;
  int64_t ca[FBX_MAX_DIMS], cb[FBX_MAX_DIMS], fa[FBX_MAX_DIMS], fb[FBX_MAX_DIMS];
  int64_t K, Ma, Nb;
} tdplan;

static fbx_status *td_plan_dims(const fbx_kctx *ctx, tdplan *p, const fbx_tensor *a, const fbx_tensor *b,
                                const int64_t *la, int na, const int64_t *lb, int nb) {
  if (na > a->ndim || nb > b->ndim) return fbx_kernel_error(ctx, "more contracted dims than the tensor has");
  if (na != nb) return fbx_kernel_error(ctx, "both dimension lists should have same length");
  bool used_a[FBX_MAX_DIMS] = {0}, used_b[FBX_MAX_DIMS] = {0};
  p->nc = na, p->K = 1;
  for (int i = 0; i < na; i++) {
    FBX_TRY(fbx_wrap_dim(ctx, &p->ca[i], la[i], a->ndim));
    FBX_TRY(fbx_wrap_dim(ctx, &p->cb[i], lb[i], b->ndim));
    if (used_a[p->ca[i]] || used_b[p->cb[i]]) return fbx_kernel_error(ctx, "dim appears multiple times in the list of dims");
    used_a[p->ca[i]] = used_b[p->cb[i]] = true;
    if (a->sizes[p->ca[i]] != b->sizes[p->cb[i]])
      return fbx_kernel_error(ctx, "contracted dimensions need to match, but first has size %" PRId64 " in dim %" PRId64
                                   " and second has size %" PRId64 " in dim %" PRId64,
                              a->sizes[p->ca[i]], p->ca[i], b->sizes[p->cb[i]], p->cb[i]);
    p->K *= a->sizes[p->ca[i]];
  }
  p->nfa = p->nfb = 0, p->Ma = p->Nb = 1;
  for (int i = 0; i < a->ndim; i++)
    if (!used_a[i]) p->fa[p->nfa++] = i, p->Ma *= a->sizes[i];
  for (int i = 0; i < b->ndim; i++)
    if (!used_b[i]) p->fb[p->nfb++] = i, p->Nb *= b->sizes[i];
  return NULL;
}

/* td_plan_dims on the int-list arguments argi and argi + 1. */
static fbx_status *td_plan(const fbx_kctx *ctx, tdplan *p, const fbx_tensor *a, const fbx_tensor *b,
                           const fbx_ivalue *da, const fbx_ivalue *db, int argi) {
  int64_t la[FBX_MAX_DIMS + 1], lb[FBX_MAX_DIMS + 1];
  fbx_status *st = NULL;
  int na = fbx_arg_int_list(ctx->op, argi, da, la, FBX_MAX_DIMS + 1, &st);
  if (na < 0) return st;
  int nb = fbx_arg_int_list(ctx->op, argi + 1, db, lb, FBX_MAX_DIMS + 1, &st);
  if (nb < 0) return st;
  return td_plan_dims(ctx, p, a, b, la, na, lb, nb);
}

/* tensordot on a plan: a's free dims then b's. */
static fbx_status *td_run(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *a, fbx_tensor *b, const tdplan *p) {
  int64_t pa[FBX_MAX_DIMS], pb[FBX_MAX_DIMS], rs[FBX_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < p->nfa; i++) pa[n] = p->fa[i], rs[n++] = a->sizes[p->fa[i]];
  for (int i = 0; i < p->nc; i++) pa[p->nfa + i] = p->ca[i];
  for (int i = 0; i < p->nc; i++) pb[i] = p->cb[i];
  for (int i = 0; i < p->nfb; i++) pb[p->nc + i] = p->fb[i], rs[n++] = b->sizes[p->fb[i]];
  if (n > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "too many dims");
  fbx_tensor *am = NULL, *bm = NULL, *m = NULL;
  fbx_ivalue rl;
  fbx_status *st = perm_reshape(ctx, &am, a, pa, p->Ma, p->K);
  if (!st) st = perm_reshape(ctx, &bm, b, pb, p->K, p->Nb);
  if (!st) st = ROW(&m, mm, TV(am), TV(bm));
  if (!st) st = fbx_int_list_iv(&rl, n, rs);
  if (!st) {
    st = ROW(out, reshape, TV(m), rl);
    fbx_iv_release(&rl);
  }
  fbx_tensor *tmp[] = {am, bm, m};
  release_all(tmp, 3);
  return st;
}

/* tensordot(self, other, dims_self, dims_other) */
fbx_status *fbx_k_tensordot(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  FBX_TRY(linalg_same_dtype(ctx, a, b));
  tdplan p;
  FBX_TRY(td_plan(ctx, &p, a, b, &args[2], &args[3], 2));
  return finish(td_run(ctx, &out, a, b, &p), outs, &out);
}

/* t permuted so that its dim order[i] goes to position i, i.e. by the inverse of order. */
static fbx_status *unpermute(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *t, const int64_t *order) {
  int64_t inv[FBX_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) inv[order[i]] = i;
  fbx_ivalue pl;
  FBX_TRY(fbx_int_list_iv(&pl, t->ndim, inv));
  fbx_status *st = ROW(out, permute, TV(t), pl);
  fbx_iv_release(&pl);
  return st;
}

/* The two gradients of tensordot on plan p, g of shape [a free..., b free...]. */
static fbx_status *td_grads(const fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *g, fbx_tensor *a, fbx_tensor *b,
                            const tdplan *p) {
  /* d a = tensordot(g, b, g's b-free dims, b's free dims): [a free..., a contracted...] */
  tdplan q = {0};
  q.nc = p->nfb, q.K = p->Nb;
  for (int i = 0; i < p->nfb; i++) q.ca[i] = p->nfa + i, q.cb[i] = p->fb[i];
  q.nfa = p->nfa, q.Ma = p->Ma;
  for (int i = 0; i < p->nfa; i++) q.fa[i] = i;
  q.nfb = p->nc, q.Nb = p->K;
  for (int i = 0; i < p->nc; i++) q.fb[i] = p->cb[i];
  fbx_tensor *ga0 = NULL, *gb0 = NULL, *ga = NULL, *gb = NULL;
  fbx_status *st = td_run(ctx, &ga0, g, b, &q);
  int64_t order[FBX_MAX_DIMS];
  if (!st) {
    for (int i = 0; i < p->nfa; i++) order[i] = p->fa[i];
    for (int i = 0; i < p->nc; i++) order[p->nfa + i] = p->ca[i];
    st = unpermute(ctx, &ga, ga0, order);
  }
  /* d b = tensordot(a, g, a's free dims, g's a-free dims): [b contracted..., b free...] */
  tdplan r = {0};
  r.nc = p->nfa, r.K = p->Ma;
  for (int i = 0; i < p->nfa; i++) r.ca[i] = p->fa[i], r.cb[i] = i;
  r.nfa = p->nc, r.Ma = p->K;
  for (int i = 0; i < p->nc; i++) r.fa[i] = p->ca[i];
  r.nfb = p->nfb, r.Nb = p->Nb;
  for (int i = 0; i < p->nfb; i++) r.fb[i] = p->nfa + i;
  if (!st) st = td_run(ctx, &gb0, a, g, &r);
  if (!st) {
    for (int i = 0; i < p->nc; i++) order[i] = p->cb[i];
    for (int i = 0; i < p->nfb; i++) order[p->nc + i] = p->fb[i];
    st = unpermute(ctx, &gb, gb0, order);
  }
  fbx_tensor_release(ga0);
  fbx_tensor_release(gb0);
  return finish2(st, outs, &ga, &gb);
}

/* fusebox::tensordot_backward(grad, self, other, dims_self, dims_other) -> (grad_self, grad_other) */
fbx_status *fbx_k_fbx_tensordot_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *a, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  tdplan p;
  FBX_TRY(td_plan(ctx, &p, a, b, &args[3], &args[4], 3));
  return td_grads(ctx, outs, g, a, b, &p);
}

/* inner's plan: the last dims of both (neither 0-d). */
static fbx_status *inner_plan(const fbx_kctx *ctx, tdplan *p, const fbx_tensor *a, const fbx_tensor *b) {
  if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
    char sa[256], sb[256];
    fbx_red_shape_str(sa, sizeof sa, a->ndim, a->sizes);
    fbx_red_shape_str(sb, sizeof sb, b->ndim, b->sizes);
    return fbx_kernel_error(ctx, "inner() the last dimension must match on both input tensors but got shapes %s and %s",
                            sa, sb);
  }
  const int64_t m1 = -1;
  return td_plan_dims(ctx, p, a, b, &m1, 1, &m1, 1);
}

/* inner(self, other): a 0-d operand multiplies, else the sum over both last dims. */
fbx_status *fbx_k_inner(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim == 0 || b->ndim == 0) return finish(ROW(&out, mul_Tensor, TV(a), TV(b)), outs, &out);
  FBX_TRY(linalg_same_dtype(ctx, a, b));
  tdplan p;
  FBX_TRY(inner_plan(ctx, &p, a, b));
  return finish(td_run(ctx, &out, a, b, &p), outs, &out);
}

/* fusebox::inner_backward(grad, self, other) -> (grad_self, grad_other) */
fbx_status *fbx_k_fbx_inner_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *a, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  if (a->ndim && b->ndim) {
    tdplan p;
    FBX_TRY(inner_plan(ctx, &p, a, b));
    return td_grads(ctx, outs, g, a, b, &p);
  }
  /* a product: each gradient is g times the other, summed back to the operand's shape */
  fbx_tensor *pa = NULL, *pb = NULL, *ga = NULL, *gb = NULL;
  fbx_ivalue sa, sb;
  fbx_status *st = ROW(&pa, mul_Tensor, TV(g), TV(b));
  if (!st) st = ROW(&pb, mul_Tensor, TV(g), TV(a));
  if (!st) st = fbx_int_list_iv(&sa, a->ndim, a->sizes);
  if (!st) {
    st = ROW(&ga, grad_sum_to_size, TV(pa), sa);
    fbx_iv_release(&sa);
  }
  if (!st) st = fbx_int_list_iv(&sb, b->ndim, b->sizes);
  if (!st) {
    st = ROW(&gb, grad_sum_to_size, TV(pb), sb);
    fbx_iv_release(&sb);
  }
  fbx_tensor_release(pa);
  fbx_tensor_release(pb);
  return finish2(st, outs, &ga, &gb);
}

/* beta * self + alpha * prod, self broadcasting to prod's shape and cast to
 * its dtype when cast; beta == 0 ignores self. Takes prod. */
static fbx_status *beta_alpha(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *self, fbx_tensor *prod,
                              const fbx_ivalue *beta, const fbx_ivalue *alpha, bool cast) {
  fbx_tensor *pa = NULL, *sc = NULL, *sb = NULL;
  fbx_status *st = NULL;
  if (!fbx_iv_is_scalar(beta) || !fbx_iv_is_scalar(alpha)) st = fbx_kernel_error(ctx, "beta and alpha must be numbers");
  int64_t shape[FBX_MAX_DIMS];
  int nd = 0;
  if (!st) st = fbx_broadcast_shapes(ctx, shape, &nd, self, prod);
  if (!st && (nd != prod->ndim || memcmp(shape, prod->sizes, sizeof(int64_t) * (size_t)nd))) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, self->ndim, self->sizes);
    fbx_red_shape_str(b, sizeof b, prod->ndim, prod->sizes);
    st = fbx_kernel_error(ctx, "the added tensor of shape %s does not broadcast to the product's shape %s", a, b);
  }
  fbx_ivalue ib, ia;
  if (!st && cast && !fbx_dtype_is_floating(prod->dtype)) { /* integral products take the factors truncated */
    ib = IV(fbx_iv_to_int(beta)), ia = IV(fbx_iv_to_int(alpha));
    beta = &ib, alpha = &ia;
  }
  bool a1 = !st && alpha->kind != FBX_IV_FLOAT && fbx_iv_to_int(alpha) == 1;
  if (!st) {
    if (a1) pa = fbx_tensor_retain(prod);
    else st = ROW(&pa, mul_Scalar, TV(prod), *alpha);
  }
  if (!st && fbx_iv_to_double(beta) == 0) {
    *out = fbx_tensor_retain(pa);
  } else if (!st) {
    if (cast && self->dtype != prod->dtype) st = ROW(&sc, to_dtype, TV(self), IV(prod->dtype), BV(false), BV(false), NV);
    if (!st) st = ROW(&sb, mul_Scalar, TV(sc ? sc : self), *beta);
    if (!st) st = ROW(out, add_Tensor, TV(sb), TV(pa));
  }
  if (!st && cast && (*out)->dtype != prod->dtype) { /* integral products keep their dtype under float factors */
    fbx_tensor *o = *out;
    *out = NULL;
    st = ROW(out, to_dtype, TV(o), IV(prod->dtype), BV(false), BV(false), NV);
    fbx_tensor_release(o);
  }
  fbx_tensor *tmp[] = {prod, pa, sc, sb};
  release_all(tmp, 4);
  return st;
}

/* addmv(self, mat, vec, *, beta=1, alpha=1) = beta * self + alpha * (mat @ vec) */
fbx_status *fbx_k_addmv(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *s, *m, *v, *p = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &s));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &m));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &v));
  if (m->ndim != 2 || v->ndim != 1 || s->ndim > 1)
    return fbx_kernel_error(ctx, "vector + matrix @ vector expected, got %d, %d, %d", s->ndim, m->ndim, v->ndim);
  if (m->sizes[1] != v->sizes[0])
    return fbx_kernel_error(ctx, "size mismatch, got input (%" PRId64 "), mat (%" PRId64 "x%" PRId64 "), vec (%" PRId64 ")",
                            s->ndim ? s->sizes[0] : 1, m->sizes[0], m->sizes[1], v->sizes[0]);
  FBX_TRY(linalg_same_dtype(ctx, m, v));
  FBX_TRY(ROW(&p, mv, TV(m), TV(v)));
  return finish(beta_alpha(ctx, &out, s, p, &args[3], &args[4], true), outs, &out);
}

/* addr(self, vec1, vec2, *, beta=1, alpha=1) = beta * self + alpha * outer(vec1, vec2) */
fbx_status *fbx_k_addr(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *s, *a, *b, *p = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &s));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  if (a->ndim != 1) return fbx_kernel_error(ctx, "addr: Expected 1-D argument vec1, but got %d-D", a->ndim);
  if (b->ndim != 1) return fbx_kernel_error(ctx, "addr: Expected 1-D argument vec2, but got %d-D", b->ndim);
  if (s->dtype == FBX_DTYPE_BOOL || a->dtype == FBX_DTYPE_BOOL || b->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "addr: bool tensors are not supported");
  bool ints = !fbx_dtype_is_floating(s->dtype) && !fbx_dtype_is_floating(a->dtype) && !fbx_dtype_is_floating(b->dtype);
  if (ints && args[3].kind == FBX_IV_FLOAT)
    return fbx_kernel_error(ctx, "For integral input tensors, argument beta must not be a floating point number.");
  if (ints && args[4].kind == FBX_IV_FLOAT)
    return fbx_kernel_error(ctx, "For integral input tensors, argument alpha must not be a floating point number.");
  FBX_TRY(ROW(&p, outer, TV(a), TV(b)));
  return finish(beta_alpha(ctx, &out, s, p, &args[3], &args[4], false), outs, &out);
}

/* addbmm(self, batch1, batch2, *, beta=1, alpha=1) = beta * self + alpha * sum_b batch1[b] @ batch2[b],
 * one mm of [n, B m] @ [B m, p]. */
fbx_status *fbx_k_addbmm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *s, *b1, *b2, *l = NULL, *r = NULL, *p = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &s));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b2));
  if (b1->ndim != 3) return fbx_kernel_error(ctx, "batch1 must be a 3D tensor");
  if (b2->ndim != 3) return fbx_kernel_error(ctx, "batch2 must be a 3D tensor");
  if (b1->sizes[0] != b2->sizes[0])
    return fbx_kernel_error(ctx, "batch1 and batch2 must have same number of batches, got %" PRId64 " and %" PRId64,
                            b1->sizes[0], b2->sizes[0]);
  if (b1->sizes[2] != b2->sizes[1])
    return fbx_kernel_error(ctx, "Incompatible matrix sizes for bmm (%" PRId64 "x%" PRId64 " and %" PRId64 "x%" PRId64 ")",
                            b1->sizes[1], b1->sizes[2], b2->sizes[1], b2->sizes[2]);
  FBX_TRY(linalg_same_dtype(ctx, b1, b2));
  if (s->dtype != b1->dtype) return fbx_kernel_error(ctx, "self and mat2 must have the same dtype");
  int64_t B = b1->sizes[0], n = b1->sizes[1], m = b1->sizes[2], q = b2->sizes[2];
  fbx_status *st = perm_reshape(ctx, &l, b1, (const int64_t[]){1, 0, 2}, n, B * m);
  if (!st) st = perm_reshape(ctx, &r, b2, (const int64_t[]){0, 1, 2}, B * m, q);
  if (!st) st = ROW(&p, mm, TV(l), TV(r));
  fbx_tensor_release(l);
  fbx_tensor_release(r);
  if (st) {
    fbx_tensor_release(p);
    return st;
  }
  return finish(beta_alpha(ctx, &out, s, p, &args[3], &args[4], true), outs, &out);
}

/* linalg_cross(self, other, *, dim=-1) / cross(self, other, dim=None): broadcast, then
 * roll(a, -1) roll(b, -2) - roll(a, -2) roll(b, -1) along dim. */
fbx_status *fbx_k_cross(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *ae = NULL, *be = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  FBX_TRY(linalg_same_dtype(ctx, a, b));
  if (a->ndim != b->ndim) return fbx_kernel_error(ctx, "linalg.cross: inputs must have the same number of dimensions.");
  int64_t shape[FBX_MAX_DIMS];
  int nd = 0;
  FBX_TRY(fbx_broadcast_shapes(ctx, shape, &nd, a, b));
  int64_t dim = -1;
  if (args[2].kind == FBX_IV_NONE) {
    for (int i = a->ndim - 1; i >= 0; i--)
      if (a->sizes[i] == 3) dim = i;
    if (dim < 0) return fbx_kernel_error(ctx, "no dimension of size 3 in input");
  } else {
    FBX_TRY(fbx_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[2]), nd));
  }
  int64_t sa = a->ndim ? a->sizes[dim] : 1, sb = b->ndim ? b->sizes[dim] : 1;
  if (sa != 3 || sb != 3)
    return fbx_kernel_error(ctx, "linalg.cross: inputs dimension %" PRId64 " must have length 3. Got %" PRId64
                                 " and %" PRId64,
                            args[2].kind == FBX_IV_NONE ? dim : fbx_iv_to_int(&args[2]), sa, sb);
  fbx_tensor *ra1 = NULL, *ra2 = NULL, *rb1 = NULL, *rb2 = NULL, *p1 = NULL, *p2 = NULL;
  fbx_ivalue m1 = NV, m2 = NV, dl;
  int64_t one = -1, two = -2;
  FBX_TRY(fbx_int_list_iv(&dl, 1, &dim));
  fbx_status *st = fbx_int_list_iv(&m1, 1, &one);
  if (st) {
    fbx_iv_release(&dl);
    return st;
  }
  st = fbx_int_list_iv(&m2, 1, &two);
  if (!st) st = fbx_expand_view(&ae, a, nd, shape);
  if (!st) st = fbx_expand_view(&be, b, nd, shape);
  if (!st) st = ROW(&ra1, roll, TV(ae), m1, dl);
  if (!st) st = ROW(&rb2, roll, TV(be), m2, dl);
  if (!st) st = ROW(&ra2, roll, TV(ae), m2, dl);
  if (!st) st = ROW(&rb1, roll, TV(be), m1, dl);
  if (!st) st = ROW(&p1, mul_Tensor, TV(ra1), TV(rb2));
  if (!st) st = ROW(&p2, mul_Tensor, TV(ra2), TV(rb1));
  if (!st) st = ROW(&out, sub_Tensor, TV(p1), TV(p2));
  fbx_iv_release(&dl);
  fbx_iv_release(&m1);
  fbx_iv_release(&m2);
  fbx_tensor *tmp[] = {ae, be, ra1, ra2, rb1, rb2, p1, p2};
  release_all(tmp, 8);
  return finish(st, outs, &out);
}

/* vdot(self, other): dot for real dtypes. */
fbx_status *fbx_k_vdot(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 1 || b->ndim != 1)
    return fbx_kernel_error(ctx, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
  if (a->dtype != b->dtype)
    return fbx_kernel_error(ctx, "expected both vectors to have same dtype, but found %s and %s",
                            fbx_dtype_torch_name(a->dtype), fbx_dtype_torch_name(b->dtype));
  return finish(ROW(&out, dot, TV(a), TV(b)), outs, &out);
}

/* ger(self, vec2) = outer(self, vec2) */
fbx_status *fbx_k_ger(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *out = NULL;
  return finish(fbx_row_tensor(ctx, &out, FBX_OP_outer, args, 2), outs, &out);
}

/* fusebox::aminmax_backward(grad_min, grad_max, self, min, max, dim, keepdim): amin's gradient plus amax's. */
fbx_status *fbx_k_fbx_aminmax_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *acc = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &x));
  fbx_ivalue dl = NV, sizes;
  fbx_status *st = NULL;
  if (args[5].kind != FBX_IV_NONE) {
    int64_t d;
    FBX_TRY(fbx_red_wrap_dim(ctx, &d, fbx_iv_to_int(&args[5]), x));
    FBX_TRY(fbx_int_list_iv(&dl, 1, &d));
  }
  st = fbx_int_list_iv(&sizes, x->ndim, x->sizes);
  if (st) {
    fbx_iv_release(&dl);
    return st;
  }
  for (int k = 0; k < 2 && !st; k++) {
    fbx_tensor *g, *r, *rb = NULL, *m = NULL, *c = NULL, *gb = NULL, *gd = NULL, *gi = NULL, *sum = NULL;
    st = fbx_arg_tensor(ctx, args, k, &g);
    if (!st) st = fbx_arg_tensor(ctx, args, 3 + k, &r);
    if (!st) st = ROW(&rb, fbx_sum_backward, TV(r), sizes, dl, args[6]);
    if (!st) st = ROW(&m, eq_Tensor, TV(x), TV(rb));
    if (!st) st = ROW(&c, sum_dim_IntList, TV(m), dl, BV(true), NV);
    if (!st) st = ROW(&gb, fbx_sum_backward, TV(g), sizes, dl, args[6]);
    if (!st) st = ROW(&gd, div_Tensor, TV(gb), TV(c));
    if (!st) st = ROW(&gi, mul_Tensor, TV(gd), TV(m));
    if (!st && acc) {
      st = ROW(&sum, add_Tensor, TV(acc), TV(gi));
      fbx_tensor_release(acc);
      acc = sum;
    } else if (!st) {
      acc = fbx_tensor_retain(gi);
    }
    fbx_tensor *tmp[] = {rb, m, c, gb, gd, gi};
    release_all(tmp, 6);
  }
  fbx_iv_release(&dl);
  fbx_iv_release(&sizes);
  return finish(st, outs, &acc);
}

/* ---- gradients of trapz, quantile and renorm (fusebox:: helpers of formulas_reduce.h) ------------ */

/* dst[narrow(dim, start, len)] += sign * v (dst fresh and contiguous; the narrow row is a view of it). */
static fbx_status *add_into(const fbx_kctx *ctx, fbx_tensor *dst, int64_t dim, int64_t start, int64_t len, fbx_tensor *v,
                            int sign) {
  fbx_tensor *w = NULL, *s = NULL;
  fbx_status *st = narrow_dim(ctx, &w, dst, dim, start, len);
  if (!st) st = sign > 0 ? ROW(&s, add_Tensor, TV(w), TV(v)) : ROW(&s, sub_Tensor, TV(w), TV(v));
  if (!st) st = fbx_tensor_copy_(w, s);
  fbx_tensor_release(w);
  fbx_tensor_release(s);
  return st;
}

/* grad (the reduced shape) back over dim, expanded to sizes[0..nd). */
static fbx_status *spread(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *grad, int64_t dim, int nd,
                          const int64_t *sizes) {
  fbx_tensor *u = NULL;
  FBX_TRY(ROW(&u, unsqueeze, TV(grad), IV(dim)));
  fbx_status *st = fbx_expand_view(out, u, nd, sizes);
  fbx_tensor_release(u);
  return st;
}

/* fusebox::trapz_backward(grad, y, x, dx, dim) -> (grad_y, grad_x): x None for the dx forms (grad_x None). */
fbx_status *fbx_k_fbx_trapz_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *y, *x = NULL, *gy = NULL, *gx = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  if (args[2].kind == FBX_IV_TENSOR) x = args[2].u.t;
  int64_t dim;
  FBX_TRY(fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[4]), y));
  int64_t n = y->ndim ? y->sizes[dim] : 1;
  fbx_dtype dt = g->dtype;
  fbx_status *st = NULL;
  if (n <= 1 || !x) {
    st = fbx_tensor_zeros(&gy, dt, y->ndim, y->sizes);
    if (!st && x) st = fbx_tensor_zeros(&gx, dt, x->ndim, x->sizes);
    if (!st && !x && n >= 2) {
      /* d y = g dx, halved at both ends (n == 1: the ends cancel, 0) */
      fbx_tensor *e = NULL, *m = NULL;
      st = spread(ctx, &e, g, dim, y->ndim, y->sizes);
      if (!st) st = ROW(&m, mul_Scalar, TV(e), FV(fbx_iv_to_double(&args[3])));
      if (!st) st = fbx_tensor_copy_(gy, m);
      for (int end = 0; end < 2 && !st; end++) {
        fbx_tensor *w = NULL, *h = NULL;
        st = narrow_dim(ctx, &w, gy, dim, end ? n - 1 : 0, 1);
        if (!st) st = ROW(&h, mul_Scalar, TV(w), FV(0.5));
        if (!st) st = fbx_tensor_copy_(w, h);
        fbx_tensor_release(w);
        fbx_tensor_release(h);
      }
      fbx_tensor *tmp[] = {e, m};
      release_all(tmp, 2);
    }
    return finish2(st, outs, &gy, &gx);
  }
  /* the forward's composition: p = y[1:] + y[:-1], xd = diff(x), q = p xd, out = sum(q, dim) / 2 */
  fbx_tensor *a = NULL, *b = NULL, *p = NULL, *xr = NULL, *xa = NULL, *xb = NULL, *xd = NULL, *h = NULL, *dq = NULL,
             *t1 = NULL, *t2 = NULL, *dp = NULL, *dxd = NULL, *dxr = NULL;
  fbx_ivalue sl = NV;
  int64_t xdim = -(y->ndim - dim);
  st = narrow_dim(ctx, &a, y, dim, 1, n - 1);
  if (!st) st = narrow_dim(ctx, &b, y, dim, 0, n - 1);
  if (!st) st = ROW(&p, add_Tensor, TV(a), TV(b));
  if (!st && x->ndim == 1) {
    int64_t shape[FBX_MAX_DIMS];
    int nd = y->ndim - (int)dim;
    shape[0] = n;
    for (int i = 1; i < nd; i++) shape[i] = 1;
    st = fbx_int_list_iv(&sl, nd, shape);
    if (!st) st = ROW(&xr, reshape, TV(x), sl);
    fbx_iv_release(&sl);
  } else if (!st) {
    xr = fbx_tensor_retain(x);
  }
  if (!st) st = ROW(&xa, narrow, TV(xr), IV(xdim), IV(1), IV(n - 1));
  if (!st) st = ROW(&xb, narrow, TV(xr), IV(xdim), IV(0), IV(n - 1));
  if (!st) st = ROW(&xd, sub_Tensor, TV(xa), TV(xb));
  int64_t qs[FBX_MAX_DIMS];
  int qn = 0;
  if (!st) st = fbx_broadcast_shapes(ctx, qs, &qn, p, xd);
  if (!st) st = ROW(&h, div_Scalar, TV(g), IV(2));
  if (!st) st = spread(ctx, &dq, h, qn - (y->ndim - dim), qn, qs);
  if (!st) st = ROW(&t1, mul_Tensor, TV(dq), TV(xd));
  if (!st) st = fbx_int_list_iv(&sl, p->ndim, p->sizes);
  if (!st) st = ROW(&dp, grad_sum_to_size, TV(t1), sl);
  fbx_iv_release(&sl);
  if (!st) st = fbx_tensor_zeros(&gy, dp->dtype, y->ndim, y->sizes);
  if (!st) st = add_into(ctx, gy, dim, 1, n - 1, dp, 1);
  if (!st) st = add_into(ctx, gy, dim, 0, n - 1, dp, 1);
  if (!st) st = ROW(&t2, mul_Tensor, TV(dq), TV(p));
  if (!st) st = fbx_int_list_iv(&sl, xd->ndim, xd->sizes);
  if (!st) st = ROW(&dxd, grad_sum_to_size, TV(t2), sl);
  fbx_iv_release(&sl);
  if (!st) st = fbx_tensor_zeros(&dxr, dxd->dtype, xr->ndim, xr->sizes);
  if (!st) st = add_into(ctx, dxr, xr->ndim + xdim, 1, n - 1, dxd, 1);
  if (!st) st = add_into(ctx, dxr, xr->ndim + xdim, 0, n - 1, dxd, -1);
  if (!st && x->ndim == 1) {
    st = fbx_int_list_iv(&sl, 1, &n);
    if (!st) st = ROW(&gx, reshape, TV(dxr), sl);
    fbx_iv_release(&sl);
  } else if (!st) {
    gx = fbx_tensor_retain(dxr);
  }
  fbx_tensor *tmp[] = {a, b, p, xr, xa, xb, xd, h, dq, t1, t2, dp, dxd, dxr};
  release_all(tmp, 14);
  return finish2(st, outs, &gy, &gx);
}

typedef struct qpair {
  double v;
  int64_t i;
} qpair;

static int cmp_pair(const void *pa, const void *pb) {
  const qpair *a = pa, *b = pb;
  int c = cmp_nan_last(&a->v, &b->v);
  return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* fusebox::quantile_backward(grad, self, q, dim, keepdim, interpolation, ignore_nan): the gradient goes to
 * the one or two sorted elements the result interpolates (a row with NaN, for quantile: to its last). */
fbx_status *fbx_k_fbx_quantile_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  bool ignore_nan = fbx_iv_to_int(&args[6]) != 0, f32 = x->dtype == FBX_DTYPE_FLOAT32;
  const char *interp = args[5].kind == FBX_IV_STR ? fbx_iv_str_data(&args[5]) : "";
  static const char *const modes[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  int mode = -1;
  for (int i = 0; i < 5; i++)
    if (!strcmp(interp, modes[i])) mode = i;
  if (mode < 0) return fbx_kernel_error(ctx, "unknown interpolation %s", interp);
  double qs1 = 0, *qv = &qs1, *xv = NULL, *gv = NULL, *acc = NULL;
  int64_t nq = 1;
  if (args[2].kind == FBX_IV_TENSOR) {
    nq = args[2].u.t->numel;
    FBX_TRY(fbx_red_load_all_f64(&qv, args[2].u.t));
  } else {
    qs1 = fbx_iv_to_double(&args[2]);
  }
  for (int64_t i = 0; f32 && i < nq; i++) qv[i] = (double)(float)qv[i];
  int64_t A = 1, R = x->numel, B = 1, dim = 0;
  fbx_status *st = NULL;
  if (args[3].kind != FBX_IV_NONE && x->ndim) {
    st = fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[3]), x);
    if (!st) {
      R = x->sizes[dim];
      for (int i = 0; i < x->ndim; i++) {
        if (i < dim) A *= x->sizes[i];
        if (i > dim) B *= x->sizes[i];
      }
    }
  }
  qpair *row = NULL;
  if (!st) st = fbx_red_load_all_f64(&xv, x);
  if (!st) st = fbx_red_load_all_f64(&gv, g);
  if (!st && g->numel != nq * A * B) st = fbx_kernel_error(ctx, "grad has %" PRId64 " elements, want %" PRId64, g->numel, nq * A * B);
  if (!st) {
    row = fbx_malloc(sizeof(qpair) * (size_t)(R ? R : 1));
    acc = fbx_calloc((size_t)(x->numel ? x->numel : 1), sizeof(double));
    if (!row || !acc) st = fbx_status_nomem();
  }
  for (int64_t a = 0; !st && a < A; a++)
    for (int64_t b = 0; b < B; b++) {
      int64_t nn = 0;
      for (int64_t r = 0; r < R; r++) {
        row[r].i = (a * R + r) * B + b;
        row[r].v = xv[row[r].i];
        nn += !isnan(row[r].v);
      }
      qsort(row, (size_t)R, sizeof(qpair), cmp_pair);
      for (int64_t k = 0; k < nq; k++) {
        double gk = gv[k * A * B + a * B + b];
        if (!ignore_nan && nn < R) {
          acc[row[R - 1].i] += gk;
          continue;
        }
        if (nn == 0) continue;
        double rank = qround(f32, qv[k] * (double)(nn - 1)), lo = floor(rank), hi = ceil(rank);
        int64_t il = (int64_t)lo, ih = (int64_t)hi;
        switch (mode) {
          case Q_LOWER: acc[row[il].i] += gk; break;
          case Q_HIGHER: acc[row[ih].i] += gk; break;
          case Q_NEAREST: acc[row[(int64_t)nearbyint(rank)].i] += gk; break;
          default: {
            double w = mode == Q_MIDPOINT ? 0.5 : rank - lo;
            acc[row[il].i] += gk * (1 - w);
            acc[row[ih].i] += gk * w;
          }
        }
      }
    }
  if (!st) st = fbx_red_store_all_f64(&out, g->dtype, x->ndim, x->sizes, acc);
  if (qv != &qs1) fbx_free(qv);
  fbx_free(xv);
  fbx_free(gv);
  fbx_free(acc);
  fbx_free(row);
  return finish(st, outs, &out);
}

/* fusebox::renorm_backward(grad, self, p, dim, maxnorm): with n the slice's p-norm and f its factor
 * (maxnorm / (n + 1e-7) where n > maxnorm, else 1), d self = g f + sum(g self) f'(n) sign(self)
 * |self|^(p-1) / n^(p-1), f'(n) = -maxnorm / (n + 1e-7)^2 where n > maxnorm, else 0. */
fbx_status *fbx_k_fbx_renorm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  double p = fbx_iv_to_double(&args[2]), maxnorm = fbx_iv_to_double(&args[4]);
  int64_t dim;
  FBX_TRY(fbx_red_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[3]), x));
  int64_t others[FBX_MAX_DIMS];
  int no = 0;
  for (int i = 0; i < x->ndim; i++)
    if (i != dim) others[no++] = i;
  fbx_ivalue dl;
  FBX_TRY(fbx_int_list_iv(&dl, no, others));
  fbx_tensor *t[16] = {0};
  enum { NRM, BIG, DEN, F0, F, GF, GX, S, D2, FP, FP2, AX, PW, SG, NP, DN };
  fbx_status *st = ROW(&t[NRM], linalg_vector_norm, TV(x), FV(p), dl, BV(true), NV);
  if (!st) st = ROW(&t[BIG], gt_Scalar, TV(t[NRM]), FV(maxnorm));
  if (!st) st = ROW(&t[DEN], add_Scalar, TV(t[NRM]), FV(1e-7), IV(1));
  if (!st) st = ROW(&t[F0], reciprocal, TV(t[DEN]));
  if (!st) st = ROW(&t[F], mul_Scalar, TV(t[F0]), FV(maxnorm));
  fbx_tensor *f = NULL, *fp = NULL, *term = NULL, *sum = NULL;
  if (!st) st = ROW(&f, where_ScalarOther, TV(t[BIG]), TV(t[F]), IV(1));
  if (!st) st = ROW(&t[GF], mul_Tensor, TV(g), TV(f));
  if (!st) st = ROW(&t[GX], mul_Tensor, TV(g), TV(x));
  if (!st) st = ROW(&t[S], sum_dim_IntList, TV(t[GX]), dl, BV(true), NV);
  if (!st) st = ROW(&t[D2], mul_Tensor, TV(t[F0]), TV(t[F0]));
  if (!st) st = ROW(&t[FP], mul_Scalar, TV(t[D2]), FV(-maxnorm));
  if (!st) st = ROW(&fp, where_ScalarOther, TV(t[BIG]), TV(t[FP]), IV(0));
  if (!st) st = ROW(&t[FP2], mul_Tensor, TV(fp), TV(t[S]));
  if (!st) st = ROW(&t[AX], abs, TV(x));
  if (!st) st = ROW(&t[PW], pow_Tensor_Scalar, TV(t[AX]), FV(p - 1));
  if (!st) st = ROW(&t[SG], sign, TV(x));
  if (!st) st = ROW(&t[NP], pow_Tensor_Scalar, TV(t[NRM]), FV(p - 1));
  if (!st) st = ROW(&t[DN], div_Tensor, TV(t[FP2]), TV(t[NP]));
  fbx_tensor *u = NULL;
  if (!st) st = ROW(&u, mul_Tensor, TV(t[PW]), TV(t[SG]));
  fbx_tensor *dn = NULL; /* 0 where the factor is constant (also where n is 0: no 0 / 0) */
  if (!st) st = ROW(&dn, where_ScalarOther, TV(t[BIG]), TV(t[DN]), IV(0));
  if (!st) st = ROW(&term, mul_Tensor, TV(u), TV(dn));
  if (!st) st = ROW(&sum, add_Tensor, TV(t[GF]), TV(term));
  if (!st) out = fbx_tensor_retain(sum);
  fbx_iv_release(&dl);
  release_all(t, 16);
  fbx_tensor *tmp[] = {f, fp, term, sum, u, dn};
  release_all(tmp, 6);
  return finish(st, outs, &out);
}
