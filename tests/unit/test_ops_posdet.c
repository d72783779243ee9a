/* Position independence of the pointwise kernels: an element's result has
 * the same bits wherever the element sits.
 *
 * The float32 loops run a vectorized body and a scalar epilogue, in blocks
 * (FBX_PW_BLOCK, FBX_PW_DBLOCK), on a direct path (contiguous operands apart
 * from the output) or through a buffer (strided or aliased ones), and GCC
 * may contract a * b + c into an FMA in the AVX2/AVX-512 clones (ops/kopt.h).
 * Where an expression has two products that could fuse (a * b - c * d),
 * the vector body and the scalar epilogue, or two loop branches, may fuse
 * different ones and round differently; then lgamma(t)[i] would not equal
 * lgamma(t[i:i+1]) and a fuser compared against the interpreter would see
 * differences that are no one's error.
 *
 * For every unary, binary and ternary row of the op table (the table is
 * iterated; a new row without an entry in SPECS fails) each element is
 * computed alone (a one-element tensor: the reference) and then
 *   - in contiguous tensors of 4096 + 13, 256 + 7 and 15 elements, the
 *     data shifted by k = 0..15 elements (every lane, body and tail) and
 *     starting k elements into its storage (misaligned; 2 of the 16 for
 *     the broadcast forms and the 16-bit dtypes);
 *   - through strided views (every operand, or the first only);
 *   - with scalar operands and one-element tensors broadcast against it;
 *   - in place, where the table has the in-place twin (aten::exp_, ...);
 *   - in float16 and bfloat16 (compared with their own one-element results).
 * Results must match bit for bit (any NaN matches any NaN). The inputs
 * cover each op's interesting domain and the values that take rare paths
 * (huge trig arguments, lgamma below -2, pow of negative bases and huge
 * exponents, fmod's huge quotients, NaN, infinities, -0, subnormals).
 *
 * The table's kernels always write a fresh output (the in-place rows
 * compute out of place and copy, ops/k_misc.c), so the loops' aliased
 * path (output == input: fbx_pw_map_into) is reached by loops made here
 * with the same macros and settings (ops/kopt.h first) around the
 * vmath.h functions: test `aliased_loops`.
 *
 * FBX_POSDET_VALUES=262144 runs the float32 cases on that many inputs
 * (default 8191; about 15 s). */
#include "ops/kopt.h" /* first: the loops below compile as the kernel files' do */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/symbol.h"
#include "ops/optable.h"
#include "ops/pointwise.h"
#include "ops/vmath.h"
#include "testutil.h"
#include "tensor/half.h"
#include <fusebox/tensor.h>

/* Check records every passing ck_assert (a write to its pipe): the loops
 * here check with these instead */
#define REQUIRE(cond, ...)                \
  do {                                    \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)
#define OK(expr)                                                                \
  do {                                                                          \
    fbx_status *st_ = (expr);                                                   \
    REQUIRE(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_));      \
  } while (0)


/* ---- inputs ------------------------------------------------------------------------------ */

/* Tuples: the first NLIGHT (every special value and pair among them) for
 * the light cases, all nvals for the full ones (float32, the row's own
 * operand pattern). Two products that fuse differently in two code paths
 * change the result for few arguments (1 in 2000 for the tanh this test
 * found, 1 in 12000 for gelu's tanh form), so the full cases take many:
 * NDENSE, or FBX_POSDET_VALUES (e.g. 262144 for a thorough run). */
enum { NLIGHT = 509, NDENSE = 8191, NBV = 14 };
static float *U;          /* unary operand values */
static float *PA, *PB;    /* pairs */
static float *PC;         /* third operand of triples */
static int nvals;
/* values of scalar and broadcast (one-element) operands; pow's special exponents among them */
static const float BV[NBV] = {2.5f, -3.0f, 0.5f,  -0.5f, -1.0f, 2.0f,     3.0f,
                              -2.0f, 0.0f,  -0.0f, NAN,   INFINITY, 1e-3f, 1e30f};


static float rnd_value(uint32_t *s) {
  uint32_t r = tu_xs32(s);
  float sign = (r >> 8) & 1 ? -1.0f : 1.0f;
  switch (r % 5u) {
    case 0: return sign * ldexpf(1.0f + (float)(tu_xs32(s) & 0xffffu) / 65536.0f, (int)(tu_xs32(s) % 41u) - 20);
    case 1: return (float)((int32_t)(tu_xs32(s) % 16001u) - 8000) / 1000.0f;       /* [-8, 8] */
    case 2: return (float)(tu_xs32(s) % 100000u) / 100000.0f;                      /* [0, 1) */
    case 3: return sign * (float)(tu_xs32(s) % 40000u) * 0.37f;                    /* trig, up to ~1.5e4 */
    default: return fbx_vm_u2f(tu_xs32(s));                                        /* any bits */
  }
}

