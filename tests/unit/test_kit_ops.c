/* The kit's op table and dtype helpers (sdk/kit, <fusebox/kit/kit.h>):
 *   - every pointwise row of core's op table (core/ops/list_pointwise.h) has
 *     a kit row with its overload name, or a stated reason below, so the two
 *     tables cannot drift apart; every kit row names an overload core has;
 *   - fbxk_promote equals core's torch.promote_types for every pair;
 *     fbxk_result_type follows PyTorch's wrapped-number rules on cases from
 *     PyTorch's documentation (torch.result_type);
 *   - half conversions equal the compiler's _Float16 on every half and a
 *     sweep of floats; bfloat16 rounding equals an independent round to
 *     nearest even;
 *   - the printer: indentation, dialect spellings, literals, out of memory;
 *   - fbxk_op_print substitutes a template's $-variables. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/kit/kit.h>

#include "ops/list_pointwise.h"
#include "ops/promote.h"

/* core rows not in the kit, and why */
static const struct {
  const char *name, *why;
} no_kit_row[] = {
    {"aten::lgamma", "no branch-free form yet; the reference's lgamma is a multi-range loop (bench: lgamma(mixed))"},
    {"aten::logit", "takes an optional eps (clamp before the log): not a fused op in PyTorch's fusers"},
    {"aten::round.decimals", "decimals scales by 10^d and rounds: not fused by PyTorch's fusers"},
    {"aten::nan_to_num", "optional posinf/neginf default to the dtype's extremes: needs per-dtype constants"},
    {"aten::__lshift__.Tensor", "shifts: PyTorch's out-of-range shift semantics not written as a template yet"},
    {"aten::__lshift__.Scalar", "shifts (as above)"},
    {"aten::__rshift__.Tensor", "shifts (as above)"},
    {"aten::__rshift__.Scalar", "shifts (as above)"},
    {"aten::to.device", "device moves are not pointwise math"},
    {"aten::to.other", "dtype from another tensor: a fuser handles it as to.dtype once types are known"},
    {"aten::to.dtype_layout", "layout/device arguments: not fused"},
    {"aten::to.prim_Device", "device moves are not pointwise math"},
    {"aten::to.prim_dtype", "the TorchScript-internal overload: not emitted in profiled graphs"},
    {"aten::to.prim_other", "no-op overload (copy flags only)"},
    {"aten::type_as", "dtype from another tensor (as to.other)"},
    /* rows added to core after the kit's table (ops-pointwise branch): not fused until the kit has them */
    {"aten::clip", "added to core's table later; no kit template yet"},
    {"aten::clip.Tensor", "added to core's table later; no kit template yet"},
    {"aten::true_divide.Tensor", "added to core's table later; no kit template yet"},
    {"aten::true_divide.Scalar", "added to core's table later; no kit template yet"},
    {"aten::absolute", "added to core's table later; no kit template yet"},
    {"aten::fix", "added to core's table later; no kit template yet"},
    {"aten::special_expit", "added to core's table later; no kit template yet"},
    {"aten::asinh", "added to core's table later; no kit template yet"},
    {"aten::acosh", "added to core's table later; no kit template yet"},
    {"aten::atanh", "added to core's table later; no kit template yet"},
    {"aten::deg2rad", "added to core's table later; no kit template yet"},
    {"aten::rad2deg", "added to core's table later; no kit template yet"},
    {"aten::sinc", "added to core's table later; no kit template yet"},
    {"aten::erfinv", "added to core's table later; no kit template yet"},
    {"aten::signbit", "added to core's table later; no kit template yet"},
    {"aten::isposinf", "added to core's table later; no kit template yet"},
    {"aten::isneginf", "added to core's table later; no kit template yet"},
    {"aten::copysign.Tensor", "added to core's table later; no kit template yet"},
    {"aten::copysign.Scalar", "added to core's table later; no kit template yet"},
    {"aten::fmax", "added to core's table later; no kit template yet"},
    {"aten::fmin", "added to core's table later; no kit template yet"},
    {"aten::xlogy.Tensor", "added to core's table later; no kit template yet"},
    {"aten::xlogy.Scalar_Other", "added to core's table later; no kit template yet"},
    {"aten::xlogy.Scalar_Self", "added to core's table later; no kit template yet"},
    {"aten::float_power.Tensor_Tensor", "added to core's table later; no kit template yet"},
    {"aten::float_power.Tensor_Scalar", "added to core's table later; no kit template yet"},
    {"aten::float_power.Scalar", "added to core's table later; no kit template yet"},
    {"aten::heaviside", "added to core's table later; no kit template yet"},
    {"aten::nextafter", "added to core's table later; no kit template yet"},
    {"aten::gcd", "added to core's table later; no kit template yet"},
    {"aten::lcm", "added to core's table later; no kit template yet"},
};

