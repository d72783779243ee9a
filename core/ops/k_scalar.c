/* Kernels for TorchScript scalar code (ops/list_scalar.h): int/float/bool
 * arithmetic and comparisons with TorchScript's semantics, tensor <-> number
 * conversions, lists, tuples and strings.
 *
 * One kernel serves all overloads of an operation; it reads which operation
 * from ctx->op->id and the result kind from the row's return type, so the
 * int, float, mixed and Scalar rows share one definition of the arithmetic. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/optable.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static bool intlike(const fbx_ivalue *v) { return v->kind == FBX_IV_INT || v->kind == FBX_IV_BOOL; }

static fbx_status *want_scalar(const fbx_kctx *ctx, const fbx_ivalue *v, int i) {
  if (fbx_iv_is_scalar(v)) return NULL;
  const char *name = ctx->op->schema.nargs > i ? ctx->op->schema.args[i].name : "?";
  return fbx_kernel_error(ctx, "argument '%s' must be a number, got %s", name, fbx_iv_kind_name(v->kind));
}

/* Wrapping int64 arithmetic (TorchScript ints are int64; overflow is not an error). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* float -> int as TorchScript does it (static_cast on x86): truncation, and
 * INT64_MIN for NaN and values out of range. */
static int64_t float_to_int(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)d;
}

/* The kind of a row's return: int, float, bool or "Scalar" (decided by the operands). */
typedef enum rk { RK_INT, RK_FLOAT, RK_BOOL, RK_DYN } rk;

static rk ret_kind(const fbx_op *op) {
  switch (op->schema.rets[0].type) {
    case FBX_ARG_INT: return RK_INT;
    case FBX_ARG_FLOAT: return RK_FLOAT;
    case FBX_ARG_BOOL: return RK_BOOL;
    default: return RK_DYN;
  }
}

/* ---- Python-style text of values (str(), print, str.format) ----------------------------------- */

/* repr(float): the shortest digits that read back the same; scientific
 * notation outside 1e-4 <= |v| < 1e16, and always a '.' or exponent. */
static void put_py_float(fbx_strbuf *b, double v) {
  if (isnan(v)) {
    fbx_strbuf_puts(b, "nan");
    return;
  }
  if (isinf(v)) {
    fbx_strbuf_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[64];
  int p = 1;
  for (; p < 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    if (strtod(buf, NULL) == v) break;
  }
  snprintf(buf, sizeof buf, "%.*e", p - 1, v);
  int exp10 = atoi(strchr(buf, 'e') + 1);
  if (exp10 < -4 || exp10 >= 16) {
    fbx_strbuf_puts(b, buf);
    return;
  }
  int decimals = p - 1 - exp10;
  snprintf(buf, sizeof buf, "%.*f", decimals > 1 ? decimals : 1, v);
  fbx_strbuf_puts(b, buf);
}

static void put_py(fbx_strbuf *b, const fbx_ivalue *v, bool quote) {
  switch (v->kind) {
    case FBX_IV_NONE: fbx_strbuf_puts(b, "None"); return;
    case FBX_IV_INT: fbx_strbuf_printf(b, "%lld", (long long)v->u.i); return;
    case FBX_IV_FLOAT: put_py_float(b, v->u.f); return;
    case FBX_IV_BOOL: fbx_strbuf_puts(b, v->u.b ? "True" : "False"); return;
    case FBX_IV_STR:
      if (quote) fbx_strbuf_putc(b, '\'');
      fbx_strbuf_append(b, fbx_iv_str_data(v), fbx_iv_str_len(v));
      if (quote) fbx_strbuf_putc(b, '\'');
      return;
    case FBX_IV_DEVICE: fbx_strbuf_puts(b, fbx_iv_str_data(v)); return;
    case FBX_IV_LIST:
    case FBX_IV_TUPLE: {
      bool list = v->kind == FBX_IV_LIST;
      fbx_strbuf_putc(b, list ? '[' : '(');
      for (int i = 0; i < v->u.l->n; i++) {
        if (i) fbx_strbuf_puts(b, ", ");
        put_py(b, &v->u.l->items[i], true);
      }
      if (!list && v->u.l->n == 1) fbx_strbuf_putc(b, ',');
      fbx_strbuf_putc(b, list ? ']' : ')');
      return;
    }
    default: fbx_iv_describe(b, v); return; /* tensors: a summary line, not PyTorch's full printout */
  }
}

/* Number of arguments a varargs kernel was given (0 in a context that did
 * not say: then the schema's fixed ones). */
static int varargs_count(const fbx_kctx *ctx) { return ctx->nargs ? ctx->nargs : ctx->op->schema.nargs; }

/* ---- binary arithmetic -------------------------------------------------------------------- */

typedef enum arith { A_ADD, A_SUB, A_MUL, A_DIV, A_FLOORDIV, A_REM, A_POW, A_FMOD, A_MIN, A_MAX } arith;

#define CASES5_(n) \
  case FBX_OP_##n##_int: case FBX_OP_##n##_float: case FBX_OP_##n##_int_float: case FBX_OP_##n##_float_int

static arith arith_of(int id) {
  switch (id) {
    CASES5_(add): case FBX_OP_add_num: return A_ADD;
    CASES5_(sub): case FBX_OP_sub_num: return A_SUB;
    CASES5_(mul): case FBX_OP_mul_num: return A_MUL;
    case FBX_OP_div_int: case FBX_OP_div_float: case FBX_OP_div_num: return A_DIV;
    CASES5_(floordiv): case FBX_OP_floordiv_num: return A_FLOORDIV;
    CASES5_(remainder): case FBX_OP_remainder_num: return A_REM;
    CASES5_(pow): case FBX_OP_pow_Scalar_Scalar: case FBX_OP_pow_int_to_int: return A_POW;
    CASES5_(fmod): case FBX_OP_fmod_num: return A_FMOD;
    CASES5_(prim_min): case FBX_OP_prim_min_num: return A_MIN;
    default: return A_MAX;
  }
}

static fbx_status *int_arith(const fbx_kctx *ctx, arith op, int64_t a, int64_t b, int64_t *out) {
  *out = 0;
  switch (op) {
    case A_ADD: *out = wrap_add(a, b); return NULL;
    case A_SUB: *out = wrap_sub(a, b); return NULL;
    case A_MUL: *out = wrap_mul(a, b); return NULL;
    case A_FLOORDIV:
    case A_REM:
      if (b == 0) return fbx_kernel_error(ctx, "ZeroDivisionError: integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) { /* the one quotient that overflows: wrap like the rest */
        *out = op == A_FLOORDIV ? INT64_MIN : 0;
        return NULL;
      } else {
        int64_t q = a / b, r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) { /* Python: floor toward -inf, remainder takes b's sign */
          q -= 1;
          r += b;
        }
        *out = op == A_FLOORDIV ? q : r;
      }
      return NULL;
    case A_POW: { /* pow.int_to_int; a negative exponent is not an integer result */
      if (b < 0) {
        if (a == 0) return fbx_kernel_error(ctx, "0 cannot be raised to a negative power");
        *out = a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
        return NULL;
      }
      int64_t r = 1, base = a;
      for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r = wrap_mul(r, base);
        base = wrap_mul(base, base);
      }
      *out = r;
      return NULL;
    }
    case A_MIN: *out = a < b ? a : b; return NULL;
    case A_MAX: *out = a > b ? a : b; return NULL;
    default: return fbx_kernel_error(ctx, "internal: no int form");
  }
}

