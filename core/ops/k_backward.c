/* Kernels for the rows of ops/list_backward.h: the backward ops of select,
 * slice, index_select, embedding and the value-selecting reductions (max.dim,
 * topk, sort), and fusebox::sum_backward.
 *
 * The scattering ones accumulate in float64 and convert to the gradient's
 * dtype at the end: one loop for every dtype, and half-precision gradients
 * that hit the same row many times do not lose bits on the way. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"

/* An int list argument with at most FBX_MAX_DIMS entries. */
static fbx_status *int_list(fbx_kctx *ctx, fbx_ivalue *args, int i, int64_t *out, int *n) {
  fbx_status *st = NULL;
  int k = fbx_arg_int_list(ctx->op, i, &args[i], out, FBX_MAX_DIMS, &st);
  if (k < 0) return st;
  *n = k;
  return NULL;
}

/* zeros(sizes) in grad's dtype, then `view_kernel` (select or slice) applied
 * to it with args vargs[1..] receives a copy of grad. */
static fbx_status *scatter_into_view(fbx_kctx *ctx, fbx_ivalue *args, fbx_kernel_fn view_kernel, fbx_ivalue *vargs,
                                     fbx_ivalue *outs) {
  fbx_tensor *grad, *z = NULL;
  int64_t sizes[FBX_MAX_DIMS];
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  FBX_TRY(fbx_tensor_zeros(&z, grad->dtype, n, sizes));
  vargs[0] = fbx_iv_tensor(z);
  fbx_ivalue vout = fbx_iv_none();
  fbx_status *st = view_kernel(ctx, vargs, &vout);
  if (!st && !fbx_tensor_same_shape(vout.u.t, grad))
    st = fbx_kernel_error(ctx, "grad_output of %d dims does not have the shape of the selected part", grad->ndim);
  if (!st) st = fbx_tensor_copy_(vout.u.t, grad);
  fbx_iv_release(&vout);
  if (st) {
    fbx_tensor_release(z);
    return st;
  }
  fbx_set_out_tensor(outs, 0, z);
  return NULL;
}

/* aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, int index) -> Tensor */
fbx_status *fbx_k_select_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue vargs[3] = {fbx_iv_none(), args[2], args[3]};
  return scatter_into_view(ctx, args, fbx_k_select, vargs, outs);
}

/* aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) */
fbx_status *fbx_k_slice_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue vargs[5] = {fbx_iv_none(), args[2], args[3], args[4], args[5]};
  return scatter_into_view(ctx, args, fbx_k_slice, vargs, outs);
}

/* ---- scatter-add along one dim ---------------------------------------------------------- */

/* acc (float64, contiguous, [outer, n, inner]) += grad ([outer, k, inner])
 * at row idx(o, j) of the middle dim. idx_per_elem: idx has grad's shape
 * [outer, k] (value-selecting reductions, inner == 1 per index column is not
 * assumed: idx is [outer, k, inner]); else idx is a vector of k. */
typedef struct scatter_spec {
  int64_t outer, k, inner, n;
  const int64_t *idx;
  bool idx_per_elem;
  bool add;
} scatter_spec;

static void scatter_rows(double *acc, const double *g, const scatter_spec *s) {
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t j = 0; j < s->k; j++) {
      const double *src = g + (o * s->k + j) * s->inner;
      if (s->idx_per_elem) {
        const int64_t *ix = s->idx + (o * s->k + j) * s->inner;
        double *dst = acc + o * s->n * s->inner;
        for (int64_t q = 0; q < s->inner; q++) {
          double *d = dst + ix[q] * s->inner + q;
          *d = s->add ? *d + src[q] : src[q];
        }
      } else {
        double *dst = acc + (o * s->n + s->idx[j]) * s->inner;
        for (int64_t q = 0; q < s->inner; q++) dst[q] += src[q];
      }
    }
}

/* A contiguous int64 copy of an index tensor whose entries lie in [0, n). */
static fbx_status *checked_index(fbx_kctx *ctx, fbx_tensor *idx, int64_t n, fbx_tensor **out) {
  if (idx->dtype != FBX_DTYPE_INT64 && idx->dtype != FBX_DTYPE_INT32)
    return fbx_kernel_error(ctx, "Expected dtype int32 or int64 for index, got %s", fbx_dtype_name(idx->dtype));
  fbx_tensor *c = NULL;
  FBX_TRY(fbx_tensor_clone_as(&c, idx, FBX_DTYPE_INT64));
  const int64_t *v = c->data;
  for (int64_t i = 0; i < c->numel; i++)
    if (v[i] < 0 || v[i] >= n) {
      int64_t bad = v[i];
      fbx_tensor_release(c);
      return fbx_kernel_error(ctx, "index %" PRId64 " is out of bounds for dimension with size %" PRId64, bad, n);
    }
  *out = c;
  return NULL;
}

static void split_at(const int64_t *sizes, int ndim, int64_t d, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int k = 0; k < d; k++) *outer *= sizes[k];
  for (int k = (int)d + 1; k < ndim; k++) *inner *= sizes[k];
}

/* Output 0 := scatter_rows of grad (any dtype and strides) along dim d into
 * zeros of `sizes`, in grad's dtype. s->idx points into ic (the checked
 * indices), which is released here either way; s's outer/inner are set here. */
