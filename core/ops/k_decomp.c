/* Matrix decompositions and what they give (rows in ops/list_extra.h):
 * linalg_inv, inverse, linalg_inv_ex, linalg_det, det, linalg_slogdet,
 * slogdet, logdet, linalg_solve, linalg_cholesky, cholesky, and the
 * backward ops fusebox::linalg_solve_backward and fusebox::cholesky_backward.
 *
 * Square matrices in the last two dims, any batch dims, float32 or float64
 * (integers are an error, as PyTorch's "Expected a floating point or complex
 * tensor"); computed in double, one matrix at a time, the result in the
 * input's dtype:
 *   LU           Doolittle with partial pivoting (the largest |a| of the
 *                column, the first on ties), as LAPACK's getrf: det is the
 *                product of U's diagonal times the permutation's sign; a zero
 *                pivot makes the matrix singular (det 0, slogdet (0, -inf),
 *                logdet -inf; a negative det gives logdet NaN);
 *   inv, solve   from LU; a singular matrix is an error naming the zero
 *                diagonal element (1-based, LAPACK's info) and, in a batch,
 *                the element; solve(A, B): B [*, n, k], or a vector [*, n]
 *                (B 1-D, or B's shape A's without its last dim), batch dims
 *                broadcast; left=False is refused;
 *   cholesky     A = L L^T from A's lower triangle (the upper one is not
 *                read), an error when a leading minor is not positive
 *                definite; upper=True returns L^T.
 * Gradients: inv, det, slogdet, logdet are formulas (formulas_linalg.h:
 * -(Y^T g Y^T); g det inv(A)^T; g inv(A)^T); solve and cholesky have the
 * backward ops below:
 *   linalg_solve_backward(grad, A, B, X) -> (d A, d B)
 *       d B = solve(A^T, grad), d A = -d B X^T (outer products in the
 *       vector case), each summed back over broadcast batch dims;
 *   cholesky_backward(grad, L, upper) -> d A
 *       S = L^-T Phi(L^T gL) L^-1 with Phi the lower triangle, its diagonal
 *       halved; d A = (S + S^T) / 2 (PyTorch's symmetrized gradient). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kcompose.h"
#include "ops/reduce.h"

/* ---- dense kernels on one n x n matrix (row-major doubles) ---------------------------------------- */

/* LU in place with row pivots; *sign the permutation's; returns 0, or the
 * 1-based column of the first zero pivot (the matrix is singular; the
 * factorization goes on past it, leaving that column). */
static int64_t lu(double *a, int64_t n, int64_t *piv, int *sign) {
  int64_t info = 0;
  *sign = 1;
  for (int64_t k = 0; k < n; k++) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
    piv[k] = p;
    if (p != k) {
      for (int64_t j = 0; j < n; j++) {
        double t = a[k * n + j];
        a[k * n + j] = a[p * n + j], a[p * n + j] = t;
      }
      *sign = -*sign;
    }
    double d = a[k * n + k];
    if (d == 0) {
      if (!info) info = k + 1;
      continue;
    }
    for (int64_t i = k + 1; i < n; i++) {
      double l = a[i * n + k] / d;
      a[i * n + k] = l;
      if (l != 0)
        for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= l * a[k * n + j];
    }
  }
  return info;
}

/* Solve with an LU of a nonsingular matrix: b [n, k] row-major overwritten by x. */
static void lu_solve(const double *lu, const int64_t *piv, int64_t n, double *b, int64_t k) {
  for (int64_t i = 0; i < n; i++)
    if (piv[i] != i)
      for (int64_t c = 0; c < k; c++) {
        double t = b[i * k + c];
        b[i * k + c] = b[piv[i] * k + c], b[piv[i] * k + c] = t;
      }
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < i; j++) {
      double l = lu[i * n + j];
      if (l != 0)
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= l * b[j * k + c];
    }
  for (int64_t i = n - 1; i >= 0; i--) {
    for (int64_t j = i + 1; j < n; j++) {
      double u = lu[i * n + j];
      if (u != 0)
        for (int64_t c = 0; c < k; c++) b[i * k + c] -= u * b[j * k + c];
    }
    for (int64_t c = 0; c < k; c++) b[i * k + c] /= lu[i * n + i];
  }
}

/* L (lower, in place of a; the upper triangle zeroed) with A = L L^T from
 * A's lower triangle; returns 0 or the order of the first leading minor
 * that is not positive definite. */
