/* Kernels for pdist and the chained matrix products of ops/list_extra.h:
 * pdist, _pdist_forward, _pdist_backward, linalg_multi_dot, chain_matmul,
 * and the products' gradient helper fusebox::multi_dot_backward
 * (ops/list_backward.h). The products run on mm's row (OpenBLAS for
 * float32/float64, its packed loops for integers). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kcompose.h"
#include "ops/kutil.h"

/* ---- pdist ----------------------------------------------------------------------------------- */

/* The norm of the n differences a[k] - b[k] (contiguous rows of m values) in
 * PyTorch's cases: p = 0 counts the nonzero differences, 1, 2 and inf are
 * the usual norms, any other p (|d|^p summed)^(1/p). Summed in double. */
static double row_dist(const double *a, const double *b, int64_t m, double p) {
  double s = 0;
  if (p == 0) {
    for (int64_t k = 0; k < m; k++) s += a[k] != b[k];
  } else if (p == 1) {
    for (int64_t k = 0; k < m; k++) s += fabs(a[k] - b[k]);
  } else if (p == 2) {
    for (int64_t k = 0; k < m; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    s = sqrt(s);
  } else if (isinf(p)) {
    for (int64_t k = 0; k < m; k++) {
      double d = fabs(a[k] - b[k]);
      if (d > s || isnan(d)) s = d; /* NaN propagates, as PyTorch's max does */
    }
  } else {
    for (int64_t k = 0; k < m; k++) s += pow(fabs(a[k] - b[k]), p);
    s = pow(s, 1.0 / p);
  }
  return s;
}

/* self (2-d, floating) as a contiguous double copy. */
static fbx_status *as_f64(fbx_tensor **out, fbx_tensor *x) { return fbx_contiguous_as(out, x, FBX_DTYPE_FLOAT64); }

/* The ScalarType name PyTorch's dispatch errors print ("not implemented for 'Long'"). */
static const char *scalar_type_name(fbx_dtype d) {
  const char *s = fbx_dtype_torch_name(d);
  return s ? s : "?";
}

/* aten::pdist(Tensor self, float p=2.) -> Tensor
 * aten::_pdist_forward(Tensor self, float p=2.) -> Tensor
 * The p-norm distances between the rows of self, [n * (n - 1) / 2] in the
 * order (0,1), (0,2), ..., (1,2), ... pdist checks its arguments and takes
 * a contiguous copy; _pdist_forward (what pdist calls in ATen) requires a
 * contiguous self. */
fbx_status *fbx_k_pdist(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  double p = fbx_iv_to_double(&args[1]);
  if (ctx->op->id == FBX_OP_pdist) {
    if (x->ndim != 2) return fbx_kernel_error(ctx, "pdist only supports 2D tensors, got: %dD", x->ndim);
    if (!fbx_dtype_is_floating(x->dtype)) return fbx_kernel_error(ctx, "pdist only supports floating-point dtypes");
    if (!(p >= 0)) return fbx_kernel_error(ctx, "pdist only supports non-negative p values");
  } else {
    if (!fbx_tensor_is_contiguous(x)) return fbx_kernel_error(ctx, "_pdist_forward requires contiguous input");
    if (x->ndim != 2) return fbx_kernel_error(ctx, "pdist only supports 2D tensors, got: %dD", x->ndim);
  }
  /* ATen's kernel is instantiated for float and double only */
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "\"pdist\" not implemented for '%s'", scalar_type_name(x->dtype));
  int64_t n = x->sizes[0], m = x->sizes[1], cnt = n > 1 ? n * (n - 1) / 2 : 0;
  fbx_tensor *xd = NULL, *od = NULL, *out = NULL;
  fbx_status *st = as_f64(&xd, x);
  if (!st) st = fbx_tensor_empty(&od, FBX_DTYPE_FLOAT64, 1, (int64_t[]){cnt});
  if (!st) {
    const double *a = xd->data;
    double *o = od->data;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++) o[k++] = row_dist(a + i * m, a + j * m, m, p);
    st = fbx_contiguous_as(&out, od, x->dtype);
  }
  fbx_tensor_release(xd);
  fbx_tensor_release(od);
  return finish(st, outs, &out);
}

static double sgn(double v) { return (v > 0) - (v < 0); }