static void build_values(void) {
  if (U) return;
  const char *e = getenv("FBX_POSDET_VALUES");
  nvals = e ? atoi(e) : NDENSE;
  nvals = nvals < NLIGHT ? NLIGHT : nvals;
  U = malloc(sizeof(float) * (size_t)nvals * 4);
  ck_assert_ptr_nonnull(U);
  PA = U + nvals, PB = PA + nvals, PC = PB + nvals;
  static const float fixed[] = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e-40f, -3e-39f,
      FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f, 0.5f, -0.5f, 0.25f, 1e-3f, -1e-3f, 1e-8f, -1e-7f,
      /* trig: both sides of the 2^15 vector reduction limit, huge arguments */
      3.14159265f, 1.57079633f, -1.57079633f, 100.0f, 1000.5f, 12345.678f, 32767.9f, 32768.0f, 32768.004f,
      -32769.0f, 1e5f, -7.5e6f, 1e10f, 1e30f, -1e30f, 0x1p100f,
      /* lgamma: below -2 (libm), near the poles, [1, 3), Stirling, the overflow band */
      -2.0000002f, -2.5f, -3.7f, -4.25f, -10.1f, -100.3f, -999999.5f, -1.5f, -0.99999f, -1.0000001f, -1.9999999f,
      0.9f, 1.13f, 1.9999f, 2.0001f, 2.9f, 7.5f, 1e10f, 3.99e36f, 4.05e36f, 4.1e36f, 1e37f,
      /* asin/acos/logit edges */
      0.49f, 0.51f, 0.999f, -0.999f, 1.0000001f, -1.0000001f, 0.99999994f, 5.9604645e-08f,
      /* exp family, sinh/cosh/tanh, sigmoid, softplus, erf, erfc thresholds */
      88.7f, 89.0f, 89.5f, -87.3f, -103.9f, -104.1f, -150.0f, 20.0f, -20.0f, 9.99f, 10.01f, -18.5f, 0.84375f,
      0.84374f, 4.0f, 3.99f, 10.05f, 10.2f, -5.0f, 26.0f, 0x1p-12f, 0x1.01p-12f,
      /* rounding */
      0x1p23f, 0x1.fffffep22f, 4194303.5f, -4.5f, 2.5f, 1.5f, 0.49999997f};
  _Static_assert(sizeof fixed / sizeof fixed[0] < NLIGHT, "values");
  int n = (int)(sizeof fixed / sizeof fixed[0]);
  memcpy(U, fixed, sizeof fixed);
  uint32_t s = 2024;
  while (n < nvals) U[n++] = rnd_value(&s);

  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN,    1.0f, -1.0f,
                             2.0f, -2.0f, 0.5f,     -3.5f,     1e-40f, 3.0f, 1e30f};
  enum { NSP = sizeof sp / sizeof sp[0] };
  int np = 0;
  for (int i = 0; i < NSP; i++)
    for (int j = 0; j < NSP; j++) PA[np] = sp[i], PB[np] = sp[j], np++;
  static const float pairs[][2] = {
      /* pow: negative bases with integer and other exponents, huge exponents, overflow, subnormal bases */
      {-2.0f, 3.0f}, {-2.0f, 2.0f}, {-2.5f, 0.5f}, {-8.0f, 0.33333334f}, {-1.0f, 0x1p24f}, {-1.0f, 0x1p24f + 2.0f},
      {0.999f, 1e8f}, {1.0001f, 3e7f}, {2.0f, 150.0f}, {2.0f, -150.0f}, {2.0f, 127.9f}, {10.0f, 38.5f},
      {0.1f, -40.0f}, {1e-40f, 0.5f}, {-1e-40f, 3.0f}, {16.0f, 0.25f}, {-0.0f, -3.0f}, {0.0f, -1.0f}, {3.0f, 2.5f},
      {-3.0f, 2.0f}, {1.5f, -7.25f}, {100.0f, 19.2f}, {0x1p-126f, 2.0f}, {-7.0f, 5.0f}, {-0.5f, -9.0f},
      {1.0000001f, 1e7f}, {7.0f, 0x1p23f - 1.0f}, {-1.5f, 8388607.0f},
      /* fmod, remainder, floor_divide: huge quotients, zero divisors, signs */
      {1e30f, 3.0f}, {1e10f, 1e-10f}, {5.0f, 0.0f}, {-7.5f, 2.0f}, {7.5f, -2.0f}, {7.0f, 0x1p-30f}, {-5.25f, 0.75f},
      {0x1p25f, 3.0f}, {3e9f, 7.0f}, {1.0f, 3.0f}, {-1.0f, 3.0f}, {1e-39f, 3e-40f}, {0x1p21f, 0.9999999f},
      /* atan2, hypot */
      {1e-40f, -1.0f}, {1.0f, 1e-40f}, {3.0f, 4.0f}, {1e30f, 1e30f}, {1e-30f, 1e-30f}, {-1e-30f, -0.0f}};
  _Static_assert(NSP * NSP + sizeof pairs / sizeof pairs[0] < NLIGHT, "pairs");
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) PA[np] = pairs[i][0], PB[np] = pairs[i][1], np++;
  while (np < nvals) {
    PA[np] = rnd_value(&s);
    PB[np] = (tu_xs32(&s) & 3) ? rnd_value(&s) : (float)((int32_t)(tu_xs32(&s) % 21u) - 10); /* integers: pow's parity */
    np++;
  }
  for (int j = 0; j < nvals; j++) PC[j] = U[(j * 7 + 3) % nvals];
}

/* ---- the rows and their arguments ------------------------------------------------------------ */

/* Operand patterns, one letter per leading argument: T a tensor of the
 * tested dtype, one element per position; B the same in bool; 1 a
 * one-element tensor and 0 a 0-d tensor (broadcast); S a Python scalar.
 * NULL: from the schema (Tensor -> T, Scalar -> S); every T of a pattern
 * with two or more is also tried as 1. Variants: the trailing arguments,
 * '|' between variants, tokens f:1.5 i:2 s:str n (None). */
typedef struct spec {
  const char *id;
  const char *pat;
  const char *variants;
  int noflt; /* no float kernel (bitwise, shifts): the float32 call must fail */
  int nsv;   /* values tried for single operands (S, 1, 0): 3 unless the value picks a kernel */
} spec;

