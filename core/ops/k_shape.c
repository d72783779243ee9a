/* Kernels for the shape-query and data-movement rows of ops/list_shape.h:
 * size, dim, numel, cat, stack, index_select. (clone shares its layout
 * logic with empty_like and lives in k_create.c.) Outputs are fresh
 * contiguous tensors. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
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

/* The tensors of a Tensor[] argument into a fresh array (borrowed pointers). */
static fbx_status *tensor_list(fbx_kctx *ctx, const fbx_ivalue *arg, fbx_tensor ***out, int *n, const char *what) {
  if (arg->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors, got %s", fbx_iv_kind_name(arg->kind));
  int k = fbx_iv_list_len(arg);
  if (k == 0) return fbx_kernel_error(ctx, "%s", what);
  fbx_tensor **ts = fbx_malloc(sizeof *ts * (size_t)k);
  if (!ts) return fbx_status_nomem();
  for (int i = 0; i < k; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(arg, i);
    if (e->kind != FBX_IV_TENSOR) {
      fbx_free(ts);
      return fbx_kernel_error(ctx, "expected a Tensor at list position %d, got %s", i, fbx_iv_kind_name(e->kind));
    }
    ts[i] = e->u.t;
  }
  *out = ts;
  *n = k;
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
  FBX_TRY(tensor_list(ctx, &args[0], &ts, &n, "torch.cat(): expected a non-empty list of Tensors"));
  fbx_status *st = cat_impl(ctx, ts, n, fbx_iv_to_int(&args[1]), outs);
  fbx_free(ts);
  return st;
}

/* aten::stack(Tensor[] tensors, int dim=0) -> Tensor */
fbx_status *fbx_k_stack(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **ts = NULL, *out = NULL;
  int n = 0;
  char a[256], b[256];
  FBX_TRY(tensor_list(ctx, &args[0], &ts, &n, "stack expects a non-empty TensorList"));
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
