/* Binary pointwise kernels (rows in ops/list_pointwise.h). The result dtype
 * is torch.result_type over both operands (a Python scalar is a wrapped
 * number, cast to the common dtype, so `uint8_tensor + 300` adds 44 as
 * PyTorch does); both inputs are converted to the common dtype and one loop
 * per dtype runs. Integer division, remainder and fmod by zero raise
 * ZeroDivisionError like PyTorch on the CPU. */
#include "ops/kopt.h" /* first: the loops' compiler settings */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/vmath.h" /* before tgmath.h */
#include <tgmath.h>

#include "ops/kutil.h"
#include "ops/pointwise.h"
#include "ops/promote.h"

#define GEN2(sfx, TS, CT, LD, ST, op, PREP, ...) FBX_PW_LOOP2(op##_##sfx, TS, CT, LD, TS, ST, PREP, __VA_ARGS__)
#define GEN2B(sfx, TS, CT, LD, ST, op, PREP, ...) \
  FBX_PW_LOOP2(op##_##sfx, TS, CT, LD, uint8_t, FBX_PW_ST_BOOL, PREP, __VA_ARGS__)
#define GEN1(sfx, TS, CT, LD, ST, op, PREP, ...) FBX_PW_LOOP1(op##_##sfx, TS, CT, LD, TS, ST, PREP, __VA_ARGS__)

#define TAB_F(op) static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op)};
#define TAB_FI(op) static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op)};
#define TAB_FIB(op) \
  static const fbx_pw_table op##_tab = {FBX_PW_TAB_FLOATS(op), FBX_PW_TAB_INTS(op), FBX_PW_TAB_BOOL(op)};
#define TAB_IB(op) static const fbx_pw_table op##_tab = {FBX_PW_TAB_INTS(op), FBX_PW_TAB_BOOL(op)};

/* float, integral and bool loops of one op (output in the input dtype) */
#define BFIB(op, FPREP, FEXPR, IPREP, IEXPR) \
  FBX_PW_FLOATS(GEN2, op, FPREP, FEXPR)      \
  FBX_PW_INTS(GEN2, op, IPREP, IEXPR)        \
  FBX_PW_BOOLS(GEN2, op, IPREP, IEXPR)       \
  TAB_FIB(op)
#define BFI(op, FEXPR, IEXPR)           \
  FBX_PW_FLOATS(GEN2, op, , FEXPR)      \
  FBX_PW_INTS(GEN2, op, , IEXPR)        \
  TAB_FI(op)
#define BF(op, FEXPR)                   \
  FBX_PW_FLOATS(GEN2, op, , FEXPR)      \
  TAB_F(op)
/* bool output for every input dtype */
#define BB(op, FEXPR, IEXPR)                \
  FBX_PW_FLOATS(GEN2B, op, , FEXPR)         \
  FBX_PW_INTS(GEN2B, op, , IEXPR)           \
  FBX_PW_BOOLS(GEN2B, op, , IEXPR)          \
  TAB_FIB(op)

/* wrapping integer arithmetic (no signed overflow) */
#define UADD(x, y) ((T)((uint64_t)(x) + (uint64_t)(y)))
#define USUB(x, y) ((T)((uint64_t)(x) - (uint64_t)(y)))
#define UMUL(x, y) ((T)((uint64_t)(x) * (uint64_t)(y)))

/* f[0]/i[0] = alpha */
BFIB(add, , a + b, , UADD(a, b))
BFIB(add_alpha, const T al = (T)P->f[0], a + al * b, const T al = P->i[0], UADD(a, UMUL(al, b)))
BFI(sub, a - b, USUB(a, b))
FBX_PW_FLOATS(GEN2, sub_alpha, const T al = (T)P->f[0], a - al * b)
FBX_PW_INTS(GEN2, sub_alpha, const T al = P->i[0], USUB(a, UMUL(al, b)))
TAB_FI(sub_alpha)
BFIB(mul, , a * b, , UMUL(a, b))
BF(div, a / b)
FBX_PW_FLOATS(GEN2, div_trunc, , FBX_VM_ROUND(trunc, a / b))

static inline int64_t idiv_trunc(int64_t a, int64_t b) { return b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b; }
static inline int64_t idiv_floor(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0u - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t irem(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t ifmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

/* Python's floor division for floats, as PyTorch computes it: from fmod, so
 * that a == (a // b) * b + a % b holds as closely as rounding allows. */
#define DEF_FLOAT_DIVS(T, sfx)                                      \
  static inline T floordiv_##sfx(T a, T b) {                        \
    if (b == 0) return a / b;                                       \
    T mod = fmod(a, b);                                             \
    T div = (a - mod) / b;                                          \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                 \
    if (div == 0) return copysign((T)0, a / b);                     \
    T fd = floor(div);                                              \
    if (div - fd > (T)0.5) fd += 1;                                 \
    return fd;                                                      \
  }                                                                 \
  static inline T remainder_##sfx(T a, T b) {                       \
    T mod = fmod(a, b);                                             \
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;                 \
    return mod;                                                     \
  }
DEF_FLOAT_DIVS(float, f)
DEF_FLOAT_DIVS(double, d)
#define FLOORDIV(a, b) _Generic((a), float: floordiv_f, default: floordiv_d)(a, b)
#define REMAINDER(a, b) _Generic((a), float: remainder_f, default: remainder_d)(a, b)

/* floor_divide for float32, branch-free: k = rint(a / b) (quotient in
 * double), r = a - k b exactly (k b has at most 45 bits, |r| <= |b| / 2 +
 * a rounding), so floor(a / b) = k - 1 where r / b < 0 (r b has the sign
 * of r / b and does not underflow), else k; a zero takes the sign of a / b.
 * For |a / b| < 2^21 PyTorch's formula above gives that same integer:
 * (a - mod) / b is then within 3/8 of it, which its floor and 0.5 step
 * round back. floordiv_rare_vf: the rest (and b = 0, infinite or NaN
 * operands), for floordiv_f. */
static inline int floordiv_rare_vf(float a, float b) {
  double q = (double)a / (double)b;
  return !(fbx_vm_absd(q) < 0x1p21) || fbx_vm_absf(b) == INFINITY;
}
static inline float floordiv_vf(float a, float b) {
  double ad = (double)a, bd = (double)b;
  double k = fbx_vm_rint_small_d(ad / bd);
  double r = ad - k * bd;
  double d = r * bd < 0.0 ? k - 1.0 : k;
  float z = fbx_vm_u2f((fbx_vm_f2u(a) ^ fbx_vm_f2u(b)) & 0x80000000u);
  return d == 0.0 ? z : (float)d;
}
/* remainder, branch-free on the exact vectorized fmod of ops/vmath.h, for
 * float32 where FBX_VM_FMOD_RARE is false (the loops recompute the rest
 * with the functions above). For double these are never used. */
static inline float remainder_vf(float a, float b) {
  float mod = fbx_vm_fmodf(a, b);
  return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;
}
#define VFLOORDIV(a, b) _Generic((a), float: floordiv_vf, default: floordiv_d)(a, b)
#define VFLOORDIV_RARE(a, b) _Generic((a), float: floordiv_rare_vf, default: fbx_vm_never2)(a, b)
#define VREMAINDER(a, b) _Generic((a), float: remainder_vf, default: remainder_d)(a, b)
#define GEN2X(sfx, TS, CT, LD, ST, op, PREP, FAST, RARE, SLOW) \
  FBX_PW_LOOP2X(op##_##sfx, TS, CT, LD, TS, ST, PREP, FAST, RARE, SLOW)

FBX_PW_FLOATS(GEN2X, div_floor, , VFLOORDIV(a, b), VFLOORDIV_RARE(a, b), FLOORDIV(a, b))
FBX_PW_INTS(GEN2, div_floor, , idiv_floor(a, b))
TAB_FI(div_floor)
FBX_PW_INTS(GEN2, div_trunc_i, , idiv_trunc(a, b))
static const fbx_pw_table div_trunc_any_tab = {FBX_PW_TAB_FLOATS(div_trunc), FBX_PW_TAB_INTS(div_trunc_i)};
FBX_PW_FLOATS(GEN2X, remainder, , VREMAINDER(a, b), FBX_VM_FMOD_RARE(a, b), REMAINDER(a, b))
FBX_PW_INTS(GEN2, remainder, , irem(a, b))
TAB_FI(remainder)
FBX_PW_FLOATS(GEN2X, fmod, , FBX_VM_FMOD(a, b), FBX_VM_FMOD_RARE(a, b), fmod(a, b))
FBX_PW_INTS(GEN2, fmod, , ifmod(a, b))
TAB_FI(fmod)

/* PyTorch's powi: exponentiation by squaring with wrapping; negative
 * exponents give 1 for base 1, +-1 for base -1 and 0 otherwise. */
static inline int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    b /= 2;
    x *= x;
  }
  return (int64_t)r;
}
/* float types: fbx_vm_powf_block a block at a time (its passes need the
 * whole block, see vmath.h; f16/bf16 converted into block buffers), float64
 * libm */
