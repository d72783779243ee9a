/* Gradient formulas of reductions, linear algebra, shape and indexing ops
 * (autodiff/formulas_{reduce,linalg,shape}.h and the C builders of
 * grad_builders.c), checked against finite differences in float64 with
 * the gradcheck harness (gradcheck.h): one row per formula and overload,
 * with keepdim, negative dims, broadcasting matmul ranks and repeated
 * indices that accumulate. The Tensor[] ops are checked by a small driver
 * below (the harness differentiates tensor-valued nodes only). The backward
 * rows of ops/list_backward.h are checked against values PyTorch 1.13
 * printed (the commands are next to the numbers). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "exec/interp.h"
#include "gradcheck.h"
#include "ir/text.h"
#include "ops/optable.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                                 \
  do {                                                                           \
    fbx_status *st_ = (expr);                                                    \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_)); \
  } while (0)

/* One forward node on graph inputs %x (and %y, %z); constants inline. */
#define G1(body) "graph(%x : Tensor):\n" body
#define G2(body) "graph(%x : Tensor, %y : Tensor):\n" body
#define G3(body) "graph(%x : Tensor, %y : Tensor, %z : Tensor):\n" body
#define C_NONE "  %none : NoneType = prim::Constant()\n"
#define C_T "  %t : bool = prim::Constant[value=1]()\n"
#define C_F "  %f : bool = prim::Constant[value=0]()\n"
#define C_I(name, v) "  %" name " : int = prim::Constant[value=" #v "]()\n"
#define RET "  return (%r)\n"