/* d dist / d a[k] for one difference d = a[k] - b[k] of a pair at distance
 * dist, in PyTorch's cases (b gets the negation). */
static double dist_grad(double d, double dist, double p) {
  if (p == 0) return 0;
  if (p == 1) return sgn(d);
  if (p < 2) return dist == 0 || (d == 0 && p < 1) ? 0 : sgn(d) * pow(fabs(d), p - 1) / pow(dist, p - 1);
  if (p == 2) return dist == 0 ? 0 : d / dist;
  if (isinf(p)) return sgn(d) * (fabs(d) == dist);
  return dist == 0 ? 0 : d * pow(fabs(d), p - 2) / pow(dist, p - 1);
}

/* aten::_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor
 * pdist's gradient for self: each pair's grad times the derivative of its
 * distance, added to the first row and subtracted from the second. */
fbx_status *fbx_k_pdist_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *dist;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  double p = fbx_iv_to_double(&args[2]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &dist));
  if (!fbx_tensor_is_contiguous(x)) return fbx_kernel_error(ctx, "_pdist_backward requires self to be contiguous");
  if (!fbx_tensor_is_contiguous(dist)) return fbx_kernel_error(ctx, "_pdist_backward requires pdist to be contiguous");
  if (x->ndim != 2) return fbx_kernel_error(ctx, "pdist only supports 2D tensors, got: %dD", x->ndim);
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "\"pdist_backward\" not implemented for '%s'", scalar_type_name(x->dtype));
  int64_t n = x->sizes[0], m = x->sizes[1], cnt = n > 1 ? n * (n - 1) / 2 : 0;
  if (g->numel != cnt || dist->numel != cnt)
    return fbx_kernel_error(ctx, "grad and pdist must have %" PRId64 " elements (the pairs of %" PRId64 " rows)", cnt, n);
  fbx_tensor *xd = NULL, *gd = NULL, *dd = NULL, *od = NULL, *out = NULL;
  fbx_status *st = as_f64(&xd, x);
  if (!st) st = as_f64(&gd, g);
  if (!st) st = as_f64(&dd, dist);
  if (!st) st = fbx_tensor_zeros(&od, FBX_DTYPE_FLOAT64, 2, x->sizes);
  if (!st) {
    const double *a = xd->data, *gv = gd->data, *dv = dd->data;
    double *o = od->data;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++, k++)
        for (int64_t c = 0; c < m; c++) {
          double v = gv[k] * dist_grad(a[i * m + c] - a[j * m + c], dv[k], p);
          o[i * m + c] += v;
          o[j * m + c] -= v;
        }
    st = fbx_contiguous_as(&out, od, x->dtype);
  }
  fbx_tensor_release(xd);
  fbx_tensor_release(gd);
  fbx_tensor_release(dd);
  fbx_tensor_release(od);
  return finish(st, outs, &out);
}

/* ---- linalg_multi_dot / chain_matmul --------------------------------------------------------- */

/* The names ATen's TypeMeta prints for a dtype (multi_dot's dtype error). */
static const char *typemeta_name(fbx_dtype d) {
  switch (d) {
    case FBX_DTYPE_FLOAT32: return "float";
    case FBX_DTYPE_FLOAT64: return "double";
    case FBX_DTYPE_FLOAT16: return "c10::Half";
    case FBX_DTYPE_BFLOAT16: return "c10::BFloat16";
    case FBX_DTYPE_INT64: return "long int";
    case FBX_DTYPE_INT32: return "int";
    case FBX_DTYPE_INT16: return "short int";
    case FBX_DTYPE_INT8: return "signed char";
    case FBX_DTYPE_UINT8: return "unsigned char";
    case FBX_DTYPE_BOOL: return "bool";
    default: return fbx_dtype_name(d);
  }
}