_Static_assert(FBX_PW_BLOCK <= FBX_VM_POW_BLOCK, "pow blocks");
#define GEN2XB(sfx, TS, CT, LD, ST, op, BLOCK, RARE, SLOW) \
  FBX_PW_LOOP2XB(op##_##sfx, TS, CT, LD, TS, ST, BLOCK, RARE, SLOW)
FBX_PW_FLOATS(GEN2XB, pow, FBX_VM_POW_BLOCK_FN, FBX_VM_POW_RARE(a, b), pow(a, b))
FBX_PW_INTS(GEN2, pow, , ipow(a, b))
TAB_FI(pow)
static inline double atan2_d(double a, double b) { return atan2(a, b); }
#define ATAN2(a, b) _Generic((a), float: fbx_vm_atan2f, default: atan2_d)(a, b)
BF(atan2, ATAN2(a, b))
/* float hypot as glibc's hypotf computes it: sqrt(a^2 + b^2) in double (the
 * squares exact), +inf for an infinite operand beside a quiet NaN, NaN
 * otherwise for NaN; branch-free, so the loop vectorizes (libm's call per
 * element took 5x as long) and gives libm's bits (tests/unit/test_kit_math.c
 * compares the kit's copy, fbxk_vhypotf, with hypotf over 2^20 pairs) */
static inline float hypot_vf(float a, float b) {
  double ad = (double)a, bd = (double)b;
  float r = (float)sqrt(ad * ad + bd * bd);
  uint32_t ua = fbx_vm_f2u(a) & 0x7fffffffu, ub = fbx_vm_f2u(b) & 0x7fffffffu;
  int quiet = (ua - 0x7f800001u >= 0x3fffffu) & (ub - 0x7f800001u >= 0x3fffffu);
  r = ((ua > 0x7f800000u) | (ub > 0x7f800000u)) ? a + b : r;
  return (quiet & ((ua == 0x7f800000u) | (ub == 0x7f800000u))) ? INFINITY : r;
}
static inline double hypot_d(double a, double b) { return hypot(a, b); }
#define HYPOT(a, b) _Generic((a), float: hypot_vf, default: hypot_d)(a, b)
BF(hypot, HYPOT(a, b))
/* shifts as PyTorch: the left operand as unsigned; out-of-range counts give
 * 0 (left) or the sign (right) instead of C's undefined behaviour */
FBX_PW_INTS(GEN2, lshift, , (b < 0 || b > 63) ? 0 : (T)((uint64_t)a << b))
FBX_PW_INTS(GEN2, rshift, , (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b)
static const fbx_pw_table lshift_tab = {FBX_PW_TAB_INTS(lshift)};
static const fbx_pw_table rshift_tab = {FBX_PW_TAB_INTS(rshift)};
/* NaN-propagating; equal values (+-0) give the second operand, as the
 * vectorized max/min instructions PyTorch uses do. */
BFIB(maximum, , (a != a) ? a : ((b != b) ? b : (a > b ? a : b)), , a > b ? a : b)
BFIB(minimum, , (a != a) ? a : ((b != b) ? b : (a < b ? a : b)), , a < b ? a : b)
BB(eq, a == b, a == b)
BB(ne, a != b, a != b)
BB(lt, a < b, a < b)
BB(le, a <= b, a <= b)
BB(gt, a > b, a > b)
BB(ge, a >= b, a >= b)
BB(logical_and, (a != 0) & (b != 0), (a != 0) & (b != 0))
BB(logical_or, (a != 0) | (b != 0), (a != 0) | (b != 0))
BB(logical_xor, (a != 0) ^ (b != 0), (a != 0) ^ (b != 0))
FBX_PW_INTS(GEN2, bitwise_and, , a & b)
FBX_PW_BOOLS(GEN2, bitwise_and, , a & b)
TAB_IB(bitwise_and)
FBX_PW_INTS(GEN2, bitwise_or, , a | b)
FBX_PW_BOOLS(GEN2, bitwise_or, , a | b)
TAB_IB(bitwise_or)
FBX_PW_INTS(GEN2, bitwise_xor, , a ^ b)
FBX_PW_BOOLS(GEN2, bitwise_xor, , a ^ b)
TAB_IB(bitwise_xor)

/* copysign: float results (integers and bool compute in the default float) */
BF(copysign, copysign(a, b))
/* fmax/fmin: a NaN loses to a number (NaN only when both are); equal values
 * (+-0) give the first operand, as std::fmax/fmin in glibc */
BFIB(fmax, , (a != a) ? b : ((b != b) ? a : (a < b ? b : a)), , a < b ? b : a)
BFIB(fmin, , (a != a) ? b : ((b != b) ? a : (b < a ? b : a)), , b < a ? b : a)
/* xlogy(x, y) = x log(y); NaN for a NaN y, 0 for x == 0 otherwise */
BF(xlogy, (b != b) ? b : (a == 0 ? (T)0 : a * log(b)))
/* heaviside(x, values): values where x == 0, else x > 0 (NaN: 0) */
BFIB(heaviside, , a == 0 ? b : (T)(a > 0), , a == 0 ? b : (T)(a > 0))
/* nextafter: libm for float32/float64; float16 and bfloat16 step their own
 * 16-bit encodings (PyTorch 1.13 has bfloat16's, refuses float16; fusebox
 * gives float16 the same definition) */
static inline float next16(float a, float b, int bf) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  uint16_t h = bf ? fbx_float_to_bf16(a) : fbx_float_to_half(a);
  if ((h & 0x7fffu) == 0) h = (uint16_t)((b > 0 ? 0u : 0x8000u) | 1u);
  else if ((a < b) == (a > 0)) h++;
  else h--;
  return bf ? fbx_bf16_to_float(h) : fbx_half_to_float(h);
}
FBX_PW_LOOP2(nextafter_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, , nextafterf(a, b))
FBX_PW_LOOP2(nextafter_f64, double, double, FBX_PW_ID, double, FBX_PW_ID, , nextafter(a, b))
FBX_PW_LOOP2(nextafter_f16, uint16_t, float, FBX_PW_LD_F16, uint16_t, FBX_PW_ST_F16, , next16(a, b, 0))
FBX_PW_LOOP2(nextafter_bf16, uint16_t, float, FBX_PW_LD_BF16, uint16_t, FBX_PW_ST_BF16, , next16(a, b, 1))
TAB_F(nextafter)
/* gcd/lcm for integers, as PyTorch computes them in the operands' type:
 * Euclid on the absolute values taken in that type (int8 -128 stays
 * -128, so gcd(-128, 6) is -2), lcm = |a / g * b| with the product and the
 * absolute value in C's promoted type (int for int8/int16/uint8: exact;
 * int32 and int64 wrap); x % -1 is 0
 * (no INT64_MIN % -1 trap) */
static inline int64_t igcd(int64_t a, int64_t b) {
  while (a != 0) {
    int64_t c = a;
    a = a == -1 ? 0 : b % a;
    b = c;
  }
  return b;
}
static inline int64_t ilcm(int64_t a, int64_t b, int64_t aa, int64_t ab, int size) {
  int64_t g = igcd(aa, ab);
  if (g == 0) return 0;
  int64_t q = g == -1 ? (int64_t)(0u - (uint64_t)a) : a / g;
  int64_t m = (int64_t)((uint64_t)q * (uint64_t)b);
  if (size == 4) m = (int32_t)(uint32_t)(uint64_t)m; /* int32 multiplies in int32; narrower types in int */
  return m < 0 ? (int64_t)(0u - (uint64_t)m) : m;
}
#define IABS_(x) ((x) < 0 ? (T)(0u - (uint64_t)(x)) : (x))
#define GENGCD(sfx, TS, CT, LD, ST, op, PREP, ...) \
  FBX_PW_LOOP2(gcd_##sfx, TS, CT, LD, TS, ST, , igcd((T)ST(IABS_(a)), (T)ST(IABS_(b))))
#define GENLCM(sfx, TS, CT, LD, ST, op, PREP, ...) \
  FBX_PW_LOOP2(lcm_##sfx, TS, CT, LD, TS, ST, , ilcm(a, b, (T)ST(IABS_(a)), (T)ST(IABS_(b)), (int)sizeof(TS)))
FBX_PW_INTS(GENGCD, gcd, , 0)
FBX_PW_INTS(GENLCM, lcm, , 0)
static const fbx_pw_table gcd_tab = {FBX_PW_TAB_INTS(gcd)};
static const fbx_pw_table lcm_tab = {FBX_PW_TAB_INTS(lcm)};

/* pow(Tensor, Scalar) specializations PyTorch uses (same rounding as its
 * kernels: x*x, not pow(x, 2)); f[0] = exponent. */
#define GEN1XB(sfx, TS, CT, LD, ST, op, BVAL, BLOCK, RARE, SLOW) \
  FBX_PW_LOOP1XB(op##_##sfx, TS, CT, LD, TS, ST, BVAL, BLOCK, RARE, SLOW)
FBX_PW_FLOATS(GEN1XB, pow_s, (T)P->f[0], FBX_VM_POW_BLOCK_FN, FBX_VM_POW_RARE(a, b), pow(a, b))
FBX_PW_INTS(GEN1, pow_s, const int64_t e = P->i[0], ipow(a, e))
TAB_FI(pow_s)
FBX_PW_FLOATS(GEN1, pow_half, , sqrt(a))
TAB_F(pow_half)
FBX_PW_FLOATS(GEN1, pow_mhalf, , (T)1 / sqrt(a))
TAB_F(pow_mhalf)
FBX_PW_FLOATS(GEN1, pow_m1, , (T)1 / a)
TAB_F(pow_m1)
FBX_PW_FLOATS(GEN1, pow_2, , a * a)
TAB_F(pow_2)
FBX_PW_FLOATS(GEN1, pow_3, , a * a * a)
TAB_F(pow_3)
FBX_PW_FLOATS(GEN1, pow_m2, , (T)1 / (a * a))
TAB_F(pow_m2)

/* ---- kernels ------------------------------------------------------------------------ */

typedef enum bmode {
  B_PROMOTE, /* result_type(a, b) */
  B_FLOAT,   /* result_type, integral -> float32 (true division, atan2) */
  B_BOOL,    /* computed in result_type, bool output */
} bmode;

static fbx_dtype common(const fbx_ivalue *a, const fbx_ivalue *b) {
  const fbx_ivalue *v[2] = {a, b};
  return fbx_result_type(v, 2);
}

static fbx_status *run2(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                        const fbx_pw_loop_fn *tab, fbx_dtype d, fbx_dtype od, const fbx_pw_params *P) {
  const fbx_ivalue *v[2] = {a, b};
  return fbx_pw_apply(ctx, outs, tab, d, od, 2, v, P);
}

static fbx_status *binary(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                          const fbx_pw_loop_fn *tab, bmode m) {
  fbx_dtype d = common(a, b);
  if (m == B_FLOAT) d = fbx_to_float_dtype(d);
  return run2(ctx, outs, a, b, tab, d, m == B_BOOL ? FBX_DTYPE_BOOL : d, NULL);
}

/* add/sub: self + alpha * other (sub: minus; rsub: other - alpha * self) */
static fbx_status *add_sub(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                           const fbx_ivalue *alpha, bool sub) {
  fbx_dtype d = common(a, b);
  bool abool = (a->kind == FBX_IV_TENSOR && a->u.t->dtype == FBX_DTYPE_BOOL) || a->kind == FBX_IV_BOOL;
  bool bbool = (b->kind == FBX_IV_TENSOR && b->u.t->dtype == FBX_DTYPE_BOOL) || b->kind == FBX_IV_BOOL;
  if (sub && abool && bbool)
    return fbx_kernel_error(ctx, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                 "Use the `^` or `logical_xor()` operator instead.");
  if (sub && (abool || bbool))
    return fbx_kernel_error(ctx, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                 "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
  if (!fbx_dtype_is_floating(d) && alpha->kind == FBX_IV_FLOAT)
    return fbx_kernel_error(ctx, "For integral input tensors, argument alpha must not be a floating point number.");
  if (d != FBX_DTYPE_BOOL && alpha->kind == FBX_IV_BOOL)
    return fbx_kernel_error(ctx, "Boolean alpha only supported for Boolean results.");
  fbx_pw_params P = {{0}, {0}};
  fbx_pw_scalar_as(alpha, d, &P.f[0], &P.i[0]);
  bool one = alpha->kind == FBX_IV_FLOAT ? alpha->u.f == 1.0 : fbx_iv_to_int(alpha) == 1;
  if (one) return run2(ctx, outs, a, b, sub ? sub_tab : add_tab, d, d, NULL);
  return run2(ctx, outs, a, b, sub ? sub_alpha_tab : add_alpha_tab, d, d, &P);
}

fbx_status *fbx_k_pw_add_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[0], &args[1], &args[2], false);
}
fbx_status *fbx_k_pw_add_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[0], &args[1], &args[2], false);
}
fbx_status *fbx_k_pw_sub_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[0], &args[1], &args[2], true);
}
fbx_status *fbx_k_pw_sub_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[0], &args[1], &args[2], true);
}
fbx_status *fbx_k_pw_rsub_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[1], &args[0], &args[2], true);
}
fbx_status *fbx_k_pw_rsub_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return add_sub(ctx, outs, &args[1], &args[0], &args[2], true);
}