#define F(id) {#id, NULL, "", 0, 0}
#define V(id, vars) {#id, NULL, vars, 0, 0}
#define P(id, pat) {#id, pat, "", 0, 0}
#define I(id) {#id, NULL, "", 1, 0}
static const spec SPECS[] = {
    F(abs), F(neg), F(reciprocal), F(sqrt), F(rsqrt), F(square), F(exp), F(exp2), F(expm1), F(log), F(log2),
    F(log10), F(log1p), F(sin), F(cos), F(tan), F(asin), F(acos), F(atan), F(sinh), F(cosh), F(tanh), F(erf),
    F(erfc), F(lgamma), F(digamma), F(sigmoid), V(logit, "n|f:0.001|f:0.25"), F(relu), F(relu6),
    V(leaky_relu, "f:0.01|f:-0.3"), V(elu, "f:1 f:1 f:1|f:1.7 f:1.05 f:0.8"), V(gelu, "s:none|s:tanh"), F(silu),
    F(mish), V(softplus, "f:1 f:20|f:2.5 f:3|f:0.5 i:10"), V(hardtanh, "f:-1 f:1|f:-0.5 f:2.5"), F(hardsigmoid),
    F(hardswish), V(threshold, "f:0.5 f:-2|f:-1 i:7"), F(floor), F(ceil), F(round),
    V(round_decimals, "i:2|i:-1|i:3"), F(trunc), F(frac), F(sign), I(bitwise_not), F(logical_not), F(isnan),
    F(isinf), F(isfinite), V(nan_to_num, "n n n|f:1.5 f:100 f:-100"), V(clamp, "f:-1 f:2|n f:0.5|f:-0.25 n"),
    F(clamp_Tensor), F(clamp_min_Tensor), F(clamp_min), F(clamp_max_Tensor), F(clamp_max),
    V(add_Tensor, "i:1|i:2|f:-0.75"), V(add_Scalar, "i:1|f:2.5"), V(sub_Tensor, "i:1|f:-0.75"),
    V(sub_Scalar, "i:1|f:2.5"), V(rsub_Tensor, "i:1|f:1.25"), V(rsub_Scalar, "i:1|f:2.5"), F(mul_Tensor),
    F(mul_Scalar), F(div_Tensor), F(div_Scalar), V(div_Tensor_mode, "s:trunc|s:floor|n"),
    V(div_Scalar_mode, "s:trunc|s:floor|n"), F(floor_divide), F(floor_divide_Scalar), F(remainder_Tensor),
    F(remainder_Scalar), F(remainder_Scalar_Tensor), F(fmod_Tensor), F(fmod_Scalar), F(pow_Tensor_Tensor),
    {"pow_Tensor_Scalar", NULL, "", 0, NBV}, {"pow_Scalar", NULL, "", 0, NBV}, F(atan2), F(hypot), F(maximum),
    F(minimum), F(max_other), F(min_other), F(eq_Tensor), F(eq_Scalar), F(ne_Tensor), F(ne_Scalar), F(lt_Tensor),
    F(lt_Scalar), F(le_Tensor), F(le_Scalar), F(gt_Tensor), F(gt_Scalar), F(ge_Tensor), F(ge_Scalar),
    F(logical_and), F(logical_or), F(logical_xor), I(bitwise_and_Tensor), I(bitwise_and_Scalar),
    I(bitwise_and_Scalar_Tensor), I(bitwise_or_Tensor), I(bitwise_or_Scalar), I(bitwise_or_Scalar_Tensor),
    I(bitwise_xor_Tensor), I(bitwise_xor_Scalar), I(bitwise_xor_Scalar_Tensor), I(and_Tensor), I(and_Scalar),
    I(or_Tensor), I(or_Scalar), I(xor_Tensor), I(xor_Scalar), I(lshift_Tensor), I(lshift_Scalar), I(bitwise_left_shift_Tensor), I(bitwise_left_shift_Tensor_Scalar),
    I(bitwise_right_shift_Tensor), I(bitwise_right_shift_Tensor_Scalar),
    I(rshift_Tensor), I(rshift_Scalar), P(where_self, "BTT"), P(where_ScalarSelf, "BST"),
    P(where_ScalarOther, "BTS"), P(where_Scalar, "BSS"), F(lerp_Tensor), F(lerp_Scalar),
    V(addcmul, "i:1|f:0.3|i:-2"), V(addcdiv, "i:1|f:0.3|i:-2"), P(masked_fill_Tensor, "TB0"),
    V(clip, "f:-1 f:2|n f:0.5|f:-0.25 n"), F(clip_Tensor), F(true_divide_Tensor), F(true_divide_Scalar),
    F(absolute), F(fix), F(special_expit), F(asinh), F(acosh), F(atanh), F(deg2rad), F(rad2deg), F(sinc), F(erfinv),
    F(signbit), F(isposinf), F(isneginf), F(copysign_Tensor), F(copysign_Scalar), F(fmax), F(fmin), F(xlogy_Tensor),
    F(xlogy_Scalar_Other), F(xlogy_Scalar_Self), F(float_power_Tensor_Tensor),
    {"float_power_Tensor_Scalar", NULL, "", 0, NBV}, F(float_power_Scalar), F(heaviside), F(nextafter), I(gcd), I(lcm),
    P(masked_fill_Scalar, "TBS"),
};
#undef F
#undef V
#undef P
#undef I

static const spec *find_spec(const char *id) {
  for (size_t i = 0; i < sizeof SPECS / sizeof SPECS[0]; i++)
    if (!strcmp(SPECS[i].id, id)) return &SPECS[i];
  return NULL;
}