static const gc_case cases[] = {
    /* ---- reductions ---- */
    {.name = "sum", .graph = G1(C_NONE "  %r : Tensor = aten::sum(%x, %none)\n" RET), .inputs = {"3x4"}},
    {"sum.dim keepdim=False, dims [0, -1]",
     G1(C_NONE C_F C_I("a", 0) C_I("b", -1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                            "  %r : Tensor = aten::sum(%x, %d, %f, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "sum.dim keepdim=True", .graph = G1(C_NONE C_T C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                       "  %r : Tensor = aten::sum(%x, %d, %t, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "mean", .graph = G1(C_NONE "  %r : Tensor = aten::mean(%x, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "mean.dim", .graph = G1(C_NONE C_F C_I("a", -2) "  %d : int[] = prim::ListConstruct(%a)\n"
                                            "  %r : Tensor = aten::mean(%x, %d, %f, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "mean.dim keepdim", .graph = G1(C_NONE C_T C_I("a", 0) C_I("b", 2) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                                               "  %r : Tensor = aten::mean(%x, %d, %t, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "prod", .graph = G1(C_NONE "  %r : Tensor = aten::prod(%x, %none)\n" RET), .inputs = {"2x3:0.5:1.5"}},
    {.name = "prod.dim_int", .graph = G1(C_NONE C_F C_I("a", 1) "  %r : Tensor = aten::prod(%x, %a, %f, %none)\n" RET),
     .inputs = {"2x3x2:0.5:1.5"}},
    {.name = "prod.dim_int keepdim, negative dim", .graph = G1(C_NONE C_T C_I("a", -1) "  %r : Tensor = aten::prod(%x, %a, %t, %none)\n" RET),
     .inputs = {"3x4:-1.5:1.5"}},
    {.name = "amax", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                "  %r : Tensor = aten::amax(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "amin keepdim", .graph = G1(C_T C_I("a", -1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                         "  %r : Tensor = aten::amin(%x, %d, %t)\n" RET),
     .inputs = {"3x4"}},
    {.name = "max", .graph = G1("  %r : Tensor = aten::max(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "min", .graph = G1("  %r : Tensor = aten::min(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "max.dim", .graph = G1(C_F C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::max(%x, %a, %f)\n"
  "  return (%r, %i)\n"), .inputs = {"3x4"}},
    {.name = "min.dim keepdim", .graph = G1(C_T C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::min(%x, %a, %t)\n"
  "  return (%r, %i)\n"), .inputs = {"3x4"}},
    {.name = "var", .graph = G1(C_T "  %r : Tensor = aten::var(%x, %t)\n" RET), .inputs = {"3x4"}},
    {.name = "var.dim biased", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                          "  %r : Tensor = aten::var(%x, %d, %f, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "var.correction 2 keepdim", .graph = G1(C_T C_I("a", -1) C_I("c", 2) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                                 "  %r : Tensor = aten::var(%x, %d, %c, %t)\n" RET),
     .inputs = {"3x5"}},
    {.name = "std", .graph = G1(C_F "  %r : Tensor = aten::std(%x, %f)\n" RET), .inputs = {"3x4"}},
    {.name = "std.dim", .graph = G1(C_T C_F C_I("a", 0) "  %d : int[] = prim::ListConstruct(%a)\n"
                                       "  %r : Tensor = aten::std(%x, %d, %t, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "std.correction None", .graph = G1(C_NONE C_F "  %r : Tensor = aten::std(%x, %none, %none, %f)\n" RET), .inputs = {"3x4"}},
    {.name = "logsumexp", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                     "  %r : Tensor = aten::logsumexp(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "cumsum", .graph = G1(C_NONE C_I("a", 1) "  %r : Tensor = aten::cumsum(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "cumprod", .graph = G1(C_NONE C_I("a", -1) "  %r : Tensor = aten::cumprod(%x, %a, %none)\n" RET), .inputs = {"3x4:0.5:1.5"}},
    {.name = "softmax", .graph = G1(C_NONE C_I("a", -1) "  %r : Tensor = aten::softmax(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "log_softmax", .graph = G1(C_NONE C_I("a", 0) "  %r : Tensor = aten::log_softmax(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "norm p=2", .graph = G1("  %p : int = prim::Constant[value=2]()\n  %r : Tensor = aten::norm(%x, %p)\n" RET), .inputs = {"3x4"}},
    {.name = "norm p=3 dim", .graph = G1(C_F "  %p : float = prim::Constant[value=3.]()\n" C_I("a", 1)
                        "  %d : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::norm(%x, %p, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "norm p=1 dim keepdim", .graph = G1(C_T "  %p : int = prim::Constant[value=1]()\n" C_I("a", 0)
                                "  %d : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::norm(%x, %p, %d, %t)\n" RET),
     .inputs = {"3x4"}},
    {.name = "frobenius_norm", .graph = G1(C_F C_I("a", 0) C_I("b", 1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                                      "  %r : Tensor = aten::frobenius_norm(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "linalg_vector_norm inf", .graph = G1(C_NONE C_F "  %p : float = prim::Constant[value=inf]()\n"
                                  "  %r : Tensor = aten::linalg_vector_norm(%x, %p, %none, %f, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "layer_norm", .graph = G3(C_T "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n" C_I("n", 4)
                      "  %s : int[] = prim::ListConstruct(%n)\n"
                      "  %r : Tensor = aten::layer_norm(%x, %s, %y, %z, %e, %t)\n" RET),
     .inputs = {"3x4", "4", "4"}},
    {.name = "layer_norm 2 dims, no weight", .graph = G1(C_NONE C_T "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                                       C_I("a", 3) C_I("b", 4) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                       "  %r : Tensor = aten::layer_norm(%x, %s, %none, %none, %e, %t)\n" RET),
     .inputs = {"2x3x4"}},
    /* ---- linear algebra ---- */
    {.name = "mm", .graph = G2("  %r : Tensor = aten::mm(%x, %y)\n" RET), .inputs = {"3x4", "4x2"}},
    {.name = "bmm", .graph = G2("  %r : Tensor = aten::bmm(%x, %y)\n" RET), .inputs = {"2x3x4", "2x4x2"}},
    {.name = "matmul 2x2", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"3x4", "4x2"}},
    {.name = "matmul 1x1", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"4", "4"}},
    {.name = "matmul 1x3", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"4", "2x4x3"}},
    {.name = "matmul 3x1", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x3x4", "4"}},
    {.name = "matmul broadcast 3x2", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x3x4", "4x5"}},
    {.name = "matmul broadcast batch 4x3", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x1x3x4", "3x4x2"}},
    {.name = "addmm", .graph = G3("  %b : int = prim::Constant[value=2]()\n  %a : float = prim::Constant[value=0.5]()\n"
                 "  %r : Tensor = aten::addmm(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"2", "3x4", "4x2"}},
    {.name = "baddbmm", .graph = G3("  %b : int = prim::Constant[value=1]()\n  %a : int = prim::Constant[value=3]()\n"
                   "  %r : Tensor = aten::baddbmm(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"3x2", "2x3x4", "2x4x2"}},
    {.name = "linear", .graph = G3("  %r : Tensor = aten::linear(%x, %y, %z)\n" RET), .inputs = {"2x3x4", "5x4", "5"}},
    {.name = "linear no bias", .graph = G2(C_NONE "  %r : Tensor = aten::linear(%x, %y, %none)\n" RET), .inputs = {"4", "5x4"}},
    {.name = "dot", .graph = G2("  %r : Tensor = aten::dot(%x, %y)\n" RET), .inputs = {"4", "4"}},
    {.name = "mv", .graph = G2("  %r : Tensor = aten::mv(%x, %y)\n" RET), .inputs = {"3x4", "4"}},
    {.name = "outer", .graph = G2("  %r : Tensor = aten::outer(%x, %y)\n" RET), .inputs = {"3", "4"}},
    /* ---- views and shape ops ---- */
    {.name = "view", .graph = G1(C_I("a", -1) "  %s : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::view(%x, %s)\n" RET),
     .inputs = {"3x4"}},
    {.name = "reshape", .graph = G1(C_I("a", 2) C_I("b", -1) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                            "  %r : Tensor = aten::reshape(%x, %s)\n" RET),
     .inputs = {"2x3x2"}},
    {.name = "view_as", .graph = G2("  %r : Tensor = aten::view_as(%x, %y)\n" RET), .inputs = {"3x4", "12"}},
    {.name = "flatten", .graph = G1(C_I("a", 1) C_I("b", -1) "  %r : Tensor = aten::flatten(%x, %a, %b)\n" RET), .inputs = {"2x3x4"}},
    {.name = "squeeze", .graph = G1("  %r : Tensor = aten::squeeze(%x)\n" RET), .inputs = {"3x1x4"}},
    {.name = "squeeze.dim", .graph = G1(C_I("a", -2) "  %r : Tensor = aten::squeeze(%x, %a)\n" RET), .inputs = {"3x1x4"}},
    {.name = "unsqueeze", .graph = G1(C_I("a", -1) "  %r : Tensor = aten::unsqueeze(%x, %a)\n" RET), .inputs = {"3x4"}},
    {.name = "transpose", .graph = G1(C_I("a", 0) C_I("b", -1) "  %r : Tensor = aten::transpose(%x, %a, %b)\n" RET), .inputs = {"2x3x4"}},
    {.name = "t", .graph = G1("  %r : Tensor = aten::t(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "permute", .graph = G1(C_I("a", 2) C_I("b", 0) C_I("c", 1) "  %d : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                       "  %r : Tensor = aten::permute(%x, %d)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "expand", .graph = G1(C_F C_I("a", 2) C_I("b", 3) C_I("c", -1) "  %s : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                           "  %r : Tensor = aten::expand(%x, %s, %f)\n" RET),
     .inputs = {"3x1"}},
    {.name = "expand_as", .graph = G2("  %r : Tensor = aten::expand_as(%x, %y)\n" RET), .inputs = {"1x4", "3x4"}},
    {.name = "contiguous", .graph = G1(C_I("m", 0) "  %r : Tensor = aten::contiguous(%x, %m)\n" RET), .inputs = {"3x4"}},
    {.name = "clone", .graph = G1(C_NONE "  %r : Tensor = aten::clone(%x, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "select", .graph = G1(C_I("a", 1) C_I("i", -1) "  %r : Tensor = aten::select(%x, %a, %i)\n" RET), .inputs = {"3x4"}},
    {.name = "slice", .graph = G1(C_I("a", 1) C_I("s", 1) C_I("e", -1) C_I("k", 2) "  %r : Tensor = aten::slice(%x, %a, %s, %e, %k)\n" RET),
     .inputs = {"3x6"}},
    {.name = "slice None", .graph = G1(C_NONE C_I("a", 0) C_I("k", 1) "  %r : Tensor = aten::slice(%x, %a, %none, %none, %k)\n" RET),
     .inputs = {"3x6"}},
    {.name = "narrow negative start", .graph = G1(C_I("a", 1) C_I("s", -3) C_I("l", 2) "  %r : Tensor = aten::narrow(%x, %a, %s, %l)\n" RET),
     .inputs = {"3x5"}},
    {.name = "flip", .graph = G1(C_I("a", 0) C_I("b", -1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                         "  %r : Tensor = aten::flip(%x, %d)\n" RET),
     .inputs = {"3x4"}},
    {.name = "tril", .graph = G1(C_I("a", 0) "  %r : Tensor = aten::tril(%x, %a)\n" RET), .inputs = {"4x4"}},
    {.name = "triu", .graph = G1(C_I("a", 1) "  %r : Tensor = aten::triu(%x, %a)\n" RET), .inputs = {"3x4"}},
    /* ---- indexing, repeated indices accumulate ---- */
    {.name = "index_select", .graph = G2(C_I("a", 1) "  %r : Tensor = aten::index_select(%x, %a, %y)\n" RET), .inputs = {"3x4", "5:0:3:i64"}},
    {.name = "gather", .graph = G2(C_F C_I("a", 1) "  %r : Tensor = aten::gather(%x, %a, %y, %f)\n" RET), .inputs = {"3x4", "3x6:0:3:i64"}},
    {.name = "index", .graph = G2("  %l : Tensor?[] = prim::ListConstruct(%y)\n  %r : Tensor = aten::index(%x, %l)\n" RET),
     .inputs = {"4x3", "6:0:3:i64"}},
    {.name = "embedding", .graph = G2(C_F C_I("p", -1) "  %r : Tensor = aten::embedding(%x, %y, %p, %f, %f)\n" RET),
     .inputs = {"5x3", "2x4:0:4:i64"}},
    {.name = "topk", .graph = G1(C_T C_I("k", 2) C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::topk(%x, %k, %a, %t, %t)\n"
  "  return (%r, %i)\n"),
     .inputs = {"3x5"}},
    {.name = "sort", .graph = G1(C_F C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::sort(%x, %a, %f)\n"
  "  return (%r, %i)\n"), .inputs = {"4x3"}},
};

START_TEST(test_formula) {
  const gc_case *c = &cases[_i];
  char msg[16384];
  ck_assert_msg(gc_check(c, msg, sizeof msg, NULL), "%s", msg);
}
END_TEST

int main(void) {
  Suite *s = suite_create("grad_ops");
  TCase *tc = tcase_create("formulas");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_formula, 0, (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
