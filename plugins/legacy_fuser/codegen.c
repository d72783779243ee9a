/* Kernel IR -> source, through one C-family printer. What differs between
 * C for the CPU and CUDA C for NVRTC is data (the dialect table below):
 * the prelude (integer types, bit casts, infinity), function and kernel
 * qualifiers, restrict spelling, and how the element loop is distributed
 * (a range [begin, end) split by an OpenMP pragma or handed out by the
 * plugin on the host's thread pool, or a CUDA grid-stride loop). The expressions themselves come from the op
 * templates (ops.c) and are printed the same way for both.
 *
 * Generated kernel, C:
 *
 *   void NAME(int64_t begin, int64_t end, int32_t nd, const int64_t *sizes,
 *             char *const *ptrs, const int64_t *strides, int32_t flat,
 *             const double *fs, const int64_t *is, int64_t par_min,
 *             int32_t nt)
 *   const int lf_openmp;  (1 when the object was compiled with OpenMP)
 *
 * [begin, end): elements of the flat path, rows (of the innermost collapsed
 * dim) of the strided path. LF_PAR_OMP: the loop carries
 * `#pragma omp parallel for simd if (<elements in range> >= par_min)
 * num_threads(nt)` and is called once with the whole range; LF_PAR_POOL:
 * `#pragma omp simd` only (compiled with -fopenmp-simd: no libgomp), par_min
 * and nt unused, the plugin splits the range. The strided path's inner loop
 * is `omp simd` in both modes.
 * CUDA C (__global__) covers all n elements:
 *
 *   void NAME(int64_t n, int32_t nd, const int64_t *sizes, char *const *ptrs,
 *             const int64_t *strides, int32_t flat, const double *fs,
 *             const int64_t *is, int64_t par_min)
 *
 * ptrs: the tensor operands, then the stores (data + byte offset already
 * applied); strides: [noperands + nstores][nd] in elements over the
 * (collapsed) iteration shape `sizes`; flat != 0 when every operand and
 * store is contiguous over n elements (the fast path the C compiler
 * vectorizes; 2 in CUDA when also 16-byte aligned: the float4 path of
 * all-float32 kernels); fs/is: scalar inputs by kernel input index.
 */
#include <stdio.h>
#include <string.h>

#include "lf.h"

typedef struct lf_dialect {
  const char *prelude;
  const char *restrict_kw;
  const char *kernel_decl; /* before the kernel's return type */
  const char *vmath;       /* lf_v*f: float exp, expm1, tanh, log, log1p, erf */
} lf_dialect;

/* Helpers written once for both dialects; LF_FN, lf_f2u/lf_u2f and
 * LF_INF/LF_NAN come from the dialect's prelude. Half and bfloat16 are
 * stored as bit patterns and computed in float, rounded once per op as
 * PyTorch rounds each op's result. */
static const char helpers[] =
    "LF_FN float lf_h2f(uint16_t h) {\n"
    "  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }\n"
    "  if (e == 31) return lf_u2f(s | 0x7f800000u | (m << 13));\n"
    "  return lf_u2f(s | ((e + 112u) << 23) | (m << 13));\n"
    "}\n"
    "LF_FN uint16_t lf_f2h(float f) {\n"
    "  uint32_t u = lf_f2u(f), s = (u >> 16) & 0x8000u;\n"
    "  u &= 0x7fffffffu;\n"
    "  if (u > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((u >> 13) & 0x3ffu));\n"
    "  if (u >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);\n"
    "  if (u < 0x38800000u) return (uint16_t)(s | (uint32_t)rintf(lf_u2f(u) * 16777216.0f));\n"
    "  u += 0xfffu + ((u >> 13) & 1u);\n"
    "  return (uint16_t)(s | ((u >> 13) - (112u << 10)));\n"
    "}\n"
    "LF_FN float lf_b2f(uint16_t b) { return lf_u2f((uint32_t)b << 16); }\n"
    "LF_FN uint16_t lf_f2b(float f) {\n"
    "  uint32_t u = lf_f2u(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
    "  return (uint16_t)(u >> 16);\n"
    "}\n"
    "LF_FN float lf_rh(float x) { return lf_h2f(lf_f2h(x)); }\n"
    "LF_FN float lf_rb(float x) { return lf_b2f(lf_f2b(x)); }\n"
    "LF_FN float lf_floordivf(float a, float b) {\n"
    "  if (b == 0) return a / b;\n"
    "  float m = fmodf(a, b), d = (a - m) / b;\n"
    "  if (m != 0 && (b < 0) != (m < 0)) d -= 1;\n"
    "  if (d == 0) return copysignf(0.0f, a / b);\n"
    "  float fd = floorf(d);\n"
    "  return d - fd > 0.5f ? fd + 1 : fd;\n"
    "}\n"
    "LF_FN double lf_floordiv(double a, double b) {\n"
    "  if (b == 0) return a / b;\n"
    "  double m = fmod(a, b), d = (a - m) / b;\n"
    "  if (m != 0 && (b < 0) != (m < 0)) d -= 1;\n"
    "  if (d == 0) return copysign(0.0, a / b);\n"
    "  double fd = floor(d);\n"
    "  return d - fd > 0.5 ? fd + 1 : fd;\n"
    "}\n"
    "LF_FN float lf_remf(float a, float b) { float m = fmodf(a, b); return m != 0 && (b < 0) != (m < 0) ? m + b : m; }\n"
    "LF_FN double lf_rem(double a, double b) { double m = fmod(a, b); return m != 0 && (b < 0) != (m < 0) ? m + b : m; }\n";

