/* Unique values and slices (rows in list_extra.h): aten::_unique2,
 * aten::_unique, aten::unique_consecutive, aten::unique_dim and
 * aten::unique_dim_consecutive, as PyTorch 1.13's CPU kernels, with two
 * choices where those give no defined answer.
 *
 * The flat forms (_unique2, _unique, unique_consecutive without a dim) take
 * self's elements in row-major order; the dim forms (unique_dim,
 * unique_dim_consecutive, unique_consecutive with a dim) take self's slices
 * along dim: self with dim moved first (the other dims in order), each slice
 * read in row-major order and compared element by element.
 *
 * - Order: the sorting forms give ascending values (slices in lexicographic
 *   order) for sorted=False as for sorted=True. PyTorch 1.13 gives a hash
 *   set's iteration order for sorted=False on CPU (not reproducible; PyTorch
 *   2 sorts there too), and ignores `sorted` in unique_dim.
 * - Equality is ==: equal values keep their first occurrence (-0.0 and 0.0
 *   are one value, the sign of the first seen), and NaN equals nothing, so
 *   every NaN is a value of its own with a count of 1, sorted after all
 *   numbers (PyTorch 1.13's _unique2 sorts a set holding NaN into no defined
 *   order and counts its NaNs 0). A slice holding NaN is likewise unique.
 * - Outputs: values in self's dtype; inverse int64, self's shape for the
 *   flat forms (0-d for a 0-d self), [size(dim)] for the dim forms; counts
 *   int64 [number of values]. A flat form not asked for inverse or counts
 *   returns an empty int64 [0] in its place, except that _unique2 asked for
 *   counts gives the inverse too; the dim forms always compute both. All as
 *   PyTorch 1.13 does.
 * - Refused as PyTorch 1.13 refuses them: float16 ("unique" / "unique_dim"
 *   not implemented for 'Half'), a dim form on a 0-d tensor, and a dim form
 *   on a tensor with a zero-size dim other than dim.
 *
 * Sorting is a stable qsort of positions (ties by position), O(n log n)
 * comparisons of elements or of slices. No gradient (PyTorch has none). */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"
#include "ops/optable.h"
#include <fusebox/tensor.h>

/* self's elements (or slices) as comparable keys: int64 for int64 self
 * (exact), double for every other dtype (exact for all of them). */
typedef struct {
  const int64_t *i;
  const double *f;
  int64_t width; /* elements per slice (1 for the flat forms) */
} ukeys;

/* -1, 0, 1: slice a before, equal in order to, or after slice b (NaN after
 * every number, NaNs alike in order; the caller breaks ties by position). */
