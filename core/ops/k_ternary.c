/* Ternary pointwise kernels: where, lerp, addcmul, addcdiv, masked_fill,
 * clamp with tensor bounds (rows in ops/list_pointwise.h). Every operand,
 * the condition or mask included, is converted to the compute dtype, so
 * one loop per dtype serves all of them. */
#include "ops/kopt.h" /* first: the loops' compiler settings */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <tgmath.h>

#include "ops/kutil.h"
#include "ops/pointwise.h"
#include "ops/promote.h"

#define GEN3(sfx, TS, CT, LD, ST, op, PREP, ...) FBX_PW_LOOP3(op##_##sfx, TS, CT, LD, TS, ST, PREP, __VA_ARGS__)
#define GEN2(sfx, TS, CT, LD, ST, op, PREP, ...) FBX_PW_LOOP2(op##_##sfx, TS, CT, LD, TS, ST, PREP, __VA_ARGS__)
#define TAB_F(op) static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op)};
#define TAB_FI(op) static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op)};
#define TAB_FIB(op) \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op), FBX_PW_TAB_BOOL(op)};

/* where / masked_fill: a selects between b and c */
#define SEL(n, PREP, ...)                       \
  FBX_PW_FLOATS(GEN3, n, PREP, __VA_ARGS__)     \
  FBX_PW_INTS(GEN3, n, PREP, __VA_ARGS__)       \
  FBX_PW_BOOLS(GEN3, n, PREP, __VA_ARGS__)      \
  TAB_FIB(n)
SEL(select, , a != 0 ? b : c)

/* lerp(self=a, end=b, weight=c or f[0]) as PyTorch's Lerp.h, with its
 * vectorized kernel's fused multiply-adds (fmadd/fnmadd): one rounding, so
 * (end - self) * (1 - weight) may pass FLT_MAX where the result does not
 * (lerp(1, 1.65e38, -1.5) is -2.48e38 in PyTorch, -inf unfused: fuzz seed
 * 1300926). The kit's lerp (generated code) is the same. */
#define FMA_T(x, y, z) (sizeof(T) == sizeof(float) ? (T)fmaf((float)(x), (float)(y), (float)(z)) : (T)fma((x), (y), (z)))
#define LERP(s, e, w) (fabs(w) < (T)0.5 ? FMA_T((w), (e) - (s), (s)) : FMA_T((s) - (e), (T)1 - (w), (e)))
FBX_PW_FLOATS(GEN3, lerp_t, , LERP(a, b, c))
TAB_F(lerp_t)
FBX_PW_FLOATS(GEN2, lerp_s, const T w = (T)P->f[0], LERP(a, b, w))
TAB_F(lerp_s)

/* addcmul / addcdiv: a + value * b * c, a + value * b / c; f[0]/i[0] = value */
FBX_PW_FLOATS(GEN3, addcmul, const T v = (T)P->f[0], a + v * b * c)
FBX_PW_INTS(GEN3, addcmul, const T v = P->i[0],
            (T)((uint64_t)a + (uint64_t)v * (uint64_t)b * (uint64_t)c))
TAB_FI(addcmul)
FBX_PW_FLOATS(GEN3, addcdiv, const T v = (T)P->f[0], a + v * b / c)
TAB_F(addcdiv)

/* clamp(self, min, max) with tensors: NaN in any operand gives NaN */
#define MAXN(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) > (y) ? (x) : (y))))
#define MINN(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) < (y) ? (x) : (y))))
FBX_PW_FLOATS(GEN3, clampt, , MINN(MAXN(a, b), c))
FBX_PW_INTS(GEN3, clampt, , MINN(MAXN(a, b), c))
TAB_FI(clampt)

/* ---- kernels ------------------------------------------------------------------------ */

static fbx_status *run3(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                        const fbx_ivalue *c, const fbx_pw_loop_fn *tab, fbx_dtype d, const fbx_pw_params *P) {
  const fbx_ivalue *v[3] = {a, b, c};
  return fbx_pw_apply(ctx, outs, tab, d, d, c ? 3 : 2, v, P);
}

static fbx_status *where(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *cond;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &cond));
  if (cond->dtype != FBX_DTYPE_BOOL && cond->dtype != FBX_DTYPE_UINT8)
    return fbx_kernel_error(ctx, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                            fbx_dtype_torch_name(cond->dtype));
  const fbx_ivalue *v[2] = {&args[1], &args[2]};
  fbx_dtype d = fbx_result_type(v, 2);
  return run3(ctx, outs, &args[0], &args[1], &args[2], select_tab, d, NULL);
}

