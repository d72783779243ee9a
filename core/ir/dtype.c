#include <fusebox/dtype.h>

#include <string.h>

int fbx_dtype_valid(int d) {
  switch (d) {
#define CASE_(e, code, name, ctype, size, npy) case code:
    FBX_DTYPE_LIST(CASE_)
#undef CASE_
    return 1;
    default:
      return 0;
  }
}

size_t fbx_dtype_size(fbx_dtype d) {
  switch (d) {
#define CASE_(e, code, name, ctype, size, npy) \
  case FBX_DTYPE_##e:                          \
    return size;
    FBX_DTYPE_LIST(CASE_)
#undef CASE_
    default:
      return 0;
  }
}

const char *fbx_dtype_torch_name(fbx_dtype d) {
  switch (d) {
#define CASE_(e, code, name, ctype, size, npy) \
  case FBX_DTYPE_##e:                          \
    return name;
    FBX_DTYPE_LIST(CASE_)
#undef CASE_
    default:
      return NULL;
  }
}

const char *fbx_dtype_name(fbx_dtype d) {
  switch (d) {
    case FBX_DTYPE_UINT8: return "uint8";
    case FBX_DTYPE_INT8: return "int8";
    case FBX_DTYPE_INT16: return "int16";
    case FBX_DTYPE_INT32: return "int32";
    case FBX_DTYPE_INT64: return "int64";
    case FBX_DTYPE_FLOAT16: return "float16";
    case FBX_DTYPE_FLOAT32: return "float32";
    case FBX_DTYPE_FLOAT64: return "float64";
    case FBX_DTYPE_BOOL: return "bool";
    case FBX_DTYPE_BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

fbx_dtype fbx_dtype_from_torch_name(const char *s, size_t n) {
#define CASE_(e, code, name, ctype, size, npy) \
  if (strlen(name) == n && !memcmp(s, name, n)) return FBX_DTYPE_##e;
  FBX_DTYPE_LIST(CASE_)
#undef CASE_
  return FBX_DTYPE_UNDEFINED;
}

int fbx_dtype_is_floating(fbx_dtype d) {
  return d == FBX_DTYPE_FLOAT16 || d == FBX_DTYPE_FLOAT32 || d == FBX_DTYPE_FLOAT64 ||
         d == FBX_DTYPE_BFLOAT16;
}

int fbx_dtype_is_integral(fbx_dtype d) {
  return d == FBX_DTYPE_UINT8 || d == FBX_DTYPE_INT8 || d == FBX_DTYPE_INT16 ||
         d == FBX_DTYPE_INT32 || d == FBX_DTYPE_INT64;
}
