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

/* Run scatter_rows from grad (any dtype and strides) into a new tensor of
 * `sizes` in grad's dtype. s->idx is set by the caller. */
static fbx_status *scatter_to_new(fbx_tensor **out, const fbx_tensor *grad, int ndim, const int64_t *sizes,
                                  const scatter_spec *s) {
  fbx_tensor *g = NULL, *acc = NULL;
  FBX_TRY(fbx_tensor_clone_as(&g, grad, FBX_DTYPE_FLOAT64));
  fbx_status *st = fbx_tensor_zeros(&acc, FBX_DTYPE_FLOAT64, ndim, sizes);
  if (!st) {
    scatter_rows(acc->data, g->data, s);
    st = fbx_tensor_clone_as(out, acc, grad->dtype);
  }
  fbx_tensor_release(g);
  fbx_tensor_release(acc);
  return st;
}

static void split_at(const int64_t *sizes, int ndim, int64_t d, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int k = 0; k < d; k++) *outer *= sizes[k];
  for (int k = (int)d + 1; k < ndim; k++) *inner *= sizes[k];
}

/* aten::index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> Tensor
 * zeros(self_sizes).index_add_(dim, index, grad): repeated indices accumulate. */
fbx_status *fbx_k_index_select_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *index, *ic = NULL, *out = NULL;
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
  split_at(sizes, n, d, &s.outer, &s.inner);
  fbx_status *st = scatter_to_new(&out, grad, n, sizes, &s);
  fbx_tensor_release(ic);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
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
  fbx_tensor *grad, *indices, *ic = NULL, *out = NULL;
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
  split_at(sizes, n, d, &s.outer, &s.inner);
  fbx_status *st = scatter_to_new(&out, grad, n, sizes, &s);
  fbx_tensor_release(ic);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
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