static fbx_status *float_arith(const fbx_kctx *ctx, arith op, double a, double b, double *out) {
  *out = 0;
  switch (op) {
    case A_ADD: *out = a + b; return NULL;
    case A_SUB: *out = a - b; return NULL;
    case A_MUL: *out = a * b; return NULL;
    case A_DIV: *out = a / b; return NULL;
    case A_FLOORDIV: *out = floor(a / b); return NULL; /* TorchScript's, not Python's divmod-based // */
    case A_REM: *out = fmod(b + fmod(a, b), b); return NULL;
    case A_FMOD: *out = fmod(a, b); return NULL;
    case A_POW:
      if (a == 0.0 && b < 0) return fbx_kernel_error(ctx, "0.0 cannot be raised to a negative power");
      *out = pow(a, b);
      return NULL;
    case A_MIN: *out = a < b ? a : b; return NULL; /* NaN handling as TorchScript's prim::min */
    case A_MAX: *out = a > b ? a : b; return NULL;
  }
  return NULL;
}

fbx_status *fbx_k_sc_arith(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_scalar(ctx, &args[0], 0));
  FBX_TRY(want_scalar(ctx, &args[1], 1));
  arith op = arith_of(ctx->op->id);
  rk r = ret_kind(ctx->op);
  bool ints = intlike(&args[0]) && intlike(&args[1]);
  if (r == RK_INT || (r == RK_DYN && ints)) {
    int64_t v;
    FBX_TRY(int_arith(ctx, op, fbx_iv_to_int(&args[0]), fbx_iv_to_int(&args[1]), &v));
    outs[0] = fbx_iv_int(v);
    return NULL;
  }
  double v;
  FBX_TRY(float_arith(ctx, op, fbx_iv_to_double(&args[0]), fbx_iv_to_double(&args[1]), &v));
  outs[0] = fbx_iv_float(v);
  return NULL;
}

/* ---- unary ------------------------------------------------------------------------------------ */

