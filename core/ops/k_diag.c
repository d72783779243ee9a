/* Diagonal matrices and traces (rows in ops/list_extra.h): trace,
 * trace_backward, diag, diag_backward, diag_embed, diagflat. Each is a
 * composition of the diagonal view (aten::diagonal, k_view.c) with a copy
 * or a sum, so its index rules are diagonal's:
 *   trace(self [n, m])              the sum of the main diagonal (sum's
 *                                   dtype rule: integers give int64);
 *   diag(self [n], k)               an (n + |k|) x (n + |k|) matrix of zeros
 *                                   with self on diagonal k;
 *   diag(self [n, m], k)            diagonal k as a new 1-D tensor;
 *   diag_embed(self, k, d1, d2)     zeros of self's shape with the last dim
 *                                   dropped and two dims of n + |k| inserted
 *                                   at d1 and d2 (of the result), self on
 *                                   their diagonal k;
 *   diagflat(self, k)               diag(self.flatten(), k);
 *   trace_backward(grad, sizes),
 *   diag_backward(grad, sizes, k)   the gradients: grad onto the diagonal of
 *                                   zeros of `sizes` (diag of a matrix), or
 *                                   diagonal k of grad (diag of a vector). */
#include <inttypes.h>
#include <string.h>

#include "ops/kcompose.h"

/* zeros of `sizes` (dtype dt) whose diagonal (k, d1, d2) is a copy of src
 * (broadcast to the diagonal view's shape). */
static fbx_status *onto_diagonal(fbx_kctx *ctx, fbx_tensor **out, fbx_dtype dt, int n, const int64_t *sizes,
                                 fbx_tensor *src, int64_t k, int64_t d1, int64_t d2) {
  fbx_tensor *z = NULL;
  FBX_TRY(fbx_tensor_zeros(&z, dt, n, sizes));
  fbx_ivalue o[1] = {fbx_iv_none()};
  fbx_ivalue a[4] = {TV(z), IV(k), IV(d1), IV(d2)};
  fbx_status *st = fbx_row_run(ctx, FBX_OP_diagonal, a, 4, o);
  if (!st) st = fbx_tensor_copy_(o[0].u.t, src);
  fbx_iv_release(&o[0]);
  if (st) {
    fbx_tensor_release(z);
    return st;
  }
  *out = z;
  return NULL;
}

/* aten::trace(Tensor self) -> Tensor */
fbx_status *fbx_k_trace(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *d = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->ndim != 2) return fbx_kernel_error(ctx, "trace: expected a matrix, but got tensor with dim %d", x->ndim);
  fbx_status *st = ROW(&d, diagonal, TV(x), IV(0), IV(0), IV(1));
  if (!st) st = ROW(&out, sum, TV(d), NV);
  fbx_tensor_release(d);
  return finish(st, outs, &out);
}

/* aten::trace_backward(Tensor grad, int[] sizes) -> Tensor */
fbx_status *fbx_k_trace_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  int64_t sz[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], sz, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n != 2) return fbx_kernel_error(ctx, "trace_backward: expected matrix sizes, got %d sizes", n);
  if (g->numel != 1) return fbx_kernel_error(ctx, "trace_backward: expected a one-element grad, got %" PRId64, g->numel);
  st = onto_diagonal(ctx, &out, g->dtype, 2, sz, g, 0, 0, 1);
  return finish(st, outs, &out);
}

/* aten::diag(Tensor self, int diagonal=0) -> Tensor */
fbx_status *fbx_k_diag(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL, *d = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t k = fbx_iv_to_int(&args[1]);
  fbx_status *st = NULL;
  if (x->ndim == 1) {
    int64_t m = x->sizes[0] + (k < 0 ? -k : k), sz[2] = {m, m};
    st = onto_diagonal(ctx, &out, x->dtype, 2, sz, x, k, 0, 1);
  } else if (x->ndim == 2) {
    st = ROW(&d, diagonal, TV(x), IV(k), IV(0), IV(1));
    if (!st) st = fbx_tensor_clone_as(&out, d, d->dtype);
    fbx_tensor_release(d);
  } else {
    return fbx_kernel_error(ctx, "diag(): Supports 1D or 2D tensors. Got %dD", x->ndim);
  }
  return finish(st, outs, &out);
}

/* aten::diag_backward(Tensor grad, SymInt[] input_sizes, int diagonal) -> Tensor */
fbx_status *fbx_k_diag_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *out = NULL, *d = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  int64_t sz[FBX_MAX_DIMS], k = fbx_iv_to_int(&args[2]);
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], sz, FBX_MAX_DIMS, &st);
  if (st) return st;
  if (n == 1) { /* the input was a vector: its gradient is diagonal k of grad */
    if (g->ndim != 2) return fbx_kernel_error(ctx, "diag_backward: expected a matrix grad, got %dD", g->ndim);
    st = ROW(&d, diagonal, TV(g), IV(k), IV(0), IV(1));
    if (!st) st = fbx_tensor_clone_as(&out, d, d->dtype);
    fbx_tensor_release(d);
  } else if (n == 2) {
    st = onto_diagonal(ctx, &out, g->dtype, 2, sz, g, k, 0, 1);
  } else {
    return fbx_kernel_error(ctx, "diag_backward: expected 1 or 2 input sizes, got %d", n);
  }
  return finish(st, outs, &out);
}

/* aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor */
fbx_status *fbx_k_diag_embed(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t k = fbx_iv_to_int(&args[1]), d1, d2;
  int r = x->ndim + 1;
  if (r > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "diag_embed: the result would have %d dims", r);
  FBX_TRY(fbx_wrap_dim(ctx, &d1, fbx_iv_to_int(&args[2]), r));
  FBX_TRY(fbx_wrap_dim(ctx, &d2, fbx_iv_to_int(&args[3]), r));
  if (d1 == d2)
    return fbx_kernel_error(ctx, "diagonal dimensions cannot be identical %" PRId64 ", %" PRId64,
                            fbx_iv_to_int(&args[2]), fbx_iv_to_int(&args[3]));
  if (x->ndim == 0) return fbx_kernel_error(ctx, "diag_embed: expected a tensor of at least 1 dim");
  int64_t m = x->sizes[x->ndim - 1] + (k < 0 ? -k : k), sz[FBX_MAX_DIMS];
  for (int d = 0, j = 0; d < r; d++) sz[d] = d == d1 || d == d2 ? m : x->sizes[j++];
  fbx_status *st = onto_diagonal(ctx, &out, x->dtype, r, sz, x, k, d1, d2);
  return finish(st, outs, &out);
}

/* aten::diagflat(Tensor self, int offset=0) -> Tensor */
fbx_status *fbx_k_diagflat(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *flat = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t k = fbx_iv_to_int(&args[1]), m = x->numel + (k < 0 ? -k : k), sz[2] = {m, m};
  fbx_status *st = fbx_tensor_clone_as(&flat, x, x->dtype);
  if (!st) {
    int64_t n = x->numel;
    fbx_tensor *v = NULL;
    st = fbx_tensor_view(&v, flat, 1, &n, (int64_t[]){1}, flat->offset);
    if (!st) st = onto_diagonal(ctx, &out, x->dtype, 2, sz, v, k, 0, 1);
    fbx_tensor_release(v);
  }
  fbx_tensor_release(flat);
  return finish(st, outs, &out);
}