static fbx_status *scatter_to_output(fbx_ivalue *outs, const fbx_tensor *grad, int ndim, const int64_t *sizes,
                                     int64_t d, scatter_spec *s, fbx_tensor *ic) {
  fbx_tensor *g = NULL, *acc = NULL, *out = NULL;
  split_at(sizes, ndim, d, &s->outer, &s->inner);
  fbx_status *st = fbx_tensor_clone_as(&g, grad, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&acc, FBX_DTYPE_FLOAT64, ndim, sizes);
  if (!st) {
    scatter_rows(acc->data, g->data, s);
    st = fbx_tensor_clone_as(&out, acc, grad->dtype);
  }
  fbx_tensor_release(g);
  fbx_tensor_release(acc);
  fbx_tensor_release(ic);
  if (!st) fbx_set_out_tensor(outs, 0, out);
  return st;
}

/* aten::index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> Tensor
 * zeros(self_sizes).index_add_(dim, index, grad): repeated indices accumulate. */
fbx_status *fbx_k_index_select_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *index, *ic = NULL;
  int64_t sizes[FBX_MAX_DIMS], d;
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &index));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), n));
  if (index->ndim > 1) return fbx_kernel_error(ctx, "index must be a vector, got %d dims", index->ndim);
  int64_t dimsize = n ? sizes[d] : 1;
  bool ok = grad->ndim == n && (n ? grad->sizes[d] == index->numel : index->numel == 1);
  for (int k = 0; ok && k < n; k++) ok = k == d || grad->sizes[k] == sizes[k];
  if (!ok) return fbx_kernel_error(ctx, "grad does not have the shape of self_sizes with dim %d of length %" PRId64,
                                   (int)d, index->numel);
  FBX_TRY(checked_index(ctx, index, dimsize, &ic));
  scatter_spec s = {.k = index->numel, .n = dimsize, .idx = ic->data};
  return scatter_to_output(outs, grad, n, sizes, d, &s, ic);
}

/* aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int padding_idx,
 *                                bool scale_grad_by_freq) -> Tensor
 * Row i of the result sums the grad rows of the positions holding index i
 * (none for padding_idx), divided by how often i occurs when
 * scale_grad_by_freq. */
fbx_status *fbx_k_embedding_dense_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *indices, *ic = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &indices));
  int64_t nw = fbx_iv_to_int(&args[2]), pad = fbx_iv_to_int(&args[3]);
  bool scale = fbx_iv_to_int(&args[4]) != 0;
  if (nw < 0) return fbx_kernel_error(ctx, "num_weights must be non-negative, got %" PRId64, nw);
  bool ok = grad->ndim == indices->ndim + 1;
  for (int k = 0; ok && k < indices->ndim; k++) ok = grad->sizes[k] == indices->sizes[k];
  if (!ok) return fbx_kernel_error(ctx, "grad_output must have the indices' shape plus the embedding dim");
  FBX_TRY(checked_index(ctx, indices, nw, &ic));
  int64_t dim = grad->sizes[grad->ndim - 1], sizes[2] = {nw, dim};
  int64_t *iv = ic->data;
  /* padding rows get no gradient: point them past the real rows of a
   * scratch accumulator one row taller. */
  int64_t *count = NULL;
  fbx_status *st = NULL;
  if (scale) {
    count = fbx_calloc((size_t)(nw ? nw : 1), sizeof *count);
    if (!count) st = fbx_status_nomem();
    for (int64_t i = 0; !st && i < ic->numel; i++) count[iv[i]]++;
  }
  fbx_tensor *g = NULL, *acc = NULL;
  if (!st) st = fbx_tensor_clone_as(&g, grad, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&acc, FBX_DTYPE_FLOAT64, 2, sizes);
  if (!st) {
    double *a = acc->data;
    const double *gv = g->data;
    for (int64_t i = 0; i < ic->numel; i++) {
      if (iv[i] == pad) continue;
      double w = scale ? 1.0 / (double)count[iv[i]] : 1.0;
      for (int64_t q = 0; q < dim; q++) a[iv[i] * dim + q] += gv[i * dim + q] * w;
    }
    st = fbx_tensor_clone_as(&out, acc, grad->dtype);
  }
  fbx_free(count);
  fbx_tensor_release(g);
  fbx_tensor_release(acc);
  fbx_tensor_release(ic);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, int[] sizes, bool keepdim)
 * zeros(sizes).scatter_(dim, indices, grad) with grad and indices unsqueezed
 * at dim when !keepdim (max.dim, min.dim, and with keepdim for topk/sort). */
fbx_status *fbx_k_value_selecting_reduction_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *indices, *ic = NULL;
  int64_t sizes[FBX_MAX_DIMS], d;
  int n = 0;
  bool keepdim = fbx_iv_to_int(&args[4]) != 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &indices));
  FBX_TRY(int_list(ctx, args, 3, sizes, &n));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), n));
  /* grad's shape with dim d kept (length k) */
  int64_t ks[FBX_MAX_DIMS];
  int kn = 0;
  bool ok = fbx_tensor_same_shape(grad, indices) && grad->ndim == (keepdim || n == 0 ? n : n - 1);
  for (int q = 0; ok && q < n; q++) {
    if (q == d && !keepdim) ks[kn++] = 1;
    else ks[kn++] = grad->sizes[q - (!keepdim && q > d)];
    ok = q == d || ks[q] == sizes[q];
  }
  if (!ok) return fbx_kernel_error(ctx, "grad and indices must have the shape of sizes reduced over dim %d", (int)d);
  FBX_TRY(checked_index(ctx, indices, n ? sizes[d] : 1, &ic));
  scatter_spec s = {.k = n ? ks[d] : 1, .n = n ? sizes[d] : 1, .idx = ic->data, .idx_per_elem = true};
  return scatter_to_output(outs, grad, n, sizes, d, &s, ic);
}

