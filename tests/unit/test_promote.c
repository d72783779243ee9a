/* Type promotion (ops/promote.h) against PyTorch 1.13.
 *
 * The tables below were printed by /usr/bin/python3 (Debian python3-torch
 * 1.13) with torch.promote_types over every dtype pair, and
 * torch.result_type(a, b) for the listed operands, e.g.
 *   torch.result_type(torch.zeros(2, dtype=torch.int32), 2.5)   # float32
 *   torch.result_type(torch.zeros(2, dtype=torch.uint8), torch.tensor(0, dtype=torch.int8))  # uint8
 */
#include <check.h>
#include <stdlib.h>

#include "ops/kutil.h"
#include "ops/promote.h"
#include <fusebox/tensor.h>

#define X(d) FBX_DTYPE_##d
static const fbx_dtype ORDER[10] = {X(UINT8), X(INT8),    X(INT16), X(INT32), X(INT64),
                                    X(FLOAT16), X(FLOAT32), X(FLOAT64), X(BOOL), X(BFLOAT16)};
/* torch.promote_types(ORDER[i], ORDER[j]) */
static const fbx_dtype PROMOTE[10][10] = {
    {X(UINT8), X(INT16), X(INT16), X(INT32), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(UINT8), X(BFLOAT16)},
    {X(INT16), X(INT8), X(INT16), X(INT32), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(INT8), X(BFLOAT16)},
    {X(INT16), X(INT16), X(INT16), X(INT32), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(INT16), X(BFLOAT16)},
    {X(INT32), X(INT32), X(INT32), X(INT32), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(INT32), X(BFLOAT16)},
    {X(INT64), X(INT64), X(INT64), X(INT64), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(INT64), X(BFLOAT16)},
    {X(FLOAT16), X(FLOAT16), X(FLOAT16), X(FLOAT16), X(FLOAT16), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(FLOAT16),
     X(FLOAT32)},
    {X(FLOAT32), X(FLOAT32), X(FLOAT32), X(FLOAT32), X(FLOAT32), X(FLOAT32), X(FLOAT32), X(FLOAT64), X(FLOAT32),
     X(FLOAT32)},
    {X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64), X(FLOAT64),
     X(FLOAT64)},
    {X(UINT8), X(INT8), X(INT16), X(INT32), X(INT64), X(FLOAT16), X(FLOAT32), X(FLOAT64), X(BOOL), X(BFLOAT16)},
    {X(BFLOAT16), X(BFLOAT16), X(BFLOAT16), X(BFLOAT16), X(BFLOAT16), X(FLOAT32), X(FLOAT32), X(FLOAT64),
     X(BFLOAT16), X(BFLOAT16)},
};

START_TEST(promote_types_table) {
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 10; j++)
      ck_assert_msg(fbx_promote_types(ORDER[i], ORDER[j]) == PROMOTE[i][j], "promote(%s, %s) = %s, want %s",
                    fbx_dtype_name(ORDER[i]), fbx_dtype_name(ORDER[j]),
                    fbx_dtype_name(fbx_promote_types(ORDER[i], ORDER[j])), fbx_dtype_name(PROMOTE[i][j]));
  ck_assert_int_eq(fbx_promote_types(FBX_DTYPE_UNDEFINED, FBX_DTYPE_INT8), FBX_DTYPE_INT8);
}
END_TEST

/* An operand: a tensor of dtype d with nd dims (1 or 0), or a Python scalar. */
typedef struct opnd {
  char kind; /* 'T' tensor, 'i' int, 'f' float, 'b' bool, 'n' None */
  fbx_dtype d;
  int nd;
} opnd;

static fbx_ivalue make(opnd o) {
  switch (o.kind) {
    case 'T': {
      fbx_tensor *t = NULL;
      int64_t sz[1] = {2};
      ck_assert_ptr_null(fbx_tensor_zeros(&t, o.d, o.nd, sz));
      return fbx_iv_tensor(t);
    }
    case 'i': return fbx_iv_int(1);
    case 'f': return fbx_iv_float(2.5);
    case 'b': return fbx_iv_bool(true);
    default: return fbx_iv_none();
  }
}

