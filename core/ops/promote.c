/* PyTorch's type promotion (c10's promoteTypes and ResultTypeState). */
#include "ops/promote.h"

#include <stdbool.h>

static bool is_float(fbx_dtype d) { return fbx_dtype_is_floating(d) != 0; }

/* Position of an integral dtype in the signed ladder; uint8 is special. */
static int int_rank(fbx_dtype d) {
  switch (d) {
    case FBX_DTYPE_INT8: return 1;
    case FBX_DTYPE_INT16: return 2;
    case FBX_DTYPE_INT32: return 3;
    case FBX_DTYPE_INT64: return 4;
    default: return 0;
  }
}

static int float_rank(fbx_dtype d) {
  switch (d) {
    case FBX_DTYPE_FLOAT16:
    case FBX_DTYPE_BFLOAT16: return 1;
    case FBX_DTYPE_FLOAT32: return 2;
    case FBX_DTYPE_FLOAT64: return 3;
    default: return 0;
  }
}

fbx_dtype fbx_promote_types(fbx_dtype a, fbx_dtype b) {
  if (a == FBX_DTYPE_UNDEFINED) return b;
  if (b == FBX_DTYPE_UNDEFINED) return a;
  if (a == b) return a;
  if (a == FBX_DTYPE_BOOL) return b;
  if (b == FBX_DTYPE_BOOL) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    /* float16 and bfloat16 meet at float32 */
    if (float_rank(a) == 1 && float_rank(b) == 1) return FBX_DTYPE_FLOAT32;
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  /* both integral, different */
  if (a == FBX_DTYPE_UINT8 || b == FBX_DTYPE_UINT8) {
    fbx_dtype o = a == FBX_DTYPE_UINT8 ? b : a;
    return o == FBX_DTYPE_INT8 ? FBX_DTYPE_INT16 : o; /* uint8 + int8 -> int16 */
  }
  return int_rank(a) >= int_rank(b) ? a : b;
}

fbx_dtype fbx_scalar_default_dtype(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_INT: return FBX_DTYPE_INT64;
    case FBX_IV_FLOAT: return FBX_DTYPE_FLOAT32;
    case FBX_IV_BOOL: return FBX_DTYPE_BOOL;
    default: return FBX_DTYPE_UNDEFINED;
  }
}

fbx_dtype fbx_to_float_dtype(fbx_dtype d) {
  return is_float(d) ? d : FBX_DTYPE_FLOAT32;
}

/* c10's combine_categories: `lower` only counts when it is of a higher
 * category, or when `higher` is bool. */
static fbx_dtype combine(fbx_dtype higher, fbx_dtype lower) {
  if (higher != FBX_DTYPE_UNDEFINED && is_float(higher)) return higher;
  if (higher == FBX_DTYPE_BOOL || (lower != FBX_DTYPE_UNDEFINED && is_float(lower)))
    return fbx_promote_types(higher, lower);
  if (higher != FBX_DTYPE_UNDEFINED) return higher;
  return lower;
}

fbx_dtype fbx_result_type(const fbx_ivalue *const *vals, int n) {
  fbx_dtype dim = FBX_DTYPE_UNDEFINED, zero = FBX_DTYPE_UNDEFINED, wrapped = FBX_DTYPE_UNDEFINED;
  for (int i = 0; i < n; i++) {
    const fbx_ivalue *v = vals[i];
    if (!v) continue;
    if (v->kind == FBX_IV_TENSOR) {
      if (v->u.t->ndim > 0) dim = fbx_promote_types(dim, v->u.t->dtype);
      else zero = fbx_promote_types(zero, v->u.t->dtype);
    } else {
      fbx_dtype d = fbx_scalar_default_dtype(v);
      if (d != FBX_DTYPE_UNDEFINED) wrapped = fbx_promote_types(wrapped, d);
    }
  }
  return combine(dim, combine(zero, wrapped));
}
