/* Every row of the op table is classified for autodiff: it has a gradient
 * formula, or it is deliberately not differentiable for a reason this test
 * can check from the table itself:
 *   - no tensor result, or an integer/bool result (dtype rule BOOL, LONG,
 *     NONE): no gradient can flow out of it;
 *   - script code and control (FBX_OPCAT_SCALAR, FBX_OPCAT_CONTROL);
 *   - creation from sizes and scalars only (no Tensor argument);
 *   - an in-place row: the eager tape differentiates it as its functional
 *     twin (exec/grad.c: the name without the trailing '_', same overload),
 *     so the twin must have a formula (or, where no twin row exists, the
 *     in-place row itself);
 *   - the backward helper rows (aten::*_backward, fusebox::*): first order
 *     only;
 *   - the rows listed in `nondiff[]` below, each with its reason.
 * Any other row without a formula is reported (all of them, by name) and
 * fails the test, so "every differentiable op has a formula" is checked.
 * Listed rows that gain a formula, or stop existing, fail it too. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "ops/optable.h"

/* Floating-output rows that have no gradient (on purpose, except where marked NOT YET). */
static const struct {
  const char *id, *why;
} nondiff[] = {
    {"grad_sum_to_size", "backward helper (first-order autodiff only)"},
    {"digamma", "lgamma's derivative; its own (polygamma) would be second order"},
    {"all", "bool result (uint8 for uint8 input)"},
    {"all_dim", "bool result (uint8 for uint8 input)"},
    {"any", "bool result (uint8 for uint8 input)"},
    {"any_dim", "bool result (uint8 for uint8 input)"},
    {"view_dtype", "reinterprets bits; PyTorch does not differentiate it either"},
    {"searchsorted_Tensor", "integer result (int64, or int32 with out_int32)"},
    {"searchsorted_Scalar", "integer result (int64, or int32 with out_int32)"},
    {"bucketize_Tensor", "integer result (int64, or int32 with out_int32)"},
    {"bucketize_Scalar", "integer result (int64, or int32 with out_int32)"},
    {"native_multi_head_attention", "fused fast path, taken only when nothing requires grad (list_runtime.h)"},
    {"transformer_encoder_layer_fwd", "fused fast path, taken only when nothing requires grad (list_runtime.h)"},
    {"bincount", "counts (int64) or sums of weights: no gradient in PyTorch either"},
    {"_unique2", "unique values: PyTorch has no derivative for _unique2 either"},
    {"_unique", "unique values: PyTorch has no derivative for _unique either"},
    {"unique_consecutive", "unique values: PyTorch has no derivative for unique_consecutive either"},
    {"unique_dim", "unique slices: PyTorch has no derivative for unique_dim either"},
    {"unique_dim_consecutive", "unique slices: PyTorch has no derivative for unique_dim_consecutive either"},
    {"histc", "a histogram: no gradient in PyTorch either"},
    {"channel_shuffle", "PyTorch 1.13 has no derivative for channel_shuffle either (its grad_fn is NotImplemented)"},
    /* not on purpose: a gap (issue 16 added the forward kernels only) */
    {"_cast_Byte", "integral result"},
    {"_cast_Char", "integral result"},
    {"_cast_Short", "integral result"},
    {"_cast_Int", "integral result"},
    {"_cast_Long", "integral result"},
};

/* The *_backward rows of backward graphs (aten::*_backward, fusebox::*):
 * fusebox differentiates first order only (no double backward). */
static bool backward_helper(const fbx_op *op) {
  const char *name = fbx_sym_str(op->schema.name);
  size_t len = strlen(name);
  return fbx_sym_in_ns(op->schema.name, "fusebox") || (len > 9 && !strcmp(name + len - 9, "_backward"));
}

static const fbx_op *find_row(const char *id) {
  for (int i = 0; i < FBX_OP_COUNT; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)i);
    if (op && !strcmp(op->id_name, id)) return op;
  }
  return NULL;
}

/* The row named like op without the trailing '_', same overload. */
static const fbx_op *twin_of(const fbx_op *op) {
  const char *name = fbx_sym_str(op->schema.name);
  size_t len = strlen(name);
  if (len < 2 || name[len - 1] != '_') return NULL;
  for (int i = 0; i < FBX_OP_COUNT; i++) {
    const fbx_op *t = fbx_op_get((fbx_op_id)i);
    const char *tn = fbx_sym_str(t->schema.name);
    if (strlen(tn) == len - 1 && !strncmp(tn, name, len - 1) && !strcmp(t->schema.overload, op->schema.overload))
      return t;
  }
  return NULL;
}