fbx_status *fbx_k_sc_unary(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_scalar(ctx, &args[0], 0));
  const fbx_ivalue *a = &args[0];
  bool ints = intlike(a);
  int64_t i = fbx_iv_to_int(a);
  double d = fbx_iv_to_double(a);
  switch (ctx->op->id) {
    case FBX_OP_neg_int: case FBX_OP_neg_float: case FBX_OP_neg_num:
      outs[0] = ints ? fbx_iv_int(wrap_sub(0, i)) : fbx_iv_float(-d);
      return NULL;
    case FBX_OP_prim_abs_int: case FBX_OP_prim_abs_float: case FBX_OP_prim_abs_num:
      outs[0] = ints ? fbx_iv_int(i < 0 ? wrap_sub(0, i) : i) : fbx_iv_float(fabs(d));
      return NULL;
    case FBX_OP_floor_int: case FBX_OP_floor_float: case FBX_OP_floor_num:
      outs[0] = ints ? fbx_iv_int(i) : fbx_iv_int(float_to_int(floor(d)));
      return NULL;
    case FBX_OP_ceil_int: case FBX_OP_ceil_float: case FBX_OP_ceil_num:
      outs[0] = ints ? fbx_iv_int(i) : fbx_iv_int(float_to_int(ceil(d)));
      return NULL;
    case FBX_OP_sqrt_int: case FBX_OP_sqrt_float: case FBX_OP_sqrt_num:
      outs[0] = fbx_iv_float(sqrt(d));
      return NULL;
    case FBX_OP_isnan_float: outs[0] = fbx_iv_bool(isnan(d)); return NULL;
    case FBX_OP_isinf_float: outs[0] = fbx_iv_bool(isinf(d)); return NULL;
    case FBX_OP_not_bool: outs[0] = fbx_iv_bool(d == 0); return NULL;
    default: return fbx_kernel_error(ctx, "internal: unknown unary op");
  }
}

/* Python's round(): half to even (TorchScript's round_to_even). */
static double round_half_even(double d) {
  double r = round(d);
  if (fabs(d - trunc(d)) == 0.5) r = 2.0 * round(d / 2.0);
  return r;
}

/* math.exp/log/sin/... on an int, float or Scalar: always a float (as
 * TorchScript's DEFINE_UNARY_OP with float results); log.Scalar_Scalar is
 * math.log(a, base). */
fbx_status *fbx_k_sc_math(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_scalar(ctx, &args[0], 0));
  double d = fbx_iv_to_double(&args[0]), r;
  if (ctx->op->id == FBX_OP_log_Scalar_Scalar) {
    FBX_TRY(want_scalar(ctx, &args[1], 1));
    outs[0] = fbx_iv_float(log(d) / log(fbx_iv_to_double(&args[1])));
    return NULL;
  }
  switch (ctx->op->id) {
#define FBX_SC_MATH_CASE_(X, name) \
  case FBX_OP_##name##_int: case FBX_OP_##name##_float: case FBX_OP_##name##_num: r = SC_FN_##name(d); break;
#define SC_FN_exp exp
#define SC_FN_log log
#define SC_FN_log10 log10
#define SC_FN_log1p log1p
#define SC_FN_expm1 expm1
#define SC_FN_sin sin
#define SC_FN_cos cos
#define SC_FN_tan tan
#define SC_FN_asin asin
#define SC_FN_acos acos
#define SC_FN_atan atan
#define SC_FN_sinh sinh
#define SC_FN_cosh cosh
#define SC_FN_tanh tanh
#define SC_FN_asinh asinh
#define SC_FN_acosh acosh
#define SC_FN_atanh atanh
#define SC_FN_erf erf
#define SC_FN_erfc erfc
#define SC_FN_fabs fabs
#define SC_FN_round round_half_even
#define SC_FN_lgamma lgamma
#define SC_FN_gamma tgamma
    FBX_SC_MATH_LIST_(FBX_SC_MATH_CASE_, _)
#undef FBX_SC_MATH_CASE_
    default: return fbx_kernel_error(ctx, "internal: unknown math op");
  }
  outs[0] = fbx_iv_float(r);
  return NULL;
}

/* __and__/__or__/__xor__ on bools and ints. */
fbx_status *fbx_k_sc_bitwise(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  for (int k = 0; k < 2; k++)
    if (!intlike(&args[k]))
      return fbx_kernel_error(ctx, "expected int or bool operands, got %s", fbx_iv_kind_name(args[k].kind));
  int64_t a = fbx_iv_to_int(&args[0]), b = fbx_iv_to_int(&args[1]), v;
  switch (ctx->op->id) {
    case FBX_OP_and_bool: case FBX_OP_and_int: v = a & b; break;
    case FBX_OP_or_bool: case FBX_OP_or_int: v = a | b; break;
    default: v = a ^ b; break;
  }
  outs[0] = ret_kind(ctx->op) == RK_BOOL ? fbx_iv_bool(v != 0) : fbx_iv_int(v);
  return NULL;
}

