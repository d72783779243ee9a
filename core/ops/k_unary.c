/* Unary pointwise kernels (rows in ops/list_pointwise.h). Each op is an
 * expression instantiated per dtype by the FBX_PW_* generators; float16 and
 * bfloat16 compute in float32 and round once at the store; integer ops
 * compute in int64 with wrapping (unsigned) arithmetic and narrow at the
 * store, which is what PyTorch's arithmetic in the narrow type gives. */
#include "ops/kopt.h" /* first: the loops' compiler settings */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/vmath.h" /* before tgmath.h: its bodies call the float functions by name */
#include <tgmath.h>

#include "ops/kutil.h"
#include "ops/pointwise.h"
#include "ops/promote.h"

/* loops with the output in the input's dtype / in bool */
#define GEN1(sfx, TS, CT, LD, ST, op, PREP, ...) FBX_PW_LOOP1(op##_##sfx, TS, CT, LD, TS, ST, PREP, __VA_ARGS__)
#define GENB(sfx, TS, CT, LD, ST, op, PREP, ...) \
  FBX_PW_LOOP1(op##_##sfx, TS, CT, LD, uint8_t, FBX_PW_ST_BOOL, PREP, __VA_ARGS__)

/* float-only op whose float32 loop is vectorized except for RARE inputs,
 * which SLOW (libm) recomputes (see FBX_PW_LOOP1X) */
#define GEN1X(sfx, TS, CT, LD, ST, op, PREP, FAST, RARE, SLOW) \
  FBX_PW_LOOP1X(op##_##sfx, TS, CT, LD, TS, ST, PREP, FAST, RARE, SLOW)
#define UFX(op, FAST, RARE, SLOW)                    \
  FBX_PW_FLOATS(GEN1X, op, , FAST, RARE, SLOW)       \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op)};
/* float-only op computed by a block function (FBX_PW_LOOP1B) */
#define GEN1B(sfx, TS, CT, LD, ST, op, BLOCK, RARE, SLOW) \
  FBX_PW_LOOP1B(op##_##sfx, TS, CT, LD, TS, ST, BLOCK, RARE, SLOW)
#define UFB(op, BLOCK, RARE, SLOW)               \
  FBX_PW_FLOATS(GEN1B, op, BLOCK, RARE, SLOW)    \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op)};
/* float-only op: loops and table */
#define UF(op, PREP, ...)                        \
  FBX_PW_FLOATS(GEN1, op, PREP, __VA_ARGS__)     \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op)};
/* float and integral (not bool) */
#define UFI(op, PREP, FEXPR, IEXPR)                                   \
  FBX_PW_FLOATS(GEN1, op, PREP, FEXPR)                                \
  FBX_PW_INTS(GEN1, op, PREP, IEXPR)                                  \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op)};
/* float and integral with their own PREP */
#define UFI2(op, FPREP, FEXPR, IPREP, IEXPR)                          \
  FBX_PW_FLOATS(GEN1, op, FPREP, FEXPR)                               \
  FBX_PW_INTS(GEN1, op, IPREP, IEXPR)                                 \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op)};
/* float, integral and bool */
#define UFIB(op, PREP, FEXPR, IEXPR, BEXPR)                                              \
  FBX_PW_FLOATS(GEN1, op, PREP, FEXPR)                                                   \
  FBX_PW_INTS(GEN1, op, PREP, IEXPR)                                                     \
  FBX_PW_BOOLS(GEN1, op, PREP, BEXPR)                                                    \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op), FBX_PW_TAB_BOOL(op)};
/* bool output, every input dtype */
#define UB(op, FEXPR, IEXPR)                                                             \
  FBX_PW_FLOATS(GENB, op, , FEXPR)                                                       \
  FBX_PW_INTS(GENB, op, , IEXPR)                                                         \
  FBX_PW_BOOLS(GENB, op, , IEXPR)                                                        \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op), FBX_PW_TAB_BOOL(op)};

#define WRAPNEG(a) ((T)(0u - (uint64_t)(a)))

UFI(abs, , fabs(a), a < 0 ? WRAPNEG(a) : a)
UFI(neg, , -a, WRAPNEG(a))
UF(reciprocal, , (T)1 / a)
UF(sqrt, , sqrt(a))
UF(rsqrt, , (T)1 / sqrt(a))
UFI(square, , a * a, (T)((uint64_t)a * (uint64_t)a))
/* Transcendental functions: float32 (and float16/bfloat16, computed in
 * float32) use the vectorizable ops/vmath.h, float64 libm. */