static const char *sizes_str(char *buf, size_t n, const fbx_tensor *t) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < t->ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, i ? ", " : "", t->sizes[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

/* multi_dot's checks, in ATen's order: count, the ends 1-d or 2-d, the
 * middle 2-d, then one dtype and chained sizes. */
static fbx_status *multi_dot_check(fbx_kctx *ctx, fbx_tensor **ts, int n) {
  char a[256], b[256];
  if (n < 2) return fbx_kernel_error(ctx, "multi_dot(): expected at least 2 tensors but got %d", n);
  if (ts[0]->ndim != 1 && ts[0]->ndim != 2)
    return fbx_kernel_error(ctx, "multi_dot(): the first tensor must be 1D or 2D but got %dD", ts[0]->ndim);
  if (ts[n - 1]->ndim != 1 && ts[n - 1]->ndim != 2)
    return fbx_kernel_error(ctx, "multi_dot(): the last tensor must be 1D or 2D but got %dD", ts[n - 1]->ndim);
  for (int i = 1; i < n - 1; i++)
    if (ts[i]->ndim != 2) return fbx_kernel_error(ctx, "multi_dot(): tensor %d must be 2D but got %dD", i, ts[i]->ndim);
  for (int i = 1; i < n; i++) {
    if (ts[i]->dtype != ts[0]->dtype)
      return fbx_kernel_error(ctx, "multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %d %s",
                              typemeta_name(ts[0]->dtype), i, typemeta_name(ts[i]->dtype));
    /* a 1-d first tensor is a row, so its last size is its only one; a 1-d last tensor a column */
    int64_t left = ts[i - 1]->sizes[ts[i - 1]->ndim - 1], right = ts[i]->sizes[0];
    if (left != right)
      return fbx_kernel_error(ctx, "multi_dot(): tensors %d and %d with shapes %s and %s cannot be multiplied", i - 1, i,
                              sizes_str(a, sizeof a, ts[i - 1]), sizes_str(b, sizeof b, ts[i]));
  }
  return NULL;
}

/* Tensor i of a checked chain as a matrix: a 1-d first one a row
 * [1, k], a 1-d last one a column [k, 1] (views). */
static fbx_status *chain_matrix(fbx_tensor **out, fbx_tensor *t, int i) {
  if (t->ndim == 2) {
    *out = fbx_tensor_retain(t);
    return NULL;
  }
  int64_t k = t->sizes[0], s = t->strides[0];
  if (i == 0) return fbx_tensor_view(out, t, 2, (int64_t[]){1, k}, (int64_t[]){0, s}, t->offset);
  return fbx_tensor_view(out, t, 2, (int64_t[]){k, 1}, (int64_t[]){s, 0}, t->offset);
}

/* aten::linalg_multi_dot(Tensor[] tensors) -> Tensor
 * aten::chain_matmul(Tensor[] matrices) -> Tensor
 * The product of the chain, multiplied from the left (ATen picks the
 * cheapest order, which changes only the rounding); a 1-d first or last
 * tensor drops that dim of the result. chain_matmul takes 2-d matrices
 * only and gives a single one back as a copy. */
fbx_status *fbx_k_multi_dot(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor **ts = NULL, *out = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[0], &ts, &n, NULL));
  fbx_status *st = NULL;
  if (ctx->op->id == FBX_OP_chain_matmul) {
    if (n == 0) st = fbx_kernel_error(ctx, "chain_matmul(): Expected one or more matrices");
    for (int i = 0; i < n && !st; i++)
      if (ts[i]->ndim != 2) st = fbx_kernel_error(ctx, "Tensor dimension is %d, expected 2 instead.", ts[i]->ndim);
    if (!st && n == 1) {
      st = ROW(&out, clone, TV(ts[0]), NV);
      fbx_free(ts);
      return finish(st, outs, &out);
    }
  }
  if (!st) st = multi_dot_check(ctx, ts, n);
  fbx_tensor *acc = NULL;
  if (!st) st = chain_matrix(&acc, ts[0], 0);
  for (int i = 1; i < n && !st; i++) {
    fbx_tensor *m = NULL, *p = NULL;
    st = chain_matrix(&m, ts[i], i);
    if (!st) st = ROW(&p, mm, TV(acc), TV(m));
    fbx_tensor_release(m);
    fbx_tensor_release(acc);
    acc = p;
  }
  if (!st) {
    int64_t sz[2];
    int nd = 0;
    if (ts[0]->ndim == 2) sz[nd++] = acc->sizes[0];
    if (ts[n - 1]->ndim == 2) sz[nd++] = acc->sizes[1];
    st = fbx_tensor_view(&out, acc, nd, sz, NULL, acc->offset); /* mm's result is fresh and contiguous */
  }
  fbx_tensor_release(acc);
  fbx_free(ts);
  return finish(fbx_row_own_error(ctx, st), outs, &out);
}