static bool has_tensor_arg(const fbx_op *op) {
  for (int i = 0; i < op->schema.nargs; i++)
    if (op->schema.args[i].type == FBX_ARG_TENSOR) return true;
  return false;
}

static bool has_tensor_result(const fbx_op *op) {
  for (int i = 0; i < op->schema.nrets; i++)
    if (op->schema.rets[i].type == FBX_ARG_TENSOR) return true;
  return false;
}

/* NULL when the row is accounted for, else why it is not, for a row that
 * has a formula or not (a parameter so that the test can check the rules
 * on rows that do have one). */
static const char *unaccounted_if(const fbx_op *op, bool has_formula) {
  if (has_formula) return NULL;
  if (!has_tensor_result(op)) return NULL;
  if (op->dtype_rule == FBX_DT_BOOL || op->dtype_rule == FBX_DT_LONG || op->dtype_rule == FBX_DT_NONE) return NULL;
  if (op->category == FBX_OPCAT_SCALAR || op->category == FBX_OPCAT_CONTROL) return NULL;
  if (op->category == FBX_OPCAT_CREATION && !has_tensor_arg(op)) return NULL;
  if (op->flags & FBX_OPF_INPLACE) {
    const fbx_op *t = twin_of(op);
    if (t && fbx_grad_op_has_formula(t->id)) return NULL;
    return t ? "in-place row whose functional twin has no formula" : "in-place row without a twin or a formula";
  }
  if (backward_helper(op)) return NULL;
  for (size_t i = 0; i < sizeof nondiff / sizeof *nondiff; i++)
    if (!strcmp(nondiff[i].id, op->id_name)) return NULL;
  return "floating result, no formula";
}

static const char *unaccounted(const fbx_op *op) { return unaccounted_if(op, fbx_grad_op_has_formula(op->id)); }

START_TEST(every_row_classified) {
  ck_assert_ptr_null(fbx_op_table_init());
  int missing = 0, with = 0;
  for (int i = 0; i < FBX_OP_COUNT; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)i);
    ck_assert_ptr_nonnull(op);
    with += fbx_grad_op_has_formula(i);
    const char *why = unaccounted(op);
    if (why) {
      printf("no gradient: %-36s %s  (%s)\n", op->id_name, why, op->schema_text);
      missing++;
    }
  }
  printf("%d rows, %d with a gradient formula, %d unaccounted\n", (int)FBX_OP_COUNT, with, missing);
  fflush(stdout);
  ck_assert_int_eq(missing, 0);
}
END_TEST

/* The lists above stay honest: every entry names a row that exists and has
 * no formula. */
START_TEST(lists_current) {
  ck_assert_ptr_null(fbx_op_table_init());
  for (size_t i = 0; i < sizeof nondiff / sizeof *nondiff; i++) {
    const fbx_op *op = find_row(nondiff[i].id);
    ck_assert_msg(op != NULL, "nondiff[] names %s, which is not a row", nondiff[i].id);
    ck_assert_msg(!fbx_grad_op_has_formula(op->id), "%s has a formula now: drop it from nondiff[]", nondiff[i].id);
  }
}
END_TEST

/* The walk can fail: a row with a floating result and no formula would
 * be reported (checked on rows the rules do not excuse, as if they had no
 * formula: every row has its formula or excuse now). */
START_TEST(walk_detects_missing) {
  ck_assert_ptr_null(fbx_op_table_init());
  const fbx_op *add = find_row("add_Tensor");
  ck_assert_ptr_nonnull(add);
  ck_assert(fbx_grad_op_has_formula(add->id));
  ck_assert(!fbx_grad_op_has_formula(-1));
  ck_assert(!fbx_grad_op_has_formula(FBX_OP_COUNT));
  const fbx_op *cdist = find_row("cdist");
  ck_assert_ptr_nonnull(cdist);
  ck_assert_ptr_null(unaccounted(cdist));
  ck_assert_str_eq(unaccounted_if(cdist, false), "floating result, no formula");
  ck_assert_str_eq(unaccounted_if(add, false), "floating result, no formula");
  ck_assert_ptr_null(unaccounted_if(find_row("digamma"), false));
  ck_assert(twin_of(find_row("add__Tensor")) == add);
  ck_assert_ptr_null(twin_of(find_row("zero_")));
  ck_assert(backward_helper(find_row("select_backward")));
  ck_assert(!backward_helper(add));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("grad_table");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, every_row_classified);
  tcase_add_test(tc, lists_current);
  tcase_add_test(tc, walk_detects_missing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
