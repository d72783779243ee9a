/* Kernels for the shape-query and data-movement rows of ops/list_shape.h:
 * size, dim, numel, cat, stack, index_select. (clone shares its layout
 * logic with empty_like and lives in k_create.c.) Outputs are fresh
 * contiguous tensors. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kcompose.h"
#include "ops/kutil.h"
#include "ops/promote.h"

static const char *shape_str(char *buf, size_t n, int ndim, const int64_t *sizes) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, i ? ", " : "", sizes[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

/* ---- size / dim / numel ------------------------------------------------------------------- */

/* aten::size(Tensor self) -> int[] */
fbx_status *fbx_k_size(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  fbx_ivalue l;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_iv_list_new(&l, t->ndim));
  for (int i = 0; i < t->ndim; i++) {
    fbx_status *st = fbx_iv_list_push(&l, fbx_iv_int(t->sizes[i]));
    if (st) {
      fbx_iv_release(&l);
      return st;
    }
  }
  outs[0] = l;
  return NULL;
}

/* aten::size.int(Tensor self, int dim) -> int */
fbx_status *fbx_k_size_int(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d, dim = fbx_iv_to_int(&args[1]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0)
    return fbx_kernel_error(ctx, "dimension specified as %" PRId64 " but tensor has no dimensions", dim);
  FBX_TRY(fbx_wrap_dim(ctx, &d, dim, t->ndim));
  outs[0] = fbx_iv_int(t->sizes[d]);
  return NULL;
}

/* aten::dim(Tensor self) -> int */
fbx_status *fbx_k_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  outs[0] = fbx_iv_int(t->ndim);
  return NULL;
}

/* aten::numel(Tensor self) -> int */
fbx_status *fbx_k_numel(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  outs[0] = fbx_iv_int(t->numel);
  return NULL;
}

/* ---- cat / stack ------------------------------------------------------------------------ */

typedef struct concat_job {
  fbx_tensor *out;
  fbx_tensor **ts;
  int n;
  int64_t *chunk;      /* bytes per outer index for each input */
  int64_t row;         /* bytes per outer index in out */
} concat_job;

static void concat_body(void *p, int64_t begin, int64_t end) {
  concat_job *j = p;
  char *dst = (char *)j->out->data + begin * j->row;
  for (int64_t o = begin; o < end; o++)
    for (int i = 0; i < j->n; i++) {
      memcpy(dst, (const char *)j->ts[i]->data + o * j->chunk[i], (size_t)j->chunk[i]);
      dst += j->chunk[i];
    }
}

/* Fill out from ts along dim d. cat (stack false): input i covers
 * ts[i]->sizes[d] entries of dim d; stack: input i is entry i of dim d and
 * has no dim d itself. */
static fbx_status *concat_into(fbx_tensor *out, fbx_tensor **ts, int n, int d, bool stack) {
  int64_t inner = 1, outer = 1;
  for (int k = 0; k < d; k++) outer *= out->sizes[k];
  for (int k = d + 1; k < out->ndim; k++) inner *= out->sizes[k];
  if (out->numel == 0) return NULL;
  bool fast = true;
  for (int i = 0; i < n && fast; i++) fast = ts[i]->dtype == out->dtype && fbx_tensor_is_contiguous(ts[i]);
  if (fast) {
    int64_t es = (int64_t)fbx_dtype_size(out->dtype), small[16], *chunk = small;
    if (n > 16 && !(chunk = fbx_malloc(sizeof *chunk * (size_t)n))) return fbx_status_nomem();
    for (int i = 0; i < n; i++) chunk[i] = (stack ? 1 : ts[i]->sizes[d]) * inner * es;
    concat_job j = {out, ts, n, chunk, (stack ? n : out->sizes[d]) * inner * es};
    int64_t grain = j.row > 0 ? 1 + (1 << 18) / j.row : outer;
    fbx_parallel_for(outer, grain, concat_body, &j);
    if (chunk != small) fbx_free(chunk);
    return NULL;
  }
  int64_t start = 0;
  for (int i = 0; i < n; i++) {
    fbx_tensor *t = ts[i], *v = NULL;
    int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < out->ndim; k++) {
      if (k == d && stack) continue;
      sizes[nd] = k == d ? t->sizes[d] : out->sizes[k];
      strides[nd++] = out->strides[k];
    }
    int64_t len = stack ? 1 : t->sizes[d];
    if (len > 0 && t->numel > 0) {
      FBX_TRY(fbx_tensor_view(&v, out, nd, sizes, strides, out->offset + start * out->strides[d]));
      fbx_status *st = fbx_tensor_copy_(v, t);
      fbx_tensor_release(v);
      if (st) return st;
    }
    start += len;
  }
  return NULL;
}

/* aten::cat(Tensor[] tensors, int dim=0) -> Tensor
 * dtype: promote_types over all inputs; 1-D empty tensors (legacy "no
 * value") are skipped for shape checks, as in PyTorch. */
static fbx_status *cat_impl(fbx_kctx *ctx, fbx_tensor **ts, int n, int64_t dim, fbx_ivalue *outs) {
  char a[256], b[256];
  fbx_dtype dt = ts[0]->dtype;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 0) return fbx_kernel_error(ctx, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
    dt = fbx_promote_types(dt, ts[i]->dtype);
  }
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 1 && ts[i]->sizes[0] == 0) continue;
    ts[kept++] = ts[i]; /* compact in place: ts is our own array */
  }
  int64_t sizes[FBX_MAX_DIMS], d = 0;
  int nd = 1;
  sizes[0] = 0;
  if (kept > 0) {
    const fbx_tensor *r = ts[0];
    nd = r->ndim;
    FBX_TRY(fbx_wrap_dim(ctx, &d, dim, nd));
    memcpy(sizes, r->sizes, sizeof sizes);
    sizes[d] = 0;
    for (int i = 0; i < kept; i++) {
      const fbx_tensor *t = ts[i];
      if (t->ndim != nd)
        return fbx_kernel_error(ctx, "Tensors must have same number of dimensions: got %d and %d", nd, t->ndim);
      for (int k = 0; k < nd; k++)
        if (k != d && t->sizes[k] != r->sizes[k])
          return fbx_kernel_error(ctx, "Sizes of tensors must match except in dimension %d. Expected size %" PRId64
                                  " but got size %" PRId64 " for tensor number %d in the list (sizes %s and %s).",
                                  (int)d, r->sizes[k], t->sizes[k], i, shape_str(a, sizeof a, nd, r->sizes),
                                  shape_str(b, sizeof b, t->ndim, t->sizes));
      FBX_TRY(fbx_size_add(ctx, sizes[d], t->sizes[d], &sizes[d], "cat"));
    }
  }
  fbx_tensor *out = NULL;
  FBX_TRY(fbx_tensor_empty(&out, dt, nd, sizes));
  fbx_status *st = concat_into(out, ts, kept, (int)d, false);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

fbx_status *fbx_k_cat(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &ts, &n, "torch.cat(): expected a non-empty list of Tensors"));
  fbx_status *st = cat_impl(ctx, ts, n, fbx_iv_to_int(&args[1]), outs);
  fbx_free(ts);
  return st;
}

