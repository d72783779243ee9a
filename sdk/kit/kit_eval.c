/* fbxk_op_eval: the op templates compiled as scalar C functions
 * (kit_eval_gen.inc, generated at build time by kit_gen from the same rows
 * the kernels are printed from), over the compiled prelude. */
#include <math.h>
#include <stdint.h>

#include <fusebox/kit/kit_math.h>
#include <fusebox/kit/kit_ops.h>

#define FBXK_INF __builtin_inf()
#define FBXK_NAN __builtin_nan("")

typedef int (*ev_fn)(const fbxk_scalar *a, fbxk_scalar *r);

/* classes of compute dtypes: float (float32, bfloat16), float64, integral,
 * bool, and float16 (computed in float; its own templates: FBXK_OPS_F16) */
enum { EV_F, EV_D, EV_I, EV_B, EV_H, EV_NCLASSES };

#include "kit_eval_gen.inc"

static int ev_class(int cd) {
  if (cd == FBXK_F64) return EV_D;
  if (cd == FBXK_F16) return EV_H;
  if (fbxk_is_float(cd)) return EV_F;
  if (cd == FBXK_BOOL) return EV_B;
  if (fbxk_is_int(cd)) return EV_I;
  return -1;
}

fbxk_scalar fbxk_scalar_cast(int from, int to, fbxk_scalar x) {
  fbxk_scalar r = {0, 0};
  int ff = fbxk_is_float(from);
  switch (to) {
    case FBXK_F32: r.f = ff ? (float)x.f : (float)x.i; break;
    case FBXK_F16: r.f = fbxk_rh(ff ? (float)x.f : (float)x.i); break;
    case FBXK_BF16: r.f = fbxk_rb(ff ? (float)x.f : (float)x.i); break;
    case FBXK_F64: r.f = ff ? x.f : (double)x.i; break;
    case FBXK_I64: r.i = ff ? (int64_t)x.f : x.i; break;
    case FBXK_BOOL: r.i = ff ? x.f != 0 : x.i != 0; break;
    case FBXK_U8: r.i = ff ? (int64_t)(uint8_t)x.f : (int64_t)(uint8_t)x.i; break;
    case FBXK_I8: r.i = ff ? (int64_t)(int8_t)x.f : (int64_t)(int8_t)x.i; break;
    case FBXK_I16: r.i = ff ? (int64_t)(int16_t)x.f : (int64_t)(int16_t)x.i; break;
    case FBXK_I32: r.i = ff ? (int64_t)(int32_t)x.f : (int64_t)(int32_t)x.i; break;
    default: break;
  }
  return r;
}

int fbxk_op_eval(int op, int cd, int rd, const fbxk_scalar *args, fbxk_scalar *result) {
  int c = ev_class(cd);
  if (op < 0 || op >= FBXK_NOPS || c < 0 || !fbxk_valid_dtype(rd) || !ev_table[op][c]) return -1;
  fbxk_scalar raw = {0, 0};
  ev_table[op][c](args, &raw);
  int rawdt = fbxk_op_is_bool_valued(op) ? FBXK_BOOL : cd;
  /* the raw value is in the class's representation; round it to cd first
   * (half/bfloat16: once per op), as the kernel does */
  int from = rawdt == FBXK_BOOL || c == EV_I || c == EV_B ? FBXK_I64 : c == EV_D ? FBXK_F64 : FBXK_F32;
  fbxk_scalar x = fbxk_scalar_cast(from, rawdt, raw);
  *result = rawdt == rd ? x : fbxk_scalar_cast(rawdt, rd, x);
  return 0;
}