/* fusebox::sum_backward(Tensor(a) grad, int[] sizes, int[]? dim, bool keepdim) -> Tensor(a)
 * (see list_backward.h). A view of grad. */
fbx_status *fbx_k_fbx_sum_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *v = NULL;
  int64_t sizes[FBX_MAX_DIMS], dims[FBX_MAX_DIMS];
  int n = 0, nd = 0;
  bool keepdim = fbx_iv_to_int(&args[3]) != 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  if (args[2].kind != FBX_IV_NONE) FBX_TRY(int_list(ctx, args, 2, dims, &nd));
  bool reduced[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) reduced[i] = nd == 0;
  for (int i = 0; i < nd; i++) {
    int64_t d;
    FBX_TRY(fbx_wrap_dim(ctx, &d, dims[i], n));
    if (n) reduced[d] = true;
  }
  int nkept = 0;
  for (int i = 0; i < n; i++) nkept += !reduced[i];
  /* A 0-d grad stands for any full reduction, keepdim or not. */
  bool full = grad->ndim == 0 && nkept == 0;
  if (!full && grad->ndim != (keepdim ? n : nkept))
    return fbx_kernel_error(ctx, "grad of %d dims does not match a reduction of %d dims to %d (keepdim %d)",
                            grad->ndim, n, keepdim ? n : nkept, keepdim);
  int64_t strides[FBX_MAX_DIMS];
  for (int i = 0, j = 0; i < n; i++) {
    if (full || (reduced[i] && !keepdim)) {
      strides[i] = 0;
      continue;
    }
    int64_t gs = grad->sizes[j];
    if (gs == sizes[i]) strides[i] = grad->strides[j];
    else if (gs == 1 && reduced[i]) strides[i] = 0;
    else
      return fbx_kernel_error(ctx, "grad size %" PRId64 " at dim %d does not match size %" PRId64 " of the input", gs,
                              j, sizes[i]);
    j++;
  }
  FBX_TRY(fbx_tensor_view(&v, grad, n, sizes, strides, grad->offset));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* fusebox::cumprod_backward(Tensor grad, Tensor self, int dim) -> Tensor
 * Along dim, with x = self and w = grad: the gradient of x_i is
 * before_i * S_i, where before_i = prod_{k<i} x_k and
 * S_i = w_i + x_{i+1} * S_{i+1} (S past the end is 0). */
fbx_status *fbx_k_fbx_cumprod_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *self, *x = NULL, *w = NULL, *acc = NULL, *out = NULL;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &self));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), self->ndim));
  if (!fbx_tensor_same_shape(grad, self)) return fbx_kernel_error(ctx, "grad and self must have the same shape");
  fbx_status *st = fbx_tensor_clone_as(&x, self, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&w, grad, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_empty(&acc, FBX_DTYPE_FLOAT64, self->ndim, self->sizes);
  if (!st) {
    int64_t outer, inner, n = self->ndim ? self->sizes[d] : 1;
    split_at(self->sizes, self->ndim, d, &outer, &inner);
    const double *xv = x->data, *wv = w->data;
    double *gv = acc->data;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t q = 0; q < inner; q++) {
        int64_t base = o * n * inner + q;
        double s = 0;
        for (int64_t i = n - 1; i >= 0; i--) {
          int64_t at = base + i * inner;
          s = wv[at] + (i + 1 < n ? xv[at + inner] * s : 0.0);
          gv[at] = s; /* S_i for now; times before_i below */
        }
        double before = 1;
        for (int64_t i = 0; i < n; i++) {
          int64_t at = base + i * inner;
          gv[at] *= before;
          before *= xv[at];
        }
      }
    st = fbx_tensor_clone_as(&out, acc, grad->dtype);
  }
  fbx_tensor_release(x);
  fbx_tensor_release(w);
  fbx_tensor_release(acc);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* Run the table kernel of `id` on args (nargs given, defaults filled in). */
