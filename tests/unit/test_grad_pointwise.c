/* Gradient formulas of pointwise ops (autodiff/formulas_pointwise.h) and the
 * engine that instantiates every formula list (autodiff/formula.c).
 *
 *   - every template of every list parses, and its parameters and returns
 *     match its row's schema (names included);
 *   - every pointwise row of the op table has a formula;
 *   - one finite-difference check (gradcheck.h) per formula and overload,
 *     with broadcasting shapes and a float32 row;
 *   - the engine's rules: no reductions when IR types prove them no-ops,
 *     gradients keep the input's dtype, NULL gradients build nothing,
 *     fwd_value only for what the formula uses, non-differentiable inputs;
 *   - aten::sum_to_size and aten::_grad_sum_to_size against PyTorch. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "autodiff/builders.h"
#include "autodiff/formulas_linalg.h"
#include "autodiff/formulas_pointwise.h"
#include "autodiff/formulas_reduce.h"
#include "autodiff/formulas_shape.h"
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

/* ---- the lists -------------------------------------------------------------------------- */

typedef struct row {
  int op;
  const char *text;
  const char *list;
} row;

static const row rows[] = {
#define ROW_P_(id, text) {FBX_OP_##id, text, "pointwise"},
#define ROW_R_(id, text) {FBX_OP_##id, text, "reduce"},
#define ROW_L_(id, text) {FBX_OP_##id, text, "linalg"},
#define ROW_S_(id, text) {FBX_OP_##id, text, "shape"},
    FBX_GRAD_FORMULAS_POINTWISE(ROW_P_) FBX_GRAD_FORMULAS_REDUCE(ROW_R_) FBX_GRAD_FORMULAS_LINALG(ROW_L_)
        FBX_GRAD_FORMULAS_SHAPE(ROW_S_){-1, NULL, NULL}};

static const int builder_ops[] = {
#define BROW_(id, fn) FBX_OP_##id,
    FBX_GRAD_BUILDERS(BROW_) - 1};

static bool has_formula_row(int op) {
  for (int i = 0; rows[i].text; i++)
    if (rows[i].op == op) return true;
  for (int i = 0; builder_ops[i] >= 0; i++)
    if (builder_ops[i] == op) return true;
  return false;
}

static void expect_name(const fbx_op *op, const fbx_value *v, const char *want, int idx) {
  ck_assert_msg(!strcmp(v->name, want), "formula for %s: parameter %d is %%%s, expected %%%s (%s)", op->id_name, idx,
                v->name, want, op->schema_text);
}

START_TEST(test_templates_match_schemas) {
  OK(fbx_op_table_init());
  int n = 0;
  for (int i = 0; rows[i].text; i++, n++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)rows[i].op);
    for (int j = 0; j < i; j++)
      ck_assert_msg(rows[j].op != rows[i].op, "two formulas for %s (%s and %s lists)", op->id_name, rows[j].list,
                    rows[i].list);
    for (int j = 0; builder_ops[j] >= 0; j++)
      ck_assert_msg(builder_ops[j] != rows[i].op, "%s has a template and a builder", op->id_name);
    fbx_graph *g = NULL;
    fbx_status *st = fbx_graph_parse(&g, rows[i].text, strlen(rows[i].text), op->id_name);
    ck_assert_msg(!st, "formula for %s (%s list) does not parse: %s", op->id_name, rows[i].list,
                  fbx_status_message(st));
    const fbx_schema *s = &op->schema;
    ck_assert_msg(fbx_graph_ninputs(g) == s->nargs + 2 * s->nrets,
                  "formula for %s: %d parameters, expected %d arguments + %d outputs + %d gradients (%s)", op->id_name,
                  fbx_graph_ninputs(g), s->nargs, s->nrets, s->nrets, op->schema_text);
    ck_assert_msg(fbx_graph_noutputs(g) == s->nargs, "formula for %s: %d returns, expected %d (%s)", op->id_name,
                  fbx_graph_noutputs(g), s->nargs, op->schema_text);
    for (int a = 0; a < s->nargs; a++) expect_name(op, fbx_graph_input(g, a), s->args[a].name, a);
    for (int r = 0; r < s->nrets; r++) {
      char want[32];
      if (s->nrets == 1) snprintf(want, sizeof want, "result");
      else snprintf(want, sizeof want, "result%d", r);
      expect_name(op, fbx_graph_input(g, s->nargs + r), want, s->nargs + r);
      if (s->nrets == 1) snprintf(want, sizeof want, "grad");
      else snprintf(want, sizeof want, "grad%d", r);
      expect_name(op, fbx_graph_input(g, s->nargs + s->nrets + r), want, s->nargs + s->nrets + r);
    }
    /* a non-tensor argument never has a gradient */
    for (int a = 0; a < s->nargs; a++)
      if (s->args[a].type != FBX_ARG_TENSOR)
        ck_assert_msg(fbx_value_is_none(fbx_graph_output(g, a)), "formula for %s returns a gradient for '%s' (%s)",
                      op->id_name, s->args[a].name, op->schema_text);
    fbx_graph_destroy(g);
  }
  ck_assert_int_gt(n, 0);
}
END_TEST