#define VM(fn, x) FBX_VM(fn, x)
static inline double sigmoid_d(double a) { return 1.0 / (1.0 + exp(a * -1.0)); }
#define SIGMOID(x) _Generic((x), float: fbx_vm_sigmoidf, default: sigmoid_d)(x)
UF(exp, , VM(exp, a))
UF(exp2, , VM(exp2, a))
UF(expm1, , VM(expm1, a))
UF(log, , VM(log, a))
UF(log2, , VM(log2, a))
UF(log10, , VM(log10, a))
UF(log1p, , VM(log1p, a))
UFX(sin, VM(sin, a), FBX_VM_TRIG_RARE(a), sin(a))
UFX(cos, VM(cos, a), FBX_VM_TRIG_RARE(a), cos(a))
UFX(tan, VM(tan, a), FBX_VM_TRIG_RARE(a), tan(a))
UF(asin, , VM(asin, a))
UF(acos, , VM(acos, a))
UF(atan, , VM(atan, a))
UF(sinh, , VM(sinh, a))
UF(cosh, , VM(cosh, a))
UF(tanh, , VM(tanh, a))
UF(erf, , VM(erf, a))
_Static_assert(FBX_PW_BLOCK <= FBX_VM_ERFC_BLOCK, "erfc blocks");
UFB(erfc, FBX_VM_ERFC_BLOCK_FN, 0, a)
UFB(lgamma, FBX_VM_LGAMMA_BLOCK_FN, FBX_VM_LGAMMA_RARE(a), lgamma(a))
UF(sigmoid, , SIGMOID(a))
/* f[0] = eps, i[0] = clamp to [eps, 1-eps] (eps given and >= 0) */
#define LOGIT_CLAMP(x, c, lo, hi) ((c) ? ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x))) : (x))
static inline float logit_f(float a, int c, float lo, float hi) {
  float x = LOGIT_CLAMP(a, c, lo, hi);
  return fbx_vm_logf(x / (1.0f - x));
}
static inline double logit_d(double a, int c, double lo, double hi) {
  double x = LOGIT_CLAMP(a, c, lo, hi);
  return log(x / (1.0 - x));
}
#define LOGIT(a, c, lo, hi) _Generic((a), float: logit_f, default: logit_d)(a, c, lo, hi)
UF(logit, const int clampit = (int)P->i[0]; const T lo = (T)P->f[0]; const T hi = (T)1 - lo,
   LOGIT(a, clampit, lo, hi))
UFI(relu, , a < 0 ? (T)0 : a, a < 0 ? 0 : a)
/* f[0], f[1] (i[0], i[1]) = min, max */
UF(leaky_relu, const T s = (T)P->f[0], a > 0 ? a : a * s)
/* f = alpha*scale, scale, input_scale */
UF(elu, const T neg = (T)P->f[0]; const T pos = (T)P->f[1]; const T ins = (T)P->f[2],
   a <= 0 ? VM(expm1, a * ins) * neg : a * pos)
UF(gelu, , a * (T)0.5 * ((T)1 + VM(erf, a * (T)0.70710678118654752440)))
#define GELU_BETA ((T)(1.41421356237309504880 * 1.12837916709551257390 * 0.5))
UF(gelu_tanh, , (T)0.5 * a * ((T)1 + VM(tanh, GELU_BETA * (a + (T)0.044715 * a * a * a))))
UF(silu, , a / ((T)1 + VM(exp, -a)))
/* float: tanh(log1p(e)) = n / (n + 2) with n = e (e + 2), e = e^a (one exp);
 * it is 1 in float for a > 20 (a = 20 itself takes the formula: e^20
 * squared stays finite) */