static int64_t chol(double *a, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return j + 1;
    d = sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; i++) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
    for (int64_t k = j + 1; k < n; k++) a[j * n + k] = 0;
  }
  return 0;
}

/* ---- argument checks ------------------------------------------------------------------------------ */

/* A batch of square float matrices; *n their size, *nb how many. */
static fbx_status *square(const fbx_kctx *ctx, const char *what, const fbx_tensor *a, int64_t *n, int64_t *nb) {
  if (a->ndim < 2)
    return fbx_kernel_error(ctx, "%s: The input tensor A must have at least 2 dimensions.", what);
  if (a->sizes[a->ndim - 1] != a->sizes[a->ndim - 2])
    return fbx_kernel_error(ctx, "%s: A must be batches of square matrices, but they are %" PRId64 " by %" PRId64
                                 " matrices", what, a->sizes[a->ndim - 2], a->sizes[a->ndim - 1]);
  if (a->dtype != FBX_DTYPE_FLOAT32 && a->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "%s: Expected a floating point or complex tensor as input. Got %s", what,
                            fbx_dtype_torch_name(a->dtype));
  *n = a->sizes[a->ndim - 1];
  *nb = 1;
  for (int d = 0; d < a->ndim - 2; d++) *nb *= a->sizes[d];
  return NULL;
}

/* The error for a singular matrix: "<what>: [(Batch element b): ]The
 * diagonal element k is zero, ..." */
static fbx_status *singular(const fbx_kctx *ctx, const char *what, int64_t nb, int64_t b, int64_t info) {
  char batch[64] = "";
  if (nb > 1) snprintf(batch, sizeof batch, "(Batch element %" PRId64 "): ", b);
  return fbx_kernel_error(ctx, "%s: %sThe diagonal element %" PRId64 " is zero, the %s could not be completed because "
                               "the input matrix is singular.", what, batch, info,
                          !strcmp(what, "linalg.inv") ? "inversion" : "solve");
}

/* ---- inverse, determinants ------------------------------------------------------------------------ */

/* linalg_inv(A), inverse(self), linalg_inv_ex(A, check_errors) -> (inverse, info) */
fbx_status *fbx_k_linalg_inv(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *y = NULL, *info_t = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  bool ex = ctx->op->schema.nrets == 2, check = !ex || fbx_iv_to_int(&args[1]) != 0;
  int64_t n, nb;
  FBX_TRY(square(ctx, "linalg.inv", a, &n, &nb));
  double *v = NULL, *e = fbx_malloc(sizeof(double) * (size_t)(n * n + 1));
  int64_t *piv = fbx_malloc(sizeof(int64_t) * (size_t)(n + 1));
  fbx_status *st = e && piv ? fbx_red_load_all_f64(&v, a) : fbx_status_nomem();
  int64_t bsz[FBX_MAX_DIMS];
  for (int d = 0; d < a->ndim - 2; d++) bsz[d] = a->sizes[d];
  if (!st && ex) st = fbx_tensor_zeros(&info_t, FBX_DTYPE_INT32, a->ndim - 2, bsz);
  for (int64_t b = 0; !st && b < nb; b++) {
    double *m = v + b * n * n;
    int sign;
    int64_t info = lu(m, n, piv, &sign);
    if (info) {
      if (check) {
        st = singular(ctx, "linalg.inv", nb, b, info);
        break;
      }
      fbx_tensor_set_i64(info_t, b, info);
      for (int64_t i = 0; i < n * n; i++) m[i] = NAN; /* LAPACK leaves garbage; NaN says so */
      continue;
    }
    for (int64_t i = 0; i < n * n; i++) e[i] = i / n == i % n;
    lu_solve(m, piv, n, e, n);
    memcpy(m, e, sizeof(double) * (size_t)(n * n));
  }
  if (!st) st = fbx_red_store_all_f64(&y, a->dtype, a->ndim, a->sizes, v);
  fbx_free(v);
  fbx_free(e);
  fbx_free(piv);
  return finish2(st, outs, &y, &info_t);
}