/* fusebox::multi_dot_backward(Tensor grad, Tensor[] tensors) -> Tensor[]
 * For each A_i of the chain: (A_1 .. A_i-1)^T G (A_i+1 .. A_n)^T, G being
 * grad as the [rows, cols] matrix of the product, in A_i's own shape (a
 * single tensor, chain_matmul's copy: grad copied). Prefix and suffix
 * products are taken once: 3n products in all. */
fbx_status *fbx_k_fbx_multi_dot_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, **ts = NULL;
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor_list(ctx, &args[1], &ts, &n, NULL));
  fbx_ivalue l = fbx_iv_none();
  fbx_status *st = n ? fbx_iv_list_new(&l, n) : fbx_kernel_error(ctx, "expected one or more tensors");
  if (!st && n == 1) {
    fbx_tensor *c = NULL;
    st = fbx_tensor_clone_as(&c, g, g->dtype);
    if (!st && (st = fbx_iv_list_push(&l, fbx_iv_tensor(c)))) fbx_tensor_release(c);
  } else if (!st) {
    st = multi_dot_check(ctx, ts, n);
  }
  fbx_tensor **mat = NULL, **pre = NULL, **suf = NULL, *gm = NULL;
  if (!st && n > 1) {
    mat = fbx_calloc((size_t)n, sizeof *mat);
    pre = fbx_calloc((size_t)n, sizeof *pre);
    suf = fbx_calloc((size_t)n, sizeof *suf);
    if (!mat || !pre || !suf) st = fbx_status_nomem();
    for (int i = 0; i < n && !st; i++) st = chain_matrix(&mat[i], ts[i], i);
    /* pre[i] = A_0 .. A_i, suf[i] = A_i .. A_n-1 */
    if (!st) pre[0] = fbx_tensor_retain(mat[0]), suf[n - 1] = fbx_tensor_retain(mat[n - 1]);
    for (int i = 1; i < n && !st; i++) st = ROW(&pre[i], mm, TV(pre[i - 1]), TV(mat[i]));
    for (int i = n - 2; i >= 0 && !st; i--) st = ROW(&suf[i], mm, TV(mat[i]), TV(suf[i + 1]));
    if (!st) {
      int64_t rows = mat[0]->sizes[0], cols = mat[n - 1]->sizes[1];
      if (g->numel != rows * cols) st = fbx_kernel_error(ctx, "grad does not have the product's shape");
      fbx_ivalue ls = fbx_iv_none();
      if (!st) st = fbx_int_list_iv(&ls, 2, (int64_t[]){rows, cols});
      if (!st) st = ROW(&gm, reshape, TV(g), ls);
      fbx_iv_release(&ls);
    }
    for (int i = 0; i < n && !st; i++) {
      fbx_tensor *lt = NULL, *rt = NULL, *a = NULL, *b = NULL, *c = NULL, *v = NULL;
      a = fbx_tensor_retain(gm);
      if (i > 0) {
        st = ROW(&lt, t, TV(pre[i - 1]));
        if (!st) st = ROW(&b, mm, TV(lt), TV(a));
        fbx_tensor_release(a);
        a = b;
      }
      if (!st && i < n - 1) {
        st = ROW(&rt, t, TV(suf[i + 1]));
        if (!st) st = ROW(&c, mm, TV(a), TV(rt));
        fbx_tensor_release(a);
        a = c;
      }
      /* with n >= 2 every factor's gradient went through at least one mm, so
       * a is a fresh contiguous tensor: A_i's shape is a view of it */
      if (!st) st = fbx_tensor_view(&v, a, ts[i]->ndim, ts[i]->sizes, NULL, a->offset);
      fbx_tensor_release(a);
      fbx_tensor_release(lt);
      fbx_tensor_release(rt);
      if (!st && (st = fbx_iv_list_push(&l, fbx_iv_tensor(v)))) fbx_tensor_release(v);
    }
  }
  if (mat) release_all(mat, n);
  if (pre) release_all(pre, n);
  if (suf) release_all(suf, n);
  fbx_free(mat);
  fbx_free(pre);
  fbx_free(suf);
  fbx_tensor_release(gm);
  fbx_free(ts);
  if (st) {
    fbx_iv_release(&l);
    return st;
  }
  outs[0] = l;
  return NULL;
}