static inline float mish_f(float a) {
  float e = fbx_vm_expf(a <= 20.0f ? a : 0.0f);
  float n = e * (e + 2.0f);
  return a > 20.0f ? a : a * (n / (n + 2.0f));
}
static inline double mish_d(double a) { return a * tanh(log1p(exp(a))); }
#define MISH(x) _Generic((x), float: mish_f, default: mish_d)(x)
UF(mish, , MISH(a))
static inline double softplus_d(double a) { return log1p(exp(a)); }
#define SOFTPLUS(x) _Generic((x), float: fbx_vm_softplusf, default: softplus_d)(x)
UF(softplus, const T beta = (T)P->f[0]; const T th = (T)P->f[1],
   a * beta > th ? a : SOFTPLUS(a * beta) / beta)
#define HS_CLAMP (a + 3 < 0 ? (T)0 : (a + 3 > 6 ? (T)6 : a + 3))
UF(hardsigmoid, , HS_CLAMP / 6)
UF(hardswish, , a * HS_CLAMP / 6)
/* f[0]/i[0] = threshold, f[1]/i[1] = value */
UFI2(threshold, const T th = (T)P->f[0]; const T v = (T)P->f[1], a <= th ? v : a,
     const T th = P->i[0]; const T v = P->i[1], a <= th ? v : a)
/* exact without SSE4.1's roundps, for float and double (ops/vmath.h) */
UFI(floor, , FBX_VM_ROUND(floor, a), a)
UFI(ceil, , FBX_VM_ROUND(ceil, a), a)
UFI(round, , FBX_VM_ROUND(rint, a), a)
UFI(trunc, , FBX_VM_ROUND(trunc, a), a)
/* i[0] = decimals */
UF(round_decimals, const int negd = P->i[0] < 0;
   const T tp = (T)pow(10.0, (double)(negd ? -P->i[0] : P->i[0])),
   negd ? FBX_VM_ROUND(rint, a / tp) * tp : FBX_VM_ROUND(rint, a * tp) / tp)
UF(frac, , a - FBX_VM_ROUND(trunc, a))
UFIB(sign, , (T)((0 < a) - (a < 0)), (0 < a) - (a < 0), a)
FBX_PW_INTS(GEN1, bitwise_not, , ~a)
FBX_PW_BOOLS(GEN1, bitwise_not, , !a)
static const fbx_pw_table bitwise_not_tab = {FBX_PW_TAB_INTS(bitwise_not), FBX_PW_TAB_BOOL(bitwise_not)};
UB(logical_not, !(a != 0), !a)
UB(isnan, a != a, 0)
UB(isinf, fabs(a) == (T)INFINITY, 0)
UB(isfinite, a - a == 0, 1)
/* f[0..2] = nan, posinf, neginf replacements */
UFIB(nan_to_num, const T nv = (T)P->f[0]; const T pv = (T)P->f[1]; const T mv = (T)P->f[2]; (void)nv; (void)pv;
     (void)mv, a != a ? nv : (a == (T)INFINITY ? pv : (a == -(T)INFINITY ? mv : a)), a, a)

/* Inverse hyperbolic functions (libm, float for float32/float16/bfloat16). */
UF(asinh, , asinh(a))
UF(acosh, , acosh(a))
UF(atanh, , atanh(a))
/* deg2rad / rad2deg: a times the constant in the compute type, as PyTorch's
 * multiplication by a wrapped number */
UF(deg2rad, , a * (T)(3.14159265358979323846 / 180.0))
UF(rad2deg, , a * (T)(180.0 / 3.14159265358979323846))
/* sinc(x) = sin(pi x) / (pi x), 1 at 0; the product rounded to the compute
 * type first (PyTorch multiplies by pi in the type) */
static inline float sinc_f(float a) {
  float p = 3.14159265358979323846f * a;
  return a == 0.0f ? 1.0f : sinf(p) / p;
}
static inline double sinc_d(double a) {
  double p = 3.14159265358979323846 * a;
  return a == 0.0 ? 1.0 : sin(p) / p;
}
#define SINC(x) _Generic((x), float: sinc_f, default: sinc_d)(x)
UF(sinc, , SINC(a))
/* erfinv in double: Giles' single-precision approximation ("Approximating
 * the erfinv function", GPU Computing Gems, 2011) as the start, then two
 * Newton steps on erf(x) = y; NaN outside [-1, 1], +-inf at +-1, -0 kept.
 * float32 (and float16/bfloat16) round the double result once. */
