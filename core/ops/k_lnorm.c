/* torch.linalg's norm dispatchers (rows in ops/list_extra.h):
 * linalg_norm (ord a number or None, and .ord_str) and linalg_matrix_norm
 * (ord a number, and .str_ord), compositions of linalg_vector_norm, abs,
 * sum and amax/amin, as PyTorch's:
 *   linalg_norm(x, ord, dim, keepdim, dtype)
 *     ord None            the 2-norm over dim (every element for None);
 *     ord a number        a vector norm for one dim (or a 1-D x with dim
 *                         None), a matrix norm for two (or a 2-D x);
 *     ord "fro" / "nuc"   a matrix norm over dim (x 2-D for dim None);
 *   linalg_matrix_norm(x, ord, dim = [-2, -1], keepdim, dtype)
 *     "fro"               the 2-norm over the two dims;
 *     1 / -1, inf / -inf  the largest / smallest sum of |x| over dim[0]
 *                         (columns) / over dim[1] (rows);
 *     2, -2, "nuc"        singular values: refused (fusebox has no SVD).
 * dtype converts x first. Gradients: grad_builders.c (fbx_grad_linalg_norm:
 * the vector cases and "fro"; the matrix ords have none). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ops/kcompose.h"

/* The matrix norm of x over dims d0, d1 (wrapped, distinct) for ord ("fro",
 * "nuc", or NULL and the number p). */
static fbx_status *matrix_norm(fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x, const char *ord, double p, int64_t d0,
                               int64_t d1, bool keepdim, const fbx_ivalue *dtype) {
  fbx_ivalue dims;
  FBX_TRY(fbx_int_list_iv(&dims, 2, (int64_t[]){d0, d1}));
  fbx_status *st = NULL;
  if (ord && !strcmp(ord, "fro")) {
    st = ROW(out, linalg_vector_norm, TV(x), FV(2.0), dims, BV(keepdim), *dtype);
  } else if ((ord && !strcmp(ord, "nuc")) || (!ord && fabs(p) == 2)) {
    st = fbx_kernel_error(ctx, "linalg.matrix_norm: ord=%s needs singular values, which fusebox does not compute",
                          ord ? ord : p > 0 ? "2" : "-2");
  } else if (ord) {
    st = fbx_kernel_error(ctx, "linalg.matrix_norm: Order %s not supported.", ord);
  } else if (fabs(p) != 1 && !isinf(p)) {
    st = fbx_kernel_error(ctx, "linalg.matrix_norm: Order %g not supported.", p);
  } else {
    /* 1: max over columns of the column sums (sum over d0); inf: rows (sum over d1) */
    int64_t sum_dim = fabs(p) == 1 ? d0 : d1, red_dim = fabs(p) == 1 ? d1 : d0;
    fbx_tensor *xc = NULL, *a = NULL, *s = NULL, *r = NULL;
    fbx_ivalue sd, rd;
    st = fbx_int_list_iv(&sd, 1, &sum_dim);
    if (!st && (st = fbx_int_list_iv(&rd, 1, &red_dim))) fbx_iv_release(&sd);
    if (!st) {
      st = dtype->kind == FBX_IV_NONE ? NULL : ROW(&xc, to_dtype, TV(x), *dtype, BV(false), BV(false), NV);
      if (!st) st = ROW(&a, abs, TV(xc ? xc : x));
      if (!st) st = ROW(&s, sum_dim_IntList, TV(a), sd, BV(true), NV);
      if (!st) st = p > 0 ? ROW(&r, amax, TV(s), rd, BV(true)) : ROW(&r, amin, TV(s), rd, BV(true));
      if (!st && !keepdim) {
        int64_t sz[FBX_MAX_DIMS], sdv[FBX_MAX_DIMS];
        int k = 0;
        for (int d = 0; d < r->ndim; d++)
          if (d != d0 && d != d1) sz[k] = r->sizes[d], sdv[k++] = r->strides[d];
        st = fbx_tensor_view(out, r, k, sz, sdv, r->offset);
      } else if (!st) {
        *out = fbx_tensor_retain(r);
      }
      fbx_iv_release(&sd);
      fbx_iv_release(&rd);
    }
    fbx_tensor *tmp[] = {xc, a, s, r};
    release_all(tmp, 4);
  }
  fbx_iv_release(&dims);
  return st;
}