START_TEST(test_every_pointwise_row_has_formula) {
  static const int pointwise[] = {
#define PW_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,
      FBX_OPS_POINTWISE(PW_)};
  char missing[4096] = "";
  size_t used = 0;
  int nmissing = 0;
  for (size_t i = 0; i < sizeof pointwise / sizeof pointwise[0]; i++)
    if (!has_formula_row(pointwise[i])) {
      nmissing++;
      used += (size_t)snprintf(missing + used, used < sizeof missing ? sizeof missing - used : 0, " %s",
                               fbx_op_get((fbx_op_id)pointwise[i])->id_name);
    }
  ck_assert_msg(nmissing == 0, "%d pointwise rows without a gradient formula:%s", nmissing, missing);
}
END_TEST

/* ---- finite differences ------------------------------------------------------------------ */

#define T_ "Tensor"
#define G1_(call) "graph(%x : Tensor):\n  %r : Tensor = " call "\n  return (%r)\n"
#define G2_(call) "graph(%x : Tensor, %y : Tensor):\n  %r : Tensor = " call "\n  return (%r)\n"
#define G3_(call) "graph(%x : Tensor, %y : Tensor, %z : Tensor):\n  %r : Tensor = " call "\n  return (%r)\n"
/* with constants %a (int 2), %b (float 0.5), %c (float -1.5) */
#define K_                                       \
  "  %a : int = prim::Constant[value=2]()\n"     \
  "  %b : float = prim::Constant[value=0.5]()\n" \
  "  %c : float = prim::Constant[value=-1.5]()\n"
#define G1K_(call) "graph(%x : Tensor):\n" K_ "  %r : Tensor = " call "\n  return (%r)\n"
#define G2K_(call) "graph(%x : Tensor, %y : Tensor):\n" K_ "  %r : Tensor = " call "\n  return (%r)\n"
#define G3K_(call) "graph(%x : Tensor, %y : Tensor, %z : Tensor):\n" K_ "  %r : Tensor = " call "\n  return (%r)\n"

#define GC(n, g, ...) {.name = n, .graph = g, .inputs = {__VA_ARGS__}}
/* with explicit step and tolerances */
#define GCT(n, g, e, r, a, ...) {.name = n, .graph = g, .eps = e, .rtol = r, .atol = a, .inputs = {__VA_ARGS__}}