/* ---- comparisons ------------------------------------------------------------------------------ */

typedef enum cmpop { C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE } cmpop;

static cmpop cmp_of(const fbx_op *op) {
  const char *u = fbx_sym_unqual(op->schema.name);
  static const char *const names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  for (int i = 0; i < 6; i++)
    if (!strcmp(u, names[i])) return (cmpop)i;
  return C_EQ;
}

static bool apply_cmp(cmpop c, int sign /* -1, 0, 1 */) {
  switch (c) {
    case C_EQ: return sign == 0;
    case C_NE: return sign != 0;
    case C_LT: return sign < 0;
    case C_LE: return sign <= 0;
    case C_GT: return sign > 0;
    default: return sign >= 0;
  }
}

/* Equality of two ivalues for list comparison and __contains__ (numbers by
 * value, strings by content). */
static bool iv_equal(const fbx_ivalue *a, const fbx_ivalue *b) {
  if (fbx_iv_is_scalar(a) && fbx_iv_is_scalar(b)) {
    if (intlike(a) && intlike(b)) return fbx_iv_to_int(a) == fbx_iv_to_int(b);
    return fbx_iv_to_double(a) == fbx_iv_to_double(b);
  }
  if ((a->kind == FBX_IV_STR || a->kind == FBX_IV_DEVICE) && a->kind == b->kind)
    return fbx_iv_str_len(a) == fbx_iv_str_len(b) && !memcmp(fbx_iv_str_data(a), fbx_iv_str_data(b), fbx_iv_str_len(a));
  if ((a->kind == FBX_IV_LIST || a->kind == FBX_IV_TUPLE) && a->kind == b->kind) {
    if (a->u.l->n != b->u.l->n) return false;
    for (int i = 0; i < a->u.l->n; i++)
      if (!iv_equal(&a->u.l->items[i], &b->u.l->items[i])) return false;
    return true;
  }
  if (a->kind == FBX_IV_NONE && b->kind == FBX_IV_NONE) return true;
  if (a->kind == FBX_IV_TENSOR && b->kind == FBX_IV_TENSOR) return a->u.t == b->u.t;
  return false;
}

fbx_status *fbx_k_sc_compare(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  cmpop c = cmp_of(ctx->op);
  const fbx_ivalue *a = &args[0], *b = &args[1];
  if (fbx_iv_is_scalar(a) && fbx_iv_is_scalar(b)) {
    int sign;
    if (intlike(a) && intlike(b)) {
      int64_t x = fbx_iv_to_int(a), y = fbx_iv_to_int(b);
      sign = x < y ? -1 : x > y;
    } else {
      double x = fbx_iv_to_double(a), y = fbx_iv_to_double(b);
      if (isnan(x) || isnan(y)) { /* every comparison with NaN is false, except != */
        outs[0] = fbx_iv_bool(c == C_NE);
        return NULL;
      }
      sign = x < y ? -1 : x > y;
    }
    outs[0] = fbx_iv_bool(apply_cmp(c, sign));
    return NULL;
  }
  if ((a->kind == FBX_IV_STR || a->kind == FBX_IV_DEVICE) && (b->kind == FBX_IV_STR || b->kind == FBX_IV_DEVICE)) {
    size_t la = fbx_iv_str_len(a), lb = fbx_iv_str_len(b);
    int r = memcmp(fbx_iv_str_data(a), fbx_iv_str_data(b), la < lb ? la : lb);
    if (r == 0) r = la < lb ? -1 : la > lb;
    outs[0] = fbx_iv_bool(apply_cmp(c, r < 0 ? -1 : r > 0));
    return NULL;
  }
  if (a->kind == FBX_IV_LIST && b->kind == FBX_IV_LIST && (c == C_EQ || c == C_NE)) {
    bool eq = iv_equal(a, b);
    outs[0] = fbx_iv_bool(c == C_EQ ? eq : !eq);
    return NULL;
  }
  return fbx_kernel_error(ctx, "cannot compare %s with %s", fbx_iv_kind_name(a->kind), fbx_iv_kind_name(b->kind));
}

/* __is__/__isnot__: identity. TorchScript uses them for `x is None`; for
 * other values it compares object identity. */
fbx_status *fbx_k_sc_is(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const fbx_ivalue *a = &args[0], *b = &args[1];
  bool same;
  if (a->kind != b->kind) {
    same = false;
  } else {
    switch (a->kind) {
      case FBX_IV_NONE: same = true; break;
      case FBX_IV_TENSOR: same = a->u.t == b->u.t; break;
      case FBX_IV_STR: case FBX_IV_DEVICE: same = a->u.s == b->u.s; break;
      case FBX_IV_LIST: case FBX_IV_TUPLE: same = a->u.l == b->u.l; break;
      default: same = iv_equal(a, b); break; /* small numbers and bools are singletons in Python */
    }
  }
  outs[0] = fbx_iv_bool(ctx->op->id == FBX_OP_is ? same : !same);
  return NULL;
}