static int slice_order(const ukeys *k, int64_t a, int64_t b) {
  for (int64_t e = 0; e < k->width; e++) {
    int64_t ia = a * k->width + e, ib = b * k->width + e;
    if (k->i) {
      if (k->i[ia] != k->i[ib]) return k->i[ia] < k->i[ib] ? -1 : 1;
      continue;
    }
    double x = k->f[ia], y = k->f[ib];
    bool nx = isnan(x), ny = isnan(y);
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Slices a and b equal under == (a NaN element makes them unequal). */
static bool slice_equal(const ukeys *k, int64_t a, int64_t b) {
  for (int64_t e = 0; e < k->width; e++) {
    int64_t ia = a * k->width + e, ib = b * k->width + e;
    if (k->i ? k->i[ia] != k->i[ib] : !(k->f[ia] == k->f[ib])) return false;
  }
  return true;
}

/* qsort has no context argument: the keys of the sort in progress (each
 * kernel call sorts on its own thread's copy) */
static _Thread_local const ukeys *sort_keys;
static int cmp_pos(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  int c = slice_order(sort_keys, a, b);
  return c ? c : (a > b) - (a < b);
}

/* Groups of n slices: order[j] is the j-th slice in the walk (sorted, or
 * input order for consecutive), first[g] the slice whose value group g
 * keeps, inv[s] slice s's group, cnt[g] its size; returns the group count. */
static int64_t group(const ukeys *k, const int64_t *order, int64_t n, int64_t *first, int64_t *inv, int64_t *cnt) {
  int64_t g = -1;
  for (int64_t j = 0; j < n; j++) {
    int64_t s = order[j];
    if (g < 0 || !slice_equal(k, first[g], s)) {
      first[++g] = s;
      cnt[g] = 0;
    }
    inv[s] = g;
    cnt[g]++;
  }
  return g + 1;
}

static fbx_status *empty_long(fbx_tensor **out, int ndim, const int64_t *sizes) {
  return fbx_tensor_empty(out, FBX_DTYPE_INT64, ndim, sizes);
}

/* The kernel of all five rows. */
fbx_status *fbx_k_unique(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_op_id id = (fbx_op_id)ctx->op->id;
  bool sorting = true, want_inv = true, want_cnt = true, has_dim = false;
  int64_t dimarg = 0;
  switch (id) {
    case FBX_OP__unique2: /* 1.13 fills the inverse when asked for either */
      want_cnt = fbx_iv_to_int(&args[3]) != 0, want_inv = want_cnt || fbx_iv_to_int(&args[2]) != 0;
      break;
    case FBX_OP__unique:
      want_inv = fbx_iv_to_int(&args[2]) != 0, want_cnt = false;
      break;
    case FBX_OP_unique_consecutive:
      sorting = false, want_inv = fbx_iv_to_int(&args[1]) != 0, want_cnt = fbx_iv_to_int(&args[2]) != 0;
      if (args[3].kind != FBX_IV_NONE) has_dim = true, dimarg = fbx_iv_to_int(&args[3]);
      break;
    case FBX_OP_unique_dim: has_dim = true, dimarg = fbx_iv_to_int(&args[1]); break;
    default: /* unique_dim_consecutive */ sorting = false, has_dim = true, dimarg = fbx_iv_to_int(&args[1]); break;
  }
  if (has_dim) want_inv = want_cnt = true; /* PyTorch 1.13's dim kernels fill both whatever the flags */
  if (x->dtype == FBX_DTYPE_FLOAT16)
    return fbx_kernel_error(ctx, "\"%s\" not implemented for 'Half'", has_dim ? "unique_dim" : "unique");
  int64_t d = 0;
  if (has_dim) {
    if (x->ndim == 0)
      return fbx_kernel_error(ctx, "Dimension specified as %" PRId64 " but tensor has no dimensions", dimarg);
    FBX_TRY(fbx_wrap_dim(ctx, &d, dimarg, x->ndim));
    for (int i = 0; i < x->ndim; i++)
      if (i != d && x->sizes[i] == 0)
        return fbx_kernel_error(ctx, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  }
  /* mv: self with d moved first (a view); n slices of width elements */
  int nd = x->ndim;
  int64_t ms[FBX_MAX_DIMS], mst[FBX_MAX_DIMS];
  int m = 0;
  if (has_dim) ms[m] = x->sizes[d], mst[m++] = x->strides[d];
  for (int i = 0; i < nd; i++)
    if (!has_dim || i != d) ms[m] = x->sizes[i], mst[m++] = x->strides[i];
  int64_t n = has_dim ? x->sizes[d] : x->numel, width = has_dim && n ? x->numel / n : 1;
  fbx_tensor *mv = NULL, *kc = NULL, *xs = NULL, *vals = NULL, *inv = NULL, *cnt = NULL;
  int64_t *order = NULL, *first = NULL, *invb = NULL, *cntb = NULL;
  bool ints = x->dtype == FBX_DTYPE_INT64;
  fbx_status *st = fbx_tensor_view(&mv, x, m, ms, mst, x->offset);
  if (!st) st = fbx_tensor_clone_as(&kc, mv, ints ? FBX_DTYPE_INT64 : FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&xs, mv, x->dtype);
  size_t nb = sizeof(int64_t) * (size_t)(n ? n : 1);
  if (!st && (!(order = fbx_malloc(nb)) || !(first = fbx_malloc(nb)) || !(invb = fbx_malloc(nb)) || !(cntb = fbx_malloc(nb))))
    st = fbx_status_nomem();
  int64_t k = 0;
  if (!st) {
    ukeys keys = {ints ? kc->data : NULL, ints ? NULL : kc->data, width};
    for (int64_t j = 0; j < n; j++) order[j] = j;
    if (sorting && n > 1) {
      sort_keys = &keys;
      qsort(order, (size_t)n, sizeof *order, cmp_pos);
      sort_keys = NULL;
    }
    k = group(&keys, order, n, first, invb, cntb);
  }
  /* values: the kept slices, [k, rest...], then with dim moved back */
  if (!st) {
    int64_t vs[FBX_MAX_DIMS];
    memcpy(vs, ms, sizeof(int64_t) * (size_t)m);
    if (has_dim) vs[0] = k;
    else vs[0] = k, m = 1; /* flat: [k] */
    st = fbx_tensor_empty(&vals, x->dtype, m, vs);
  }
  if (!st) {
    size_t row = fbx_dtype_size(x->dtype) * (size_t)width;
    for (int64_t g = 0; g < k; g++)
      memcpy((char *)vals->data + (size_t)g * row, (const char *)xs->data + (size_t)first[g] * row, row);
  }
  if (!st && has_dim && d != 0) { /* move dim 0 back to d: a contiguous copy in self's dim order */
    int64_t bs[FBX_MAX_DIMS], bst[FBX_MAX_DIMS];
    for (int i = 0, r = 1; i < nd; i++) {
      int src = i == d ? 0 : r++;
      bs[i] = vals->sizes[src], bst[i] = vals->strides[src];
    }
    fbx_tensor *bv = NULL, *bc = NULL;
    st = fbx_tensor_view(&bv, vals, nd, bs, bst, vals->offset);
    if (!st) st = fbx_tensor_clone_as(&bc, bv, x->dtype);
    fbx_tensor_release(bv);
    if (!st) {
      fbx_tensor_release(vals);
      vals = bc;
    }
  }
  /* inverse and counts */
  if (!st) {
    int64_t zero = 0;
    if (!want_inv) st = empty_long(&inv, 1, &zero);
    else if (has_dim) st = empty_long(&inv, 1, &n);
    else st = empty_long(&inv, nd, x->sizes);
    if (!st && want_inv) memcpy(inv->data, invb, sizeof(int64_t) * (size_t)n);
  }
  if (!st) {
    int64_t c = want_cnt ? k : 0;
    st = empty_long(&cnt, 1, &c);
    if (!st && want_cnt) memcpy(cnt->data, cntb, sizeof(int64_t) * (size_t)k);
  }
  fbx_free(order);
  fbx_free(first);
  fbx_free(invb);
  fbx_free(cntb);
  fbx_tensor_release(mv);
  fbx_tensor_release(kc);
  fbx_tensor_release(xs);
  if (st) {
    fbx_tensor_release(vals);
    fbx_tensor_release(inv);
    fbx_tensor_release(cnt);
    return st;
  }
  fbx_set_out_tensor(outs, 0, vals);
  fbx_set_out_tensor(outs, 1, inv);
  if (id == FBX_OP__unique) fbx_tensor_release(cnt);
  else fbx_set_out_tensor(outs, 2, cnt);
  return NULL;
}