static inline double erfinv_d(double y) {
  if (!(fabs(y) <= 1.0)) return NAN;
  if (fabs(y) == 1.0) return copysign(INFINITY, y);
  if (y == 0.0) return y;
  double w = -log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  for (int k = 0; k < 2; k++) x -= (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
  return x;
}
static inline float erfinv_f(float y) { return (float)erfinv_d((double)y); }
#define ERFINV(x) _Generic((x), float: erfinv_f, default: erfinv_d)(x)
UF(erfinv, , ERFINV(a))
/* sign bit (-0 and -NaN too; integers: < 0, bool: false), infinities of one sign */
/* (the sign bit read from the bits: GCC 12 fails to compile signbit() in the
 * vectorized bfloat16 loop) */
static inline int signbit_f(float a) { return (int)(fbx_vm_f2u(a) >> 31); }
static inline int signbit_d(double a) { return (int)(fbx_vm_d2u(a) >> 63); }
#define SIGNBIT(x) _Generic((x), float: signbit_f, default: signbit_d)(x)
UB(signbit, SIGNBIT(a), a < 0)
UB(isposinf, a == (T)INFINITY, 0)
UB(isneginf, a == -(T)INFINITY, 0)

/* ---- kernels ------------------------------------------------------------------------ */

typedef enum umode {
  U_FLOAT, /* integral/bool inputs compute in float32 (sqrt, exp, ...) */
  U_SAME,  /* the input's dtype, error where the table has no loop */
  U_BOOL,  /* bool output, input dtype */
} umode;

static fbx_status *unary(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, const fbx_pw_loop_fn *tab, umode m,
                         const fbx_pw_params *P) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_dtype d = m == U_FLOAT ? fbx_to_float_dtype(x->dtype) : x->dtype;
  const fbx_ivalue *v[1] = {&args[0]};
  return fbx_pw_apply(ctx, outs, tab, d, m == U_BOOL ? FBX_DTYPE_BOOL : d, 1, v, P);
}

#define K(op, mode)                                                                \
  fbx_status *fbx_k_pw_##op(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { \
    return unary(ctx, args, outs, op##_tab, mode, NULL);                         \
  }

fbx_status *fbx_k_pw_abs(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind == FBX_IV_TENSOR && args[0].u.t->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "abs is not supported for bool tensors");
  return unary(ctx, args, outs, abs_tab, U_SAME, NULL);
}

fbx_status *fbx_k_pw_neg(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind == FBX_IV_TENSOR && args[0].u.t->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary(ctx, args, outs, neg_tab, U_SAME, NULL);
}

K(reciprocal, U_FLOAT)
K(sqrt, U_FLOAT)
K(rsqrt, U_FLOAT)

/* square is pow(self, 2): bool promotes to int64 with the wrapped 2 */
fbx_status *fbx_k_pw_square(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_dtype d = x->dtype == FBX_DTYPE_BOOL ? FBX_DTYPE_INT64 : x->dtype;
  const fbx_ivalue *v[1] = {&args[0]};
  return fbx_pw_apply(ctx, outs, square_tab, d, d, 1, v, NULL);
}

K(exp, U_FLOAT)
K(exp2, U_FLOAT)
K(expm1, U_FLOAT)
K(log, U_FLOAT)
K(log2, U_FLOAT)
K(log10, U_FLOAT)
K(log1p, U_FLOAT)
K(sin, U_FLOAT)
K(cos, U_FLOAT)
K(tan, U_FLOAT)
K(asin, U_FLOAT)
K(acos, U_FLOAT)
K(atan, U_FLOAT)
K(sinh, U_FLOAT)
K(cosh, U_FLOAT)
K(tanh, U_FLOAT)
K(erf, U_FLOAT)
K(erfc, U_FLOAT)
K(lgamma, U_FLOAT)
K(sigmoid, U_FLOAT)
K(asinh, U_FLOAT)
K(acosh, U_FLOAT)
K(atanh, U_FLOAT)
K(deg2rad, U_FLOAT)
K(rad2deg, U_FLOAT)
K(sinc, U_FLOAT)
K(erfinv, U_FLOAT)

/* logit(Tensor self, float? eps=None) */
fbx_status *fbx_k_pw_logit(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  if (args[1].kind != FBX_IV_NONE) {
    P.f[0] = fbx_iv_to_double(&args[1]);
    P.i[0] = P.f[0] >= 0;
  }
  return unary(ctx, args, outs, logit_tab, U_FLOAT, &P);
}