/* ---- one case: an op, its operand pattern, trailing arguments and dtype ----------------------- */

enum { MAXOPND = 3, MAXEXTRA = 6, MAXL = 4096 + 13 };

typedef struct tcase {
  const fbx_op *op;
  char pat[MAXOPND + 1];
  int nops;
  fbx_ivalue extra[MAXEXTRA];
  int nextra;
  const char *extra_txt;
  fbx_dtype dt;
  int n;                       /* tuples */
  const float *tv[MAXOPND];    /* per-position operand values (T, B) */
  float sv[MAXOPND];           /* single values (S, 1, 0) */
  uint32_t *ref;               /* each tuple's result alone, as bits */
  fbx_dtype out_dt;
} tcase;

/* the kinds of position that can differ from the element alone */
enum {
  P_BODY = 1 << 0,   /* 4096 + 13 elements, index < 4096 */
  P_TAIL = 1 << 1,   /* 4096 + 13 elements, index >= 4096 */
  P_B256 = 1 << 2,   /* 256 + 7 elements, index < 256 */
  P_T256 = 1 << 3,   /* 256 + 7, index >= 256 */
  P_N15 = 1 << 4,    /* 15 elements */
  P_STR = 1 << 5,    /* every tensor operand strided */
  P_STR1 = 1 << 6,   /* the first strided, the rest contiguous */
  P_INPL = 1 << 7,   /* in place (aten::op_) */
  P_INPLS = 1 << 8,  /* in place into a strided view */
  P_NKIND = 9
};
static const char *const KIND_NAMES[P_NKIND] = {"body(4109)", "tail(4109)", "body(263)", "tail(263)", "n=15",
                                                "strided",    "strided-first", "in-place", "in-place-strided"};

typedef struct report {
  char what[160];
  unsigned kinds;
  int count;
  char example[3][256];
  int nex;
} report;

enum { MAXREP = 400 };
static report reps[MAXREP];
static int nreps, nnoflt;
static char err_text[MAXREP][256];
static int nerrs;

static void note_error(const char *fmt, const char *a, const char *b) {
  if (nerrs < MAXREP) snprintf(err_text[nerrs++], sizeof err_text[0], fmt, a, b);
}

static size_t esize(fbx_dtype d) { return fbx_dtype_size(d); }

static void store(char *p, fbx_dtype d, float v) {
  switch (d) {
    case FBX_DTYPE_FLOAT32: memcpy(p, &v, 4); break;
    case FBX_DTYPE_FLOAT16: { uint16_t h = fbx_float_to_half(v); memcpy(p, &h, 2); } break;
    case FBX_DTYPE_BFLOAT16: { uint16_t h = fbx_float_to_bf16(v); memcpy(p, &h, 2); } break;
    case FBX_DTYPE_BOOL: *p = v != 0.0f; break;
    default: ck_abort_msg("dtype %d", (int)d);
  }
}

/* the bits of element i of a 1-d (or 0-d) tensor; every NaN reads as one pattern */
static uint32_t bits_at(const fbx_tensor *t, int64_t i) {
  const char *p = (const char *)t->data + (t->ndim ? i * t->strides[0] : 0) * (int64_t)esize(t->dtype);
  switch (t->dtype) {
    case FBX_DTYPE_FLOAT32: {
      uint32_t u;
      memcpy(&u, p, 4);
      return (u & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : u;
    }
    case FBX_DTYPE_FLOAT16: {
      uint16_t h;
      memcpy(&h, p, 2);
      return (h & 0x7fffu) > 0x7c00u ? 0x7e00u : h;
    }
    case FBX_DTYPE_BFLOAT16: {
      uint16_t h;
      memcpy(&h, p, 2);
      return (h & 0x7fffu) > 0x7f80u ? 0x7fc0u : h;
    }
    case FBX_DTYPE_BOOL: return (uint32_t)(*p != 0);
    case FBX_DTYPE_FLOAT64: { /* float_power: folded to 32 bits (a rounding difference changes the low half) */
      uint64_t u;
      memcpy(&u, p, 8);
      if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) u = 0x7ff8000000000000ull;
      return (uint32_t)(u ^ (u >> 32));
    }
    default: ck_abort_msg("output dtype %s", fbx_dtype_name(t->dtype));
  }
  return 0;
}

static int is_single(char k) { return k == 'S' || k == '1' || k == '0'; }

/* Operand m for `len` positions starting at tuple `shift`: contiguous from
 * storage offset `off`, or strided (stride 2, offset 1). */
static fbx_ivalue operand(const tcase *c, int m, int64_t len, int shift, int off, int strided) {
  char k = c->pat[m];
  if (k == 'S') return fbx_iv_float((double)c->sv[m]);
  fbx_dtype d = k == 'B' ? FBX_DTYPE_BOOL : c->dt;
  fbx_tensor *base = NULL, *t = NULL;
  if (is_single(k)) {
    int64_t one = 1;
    OK(fbx_tensor_empty(&t, d, k == '1' ? 1 : 0, &one));
    store(t->data, d, c->sv[m]);
    return fbx_iv_tensor(t);
  }
  int64_t cap = strided ? 2 * len + 1 : len + off, st = strided ? 2 : 1;
  OK(fbx_tensor_empty(&base, d, 1, &cap));
  memset(base->data, 0x5a, (size_t)cap * esize(d)); /* junk around the viewed elements */
  OK(fbx_tensor_view(&t, base, 1, &len, &st, strided ? 1 : off));
  fbx_tensor_release(base);
  const int64_t step = st * (int64_t)esize(d);
  char *p = t->data;
  for (int64_t i = 0, j = shift % c->n; i < len; i++, p += step, j = j + 1 == c->n ? 0 : j + 1)
    store(p, d, c->tv[m][j]);
  return fbx_iv_tensor(t);
}