static int core_has(const char *name) {
#define CORE_NAME_(id, schema, ...) schema,
  static const char *const core[] = {FBX_OPS_POINTWISE(CORE_NAME_)};
#undef CORE_NAME_
  size_t n = strlen(name);
  for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
    if (!strncmp(core[i], name, n) && core[i][n] == '(') return 1;
  return 0;
}

static int kit_has(const char *qual) {
  for (int op = 0; op < FBXK_NOPS; op++)
    if (!strcmp(fbxk_op_name(op), qual)) return 1;
  return 0;
}

START_TEST(every_core_pointwise_row_has_a_kit_row_or_a_reason) {
#define CORE_SCHEMA_(id, schema, ...) schema,
  static const char *const core[] = {FBX_OPS_POINTWISE(CORE_SCHEMA_)};
#undef CORE_SCHEMA_
  int missing = 0, reasons_used = 0;
  for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
    char qual[128];
    size_t len = strcspn(core[i], "(");
    ck_assert_uint_lt(len, sizeof qual);
    memcpy(qual, core[i], len);
    qual[len] = 0;
    if (kit_has(qual)) continue;
    int why = 0;
    for (size_t r = 0; r < sizeof no_kit_row / sizeof no_kit_row[0]; r++)
      if (!strcmp(no_kit_row[r].name, qual)) why = 1;
    if (!why) {
      printf("core pointwise row %s has no kit row (sdk/include/fusebox/kit/kit_oplist.h) and no reason here\n", qual);
      missing++;
    }
    reasons_used += why;
  }
  ck_assert_int_eq(missing, 0);
  /* a reason for a row the kit has (or core lost) is stale */
  for (size_t r = 0; r < sizeof no_kit_row / sizeof no_kit_row[0]; r++) {
    ck_assert_msg(!kit_has(no_kit_row[r].name), "%s has a kit row now: drop its reason", no_kit_row[r].name);
    ck_assert_msg(core_has(no_kit_row[r].name), "%s is not a core pointwise row", no_kit_row[r].name);
  }
  ck_assert_int_eq(reasons_used, (int)(sizeof no_kit_row / sizeof no_kit_row[0]));
}
END_TEST

START_TEST(every_kit_row_is_a_core_overload) {
  for (int op = 0; op < FBXK_NOPS; op++) {
    ck_assert_msg(core_has(fbxk_op_name(op)), "kit row %s: %s is not in core's pointwise table", fbxk_op_id(op),
                  fbxk_op_name(op));
    int n = fbxk_op_noperands(op) + fbxk_op_nparams(op);
    ck_assert_int_ge(fbxk_op_noperands(op), 1);
    ck_assert_int_le(n, FBXK_MAX_OP_ARGS);
    ck_assert_msg(fbxk_op_template(op, FBXK_F32) || fbxk_op_template(op, FBXK_I64) || fbxk_op_template(op, FBXK_BOOL),
                  "%s has no template", fbxk_op_id(op));
  }
}
END_TEST

static const int all_dtypes[] = {FBXK_U8, FBXK_I8, FBXK_I16, FBXK_I32, FBXK_I64, FBXK_F16,
                                 FBXK_F32, FBXK_F64, FBXK_BOOL, FBXK_BF16};
#define NDT ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