/* ---- tensors <-> numbers ------------------------------------------------------------------------ */

static fbx_status *tensor_item(const fbx_kctx *ctx, const fbx_tensor *t, fbx_ivalue *out, const char *what) {
  if (t->numel != 1)
    return fbx_kernel_error(ctx, "%s: a Tensor with %lld elements cannot be converted to a number", what,
                            (long long)t->numel);
  if (t->dtype == FBX_DTYPE_BOOL) {
    *out = fbx_iv_bool(fbx_tensor_get_i64(t, 0) != 0);
  } else if (fbx_dtype_is_floating(t->dtype)) {
    *out = fbx_iv_float(fbx_tensor_get_f64(t, 0));
  } else {
    *out = fbx_iv_int(fbx_tensor_get_i64(t, 0));
  }
  return NULL;
}

static fbx_status *parse_number(const fbx_kctx *ctx, const fbx_ivalue *s, bool want_int, fbx_ivalue *out) {
  const char *p = fbx_iv_str_data(s);
  char *end;
  errno = 0;
  if (want_int) {
    long long v = strtoll(p, &end, 10);
    while (*end == ' ') end++;
    if (end == p || *end || errno) return fbx_kernel_error(ctx, "invalid literal for int(): '%s'", p);
    *out = fbx_iv_int(v);
  } else {
    double v = strtod(p, &end);
    while (*end == ' ') end++;
    if (end == p || *end) return fbx_kernel_error(ctx, "could not convert string to float: '%s'", p);
    *out = fbx_iv_float(v);
  }
  return NULL;
}

/* Int/Float/Bool/ScalarImplicit/item. */
fbx_status *fbx_k_sc_convert(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const fbx_ivalue *a = &args[0];
  fbx_ivalue v;
  int id = ctx->op->id;
  if (a->kind == FBX_IV_TENSOR) {
    if (id == FBX_OP_ScalarImplicit && a->u.t->ndim != 0)
      return fbx_kernel_error(ctx, "expected a 0-dim Tensor, got %d dims (Scalar arguments only accept 0-dim tensors)",
                              a->u.t->ndim);
    if (id == FBX_OP_Bool_Tensor && a->u.t->numel != 1)
      return fbx_kernel_error(ctx, "Boolean value of Tensor with %s than one value is ambiguous",
                              a->u.t->numel > 1 ? "more" : "less");
    FBX_TRY(tensor_item(ctx, a->u.t, &v, fbx_sym_str(ctx->op->schema.name)));
  } else if (a->kind == FBX_IV_STR) {
    FBX_TRY(parse_number(ctx, a, ret_kind(ctx->op) == RK_INT, &v));
  } else {
    FBX_TRY(want_scalar(ctx, a, 0));
    v = *a;
  }
  switch (ret_kind(ctx->op)) {
    case RK_INT: outs[0] = fbx_iv_int(v.kind == FBX_IV_FLOAT ? float_to_int(v.u.f) : fbx_iv_to_int(&v)); break;
    case RK_FLOAT: outs[0] = fbx_iv_float(fbx_iv_to_double(&v)); break;
    case RK_BOOL: outs[0] = fbx_iv_bool(fbx_iv_to_double(&v) != 0 || (v.kind == FBX_IV_FLOAT && isnan(v.u.f))); break;
    default: outs[0] = v; break;
  }
  return NULL;
}

/* prim::NumToTensor: a 0-d tensor holding the number (int -> int64, float -> float64, bool -> bool). */
fbx_status *fbx_k_sc_num_to_tensor(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_scalar(ctx, &args[0], 0));
  fbx_tensor *t = NULL;
  const fbx_ivalue *a = &args[0];
  if (a->kind == FBX_IV_FLOAT) {
    FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 0, NULL, &a->u.f));
  } else if (a->kind == FBX_IV_BOOL) {
    uint8_t b = a->u.b;
    FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 0, NULL, &b));
  } else {
    FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 0, NULL, &a->u.i));
  }
  outs[0] = fbx_iv_tensor(t);
  return NULL;
}

/* prim::device, prim::dtype, prim::is_cuda. fusebox tensors live on the CPU. */
fbx_status *fbx_k_sc_tensor_query(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_TENSOR)
    return fbx_kernel_error(ctx, "expected a Tensor, got %s", fbx_iv_kind_name(args[0].kind));
  switch (ctx->op->id) {
    case FBX_OP_prim_dtype: outs[0] = fbx_iv_int(args[0].u.t->dtype); return NULL;
    case FBX_OP_prim_is_cuda: outs[0] = fbx_iv_bool(false); return NULL;
    default: return fbx_iv_device_new(&outs[0], "cpu");
  }
}

