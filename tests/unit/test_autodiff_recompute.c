/* Save versus recompute in the forward/backward split (autodiff/recompute.c,
 * FUSEBOX_AUTODIFF_RECOMPUTE). Structure is checked on subgraphs whose
 * answer is worked out by hand from the rule (bytes a saved value costs: a
 * write in F and a read in B; what recomputing it costs: reading the inputs
 * B does not read yet); gradients with recomputation are checked against
 * PyTorch's by the corpus (test_autodiff_corpus_recompute in CTest, and the
 * fusers' backward corpus tests, where recomputation is on by default). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "ops/optable.h"
#include "testutil.h"

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "recompute.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  return g;
}

#define F1000 "Float(1000, strides=[1], requires_grad=0, device=cpu)"

/* ratio-IoU's DifferentiableGraph (examples/ratio_iou.ir after the passes),
 * typed for 1000 boxes. */
static const char *RATIO_IOU =
    "graph(%x1 : " F1000 ", %x2 : " F1000 ", %y1 : " F1000 ", %y2 : " F1000 ",\n"
    "      %w1 : " F1000 ", %w2 : " F1000 ", %h1 : " F1000 ", %h2 : " F1000 "):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %zero : float = prim::Constant[value=0.]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
    "  %xi : " F1000 " = aten::max(%x1, %x2)\n"
    "  %yi : " F1000 " = aten::max(%y1, %y2)\n"
    "  %a1 : " F1000 " = aten::add(%x1, %w1, %one)\n"
    "  %a2 : " F1000 " = aten::add(%x2, %w2, %one)\n"
    "  %m1 : " F1000 " = aten::min(%a1, %a2)\n"
    "  %s1 : " F1000 " = aten::sub(%m1, %xi, %one)\n"
    "  %wi : " F1000 " = aten::clamp(%s1, %zero, %none)\n"
    "  %b1 : " F1000 " = aten::add(%y1, %h1, %one)\n"
    "  %b2 : " F1000 " = aten::add(%y2, %h2, %one)\n"
    "  %m2 : " F1000 " = aten::min(%b1, %b2)\n"
    "  %s2 : " F1000 " = aten::sub(%m2, %yi, %one)\n"
    "  %hi : " F1000 " = aten::clamp(%s2, %zero, %none)\n"
    "  %ai : " F1000 " = aten::mul(%wi, %hi)\n"
    "  %p1 : " F1000 " = aten::mul(%w1, %h1)\n"
    "  %p2 : " F1000 " = aten::mul(%w2, %h2)\n"
    "  %su : " F1000 " = aten::add(%p1, %p2, %one)\n"
    "  %au : " F1000 " = aten::sub(%su, %ai, %one)\n"
    "  %c : " F1000 " = aten::clamp(%au, %eps, %none)\n"
    "  %r : " F1000 " = aten::div(%ai, %c)\n"
    "  return (%r)\n";

static int count_extra(const fbx_gradient *g) {
  int n = 0;
  for (int k = 0; k < g->nsaved; k++) n += g->saved[k].from_forward && g->saved[k].index >= g->nreal_outputs;
  return n;
}

static int count_inputs(const fbx_gradient *g) {
  int n = 0;
  for (int k = 0; k < g->nsaved; k++) n += !g->saved[k].from_forward;
  return n;
}

static fbx_gradient *split(const fbx_graph *S, const bool *rg, bool recompute) {
  fbx_gradient *g = NULL;
  fbx_status *st = fbx_autodiff_differentiate_ex(&g, S, rg, NULL, recompute);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  ck_assert_ptr_null(fbx_graph_verify(g->forward));
  ck_assert_ptr_null(fbx_graph_verify(g->backward));
  ck_assert_int_eq(fbx_graph_ninputs(g->backward), g->nreal_outputs + g->nsaved); /* every output gradient defined */
  ck_assert_int_eq(fbx_graph_noutputs(g->forward), g->nreal_outputs + count_extra(g));
  return g;
}

/* Saved: 11 intermediates and the 8 inputs (issue 14). Every intermediate is
 * a pointwise function of the inputs, which B reads anyway (the add, mul,
 * min and max formulas read them): each goes, F returns its output alone. */
