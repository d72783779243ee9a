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
 * comparisons make it. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

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
