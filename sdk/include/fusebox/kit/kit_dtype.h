/* fusebox kit: dtypes of generated kernels.
 *
 * ScalarType codes (the numbers fuser_abi.h's fbxp_arg_spec.dtype carries),
 * PyTorch's type promotion with wrapped-number priority, the C type names of
 * each dialect and element sizes. Depends on nothing but libc. */
#ifndef FUSEBOX_KIT_DTYPE_H
#define FUSEBOX_KIT_DTYPE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kit functions are hidden when the kit is linked into a plugin. */
#ifndef FBXK_API
#define FBXK_API __attribute__((visibility("hidden")))
#endif

/* ScalarType codes. */
enum {
  FBXK_U8 = 0, FBXK_I8 = 1, FBXK_I16 = 2, FBXK_I32 = 3, FBXK_I64 = 4, FBXK_F16 = 5, FBXK_F32 = 6, FBXK_F64 = 7,
  FBXK_BOOL = 11, FBXK_BF16 = 15,
};

/* The three C-family dialects the kit prints. */
typedef enum fbxk_dialect { FBXK_C = 0, FBXK_CUDA = 1, FBXK_OPENCL = 2, FBXK_NDIALECTS = 3 } fbxk_dialect;

/* A wrapped number's priority in type promotion: Python scalars < 0-d
 * tensors < tensors with dimensions. */
enum { FBXK_PRIO_SCALAR = 0, FBXK_PRIO_ZERODIM = 1, FBXK_PRIO_TENSOR = 2 };

/* An operand's type as promotion sees it. A scalar's dtype is FBXK_F64,
 * FBXK_I64 or FBXK_BOOL (a Python float, int or bool). */
typedef struct fbxk_typed {
  int dtype;
  int prio;
} fbxk_typed;

FBXK_API int fbxk_is_float(int dt);
FBXK_API int fbxk_is_int(int dt); /* integral, bool excluded */
FBXK_API int fbxk_valid_dtype(int dt);
FBXK_API int fbxk_dtype_size(int dt); /* bytes; 0 for an unknown code */
FBXK_API const char *fbxk_dtype_name(int dt); /* "float32", ...; "?" */
/* torch.promote_types */
FBXK_API int fbxk_promote(int a, int b);
/* torch.result_type: tensors outrank 0-d tensors, which outrank wrapped
 * numbers; a lower class only counts when its category (bool < integral <
 * floating) is higher, and a wrapped float then contributes float32 (the
 * default dtype). -1 for n == 0. */
FBXK_API int fbxk_result_type(const fbxk_typed *v, int n);
/* int/bool -> float32 (ops such as sqrt, div) */
FBXK_API int fbxk_to_float(int dt);

/* C type names. The storage type holds an element in memory (half and
 * bfloat16 as uint16_t bits, bool as uint8_t); the compute type holds a
 * value in a kernel: double for float64, float for the other floats,
 * int64_t for integers and bool (integer math wraps through uint64_t). */
FBXK_API const char *fbxk_storage_type(int dt, fbxk_dialect d);
FBXK_API const char *fbxk_compute_type(int dt, fbxk_dialect d);

/* Conversions as kit functions (the same code kernels get in the prelude):
 * round to nearest even, NaN kept quiet, overflow to infinity. */
FBXK_API float fbxk_h2f(uint16_t h);
FBXK_API uint16_t fbxk_f2h(float f);
FBXK_API float fbxk_b2f(uint16_t b);
FBXK_API uint16_t fbxk_f2b(float f);
FBXK_API float fbxk_rh(float x); /* x rounded to half and back */
FBXK_API float fbxk_rb(float x); /* x rounded to bfloat16 and back */

#ifdef __cplusplus
}
#endif
#endif