START_TEST(promote_equals_core) {
  for (int i = 0; i < NDT; i++)
    for (int j = 0; j < NDT; j++) {
      int a = all_dtypes[i], b = all_dtypes[j];
      ck_assert_msg(fbxk_promote(a, b) == (int)fbx_promote_types((fbx_dtype)a, (fbx_dtype)b), "promote(%s, %s)",
                    fbxk_dtype_name(a), fbxk_dtype_name(b));
    }
  for (int i = 0; i < NDT; i++) ck_assert_int_eq(fbxk_dtype_size(all_dtypes[i]), (int)fbx_dtype_size(all_dtypes[i]));
  ck_assert_int_eq(fbxk_dtype_size(9), 0);
  ck_assert(!fbxk_valid_dtype(9) && !fbxk_valid_dtype(-1));
}
END_TEST

/* torch.result_type examples (PyTorch's type promotion docs and behaviour) */
START_TEST(result_type_wrapped_numbers) {
  const int T = FBXK_PRIO_TENSOR, Z = FBXK_PRIO_ZERODIM, S = FBXK_PRIO_SCALAR;
  struct {
    fbxk_typed a, b;
    int want;
  } cases[] = {
      {{FBXK_I32, T}, {FBXK_F64, S}, FBXK_F32},  /* int tensor + 5.5 -> default float */
      {{FBXK_F16, T}, {FBXK_F64, S}, FBXK_F16},  /* half tensor + 5.5 -> half */
      {{FBXK_F16, T}, {FBXK_F64, Z}, FBXK_F16},  /* half tensor + double 0-d -> half */
      {{FBXK_I32, T}, {FBXK_F64, Z}, FBXK_F64},  /* 0-d of a higher category counts */
      {{FBXK_I8, T}, {FBXK_I64, Z}, FBXK_I8},    /* same category: the tensor wins */
      {{FBXK_U8, T}, {FBXK_I64, S}, FBXK_U8},    /* uint8 + 1 stays uint8 */
      {{FBXK_BOOL, T}, {FBXK_I64, S}, FBXK_I64}, /* bool + 1 -> int64 */
      {{FBXK_BOOL, T}, {FBXK_BOOL, S}, FBXK_BOOL},
      {{FBXK_I64, Z}, {FBXK_F64, S}, FBXK_F32},  /* 0-d int + 1.5 -> default float */
      {{FBXK_F64, S}, {FBXK_I64, S}, FBXK_F32},  /* scalars only: the default dtype */
      {{FBXK_U8, T}, {FBXK_I8, T}, FBXK_I16},
      {{FBXK_F16, T}, {FBXK_BF16, T}, FBXK_F32},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fbxk_typed v[2] = {cases[i].a, cases[i].b};
    ck_assert_msg(fbxk_result_type(v, 2) == cases[i].want, "case %zu: %s, want %s", i,
                  fbxk_dtype_name(fbxk_result_type(v, 2)), fbxk_dtype_name(cases[i].want));
  }
  ck_assert_int_eq(fbxk_result_type(NULL, 0), -1);
  fbxk_typed bad = {-1, T};
  ck_assert_int_eq(fbxk_result_type(&bad, 1), -1);
}
END_TEST

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

START_TEST(half_conversions_equal_float16) {
  for (uint32_t h = 0; h < 65536; h++) {
    _Float16 x;
    uint16_t hb = (uint16_t)h;
    memcpy(&x, &hb, 2);
    float want = (float)x, got = fbxk_h2f(hb);
    ck_assert_msg(isnan(want) ? isnan(got) : f2u(got) == f2u(want), "h2f(%#x) = %a, want %a", h, got, want);
  }
  uint32_t s = 12345;
  for (int i = 0; i < (1 << 20); i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    float f = u2f(s);
    if (i < 8) f = (float[]){0.0f, -0.0f, INFINITY, -INFINITY, 65504.0f, 65520.0f, 6e-8f, 2.98e-8f}[i];
    _Float16 want = (_Float16)f;
    uint16_t wb, got = fbxk_f2h(f);
    memcpy(&wb, &want, 2);
    if (isnan(f)) ck_assert_msg((got & 0x7c00) == 0x7c00 && (got & 0x3ff), "f2h(NaN %a) = %#x", f, got);
    else ck_assert_msg(got == wb, "f2h(%a) = %#x, want %#x", f, got, wb);
  }
}
END_TEST