fbx_status *fbx_k_pw_mul_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], mul_tab, B_PROMOTE);
}
fbx_status *fbx_k_pw_mul_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], mul_tab, B_PROMOTE);
}

/* Integral division by zero: check the divisor as the kernel will see it. */
static fbx_status *check_int_divisor(fbx_kctx *ctx, const fbx_ivalue *b, fbx_dtype d) {
  if (fbx_dtype_is_floating(d)) return NULL;
  bool zero;
  if (b->kind == FBX_IV_TENSOR) {
    zero = fbx_pw_any_zero(b->u.t);
  } else {
    int64_t i;
    fbx_pw_scalar_as(b, d, NULL, &i);
    zero = i == 0;
  }
  return zero ? fbx_kernel_error(ctx, "ZeroDivisionError") : NULL;
}

static fbx_status *int_div_op(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                              const fbx_pw_loop_fn *tab) {
  fbx_dtype d = common(a, b);
  if (d >= 0 && d < FBX_DTYPE_MAX_CODE && tab[d]) FBX_TRY(check_int_divisor(ctx, b, d));
  return run2(ctx, outs, a, b, tab, d, d, NULL);
}

static fbx_status *div_mode(fbx_kctx *ctx, fbx_ivalue *outs, const fbx_ivalue *a, const fbx_ivalue *b,
                            const fbx_ivalue *mode) {
  if (mode->kind == FBX_IV_NONE) return binary(ctx, outs, a, b, div_tab, B_FLOAT);
  const char *m = mode->kind == FBX_IV_STR ? fbx_iv_str_data(mode) : "";
  if (!strcmp(m, "trunc")) return int_div_op(ctx, outs, a, b, div_trunc_any_tab);
  if (!strcmp(m, "floor")) return int_div_op(ctx, outs, a, b, div_floor_tab);
  return fbx_kernel_error(ctx, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", m);
}

fbx_status *fbx_k_pw_div_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], div_tab, B_FLOAT);
}
fbx_status *fbx_k_pw_div_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], div_tab, B_FLOAT);
}
fbx_status *fbx_k_pw_div_Tensor_mode(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return div_mode(ctx, outs, &args[0], &args[1], &args[2]);
}
fbx_status *fbx_k_pw_div_Scalar_mode(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return div_mode(ctx, outs, &args[0], &args[1], &args[2]);
}
fbx_status *fbx_k_pw_floor_divide(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], div_floor_tab);
}
fbx_status *fbx_k_pw_floor_divide_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], div_floor_tab);
}
fbx_status *fbx_k_pw_remainder_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], remainder_tab);
}
fbx_status *fbx_k_pw_remainder_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], remainder_tab);
}
fbx_status *fbx_k_pw_remainder_Scalar_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], remainder_tab);
}
fbx_status *fbx_k_pw_fmod_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], fmod_tab);
}
fbx_status *fbx_k_pw_fmod_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return int_div_op(ctx, outs, &args[0], &args[1], fmod_tab);
}