/* det / linalg_det, slogdet / linalg_slogdet, logdet: one LU per matrix. */
fbx_status *fbx_k_linalg_det(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  bool slog = strstr(name, "slogdet") != NULL, logd = !slog && !strcmp(name, "logdet");
  fbx_tensor *a, *r0 = NULL, *r1 = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  int64_t n, nb;
  FBX_TRY(square(ctx, slog ? "linalg.slogdet" : logd ? "logdet" : "linalg.det", a, &n, &nb));
  double *v = NULL, *o0 = fbx_malloc(sizeof(double) * (size_t)(nb + 1)), *o1 = fbx_malloc(sizeof(double) * (size_t)(nb + 1));
  int64_t *piv = fbx_malloc(sizeof(int64_t) * (size_t)(n + 1));
  fbx_status *st = o0 && o1 && piv ? fbx_red_load_all_f64(&v, a) : fbx_status_nomem();
  for (int64_t b = 0; !st && b < nb; b++) {
    int sign;
    double *m = v + b * n * n, det = 1, labs = 0;
    int64_t info = lu(m, n, piv, &sign);
    int s = sign;
    for (int64_t i = 0; i < n; i++) {
      double d = m[i * n + i];
      det *= d;
      labs += log(fabs(d));
      if (d < 0) s = -s;
    }
    if (info) det = 0, s = 0, labs = -INFINITY;
    det *= sign;
    if (slog) o0[b] = s, o1[b] = labs;
    else if (logd) o0[b] = s < 0 ? NAN : s == 0 ? -INFINITY : labs;
    else o0[b] = det;
  }
  if (!st) st = fbx_red_store_all_f64(&r0, a->dtype, a->ndim - 2, a->sizes, o0);
  if (!st && slog) st = fbx_red_store_all_f64(&r1, a->dtype, a->ndim - 2, a->sizes, o1);
  fbx_free(v);
  fbx_free(o0);
  fbx_free(o1);
  fbx_free(piv);
  return finish2(st, outs, &r0, &r1);
}

/* ---- solve ---------------------------------------------------------------------------------------- */

/* The shapes of solve(A, B): the broadcast batch of both, vector case. */
typedef struct solve_geom {
  int64_t n, k, nb;
  bool vec;
  int nbd;                       /* batch dims */
  int64_t bsz[FBX_MAX_DIMS];     /* broadcast batch sizes */
} solve_geom;