/* aten::stack(Tensor[] tensors, int dim=0) -> Tensor */
fbx_status *fbx_k_stack(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **ts = NULL, *out = NULL;
  int n = 0;
  char a[256], b[256];
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &ts, &n, "stack expects a non-empty TensorList"));
  fbx_status *st = NULL;
  int64_t d = 0, sizes[FBX_MAX_DIMS];
  fbx_dtype dt = ts[0]->dtype;
  int nd = ts[0]->ndim + 1;
  if (nd > FBX_MAX_DIMS) st = fbx_kernel_error(ctx, "at most %d dims are supported", FBX_MAX_DIMS);
  if (!st) st = fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), nd);
  for (int i = 0; i < n && !st; i++) {
    if (!fbx_tensor_same_shape(ts[i], ts[0]))
      st = fbx_kernel_error(ctx, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
                            shape_str(a, sizeof a, ts[0]->ndim, ts[0]->sizes),
                            shape_str(b, sizeof b, ts[i]->ndim, ts[i]->sizes), i);
    dt = fbx_promote_types(dt, ts[i]->dtype);
  }
  if (!st) {
    for (int k = 0, j = 0; k < nd; k++) sizes[k] = k == d ? n : ts[0]->sizes[j++];
    st = fbx_tensor_empty(&out, dt, nd, sizes);
  }
  if (!st) st = concat_into(out, ts, n, (int)d, true);
  fbx_free(ts);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- index_select ----------------------------------------------------------------------- */

typedef struct gather_job {
  const char *src;
  char *dst;
  const int64_t *idx;
  int64_t nidx, dimsize, inner_bytes;
} gather_job;

static void gather_body(void *p, int64_t begin, int64_t end) {
  gather_job *j = p;
  for (int64_t r = begin; r < end; r++) {
    int64_t o = r / j->nidx, k = r % j->nidx;
    memcpy(j->dst + r * j->inner_bytes, j->src + (o * j->dimsize + j->idx[k]) * j->inner_bytes,
           (size_t)j->inner_bytes);
  }
}

/* aten::index_select(Tensor self, int dim, Tensor index) -> Tensor */
fbx_status *fbx_k_index_select(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *index;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &index));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  if (index->ndim > 1) return fbx_kernel_error(ctx, "index_select(): Index is supposed to be a vector, got %d dims", index->ndim);
  if (index->dtype != FBX_DTYPE_INT64 && index->dtype != FBX_DTYPE_INT32)
    return fbx_kernel_error(ctx, "index_select(): Expected dtype int32 or int64 for index, got %s",
                            fbx_dtype_name(index->dtype));
  int64_t nidx = index->numel, dimsize = t->ndim ? t->sizes[d] : 1;
  if (t->ndim == 0 && nidx != 1)
    return fbx_kernel_error(ctx, "index_select(): Index to scalar can have only 1 value, got %" PRId64 " value(s)", nidx);
  int64_t *idx = fbx_malloc(sizeof *idx * (size_t)(nidx ? nidx : 1));
  if (!idx) return fbx_status_nomem();
  for (int64_t k = 0; k < nidx; k++) {
    idx[k] = fbx_tensor_get_i64(index, k);
    if (idx[k] < 0 || idx[k] >= dimsize) {
      char buf[256];
      int64_t bad = idx[k];
      fbx_free(idx);
      return fbx_kernel_error(ctx, "index %" PRId64 " is out of range for dimension %d with size %" PRId64
                              " (self sizes %s; index out of range in self)", bad, (int)d, dimsize,
                              shape_str(buf, sizeof buf, t->ndim, t->sizes));
    }
  }
  int64_t sizes[FBX_MAX_DIMS];
  memcpy(sizes, t->sizes, sizeof sizes);
  if (t->ndim) sizes[d] = nidx;
  fbx_tensor *src = NULL, *out = NULL;
  fbx_status *st = fbx_tensor_contiguous(&src, t);
  if (!st) st = fbx_tensor_empty(&out, t->dtype, t->ndim, sizes);
  if (!st && out->numel > 0) {
    int64_t inner = 1, outer = 1;
    for (int k = 0; k < d; k++) outer *= t->sizes[k];
    for (int k = (int)d + 1; k < t->ndim; k++) inner *= t->sizes[k];
    gather_job j = {src->data, out->data, idx, nidx, dimsize, inner * (int64_t)fbx_dtype_size(t->dtype)};
    fbx_parallel_for(outer * nidx, 1 + (1 << 16) / (j.inner_bytes ? j.inner_bytes : 1), gather_body, &j);
  }
  fbx_free(idx);
  fbx_tensor_release(src);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- hstack / vstack / dstack / column_stack ------------------------------------------------ */

/* aten::hstack / vstack / dstack / column_stack(Tensor[] tensors) -> Tensor:
 * cat of the tensors made atleast_1d (hstack: along dim 0 when the first is
 * then 1-d, else 1), atleast_2d (vstack, dim 0), atleast_3d (dstack, dim
 * 2), or for column_stack 0-d and 1-d tensors as [numel, 1] columns, dim 1. */
fbx_status *fbx_k_hvdstack(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int id = ctx->op->id;
  const char *nm = id == FBX_OP_hstack ? "hstack" : id == FBX_OP_vstack ? "vstack" : id == FBX_OP_dstack ? "dstack"
                                                                                                       : "column_stack";
  char msg[64];
  snprintf(msg, sizeof msg, "%s expects a non-empty TensorList", nm);
  fbx_tensor **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &ts, &n, msg));
  fbx_tensor **own = fbx_calloc((size_t)n, sizeof *own);
  fbx_status *st = own ? NULL : fbx_status_nomem();
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *t = ts[i];
    if (id == FBX_OP_column_stack) {
      if (t->ndim <= 1) {
        int64_t sizes[2] = {t->numel, 1}, strides[2] = {t->ndim ? t->strides[0] : 1, 1};
        st = fbx_tensor_view(&own[i], t, 2, sizes, strides, t->offset);
      } else {
        own[i] = fbx_tensor_retain(t);
      }
    } else {
      fbx_op_id a = id == FBX_OP_hstack ? FBX_OP_atleast_1d : id == FBX_OP_vstack ? FBX_OP_atleast_2d : FBX_OP_atleast_3d;
      st = fbx_row_tensor(ctx, &own[i], a, (fbx_ivalue[]){TV(t)}, 1);
    }
    if (!st) ts[i] = own[i];
  }
  if (!st) {
    int64_t dim = id == FBX_OP_vstack ? 0 : id == FBX_OP_dstack ? 2 : 1;
    if (id == FBX_OP_hstack && ts[0]->ndim == 1) dim = 0;
    st = cat_impl(ctx, ts, n, dim, outs);
  }
  if (own) release_all(own, n);
  fbx_free(own);
  fbx_free(ts);
  return st;
}

/* ---- flipud / fliplr / rot90 ------------------------------------------------------------------ */

/* flip(x, dims) in x's layout (PyTorch's flip keeps it, as empty_like does:
 * a transposed input gives a transposed result). */