fbx_status *fbx_k_pw_pow_Tensor_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], pow_tab, B_PROMOTE);
}

/* pow(Scalar self, Tensor exponent): a base of 1 gives ones, else Tensor_Tensor. */
fbx_status *fbx_k_pw_pow_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], pow_tab, B_PROMOTE);
}

fbx_status *fbx_k_pw_pow_Tensor_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_dtype d = common(&args[0], &args[1]);
  const fbx_ivalue *e = &args[1];
  const fbx_ivalue *v[1] = {&args[0]};
  fbx_pw_params P = {{0}, {0}};
  if (!fbx_dtype_is_floating(d)) {
    if (d == FBX_DTYPE_BOOL) return fbx_pw_unsupported(ctx, d);
    if (e->kind == FBX_IV_TENSOR) return binary(ctx, outs, &args[0], e, pow_tab, B_PROMOTE);
    if (fbx_iv_to_int(e) < 0) return fbx_kernel_error(ctx, "Integers to negative integer powers are not allowed.");
    P.i[0] = fbx_iv_to_int(e);
    return fbx_pw_apply(ctx, outs, pow_s_tab, d, d, 1, v, &P);
  }
  if (e->kind == FBX_IV_TENSOR) return binary(ctx, outs, &args[0], e, pow_tab, B_PROMOTE);
  /* PyTorch 1.13: sqrt/rsqrt/reciprocal for float, double and bfloat16; x*x,
   * x*x*x, 1/(x*x) for those too; plain pow for float16 */
  double x = fbx_iv_to_double(e);
  const fbx_pw_loop_fn *tab = d == FBX_DTYPE_FLOAT16 ? pow_s_tab
                              : x == 0.5    ? pow_half_tab
                              : x == -0.5 ? pow_mhalf_tab
                              : x == -1.0 ? pow_m1_tab
                              : x == 2.0  ? pow_2_tab
                              : x == 3.0  ? pow_3_tab
                              : x == -2.0 ? pow_m2_tab
                                          : pow_s_tab;
  fbx_pw_scalar_as(e, d == FBX_DTYPE_FLOAT64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32, &P.f[0], NULL);
  if (d == FBX_DTYPE_FLOAT16 || d == FBX_DTYPE_BFLOAT16) fbx_pw_scalar_as(e, d, &P.f[0], NULL);
  return fbx_pw_apply(ctx, outs, tab, d, d, 1, v, &P);
}

