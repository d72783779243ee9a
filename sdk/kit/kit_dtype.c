/* dtype helpers: codes, PyTorch's promotion, type names per dialect. */
#include <fusebox/kit/kit_dtype.h>

int fbxk_is_float(int dt) { return dt == FBXK_F16 || dt == FBXK_F32 || dt == FBXK_F64 || dt == FBXK_BF16; }
int fbxk_is_int(int dt) { return dt >= FBXK_U8 && dt <= FBXK_I64; }
int fbxk_valid_dtype(int dt) { return fbxk_is_float(dt) || fbxk_is_int(dt) || dt == FBXK_BOOL; }

int fbxk_dtype_size(int dt) {
  switch (dt) {
    case FBXK_U8: case FBXK_I8: case FBXK_BOOL: return 1;
    case FBXK_I16: case FBXK_F16: case FBXK_BF16: return 2;
    case FBXK_I32: case FBXK_F32: return 4;
    case FBXK_I64: case FBXK_F64: return 8;
    default: return 0;
  }
}

const char *fbxk_dtype_name(int dt) {
  switch (dt) {
    case FBXK_U8: return "uint8";
    case FBXK_I8: return "int8";
    case FBXK_I16: return "int16";
    case FBXK_I32: return "int32";
    case FBXK_I64: return "int64";
    case FBXK_F16: return "float16";
    case FBXK_F32: return "float32";
    case FBXK_F64: return "float64";
    case FBXK_BOOL: return "bool";
    case FBXK_BF16: return "bfloat16";
    default: return "?";
  }
}

int fbxk_promote(int a, int b) {
  if (a == b) return a;
  if (a == FBXK_BOOL) return b;
  if (b == FBXK_BOOL) return a;
  if (fbxk_is_float(a) || fbxk_is_float(b)) {
    if (!fbxk_is_float(a)) return b;
    if (!fbxk_is_float(b)) return a;
    if ((a == FBXK_F16 && b == FBXK_BF16) || (a == FBXK_BF16 && b == FBXK_F16)) return FBXK_F32;
    if (a == FBXK_F64 || b == FBXK_F64) return FBXK_F64;
    if (a == FBXK_F32 || b == FBXK_F32) return FBXK_F32;
    return a;
  }
  /* integers: uint8 with a signed type needs the next wider signed one */
  if (a == FBXK_U8 || b == FBXK_U8) {
    int s = a == FBXK_U8 ? b : a;
    return s == FBXK_I8 ? FBXK_I16 : s;
  }
  return a > b ? a : b;
}

static int category(int dt) { return dt == FBXK_BOOL ? 0 : fbxk_is_int(dt) ? 1 : 2; }

int fbxk_result_type(const fbxk_typed *v, int n) {
  int cls[3] = {-1, -1, -1};
  for (int i = 0; i < n; i++) {
    int dt = v[i].dtype;
    if (dt < 0 || v[i].prio < FBXK_PRIO_SCALAR || v[i].prio > FBXK_PRIO_TENSOR) return -1;
    if (v[i].prio == FBXK_PRIO_SCALAR) dt = dt == FBXK_F64 ? FBXK_F32 : dt; /* the default dtype */
    int *c = &cls[v[i].prio];
    *c = *c < 0 ? dt : fbxk_promote(*c, dt);
  }
  int r = cls[FBXK_PRIO_TENSOR];
  for (int p = FBXK_PRIO_ZERODIM; p >= FBXK_PRIO_SCALAR; p--) {
    if (cls[p] < 0) continue;
    if (r < 0) r = cls[p];
    else if (category(cls[p]) > category(r)) r = fbxk_promote(r, cls[p]);
  }
  return r;
}

int fbxk_to_float(int dt) { return fbxk_is_float(dt) ? dt : FBXK_F32; }

const char *fbxk_storage_type(int dt, fbxk_dialect d) {
  int cl = d == FBXK_OPENCL;
  switch (dt) {
    case FBXK_U8: case FBXK_BOOL: return cl ? "uchar" : "uint8_t";
    case FBXK_I8: return cl ? "char" : "int8_t";
    case FBXK_I16: return cl ? "short" : "int16_t";
    case FBXK_I32: return cl ? "int" : "int32_t";
    case FBXK_I64: return cl ? "long" : "int64_t";
    case FBXK_F16: case FBXK_BF16: return cl ? "ushort" : "uint16_t";
    case FBXK_F32: return "float";
    default: return "double";
  }
}

const char *fbxk_compute_type(int dt, fbxk_dialect d) {
  if (dt == FBXK_F64) return "double";
  if (fbxk_is_float(dt)) return "float";
  return d == FBXK_OPENCL ? "long" : "int64_t";
}