static fbx_status *kcall(const fbx_op *op, const fbx_ivalue *args, int nargs, fbx_ivalue *out) {
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  FBX_TRY(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op, .nargs = op->schema.nargs};
  return op->kernel(&ctx, norm, out);
}

static const char *dt_name(fbx_dtype d) { return fbx_dtype_name(d); }

static void describe(const tcase *c, char *buf, size_t n) {
  int pos = snprintf(buf, n, "%s [%s %s", c->op->id_name, c->pat, dt_name(c->dt));
  for (int m = 0; m < c->nops; m++)
    if (is_single(c->pat[m])) pos += snprintf(buf + pos, n - (size_t)pos, " op%d=%a", m, (double)c->sv[m]);
  if (c->extra_txt[0]) pos += snprintf(buf + pos, n - (size_t)pos, " args '%s'", c->extra_txt);
  snprintf(buf + pos, n - (size_t)pos, "]");
}

static report *cur_rep;

static void mismatch(const tcase *c, unsigned kind, int64_t i, int64_t j, uint32_t got) {
  if (!cur_rep) {
    if (nreps == MAXREP) return;
    cur_rep = &reps[nreps++];
    memset(cur_rep, 0, sizeof *cur_rep);
    describe(c, cur_rep->what, sizeof cur_rep->what);
  }
  report *r = cur_rep;
  r->count++;
  if (!(r->kinds & kind) && r->nex < 3) {
    char in[96] = "";
    int pos = 0;
    for (int m = 0; m < c->nops; m++)
      if (!is_single(c->pat[m]))
        pos += snprintf(in + pos, sizeof in - (size_t)pos, "%s%a", pos ? ", " : "", (double)c->tv[m][j]);
    snprintf(r->example[r->nex++], sizeof r->example[0], "%s i=%lld in=(%s): 0x%08x, alone 0x%08x",
             KIND_NAMES[__builtin_ctz(kind)], (long long)i, in, got, c->ref[j]);
  }
  r->kinds |= kind;
}

/* Run the op over `len` positions from tuple `shift` and compare. */
static void run_layout(tcase *c, int64_t len, int shift, int off, int strided_mask, unsigned kind) {
  fbx_ivalue args[MAXOPND + MAXEXTRA], out = fbx_iv_none();
  for (int m = 0; m < c->nops; m++) args[m] = operand(c, m, len, shift, off, (strided_mask >> m) & 1);
  for (int e = 0; e < c->nextra; e++) args[c->nops + e] = c->extra[e];
  OK(kcall(c->op, args, c->nops + c->nextra, &out));
  const fbx_tensor *o = out.u.t;
  REQUIRE(o->numel == len && o->dtype == c->out_dt, "%s: output numel/dtype", c->op->id_name);
  for (int64_t i = 0, j = shift % c->n; i < len; i++, j = j + 1 == c->n ? 0 : j + 1) {
    uint32_t g = bits_at(o, i);
    if (g == c->ref[j]) continue;
    unsigned k = kind;
    if (kind == P_BODY && i >= 4096) k = P_TAIL;
    if (kind == P_B256 && i >= 256) k = P_T256;
    mismatch(c, k, i, j, g);
  }
  fbx_iv_release(&out);
  for (int m = 0; m < c->nops; m++) fbx_iv_release(&args[m]);
}

/* In place: aten::<name>_ on the same arguments, self (operand 0) written. */
static void run_inplace(tcase *c, const fbx_op *ip, int64_t len, int shift, int strided, unsigned kind) {
  fbx_ivalue args[MAXOPND + MAXEXTRA], out = fbx_iv_none();
  for (int m = 0; m < c->nops; m++) args[m] = operand(c, m, len, shift, shift % 16, strided && m == 0);
  for (int e = 0; e < c->nextra; e++) args[c->nops + e] = c->extra[e];
  OK(kcall(ip, args, c->nops + c->nextra, &out));
  REQUIRE(out.u.t == args[0].u.t, "%s: in place returns another tensor", ip->id_name);
  for (int64_t i = 0; i < len; i++) {
    int j = (int)((i + shift) % c->n);
    uint32_t g = bits_at(args[0].u.t, i);
    if (g != c->ref[j]) mismatch(c, kind, i, j, g);
  }
  fbx_iv_release(&out);
  for (int m = 0; m < c->nops; m++) fbx_iv_release(&args[m]);
}

/* The in-place twin of c's op taking these operands, or NULL. */
static const fbx_op *inplace_twin(const tcase *c) {
  if (c->pat[0] != 'T') return NULL;
  char name[96];
  const char *s = c->op->schema_text;
  size_t k = strcspn(s, ".(");
  if (k + 2 > sizeof name) return NULL;
  memcpy(name, s, k);
  name[k] = '_';
  name[k + 1] = 0;
  fbx_sym sym;
  REQUIRE(fbx_sym_intern(&sym, name, strlen(name)) == 0, "intern %s", name);
  if (!fbx_op_kind_known(sym)) return NULL;
  fbx_ivalue args[MAXOPND + MAXEXTRA];
  for (int m = 0; m < c->nops; m++) args[m] = operand(c, m, 1, 0, 0, 0);
  for (int e = 0; e < c->nextra; e++) args[c->nops + e] = c->extra[e];
  const fbx_op *op = NULL;
  fbx_status *st = fbx_op_resolve(&op, sym, args, c->nops + c->nextra);
  for (int m = 0; m < c->nops; m++) fbx_iv_release(&args[m]);
  if (st) {
    fbx_status_free(st);
    return NULL;
  }
  return op;
}