static fbx_status *flip_dims(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x, int n, const int64_t *dims) {
  fbx_ivalue l = fbx_iv_none();
  fbx_tensor *f = NULL, *o = NULL;
  fbx_status *st = fbx_int_list_iv(&l, n, dims);
  if (!st) st = ROW(&f, flip, TV(x), l);
  fbx_iv_release(&l);
  if (st || fbx_tensor_is_contiguous(x)) {
    *out = f;
    return st;
  }
  st = ROW(&o, empty_like, TV(x));
  if (!st) st = fbx_tensor_copy_(o, f);
  fbx_tensor_release(f);
  if (st) fbx_tensor_release(o);
  else *out = o;
  return st;
}

/* aten::flipud(Tensor self) -> Tensor (dim 0, >= 1-d) and aten::fliplr (dim 1, >= 2-d) */
fbx_status *fbx_k_flipud_lr(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t d = ctx->op->id == FBX_OP_fliplr;
  if (x->ndim < d + 1) return fbx_kernel_error(ctx, "Input must be >= %d-d.", (int)d + 1);
  fbx_status *st = flip_dims(ctx, &out, x, 1, &d);
  return finish(st, outs, &out);
}

/* aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor: as
 * PyTorch: k mod 4 = 1 flips dims[1] then transposes (a transposed view of
 * the flipped copy), 2 flips both, 3 flips dims[0] then transposes, 0 is a
 * contiguous copy. */
fbx_status *fbx_k_rot90(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *f = NULL, *out = NULL;
  int64_t dims[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t k = fbx_iv_to_int(&args[1]);
  int nd = fbx_arg_int_list(ctx->op, 2, &args[2], dims, FBX_MAX_DIMS, &st);
  if (nd < 0) return st;
  int64_t total = x->ndim;
  if (nd != 2) return fbx_kernel_error(ctx, "expected total rotation dims == 2, but got dims = %d", nd);
  if (total < 2) return fbx_kernel_error(ctx, "expected total dims >= 2, but got total dims = %d", x->ndim);
  if (dims[0] == dims[1] || (dims[0] - dims[1] == total || dims[1] - dims[0] == total))
    return fbx_kernel_error(ctx, "expected rotation dims to be different, but got dim0 = %" PRId64 " and dim1 = %" PRId64,
                            dims[0], dims[1]);
  for (int i = 0; i < 2; i++)
    if (dims[i] >= total || dims[i] < -total)
      return fbx_kernel_error(ctx, "Rotation dim%d out of range, dim%d = %" PRId64, i, i, dims[i]);
  k = (4 + k % 4) % 4;
  if (k == 0) {
    FBX_TRY(fbx_tensor_empty(&out, x->dtype, x->ndim, x->sizes));
    st = fbx_tensor_copy_(out, x);
    return finish(st, outs, &out);
  }
  if (k == 2) return finish(flip_dims(ctx, &out, x, 2, dims), outs, &out);
  st = flip_dims(ctx, &f, x, 1, &dims[k == 1 ? 1 : 0]);
  if (!st) st = ROW(&out, transpose_int, TV(f), IV(dims[0]), IV(dims[1]));
  fbx_tensor_release(f);
  return finish(st, outs, &out);
}

/* ---- diff --------------------------------------------------------------------------------- */

/* aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor:
 * as PyTorch, prepend and append are concatenated along dim (unless n is 0,
 * which copies self), then n (at most the size) times x[1:] - x[:-1]
 * (logical_xor for bool). */
fbx_status *fbx_k_diff(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *pre = NULL, *app = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t n = fbx_iv_to_int(&args[1]), d;
  if (x->ndim < 1) return fbx_kernel_error(ctx, "diff expects input to be at least one-dimensional");
  if (n < 0) return fbx_kernel_error(ctx, "order must be non-negative but got %" PRId64, n);
  if (args[3].kind != FBX_IV_NONE) FBX_TRY(fbx_arg_tensor(ctx, args, 3, &pre));
  if (args[4].kind != FBX_IV_NONE) FBX_TRY(fbx_arg_tensor(ctx, args, 4, &app));
  if ((pre && pre->ndim != x->ndim) || (app && app->ndim != x->ndim))
    return fbx_kernel_error(ctx, "diff expects prepend or append to be the same dimension as input");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), x->ndim));
  fbx_tensor *cur = NULL;
  fbx_status *st = NULL;
  if (n == 0) {
    FBX_TRY(fbx_tensor_empty(&cur, x->dtype, x->ndim, x->sizes));
    return finish(fbx_tensor_copy_(cur, x), outs, &cur);
  }
  if (pre || app) {
    fbx_tensor *parts[3];
    int k = 0;
    if (pre) parts[k++] = pre;
    parts[k++] = x;
    if (app) parts[k++] = app;
    fbx_ivalue r[1] = {fbx_iv_none()};
    st = cat_impl(ctx, parts, k, d, r);
    if (st) return st;
    cur = r[0].u.t;
  } else {
    cur = fbx_tensor_retain(x);
  }
  int64_t len = cur->sizes[d];
  if (n > len) n = len;
  for (int64_t i = 0; i < n && !st; i++) {
    fbx_tensor *a = NULL, *b = NULL, *next = NULL;
    len--;
    st = ROW(&a, narrow, TV(cur), IV(d), IV(1), IV(len));
    if (!st) st = ROW(&b, narrow, TV(cur), IV(d), IV(0), IV(len));
    if (!st && cur->dtype == FBX_DTYPE_BOOL) st = ROW(&next, logical_xor, TV(a), TV(b));
    else if (!st) st = ROW(&next, sub_Tensor, TV(a), TV(b), IV(1));
    if (!st && i + 1 == n && !fbx_tensor_is_contiguous(a)) {
      /* PyTorch's result follows its operand's layout (TensorIterator): a
       * transposed input gives a transposed result */
      fbx_tensor *o = NULL;
      st = ROW(&o, empty_like, TV(a));
      if (!st) st = fbx_tensor_copy_(o, next);
      fbx_tensor_release(next);
      next = st ? NULL : o;
      if (st) fbx_tensor_release(o);
    }
    fbx_tensor_release(a);
    fbx_tensor_release(b);
    if (!st) {
      fbx_tensor_release(cur);
      cur = next;
    }
  }
  if (!st && n == 0) { /* an empty dim: a copy, never self */
    fbx_tensor *c = NULL;
    st = fbx_tensor_clone_as(&c, cur, cur->dtype);
    fbx_tensor_release(cur);
    cur = c;
  }
  return finish(fbx_row_own_error(ctx, st), outs, &cur);
}

/* ---- kron ---------------------------------------------------------------------------------- */

/* aten::kron(Tensor self, Tensor other) -> Tensor: both padded with leading
 * 1s to the same rank r, self viewed as [a0, 1, a1, 1, ...], other as
 * [1, b0, 1, b1, ...], multiplied (promotion and broadcasting of mul) and
 * reshaped to [a0 * b0, a1 * b1, ...]. */