fbx_status *fbx_k_pw_where_self(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return where(ctx, args, outs); }
fbx_status *fbx_k_pw_where_ScalarSelf(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return where(ctx, args, outs);
}
fbx_status *fbx_k_pw_where_ScalarOther(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return where(ctx, args, outs);
}
fbx_status *fbx_k_pw_where_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return where(ctx, args, outs); }

/* lerp does not promote: end (and a tensor weight) must have self's dtype. */
static fbx_status *same_dtype(fbx_kctx *ctx, const fbx_tensor *self, const fbx_ivalue *v, const char *name) {
  if (v->kind != FBX_IV_TENSOR || v->u.t->dtype == self->dtype) return NULL;
  return fbx_kernel_error(ctx, "expected dtype %s for `%s` but got dtype %s", fbx_dtype_name(self->dtype), name,
                          fbx_dtype_name(v->u.t->dtype));
}

fbx_status *fbx_k_pw_lerp_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(same_dtype(ctx, self, &args[1], "end"));
  FBX_TRY(same_dtype(ctx, self, &args[2], "weight"));
  return run3(ctx, outs, &args[0], &args[1], &args[2], lerp_t_tab, self->dtype, NULL);
}

fbx_status *fbx_k_pw_lerp_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(same_dtype(ctx, self, &args[1], "end"));
  fbx_pw_params P = {{0}, {0}};
  fbx_pw_scalar_as(&args[2], self->dtype, &P.f[0], NULL);
  return run3(ctx, outs, &args[0], &args[1], NULL, lerp_s_tab, self->dtype, &P);
}

static fbx_status *addc(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool div) {
  const fbx_ivalue *v[3] = {&args[0], &args[1], &args[2]};
  fbx_dtype d = fbx_result_type(v, 3);
  bool int1 = args[1].kind == FBX_IV_TENSOR && !fbx_dtype_is_floating(args[1].u.t->dtype);
  bool int2 = args[2].kind == FBX_IV_TENSOR && !fbx_dtype_is_floating(args[2].u.t->dtype);
  if (div && int1 && int2)
    return fbx_kernel_error(ctx, "Integer division with addcdiv is no longer supported, and in a future  release "
                                 "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                                 "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to("
                                 "input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                                 "float inputs. The future addcdiv behavior is just the latter implementation: (input "
                                 "+ value * tensor1 / tensor2), for all dtypes.");
  fbx_pw_params P = {{0}, {0}};
  fbx_pw_scalar_as(&args[3], d, &P.f[0], &P.i[0]);
  return run3(ctx, outs, &args[0], &args[1], &args[2], div ? addcdiv_tab : addcmul_tab, d, &P);
}

fbx_status *fbx_k_pw_addcmul(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return addc(ctx, args, outs, false); }
fbx_status *fbx_k_pw_addcdiv(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return addc(ctx, args, outs, true); }

/* masked_fill(self, mask, value): self's dtype, broadcast of self and mask. */
static fbx_status *masked_fill(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *mask;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &mask));
  if (fbx_dtype_is_floating(mask->dtype))
    return fbx_kernel_error(ctx, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                            fbx_dtype_name(mask->dtype));
  if (mask->dtype == FBX_DTYPE_UINT8) /* the deprecated uint8 mask must hold 0 and 1 only */
    for (int64_t i = 0; i < mask->numel; i++)
      if (fbx_tensor_get_i64(mask, i) > 1) return fbx_kernel_error(ctx, "Mask tensor can take 0 and 1 values only");
  if (args[2].kind == FBX_IV_TENSOR && args[2].u.t->ndim != 0)
    return fbx_kernel_error(ctx, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                                 "dimension(s).",
                            args[2].u.t->ndim);
  return run3(ctx, outs, &args[1], &args[2], &args[0], select_tab, self->dtype, NULL);
}

fbx_status *fbx_k_pw_masked_fill_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return masked_fill(ctx, args, outs);
}
fbx_status *fbx_k_pw_masked_fill_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return masked_fill(ctx, args, outs);
}

/* clamp.Tensor(self, Tensor? min, Tensor? max) */
fbx_status *fbx_k_pw_clamp_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bool lo = args[1].kind != FBX_IV_NONE, hi = args[2].kind != FBX_IV_NONE;
  if (!lo && !hi) return fbx_kernel_error(ctx, "At least one of 'min' or 'max' must not be None");
  if (!lo) return fbx_k_pw_clamp_max_Tensor(ctx, (fbx_ivalue[]){args[0], args[2]}, outs);
  if (!hi) return fbx_k_pw_clamp_min_Tensor(ctx, args, outs);
  const fbx_ivalue *v[3] = {&args[0], &args[1], &args[2]};
  fbx_dtype d = fbx_result_type(v, 3);
  return run3(ctx, outs, &args[0], &args[1], &args[2], clampt_tab, d, NULL);
}
