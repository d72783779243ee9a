/* Conversion kernels: the aten::to forms TorchScript emits and type_as
 * (rows in ops/list_pointwise.h). Like PyTorch, `to` hands back self (the
 * same tensor, retained) when nothing changes and copy is False; otherwise
 * the result is a new contiguous tensor (PyTorch would keep the input's
 * strides under memory_format=preserve; the values are the same). */
#include <string.h>

#include "ops/kutil.h"
#include "ops/pointwise.h"

static fbx_status *check_device(fbx_kctx *ctx, const fbx_ivalue *dev) {
  if (dev->kind == FBX_IV_NONE) return NULL;
  const char *s = fbx_iv_str_data(dev);
  if (dev->kind != FBX_IV_DEVICE && dev->kind != FBX_IV_STR) return fbx_kernel_error(ctx, "expected a Device");
  if (!strcmp(s, "cpu") || !strncmp(s, "cpu:", 4)) return NULL;
  return fbx_kernel_error(ctx, "device '%s' is not supported: fusebox's reference kernels run on the CPU", s);
}

static fbx_status *convert(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *selfv, const fbx_ivalue *dtype,
                           bool copy) {
  fbx_tensor *self = selfv->u.t, *o = NULL;
  fbx_dtype d = self->dtype;
  if (dtype && dtype->kind != FBX_IV_NONE) {
    int64_t code = fbx_iv_to_int(dtype);
    if (dtype->kind != FBX_IV_INT || !fbx_dtype_valid((int)code))
      return fbx_kernel_error(ctx, "unsupported dtype code %lld", (long long)code);
    d = (fbx_dtype)code;
  }
  if (d == self->dtype && !copy) {
    outs[0] = fbx_iv_tensor(fbx_tensor_retain(self));
    return NULL;
  }
  FBX_TRY(fbx_tensor_clone_as(&o, self, d));
  outs[0] = fbx_iv_tensor(o);
  return NULL;
}

static bool flag(const fbx_ivalue *v) { return v->kind == FBX_IV_BOOL ? v->u.b : fbx_iv_to_int(v) != 0; }

/* to.dtype(self, ScalarType dtype, bool non_blocking, bool copy, MemoryFormat? mf) */
fbx_status *fbx_k_pw_to_dtype(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  return convert(ctx, outs, &args[0], &args[1], flag(&args[3]));
}

/* to.device(self, Device device, ScalarType dtype, bool non_blocking, bool copy, MemoryFormat? mf) */
fbx_status *fbx_k_pw_to_device(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(check_device(ctx, &args[1]));
  return convert(ctx, outs, &args[0], &args[2], flag(&args[4]));
}

/* to.other(self, Tensor other, bool non_blocking, bool copy, MemoryFormat? mf) */
fbx_status *fbx_k_pw_to_other(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *other;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &other));
  fbx_ivalue d = fbx_iv_int(other->dtype);
  return convert(ctx, outs, &args[0], &d, flag(&args[3]));
}

/* to.dtype_layout(self, *, dtype?, layout?, device?, pin_memory?, non_blocking, copy, mf?) */
fbx_status *fbx_k_pw_to_dtype_layout(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (args[2].kind != FBX_IV_NONE && fbx_iv_to_int(&args[2]) != 0)
    return fbx_kernel_error(ctx, "only the strided layout is supported");
  FBX_TRY(check_device(ctx, &args[3]));
  return convert(ctx, outs, &args[0], &args[1], flag(&args[6]));
}

/* to.prim_Device(self, Device? device, int? dtype, bool non_blocking, bool copy) */
fbx_status *fbx_k_pw_to_prim_Device(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(check_device(ctx, &args[1]));
  return convert(ctx, outs, &args[0], &args[2], flag(&args[4]));
}

/* to.prim_dtype(self, int? dtype, bool non_blocking, bool copy) */
fbx_status *fbx_k_pw_to_prim_dtype(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  return convert(ctx, outs, &args[0], &args[1], flag(&args[3]));
}

/* to.prim_other(self, bool non_blocking, bool copy) */
fbx_status *fbx_k_pw_to_prim_other(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  return convert(ctx, outs, &args[0], NULL, flag(&args[2]));
}

/* type_as(self, other) == self.to(other.dtype) */
fbx_status *fbx_k_pw_type_as(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *other;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &other));
  fbx_ivalue d = fbx_iv_int(other->dtype);
  return convert(ctx, outs, &args[0], &d, false);
}