/* Vectorizable float math for the C dialect. A libm call per element
 * (expf, tanhf, ...) keeps GCC from vectorizing the flat loop, which made
 * GELU 4x slower fused than interpreted; these are branch-free (selects the
 * compiler if-converts), call nothing, and use only operations SSE2/AVX2
 * have packed (float<->int32 conversion, integer bit tricks, + - * /), so
 * the loop vectorizes. Float64 keeps libm; CUDA maps them to its
 * intrinsics (its prelude). Accuracy against libm in double, rounded to
 * float, is a few ulps (test_legacy_math checks them against the reference
 * interpreter over dense samples):
 *
 *   lf_vexpf   2^k * e^r, |r| <= ln2/2, degree-7 Taylor on r, 2^k applied
 *              as two halves so results down in the subnormals come out
 *   lf_vexpm1f 2^k * expm1(r) + (2^k - 1): no cancellation near 0 (and
 *              2^k (expm1(r) + 1) for large k, where 2^k alone overflows)
 *   lf_vtanhf  e / (e + 2) with e = expm1(2|x|), sign restored
 *   lf_vlogf   x = m 2^e, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f / (2 + f))
 *   lf_vlog1pf log(u) * x / (u - 1) with u = 1 + x rounded (Goldberg's
 *              trick: the rounding of u cancels), x where u rounds to 1
 *   lf_verff   |x| < 1: x P(x^2); else 1 - e^(-x^2) R(1/|x|) (fitted to
 *              1e-9 and 7e-8 relative), |x| clamped to 4 (erf = 1 in float)
 *
 * Few selects on purpose: GCC does not if-convert a PHI of more than four
 * arguments (nested ternaries after jump threading), and then the loop
 * does not vectorize.
 *
 * NaN in gives NaN out; infinities and signed zeros as C99 Annex F. */