fbx_status *fbx_k_kron(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  int r = a->ndim > b->ndim ? a->ndim : b->ndim, pa = r - a->ndim, pb = r - b->ndim;
  if (2 * r > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "kron of %d-d tensors: at most %d dims", r, FBX_MAX_DIMS / 2);
  int64_t as[FBX_MAX_DIMS], bs[FBX_MAX_DIMS], rs[FBX_MAX_DIMS];
  for (int i = 0; i < r; i++) {
    as[2 * i] = i >= pa ? a->sizes[i - pa] : 1;
    as[2 * i + 1] = 1;
    bs[2 * i] = 1;
    bs[2 * i + 1] = i >= pb ? b->sizes[i - pb] : 1;
    rs[i] = as[2 * i] * bs[2 * i + 1];
  }
  fbx_ivalue la = fbx_iv_none(), lb = fbx_iv_none(), lr = fbx_iv_none();
  fbx_tensor *va = NULL, *vb = NULL, *m = NULL, *out = NULL;
  fbx_status *st = fbx_int_list_iv(&la, 2 * r, as);
  if (!st) st = fbx_int_list_iv(&lb, 2 * r, bs);
  if (!st) st = fbx_int_list_iv(&lr, r, rs);
  if (!st) st = ROW(&va, reshape, TV(a), la);
  if (!st) st = ROW(&vb, reshape, TV(b), lb);
  if (!st) st = ROW(&m, mul_Tensor, TV(va), TV(vb));
  if (!st) st = ROW(&out, reshape, TV(m), lr);
  fbx_iv_release(&la);
  fbx_iv_release(&lb);
  fbx_iv_release(&lr);
  fbx_tensor_release(va);
  fbx_tensor_release(vb);
  fbx_tensor_release(m);
  return finish(fbx_row_own_error(ctx, st), outs, &out);
}

/* ---- unfold_backward ----------------------------------------------------------------------- */

/* aten::unfold_backward(Tensor grad_in, int[] input_sizes, int dim, int size, int step) -> Tensor:
 * the gradient of unfold: zeros of input_sizes, each window's gradient
 * added where the window came from (windows overlap when step < size).
 * Accumulated in double, stored in grad_in's dtype. */
fbx_status *fbx_k_unfold_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *out = NULL;
  int64_t sizes[FBX_MAX_DIMS], d = 0;
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  int nd = fbx_arg_int_list(ctx->op, 1, &args[1], sizes, FBX_MAX_DIMS, &st);
  if (nd < 0) return st;
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), nd));
  int64_t size = fbx_iv_to_int(&args[3]), step = fbx_iv_to_int(&args[4]);
  int64_t len = nd ? sizes[d] : 1;
  if (step <= 0 || size < 0 || size > len) return fbx_kernel_error(ctx, "bad unfold geometry (size %" PRId64 ", step %" PRId64 ")", size, step);
  int64_t nwin = (len - size) / step + 1;
  bool ok = g->ndim == nd + 1 && g->sizes[nd] == size && (nd == 0 || g->sizes[d] == nwin);
  for (int k = 0; ok && k < nd; k++) ok = k == d || g->sizes[k] == sizes[k];
  if (!ok) return fbx_kernel_error(ctx, "grad_in's sizes do not match unfold's output for input_sizes");
  FBX_TRY(fbx_tensor_zeros(&out, g->dtype, nd, sizes));
  if (g->numel == 0) return finish(NULL, outs, &out);
  double *acc = fbx_calloc((size_t)out->numel, sizeof *acc);
  if (!acc) return finish(fbx_status_nomem(), outs, &out);
  for (int64_t i = 0; i < g->numel; i++) {
    /* grad coordinates: (outer..., w at d, rest..., j); input index at d is w * step + j */
    int64_t j = i % size, rest = i / size, pos = 0, mul = 1;
    for (int k = nd - 1; k >= 0; k--) {
      int64_t gk = g->sizes[k], c = rest % gk;
      rest /= gk;
      if (k == d) c = c * step + j;
      pos += c * mul;
      mul *= sizes[k];
    }
    if (nd == 0) pos = 0;
    acc[pos] += fbx_tensor_get_f64(g, i);
  }
  for (int64_t i = 0; i < out->numel; i++) fbx_tensor_set_f64(out, i, acc[i]);
  fbx_free(acc);
  return finish(NULL, outs, &out);
}

/* ---- gradient helpers of diff and kron (autodiff/formulas_shape.h) -------------------------- */

/* The pad list of constant_pad_nd that adds `before` and `after` entries
 * to dim d of an nd-dim tensor. */
static fbx_status *pad_dim(fbx_ivalue *l, int nd, int64_t d, int64_t before, int64_t after) {
  int64_t p[2 * FBX_MAX_DIMS] = {0};
  int np = 2 * (nd - (int)d);
  p[np - 2] = before;
  p[np - 1] = after;
  return fbx_int_list_iv(l, np, p);
}

/* fusebox::diff_backward(Tensor grad, Tensor self, int n, int dim, Tensor? prepend, Tensor? append, int part) -> Tensor
 * diff's gradient for one of its tensors (part 0 self, 1 prepend, 2
 * append): the adjoint of x -> x[1:] - x[:-1], (g padded before) - (g
 * padded after), applied as often as the forward differenced the
 * concatenation along dim, then that tensor's slice of it. n = 0 passes
 * grad to self and nothing to prepend/append (diff ignores them then). */
fbx_status *fbx_k_diff_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *pre = NULL, *app = NULL, *cur = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  if (args[4].kind != FBX_IV_NONE) FBX_TRY(fbx_arg_tensor(ctx, args, 4, &pre));
  if (args[5].kind != FBX_IV_NONE) FBX_TRY(fbx_arg_tensor(ctx, args, 5, &app));
  int64_t n = fbx_iv_to_int(&args[2]), part = fbx_iv_to_int(&args[6]), d;
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[3]), x->ndim));
  fbx_tensor *want = part == 0 ? x : part == 1 ? pre : app;
  if (!want || x->ndim == 0) return fbx_kernel_error(ctx, "no such part %" PRId64, part);
  if (n <= 0) {
    if (part == 0) return finish(fbx_tensor_clone_as(&out, g, g->dtype), outs, &out);
    return finish(ROW(&out, zeros_like, TV(want)), outs, &out);
  }
  int64_t lp = pre ? pre->sizes[d] : 0, lx = x->sizes[d], la = app ? app->sizes[d] : 0, len = lp + lx + la;
  if (n > len) n = len;
  fbx_status *st = NULL;
  cur = fbx_tensor_retain(g);
  for (int64_t i = 0; i < n && !st; i++) {
    fbx_ivalue l1 = fbx_iv_none(), l2 = fbx_iv_none();
    fbx_tensor *a = NULL, *b = NULL, *next = NULL;
    st = pad_dim(&l1, x->ndim, d, 1, 0);
    if (!st) st = pad_dim(&l2, x->ndim, d, 0, 1);
    if (!st) st = ROW(&a, constant_pad_nd, TV(cur), l1, IV(0));
    if (!st) st = ROW(&b, constant_pad_nd, TV(cur), l2, IV(0));
    if (!st) st = ROW(&next, sub_Tensor, TV(a), TV(b), IV(1));
    fbx_iv_release(&l1);
    fbx_iv_release(&l2);
    fbx_tensor_release(a);
    fbx_tensor_release(b);
    fbx_tensor_release(cur);
    cur = next;
  }
  int64_t start = part == 0 ? lp : part == 1 ? 0 : lp + lx, length = part == 0 ? lx : part == 1 ? lp : la;
  if (!st && cur->sizes[d] != len) st = fbx_kernel_error(ctx, "grad's size %" PRId64 " at dim %d does not match", cur->sizes[d], (int)d);
  fbx_tensor *v = NULL;
  if (!st) st = ROW(&v, narrow, TV(cur), IV(d), IV(start), IV(length));
  if (!st) st = fbx_tensor_clone_as(&out, v, v->dtype);
  fbx_tensor_release(v);
  fbx_tensor_release(cur);
  return finish(st, outs, &out);
}