/* round to nearest even at bit 16, written independently of the kit's */
static uint16_t bf16_rne(float f) {
  uint32_t u = f2u(f), lo = u & 0xffff0000u;
  if (isnan(f)) return (uint16_t)(lo >> 16);
  double d = f, a = u2f(lo), b = u2f(lo + 0x10000u); /* toward zero, away from zero */
  if ((lo & 0x7f800000u) == 0x7f800000u) return (uint16_t)(lo >> 16);
  if (((lo + 0x10000u) & 0x7fffffffu) == 0x7f800000u) b = copysign(ldexp(1.0, 128), f); /* 2^128 for rounding */
  double da = fabs(d - a), db = fabs(b - d);
  if (da < db || (da == db && !((lo >> 16) & 1))) return (uint16_t)(lo >> 16);
  return (uint16_t)((lo >> 16) + 1);
}

START_TEST(bfloat16_conversions) {
  uint32_t s = 777;
  for (int i = 0; i < (1 << 20); i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    float f = u2f(s);
    uint16_t got = fbxk_f2b(f);
    if (isnan(f)) {
      ck_assert(isnan(fbxk_b2f(got)));
      continue;
    }
    ck_assert_msg(got == bf16_rne(f), "f2b(%a) = %#x, want %#x", f, got, bf16_rne(f));
    ck_assert(f2u(fbxk_b2f(got)) == (uint32_t)got << 16);
    ck_assert(f2u(fbxk_rb(f)) == (uint32_t)got << 16);
  }
}
END_TEST

START_TEST(printer_dialects) {
  const fbxk_param ps[] = {{"x", FBXK_F32, FBXK_PARAM_IN}, {"y", FBXK_F16, FBXK_PARAM_OUT}, {"n", FBXK_I64, FBXK_PARAM_VALUE}};
  const char *want_sig[3] = {"void k(const float *restrict x, uint16_t *restrict y, int64_t n) {\n",
                             "extern \"C\" __global__ void k(const float *__restrict__ x, uint16_t *__restrict__ y, int64_t n) {\n",
                             "__kernel void k(__global const float *restrict x, __global ushort *restrict y, long n) {\n"};
  const char *want_id[3] = {"0", "((int64_t)blockIdx.y * blockDim.y + threadIdx.y)", "((int64_t)get_global_id(1))"};
  for (int d = 0; d < FBXK_NDIALECTS; d++) {
    fbxk_printer p;
    fbxk_p_init(&p, (fbxk_dialect)d);
    fbxk_p_kernel_begin(&p, "k", ps, 3);
    fbxk_p_line(&p, "const int64_t i = %s;", fbxk_p_global_id(&p, 1));
    fbxk_p_for(&p, NULL, "j", "0", "n", "1");
    fbxk_p_barrier(&p);
    fbxk_p_close(&p);
    fbxk_p_close(&p);
    char *s = fbxk_p_take(&p);
    ck_assert_ptr_nonnull(s);
    ck_assert_msg(!strncmp(s, want_sig[d], strlen(want_sig[d])), "%s:\n%s", fbxk_dialect_get((fbxk_dialect)d)->name, s);
    char line[256];
    snprintf(line, sizeof line, "  const int64_t i = %s;\n", want_id[d]);
    ck_assert_msg(strstr(s, line), "%s", s);
    ck_assert_msg(strstr(s, d == FBXK_OPENCL ? "  for (long j = 0; j < n; j++) {\n" : "  for (int64_t j = 0; j < n; j++) {\n"),
                  "%s", s);
    if (d == FBXK_CUDA) ck_assert(strstr(s, "    __syncthreads();\n  }\n}\n"));
    if (d == FBXK_OPENCL) ck_assert(strstr(s, "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n}\n"));
    if (d == FBXK_C) ck_assert_str_eq(s + strlen(s) - 6, "  }\n}\n");
    fbxk_free(s);
  }
  fbxk_buf b = {0};
  fbxk_print_float(&b, NAN, FBXK_F64, FBXK_C);
  fbxk_puts(&b, " ");
  fbxk_print_float(&b, -INFINITY, FBXK_F64, FBXK_CUDA);
  fbxk_puts(&b, " ");
  fbxk_print_float(&b, 0.1, FBXK_F32, FBXK_OPENCL);
  fbxk_puts(&b, " ");
  fbxk_print_int(&b, INT64_MIN);
  fbxk_puts(&b, " ");
  fbxk_print_cast(&b, FBXK_I8, "x", FBXK_OPENCL);
  char *s = fbxk_take(&b);
  ck_assert_str_eq(s, "FBXK_NAN (-FBXK_INF) 0x1.99999ap-4f (-9223372036854775807LL - 1) (long)(char)(x)");
  fbxk_free(s);
}
END_TEST