static fbx_status *call_kernel(const fbx_kctx *ctx, fbx_op_id id, fbx_ivalue *args, int nargs, fbx_ivalue *outs) {
  const fbx_op *op = fbx_op_get(id);
  if (!op) return fbx_status_nomem();
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  FBX_TRY(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx sub = {.op = op, .node = ctx->node, .rng_state = ctx->rng_state, .nargs = op->schema.nargs};
  return op->kernel(&sub, norm, outs);
}

/* The last two dims swapped (a view). */
static fbx_status *mT(fbx_tensor **out, fbx_tensor *t) {
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = t->ndim;
  memcpy(sizes, t->sizes, sizeof sizes);
  memcpy(strides, t->strides, sizeof strides);
  sizes[n - 2] = t->sizes[n - 1], sizes[n - 1] = t->sizes[n - 2];
  strides[n - 2] = t->strides[n - 1], strides[n - 1] = t->strides[n - 2];
  return fbx_tensor_view(out, t, n, sizes, strides, t->offset);
}

/* t summed over its leading dims and the dims where `sizes` has 1 (nd
 * dims; t has at least nd), then laid out as the orig_nd dims orig_sizes
 * (same element count). A new tensor. */
static fbx_status *sum_to(const fbx_kctx *ctx, fbx_tensor *t, int nd, const int64_t *sizes, int orig_nd,
                          const int64_t *orig_sizes, fbx_tensor **out) {
  int lead = t->ndim - nd;
  fbx_ivalue dims, res = fbx_iv_none();
  FBX_TRY(fbx_iv_list_new(&dims, t->ndim));
  fbx_status *st = NULL;
  for (int i = 0; i < t->ndim && !st; i++)
    if (i < lead || (sizes[i - lead] == 1 && t->sizes[i] != 1)) st = fbx_iv_list_push(&dims, fbx_iv_int(i));
  if (!st && fbx_iv_list_len(&dims) > 0) {
    fbx_ivalue args[4] = {fbx_iv_tensor(t), dims, fbx_iv_bool(true), fbx_iv_none()};
    st = call_kernel(ctx, FBX_OP_sum_dim_IntList, args, 4, &res);
  } else if (!st) {
    res = fbx_iv_tensor(fbx_tensor_retain(t));
  }
  fbx_iv_release(&dims);
  fbx_tensor *c = NULL;
  if (!st) st = fbx_tensor_clone_as(&c, res.u.t, t->dtype);
  fbx_iv_release(&res);
  if (!st) st = fbx_tensor_view(out, c, orig_nd, orig_sizes, NULL, c->offset);
  fbx_tensor_release(c);
  return st;
}

/* fusebox::matmul_backward(Tensor grad, Tensor self, Tensor other) -> (Tensor grad_self, Tensor grad_other) */
fbx_status *fbx_k_fbx_matmul_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *a, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  if (a->ndim == 0 || b->ndim == 0) return fbx_kernel_error(ctx, "both arguments to matmul need to be at least 1D");
  /* 1-D operands as a [1, k] row and a [k, 1] column */
  int64_t as[FBX_MAX_DIMS], ast[FBX_MAX_DIMS], bs[FBX_MAX_DIMS], bst[FBX_MAX_DIMS];
  int an = a->ndim < 2 ? 2 : a->ndim, bn = b->ndim < 2 ? 2 : b->ndim;
  if (a->ndim == 1) as[0] = 1, ast[0] = 0, as[1] = a->sizes[0], ast[1] = a->strides[0];
  else memcpy(as, a->sizes, sizeof as), memcpy(ast, a->strides, sizeof ast);
  if (b->ndim == 1) bs[0] = b->sizes[0], bst[0] = b->strides[0], bs[1] = 1, bst[1] = 0;
  else memcpy(bs, b->sizes, sizeof bs), memcpy(bst, b->strides, sizeof bst);
  /* the full result shape: broadcast batch dims, then [m, p] */
  int64_t full[FBX_MAX_DIMS], fst[FBX_MAX_DIMS];
  int fn = 0;
  FBX_TRY(fbx_broadcast_into(ctx, full, &fn, an - 2, as));
  FBX_TRY(fbx_broadcast_into(ctx, full, &fn, bn - 2, bs));
  full[fn] = as[an - 2], full[fn + 1] = bs[bn - 1];
  fn += 2;
  /* grad's strides laid over the full shape (the dropped dims get stride 0) */
  int gi = 0;
  for (int i = 0; i < fn; i++) {
    bool dropped = (i == fn - 2 && a->ndim == 1) || (i == fn - 1 && b->ndim == 1);
    if (dropped) {
      fst[i] = 0;
      continue;
    }
    if (gi >= g->ndim || g->sizes[gi] != full[i])
      return fbx_kernel_error(ctx, "grad of %d dims does not have the shape of matmul's result", g->ndim);
    fst[i] = g->strides[gi++];
  }
  if (gi != g->ndim) return fbx_kernel_error(ctx, "grad of %d dims does not have the shape of matmul's result", g->ndim);
  fbx_tensor *a2 = NULL, *b2 = NULL, *g2 = NULL, *aT = NULL, *bT = NULL, *ga = NULL, *gb = NULL;
  fbx_ivalue r1 = fbx_iv_none(), r2 = fbx_iv_none();
  fbx_status *st = fbx_tensor_view(&a2, a, an, as, ast, a->offset);
  if (!st) st = fbx_tensor_view(&b2, b, bn, bs, bst, b->offset);
  if (!st) st = fbx_tensor_view(&g2, g, fn, full, fst, g->offset);
  if (!st) st = mT(&aT, a2);
  if (!st) st = mT(&bT, b2);
  if (!st) {
    fbx_ivalue mm[2] = {fbx_iv_tensor(g2), fbx_iv_tensor(bT)};
    st = call_kernel(ctx, FBX_OP_matmul, mm, 2, &r1);
  }
  if (!st) {
    fbx_ivalue mm[2] = {fbx_iv_tensor(aT), fbx_iv_tensor(g2)};
    st = call_kernel(ctx, FBX_OP_matmul, mm, 2, &r2);
  }
  if (!st) st = sum_to(ctx, r1.u.t, an, as, a->ndim, a->sizes, &ga);
  if (!st) st = sum_to(ctx, r2.u.t, bn, bs, b->ndim, b->sizes, &gb);
  fbx_iv_release(&r1);
  fbx_iv_release(&r2);
  fbx_tensor_release(a2);
  fbx_tensor_release(b2);
  fbx_tensor_release(g2);
  fbx_tensor_release(aT);
  fbx_tensor_release(bT);
  if (st) {
    fbx_tensor_release(ga);
    fbx_tensor_release(gb);
    return st;
  }
  fbx_set_out_tensor(outs, 0, ga);
  fbx_set_out_tensor(outs, 1, gb);
  return NULL;
}