/* The two dims of a matrix norm from an int list argument, wrapped. */
static fbx_status *two_dims(fbx_kctx *ctx, const fbx_tensor *x, const int64_t *v, int n, int64_t *d0, int64_t *d1) {
  if (n != 2) return fbx_kernel_error(ctx, "linalg.matrix_norm: dim must be a 2-tuple. Got %d dims", n);
  FBX_TRY(fbx_wrap_dim(ctx, d0, v[0], x->ndim));
  FBX_TRY(fbx_wrap_dim(ctx, d1, v[1], x->ndim));
  if (*d0 == *d1) return fbx_kernel_error(ctx, "linalg.matrix_norm: dims must be different. Got (%" PRId64 ", %" PRId64 ")",
                                          v[0], v[1]);
  return NULL;
}

/* linalg_matrix_norm(self, ord, dim=[-2, -1], keepdim, *, dtype) and .str_ord */
fbx_status *fbx_k_linalg_matrix_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->ndim < 2) return fbx_kernel_error(ctx, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  const char *ord = args[1].kind == FBX_IV_STR ? fbx_iv_str_data(&args[1]) : NULL;
  double p = ord ? 0 : fbx_iv_to_double(&args[1]);
  int64_t v[FBX_MAX_DIMS], d0, d1;
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 2, &args[2], v, FBX_MAX_DIMS, &st);
  if (st) return st;
  FBX_TRY(two_dims(ctx, x, v, n, &d0, &d1));
  st = matrix_norm(ctx, &out, x, ord, p, d0, d1, fbx_iv_to_int(&args[3]) != 0, &args[4]);
  return finish(st, outs, &out);
}

/* linalg_norm(self, ord?, dim?, keepdim, *, dtype) and .ord_str */
fbx_status *fbx_k_linalg_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  const char *ord = args[1].kind == FBX_IV_STR ? fbx_iv_str_data(&args[1]) : NULL;
  bool has_ord = args[1].kind != FBX_IV_NONE, keepdim = fbx_iv_to_int(&args[3]) != 0;
  int64_t v[FBX_MAX_DIMS];
  int n = -1; /* -1: dim None */
  fbx_status *st = NULL;
  if (args[2].kind != FBX_IV_NONE) {
    n = fbx_arg_int_list(ctx->op, 2, &args[2], v, FBX_MAX_DIMS, &st);
    if (st) return st;
  }
  if (!has_ord) { /* the 2-norm over dim, every element for None */
    st = ROW(&out, linalg_vector_norm, TV(x), FV(2.0), args[2], args[3], args[4]);
    return finish(st, outs, &out);
  }
  if (n > 2)
    return fbx_kernel_error(ctx, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %d dims", n);
  if (n < 0 && (ord ? x->ndim != 2 : x->ndim != 1 && x->ndim != 2))
    return fbx_kernel_error(ctx, "linalg.norm: If dim is not specified but ord is, the input must be %s. Got %dD.",
                            ord ? "2D" : "1D or 2D", x->ndim);
  if (ord || n == 2 || (n < 0 && x->ndim == 2)) {
    int64_t d0, d1;
    if (n == 2) FBX_TRY(two_dims(ctx, x, v, n, &d0, &d1));
    else if (n == 1) return fbx_kernel_error(ctx, "linalg.norm: a matrix ord (\"%s\") needs two dims, got one", ord);
    else d0 = x->ndim - 2, d1 = x->ndim - 1;
    st = matrix_norm(ctx, &out, x, ord, ord ? 0 : fbx_iv_to_double(&args[1]), d0, d1, keepdim, &args[4]);
  } else {
    st = ROW(&out, linalg_vector_norm, TV(x), args[1], args[2], args[3], args[4]);
  }
  return finish(st, outs, &out);
}