static const gc_case cases[] = {
    GC("neg", G1_("aten::neg(%x)"), "3x4"),
    GC("exp", G1_("aten::exp(%x)"), "3x4"),
    GC("tanh", G1_("aten::tanh(%x)"), "3x4"),
    GC("sigmoid", G1_("aten::sigmoid(%x)"), "3x4:-4:4"),
    GC("relu", G1_("aten::relu(%x)"), "3x4"),
    GC("add.Tensor broadcast", G2K_("aten::add(%x, %y, %a)"), "3x1", "1x4"),
    GC("add.Tensor rank", G2_("aten::add(%x, %y)"), "2x3x4", "4"),
    GC("add.Scalar", G1K_("aten::add(%x, %b, %a)"), "3x4"),
    GC("sub.Tensor broadcast", G2K_("aten::sub(%x, %y, %a)"), "3x1", "1x4"),
    GC("sub.Scalar", G1K_("aten::sub(%x, %c, %a)"), "3x4"),
    GC("mul.Tensor broadcast", G2_("aten::mul(%x, %y)"), "3x1", "1x4"),
    GC("mul.Tensor 0-d", G2_("aten::mul(%x, %y)"), "3x4", "-"),
    GC("mul.Scalar", G1K_("aten::mul(%x, %c)"), "3x4"),
    GC("div.Tensor broadcast", G2_("aten::div(%x, %y)"), "3x1", "1x4:0.5:2"),
    GC("div.Scalar", G1K_("aten::div(%x, %c)"), "3x4"),
    GC("pow.Tensor_Tensor", G2_("aten::pow(%x, %y)"), "3x1:0.5:2", "1x4"),
    GC("pow.Tensor_Scalar int", G1K_("aten::pow(%x, %a)"), "3x4"),
    GC("pow.Tensor_Scalar float", G1K_("aten::pow(%x, %b)"), "3x4:0.5:2"),
    GC("pow.Tensor_Scalar 0",
       "graph(%x : Tensor):\n  %z : int = prim::Constant[value=0]()\n  %r : Tensor = aten::pow(%x, %z)\n  return (%r)\n",
       "3x4"),
    /* float32: the gradient stays float32 (loose finite differences) */
    GCT("mul.Tensor float32", G2_("aten::mul(%x, %y)"), 1e-2, 1e-3, 1e-3, "3x1:f32", "1x4:f32"),
    GCT("mixed float32 * float64",
     "graph(%x : Float(3, 4, strides=[4, 1], requires_grad=1, device=cpu),\n"
     "      %y : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu)):\n"
     "  %r : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)\n"
     "  return (%r)\n",
     1e-3, 1e-3, 1e-4, "3x4:f32", "3x4"),
};

START_TEST(test_gradcheck) {
  const gc_case *c = &cases[_i];
  char msg[16384];
  ck_assert_msg(gc_check(c, msg, sizeof msg, NULL), "%s", msg);
}
END_TEST

/* ---- the engine's rules -------------------------------------------------------------------- */

static int count_kind(const char *text, const char *kind) {
  int n = 0;
  for (const char *p = strstr(text, kind); p; p = strstr(p + 1, kind)) n++;
  return n;
}