/* prim::type(Device): the device's type, "cpu" of "cpu", "cuda" of "cuda:1" */
fbx_status *fbx_k_sc_device_type(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_DEVICE)
    return fbx_kernel_error(ctx, "expected a Device, got %s", fbx_iv_kind_name(args[0].kind));
  const char *s = fbx_iv_str_data(&args[0]), *colon = strchr(s, ':');
  return fbx_iv_str_new(&outs[0], s, colon ? (size_t)(colon - s) : strlen(s));
}

/* aten::device(str) */
fbx_status *fbx_k_sc_device(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *s = fbx_iv_str_data(&args[0]);
  if (strcmp(s, "cpu") && strncmp(s, "cuda", 4))
    return fbx_kernel_error(ctx, "expected a device type like 'cpu' or 'cuda:0', got '%s'", s);
  return fbx_iv_device_new(&outs[0], s);
}

fbx_status *fbx_k_sc_identity(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_iv_retain(&args[0]);
  outs[0] = args[0];
  return NULL;
}

/* ---- lists, tuples, strings ---------------------------------------------------------------------- */

/* Python index normalization: negative counts from the end. */
static bool norm_index(int64_t *i, int64_t n) {
  if (*i < 0) *i += n;
  return *i >= 0 && *i < n;
}

static fbx_status *want_list(const fbx_kctx *ctx, const fbx_ivalue *v, int argi, bool tuple_ok) {
  if (v->kind == FBX_IV_LIST || (tuple_ok && v->kind == FBX_IV_TUPLE)) return NULL;
  return fbx_kernel_error(ctx, "argument '%s' must be a list, got %s", ctx->op->schema.args[argi].name,
                          fbx_iv_kind_name(v->kind));
}

/* __getitem__ on lists and strings, prim::TupleIndex. */
fbx_status *fbx_k_sc_getitem(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int64_t i = fbx_iv_to_int(&args[1]);
  if (args[0].kind == FBX_IV_STR) {
    if (!norm_index(&i, (int64_t)fbx_iv_str_len(&args[0]))) return fbx_kernel_error(ctx, "string index out of range");
    return fbx_iv_str_new(&outs[0], fbx_iv_str_data(&args[0]) + i, 1);
  }
  FBX_TRY(want_list(ctx, &args[0], 0, true));
  if (!norm_index(&i, args[0].u.l->n))
    return fbx_kernel_error(ctx, "%s index %lld out of range (length %d)",
                            args[0].kind == FBX_IV_TUPLE ? "tuple" : "list", (long long)fbx_iv_to_int(&args[1]),
                            args[0].u.l->n);
  outs[0] = args[0].u.l->items[i];
  fbx_iv_retain(&outs[0]);
  return NULL;
}

fbx_status *fbx_k_sc_len(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const fbx_ivalue *a = &args[0];
  switch (a->kind) {
    case FBX_IV_TENSOR:
      if (a->u.t->ndim == 0) return fbx_kernel_error(ctx, "len() of a 0-d tensor");
      outs[0] = fbx_iv_int(a->u.t->sizes[0]);
      return NULL;
    case FBX_IV_STR: outs[0] = fbx_iv_int((int64_t)fbx_iv_str_len(a)); return NULL;
    case FBX_IV_LIST:
    case FBX_IV_TUPLE: outs[0] = fbx_iv_int(a->u.l->n); return NULL;
    default: return fbx_kernel_error(ctx, "object of type %s has no len()", fbx_iv_kind_name(a->kind));
  }
}

/* aten::append mutates the list in place and returns it. */
fbx_status *fbx_k_sc_append(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  fbx_iv_retain(&args[1]);
  FBX_TRY(fbx_iv_list_push(&args[0], args[1]));
  fbx_iv_retain(&args[0]);
  outs[0] = args[0];
  return NULL;
}

fbx_status *fbx_k_sc_set_item(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  int64_t i = fbx_iv_to_int(&args[1]);
  if (!norm_index(&i, args[0].u.l->n)) return fbx_kernel_error(ctx, "list index out of range");
  fbx_ivalue *slot = &args[0].u.l->items[i];
  fbx_iv_retain(&args[2]);
  fbx_iv_release(slot);
  *slot = args[2];
  fbx_iv_retain(&args[0]);
  outs[0] = args[0];
  return NULL;
}

/* A new list holding src->items[idx[0..n)] (retained). */
static fbx_status *list_from(fbx_ivalue *out, const fbx_ivalue *src, const int64_t *idx, int64_t start, int64_t step,
                             int64_t n) {
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, (int)(n > 0 ? n : 0)));
  for (int64_t k = 0; k < n; k++) {
    const fbx_ivalue *e = &src->u.l->items[idx ? idx[k] : start + k * step];
    fbx_iv_retain(e);
    l.u.l->items[l.u.l->n++] = *e;
  }
  *out = l;
  return NULL;
}