/* Bool has no loop in these tables: the error matches PyTorch's. */
K(relu, U_SAME)
K(silu, U_SAME)
K(mish, U_SAME)
K(hardsigmoid, U_SAME)
K(hardswish, U_SAME)
K(floor, U_SAME)
K(ceil, U_SAME)
K(round, U_SAME)
K(trunc, U_SAME)
K(frac, U_SAME)
K(sign, U_SAME)
K(bitwise_not, U_SAME)
K(logical_not, U_BOOL)
K(isnan, U_BOOL)
K(isinf, U_BOOL)
K(isfinite, U_BOOL)
K(signbit, U_BOOL)
K(isposinf, U_BOOL)
K(isneginf, U_BOOL)


static fbx_dtype self_dtype(const fbx_ivalue *args) {
  return args[0].kind == FBX_IV_TENSOR ? args[0].u.t->dtype : FBX_DTYPE_FLOAT32;
}

/* Scalars read the way the kernel's dtype sees them (scalar.to<scalar_t>(),
 * which checks for overflow). */
static fbx_status *scalar_param(fbx_kctx *ctx, fbx_pw_params *P, int k, const fbx_ivalue *v, fbx_dtype d) {
  return fbx_pw_scalar_checked(ctx, v, d, &P->f[k], &P->i[k]);
}

fbx_status *fbx_k_pw_leaky_relu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  FBX_TRY(scalar_param(ctx, &P, 0, &args[1], self_dtype(args)));
  return unary(ctx, args, outs, leaky_relu_tab, U_SAME, &P);
}

/* elu(self, alpha, scale, input_scale): x <= 0 ? expm1(x*input_scale)*alpha*scale : x*scale */
fbx_status *fbx_k_pw_elu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  fbx_dtype d = self_dtype(args);
  double alpha, scale, iscale;
  FBX_TRY(fbx_pw_scalar_checked(ctx, &args[1], d, &alpha, NULL));
  FBX_TRY(fbx_pw_scalar_checked(ctx, &args[2], d, &scale, NULL));
  FBX_TRY(fbx_pw_scalar_checked(ctx, &args[3], d, &iscale, NULL));
  P.f[0] = alpha * scale;
  P.f[1] = scale;
  P.f[2] = iscale;
  return unary(ctx, args, outs, elu_tab, U_SAME, &P);
}

fbx_status *fbx_k_pw_gelu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *mode = args[1].kind == FBX_IV_STR ? fbx_iv_str_data(&args[1]) : "none";
  if (!strcmp(mode, "none")) return unary(ctx, args, outs, gelu_tab, U_SAME, NULL);
  if (!strcmp(mode, "tanh")) return unary(ctx, args, outs, gelu_tanh_tab, U_SAME, NULL);
  return fbx_kernel_error(ctx, "approximate argument must be either none or tanh.");
}

fbx_status *fbx_k_pw_softplus(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  fbx_dtype d = self_dtype(args);
  FBX_TRY(scalar_param(ctx, &P, 0, &args[1], d));
  FBX_TRY(scalar_param(ctx, &P, 1, &args[2], d));
  return unary(ctx, args, outs, softplus_tab, U_SAME, &P);
}

fbx_status *fbx_k_pw_threshold(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  fbx_dtype d = self_dtype(args);
  FBX_TRY(scalar_param(ctx, &P, 0, &args[1], d));
  FBX_TRY(scalar_param(ctx, &P, 1, &args[2], d));
  return unary(ctx, args, outs, threshold_tab, U_SAME, &P);
}

fbx_status *fbx_k_pw_round_decimals(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  P.i[0] = fbx_iv_to_int(&args[1]);
  if (P.i[0] == 0) return unary(ctx, args, outs, round_tab, U_SAME, NULL);
  return unary(ctx, args, outs, round_decimals_tab, U_SAME, &P);
}

