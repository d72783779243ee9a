/* Helpers shared by the reduction, normalization and linear-algebra kernels
 * (k_reduce.c, k_norm.c, k_linalg.c); private to core/ops.
 *
 * A reduction is planned onto a contiguous [A, R, B] block: A and B are the
 * kept dims before and after the reduced ones, R the reduced extent.
 *
 *   bool mask[FBX_MAX_DIMS];
 *   FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));   // None or [] = all dims
 *   fbx_red_plan p;
 *   FBX_TRY(fbx_red_plan_make(ctx, &p, x, mask, keepdim, FBX_DTYPE_UNDEFINED, 32));
 *   ... p.x->data is [p.A, p.R, p.B]; the output has p.out_ndim, p.out_sizes ...
 *   fbx_red_plan_free(&p);
 *
 * Values move through small double or int64 buffers (fbx_red_load_* /
 * fbx_red_store_*), one dtype switch per chunk, never per element.
 */
#ifndef FBX_OPS_REDUCE_H
#define FBX_OPS_REDUCE_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/kutil.h"

/* Elements per conversion chunk. */
#define FBX_RED_CHUNK 256

/* "[2, 3]" into buf. */
void fbx_red_shape_str(char *buf, size_t n, int ndim, const int64_t *sizes);
/* Wrap dim against t (0-d accepts 0 and -1); the error names the op and t's shape. */
fbx_status *fbx_red_wrap_dim(const fbx_kctx *ctx, int64_t *out, int64_t dim, const fbx_tensor *t);
/* Reduced-dims mask from an int/int[]/None argument (schema argument argi).
 * None always means every dim; an empty list means every dim when
 * empty_is_all (PyTorch 1.13's sum/mean/var/amax), else no dim. Repeated
 * dims are an error. */
fbx_status *fbx_red_dim_mask(const fbx_kctx *ctx, bool *mask, const fbx_tensor *t, int argi,
                             const fbx_ivalue *arg, bool empty_is_all);
/* A ScalarType? argument: None gives FBX_DTYPE_UNDEFINED. */
fbx_status *fbx_red_dtype_arg(const fbx_kctx *ctx, const fbx_ivalue *v, fbx_dtype *out);

/* Contiguous chunk conversions: n elements starting at element idx of base. */
void fbx_red_load_f64(double *dst, const void *base, fbx_dtype dt, int64_t idx, int64_t n);
void fbx_red_load_i64(int64_t *dst, const void *base, fbx_dtype dt, int64_t idx, int64_t n);
void fbx_red_store_f64(void *base, fbx_dtype dt, int64_t idx, const double *src, int64_t n);
void fbx_red_store_i64(void *base, fbx_dtype dt, int64_t idx, const int64_t *src, int64_t n);
/* Whole tensors: *out = t's elements, row-major, as doubles (any layout;
 * fbx_malloc'd, at least one slot; NULL on error), and a new contiguous
 * tensor of dtype dt and the given sizes holding v. */
fbx_status *fbx_red_load_all_f64(double **out, fbx_tensor *t);
fbx_status *fbx_red_store_all_f64(fbx_tensor **out, fbx_dtype dt, int ndim, const int64_t *sizes, const double *v);

typedef struct fbx_red_plan {
  fbx_tensor *x; /* contiguous [A, R, B] (own reference) */
  int64_t A, R, B;
  int out_ndim;
  int64_t out_sizes[FBX_MAX_DIMS];
} fbx_red_plan;

/* Plan reducing the masked dims of t. cast_to (unless UNDEFINED) converts
 * the data first. When the kept inner extent B is below min_b (and above 1)
 * the data is transposed so the reduced dims are innermost (B = 1). */
fbx_status *fbx_red_plan_make(const fbx_kctx *ctx, fbx_red_plan *p, fbx_tensor *t, const bool *mask,
                              bool keepdim, fbx_dtype cast_to, int64_t min_b);
void fbx_red_plan_free(fbx_red_plan *p);

/* k_linalg.c: true sends float products to the packed loops instead of the
 * BLAS (for tests that check both and for benchmarks); false by default. */
extern bool fbx_linalg_no_blas;
/* Makes OpenBLAS single-threaded, once; call before a cblas_* call (the
 * kernels parallelize over the pool themselves). */
void fbx_linalg_blas_init(void);
/* Row-major C[M,N] = alpha * op(A) @ op(B) + beta * C for float32 (f64
 * false) or float64 through the BLAS, spread over the pool (rows or columns
 * in one block per thread); op transposes when ta/tb. M, N, K, lda, ldb and
 * ldc must be <= INT_MAX, the leading dimensions valid for CBLAS. */
void fbx_linalg_gemm(bool f64, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc);

#endif