/* fusebox::kron_backward(Tensor grad, Tensor self, Tensor other, int which) -> Tensor
 * kron's gradient for self (which 0) or other (1): grad viewed as
 * [a0, b0, a1, b1, ...], times the other operand viewed as in the forward,
 * summed over the other operand's dims and reshaped to the operand's sizes. */
fbx_status *fbx_k_kron_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *a, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  int which = fbx_iv_to_int(&args[3]) != 0;
  int r = a->ndim > b->ndim ? a->ndim : b->ndim, pa = r - a->ndim, pb = r - b->ndim;
  if (2 * r > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "at most %d dims", FBX_MAX_DIMS / 2);
  int64_t gs[FBX_MAX_DIMS], os[FBX_MAX_DIMS], sumd[FBX_MAX_DIMS], ws[FBX_MAX_DIMS];
  for (int i = 0; i < r; i++) {
    int64_t ai = i >= pa ? a->sizes[i - pa] : 1, bi = i >= pb ? b->sizes[i - pb] : 1;
    gs[2 * i] = ai, gs[2 * i + 1] = bi;
    os[2 * i] = which ? ai : 1, os[2 * i + 1] = which ? 1 : bi;
    sumd[i] = 2 * i + (which ? 0 : 1);
  }
  fbx_tensor *w = which ? a : b, *t = which ? b : a;
  for (int i = 0; i < t->ndim; i++) ws[i] = t->sizes[i];
  fbx_ivalue lg = fbx_iv_none(), lo = fbx_iv_none(), ls = fbx_iv_none(), lw = fbx_iv_none();
  fbx_tensor *gv = NULL, *ov = NULL, *m = NULL, *s = NULL, *out = NULL;
  fbx_status *st = fbx_int_list_iv(&lg, 2 * r, gs);
  if (!st) st = fbx_int_list_iv(&lo, 2 * r, os);
  if (!st) st = fbx_int_list_iv(&ls, r, sumd);
  if (!st) st = fbx_int_list_iv(&lw, t->ndim, ws);
  if (!st) st = ROW(&gv, reshape, TV(g), lg);
  if (!st) st = ROW(&ov, reshape, TV(w), lo);
  if (!st) st = ROW(&m, mul_Tensor, TV(gv), TV(ov));
  if (!st) st = ROW(&s, sum_dim_IntList, TV(m), ls, BV(false), NV);
  if (!st) st = ROW(&out, reshape, TV(s), lw);
  fbx_iv_release(&lg);
  fbx_iv_release(&lo);
  fbx_iv_release(&ls);
  fbx_iv_release(&lw);
  fbx_tensor_release(gv);
  fbx_tensor_release(ov);
  fbx_tensor_release(m);
  fbx_tensor_release(s);
  if (!st && out->storage == g->storage) { /* a reshape of grad itself: give a copy */
    fbx_tensor *c = NULL;
    st = fbx_tensor_clone_as(&c, out, out->dtype);
    fbx_tensor_release(out);
    out = c;
  }
  return finish(st, outs, &out);
}

/* fusebox::stack_like_backward(Tensor grad, Tensor[] tensors, str op) -> Tensor[]
 * The gradient of hstack/vstack/dstack/column_stack (op) for each tensor:
 * its slice of grad along the concatenation dim, as the forward laid it
 * out, reshaped to the tensor's own sizes (a copy) and, for a floating
 * tensor, converted to its dtype. */
fbx_status *fbx_k_stack_like_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[1], &ts, &n, "expected a non-empty TensorList"));
  const char *op = fbx_iv_str_data(&args[2]);
  int want = !op ? 0 : !strcmp(op, "hstack") ? 1 : !strcmp(op, "vstack") ? 2 : !strcmp(op, "dstack") ? 3 : !strcmp(op, "column_stack") ? 4 : 0;
  if (!want) {
    fbx_free(ts);
    return fbx_kernel_error(ctx, "unknown op '%s'", op ? op : "?");
  }
  /* the dim and each tensor's length along it, as the forward saw them */
  int64_t dim = want == 2 ? 0 : want == 3 ? 2 : 1;
  if (want == 1 && ts[0]->ndim <= 1) dim = 0;
  fbx_ivalue l = fbx_iv_none();
  fbx_status *st = fbx_iv_list_new(&l, n);
  if (!st && (dim >= g->ndim)) st = fbx_kernel_error(ctx, "grad has %d dims", g->ndim);
  int64_t off = 0;
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *t = ts[i], *v = NULL, *r = NULL;
    int64_t len;
    if (want == 4) len = t->ndim > 1 ? t->sizes[1] : 1;
    else if (want == 1) len = t->ndim == 0 ? 1 : t->sizes[dim < t->ndim ? dim : 0];
    else if (want == 2) len = t->ndim <= 1 ? 1 : t->sizes[0];
    else len = t->ndim <= 2 ? 1 : t->sizes[2];
    if (off + len > g->sizes[dim]) st = fbx_kernel_error(ctx, "grad is too short for the tensors");
    if (!st) st = ROW(&v, narrow, TV(g), IV(dim), IV(off), IV(len));
    if (!st) st = fbx_tensor_clone_as(&r, v, fbx_dtype_is_floating(t->dtype) ? t->dtype : g->dtype);
    if (!st && r->numel != t->numel) st = fbx_kernel_error(ctx, "grad slice %d does not match its tensor", i);
    fbx_tensor_release(v);
    fbx_tensor *w = NULL;
    if (!st) st = fbx_tensor_view(&w, r, t->ndim, t->sizes, NULL, r->offset);
    fbx_tensor_release(r);
    if (!st) {
      st = fbx_iv_list_push(&l, fbx_iv_tensor(w));
      if (st) fbx_tensor_release(w);
    }
    off += len;
  }
  fbx_free(ts);
  if (st) {
    fbx_iv_release(&l);
    return st;
  }
  outs[0] = l;
  return NULL;
}

/* fusebox::reshape_each_backward(Tensor[] grads, Tensor[] tensors) -> Tensor[]
 * The gradient of atleast_{1,2,3}d.Sequence: grads[i] (a copy) in
 * tensors[i]'s sizes. */