static int fail_after;
static void *failing_alloc(size_t n) { return fail_after-- > 0 ? malloc(n) : NULL; }

START_TEST(buffer_out_of_memory) {
  fbxk_set_allocator(failing_alloc, free);
  for (int k = 0; k < 4; k++) {
    fail_after = k;
    fbxk_buf b = {0};
    for (int i = 0; i < 200; i++) fbxk_printf(&b, "line %d of a long text %0300d\n", i, i);
    ck_assert(b.oom);
    ck_assert_ptr_null(fbxk_take(&b));
    ck_assert_ptr_null(b.data);
  }
  fbxk_set_allocator(NULL, NULL);
  fbxk_buf b = {0};
  fbxk_printf(&b, "%0300d", 7);
  char *s = fbxk_take(&b);
  ck_assert_uint_eq(strlen(s), 300);
  fbxk_free(s);
}
END_TEST

START_TEST(op_print_substitutes) {
  const char *args[4] = {"x", "y", "z", "w"};
  struct {
    int op, cd;
    fbxk_dialect d;
    const char *want;
  } cases[] = {
      {FBXK_OP_SIGMOID, FBXK_F32, FBXK_C, "((float)1 / ((float)1 + fbxk_vexpf(-(x))))"},
      {FBXK_OP_SIGMOID, FBXK_F64, FBXK_C, "((double)1 / ((double)1 + exp(-(x))))"},
      {FBXK_OP_NEG, FBXK_I32, FBXK_OPENCL, "((int64_t)(0ULL - (uint64_t)(x)))"},
      {FBXK_OP_FLOOR_DIVIDE, FBXK_F16, FBXK_CUDA, "fbxk_floordivf((x), (y))"},
      {FBXK_OP_ADD_T_ALPHA, FBXK_F32, FBXK_C, "((x) + (z) * (y))"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fbxk_buf b = {0};
    ck_assert_int_eq(fbxk_op_print(&b, cases[i].op, cases[i].cd, cases[i].d, args), 0);
    char *s = fbxk_take(&b);
    ck_assert_str_eq(s, cases[i].want);
    fbxk_free(s);
  }
  fbxk_buf b = {0};
  ck_assert_int_eq(fbxk_op_print(&b, FBXK_OP_DIV_T, FBXK_I64, FBXK_C, args), -1); /* no integer true division */
  ck_assert_int_eq(fbxk_op_print(&b, FBXK_NOPS, FBXK_F32, FBXK_C, args), -1);
  ck_assert_ptr_null(b.data);
  fbxk_typed t[2] = {{FBXK_I32, FBXK_PRIO_TENSOR}, {FBXK_F64, FBXK_PRIO_SCALAR}};
  int cd, rd;
  ck_assert_int_eq(fbxk_op_dtypes(FBXK_OP_LT_S, t, 2, &cd, &rd), 0);
  ck_assert(cd == FBXK_F32 && rd == FBXK_BOOL);
  ck_assert_int_eq(fbxk_op_dtypes(FBXK_OP_SQRT, t, 1, &cd, &rd), 0);
  ck_assert(cd == FBXK_F32 && rd == FBXK_F32);
  ck_assert_int_eq(fbxk_op_dtypes(FBXK_OP_TO_DTYPE, t, 1, &cd, &rd), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kit_ops");
  TCase *tc = tcase_create("kit_ops");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_core_pointwise_row_has_a_kit_row_or_a_reason);
  tcase_add_test(tc, every_kit_row_is_a_core_overload);
  tcase_add_test(tc, promote_equals_core);
  tcase_add_test(tc, result_type_wrapped_numbers);
  tcase_add_test(tc, half_conversions_equal_float16);
  tcase_add_test(tc, bfloat16_conversions);
  tcase_add_test(tc, printer_dialects);
  tcase_add_test(tc, buffer_out_of_memory);
  tcase_add_test(tc, op_print_substitutes);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