START_TEST(test_static_sizes_drop_sum_to_size) {
  static const gc_case same = GC(
      "add same sizes",
      "graph(%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu),\n"
      "      %y : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu)):\n"
      "  %r : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)\n"
      "  return (%r)\n",
      "3x4", "3x4");
  static const gc_case bcast = GC(
      "add broadcast sizes",
      "graph(%x : Double(3, 1, strides=[1, 1], requires_grad=1, device=cpu),\n"
      "      %y : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu)):\n"
      "  %r : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%x, %y)\n"
      "  return (%r)\n",
      "3x1", "3x4");
  static const gc_case dynamic = GC("add unknown sizes", G2_("aten::mul(%x, %y)"), "3x4", "3x4");
  char msg[16384];
  gc_info info;
  ck_assert_msg(gc_check(&same, msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(count_kind(info.backward, "_grad_sum_to_size") == 0 && count_kind(info.backward, "aten::size") == 0,
                "equal static sizes still reduce:\n%s", info.backward);
  ck_assert_int_eq(info.nbackward_nodes, 2);
  ck_assert_msg(gc_check(&bcast, msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(count_kind(info.backward, "_grad_sum_to_size") == 1, "expected one reduction (for %%x):\n%s",
                info.backward);
  ck_assert_msg(gc_check(&dynamic, msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(count_kind(info.backward, "_grad_sum_to_size") == 2, "unknown sizes must reduce:\n%s",
                info.backward);
}
END_TEST

START_TEST(test_mixed_dtype_gradient_converted) {
  char msg[16384];
  gc_info info;
  ck_assert_msg(gc_check(&cases[sizeof cases / sizeof cases[0] - 1], msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(count_kind(info.backward, "aten::to(") == 1, "expected one conversion:\n%s", info.backward);
}
END_TEST

/* A backward graph by hand: forward values become inputs, counted. */
typedef struct env_ctx {
  fbx_graph *g;
  int ncalls;
  const fbx_value *asked[8];
} env_ctx;

static fbx_status *count_fwd_value(void *ctx, const fbx_value *v, fbx_value **out) {
  env_ctx *e = ctx;
  ck_assert_int_lt(e->ncalls, 8);
  e->asked[e->ncalls++] = v;
  *out = fbx_graph_add_input(e->g, fbx_type_tensor_any(), NULL);
  return *out ? NULL : fbx_status_nomem();
}

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  OK(fbx_graph_parse(&g, text, strlen(text), "test"));
  return g;
}

static fbx_node *last_node(fbx_graph *g) { return fbx_block_last(g->block); }

START_TEST(test_null_gradient_builds_nothing) {
  fbx_graph *f = parse(G2_("aten::mul(%x, %y)"));
  fbx_graph *b = fbx_graph_create();
  env_ctx e = {.g = b};
  fbx_grad_env env = {.graph = b, .block = b->block, .fwd_value = count_fwd_value, .ctx = &e};
  fbx_value *gouts[1] = {NULL}, *gins[2] = {(fbx_value *)1, (fbx_value *)1};
  OK(fbx_grad_build(&env, last_node(f), gouts, gins));
  ck_assert_ptr_null(gins[0]);
  ck_assert_ptr_null(gins[1]);
  ck_assert_int_eq(e.ncalls, 0);
  ck_assert_int_eq(fbx_graph_count_nodes(b), 0);
  fbx_graph_destroy(b);
  fbx_graph_destroy(f);
}
END_TEST

START_TEST(test_fwd_value_only_for_used_values) {
  /* exp uses its result only; neg nothing forward */
  fbx_graph *f = parse(G1_("aten::exp(%x)"));
  fbx_graph *b = fbx_graph_create();
  env_ctx e = {.g = b};
  fbx_grad_env env = {.graph = b, .block = b->block, .fwd_value = count_fwd_value, .ctx = &e};
  fbx_value *g = fbx_graph_add_input(b, fbx_type_tensor_any(), "g");
  fbx_value *gouts[1] = {g}, *gins[1] = {NULL};
  OK(fbx_grad_build(&env, last_node(f), gouts, gins));
  ck_assert_int_eq(e.ncalls, 1);
  ck_assert_ptr_eq(e.asked[0], last_node(f)->outputs[0]);
  ck_assert_ptr_nonnull(gins[0]);
  fbx_graph_destroy(b);
  fbx_graph_destroy(f);

  f = parse(G1_("aten::neg(%x)"));
  b = fbx_graph_create();
  e = (env_ctx){.g = b};
  env = (fbx_grad_env){.graph = b, .block = b->block, .fwd_value = count_fwd_value, .ctx = &e};
  gouts[0] = fbx_graph_add_input(b, fbx_type_tensor_any(), "g");
  OK(fbx_grad_build(&env, last_node(f), gouts, gins));
  ck_assert_int_eq(e.ncalls, 0);
  fbx_graph_destroy(b);
  fbx_graph_destroy(f);
}
END_TEST

START_TEST(test_differentiable_inputs) {
  fbx_graph *f = parse(
      "graph(%x : Double(3, strides=[1], requires_grad=1, device=cpu),\n"
      "      %i : Long(3, strides=[1], requires_grad=0, device=cpu), %t : Tensor):\n" K_
      "  %r1 : Tensor = aten::mul(%x, %i)\n"
      "  %r2 : Tensor = aten::add(%x, %t, %a)\n"
      "  %r3 : Tensor = aten::mul(%x, %c)\n"
      "  %r4 : Tensor = aten::gt(%x, %t)\n"
      "  %r5 : Tensor = aten::floor(%x)\n"
      "  %n : int = aten::dim(%x)\n"
      "  return (%r1, %r2, %r3, %r4, %r5)\n");
  fbx_node *mul = fbx_block_first(f->block)->next->next->next, *add = mul->next, *muls = add->next, *gt = muls->next,
           *fl = gt->next, *dim = fl->next;
  ck_assert(fbx_grad_has_formula(mul));
  ck_assert(fbx_grad_input_differentiable(mul, 0));
  ck_assert(!fbx_grad_input_differentiable(mul, 1)); /* int64 operand */
  ck_assert(fbx_grad_input_differentiable(add, 0));
  ck_assert(fbx_grad_input_differentiable(add, 1)); /* dtype unknown */
  ck_assert(!fbx_grad_input_differentiable(add, 2)); /* alpha */
  ck_assert(fbx_grad_input_differentiable(muls, 0));
  ck_assert(!fbx_grad_input_differentiable(muls, 1));
  ck_assert(fbx_grad_has_formula(gt));
  ck_assert(!fbx_grad_input_differentiable(gt, 0));
  ck_assert(fbx_grad_has_formula(fl));
  ck_assert(!fbx_grad_input_differentiable(fl, 0));
  ck_assert(!fbx_grad_has_formula(dim));
  ck_assert(!fbx_grad_input_differentiable(dim, 0));
  /* no formula: a clear error */
  fbx_graph *b = fbx_graph_create();
  env_ctx e = {.g = b};
  fbx_grad_env env = {.graph = b, .block = b->block, .fwd_value = count_fwd_value, .ctx = &e};
  fbx_value *gouts[1] = {fbx_graph_add_input(b, fbx_type_tensor_any(), "g")}, *gins[1];
  fbx_status *st = fbx_grad_build(&env, dim, gouts, gins);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(fbx_status_message(st), "no gradient formula for aten::dim"), "%s", fbx_status_message(st));
  fbx_status_free(st);
  fbx_graph_destroy(b);
  fbx_graph_destroy(f);
}
END_TEST

/* ---- sum_to_size and _grad_sum_to_size against PyTorch ------------------------------------- */

/* x = arange(24.).reshape(2, 3, 4); PyTorch 1.13:
 *   x.sum_to_size(3, 1)      = [[6, 22, 38] + [54, 70, 86]] = [60, 92, 124] as 3x1
 *   x.sum_to_size(1, 4)      = [60, 66, 72, 78]
 *   x.sum_to_size(2, 1, 1)   = [66, 210]
 *   x.sum_to_size([])        = 276
 *   x.sum_to_size(2, 3, 4)   = x
 *   x.sum_to_size(4)         = [60, 66, 72, 78]
 *   x.sum_to_size(5) -> "size {[5]} is not expandable to size {[2, 3, 4]}." */
static void run_sum_to(const char *op, const char *size_list, int ndim, const int64_t *sizes, const double *want,
                       int n, const char *err) {
  char text[1024];
  snprintf(text, sizeof text,
           "graph(%%x : Tensor):\n  %%s : int[] = prim::Constant[value=%s]()\n"
           "  %%r : Tensor = %s(%%x, %%s)\n  return (%%r)\n",
           size_list, op);
  fbx_graph *g = parse(text);
  fbx_tensor *x;
  int64_t xs[3] = {2, 3, 4};
  OK(fbx_tensor_empty(&x, FBX_DTYPE_FLOAT64, 3, xs));
  for (int i = 0; i < 24; i++) fbx_tensor_set_f64(x, i, i);
  fbx_interp *it;
  OK(fbx_interp_create(&it, g));
  fbx_ivalue in[1] = {fbx_iv_tensor(x)}, out[1] = {fbx_iv_none()};
  fbx_status *st = fbx_interp_run(it, in, 1, out, NULL);
  if (err) {
    ck_assert_msg(st && strstr(fbx_status_message(st), err), "%s %s: expected error '%s', got '%s'", op, size_list,
                  err, fbx_status_message(st));
    fbx_status_free(st);
  } else {
    ck_assert_msg(!st, "%s %s: %s", op, size_list, fbx_status_message(st));
    fbx_tensor *r = out[0].u.t;
    ck_assert_int_eq(r->ndim, ndim);
    for (int d = 0; d < ndim; d++) ck_assert_int_eq(r->sizes[d], sizes[d]);
    ck_assert_int_eq(r->numel, n);
    for (int i = 0; i < n; i++) ck_assert_double_eq(fbx_tensor_get_f64(r, i), want[i]);
    ck_assert_int_eq(r->dtype, FBX_DTYPE_FLOAT64);
    fbx_iv_release(&out[0]);
  }
  fbx_interp_destroy(it);
  fbx_tensor_release(x);
  fbx_graph_destroy(g);
}

START_TEST(test_sum_to_size) {
  static const char *ops[2] = {"aten::sum_to_size", "aten::_grad_sum_to_size"};
  for (int k = 0; k < 2; k++) {
    const char *op = ops[k];
    run_sum_to(op, "[3, 1]", 2, (int64_t[]){3, 1}, (double[]){60, 92, 124}, 3, NULL);
    run_sum_to(op, "[1, 4]", 2, (int64_t[]){1, 4}, (double[]){60, 66, 72, 78}, 4, NULL);
    run_sum_to(op, "[4]", 1, (int64_t[]){4}, (double[]){60, 66, 72, 78}, 4, NULL);
    run_sum_to(op, "[2, 1, 1]", 3, (int64_t[]){2, 1, 1}, (double[]){66, 210}, 2, NULL);
    run_sum_to(op, "[]", 0, NULL, (double[]){276}, 1, NULL);
    double id[24];
    for (int i = 0; i < 24; i++) id[i] = i;
    run_sum_to(op, "[2, 3, 4]", 3, (int64_t[]){2, 3, 4}, id, 24, NULL);
    run_sum_to(op, "[5]", 0, NULL, NULL, 0, "size {[5]} is not expandable to size {[2, 3, 4]}.");
    run_sum_to(op, "[1, 2, 3, 4]", 0, NULL, NULL, 0, "is not expandable");
  }
}
END_TEST

/* _grad_sum_to_size(x, None) and (x, x.size()) are x itself (PyTorch
 * returns self; the row is an alias); sum_to_size copies. */
START_TEST(test_grad_sum_to_size_aliases) {
  fbx_graph *g = parse(
      "graph(%x : Tensor):\n  %n : NoneType = prim::Constant()\n  %s : int[] = aten::size(%x)\n"
      "  %a : Tensor = aten::_grad_sum_to_size(%x, %n)\n  %b : Tensor = aten::_grad_sum_to_size(%x, %s)\n"
      "  %c : Tensor = aten::sum_to_size(%x, %s)\n  return (%a, %b, %c)\n");
  fbx_tensor *x;
  int64_t xs[2] = {2, 3};
  OK(fbx_tensor_zeros(&x, FBX_DTYPE_INT32, 2, xs));
  fbx_interp *it;
  OK(fbx_interp_create(&it, g));
  fbx_ivalue in[1] = {fbx_iv_tensor(x)}, out[3] = {fbx_iv_none(), fbx_iv_none(), fbx_iv_none()};
  OK(fbx_interp_run(it, in, 1, out, NULL));
  ck_assert_ptr_eq(out[0].u.t, x);
  ck_assert_ptr_eq(out[1].u.t, x);
  ck_assert_ptr_ne(out[2].u.t, x);
  ck_assert_int_eq(out[2].u.t->dtype, FBX_DTYPE_INT32); /* PyTorch: x.sum_to_size(x.shape).dtype == int32 */
  for (int i = 0; i < 3; i++) fbx_iv_release(&out[i]);
  fbx_interp_destroy(it);
  fbx_tensor_release(x);
  fbx_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("grad_pointwise");
  TCase *tc = tcase_create("lists");
  tcase_add_test(tc, test_templates_match_schemas);
  tcase_add_test(tc, test_every_pointwise_row_has_formula);
  suite_add_tcase(s, tc);
  tc = tcase_create("gradcheck");
  tcase_add_loop_test(tc, test_gradcheck, 0, (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("engine");
  tcase_add_test(tc, test_static_sizes_drop_sum_to_size);
  tcase_add_test(tc, test_mixed_dtype_gradient_converted);
  tcase_add_test(tc, test_null_gradient_builds_nothing);
  tcase_add_test(tc, test_fwd_value_only_for_used_values);
  tcase_add_test(tc, test_differentiable_inputs);
  suite_add_tcase(s, tc);
  tc = tcase_create("ops");
  tcase_add_test(tc, test_sum_to_size);
  tcase_add_test(tc, test_grad_sum_to_size_aliases);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