#define T1(d) {'T', X(d), 1}
#define T0(d) {'T', X(d), 0}
#define SI {'i', 0, 0}
#define SF {'f', 0, 0}
#define SB {'b', 0, 0}
#define NONE {'n', 0, 0}

/* torch.result_type(a, b) */
static const struct {
  opnd a, b;
  fbx_dtype want;
} RESULT[] = {
    {T1(FLOAT32), SF, X(FLOAT32)}, {T1(INT32), SF, X(FLOAT32)},   {T1(INT32), T0(INT64), X(INT32)},
    {T1(UINT8), T1(INT8), X(INT16)}, {T1(UINT8), T0(INT8), X(UINT8)}, {T1(BOOL), SI, X(INT64)},
    {T1(BOOL), SB, X(BOOL)},         {T1(UINT8), SB, X(UINT8)},     {T1(INT32), T0(FLOAT64), X(FLOAT64)},
    {T1(FLOAT16), T0(FLOAT64), X(FLOAT16)}, {T1(FLOAT16), SF, X(FLOAT16)}, {T0(INT64), SF, X(FLOAT32)},
    {T0(INT32), T0(INT64), X(INT64)}, {SI, SF, X(FLOAT32)},        {SI, SB, X(INT64)},
    {T0(BOOL), T1(INT8), X(INT8)},   {T1(BOOL), T0(FLOAT16), X(FLOAT16)}, {T1(BFLOAT16), T1(FLOAT16), X(FLOAT32)},
    {T1(INT8), NONE, X(INT8)},
};

START_TEST(result_type_cases) {
  for (size_t k = 0; k < sizeof RESULT / sizeof RESULT[0]; k++) {
    fbx_ivalue a = make(RESULT[k].a), b = make(RESULT[k].b);
    const fbx_ivalue *v[2] = {&a, &b};
    fbx_dtype got = fbx_result_type(v, 2);
    ck_assert_msg(got == RESULT[k].want, "case %zu: %s, want %s", k, fbx_dtype_name(got),
                  fbx_dtype_name(RESULT[k].want));
    const fbx_ivalue *r[2] = {&b, &a}; /* symmetric */
    ck_assert_int_eq(fbx_result_type(r, 2), got);
    fbx_iv_release(&a);
    fbx_iv_release(&b);
  }
  /* three operands: int8 tensor, bool 0-d, a float -> float32 (the float's category wins) */
  fbx_ivalue a = make((opnd)T1(INT8)), b = make((opnd)T0(BOOL)), c = make((opnd)SF);
  const fbx_ivalue *v[3] = {&a, &b, &c};
  ck_assert_int_eq(fbx_result_type(v, 3), FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(fbx_result_type(v, 0), FBX_DTYPE_UNDEFINED);
  fbx_iv_release(&a);
  fbx_iv_release(&b);
}
END_TEST

START_TEST(helpers) {
  fbx_ivalue i = fbx_iv_int(3), f = fbx_iv_float(1), b = fbx_iv_bool(false), n = fbx_iv_none();
  ck_assert_int_eq(fbx_scalar_default_dtype(&i), FBX_DTYPE_INT64);
  ck_assert_int_eq(fbx_scalar_default_dtype(&f), FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(fbx_scalar_default_dtype(&b), FBX_DTYPE_BOOL);
  ck_assert_int_eq(fbx_scalar_default_dtype(&n), FBX_DTYPE_UNDEFINED);
  ck_assert_int_eq(fbx_to_float_dtype(FBX_DTYPE_INT32), FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(fbx_to_float_dtype(FBX_DTYPE_BOOL), FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(fbx_to_float_dtype(FBX_DTYPE_FLOAT16), FBX_DTYPE_FLOAT16);
  ck_assert_int_eq(fbx_to_float_dtype(FBX_DTYPE_FLOAT64), FBX_DTYPE_FLOAT64);
}
END_TEST

int main(void) {
  Suite *s = suite_create("promote");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, promote_types_table);
  tcase_add_test(tc, result_type_cases);
  tcase_add_test(tc, helpers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
