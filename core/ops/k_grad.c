/* Kernels for the rows in ops/list_grad.h: summing a gradient back to the
 * size of a broadcast input. */
#include <stdio.h>

#include "ops/kutil.h"
#include "ops/optable.h"
#include "ops/reduce.h"

/* "[2, 3]" for messages, in PyTorch's spelling of sizes. */
static void sizes_str(char *buf, size_t n, int ndim, const int64_t *sizes) {
  fbx_red_shape_str(buf, n, ndim, sizes);
}

/* Sum x to `size` (which x's shape must broadcast from, as PyTorch's
 * sum_to_size requires). *out is a new reference; x itself (retained) when
 * nothing is summed and `fresh` is false. */
static fbx_status *sum_to(fbx_kctx *ctx, fbx_tensor *x, int nd, const int64_t *size, bool fresh, fbx_tensor **out) {
  bool expandable = nd <= x->ndim;
  int lead = x->ndim - nd;
  for (int i = 0; expandable && i < nd; i++)
    if (size[i] != 1 && size[i] != x->sizes[lead + i]) expandable = false;
  if (!expandable) {
    char a[256], b[256];
    sizes_str(a, sizeof a, nd, size);
    sizes_str(b, sizeof b, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "size {%s} is not expandable to size {%s}.", a, b);
  }
  fbx_ivalue dims;
  FBX_TRY(fbx_iv_list_new(&dims, x->ndim));
  fbx_status *st = NULL;
  for (int i = 0; i < x->ndim && !st; i++)
    if (i < lead || (size[i - lead] == 1 && x->sizes[i] != 1)) st = fbx_iv_list_push(&dims, fbx_iv_int(i));
  if (st) {
    fbx_iv_release(&dims);
    return st;
  }
  if (fbx_iv_list_len(&dims) == 0) {
    /* Leading dims are always summed, so this is `size` == x's shape:
     * PyTorch gives x back, dtype included. */
    fbx_iv_release(&dims);
    if (!fresh) {
      *out = fbx_tensor_retain(x);
      return NULL;
    }
    return fbx_tensor_clone_as(out, x, x->dtype);
  }
  const fbx_op *sum = fbx_op_get(FBX_OP_sum_dim_IntList);
  fbx_kctx sctx = {.op = sum, .node = ctx->node, .rng_state = ctx->rng_state, .nargs = 4};
  fbx_ivalue args[4] = {fbx_iv_tensor(x), dims, fbx_iv_bool(true), fbx_iv_none()};
  fbx_ivalue res[1] = {fbx_iv_none()};
  st = sum->kernel(&sctx, args, res);
  fbx_iv_release(&dims);
  if (st) return st;
  /* keepdim left x->ndim dims, the leading ones all 1: view it as `size`. */
  fbx_tensor *r = res[0].u.t;
  int64_t strides[FBX_MAX_DIMS];
  fbx_contiguous_strides(nd, size, strides);
  st = fbx_tensor_view(out, r, nd, size, strides, r->offset);
  fbx_tensor_release(r);
  return st;
}

static fbx_status *size_arg(fbx_kctx *ctx, fbx_ivalue *args, int64_t *size, int *nd) {
  fbx_status *st = NULL;
  *nd = fbx_arg_int_list(ctx->op, 1, &args[1], size, FBX_MAX_DIMS, &st);
  return st;
}

fbx_status *fbx_k_grad_sum_to_size(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *r;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind == FBX_IV_NONE) {
    fbx_set_out_tensor(outs, 0, fbx_tensor_retain(x));
    return NULL;
  }
  int64_t size[FBX_MAX_DIMS];
  int nd;
  FBX_TRY(size_arg(ctx, args, size, &nd));
  FBX_TRY(sum_to(ctx, x, nd, size, false, &r));
  fbx_set_out_tensor(outs, 0, r);
  return NULL;
}

fbx_status *fbx_k_sum_to_size(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *r;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int64_t size[FBX_MAX_DIMS];
  int nd;
  FBX_TRY(size_arg(ctx, args, size, &nd));
  FBX_TRY(sum_to(ctx, x, nd, size, true, &r));
  fbx_set_out_tensor(outs, 0, r);
  return NULL;
}