static fbx_status *solve_shapes(const fbx_kctx *ctx, const fbx_tensor *a, const fbx_tensor *b, solve_geom *g) {
  int64_t nb;
  FBX_TRY(square(ctx, "linalg.solve", a, &g->n, &nb));
  if (b->dtype != a->dtype)
    return fbx_kernel_error(ctx, "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B "
                                 "of type %s instead", fbx_dtype_torch_name(a->dtype), fbx_dtype_torch_name(b->dtype));
  g->vec = b->ndim == 1;
  if (!g->vec && b->ndim == a->ndim - 1) {
    g->vec = true;
    for (int d = 0; d < b->ndim; d++) g->vec = g->vec && b->sizes[d] == a->sizes[d];
  }
  int bb = g->vec ? b->ndim - 1 : b->ndim - 2; /* B's batch dims */
  if (bb < 0 || b->sizes[bb] != g->n)
    return fbx_kernel_error(ctx, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (A has %" PRId64
                                 " rows, B %" PRId64 ")", g->n, bb < 0 ? (int64_t)0 : b->sizes[bb]);
  g->k = g->vec ? 1 : b->sizes[b->ndim - 1];
  g->nbd = 0;
  FBX_TRY(fbx_broadcast_into(ctx, g->bsz, &g->nbd, a->ndim - 2, a->sizes));
  FBX_TRY(fbx_broadcast_into(ctx, g->bsz, &g->nbd, bb, b->sizes));
  g->nb = 1;
  for (int d = 0; d < g->nbd; d++) g->nb *= g->bsz[d];
  return NULL;
}

/* t's values expanded to batch sizes g->bsz followed by its own last `own`
 * dims, as doubles (new memory). */
static fbx_status *load_expanded(const solve_geom *g, fbx_tensor *t, int own, double **out) {
  int64_t sz[FBX_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < g->nbd; d++) sz[nd++] = g->bsz[d];
  for (int d = t->ndim - own; d < t->ndim; d++) sz[nd++] = t->sizes[d];
  fbx_tensor *v = NULL;
  FBX_TRY(fbx_expand_view(&v, t, nd, sz));
  fbx_status *st = fbx_red_load_all_f64(out, v);
  fbx_tensor_release(v);
  return st;
}

/* X = A^-1 B for every batch element (a: n x n each, b: n x k each,
 * overwritten by X); at: solve with A^T instead. */
static fbx_status *solve_all(const fbx_kctx *ctx, const solve_geom *g, double *a, double *b, bool at) {
  int64_t n = g->n, *piv = fbx_malloc(sizeof(int64_t) * (size_t)(n + 1));
  double *m = fbx_malloc(sizeof(double) * (size_t)(n * n + 1));
  fbx_status *st = piv && m ? NULL : fbx_status_nomem();
  for (int64_t e = 0; !st && e < g->nb; e++) {
    const double *ae = a + e * n * n;
    for (int64_t i = 0; i < n * n; i++) m[i] = at ? ae[(i % n) * n + i / n] : ae[i];
    int sign;
    int64_t info = lu(m, n, piv, &sign);
    if (info) st = singular(ctx, "linalg.solve", g->nb, e, info);
    else lu_solve(m, piv, n, b + e * n * g->k, g->k);
  }
  fbx_free(piv);
  fbx_free(m);
  return st;
}

/* linalg_solve(A, B, *, left=True) */
fbx_status *fbx_k_linalg_solve(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *x = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (ctx->op->schema.nargs > 2 && !fbx_iv_to_int(&args[2]))
    return fbx_kernel_error(ctx, "linalg.solve: left=False (X A = B) is not implemented; solve A^T X^T = B^T instead");
  solve_geom g;
  FBX_TRY(solve_shapes(ctx, a, b, &g));
  double *av = NULL, *bv = NULL;
  fbx_status *st = load_expanded(&g, a, 2, &av);
  if (!st) st = load_expanded(&g, b, g.vec ? 1 : 2, &bv);
  if (!st) st = solve_all(ctx, &g, av, bv, false);
  if (!st) {
    int64_t sz[FBX_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < g.nbd; d++) sz[nd++] = g.bsz[d];
    sz[nd++] = g.n;
    if (!g.vec) sz[nd++] = g.k;
    st = fbx_red_store_all_f64(&x, a->dtype, nd, sz, bv);
  }
  fbx_free(av);
  fbx_free(bv);
  return finish(st, outs, &x);
}

/* t summed down to `like`'s shape (the broadcast batch dims), in place of *t. */
static fbx_status *sum_to(fbx_kctx *ctx, fbx_tensor **t, const fbx_tensor *like) {
  if (fbx_tensor_same_shape(*t, like)) return NULL;
  fbx_ivalue sz;
  FBX_TRY(fbx_int_list_iv(&sz, like->ndim, like->sizes));
  fbx_tensor *r = NULL;
  fbx_status *st = ROW(&r, sum_to_size, TV(*t), sz);
  fbx_iv_release(&sz);
  if (st) return st;
  fbx_tensor_release(*t);
  *t = r;
  return NULL;
}

/* fusebox::linalg_solve_backward(grad, A, B, X) -> (d A, d B) */
fbx_status *fbx_k_fbx_linalg_solve_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *gr, *a, *b, *x, *ga = NULL, *gb = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gr));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &x));
  if (!fbx_tensor_same_shape(gr, x)) return fbx_kernel_error(ctx, "grad's shape differs from the solution's");
  solve_geom g;
  FBX_TRY(solve_shapes(ctx, a, b, &g));
  double *av = NULL, *gv = NULL, *xv = NULL, *gav = NULL;
  fbx_status *st = load_expanded(&g, a, 2, &av);
  if (!st) st = load_expanded(&g, gr, g.vec ? 1 : 2, &gv);
  if (!st) st = load_expanded(&g, x, g.vec ? 1 : 2, &xv);
  if (!st) st = solve_all(ctx, &g, av, gv, true); /* gv: d B = A^-T grad */
  if (!st && !(gav = fbx_malloc(sizeof(double) * (size_t)(g.nb * g.n * g.n + 1)))) st = fbx_status_nomem();
  for (int64_t e = 0; !st && e < g.nb; e++) /* d A = -d B X^T */
    for (int64_t i = 0; i < g.n; i++)
      for (int64_t j = 0; j < g.n; j++) {
        double s = 0;
        for (int64_t c = 0; c < g.k; c++) s += gv[(e * g.n + i) * g.k + c] * xv[(e * g.n + j) * g.k + c];
        gav[(e * g.n + i) * g.n + j] = -s;
      }
  if (!st) {
    int64_t sz[FBX_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < g.nbd; d++) sz[nd++] = g.bsz[d];
    sz[nd] = g.n, sz[nd + 1] = g.n;
    st = fbx_red_store_all_f64(&ga, a->dtype, nd + 2, sz, gav);
    sz[nd] = g.n, sz[nd + 1] = g.k;
    if (!st) st = fbx_red_store_all_f64(&gb, a->dtype, nd + (g.vec ? 1 : 2), sz, gv);
  }
  if (!st) st = sum_to(ctx, &ga, a);
  if (!st) st = sum_to(ctx, &gb, b);
  fbx_free(av);
  fbx_free(gv);
  fbx_free(xv);
  fbx_free(gav);
  return finish2(st, outs, &ga, &gb);
}