fbx_status *fbx_k_sc_list_copy(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, true));
  return list_from(&outs[0], &args[0], NULL, 0, 1, args[0].u.l->n);
}

fbx_status *fbx_k_sc_list_concat(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  FBX_TRY(want_list(ctx, &args[1], 1, false));
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, args[0].u.l->n + args[1].u.l->n));
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < args[k].u.l->n; i++) {
      fbx_iv_retain(&args[k].u.l->items[i]);
      l.u.l->items[l.u.l->n++] = args[k].u.l->items[i];
    }
  outs[0] = l;
  return NULL;
}

fbx_status *fbx_k_sc_str_concat(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  size_t la = fbx_iv_str_len(&args[0]), lb = fbx_iv_str_len(&args[1]);
  char *buf = fbx_malloc(la + lb + 1);
  if (!buf) return fbx_status_nomem();
  memcpy(buf, fbx_iv_str_data(&args[0]), la);
  memcpy(buf + la, fbx_iv_str_data(&args[1]), lb);
  fbx_status *st = fbx_iv_str_new(&outs[0], buf, la + lb);
  fbx_free(buf);
  return st;
}

/* Python slice bounds (PySlice_AdjustIndices): returns the element count. */
static int64_t adjust_slice(int64_t len, const fbx_ivalue *s, const fbx_ivalue *e, int64_t step, int64_t *start) {
  int64_t lo, hi;
  if (step > 0) {
    lo = s->kind == FBX_IV_NONE ? 0 : fbx_iv_to_int(s);
    hi = e->kind == FBX_IV_NONE ? len : fbx_iv_to_int(e);
    if (lo < 0) lo = lo + len < 0 ? 0 : lo + len;
    if (lo > len) lo = len;
    if (hi < 0) hi = hi + len < 0 ? 0 : hi + len;
    if (hi > len) hi = len;
    *start = lo;
    return hi > lo ? (hi - lo + step - 1) / step : 0;
  }
  lo = s->kind == FBX_IV_NONE ? len - 1 : fbx_iv_to_int(s);
  hi = e->kind == FBX_IV_NONE ? -1 : fbx_iv_to_int(e);
  if (s->kind != FBX_IV_NONE) {
    if (lo < 0) lo = lo + len < 0 ? -1 : lo + len;
    if (lo >= len) lo = len - 1;
  }
  if (e->kind != FBX_IV_NONE) {
    if (hi < 0) hi = hi + len < 0 ? -1 : hi + len;
    if (hi >= len) hi = len - 1;
  }
  *start = lo;
  return lo > hi ? (lo - hi + (-step) - 1) / (-step) : 0;
}

/* aten::slice.t and aten::slice.str */
fbx_status *fbx_k_sc_slice(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int64_t step = fbx_iv_to_int(&args[3]), start;
  if (step == 0) return fbx_kernel_error(ctx, "slice step cannot be zero");
  if (args[0].kind == FBX_IV_STR) {
    int64_t len = (int64_t)fbx_iv_str_len(&args[0]);
    int64_t n = adjust_slice(len, &args[1], &args[2], step, &start);
    char *buf = fbx_malloc((size_t)n + 1);
    if (!buf) return fbx_status_nomem();
    for (int64_t k = 0; k < n; k++) buf[k] = fbx_iv_str_data(&args[0])[start + k * step];
    fbx_status *st = fbx_iv_str_new(&outs[0], buf, (size_t)n);
    fbx_free(buf);
    return st;
  }
  FBX_TRY(want_list(ctx, &args[0], 0, true));
  int64_t n = adjust_slice(args[0].u.l->n, &args[1], &args[2], step, &start);
  return list_from(&outs[0], &args[0], NULL, start, step, n);
}

fbx_status *fbx_k_sc_contains(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  bool found = false;
  for (int i = 0; i < args[0].u.l->n && !found; i++) found = iv_equal(&args[0].u.l->items[i], &args[1]);
  outs[0] = fbx_iv_bool(found);
  return NULL;
}

/* prim::min/max of two lists: Python's lexicographic comparison picks one. */
fbx_status *fbx_k_sc_list_minmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  FBX_TRY(want_list(ctx, &args[1], 1, false));
  const fbx_iv_list *a = args[0].u.l, *b = args[1].u.l;
  int sign = 0;
  for (int i = 0; i < a->n && i < b->n && !sign; i++) {
    double x = fbx_iv_to_double(&a->items[i]), y = fbx_iv_to_double(&b->items[i]);
    sign = x < y ? -1 : x > y;
  }
  if (!sign) sign = a->n < b->n ? -1 : a->n > b->n;
  bool want_max = !strcmp(fbx_sym_unqual(ctx->op->schema.name), "max");
  const fbx_ivalue *pick = (want_max ? sign >= 0 : sign <= 0) ? &args[0] : &args[1];
  return list_from(&outs[0], pick, NULL, 0, 1, pick->u.l->n);
}