static const char vmath_c[] =
    "#define LF_VM static inline __attribute__((always_inline, unused))\n"
    "LF_VM float lf_vm_pow2i(int32_t k) { return lf_u2f((uint32_t)(k + 127) << 23); }\n"
    "/* expm1(r) for c = k ln2 + r, |r| <= ln2/2; 2^k = s1 s2. k comes from the\n"
    " * bits of the rounded sum (no float->int conversion, defined for NaN). */\n"
    "LF_VM float lf_vm_expm1r(float c, float *s1, float *s2, int32_t *k) {\n"
    "  float t = c * 1.44269504f + 12582912.0f, kf = t - 12582912.0f;\n"
    "  float r = (c - kf * 0.693145751953125f) - kf * 1.42860677e-06f;\n"
    "  int32_t ki = (int32_t)(lf_f2u(t) - 0x4b400000u), k1 = ki / 2;\n"
    "  *s1 = lf_vm_pow2i(k1);\n"
    "  *s2 = lf_vm_pow2i(ki - k1);\n"
    "  *k = ki;\n"
    "  return r + r * r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040\n"
    "         + r * (1.0f / 40320)))))));\n"
    "}\n"
    "LF_VM float lf_vexpf(float x) {\n"
    "  float s1, s2;\n"
    "  int32_t k;\n"
    "  float p = lf_vm_expm1r(x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x, &s1, &s2, &k);\n"
    "  return ((p + 1.0f) * s1) * s2;\n"
    "}\n"
    "LF_VM float lf_vexpm1f(float x) {\n"
    "  float s1, s2;\n"
    "  int32_t k;\n"
    "  float p = lf_vm_expm1r(x < -30.0f ? -30.0f : x > 89.0f ? 89.0f : x, &s1, &s2, &k);\n"
    "  float y = k > 24 ? ((p + 1.0f) * s1) * s2 : (p * s1) * s2 + (s1 * s2 - 1.0f);\n"
    "  return x == 0 ? x : y;\n"
    "}\n"
    "/* |x| >= 10 gives e / (e + 2) = 1 in float */\n"
    "LF_VM float lf_vtanhf(float x) {\n"
    "  float a = lf_u2f(lf_f2u(x) & 0x7fffffffu), s1, s2;\n"
    "  int32_t k;\n"
    "  float p = lf_vm_expm1r(2.0f * (a > 10.0f ? 10.0f : a), &s1, &s2, &k);\n"
    "  float e = (p * s1) * s2 + (s1 * s2 - 1.0f), t = e / (e + 2.0f);\n"
    "  return lf_u2f(lf_f2u(t) | (lf_f2u(x) & 0x80000000u));\n"
    "}\n"
    "LF_VM float lf_vlogf(float x) {\n"
    "  int sub = x < 1.17549435e-38f;\n"
    "  float xs = sub ? x * 8388608.0f : x;\n"
    "  int32_t i = (int32_t)(lf_f2u(xs) - 0x3f3504f3u);\n"
    "  int32_t e = (i >> 23) - (sub ? 23 : 0);\n"
    "  float f = lf_u2f(lf_f2u(xs) - ((uint32_t)(i >> 23) << 23)) - 1.0f;\n"
    "  float s = f / (2.0f + f), z = s * s;\n"
    "  float p = 2.0f * s * (1.0f + z * (1.0f / 3 + z * (1.0f / 5 + z * (1.0f / 7 + z * (1.0f / 9 + z * (1.0f / 11))))));\n"
    "  float fe = (float)e, y = fe * 0.693145751953125f + (p + fe * 1.42860677e-06f);\n"
    "  float sp = x < 0 ? (float)LF_NAN : x == 0 ? -(float)LF_INF : x; /* NaN and +inf: x */\n"
    "  return lf_f2u(x) - 1u < 0x7f7fffffu ? y : sp; /* finite, > 0 */\n"
    "}\n"
    "/* log(u) x / (u - 1), u = 1 + x: log's error only; u - 1 is exact */\n"
    "LF_VM float lf_vlog1pf(float x) {\n"
    "  float u = 1.0f + x, d = u - 1.0f, y = lf_vlogf(u) * (x / d);\n"
    "  return d == 0 ? x : u == (float)LF_INF ? u : y; /* tiny x and both zeros: x */\n"
    "}\n"
    "LF_VM float lf_verff(float x) {\n"
    "  float a = lf_u2f(lf_f2u(x) & 0x7fffffffu), t = a * a;\n"
    "  float lo = a * (1.12837917f + t * (-0.376126288f + t * (0.112836124f + t * (-0.0268548070f + t * (0.00519004997f\n"
    "             + t * (-0.000802431665f + t * 7.89806861e-05f))))));\n"
    "  float b = a < 1.0f ? 1.0f : a > 4.0f ? 4.0f : a, u = 1.0f / b;\n"
    "  float q = 0.000246990255f + u * (0.559415419f + u * (0.0394737514f + u * (-0.462063090f + u * (0.474972538f\n"
    "            + u * (-0.210605458f + u * (-0.00324463648f + u * (0.0414664426f + u * -0.0120784121f)))))));\n"
    "  float y = a < 1.0f ? lo : 1.0f - lf_vexpf(-(b * b)) * q;\n"
    "  return lf_u2f(lf_f2u(y) | (lf_f2u(x) & 0x80000000u));\n"
    "}\n";

/* CUDA keeps its own (fast, accurate) math functions. */
static const char vmath_cuda[] =
    "#define lf_vexpf expf\n#define lf_vexpm1f expm1f\n#define lf_vtanhf tanhf\n#define lf_vlogf logf\n"
    "#define lf_verff erff\n#define lf_vlog1pf log1pf\n";