START_TEST(ratio_iou_recomputes_every_intermediate) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *S = parse(RATIO_IOU);
  bool rg[8] = {true, true, true, true, true, true, true, true};
  fbx_gradient *save = split(S, rg, false);
  ck_assert_int_eq(count_extra(save), 11);
  ck_assert_int_eq(count_inputs(save), 8);
  ck_assert_int_eq(save->nrecomputed, 0);
  fbx_gradient *rc = split(S, rg, true);
  ck_assert_int_eq(count_extra(rc), 0);
  ck_assert_int_eq(count_inputs(rc), 8);
  ck_assert_int_eq(rc->nsaved, 8);
  ck_assert_int_eq(rc->nrecomputed, 11);
  ck_assert_int_eq(fbx_graph_noutputs(rc->forward), 1);
  ck_assert_int_eq(rc->ngrads, 8);
  fbx_gradient_free(save);
  fbx_gradient_free(rc);
  fbx_graph_destroy(S);
}
END_TEST

/* z = x * (a + b), gradient for x only: B needs a + b and reads neither a nor
 * b. Saving it costs a write and a read of 1000 floats; recomputing it reads
 * a (1000) and b: 2000 floats when b is [1000] (saved), 1001 when b is [1]
 * (recomputed). */
static void sum_case(const char *b_type, bool want_recompute) {
  char text[1024];
  snprintf(text, sizeof text,
           "graph(%%x : " F1000 ", %%a : " F1000 ", %%b : %s):\n"
           "  %%one : int = prim::Constant[value=1]()\n"
           "  %%s : " F1000 " = aten::add(%%a, %%b, %%one)\n"
           "  %%z : " F1000 " = aten::mul(%%x, %%s)\n"
           "  return (%%z)\n",
           b_type);
  fbx_graph *S = parse(text);
  bool rg[3] = {true, false, false};
  fbx_gradient *g = split(S, rg, true);
  ck_assert_int_eq(g->nrecomputed, want_recompute);
  ck_assert_int_eq(count_extra(g), !want_recompute);
  ck_assert_int_eq(count_inputs(g), want_recompute ? 2 : 0);
  fbx_gradient_free(g);
  fbx_graph_destroy(S);
}

START_TEST(recomputes_only_when_fewer_bytes) {
  ck_assert(!fbx_op_table_init());
  sum_case(F1000, false);
  sum_case("Float(1, strides=[1], requires_grad=0, device=cpu)", true);
}
END_TEST

/* Random values are never recomputed, nor what depends on them: y = x * r
 * with r = rand_like(x), z = y * y. B needs r and y; both stay saved. */
START_TEST(random_values_are_saved) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *S = parse("graph(%x : " F1000 "):\n"
                       "  %none : NoneType = prim::Constant()\n"
                       "  %r : " F1000 " = aten::rand_like(%x, %none, %none, %none, %none, %none)\n"
                       "  %y : " F1000 " = aten::mul(%x, %r)\n"
                       "  %z : " F1000 " = aten::mul(%y, %y)\n"
                       "  return (%z)\n");
  bool rg[1] = {true};
  fbx_gradient *g = split(S, rg, true);
  ck_assert_int_eq(g->nrecomputed, 0);
  ck_assert_int_eq(count_extra(g), 2);
  fbx_gradient_free(g);
  fbx_graph_destroy(S);
}
END_TEST

/* c = tanh(x * y) + x, a = x * y. tanh's formula reads its output, which is
 * recomputed from x and y. A backward for a's gradient alone, or c's alone,
 * respecializes with base's saved values: c's needs tanh's output again,
 * which it recomputes (without recomputation it could not: nothing saved it). */