/* ---- cholesky ------------------------------------------------------------------------------------- */

/* linalg_cholesky(self, *, upper=False) and cholesky(self, upper=False) */
fbx_status *fbx_k_linalg_cholesky(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *l = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  bool upper = fbx_iv_to_int(&args[1]) != 0;
  int64_t n, nb;
  FBX_TRY(square(ctx, "linalg.cholesky", a, &n, &nb));
  double *v = NULL;
  fbx_status *st = fbx_red_load_all_f64(&v, a);
  for (int64_t b = 0; !st && b < nb; b++) {
    double *m = v + b * n * n;
    int64_t info = chol(m, n);
    if (info) {
      char batch[64] = "";
      if (nb > 1) snprintf(batch, sizeof batch, "(Batch element %" PRId64 "): ", b);
      st = fbx_kernel_error(ctx, "linalg.cholesky: %sThe factorization could not be completed because the input is "
                                 "not positive-definite (the leading minor of order %" PRId64 " is not "
                                 "positive-definite).", batch, info);
      break;
    }
    if (upper)
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) m[i * n + j] = m[j * n + i], m[j * n + i] = 0;
  }
  if (!st) st = fbx_red_store_all_f64(&l, a->dtype, a->ndim, a->sizes, v);
  fbx_free(v);
  return finish(st, outs, &l);
}

/* x := x L^-1 (right = true) or L^-T x for lower-triangular L, n x n each. */
static void tri_solve(const double *l, double *x, int64_t n, bool right) {
  if (right) { /* rows of x: y L = x_row, back substitution over columns */
    for (int64_t r = 0; r < n; r++)
      for (int64_t j = n - 1; j >= 0; j--) {
        double s = x[r * n + j];
        for (int64_t k = j + 1; k < n; k++) s -= x[r * n + k] * l[k * n + j];
        x[r * n + j] = s / l[j * n + j];
      }
  } else { /* L^T y = x, column by column: L^T is upper triangular */
    for (int64_t c = 0; c < n; c++)
      for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i * n + c];
        for (int64_t k = i + 1; k < n; k++) s -= l[k * n + i] * x[k * n + c];
        x[i * n + c] = s / l[i * n + i];
      }
  }
}

/* fusebox::cholesky_backward(grad, L, upper) -> d A */
fbx_status *fbx_k_fbx_cholesky_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *gr, *lt, *ga = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &gr));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &lt));
  bool upper = fbx_iv_to_int(&args[2]) != 0;
  int64_t n, nb;
  FBX_TRY(square(ctx, "cholesky_backward", lt, &n, &nb));
  if (!fbx_tensor_same_shape(gr, lt)) return fbx_kernel_error(ctx, "grad's shape differs from L's");
  double *lv = NULL, *gv = NULL, *phi = fbx_malloc(sizeof(double) * (size_t)(n * n + 1));
  fbx_status *st = phi ? fbx_red_load_all_f64(&lv, lt) : fbx_status_nomem();
  if (!st) st = fbx_red_load_all_f64(&gv, gr);
  for (int64_t b = 0; !st && b < nb; b++) {
    double *l = lv + b * n * n, *g = gv + b * n * n;
    if (upper) /* work with the lower factor and its gradient */
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
          double t = l[i * n + j];
          l[i * n + j] = l[j * n + i], l[j * n + i] = t;
          t = g[i * n + j];
          g[i * n + j] = g[j * n + i], g[j * n + i] = t;
        }
    for (int64_t i = 0; i < n; i++) /* phi = tril(L^T gL), diagonal halved */
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        if (j <= i)
          for (int64_t k = 0; k < n; k++) s += l[k * n + i] * g[k * n + j];
        phi[i * n + j] = j < i ? s : j == i ? s / 2 : 0;
      }
    tri_solve(l, phi, n, true);  /* phi L^-1 */
    tri_solve(l, phi, n, false); /* L^-T phi L^-1 */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) g[i * n + j] = (phi[i * n + j] + phi[j * n + i]) / 2;
  }
  if (!st) st = fbx_red_store_all_f64(&ga, lt->dtype, lt->ndim, lt->sizes, gv);
  fbx_free(lv);
  fbx_free(gv);
  fbx_free(phi);
  return finish(st, outs, &ga);
}
