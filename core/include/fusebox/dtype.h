/* Element types. The numeric values are PyTorch's ScalarType codes, so an
 * integer dtype constant in a TorchScript graph (`prim::Constant[value=6]`,
 * meaning float32) is an fbx_dtype as it stands.
 *
 *   fbx_dtype d = fbx_dtype_from_torch_name("Float");   // FBX_DTYPE_FLOAT32
 *   size_t n = fbx_dtype_size(d);                        // 4
 */
#ifndef FUSEBOX_DTYPE_H
#define FUSEBOX_DTYPE_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum suffix, torch code, IR name, C storage type name, size, numpy descr) */
#define FBX_DTYPE_LIST(X)                         \
  X(UINT8, 0, "Byte", uint8_t, 1, "|u1")          \
  X(INT8, 1, "Char", int8_t, 1, "|i1")            \
  X(INT16, 2, "Short", int16_t, 2, "<i2")         \
  X(INT32, 3, "Int", int32_t, 4, "<i4")           \
  X(INT64, 4, "Long", int64_t, 8, "<i8")          \
  X(FLOAT16, 5, "Half", uint16_t, 2, "<f2")       \
  X(FLOAT32, 6, "Float", float, 4, "<f4")         \
  X(FLOAT64, 7, "Double", double, 8, "<f8")       \
  X(BOOL, 11, "Bool", uint8_t, 1, "|b1")          \
  X(BFLOAT16, 15, "BFloat16", uint16_t, 2, NULL)

typedef enum fbx_dtype {
  FBX_DTYPE_UNDEFINED = -1,
#define FBX_DTYPE_ENUM_(e, code, name, ctype, size, npy) FBX_DTYPE_##e = code,
  FBX_DTYPE_LIST(FBX_DTYPE_ENUM_)
#undef FBX_DTYPE_ENUM_
  FBX_DTYPE_MAX_CODE = 16
} fbx_dtype;

/* 1 if d names one of the dtypes above. */
int fbx_dtype_valid(int d);
/* Bytes per element; 0 for an invalid dtype. */
size_t fbx_dtype_size(fbx_dtype d);
/* "Float", "Long", ... as TorchScript IR prints them; NULL if invalid. */
const char *fbx_dtype_torch_name(fbx_dtype d);
/* "float32", "int64", ... ; "undefined" if invalid. */
const char *fbx_dtype_name(fbx_dtype d);
/* Inverse of fbx_dtype_torch_name (length-delimited); FBX_DTYPE_UNDEFINED if unknown. */
fbx_dtype fbx_dtype_from_torch_name(const char *s, size_t n);
int fbx_dtype_is_floating(fbx_dtype d);
int fbx_dtype_is_integral(fbx_dtype d); /* bool excluded */

#ifdef __cplusplus
}
#endif
#endif