static int ninplace;

/* The layouts. Full: every tuple alone, then each in a long tensor (the
 * first one at every misalignment 0..15), in a 15-element one, strided,
 * and 16 times in a 263-element one. Light: the same with 2
 * misalignments (0, 8). Returns the kernel's error for the first tuple (no kernel
 * for this dtype), else NULL. */
static fbx_status *run_case(tcase *c, int full) {
  uint32_t *ref = malloc(sizeof(uint32_t) * (size_t)c->n);
  ck_assert_ptr_nonnull(ref);
  c->ref = ref;
  fbx_ivalue args[MAXOPND + MAXEXTRA];
  for (int m = 0; m < c->nops; m++) args[m] = operand(c, m, 1, 0, 0, 0);
  for (int e = 0; e < c->nextra; e++) args[c->nops + e] = c->extra[e];
  fbx_status *st = NULL;
  for (int j = 0; j < c->n && !st; j++) { /* every tuple alone */
    for (int m = 0; m < c->nops; m++)
      if (!is_single(c->pat[m])) store(args[m].u.t->data, args[m].u.t->dtype, c->tv[m][j]);
    fbx_ivalue out = fbx_iv_none();
    st = kcall(c->op, args, c->nops + c->nextra, &out);
    if (st) {
      REQUIRE(j == 0, "%s fails for one tuple only: %s", c->op->id_name, fbx_status_message(st));
      break;
    }
    REQUIRE(out.u.t->numel == 1, "%s: numel", c->op->id_name);
    c->out_dt = out.u.t->dtype;
    ref[j] = bits_at(out.u.t, 0);
    fbx_iv_release(&out);
  }
  for (int m = 0; m < c->nops; m++) fbx_iv_release(&args[m]);
  if (st) {
    free(ref);
    c->ref = NULL;
    return st;
  }
  cur_rep = NULL;
  int nk = full ? 16 : 2;
  for (int k = 0; k < nk; k++) {
    run_layout(c, MAXL, (k * 37) % c->n, k * (16 / nk), 0, P_BODY);
    run_layout(c, 256 + 7, (k * 263 + k) % c->n, k * (16 / nk) + 1, 0, P_B256);
  }
  for (int first = MAXL; first < c->n; first += MAXL) run_layout(c, MAXL, first, first % 16, 0, P_BODY);
  for (int first = 0; first < c->n; first += 15) run_layout(c, 15, first, first % 16, 0, P_N15);
  for (int first = 0; first < c->n; first += MAXL) run_layout(c, MAXL, first + 5, 0, 7, P_STR);
  run_layout(c, 256 + 7, 11, 0, 1, P_STR1);
  const fbx_op *ip = inplace_twin(c);
  if (ip) {
    ninplace++;
    for (int k = 0; k < 2; k++) run_inplace(c, ip, MAXL, 3 * k, 0, P_INPL);
    run_inplace(c, ip, 256 + 7, 3, 1, P_INPLS);
  }
  free(ref);
  c->ref = NULL;
  return NULL;
}

/* ---- the rows ---------------------------------------------------------------------------------- */

static int parse_extras(const char *txt, fbx_ivalue *out) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", txt);
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    ck_assert_int_lt(n, MAXEXTRA);
    if (!strncmp(t, "f:", 2)) out[n++] = fbx_iv_float(strtod(t + 2, NULL));
    else if (!strncmp(t, "i:", 2)) out[n++] = fbx_iv_int(strtoll(t + 2, NULL, 10));
    else if (!strncmp(t, "s:", 2)) OK(fbx_iv_str_new(&out[n++], t + 2, strlen(t + 2)));
    else if (!strcmp(t, "n")) out[n++] = fbx_iv_none();
    else ck_abort_msg("bad argument token %s", t);
  }
  return n;
}

static int ncases, nrows;

