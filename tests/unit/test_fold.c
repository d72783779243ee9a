/* Constant folding through the reference interpreter (exec/fold.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/fold.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "passes/passes.h"

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "fold.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

static char *optimized(const char *text) {
  fbx_graph *g = parse(text);
  fbx_fold_register();
  fbx_status *st = fbx_pass_pipeline(g, "default");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  st = fbx_graph_verify(g);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  char *s = fbx_graph_print(g);
  fbx_graph_destroy(g);
  return s;
}

/* The element-wise square of [1, 2, 3] is known before the graph runs. */
START_TEST(small_tensor_ops_fold) {
  char *s = optimized(
      "graph(%x.1 : Tensor):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %c : Long(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3 [ CPULongType{3} ]]()\n"
      "  %d : Tensor = aten::mul(%c, %c)\n"
      "  %e : Tensor = aten::add(%x.1, %d, %1)\n"
      "  return (%e)\n");
  ck_assert_msg(!strstr(s, "aten::mul"), "%s", s);
  ck_assert_msg(strstr(s, "prim::Constant[value= 1  4  9 [ CPULongType{3} ]]()"), "%s", s);
  /* What was folded prints so that it reads back to the same graph. */
  fbx_graph *g = parse(s);
  char *again = fbx_graph_print(g);
  ck_assert_str_eq(again, s);
  /* ...and runs: x + [1, 4, 9]. */
  fbx_interp *it = NULL;
  ck_assert_ptr_null(fbx_interp_create(&it, g));
  int64_t n = 3;
  fbx_tensor *x = NULL;
  ck_assert_ptr_null(fbx_tensor_zeros(&x, FBX_DTYPE_INT64, 1, &n));
  fbx_ivalue in = fbx_iv_tensor(x), out;
  fbx_run_opts opts = {0};
  fbx_status *st = fbx_interp_run(it, &in, 1, &out, &opts);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(fbx_tensor_get_i64(out.u.t, 0), 1);
  ck_assert_int_eq(fbx_tensor_get_i64(out.u.t, 2), 9);
  fbx_iv_release(&out);
  fbx_iv_release(&in);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  fbx_free(again);
  fbx_free(s);
}
END_TEST

/* A float scalar result folds with every digit kept. */
START_TEST(one_element_float_folds_exactly) {
  char *s = optimized(
      "graph(%x.1 : Tensor):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %c : Double(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]()\n"
      "  %d : Tensor = aten::exp(%c)\n"
      "  %e : Tensor = aten::add(%x.1, %d, %1)\n"
      "  return (%e)\n");
  ck_assert_msg(!strstr(s, "aten::exp"), "%s", s);
  ck_assert_msg(strstr(s, "value={1.6487212707001282}"), "%s", s); /* exp(0.5) in double, 17 digits */
  fbx_free(s);
}
END_TEST

/* Errors stay in the graph so that the run reports them where they are;
 * big results and random ops stay too. */
START_TEST(what_does_not_fold) {
  char *s = optimized(
      "graph(%x.1 : Tensor):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %a : Long(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3 [ CPULongType{3} ]]()\n"
      "  %b : Long(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2 [ CPULongType{2} ]]()\n"
      "  %bad : Tensor = aten::mul(%a, %b)\n"
      "  %n : int = prim::Constant[value=100]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %big : Tensor = aten::arange(%n, %none, %none, %none, %none)\n"
      "  %s : int[] = prim::ListConstruct(%n)\n"
      "  %r : Tensor = aten::rand(%s, %none, %none, %none, %none)\n"
      "  %e : Tensor = aten::add(%x.1, %bad, %1)\n"
      "  %f : Tensor = aten::add(%big, %r, %1)\n"
      "  return (%e, %f)\n");
  ck_assert_msg(strstr(s, "aten::mul"), "a failing node was folded away:\n%s", s);
  ck_assert_msg(strstr(s, "aten::arange"), "a 100-element result was folded:\n%s", s);
  ck_assert_msg(strstr(s, "aten::rand"), "a random op was folded:\n%s", s);
  fbx_free(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fold");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, small_tensor_ops_fold);
  tcase_add_test(tc, one_element_float_folds_exactly);
  tcase_add_test(tc, what_does_not_fold);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
