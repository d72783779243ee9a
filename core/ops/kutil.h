/* Shared helpers for reference kernels: argument access, dims, shapes.
 *
 *   int64_t d;
 *   FBX_TRY(fbx_wrap_dim(ctx, &d, dim_arg, t->ndim));          // -1 -> ndim-1, checked
 *   int64_t shape[FBX_MAX_DIMS]; int nd;
 *   FBX_TRY(fbx_broadcast_shapes(ctx, shape, &nd, a, b));
 */
#ifndef FBX_OPS_KUTIL_H
#define FBX_OPS_KUTIL_H
#include <fusebox/tensor.h>

#include "ops/optable.h"

/* Normalize a possibly negative dim against ndim (a 0-d tensor accepts -1
 * and 0, as in PyTorch). Error names the op: "dim 3 out of range for a
 * tensor of 2 dims (expected -2..1)". */
fbx_status *fbx_wrap_dim(const fbx_kctx *ctx, int64_t *out, int64_t dim, int ndim);
/* Broadcast the shapes of a and b (either may be NULL: skipped). */
fbx_status *fbx_broadcast_shapes(const fbx_kctx *ctx, int64_t *out, int *out_ndim,
                                 const fbx_tensor *a, const fbx_tensor *b);
/* Broadcast an explicit shape into (out, out_ndim), which holds the running result. */
fbx_status *fbx_broadcast_into(const fbx_kctx *ctx, int64_t *out, int *out_ndim, int ndim,
                               const int64_t *sizes);
/* View t expanded to shape (stride 0 in broadcast dims); t must broadcast. */
fbx_status *fbx_expand_view(fbx_tensor **out, fbx_tensor *t, int ndim, const int64_t *sizes);
/* A tensor argument, or an error naming the argument. */
fbx_status *fbx_arg_tensor(const fbx_kctx *ctx, const fbx_ivalue *args, int i, fbx_tensor **out);
/* The tensors of a Tensor[] argument (borrowed pointers) in a fresh array
 * the caller frees with fbx_free; *n may be 0 unless empty_msg is given,
 * which is then the error for an empty list. */
fbx_status *fbx_arg_tensor_list(const fbx_kctx *ctx, const fbx_ivalue *arg, fbx_tensor ***out, int *n,
                                const char *empty_msg);
/* t as a contiguous tensor of dtype dt: t itself (retained) where it is
 * one already, else a converted copy; *out = NULL for t NULL. */
fbx_status *fbx_contiguous_as(fbx_tensor **out, fbx_tensor *t, fbx_dtype dt);
/* A new int list ivalue of the n values v (for a kernel that calls another
 * kernel with list arguments). */
fbx_status *fbx_int_list_iv(fbx_ivalue *out, int n, const int64_t *v);
/* A 0-d tensor holding scalar ivalue v in dtype d. */
fbx_status *fbx_scalar_tensor(fbx_tensor **out, const fbx_ivalue *v, fbx_dtype d);
/* Checked size arithmetic (issue #12: sizes come from the graph and its
 * inputs, and signed overflow is undefined). *out = a * b or a + b; on
 * int64 overflow a kernel error "<what>: size overflow (a * b)" (the
 * interpreter adds the node and its source location). */
fbx_status *fbx_size_mul(const fbx_kctx *ctx, int64_t a, int64_t b, int64_t *out, const char *what);
fbx_status *fbx_size_add(const fbx_kctx *ctx, int64_t a, int64_t b, int64_t *out, const char *what);
/* Run row `id` on positional args (trailing defaults may be missing); outs
 * get its results (new references). */
fbx_status *fbx_row_run(const fbx_kctx *ctx, fbx_op_id id, const fbx_ivalue *args, int n, fbx_ivalue *outs);
/* A row with one tensor result into *out. */
fbx_status *fbx_row_tensor(const fbx_kctx *ctx, fbx_tensor **out, fbx_op_id id, const fbx_ivalue *args, int n);
/* A sub-row's error as this op's own (takes st): a runtime error
 * "aten::cat: msg" of a row a composite kernel ran becomes "<op>: msg";
 * other statuses (out of memory, ...) pass through. */
fbx_status *fbx_row_own_error(const fbx_kctx *ctx, fbx_status *st);
/* Output helper: set outs[i] to a tensor (takes the reference). */
static inline void fbx_set_out_tensor(fbx_ivalue *outs, int i, fbx_tensor *t) { outs[i] = fbx_iv_tensor(t); }

#endif