/* ---- backward of the ops that read each output element from one input element ---------- */

/* tabs[d][j]: the input index along map dim d that grad's index j along its
 * dim (lead + d) reads, or -1 where the output element reads no input
 * (constant padding). grad's first `lead` dims read no input dim (repeat's
 * new leading dims): they are summed. The map dims are the input's dims, or
 * one flattened dim (map_ndim 1, grad flattened the same way). Accumulates
 * in float64 into a new tensor of `sizes` in grad's dtype. */
typedef struct idx_map {
  int lead, map_ndim;
  int64_t map_sizes[FBX_MAX_DIMS];
  int64_t *tabs[FBX_MAX_DIMS];
} idx_map;

static void free_map(idx_map *m) {
  for (int d = 0; d < m->map_ndim; d++) fbx_free(m->tabs[d]);
}

static fbx_status *accumulate_mapped(fbx_tensor **out, const fbx_tensor *grad, int ndim, const int64_t *sizes,
                                     const idx_map *m, const int64_t *gsz) {
  fbx_tensor *g = NULL, *acc = NULL;
  FBX_TRY(fbx_tensor_clone_as(&g, grad, FBX_DTYPE_FLOAT64));
  fbx_status *st = fbx_tensor_zeros(&acc, FBX_DTYPE_FLOAT64, ndim, sizes);
  if (!st) {
    int gn = m->lead + m->map_ndim;
    int64_t j[FBX_MAX_DIMS] = {0};
    const double *src = g->data;
    double *dst = acc->data;
    for (int64_t e = 0; e < g->numel; e++) {
      int64_t off = 0;
      bool skip = false;
      for (int d = 0; d < m->map_ndim; d++) {
        int64_t q = m->tabs[d][j[m->lead + d]];
        if (q < 0) skip = true;
        off = off * m->map_sizes[d] + q;
      }
      if (!skip) dst[off] += src[e];
      for (int d = gn - 1; d >= 0 && ++j[d] == gsz[d]; d--) j[d] = 0;
    }
    st = fbx_tensor_clone_as(out, acc, grad->dtype);
  }
  fbx_tensor_release(g);
  fbx_tensor_release(acc);
  return st;
}

/* Tables of identity maps for the input's dims, grad's sizes in gsz. */
static fbx_status *identity_map(idx_map *m, const fbx_tensor *grad, int lead, int ndim, const int64_t *sizes,
                                int64_t *gsz) {
  memset(m, 0, sizeof *m);
  m->lead = lead;
  m->map_ndim = ndim;
  for (int d = 0; d < lead + ndim; d++) gsz[d] = grad->sizes[d];
  for (int d = 0; d < ndim; d++) {
    m->map_sizes[d] = sizes[d];
    int64_t n = grad->sizes[lead + d];
    m->tabs[d] = fbx_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!m->tabs[d]) {
      free_map(m);
      return fbx_status_nomem();
    }
    for (int64_t k = 0; k < n; k++) m->tabs[d][k] = k < sizes[d] ? k : -1;
  }
  return NULL;
}

static fbx_status *finish_mapped(fbx_kctx *ctx, fbx_tensor *grad, int ndim, const int64_t *sizes, idx_map *m,
                                 const int64_t *gsz, fbx_ivalue *outs) {
  (void)ctx;
  fbx_tensor *out = NULL;
  fbx_status *st = accumulate_mapped(&out, grad, ndim, sizes, m, gsz);
  free_map(m);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

static int64_t wrap_index(int64_t q, int64_t s) { return ((q % s) + s) % s; }

/* fusebox::pad_backward(Tensor grad, int[] sizes, int[] pad, str mode) -> Tensor */
fbx_status *fbx_k_fbx_pad_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  int64_t sizes[FBX_MAX_DIMS], pad[2 * FBX_MAX_DIMS], gsz[FBX_MAX_DIMS];
  int n = 0, np = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  fbx_status *lst = NULL;
  np = fbx_arg_int_list(ctx->op, 2, &args[2], pad, 2 * FBX_MAX_DIMS, &lst);
  if (np < 0) return lst;
  if (args[3].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "mode must be a string");
  const char *mode = fbx_iv_str_data(&args[3]);
  int kind = !strcmp(mode, "constant") ? 3 : !strcmp(mode, "reflect") ? 0 : !strcmp(mode, "replicate") ? 1
             : !strcmp(mode, "circular") ? 2 : -1;
  if (kind < 0) return fbx_kernel_error(ctx, "Unrecognised padding mode %s", mode);
  if (np % 2 || np / 2 > n || grad->ndim != n)
    return fbx_kernel_error(ctx, "pad of %d entries does not fit a gradient of %d dims (input of %d)", np, grad->ndim, n);
  idx_map m;
  FBX_TRY(identity_map(&m, grad, 0, n, sizes, gsz));
  for (int p = 0; p < np / 2; p++) {
    int d = n - 1 - p;
    int64_t l = pad[2 * p], s = sizes[d];
    if (grad->sizes[d] != s + l + pad[2 * p + 1] || (kind != 3 && s == 0)) {
      free_map(&m);
      return fbx_kernel_error(ctx, "gradient size %" PRId64 " at dim %d does not match the padded input", grad->sizes[d], d);
    }
    for (int64_t j = 0; j < grad->sizes[d]; j++) {
      int64_t q = j - l;
      if (kind == 3) q = q >= 0 && q < s ? q : -1;
      else if (kind == 0) q = q < 0 ? -q : q >= s ? 2 * (s - 1) - q : q;
      else if (kind == 1) q = q < 0 ? 0 : q >= s ? s - 1 : q;
      else q = wrap_index(q, s);
      m.tabs[d][j] = q;
    }
  }
  return finish_mapped(ctx, grad, n, sizes, &m, gsz, outs);
}