fbx_status *fbx_k_pw_atan2(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return binary(ctx, outs, &args[0], &args[1], atan2_tab, B_FLOAT);
}

#define KB(name, tab, mode)                                                            \
  fbx_status *fbx_k_pw_##name(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {   \
    return binary(ctx, outs, &args[0], &args[1], tab##_tab, mode);                    \
  }
KB(hypot, hypot, B_PROMOTE)
KB(lshift_Tensor, lshift, B_PROMOTE)
KB(lshift_Scalar, lshift, B_PROMOTE)
KB(rshift_Tensor, rshift, B_PROMOTE)
KB(rshift_Scalar, rshift, B_PROMOTE)
KB(maximum, maximum, B_PROMOTE)
KB(minimum, minimum, B_PROMOTE)
KB(max_other, maximum, B_PROMOTE)
KB(min_other, minimum, B_PROMOTE)
KB(eq_Tensor, eq, B_BOOL)
KB(eq_Scalar, eq, B_BOOL)
KB(ne_Tensor, ne, B_BOOL)
KB(ne_Scalar, ne, B_BOOL)
KB(lt_Tensor, lt, B_BOOL)
KB(lt_Scalar, lt, B_BOOL)
KB(le_Tensor, le, B_BOOL)
KB(le_Scalar, le, B_BOOL)
KB(gt_Tensor, gt, B_BOOL)
KB(gt_Scalar, gt, B_BOOL)
KB(ge_Tensor, ge, B_BOOL)
KB(ge_Scalar, ge, B_BOOL)
KB(logical_and, logical_and, B_BOOL)
KB(logical_or, logical_or, B_BOOL)
KB(logical_xor, logical_xor, B_BOOL)
KB(bitwise_and_Tensor, bitwise_and, B_PROMOTE)
KB(bitwise_and_Scalar, bitwise_and, B_PROMOTE)
KB(bitwise_and_Scalar_Tensor, bitwise_and, B_PROMOTE)
KB(bitwise_or_Tensor, bitwise_or, B_PROMOTE)
KB(bitwise_or_Scalar, bitwise_or, B_PROMOTE)
KB(bitwise_or_Scalar_Tensor, bitwise_or, B_PROMOTE)
KB(bitwise_xor_Tensor, bitwise_xor, B_PROMOTE)
KB(bitwise_xor_Scalar, bitwise_xor, B_PROMOTE)
KB(bitwise_xor_Scalar_Tensor, bitwise_xor, B_PROMOTE)
KB(and_Tensor, bitwise_and, B_PROMOTE)
KB(and_Scalar, bitwise_and, B_PROMOTE)
KB(or_Tensor, bitwise_or, B_PROMOTE)
KB(or_Scalar, bitwise_or, B_PROMOTE)
KB(xor_Tensor, bitwise_xor, B_PROMOTE)
KB(xor_Scalar, bitwise_xor, B_PROMOTE)

