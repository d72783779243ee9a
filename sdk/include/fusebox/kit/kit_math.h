/* fusebox kit: the math prelude of generated kernels.
 *
 * The vectorizable float32 functions, half/bfloat16 rounding and PyTorch's
 * floor division and remainder, written once (sdk/kit/kit_prelude.inc) and
 * used two ways: as source text printed into kernels (fbxk_prelude) and
 * compiled into the kit (the functions below, the same code), so a scalar
 * evaluator or a test computes exactly what a kernel computes. */
#ifndef FUSEBOX_KIT_MATH_H
#define FUSEBOX_KIT_MATH_H
#include <fusebox/kit/kit_dtype.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What every kernel of dialect d starts with: the dialect's head (includes,
 * typedefs, qualifier macros, bit casts, FBXK_INF/FBXK_NAN) and then the
 * prelude. A static string, generated at build time from kit_prelude.inc. */
FBXK_API const char *fbxk_prelude(fbxk_dialect d);

FBXK_API float fbxk_vexpf(float x);
FBXK_API float fbxk_vexpf_np(float x); /* x <= 0 or NaN only (FBXK_FACT_NONPOS) */
FBXK_API float fbxk_vexpm1f(float x);
FBXK_API float fbxk_vtanhf(float x);
FBXK_API float fbxk_vlogf(float x);
FBXK_API float fbxk_vlog1pf(float x);
FBXK_API float fbxk_verff(float x);
/* sin and cos as the interpreter computes them for |x| <= 2^15, reduced by
 * Payne and Hanek's method beyond (within 2 ulps of libm): OpenCL kernels'
 * float32 sin and cos (C kernels call libm, CUDA its intrinsics) */
FBXK_API float fbxk_vsinf(float x);
FBXK_API float fbxk_vcosf(float x);
/* powf as the interpreter computes it (in double; C99's special cases too):
 * the float template of pow's general forms */
FBXK_API float fbxk_vpowf(float a, float b);
/* The interpreter's exp2, log2, log10, sinh, cosh, tan (reduced as sin),
 * atan, atan2, asin, acos, erfc and fmod (exact): the float templates of
 * those ops */
FBXK_API float fbxk_vexp2f(float x);
FBXK_API float fbxk_vlog2f(float x);
FBXK_API float fbxk_vlog10f(float x);
FBXK_API float fbxk_vsinhf(float x);
FBXK_API float fbxk_vcoshf(float x);
FBXK_API float fbxk_vtanf(float x);
FBXK_API float fbxk_vatanf(float x);
FBXK_API float fbxk_vatan2f(float y, float x);
FBXK_API float fbxk_vasinf(float x);
FBXK_API float fbxk_vacosf(float x);
FBXK_API float fbxk_verfcf(float x);
FBXK_API float fbxk_vfmodf(float a, float b);
/* hypot as glibc's hypotf computes it, branch-free: the float template of hypot */
FBXK_API float fbxk_vhypotf(float a, float b);
FBXK_API float fbxk_floordivf(float a, float b);
FBXK_API double fbxk_floordiv(double a, double b);
FBXK_API float fbxk_remf(float a, float b);
FBXK_API double fbxk_rem(double a, double b);
/* mish: the interpreter's float form (one exp), PyTorch's composition in double */
FBXK_API float fbxk_mishf(float x);
FBXK_API double fbxk_mish(double x);

#ifdef __cplusplus
}
#endif
#endif