fbx_status *fbx_k_reshape_each_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **gs = NULL, **ts = NULL;
  int n = 0, m = 0;
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &gs, &n, "expected a non-empty list of gradients"));
  fbx_status *st = fbx_arg_tensor_list(ctx, &args[1], &ts, &m, "expected a non-empty TensorList");
  if (!st && n != m) st = fbx_kernel_error(ctx, "%d gradients for %d tensors", n, m);
  fbx_ivalue l = fbx_iv_none();
  if (!st) st = fbx_iv_list_new(&l, n);
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *c = NULL, *v = NULL;
    if (gs[i]->numel != ts[i]->numel) st = fbx_kernel_error(ctx, "gradient %d has %" PRId64 " elements, its tensor %" PRId64,
                                                            i, gs[i]->numel, ts[i]->numel);
    if (!st) st = fbx_tensor_clone_as(&c, gs[i], gs[i]->dtype);
    if (!st) st = fbx_tensor_view(&v, c, ts[i]->ndim, ts[i]->sizes, NULL, c->offset);
    fbx_tensor_release(c);
    if (!st) {
      st = fbx_iv_list_push(&l, fbx_iv_tensor(v));
      if (st) fbx_tensor_release(v);
    }
  }
  fbx_free(gs);
  fbx_free(ts);
  if (st) {
    fbx_iv_release(&l);
    return st;
  }
  outs[0] = l;
  return NULL;
}

/* ---- block_diag / cartesian_prod / combinations / channel_shuffle --------------------------- */

/* t as the 2-d block block_diag lays out: 0-d as [1, 1], 1-d [n] as a row [1, n]. */
static fbx_status *as_block(fbx_tensor **out, fbx_tensor *t) {
  if (t->ndim == 2) {
    *out = fbx_tensor_retain(t);
    return NULL;
  }
  int64_t sizes[2] = {1, t->ndim ? t->sizes[0] : 1}, strides[2] = {0, t->ndim ? t->strides[0] : 0};
  return fbx_tensor_view(out, t, 2, sizes, strides, t->offset);
}

/* aten::block_diag(Tensor[] tensors) -> Tensor: the tensors (promoted to one
 * dtype) as the diagonal blocks of a zero matrix. An empty list gives a
 * [1, 0] float tensor, as PyTorch's. */
fbx_status *fbx_k_block_diag(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind == FBX_IV_LIST && fbx_iv_list_len(&args[0]) == 0) {
    fbx_tensor *e = NULL;
    FBX_TRY(fbx_tensor_empty(&e, FBX_DTYPE_FLOAT32, 2, (int64_t[]){1, 0}));
    fbx_set_out_tensor(outs, 0, e);
    return NULL;
  }
  fbx_tensor **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &ts, &n, "expected a list of tensors"));
  fbx_dtype dt = ts[0]->dtype;
  int64_t rows = 0, cols = 0;
  fbx_status *st = NULL;
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *t = ts[i];
    if (t->ndim > 2) {
      st = fbx_kernel_error(ctx,
                            "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions",
                            i, t->ndim);
      break;
    }
    dt = fbx_promote_types(dt, t->dtype);
    st = fbx_size_add(ctx, rows, t->ndim == 2 ? t->sizes[0] : 1, &rows, "block_diag");
    if (!st) st = fbx_size_add(ctx, cols, t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1, &cols, "block_diag");
  }
  fbx_tensor *out = NULL;
  if (!st) st = fbx_tensor_zeros(&out, dt, 2, (int64_t[]){rows, cols});
  int64_t r0 = 0, c0 = 0;
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *b = NULL, *o = NULL;
    st = as_block(&b, ts[i]);
    if (!st) st = fbx_tensor_view(&o, out, 2, b->sizes, (int64_t[]){cols, 1}, r0 * cols + c0);
    if (!st) st = fbx_tensor_copy_(o, b);
    if (b) r0 += b->sizes[0], c0 += b->sizes[1];
    fbx_tensor_release(b);
    fbx_tensor_release(o);
  }
  fbx_free(ts);
  return finish(st, outs, &out);
}

/* Checks shared by cartesian_prod and its gradient: 1-d tensors of one
 * dtype, in PyTorch's order (the 1-d check first, then meshgrid's). */