/* nan_to_num(self, nan=0, posinf=max finite, neginf=lowest finite) */
fbx_status *fbx_k_pw_nan_to_num(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_pw_params P = {{0}, {0}};
  double big;
  switch (self_dtype(args)) {
    case FBX_DTYPE_FLOAT16: big = 65504.0; break;
    case FBX_DTYPE_BFLOAT16: big = 3.3895313892515355e38; break;
    case FBX_DTYPE_FLOAT64: big = 1.7976931348623157e308; break;
    default: big = 3.4028234663852886e38; break;
  }
  P.f[0] = args[1].kind == FBX_IV_NONE ? 0.0 : fbx_iv_to_double(&args[1]);
  P.f[1] = args[2].kind == FBX_IV_NONE ? big : fbx_iv_to_double(&args[2]);
  P.f[2] = args[3].kind == FBX_IV_NONE ? -big : fbx_iv_to_double(&args[3]);
  return unary(ctx, args, outs, nan_to_num_tab, U_SAME, &P);
}

/* ---- clamp ------------------------------------------------------------------------------ */

/* f[0]/i[0] = min, f[1]/i[1] = max; an absent bound is -inf/+inf (INT64_MIN/MAX).
 * std::min(std::max(a, lo), hi): a NaN input stays, a NaN bound is ignored,
 * min > max gives max. */
#define CLAMP_EXPR hi < (a < lo ? lo : a) ? hi : (a < lo ? lo : a)
UFI2(clamp, const T lo = (T)P->f[0]; const T hi = (T)P->f[1], CLAMP_EXPR,
     const T lo = P->i[0]; const T hi = P->i[1], CLAMP_EXPR)

static fbx_status *clamp_scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, const fbx_ivalue *lo,
                                const fbx_ivalue *hi) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool has_lo = lo && lo->kind != FBX_IV_NONE, has_hi = hi && hi->kind != FBX_IV_NONE;
  if (!has_lo && !has_hi) return fbx_kernel_error(ctx, "At least one of 'min' or 'max' must not be None");
  const fbx_ivalue *vals[3] = {&args[0], has_lo ? lo : NULL, has_hi ? hi : NULL};
  fbx_dtype d = fbx_result_type(vals, 3);
  fbx_pw_params P = {{-INFINITY, INFINITY}, {INT64_MIN, INT64_MAX}};
  if (has_lo) FBX_TRY(scalar_param(ctx, &P, 0, lo, d));
  if (has_hi) FBX_TRY(scalar_param(ctx, &P, 1, hi, d));
  if (fbx_dtype_is_floating(d)) {
    /* a NaN bound never wins a comparison: drop it (std::max(a, NaN) is a) */
    if (P.f[0] != P.f[0]) P.f[0] = -INFINITY;
    if (P.f[1] != P.f[1]) P.f[1] = INFINITY;
  }
  return fbx_pw_apply(ctx, outs, clamp_tab, d, d, 1, vals, &P);
}

fbx_status *fbx_k_pw_clamp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return clamp_scalar(ctx, args, outs, &args[1], &args[2]);
}
fbx_status *fbx_k_pw_clamp_min(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return clamp_scalar(ctx, args, outs, &args[1], NULL);
}
fbx_status *fbx_k_pw_clamp_max(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return clamp_scalar(ctx, args, outs, NULL, &args[1]);
}

/* hardtanh is clamp (promoting: uint8 with -0.5 clamps in float32) cast back
 * to self's dtype; unsigned self refuses negative limits. */
fbx_status *fbx_k_pw_hardtanh(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->dtype == FBX_DTYPE_BOOL) return fbx_pw_unsupported(ctx, x->dtype);
  if (x->dtype == FBX_DTYPE_UINT8 && (fbx_iv_to_int(&args[1]) < 0 || fbx_iv_to_int(&args[2]) < 0))
    return fbx_kernel_error(ctx, "cannot do hardtanh on an unsigned type with negative limits");
  fbx_ivalue r = fbx_iv_none();
  FBX_TRY(clamp_scalar(ctx, args, &r, &args[1], &args[2]));
  if (r.u.t->dtype == x->dtype) {
    outs[0] = r;
    return NULL;
  }
  fbx_tensor *c = NULL;
  fbx_status *st = fbx_tensor_clone_as(&c, r.u.t, x->dtype);
  fbx_iv_release(&r);
  if (st) return st;
  outs[0] = fbx_iv_tensor(c);
  return NULL;
}

fbx_status *fbx_k_pw_relu6(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue a[3] = {args[0], fbx_iv_int(0), fbx_iv_int(6)};
  return fbx_k_pw_hardtanh(ctx, a, outs);
}