/* Every pattern, variant, single-operand value and dtype of one row. */
static void run_row(const fbx_op *op, const spec *sp) {
  int arity = op->category == FBX_OPCAT_UNARY ? 1 : op->category == FBX_OPCAT_BINARY ? 2 : 3;
  char base[MAXOPND + 1] = "";
  if (sp->pat) {
    snprintf(base, sizeof base, "%s", sp->pat);
  } else {
    for (int m = 0; m < arity; m++) {
      fbx_argtype t = op->schema.args[m].type;
      ck_assert_msg(t == FBX_ARG_TENSOR || t == FBX_ARG_SCALAR, "%s: argument %d is neither Tensor nor Scalar",
                    op->id_name, m);
      base[m] = t == FBX_ARG_TENSOR ? 'T' : 'S';
    }
    base[arity] = 0;
  }
  int nops = (int)strlen(base);
  /* the base pattern, then each T of a pattern with several as a broadcast one-element tensor */
  char pats[MAXOPND + 1][MAXOPND + 1];
  int npat = 0, ntile = 0;
  snprintf(pats[npat++], sizeof pats[0], "%s", base);
  for (int m = 0; m < nops; m++) ntile += base[m] == 'T' || base[m] == 'B';
  for (int m = 0; m < nops && ntile >= 2; m++)
    if (base[m] == 'T') {
      snprintf(pats[npat], sizeof pats[0], "%s", base);
      pats[npat++][m] = '1';
    }
  char vars[256];
  snprintf(vars, sizeof vars, "%s", sp->variants);
  char *save = NULL;
  const char *vlist[8];
  int nv = 0;
  if (!vars[0]) vlist[nv++] = "";
  for (char *t = strtok_r(vars, "|", &save); t && nv < 8; t = strtok_r(NULL, "|", &save)) vlist[nv++] = t;
  static const fbx_dtype dts[3] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT16, FBX_DTYPE_BFLOAT16};
  for (int p = 0; p < npat; p++) {
    int nsingle = 0, tiles[MAXOPND], nt = 0;
    for (int m = 0; m < nops; m++) {
      if (is_single(pats[p][m])) nsingle++;
      else tiles[nt++] = m;
    }
    ck_assert_msg(nt > 0, "%s: pattern %s has no per-position operand", op->id_name, pats[p]);
    int nsv = nsingle ? (sp->nsv ? sp->nsv : 3) : 1;
    for (int vi = 0; vi < nv; vi++)
      for (int s = 0; s < nsv; s++)
        for (int d = 0; d < (s == 0 && p == 0 ? 3 : 1); d++) {
          tcase c = {.op = op, .nops = nops, .extra_txt = vlist[vi], .dt = dts[d]};
          memcpy(c.pat, pats[p], sizeof c.pat);
          c.nextra = parse_extras(vlist[vi], c.extra);
          for (int m = 0; m < nops; m++) c.sv[m] = BV[(s + 5 * m) % NBV];
          int full = p == 0 && d == 0 && op->dtype_rule != FBX_DT_BOOL; /* bool results do not round */
          c.n = full ? nvals : NLIGHT;
          if (nt == 1) {
            c.tv[tiles[0]] = U;
          } else {
            const float *cols[3] = {PA, PB, PC};
            for (int t = 0; t < nt; t++) c.tv[tiles[t]] = cols[t];
          }
          fbx_status *st = run_case(&c, full);
          for (int e = 0; e < c.nextra; e++) fbx_iv_release(&c.extra[e]);
          char what[160];
          describe(&c, what, sizeof what);
          if (st && sp->noflt && d == 0) { /* as expected: no float kernels at all */
            fbx_status_free(st);
            nnoflt++;
            return;
          }
          if (st) {
            note_error("%s: %s", what, fbx_status_message(st));
            fbx_status_free(st);
            continue;
          }
          if (sp->noflt) note_error("%s: %s", what, "runs, but SPECS says it has no float kernel");
          ncases++;
        }
  }
}

START_TEST(every_pointwise_row) {
  OK(fbx_op_table_init());
  build_values();
  int missing = 0;
  for (int id = 0; id < FBX_OP_COUNT; id++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)id);
    ck_assert_ptr_nonnull(op);
    if (op->category != FBX_OPCAT_UNARY && op->category != FBX_OPCAT_BINARY && op->category != FBX_OPCAT_TERNARY)
      continue;
    const spec *sp = find_spec(op->id_name);
    if (!sp) {
      fprintf(stderr, "posdet: no entry in SPECS for %s\n", op->schema_text);
      missing++;
      continue;
    }
    nrows++;
    run_row(op, sp);
  }
  for (int i = 0; i < nreps; i++) {
    fprintf(stderr, "posdet FAIL %s: %d positions differ from the element alone:", reps[i].what, reps[i].count);
    for (int k = 0; k < P_NKIND; k++)
      if (reps[i].kinds & (1u << k)) fprintf(stderr, " %s", KIND_NAMES[k]);
    fprintf(stderr, "\n");
    for (int e = 0; e < reps[i].nex; e++) fprintf(stderr, "      %s\n", reps[i].example[e]);
  }
  for (int i = 0; i < nerrs; i++) fprintf(stderr, "posdet ERROR %s\n", err_text[i]);
  fprintf(stderr, "posdet: %d rows, %d cases (%d with an in-place twin), %d rows without float kernels; "
                  "%d cases differ by position, %d errors\n",
          nrows, ncases, ninplace, nnoflt, nreps, nerrs);
  ck_assert_msg(missing == 0, "%d pointwise rows have no entry in SPECS", missing);
  ck_assert_int_gt(nrows, 100);
  ck_assert_msg(nreps == 0 && nerrs == 0, "%d cases depend on position, %d errors (see stderr)", nreps, nerrs);
}
END_TEST

/* ---- the loops' aliased path ------------------------------------------------------------------ */

/* The kernels' forms of the vmath.h functions (k_unary.c, k_binary.c):
 * the same macros, FAST, RARE and SLOW, so the same code. */
FBX_PW_LOOP1X(al_sin, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_sinf(a), fbx_vm_trig_rare(a), sinf(a))
FBX_PW_LOOP1X(al_cos, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_cosf(a), fbx_vm_trig_rare(a), cosf(a))
FBX_PW_LOOP1X(al_tan, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_tanf(a), fbx_vm_trig_rare(a), tanf(a))
FBX_PW_LOOP1B(al_lgamma, float, float, FBX_PW_ID, float, FBX_PW_ID, fbx_vm_lgammaf_block, fbx_vm_lgamma_rare(a),
              lgammaf(a))
FBX_PW_LOOP1X(al_sin16, uint16_t, float, FBX_PW_LD_F16, uint16_t, FBX_PW_ST_F16, , fbx_vm_sinf(a),
              fbx_vm_trig_rare(a), sinf(a))
FBX_PW_LOOP1B(al_erfc, float, float, FBX_PW_ID, float, FBX_PW_ID, fbx_vm_erfcf_block, 0, a)
FBX_PW_LOOP2X(al_fmod, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_fmodf(a, b), fbx_vm_fmod_rare(a, b),
              fmodf(a, b))