static fbx_status *cartesian_check(fbx_kctx *ctx, const fbx_ivalue *arg, fbx_tensor ***ts, int *n) {
  if (arg->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors, got %s", fbx_iv_kind_name(arg->kind));
  int k = fbx_iv_list_len(arg);
  for (int i = 0; i < k; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(arg, i);
    if (e->kind == FBX_IV_TENSOR && e->u.t->ndim != 1) {
      char b[256];
      return fbx_kernel_error(ctx, "Expect a 1D vector, but got shape %s", shape_str(b, sizeof b, e->u.t->ndim, e->u.t->sizes));
    }
  }
  FBX_TRY(fbx_arg_tensor_list(ctx, arg, ts, n, "meshgrid expects a non-empty TensorList"));
  for (int i = 1; i < *n; i++)
    if ((*ts)[i]->dtype != (*ts)[0]->dtype) {
      fbx_free(*ts);
      return fbx_kernel_error(ctx, "meshgrid expects all tensors to have the same dtype");
    }
  if (*n > FBX_MAX_DIMS) {
    fbx_free(*ts);
    return fbx_kernel_error(ctx, "cartesian_prod of %d tensors: at most %d", *n, FBX_MAX_DIMS);
  }
  return NULL;
}

/* aten::cartesian_prod(Tensor[] tensors) -> Tensor: [prod of lengths, n],
 * row k the k-th tuple in row-major order. One tensor comes back itself (as
 * PyTorch returns it). Each column is written as one strided copy: the
 * output column seen as an n-d grid, tensor i expanded along dim i. */
fbx_status *fbx_k_cartesian_prod(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **ts = NULL;
  int n = 0;
  FBX_TRY(cartesian_check(ctx, &args[0], &ts, &n));
  if (n == 1) {
    fbx_set_out_tensor(outs, 0, fbx_tensor_retain(ts[0]));
    fbx_free(ts);
    return NULL;
  }
  int64_t grid[FBX_MAX_DIMS], gstr[FBX_MAX_DIMS], total = 1;
  fbx_status *st = NULL;
  for (int i = 0; i < n && !st; i++) st = fbx_size_mul(ctx, total, grid[i] = ts[i]->sizes[0], &total, "cartesian_prod");
  fbx_tensor *out = NULL;
  if (!st) st = fbx_tensor_empty(&out, ts[0]->dtype, 2, (int64_t[]){total, n});
  if (!st) { /* the output's row strides over the grid */
    int64_t s = n;
    for (int i = n - 1; i >= 0; i--) gstr[i] = s, s *= grid[i] > 1 ? grid[i] : 1;
  }
  for (int i = 0; i < n && !st && total; i++) {
    int64_t istr[FBX_MAX_DIMS] = {0};
    istr[i] = ts[i]->strides[0];
    fbx_tensor *src = NULL, *dst = NULL;
    st = fbx_tensor_view(&src, ts[i], n, grid, istr, ts[i]->offset);
    if (!st) st = fbx_tensor_view(&dst, out, n, grid, gstr, i);
    if (!st) st = fbx_tensor_copy_(dst, src);
    fbx_tensor_release(src);
    fbx_tensor_release(dst);
  }
  fbx_free(ts);
  return finish(st, outs, &out);
}

/* The index tuples of combinations(arange(n), r, with_replacement), in
 * PyTorch's (lexicographic) order, into a fresh int64 [m * r] array. */
static fbx_status *combination_indices(fbx_kctx *ctx, int64_t n, int64_t r, bool rep, int64_t **out, int64_t *m) {
  /* m = C(n, r), or C(n + r - 1, r) with replacement, with checked products */
  int64_t top = rep ? n + r - 1 : n, cnt = 1;
  if (r > top) cnt = 0;
  for (int64_t k = 1; k <= r && cnt; k++) {
    /* cnt * (top - r + k) / k stays exact: cnt is C(top - r + k - 1, k - 1) */
    FBX_TRY(fbx_size_mul(ctx, cnt, top - r + k, &cnt, "combinations"));
    cnt /= k;
  }
  int64_t total;
  FBX_TRY(fbx_size_mul(ctx, cnt, r, &total, "combinations"));
  int64_t *idx = fbx_malloc(sizeof *idx * (size_t)(total ? total : 1));
  int64_t *cur = fbx_malloc(sizeof *cur * (size_t)(r ? r : 1));
  if (!idx || !cur) {
    fbx_free(idx);
    fbx_free(cur);
    return fbx_status_nomem();
  }
  if (cnt) {
    for (int64_t j = 0; j < r; j++) cur[j] = rep ? 0 : j;
    for (int64_t row = 0; row < cnt; row++) {
      memcpy(idx + row * r, cur, sizeof *cur * (size_t)r);
      /* advance: the last position that can still grow, the rest after it at their least */
      int64_t j = r - 1;
      while (j >= 0 && cur[j] == (rep ? n - 1 : n - r + j)) j--;
      if (j < 0) break;
      cur[j]++;
      for (int64_t k = j + 1; k < r; k++) cur[k] = rep ? cur[j] : cur[k - 1] + 1;
    }
  }
  fbx_free(cur);
  *out = idx;
  *m = cnt;
  return NULL;
}

/* aten::combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor:
 * [m, r], the r-element combinations of the 1-d self's elements (by
 * position) in lexicographic order; r = 0 gives an empty 1-d tensor. */
fbx_status *fbx_k_combinations(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t r = fbx_iv_to_int(&args[1]);
  bool rep = fbx_iv_to_int(&args[2]) != 0;
  char b[256];
  if (x->ndim != 1)
    return fbx_kernel_error(ctx, "Expect a 1D vector, but got shape %s", shape_str(b, sizeof b, x->ndim, x->sizes));
  if (r < 0) return fbx_kernel_error(ctx, "Expect a non-negative number, but got %" PRId64, r);
  if (r == 0) {
    FBX_TRY(fbx_tensor_empty(&out, x->dtype, 1, (int64_t[]){0}));
    fbx_set_out_tensor(outs, 0, out);
    return NULL;
  }
  int64_t *idx = NULL, m = 0;
  FBX_TRY(combination_indices(ctx, x->sizes[0], r, rep, &idx, &m));
  fbx_tensor *it = NULL, *flat = NULL;
  fbx_status *st = fbx_tensor_from_data(&it, FBX_DTYPE_INT64, 1, (int64_t[]){m * r}, idx);
  fbx_free(idx);
  if (!st) st = ROW(&flat, index_select, TV(x), IV(0), TV(it));
  if (!st) st = fbx_tensor_view(&out, flat, 2, (int64_t[]){m, r}, (int64_t[]){r, 1}, flat->offset);
  fbx_tensor_release(it);
  fbx_tensor_release(flat);
  return finish(st, outs, &out);
}

/* PyTorch's is_channels_last_strides_2d / _3d (suggest_memory_format): the
 * channel dim densest, then the spatial dims from the last, then the batch. */
static bool strides_channels_last(const fbx_tensor *t) {
  static const int o4[] = {1, 3, 2, 0}, o5[] = {1, 4, 3, 2, 0};
  if (t->ndim != 4 && t->ndim != 5) return false;
  const int *order = t->ndim == 4 ? o4 : o5;
  if (t->strides[1] == 0) return false;
  int64_t min = 0;
  for (int k = 0; k < t->ndim; k++) {
    int d = order[k];
    if (t->sizes[d] == 0 || t->strides[d] < min) return false;
    if (d == 0 && min == t->strides[1]) return false;
    min = t->strides[d];
    if (t->sizes[d] > 1) min *= t->sizes[d];
  }
  return true;
}

/* aten::channel_shuffle(Tensor self, int groups) -> Tensor: channel c = j * g + i
 * of the result is channel i * (C / g) + j of self. Written as one strided
 * copy: self's channels seen as [g, C/g] and transposed onto the result's
 * [C/g, g]. The result is contiguous, or channels-last where self is (as
 * PyTorch's suggest_memory_format picks); an empty self comes back as a
 * view of itself, as PyTorch's does. */
fbx_status *fbx_k_channel_shuffle(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t g = fbx_iv_to_int(&args[1]);
  char b[256];
  if (x->ndim <= 2)
    return fbx_kernel_error(ctx, "channel_shuffle expects input with > 2 dims, but got input with sizes %s",
                            shape_str(b, sizeof b, x->ndim, x->sizes));
  int64_t c = x->sizes[1];
  if (g <= 0)
    return fbx_kernel_error(ctx, "Number of groups to divide channels in must be positive. Value of groups:%" PRId64, g);
  if (c % g)
    return fbx_kernel_error(ctx, "Number of channels must be divisible by groups. Got %" PRId64 " channels and %" PRId64
                                 " groups.", c, g);
  if (x->numel == 0) {
    FBX_TRY(fbx_tensor_view(&out, x, x->ndim, x->sizes, x->strides, x->offset));
    fbx_set_out_tensor(outs, 0, out);
    return NULL;
  }
  if (x->ndim + 1 > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "channel_shuffle: at most %d dims", FBX_MAX_DIMS - 1);
  int64_t ostr[FBX_MAX_DIMS];
  if (strides_channels_last(x)) {
    static const int o4[] = {1, 3, 2, 0}, o5[] = {1, 4, 3, 2, 0};
    const int *order = x->ndim == 4 ? o4 : o5;
    int64_t acc = 1;
    for (int k = 0; k < x->ndim; k++) ostr[order[k]] = acc, acc *= x->sizes[order[k]];
  } else {
    fbx_contiguous_strides(x->ndim, x->sizes, ostr);
  }
  FBX_TRY(fbx_tensor_empty_strided(&out, x->dtype, x->ndim, x->sizes, ostr));
  /* both as [N, C/g, g, rest...]: the result's channel dim split as it is laid
   * out, self's split as [g, C/g] and the two halves swapped */
  int nd = x->ndim + 1;
  int64_t sz[FBX_MAX_DIMS], xs[FBX_MAX_DIMS], os[FBX_MAX_DIMS];
  sz[0] = x->sizes[0], xs[0] = x->strides[0], os[0] = ostr[0];
  sz[1] = c / g, xs[1] = x->strides[1], os[1] = g * ostr[1];
  sz[2] = g, xs[2] = (c / g) * x->strides[1], os[2] = ostr[1];
  for (int d = 2; d < x->ndim; d++) sz[d + 1] = x->sizes[d], xs[d + 1] = x->strides[d], os[d + 1] = ostr[d];
  fbx_tensor *src = NULL, *dst = NULL;
  fbx_status *st = fbx_tensor_view(&src, x, nd, sz, xs, x->offset);
  if (!st) st = fbx_tensor_view(&dst, out, nd, sz, os, out->offset);
  if (!st) st = fbx_tensor_copy_(dst, src);
  fbx_tensor_release(src);
  fbx_tensor_release(dst);
  return finish(st, outs, &out);
}

/* Push t (taken) onto list l; releases t on failure. */
static fbx_status *push_tensor(fbx_ivalue *l, fbx_tensor *t) {
  fbx_status *st = fbx_iv_list_push(l, fbx_iv_tensor(t));
  if (st) fbx_tensor_release(t);
  return st;
}

/* A copy of v in t's sizes, in t's dtype where t is floating (the forward
 * promoted it) and v's otherwise. */
static fbx_status *grad_as(fbx_tensor **out, fbx_tensor *v, const fbx_tensor *t) {
  fbx_tensor *c = NULL;
  FBX_TRY(fbx_tensor_clone_as(&c, v, fbx_dtype_is_floating(t->dtype) ? t->dtype : v->dtype));
  fbx_status *st = fbx_tensor_view(out, c, t->ndim, t->sizes, NULL, c->offset);
  fbx_tensor_release(c);
  return st;
}

/* fusebox::block_diag_backward(Tensor grad, Tensor[] tensors) -> Tensor[]
 * Each tensor's block of grad (the blocks as block_diag laid them out). */
fbx_status *fbx_k_fbx_block_diag_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[1], &ts, &n, "expected a non-empty TensorList"));
  fbx_ivalue l = fbx_iv_none();
  fbx_status *st = g->ndim == 2 ? fbx_iv_list_new(&l, n) : fbx_kernel_error(ctx, "grad has %d dims, expected 2", g->ndim);
  int64_t r0 = 0, c0 = 0;
  for (int i = 0; i < n && !st; i++) {
    fbx_tensor *t = ts[i], *v = NULL, *r = NULL;
    if (t->ndim > 2) st = fbx_kernel_error(ctx, "tensor %d has %d dims", i, t->ndim);
    int64_t h = t->ndim == 2 ? t->sizes[0] : 1, w = t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1;
    if (!st && (r0 + h > g->sizes[0] || c0 + w > g->sizes[1])) st = fbx_kernel_error(ctx, "grad is too small for the blocks");
    if (!st)
      st = fbx_tensor_view(&v, g, 2, (int64_t[]){h, w}, g->strides, g->offset + r0 * g->strides[0] + c0 * g->strides[1]);
    if (!st) st = grad_as(&r, v, t);
    fbx_tensor_release(v);
    if (!st) st = push_tensor(&l, r);
    r0 += h, c0 += w;
  }
  fbx_free(ts);
  if (st) {
    fbx_iv_release(&l);
    return st;
  }
  outs[0] = l;
  return NULL;
}