/* fusebox::repeat_backward(Tensor grad, int[] sizes, int[] repeats) -> Tensor
 * (repeats shorter than sizes get leading 1s: tile's rule) */
fbx_status *fbx_k_fbx_repeat_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  int64_t sizes[FBX_MAX_DIMS], reps[FBX_MAX_DIMS], gsz[FBX_MAX_DIMS];
  int n = 0, nr = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  FBX_TRY(int_list(ctx, args, 2, reps, &nr));
  if (nr < n) {
    memmove(reps + (n - nr), reps, sizeof(int64_t) * (size_t)nr);
    for (int i = 0; i < n - nr; i++) reps[i] = 1;
    nr = n;
  }
  int lead = nr - n;
  if (lead < 0 || grad->ndim != nr)
    return fbx_kernel_error(ctx, "repeats of %d entries do not fit an input of %d dims and a gradient of %d", nr, n, grad->ndim);
  for (int d = 0; d < n; d++)
    if (grad->sizes[lead + d] != sizes[d] * reps[lead + d])
      return fbx_kernel_error(ctx, "gradient size %" PRId64 " at dim %d is not %" PRId64 " x %" PRId64,
                              grad->sizes[lead + d], lead + d, sizes[d], reps[lead + d]);
  idx_map m;
  FBX_TRY(identity_map(&m, grad, lead, n, sizes, gsz));
  for (int d = 0; d < n; d++)
    for (int64_t j = 0; j < grad->sizes[lead + d]; j++) m.tabs[d][j] = j % sizes[d];
  return finish_mapped(ctx, grad, n, sizes, &m, gsz, outs);
}

/* A map over grad flattened to one dim (the input flattened the same way). */
static fbx_status *flat_map(idx_map *m, const fbx_tensor *grad, int64_t in_numel, int64_t *gsz) {
  memset(m, 0, sizeof *m);
  m->map_ndim = 1;
  m->map_sizes[0] = in_numel;
  gsz[0] = grad->numel;
  m->tabs[0] = fbx_malloc(sizeof(int64_t) * (size_t)(grad->numel ? grad->numel : 1));
  return m->tabs[0] ? NULL : fbx_status_nomem();
}

static int64_t prod_of(const int64_t *s, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= s[i];
  return p;
}

/* fusebox::roll_backward(Tensor grad, int[] shifts, int[] dims) -> Tensor:
 * roll by the negated shifts (dims [] rolls the flattened tensor). */
fbx_status *fbx_k_fbx_roll_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  int64_t shifts[FBX_MAX_DIMS], dims[FBX_MAX_DIMS], gsz[FBX_MAX_DIMS];
  int ns = 0, nd = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, shifts, &ns));
  FBX_TRY(int_list(ctx, args, 2, dims, &nd));
  idx_map m;
  if (nd == 0) {
    if (ns != 1) return fbx_kernel_error(ctx, "shifts must have one entry when dims is empty, got %d", ns);
    FBX_TRY(flat_map(&m, grad, grad->numel, gsz));
    for (int64_t j = 0; j < grad->numel; j++) m.tabs[0][j] = wrap_index(j - shifts[0], grad->numel);
    return finish_mapped(ctx, grad, grad->ndim, grad->sizes, &m, gsz, outs);
  }
  if (ns != nd) return fbx_kernel_error(ctx, "shifts and dimensions must align. shifts: %d, dims: %d", ns, nd);
  FBX_TRY(identity_map(&m, grad, 0, grad->ndim, grad->sizes, gsz));
  for (int k = 0; k < nd; k++) {
    int64_t d;
    fbx_status *st = fbx_wrap_dim(ctx, &d, dims[k], grad->ndim);
    if (st) {
      free_map(&m);
      return st;
    }
    int64_t s = grad->sizes[d];
    for (int64_t j = 0; j < s; j++) m.tabs[d][j] = wrap_index(m.tabs[d][j] - shifts[k], s);
  }
  return finish_mapped(ctx, grad, grad->ndim, grad->sizes, &m, gsz, outs);
}

/* fusebox::repeat_interleave_backward(Tensor grad, int[] sizes, int repeats, int? dim) -> Tensor */
fbx_status *fbx_k_fbx_repeat_interleave_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  int64_t sizes[FBX_MAX_DIMS], gsz[FBX_MAX_DIMS], r = fbx_iv_to_int(&args[2]);
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  if (r <= 0) return fbx_kernel_error(ctx, "repeats must be positive, got %" PRId64, r);
  idx_map m;
  if (args[3].kind == FBX_IV_NONE) {
    int64_t numel = prod_of(sizes, n);
    if (grad->numel != numel * r) return fbx_kernel_error(ctx, "gradient of %" PRId64 " elements, expected %" PRId64, grad->numel, numel * r);
    FBX_TRY(flat_map(&m, grad, numel, gsz));
    for (int64_t j = 0; j < grad->numel; j++) m.tabs[0][j] = j / r;
    return finish_mapped(ctx, grad, n, sizes, &m, gsz, outs);
  }
  int64_t d;
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[3]), n));
  if (grad->ndim != n || grad->sizes[d] != sizes[d] * r)
    return fbx_kernel_error(ctx, "gradient does not have the repeated input's shape at dim %d", (int)d);
  FBX_TRY(identity_map(&m, grad, 0, n, sizes, gsz));
  for (int64_t j = 0; j < grad->sizes[d]; j++) m.tabs[d][j] = j / r;
  return finish_mapped(ctx, grad, n, sizes, &m, gsz, outs);
}