static const lf_dialect dialects[2] = {
    [LF_DIALECT_C] =
        {
            "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
            "#define LF_FN static inline __attribute__((unused))\n"
            "#define LF_INF __builtin_inf()\n#define LF_NAN __builtin_nan(\"\")\n"
            "LF_FN uint32_t lf_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
            "LF_FN float lf_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n",
            "restrict",
            "",
            vmath_c,
        },
    [LF_DIALECT_CUDA] =
        {
            "typedef signed char int8_t;\ntypedef unsigned char uint8_t;\ntypedef short int16_t;\n"
            "typedef unsigned short uint16_t;\ntypedef int int32_t;\ntypedef unsigned int uint32_t;\n"
            "typedef long long int64_t;\ntypedef unsigned long long uint64_t;\n"
            "#define LF_FN static __device__ __forceinline__\n"
            "#define LF_INF __longlong_as_double(0x7ff0000000000000LL)\n"
            "#define LF_NAN __longlong_as_double(0x7ff8000000000000LL)\n"
            "LF_FN uint32_t lf_f2u(float f) { return __float_as_uint(f); }\n"
            "LF_FN float lf_u2f(uint32_t u) { return __uint_as_float(u); }\n",
            "__restrict__",
            "extern \"C\" __global__ ",
            vmath_cuda,
        },
};

/* ---- types -------------------------------------------------------------------------- */

static const char *storage_type(int dt) {
  switch (dt) {
    case LF_U8: case LF_BOOL: return "uint8_t";
    case LF_I8: return "int8_t";
    case LF_I16: return "int16_t";
    case LF_I32: return "int32_t";
    case LF_I64: return "int64_t";
    case LF_F16: case LF_BF16: return "uint16_t";
    case LF_F32: return "float";
    default: return "double";
  }
}

/* the C type a value of dtype dt is held in */
static const char *repr_type(int dt) {
  if (dt == LF_F64) return "double";
  if (lf_is_float(dt)) return "float";
  return "int64_t";
}

/* x (an expression of any repr) as a value of dtype dt: rounded, narrowed */
static void repr_cast(lf_buf *b, int dt, const char *x) {
  switch (dt) {
    case LF_F32: lf_printf(b, "(float)(%s)", x); break;
    case LF_F16: lf_printf(b, "lf_rh((float)(%s))", x); break;
    case LF_BF16: lf_printf(b, "lf_rb((float)(%s))", x); break;
    case LF_F64: lf_printf(b, "(double)(%s)", x); break;
    case LF_I64: lf_printf(b, "(int64_t)(%s)", x); break;
    case LF_BOOL: lf_printf(b, "(int64_t)((%s) != 0)", x); break;
    default: lf_printf(b, "(int64_t)(%s)(%s)", storage_type(dt), x); break;
  }
}

static char *cast_str(int dt, const char *x) {
  lf_buf b = {0};
  repr_cast(&b, dt, x);
  return lf_take(&b);
}

/* a value's expression: its variable, or a constant's literal */
static void value_ref(lf_buf *b, const lf_kir *k, int id) {
  const lf_value *v = &k->values[id];
  if (v->kind != LF_CONST) {
    lf_printf(b, "v%d", id);
    return;
  }
  if (v->dtype == LF_F64) {
    double f = v->cf;
    if (f != f) lf_puts(b, "LF_NAN");
    else if (f == __builtin_inf()) lf_puts(b, "LF_INF");
    else if (f == -__builtin_inf()) lf_puts(b, "(-LF_INF)");
    else lf_printf(b, "%a", f);
  } else if (v->ci == INT64_MIN) {
    lf_puts(b, "(-9223372036854775807LL - 1)");
  } else {
    lf_printf(b, "((int64_t)%lldLL)", (long long)v->ci);
  }
}

static char *arg_str(const lf_kir *k, int id, int cd, int raw) {
  lf_buf r = {0};
  value_ref(&r, k, id);
  char *ref = lf_take(&r);
  if (!ref || raw || k->values[id].dtype == cd) return ref;
  char *c = cast_str(cd, ref);
  lf_host->free(ref);
  return c;
}