FBX_PW_LOOP2XB(al_pow, float, float, FBX_PW_ID, float, FBX_PW_ID, fbx_vm_powf_block, fbx_vm_pow_rare(a, b),
               powf(a, b))
FBX_PW_LOOP1XB(al_pows, float, float, FBX_PW_ID, float, FBX_PW_ID, (T)P->f[0], fbx_vm_powf_block,
               fbx_vm_pow_rare(a, b), powf(a, b))
FBX_PW_LOOP1(al_log10, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_log10f(a))
FBX_PW_LOOP1(al_expm1, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_expm1f(a))
FBX_PW_LOOP1(al_tanh, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_tanhf(a))
FBX_PW_LOOP1(al_erf, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_erff(a))

static fbx_tensor *vec(fbx_dtype d, int64_t n, const float *src, int shift, int nsrc) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, d, 1, &n));
  for (int64_t i = 0; i < n; i++) store((char *)t->data + i * (int64_t)esize(d), d, src[(i + shift) % nsrc]);
  return t;
}

/* a = f(a[, b]) over len positions from tuple `first`: every position against ref */
static int aliased_run(const char *name, fbx_pw_loop_fn f, int nin, fbx_dtype d, const fbx_pw_params *P,
                       const uint32_t *ref, int n, int64_t len, int first) {
  const float *xa = nin == 2 ? PA : U;
  fbx_tensor *a = vec(d, len, xa, first, n), *b = vec(d, len, PB, first, n);
  fbx_tensor *ins[2] = {a, b};
  OK(fbx_pw_map_into(NULL, a, d, nin, ins, f, P));
  int bad = 0;
  static int printed;
  for (int64_t i = 0, j = first % n; i < len; i++, j = j + 1 == n ? 0 : j + 1) {
    uint32_t g = bits_at(a, i);
    if (g == ref[j]) continue;
    bad++;
    char in[64];
    if (nin == 2) snprintf(in, sizeof in, "%a, %a", (double)PA[j], (double)PB[j]);
    else snprintf(in, sizeof in, "%a", (double)U[j]);
    if (printed++ < 20)
      fprintf(stderr, "posdet FAIL aliased %s: n=%lld i=%lld in=(%s): 0x%08x, alone 0x%08x\n", name, (long long)len,
              (long long)i, in, g, ref[j]);
  }
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  return bad;
}

START_TEST(aliased_loops) {
  build_values();
  static const struct {
    const char *name;
    fbx_pw_loop_fn f;
    int nin;
    fbx_dtype d;
    double b; /* pow's scalar exponent */
  } loops[] = {{"sin", al_sin, 1, FBX_DTYPE_FLOAT32, 0},
               {"cos", al_cos, 1, FBX_DTYPE_FLOAT32, 0},
               {"tan", al_tan, 1, FBX_DTYPE_FLOAT32, 0},
               {"lgamma", al_lgamma, 1, FBX_DTYPE_FLOAT32, 0},
               {"sin f16", al_sin16, 1, FBX_DTYPE_FLOAT16, 0},
               {"erfc", al_erfc, 1, FBX_DTYPE_FLOAT32, 0},
               {"fmod", al_fmod, 2, FBX_DTYPE_FLOAT32, 0},
               {"pow", al_pow, 2, FBX_DTYPE_FLOAT32, 0},
               {"pow(x, 2.5)", al_pows, 1, FBX_DTYPE_FLOAT32, 2.5},
               {"pow(x, -3)", al_pows, 1, FBX_DTYPE_FLOAT32, -3},
               {"log10", al_log10, 1, FBX_DTYPE_FLOAT32, 0},
               {"expm1", al_expm1, 1, FBX_DTYPE_FLOAT32, 0},
               {"tanh", al_tanh, 1, FBX_DTYPE_FLOAT32, 0},
               {"erf", al_erf, 1, FBX_DTYPE_FLOAT32, 0}};
  int bad = 0, n = nvals;
  uint32_t *ref = malloc(sizeof(uint32_t) * (size_t)n);
  ck_assert_ptr_nonnull(ref);
  for (size_t l = 0; l < sizeof loops / sizeof loops[0]; l++) {
    fbx_pw_params P = {{loops[l].b}, {0}};
    const float *xa = loops[l].nin == 2 ? PA : U;
    fbx_dtype d = loops[l].d;
    for (int j = 0; j < n; j++) { /* alone, output apart */
      fbx_tensor *a = vec(d, 1, xa, j, n), *b = vec(d, 1, PB, j, n), *o = NULL;
      int64_t one = 1;
      OK(fbx_tensor_empty(&o, d, 1, &one));
      fbx_tensor *ins[2] = {a, b};
      OK(fbx_pw_map_into(NULL, o, d, loops[l].nin, ins, loops[l].f, &P));
      ref[j] = bits_at(o, 0);
      fbx_tensor_release(a);
      fbx_tensor_release(b);
      fbx_tensor_release(o);
    }
#define RUN(len, first) bad += aliased_run(loops[l].name, loops[l].f, loops[l].nin, d, &P, ref, n, len, first)
    for (int k = 0; k < 16; k++) {
      RUN(MAXL, k);
      RUN(256 + 7, k * 263);
    }
    for (int first = MAXL; first < n; first += MAXL) RUN(MAXL, first);
    for (int first = 0; first < n; first += 15) RUN(15, first);
#undef RUN
  }
  free(ref);
  ck_assert_msg(bad == 0, "%d aliased results depend on position (see stderr)", bad);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_posdet");
  TCase *tc = tcase_create("rows");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_pointwise_row);
  suite_add_tcase(s, tc);
  tc = tcase_create("aliased");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, aliased_loops);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