START_TEST(respecialized_backward_recomputes_too) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *S = parse("graph(%x : " F1000 ", %y : " F1000 "):\n"
                       "  %one : int = prim::Constant[value=1]()\n"
                       "  %a : " F1000 " = aten::mul(%x, %y)\n"
                       "  %b : " F1000 " = aten::tanh(%a)\n"
                       "  %c : " F1000 " = aten::add(%b, %x, %one)\n"
                       "  return (%c, %a)\n");
  bool rg[2] = {true, true};
  fbx_gradient *base = split(S, rg, true);
  ck_assert_int_eq(base->nrecomputed, 1);
  ck_assert_int_eq(count_extra(base), 0);
  for (int which = 0; which < 2; which++) {
    bool defined[2] = {which == 0, which == 1};
    fbx_gradient *r = NULL;
    fbx_status *st = fbx_autodiff_respecialize(&r, S, base, rg, defined);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
    ck_assert_ptr_null(fbx_graph_verify(r->backward));
    ck_assert_int_eq(r->nsaved, base->nsaved);
    ck_assert_int_eq(r->ngrads, 2);
    fbx_gradient_free(r);
  }
  fbx_gradient_free(base);
  fbx_graph_destroy(S);
}
END_TEST

/* The switch is validated like every variable: a bad value fails create
 * with a message naming it. */
/* amin finds its argument's ties by equality with the saved result: a
 * value B compares that way is recomputed only if every op making it is
 * correctly rounded (the same bits in F's kernel and in B). log(x) is saved
 * (it was recomputed before: fuzz seed 1100602, a NaN gradient); x + x,
 * and a max of inputs, are recomputed; an add of a product (which a kernel
 * may contract into an FMA) is saved. */
START_TEST(compared_values_recomputed_only_when_exact) {
  ck_assert(!fbx_op_table_init());
  static const struct {
    const char *make;
    int saved; /* 1: %l stays saved; 0: it is recomputed */
  } C[] = {
      {"  %l : " F1000 " = aten::log(%x)\n", 1},
      {"  %l : " F1000 " = aten::add(%x, %x, %one)\n", 0},
      {"  %l : " F1000 " = aten::max(%x, %y)\n", 0},
      {"  %p : " F1000 " = aten::mul(%x, %y)\n  %l : " F1000 " = aten::add(%p, %x, %one)\n", 1},
  };
  for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
    char text[2048];
    snprintf(text, sizeof text,
             "graph(%%x : " F1000 ", %%y : " F1000 "):\n"
             "  %%one : int = prim::Constant[value=1]()\n"
             "  %%d : int = prim::Constant[value=0]()\n"
             "  %%t : bool = prim::Constant[value=1]()\n"
             "  %%dl : int[] = prim::ListConstruct(%%d)\n"
             "%s"
             "  %%m : Float(1, strides=[1], requires_grad=0, device=cpu) = aten::amin(%%l, %%dl, %%t)\n"
             "  return (%%m)\n",
             C[c].make);
    fbx_graph *S = parse(text);
    bool rg[2] = {true, true};
    fbx_gradient *save = split(S, rg, false), *rc = split(S, rg, true);
    ck_assert_msg(rc->nrecomputed == 1 - C[c].saved, "case %zu: %d recomputed", c, rc->nrecomputed);
    ck_assert_int_eq(count_extra(rc), count_extra(save) - rc->nrecomputed);
    fbx_gradient_free(save);
    fbx_gradient_free(rc);
    fbx_graph_destroy(S);
  }
}
END_TEST

START_TEST(switch_is_validated) {
  fbx_graph *g = parse("graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n  return (%y)\n");
  setenv("FUSEBOX_AUTODIFF_RECOMPUTE", "sometimes", 1);
  fbx_executor *ex = NULL;
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none"};
  fbx_status *st = fbx_executor_create(&ex, g, &o);
  unsetenv("FUSEBOX_AUTODIFF_RECOMPUTE");
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(fbx_status_message(st), "FUSEBOX_AUTODIFF_RECOMPUTE='sometimes'"), "%s",
                fbx_status_message(st));
  fbx_status_free(st);
  fbx_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("autodiff_recompute");
  TCase *t = tcase_create("core");
  tcase_add_test(t, ratio_iou_recomputes_every_intermediate);
  tcase_add_test(t, recomputes_only_when_fewer_bytes);
  tcase_add_test(t, random_values_are_saved);
  tcase_add_test(t, respecialized_backward_recomputes_too);
  tcase_add_test(t, compared_values_recomputed_only_when_exact);
  tcase_add_test(t, switch_is_validated);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