/* the template of op value v with its arguments */
static void expand(lf_buf *b, const lf_kir *k, const lf_value *v) {
  const char *t = lf_op_template(v->op, v->cdtype);
  int sel = lf_op_selector(v->op);
  for (const char *p = t; *p; p++) {
    if (*p != '$' || !p[1]) {
      char c[2] = {*p, 0};
      lf_puts(b, c);
      continue;
    }
    char c = *++p;
    if (c == 'T') lf_puts(b, repr_type(v->cdtype));
    else if (c == 'f') lf_puts(b, v->cdtype == LF_F64 ? "" : "f");
    else if (c == 'v') lf_puts(b, v->cdtype == LF_F64 ? "" : "lf_v");
    else if (c >= '0' && c <= '9' && c - '0' < v->nargs) {
      char *a = arg_str(k, v->args[c - '0'], v->cdtype, sel == c - '0');
      if (!a) b->oom = 1; /* out of memory, not a compile error from the "?" */
      lf_puts(b, "(");
      lf_puts(b, a ? a : "?");
      lf_puts(b, ")");
      lf_host->free(a);
    }
  }
}

/* The straight-line body for one element. access[j]: operand j's element
 * lvalue; out[s]: store s's element lvalue. */
static void body(lf_buf *b, const lf_kir *k, char **access, char **out, const char *ind) {
  for (int id = 0; id < k->nvalues; id++) {
    const lf_value *v = &k->values[id];
    if (v->kind == LF_LOAD) {
      const char *a = access[v->slot];
      if (!a) b->oom = 1; /* never print "(null)": fail the kernel as out of memory */
      lf_printf(b, "%sconst %s v%d = ", ind, repr_type(v->dtype), id);
      if (v->dtype == LF_F16) lf_printf(b, "lf_h2f(%s);\n", a);
      else if (v->dtype == LF_BF16) lf_printf(b, "lf_b2f(%s);\n", a);
      else if (lf_is_float(v->dtype)) lf_printf(b, "%s;\n", a);
      else lf_printf(b, "(int64_t)%s;\n", a);
    } else if (v->kind == LF_OP) {
      lf_buf e = {0};
      expand(&e, k, v);
      char *raw = lf_take(&e);
      int rawdt = lf_op_is_bool_valued(v->op) ? LF_BOOL : v->cdtype;
      char *x = cast_str(rawdt, raw ? raw : "0");
      if (rawdt != v->dtype) {
        char *y = cast_str(v->dtype, x ? x : "0");
        lf_host->free(x);
        x = y;
      }
      if (!raw || !x) b->oom = 1; /* a "0" in place of the op would compile and be wrong */
      lf_printf(b, "%sconst %s v%d = %s; /* %s */\n", ind, repr_type(v->dtype), id, x ? x : "0", lf_op_name(v->op));
      lf_host->free(raw);
      lf_host->free(x);
    }
  }
  for (int s = 0; s < k->nstores; s++) {
    const lf_store *st = &k->stores[s];
    lf_buf r = {0};
    value_ref(&r, k, st->value);
    char *ref = lf_take(&r);
    const char *x = ref ? ref : "0";
    if (!ref || !out[s]) b->oom = 1;
    switch (st->dtype) {
      case LF_F16: lf_printf(b, "%s%s = lf_f2h(%s);\n", ind, out[s], x); break;
      case LF_BF16: lf_printf(b, "%s%s = lf_f2b(%s);\n", ind, out[s], x); break;
      case LF_BOOL: lf_printf(b, "%s%s = (uint8_t)(%s != 0);\n", ind, out[s], x); break;
      default: lf_printf(b, "%s%s = (%s)%s;\n", ind, out[s], storage_type(st->dtype), x); break;
    }
    lf_host->free(ref);
  }
}

static char *fmt(const char *f, int j, const char *lane) {
  lf_buf b = {0};
  if (lane) lf_printf(&b, f, j, lane);
  else lf_printf(&b, f, j);
  return lf_take(&b);
}

static char *fmt3(const char *f, int j) {
  lf_buf b = {0};
  lf_printf(&b, f, j, j, j);
  return lf_take(&b);
}

static void free_strs(char **s, int n) {
  for (int i = 0; i < n; i++) lf_host->free(s[i]);
}

