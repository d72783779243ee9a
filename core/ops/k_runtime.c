/* Kernels for ops/list_runtime.h: the run-time queries of scripted
 * nn.Modules and the fast-path ops they guard. The answers and their
 * reasons are documented in list_runtime.h. */
#include <string.h>

#include "ops/kutil.h"

/* aten::is_autocast_enabled (false), aten::is_grad_enabled (true). */
fbx_status *fbx_k_rt_mode(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  (void)args;
  outs[0] = fbx_iv_bool(ctx->op->id == FBX_OP_is_grad_enabled);
  return NULL;
}

/* prim::requires_grad, prim::is_nested, aten::is_floating_point. */
fbx_status *fbx_k_rt_tensor_query(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_TENSOR)
    return fbx_kernel_error(ctx, "expected a Tensor, got %s", fbx_iv_kind_name(args[0].kind));
  bool floating = fbx_dtype_is_floating(args[0].u.t->dtype) != 0;
  outs[0] = fbx_iv_bool(ctx->op->id == FBX_OP_prim_is_nested ? false : floating);
  return NULL;
}

/* TorchScript's stringFindImpl: negative start/end count from the end (end
 * -1 is the whole string), the search runs in s[start:end], the result is an
 * index into s or -1; -2 for a start past the end with end > start, which
 * PyTorch rejects (std::out_of_range). */
static int64_t str_find(const char *s, size_t len, const char *sub, size_t sublen, int64_t start, int64_t end) {
  int64_t size = (int64_t)len;
  if (start < 0) start = size + start > 0 ? size + start : 0;
  if (end < 0) end = size + end + 1 > 0 ? size + end + 1 : 0;
  if (end > start && start > size) return -2; /* PyTorch's substr throws: the caller reports it */
  int64_t n = end > start ? (end < size ? end : size) - start : 0;
  if ((int64_t)sublen > n) return -1;
  for (int64_t i = 0; i + (int64_t)sublen <= n; i++)
    if (!memcmp(s + start + i, sub, sublen)) return start + i;
  return -1;
}

/* aten::find(str self, str substr, int start=0, int end=-1) */
fbx_status *fbx_k_rt_find(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_STR || args[1].kind != FBX_IV_STR)
    return fbx_kernel_error(ctx, "expected two strings, got %s and %s", fbx_iv_kind_name(args[0].kind),
                            fbx_iv_kind_name(args[1].kind));
  int64_t r = str_find(fbx_iv_str_data(&args[0]), fbx_iv_str_len(&args[0]), fbx_iv_str_data(&args[1]),
                       fbx_iv_str_len(&args[1]), fbx_iv_to_int(&args[2]), fbx_iv_to_int(&args[3]));
  if (r == -2)
    return fbx_kernel_error(ctx, "start %lld is past the end of a string of length %zu", (long long)fbx_iv_to_int(&args[2]),
                            fbx_iv_str_len(&args[0]));
  outs[0] = fbx_iv_int(r);
  return NULL;
}

/* aten::all / aten::any of a bool, int or float list: Python's truthiness. */
fbx_status *fbx_k_rt_any_all(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list, got %s", fbx_iv_kind_name(args[0].kind));
  bool any = ctx->op->id == FBX_OP_any_bool_list || ctx->op->id == FBX_OP_any_int_list ||
             ctx->op->id == FBX_OP_any_float_list;
  const fbx_iv_list *l = args[0].u.l;
  for (int i = 0; i < l->n; i++) {
    const fbx_ivalue *e = &l->items[i];
    bool truth;
    switch (e->kind) {
      case FBX_IV_BOOL: truth = e->u.b; break;
      case FBX_IV_INT: truth = e->u.i != 0; break;
      case FBX_IV_FLOAT: truth = e->u.f != 0.0; break;
      default: return fbx_kernel_error(ctx, "list element %d is a %s, not a number", i, fbx_iv_kind_name(e->kind));
    }
    if (truth == any) {
      outs[0] = fbx_iv_bool(any);
      return NULL;
    }
  }
  outs[0] = fbx_iv_bool(!any);
  return NULL;
}

/* aten::_native_multi_head_attention, aten::_transformer_encoder_layer_fwd. */
/* aten::cpu(self): self. aten::as_tensor(data, dtype=None, device=None):
 * aten::to.dtype_layout(data, dtype, None, device, None, False, False, None). */
fbx_status *fbx_k_rt_to_cpu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (ctx->op->id == FBX_OP_cpu) {
    outs[0] = fbx_iv_tensor(fbx_tensor_retain(t));
    return NULL;
  }
  fbx_ivalue a[8] = {args[0], args[1], fbx_iv_none(), args[2], fbx_iv_none(), fbx_iv_bool(false),
                     fbx_iv_bool(false), fbx_iv_none()};
  return fbx_k_pw_to_dtype_layout(ctx, a, outs);
}

fbx_status *fbx_k_rt_fast_path(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  (void)args;
  (void)outs;
  return fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "%s: PyTorch's fused fast path is not implemented in fusebox; modules reach it only when no "
                        "argument requires grad, and fusebox's prim::requires_grad is true for every floating tensor "
                        "(see ops/list_runtime.h)",
                        fbx_sym_str(ctx->op->schema.name));
}