/* fusebox::permute_backward(Tensor(a) grad, int[] dims) -> Tensor(a):
 * grad permuted by the inverse of dims (a view), for dims known only at run
 * time. */
fbx_status *fbx_k_fbx_permute_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  int64_t dims[FBX_MAX_DIMS], sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int nd = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, dims, &nd));
  if (nd != grad->ndim)
    return fbx_kernel_error(ctx, "number of dims don't match in permute: the gradient has %d dims, dims has %d", grad->ndim, nd);
  bool seen[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < nd; i++) {
    int64_t d;
    FBX_TRY(fbx_wrap_dim(ctx, &d, dims[i], nd));
    if (seen[d]) return fbx_kernel_error(ctx, "repeated dim %" PRId64 " in permute", d);
    seen[d] = true;
    /* grad's dim i is the input's dim d */
    sizes[d] = grad->sizes[i];
    strides[d] = grad->strides[i];
  }
  fbx_tensor *v = NULL;
  FBX_TRY(fbx_tensor_view(&v, grad, nd, sizes, strides, grad->offset));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* fusebox::cat_backward(Tensor grad, Tensor[] tensors, int dim) -> Tensor[]:
 * grad split along dim by the sizes of the tensors cat joined (views),
 * each converted to its tensor's dtype where cat promoted. For lists that
 * the graph does not build itself (a list input, a loop-carried list). */
fbx_status *fbx_k_fbx_cat_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  if (args[1].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors");
  int n = fbx_iv_list_len(&args[1]);
  int64_t d;
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), grad->ndim));
  fbx_ivalue res;
  FBX_TRY(fbx_iv_list_new(&res, n));
  fbx_status *st = NULL;
  int64_t off = 0;
  for (int i = 0; i < n && !st; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(&args[1], i);
    if (e->kind != FBX_IV_TENSOR) {
      st = fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
      break;
    }
    const fbx_tensor *t = e->u.t;
    /* cat skips 1-D empty tensors */
    int64_t len = t->ndim == 1 && t->numel == 0 && grad->ndim != 1 ? -1 : t->ndim > d ? t->sizes[d] : -2;
    if (len == -2 || (len >= 0 && off + len > grad->sizes[d])) {
      st = fbx_kernel_error(ctx, "tensor %d does not fit the gradient along dim %" PRId64, i, d);
      break;
    }
    fbx_tensor *part = NULL;
    if (len < 0) {
      st = fbx_tensor_zeros(&part, t->dtype, t->ndim, t->sizes);
    } else {
      int64_t sizes[FBX_MAX_DIMS];
      memcpy(sizes, grad->sizes, sizeof sizes);
      sizes[d] = len;
      fbx_tensor *v = NULL;
      st = fbx_tensor_view(&v, grad, grad->ndim, sizes, grad->strides, grad->offset + off * grad->strides[d]);
      if (!st && v->dtype != t->dtype && fbx_dtype_is_floating(t->dtype)) {
        st = fbx_tensor_clone_as(&part, v, t->dtype);
        fbx_tensor_release(v);
      } else {
        part = v;
      }
      off += len;
    }
    if (!st) st = fbx_iv_list_push(&res, fbx_iv_tensor(part));
    else fbx_tensor_release(part);
  }
  if (st) {
    fbx_iv_release(&res);
    return st;
  }
  outs[0] = res;
  return NULL;
}

/* fusebox::loss_reduction_backward(Tensor grad, int[] sizes, int reduction) -> Tensor:
 * reduction 0 (none): grad, which has `sizes`; 1 (mean): grad / numel
 * expanded to sizes; 2 (sum): grad expanded to sizes. A new tensor. */
fbx_status *fbx_k_fbx_loss_reduction_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *e = NULL, *g = NULL, *out = NULL;
  int64_t sizes[FBX_MAX_DIMS], red = fbx_iv_to_int(&args[2]);
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(int_list(ctx, args, 1, sizes, &n));
  if (red < 0 || red > 2) return fbx_kernel_error(ctx, "%" PRId64 " is not a valid value for reduction", red);
  if (red == 0) {
    if (grad->ndim != n || memcmp(grad->sizes, sizes, sizeof(int64_t) * (size_t)n))
      return fbx_kernel_error(ctx, "reduction 'none': the gradient does not have the input's shape");
    FBX_TRY(fbx_tensor_clone_as(&out, grad, grad->dtype));
    fbx_set_out_tensor(outs, 0, out);
    return NULL;
  }
  if (grad->numel != 1) return fbx_kernel_error(ctx, "a reduced loss has one element, its gradient %" PRId64, grad->numel);
  FBX_TRY(fbx_tensor_clone_as(&g, grad, FBX_DTYPE_FLOAT64));
  double v = ((double *)g->data)[0] / (red == 1 ? (double)prod_of(sizes, n) : 1.0);
  fbx_tensor_release(g);
  fbx_status *st = fbx_tensor_zeros(&e, FBX_DTYPE_FLOAT64, n, sizes);
  if (!st) {
    double *d = e->data;
    for (int64_t i = 0; i < e->numel; i++) d[i] = v;
    st = fbx_tensor_clone_as(&out, e, grad->dtype);
  }
  fbx_tensor_release(e);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* fusebox::broadcast_tensors_backward(Tensor[] grads, Tensor[] tensors) -> Tensor[]:
 * each gradient summed back to its tensor's sizes (undefined gradients, None
 * in grads, give zeros). */
