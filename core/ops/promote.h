/* PyTorch's type promotion.
 *
 * Categories bool < integral < floating. Among operands, tensors with one or
 * more dims outrank 0-d tensors, which outrank "wrapped numbers" (Python
 * scalars: int/float/bool ivalues). A lower-priority operand only matters
 * when its category is higher than everything above it, and then it adds
 * its category at the default dtype (float -> float32, int -> int64), not its
 * own dtype: float32_tensor + 2.5 is float32, int32_tensor + 2.5 is float32,
 * int32_tensor + 0-d int64 tensor is int32, uint8 + int8 is int16.
 *
 *   const fbx_ivalue *ops[2] = {&a, &b};
 *   fbx_dtype d = fbx_result_type(ops, 2);
 */
#ifndef FBX_OPS_PROMOTE_H
#define FBX_OPS_PROMOTE_H
#include <fusebox/dtype.h>

#include "ops/ivalue.h"

/* torch.promote_types for two dtypes. */
fbx_dtype fbx_promote_types(fbx_dtype a, fbx_dtype b);
/* torch.result_type over tensor and scalar ivalues (other kinds and None are
 * skipped). FBX_DTYPE_UNDEFINED when there is no operand. */
fbx_dtype fbx_result_type(const fbx_ivalue *const *vals, int n);
/* The dtype a Python scalar has as a wrapped number: int64, float32 for
 * float (the default dtype), bool. */
fbx_dtype fbx_scalar_default_dtype(const fbx_ivalue *v);
/* Integral and bool map to float32; floating dtypes stay. */
fbx_dtype fbx_to_float_dtype(fbx_dtype d);

#endif