/* ---- clamp with tensor bounds --------------------------------------------------------- */

/* clamp_min.Tensor is maximum, clamp_max.Tensor is minimum (NaN from either side). */
KB(clamp_min_Tensor, maximum, B_PROMOTE)
KB(clamp_max_Tensor, minimum, B_PROMOTE)

/* ---- aliases and further binary ops ------------------------------------------------------ */

KB(copysign_Tensor, copysign, B_FLOAT)
KB(copysign_Scalar, copysign, B_FLOAT)
KB(fmax, fmax, B_PROMOTE)
KB(fmin, fmin, B_PROMOTE)
KB(xlogy_Tensor, xlogy, B_FLOAT)
KB(xlogy_Scalar_Self, xlogy, B_FLOAT)
KB(xlogy_Scalar_Other, xlogy, B_FLOAT)
KB(nextafter, nextafter, B_PROMOTE)
KB(gcd, gcd, B_PROMOTE)
KB(lcm, lcm, B_PROMOTE)

/* heaviside: no promotion; self and values must have one dtype */
fbx_status *fbx_k_pw_heaviside(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *v;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &v));
  if (x->dtype != v->dtype)
    return fbx_kernel_error(ctx, "heaviside is not yet implemented for tensors with different dtypes.");
  return run2(ctx, outs, &args[0], &args[1], heaviside_tab, x->dtype, x->dtype, NULL);
}