fbx_status *fbx_k_fbx_broadcast_tensors_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST || args[1].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected two lists");
  int n = fbx_iv_list_len(&args[1]);
  if (fbx_iv_list_len(&args[0]) != n)
    return fbx_kernel_error(ctx, "%d gradients for %d tensors", fbx_iv_list_len(&args[0]), n);
  fbx_ivalue res;
  FBX_TRY(fbx_iv_list_new(&res, n));
  fbx_status *st = NULL;
  for (int i = 0; i < n && !st; i++) {
    const fbx_ivalue *g = fbx_iv_list_at(&args[0], i), *t = fbx_iv_list_at(&args[1], i);
    if (t->kind != FBX_IV_TENSOR) {
      st = fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
      break;
    }
    fbx_ivalue r = fbx_iv_none();
    if (g->kind != FBX_IV_TENSOR) {
      fbx_tensor *z = NULL;
      st = fbx_tensor_zeros(&z, t->u.t->dtype, t->u.t->ndim, t->u.t->sizes);
      if (!st) r = fbx_iv_tensor(z);
    } else {
      fbx_ivalue sz;
      st = fbx_iv_list_new(&sz, t->u.t->ndim);
      for (int d = 0; d < t->u.t->ndim && !st; d++) st = fbx_iv_list_push(&sz, fbx_iv_int(t->u.t->sizes[d]));
      if (!st) {
        fbx_ivalue a[2] = {*g, sz};
        st = call_kernel(ctx, FBX_OP_sum_to_size, a, 2, &r);
      }
      fbx_iv_release(&sz);
    }
    if (!st) st = fbx_iv_list_push(&res, r);
  }
  if (st) {
    fbx_iv_release(&res);
    return st;
  }
  outs[0] = res;
  return NULL;
}

/* aten::diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) */
fbx_status *fbx_k_diagonal_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue vargs[4] = {fbx_iv_none(), args[2], args[3], args[4]};
  return scatter_into_view(ctx, args, fbx_k_diagonal, vargs, outs);
}

/* fusebox::meshgrid_backward(Tensor?[] grads, Tensor[] tensors, bool xy) -> Tensor[] */
fbx_status *fbx_k_fbx_meshgrid_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST || args[1].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected two lists");
  int n = fbx_iv_list_len(&args[1]);
  if (fbx_iv_list_len(&args[0]) != n)
    return fbx_kernel_error(ctx, "%d gradients for %d tensors", fbx_iv_list_len(&args[0]), n);
  if (n > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "meshgrid of %d tensors: at most %d dims", n, FBX_MAX_DIMS);
  bool xy = fbx_iv_to_int(&args[2]) != 0;
  fbx_ivalue res;
  FBX_TRY(fbx_iv_list_new(&res, n));
  fbx_status *st = NULL;
  for (int k = 0; k < n && !st; k++) {
    const fbx_ivalue *g = fbx_iv_list_at(&args[0], k), *t = fbx_iv_list_at(&args[1], k);
    if (t->kind != FBX_IV_TENSOR) {
      st = fbx_kernel_error(ctx, "expected a Tensor at list position %d", k);
      break;
    }
    fbx_ivalue r = fbx_iv_none(), sz = fbx_iv_none(), dims = fbx_iv_none(), summed = fbx_iv_none();
    if (g->kind != FBX_IV_TENSOR) {
      fbx_tensor *z = NULL;
      st = fbx_tensor_zeros(&z, t->u.t->dtype, t->u.t->ndim, t->u.t->sizes);
      if (!st) r = fbx_iv_tensor(z);
    } else {
      int p = xy && n >= 2 && k < 2 ? 1 - k : k;
      if (g->u.t->ndim != n) st = fbx_kernel_error(ctx, "gradient %d has %d dims, not %d", k, g->u.t->ndim, n);
      if (!st) st = fbx_iv_list_new(&dims, n);
      for (int d = 0; d < n && !st; d++)
        if (d != p) st = fbx_iv_list_push(&dims, fbx_iv_int(d));
      if (!st && n > 1) {
        fbx_ivalue a[4] = {*g, dims, fbx_iv_bool(false), fbx_iv_none()};
        st = call_kernel(ctx, FBX_OP_sum_dim_IntList, a, 4, &summed);
      } else if (!st) {
        summed = *g;
        fbx_iv_retain(&summed);
      }
      if (!st) st = fbx_iv_list_new(&sz, t->u.t->ndim);
      for (int d = 0; d < t->u.t->ndim && !st; d++) st = fbx_iv_list_push(&sz, fbx_iv_int(t->u.t->sizes[d]));
      if (!st) {
        fbx_ivalue a[2] = {summed, sz};
        st = call_kernel(ctx, FBX_OP_reshape, a, 2, &r);
      }
    }
    fbx_iv_release(&sz);
    fbx_iv_release(&dims);
    fbx_iv_release(&summed);
    if (!st) st = fbx_iv_list_push(&res, r);
    else fbx_iv_release(&r);
  }
  if (st) {
    fbx_iv_release(&res);
    return st;
  }
  outs[0] = res;
  return NULL;
}