/* min(list), max(list), sum(list). */
fbx_status *fbx_k_sc_list_reduce(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  FBX_TRY(want_list(ctx, &args[0], 0, false));
  const fbx_iv_list *l = args[0].u.l;
  const char *u = fbx_sym_unqual(ctx->op->schema.name);
  bool is_int = ret_kind(ctx->op) == RK_INT;
  if (!strcmp(u, "sum")) {
    int64_t si = 0;
    double sf = 0;
    for (int i = 0; i < l->n; i++) {
      si = wrap_add(si, fbx_iv_to_int(&l->items[i]));
      sf += fbx_iv_to_double(&l->items[i]);
    }
    outs[0] = is_int ? fbx_iv_int(si) : fbx_iv_float(sf);
    return NULL;
  }
  if (l->n == 0) return fbx_kernel_error(ctx, "%s() arg is an empty sequence", u);
  bool want_max = !strcmp(u, "max");
  fbx_ivalue best = l->items[0];
  for (int i = 1; i < l->n; i++) {
    double x = fbx_iv_to_double(&l->items[i]), y = fbx_iv_to_double(&best);
    if (want_max ? x > y : x < y) best = l->items[i];
  }
  outs[0] = is_int ? fbx_iv_int(fbx_iv_to_int(&best)) : fbx_iv_float(fbx_iv_to_double(&best));
  return NULL;
}

/* aten::__range_length(lo, hi, step) and aten::__derive_index(index, start, step):
 * the trip count and loop variable of `for i in range(lo, hi, step)`. */
fbx_status *fbx_k_sc_range(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int64_t a = fbx_iv_to_int(&args[0]), b = fbx_iv_to_int(&args[1]), step = fbx_iv_to_int(&args[2]);
  if (ctx->op->id == FBX_OP_derive_index) {
    outs[0] = fbx_iv_int(wrap_add(b, wrap_mul(a, step)));
    return NULL;
  }
  if (step == 0) return fbx_kernel_error(ctx, "range() arg 3 must not be zero");
  int64_t n;
  if (step > 0) n = a < b ? 1 + (b - 1 - a) / step : 0;
  else n = b < a ? 1 + (a - 1 - b) / (-step) : 0;
  outs[0] = fbx_iv_int(n);
  return NULL;
}

/* aten::str: Python's str() of a value. */
fbx_status *fbx_k_sc_str(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_strbuf b = {0};
  put_py(&b, &args[0], false);
  fbx_status *st = b.oom ? fbx_status_nomem() : fbx_iv_str_new(&outs[0], b.data ? b.data : "", b.len);
  fbx_strbuf_free(&b);
  return st;
}

/* aten::warn: prints once per call to stderr (PyTorch warns through Python's warnings module). */
fbx_status *fbx_k_sc_warn(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *msg = args[0].kind == FBX_IV_STR ? fbx_iv_str_data(&args[0]) : "";
  if (ctx->node && ctx->node->srcloc) fprintf(stderr, "%s: UserWarning: %s\n", ctx->node->srcloc, msg);
  else fprintf(stderr, "UserWarning: %s\n", msg);
  return NULL;
}

/* prim::Print(...): the values separated by spaces, like Python's print, to stdout. */
fbx_status *fbx_k_sc_print(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_strbuf b = {0};
  int n = varargs_count(ctx);
  for (int i = 0; i < n; i++) {
    if (i) fbx_strbuf_putc(&b, ' ');
    put_py(&b, &args[i], false);
  }
  fbx_strbuf_putc(&b, '\n');
  if (b.oom) {
    fbx_strbuf_free(&b);
    return fbx_status_nomem();
  }
  fputs(b.data, stdout);
  fflush(stdout);
  fbx_strbuf_free(&b);
  return NULL;
}

/* aten::format(str self, ...): "{}" fields replaced by str() of the arguments in order. */
fbx_status *fbx_k_sc_format(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "the format must be a str");
  const char *f = fbx_iv_str_data(&args[0]);
  int n = varargs_count(ctx), next = 1;
  fbx_strbuf b = {0};
  for (const char *p = f; *p; p++) {
    if (p[0] == '{' && p[1] == '}') {
      if (next >= n) {
        fbx_strbuf_free(&b);
        return fbx_kernel_error(ctx, "too few arguments for format string \"%s\"", f);
      }
      put_py(&b, &args[next++], false);
      p++;
    } else {
      fbx_strbuf_putc(&b, *p);
    }
  }
  fbx_status *st = b.oom ? fbx_status_nomem() : fbx_iv_str_new(&outs[0], b.data ? b.data : "", b.len);
  fbx_strbuf_free(&b);
  return st;
}