/* fusebox::cartesian_prod_backward(Tensor grad, Tensor[] tensors) -> Tensor[]
 * Tensor i's gradient: column i of grad seen as the n-d grid of tuples,
 * summed over every dim but i (one tensor: grad itself, copied). */
fbx_status *fbx_k_fbx_cartesian_prod_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(cartesian_check(ctx, &args[1], &ts, &n));
  fbx_ivalue l = fbx_iv_none();
  fbx_status *st = fbx_iv_list_new(&l, n);
  int64_t grid[FBX_MAX_DIMS], gstr[FBX_MAX_DIMS], total = 1;
  for (int i = 0; i < n; i++) total *= grid[i] = ts[i]->sizes[0];
  if (!st && n > 1 && (g->ndim != 2 || g->sizes[0] != total || g->sizes[1] != n))
    st = fbx_kernel_error(ctx, "grad does not have the result's shape");
  if (!st && n == 1) {
    fbx_tensor *r = NULL;
    st = g->numel == ts[0]->numel ? grad_as(&r, g, ts[0]) : fbx_kernel_error(ctx, "grad does not have the result's shape");
    if (!st) st = push_tensor(&l, r);
  } else if (!st) {
    int64_t s = g->strides[0];
    for (int i = n - 1; i >= 0; i--) gstr[i] = s, s *= grid[i] > 1 ? grid[i] : 1;
  }
  for (int i = 0; i < n && !st && n > 1; i++) {
    int64_t dims[FBX_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < n; d++)
      if (d != i) dims[nd++] = d;
    fbx_ivalue ld = fbx_iv_none();
    fbx_tensor *v = NULL, *sum = NULL, *r = NULL;
    st = fbx_tensor_view(&v, g, n, grid, gstr, g->offset + i * g->strides[1]);
    if (!st) st = fbx_int_list_iv(&ld, nd, dims);
    if (!st) st = ROW(&sum, sum_dim_IntList, TV(v), ld, BV(false), NV);
    if (!st) st = grad_as(&r, sum, ts[i]);
    fbx_iv_release(&ld);
    fbx_tensor_release(v);
    fbx_tensor_release(sum);
    if (!st) st = push_tensor(&l, r);
  }
  fbx_free(ts);
  if (st) {
    fbx_iv_release(&l);
    return st;
  }
  outs[0] = l;
  return NULL;
}

/* fusebox::combinations_backward(Tensor grad, Tensor self, int r, bool with_replacement) -> Tensor
 * Each element of grad added to the element of self that it copied. */
fbx_status *fbx_k_fbx_combinations_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  int64_t r = fbx_iv_to_int(&args[2]);
  if (x->ndim != 1 || r < 0) return fbx_kernel_error(ctx, "expected a 1-d self and r >= 0");
  FBX_TRY(fbx_tensor_zeros(&out, g->dtype, 1, x->sizes));
  if (r == 0) {
    fbx_set_out_tensor(outs, 0, out);
    return NULL;
  }
  int64_t *idx = NULL, m = 0;
  fbx_tensor *it = NULL, *gf = NULL, *acc = NULL;
  fbx_status *st = combination_indices(ctx, x->sizes[0], r, fbx_iv_to_int(&args[3]) != 0, &idx, &m);
  if (!st && g->numel != m * r) st = fbx_kernel_error(ctx, "grad has %" PRId64 " elements, expected %" PRId64, g->numel, m * r);
  if (!st) st = fbx_tensor_from_data(&it, FBX_DTYPE_INT64, 1, (int64_t[]){m * r}, idx);
  fbx_free(idx);
  if (!st) st = fbx_tensor_clone_as(&gf, g, g->dtype);
  fbx_tensor *gv = NULL;
  if (!st) st = fbx_tensor_view(&gv, gf, 1, (int64_t[]){m * r}, NULL, gf->offset);
  if (!st) st = ROW(&acc, index_add, TV(out), IV(0), TV(it), TV(gv), IV(1));
  fbx_tensor_release(it);
  fbx_tensor_release(gf);
  fbx_tensor_release(gv);
  fbx_tensor_release(out);
  return finish(st, outs, &acc);
}