/* float_power: pow computed in float64, a float64 result (dtype rule
 * custom: always float64; PyTorch's complex case does not arise). The
 * Tensor_Scalar overload takes pow's special exponents as pow does on a
 * float64 tensor. */
fbx_status *fbx_k_pw_float_power_Tensor_Tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return run2(ctx, outs, &args[0], &args[1], pow_tab, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT64, NULL);
}
fbx_status *fbx_k_pw_float_power_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return run2(ctx, outs, &args[0], &args[1], pow_tab, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT64, NULL);
}
fbx_status *fbx_k_pw_float_power_Tensor_Scalar(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const fbx_ivalue *e = &args[1];
  if (e->kind == FBX_IV_TENSOR) return fbx_k_pw_float_power_Tensor_Tensor(ctx, args, outs);
  double x = fbx_iv_to_double(e);
  const fbx_pw_loop_fn *tab = x == 0.5    ? pow_half_tab
                              : x == -0.5 ? pow_mhalf_tab
                              : x == -1.0 ? pow_m1_tab
                              : x == 2.0  ? pow_2_tab
                              : x == 3.0  ? pow_3_tab
                              : x == -2.0 ? pow_m2_tab
                                          : pow_s_tab;
  fbx_pw_params P = {{x}, {0}};
  const fbx_ivalue *v[1] = {&args[0]};
  return fbx_pw_apply(ctx, outs, tab, FBX_DTYPE_FLOAT64, FBX_DTYPE_FLOAT64, 1, v, &P);
}