/* typed pointers a<j> (operands) and o<s> (stores) */
static void pointers(lf_buf *b, const lf_kir *k, const lf_dialect *d, const char *ind) {
  for (int j = 0; j < k->noperands; j++)
    lf_printf(b, "%sconst %s *%s a%d = (const %s *)ptrs[%d];\n", ind, storage_type(k->operands[j].dtype),
              d->restrict_kw, j, storage_type(k->operands[j].dtype), j);
  for (int s = 0; s < k->nstores; s++)
    lf_printf(b, "%s%s *%s o%d = (%s *)ptrs[%d];\n", ind, storage_type(k->stores[s].dtype), d->restrict_kw, s,
              storage_type(k->stores[s].dtype), k->noperands + s);
}

static int all_float32(const lf_kir *k) {
  for (int j = 0; j < k->noperands; j++)
    if (k->operands[j].dtype != LF_F32) return 0;
  for (int s = 0; s < k->nstores; s++)
    if (k->stores[s].dtype != LF_F32) return 0;
  return 1;
}

char *lf_codegen(const lf_kir *k, lf_dialect_id did, lf_parallel par, const char *name, const char *first_line) {
  const lf_dialect *d = &dialects[did];
  int nargs = k->noperands + k->nstores;
  char *acc[LF_MAX_ARGS], *out[LF_MAX_ARGS];
  lf_buf b = {0};
  if (first_line) lf_puts(&b, first_line);
  lf_puts(&b, d->prelude);
  lf_puts(&b, d->vmath);
  lf_puts(&b, helpers);
  if (did == LF_DIALECT_C)
    lf_printf(&b,
              "\n#ifdef _OPENMP\nconst int lf_openmp = 1;\n#else\nconst int lf_openmp = 0;\n#endif\n"
              "\n%svoid %s(int64_t begin, int64_t end, int32_t nd, const int64_t *sizes, char *const *ptrs,\n"
              "    const int64_t *strides, int32_t flat, const double *fs, const int64_t *is, int64_t par_min,\n"
              "    int32_t nt) {\n",
              d->kernel_decl, name);
  else
    lf_printf(&b,
              "\n%svoid %s(int64_t n, int32_t nd, const int64_t *sizes, char *const *ptrs, const int64_t *strides,\n"
              "    int32_t flat, const double *fs, const int64_t *is, int64_t par_min) {\n",
              d->kernel_decl, name);
  lf_puts(&b, did == LF_DIALECT_C ? "  (void)fs; (void)is; (void)sizes; (void)strides; (void)nd; (void)par_min; (void)nt;\n"
                                  : "  (void)fs; (void)is; (void)par_min; (void)sizes; (void)strides; (void)nd;\n");
  for (int id = 0; id < k->nvalues; id++) {
    const lf_value *v = &k->values[id];
    if (v->kind == LF_SCALAR)
      lf_printf(&b, "  const %s v%d = %s[%d];\n", v->dtype == LF_F64 ? "double" : "int64_t", id,
                v->dtype == LF_F64 ? "fs" : "is", v->slot);
  }
  if (did == LF_DIALECT_C) {
    lf_puts(&b, "  if (end <= begin) return;\n");
    /* flat: one index for all, restrict pointers: the loop the compiler vectorizes */
    lf_puts(&b, "  if (flat) {\n");
    pointers(&b, k, d, "    ");
    /* `simd`: GCC gives up on loops with many streams and mixed-width temporaries
     * (a backward kernel of 20 inputs and 8 outputs stayed scalar); the pragma
     * states what is true here, no dependence between iterations. */
    if (par == LF_PAR_OMP) lf_puts(&b, "#pragma omp parallel for simd if (end - begin >= par_min) num_threads(nt)\n");
    else lf_puts(&b, "#pragma omp simd\n");
    lf_puts(&b, "    for (int64_t i = begin; i < end; i++) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
    for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
    body(&b, k, acc, out, "      ");
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    lf_puts(&b, "    }\n    return;\n  }\n");
    /* strided: rows of the innermost (collapsed) dim, each row's offsets from its index */
    lf_puts(&b, "  const int64_t inner = nd > 0 ? sizes[nd - 1] : 1;\n");
    pointers(&b, k, d, "  ");
    /* par_min counts elements; the range counts rows of `inner` */
    if (par == LF_PAR_OMP)
      lf_puts(&b, "#pragma omp parallel for if ((end - begin) * inner >= par_min) num_threads(nt)\n");
    lf_puts(&b, "  for (int64_t r = begin; r < end; r++) {\n    int64_t rem = r");
    for (int j = 0; j < nargs; j++) lf_printf(&b, ", off%d = 0", j);
    lf_puts(&b, ";\n    for (int32_t dd = nd - 2; dd >= 0; dd--) {\n");
    lf_puts(&b, "      const int64_t ix = rem % sizes[dd];\n      rem /= sizes[dd];\n");
    for (int j = 0; j < nargs; j++) lf_printf(&b, "      off%d += ix * strides[%d * nd + dd];\n", j, j);
    lf_puts(&b, "    }\n");
    for (int j = 0; j < nargs; j++) lf_printf(&b, "    const int64_t st%d = nd > 0 ? strides[%d * nd + nd - 1] : 0;\n", j, j);
    lf_puts(&b, "#pragma omp simd\n    for (int64_t i = 0; i < inner; i++) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt3("a%d[off%d + i * st%d]", j);
    for (int s = 0; s < k->nstores; s++) {
      int j = k->noperands + s;
      lf_buf t = {0};
      lf_printf(&t, "o%d[off%d + i * st%d]", s, j, j);
      out[s] = lf_take(&t);
    }
    body(&b, k, acc, out, "      ");
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    lf_puts(&b, "    }\n  }\n}\n");
  } else {
    lf_puts(&b, "  if (n <= 0) return;\n");
    lf_puts(&b, "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n");
    lf_puts(&b, "  const int64_t step = (int64_t)blockDim.x * gridDim.x;\n");
    pointers(&b, k, d, "  ");
    if (all_float32(k)) {
      /* every pointer 16-byte aligned (flat == 2): four elements per thread step */
      lf_puts(&b, "  if (flat == 2) {\n    const int64_t n4 = n / 4;\n");
      lf_puts(&b, "    for (int64_t q = tid; q < n4; q += step) {\n");
      for (int j = 0; j < k->noperands; j++)
        lf_printf(&b, "      const float4 a%dq = ((const float4 *)a%d)[q];\n", j, j);
      for (int s = 0; s < k->nstores; s++) lf_printf(&b, "      float4 o%dq;\n", s);
      static const char *lane[4] = {"x", "y", "z", "w"};
      for (int l = 0; l < 4; l++) {
        lf_printf(&b, "      {\n");
        for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%dq.%s", j, lane[l]);
        for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%dq.%s", s, lane[l]);
        body(&b, k, acc, out, "        ");
        free_strs(acc, k->noperands);
        free_strs(out, k->nstores);
        lf_printf(&b, "      }\n");
      }
      for (int s = 0; s < k->nstores; s++) lf_printf(&b, "      ((float4 *)o%d)[q] = o%dq;\n", s, s);
      lf_puts(&b, "    }\n    for (int64_t i = n4 * 4 + tid; i < n; i += step) {\n");
      for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
      for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
      body(&b, k, acc, out, "      ");
      free_strs(acc, k->noperands);
      free_strs(out, k->nstores);
      lf_puts(&b, "    }\n    return;\n  }\n");
    }
    lf_puts(&b, "  if (flat) {\n    for (int64_t i = tid; i < n; i += step) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
    for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
    body(&b, k, acc, out, "      ");
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    lf_puts(&b, "    }\n    return;\n  }\n");
    lf_puts(&b, "  for (int64_t i = tid; i < n; i += step) {\n    int64_t rem = i");
    for (int j = 0; j < nargs; j++) lf_printf(&b, ", off%d = 0", j);
    lf_puts(&b, ";\n    for (int32_t dd = nd - 1; dd >= 0; dd--) {\n");
    lf_puts(&b, "      const int64_t ix = rem % sizes[dd];\n      rem /= sizes[dd];\n");
    for (int j = 0; j < nargs; j++) lf_printf(&b, "      off%d += ix * strides[%d * nd + dd];\n", j, j);
    lf_puts(&b, "    }\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt3("a%d[off%d]", j);
    for (int s = 0; s < k->nstores; s++) {
      lf_buf t = {0};
      lf_printf(&t, "o%d[off%d]", s, k->noperands + s);
      out[s] = lf_take(&t);
    }
    body(&b, k, acc, out, "    ");
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    lf_puts(&b, "  }\n}\n");
  }
  return lf_take(&b);
}
