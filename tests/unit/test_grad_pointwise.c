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

/* constants for the graphs below */
#define KN_ "  %none : NoneType = prim::Constant()\n"
#define KS_(name, v) "  %" name " : str = prim::Constant[value=\"" v "\"]()\n"
#define KF_(name, v) "  %" name " : float = prim::Constant[value=" v "]()\n"
#define KI_(name, v) "  %" name " : int = prim::Constant[value=" v "]()\n"
#define GX1_(consts, call) "graph(%x : Tensor):\n" consts "  %r : Tensor = " call "\n  return (%r)\n"
#define GX2_(consts, call) "graph(%x : Tensor, %y : Tensor):\n" consts "  %r : Tensor = " call "\n  return (%r)\n"
#define GX3_(consts, call) \
  "graph(%x : Tensor, %y : Tensor, %z : Tensor):\n" consts "  %r : Tensor = " call "\n  return (%r)\n"

static const gc_case cases[] = {
    /* ---- unary ---- */
    GC("abs", G1_("aten::abs(%x)"), "3x4"),
    GC("neg", G1_("aten::neg(%x)"), "3x4"),
    GC("reciprocal", G1_("aten::reciprocal(%x)"), "3x4:0.5:2"),
    GC("sqrt", G1_("aten::sqrt(%x)"), "3x4:0.2:3"),
    GC("rsqrt", G1_("aten::rsqrt(%x)"), "3x4:0.2:3"),
    GC("square", G1_("aten::square(%x)"), "3x4"),
    GC("exp", G1_("aten::exp(%x)"), "3x4"),
    GC("exp2", G1_("aten::exp2(%x)"), "3x4"),
    GC("expm1", G1_("aten::expm1(%x)"), "3x4"),
    GC("log", G1_("aten::log(%x)"), "3x4:0.2:3"),
    GC("log2", G1_("aten::log2(%x)"), "3x4:0.2:3"),
    GC("log10", G1_("aten::log10(%x)"), "3x4:0.2:3"),
    GC("log1p", G1_("aten::log1p(%x)"), "3x4:-0.5:3"),
    GC("sin", G1_("aten::sin(%x)"), "3x4"),
    GC("cos", G1_("aten::cos(%x)"), "3x4"),
    GC("tan", G1_("aten::tan(%x)"), "3x4:-1.2:1.2"),
    GC("asin", G1_("aten::asin(%x)"), "3x4:-0.9:0.9"),
    GC("acos", G1_("aten::acos(%x)"), "3x4:-0.9:0.9"),
    GC("atan", G1_("aten::atan(%x)"), "3x4"),
    GC("sinh", G1_("aten::sinh(%x)"), "3x4"),
    GC("cosh", G1_("aten::cosh(%x)"), "3x4"),
    GC("tanh", G1_("aten::tanh(%x)"), "3x4"),
    GC("erf", G1_("aten::erf(%x)"), "3x4"),
    GC("erfc", G1_("aten::erfc(%x)"), "3x4"),
    GC("lgamma", G1_("aten::lgamma(%x)"), "3x4:0.2:6"),
    GC("lgamma negative", G1_("aten::lgamma(%x)"), "3x4:-2.9:-2.1"),
    GC("sigmoid", G1_("aten::sigmoid(%x)"), "3x4:-4:4"),
    GC("logit", G1_("aten::logit(%x)"), "3x4:0.05:0.95"),
    GC("logit eps", GX1_(KF_("e", "0.25"), "aten::logit(%x, %e)"), "3x4:0:1"),
    GC("frac", G1_("aten::frac(%x)"), "3x4"),
    GC("nan_to_num", G1_("aten::nan_to_num(%x)"), "3x4"),
    /* zero gradients */
    GC("floor", G1_("aten::floor(%x)"), "3x4"),
    GC("ceil", G1_("aten::ceil(%x)"), "3x4"),
    GC("round", G1_("aten::round(%x)"), "3x4"),
    GC("round.decimals", GX1_(KI_("d", "1"), "aten::round(%x, %d)"), "3x4"),
    GC("trunc", G1_("aten::trunc(%x)"), "3x4"),
    GC("sign", G1_("aten::sign(%x)"), "3x4"),
    GC("sgn", G1_("aten::sgn(%x)"), "3x4"),
    /* ---- activations ---- */
    GC("relu", G1_("aten::relu(%x)"), "3x4"),
    GC("relu6", G1_("aten::relu6(%x)"), "3x4:-2:8"),
    GC("leaky_relu", GX1_(KF_("s", "0.2"), "aten::leaky_relu(%x, %s)"), "3x4"),
    GC("leaky_relu default", G1_("aten::leaky_relu(%x)"), "3x4"),
    GC("elu", GX1_(KF_("a", "1.5") KF_("s", "0.7") KF_("i", "1.3"), "aten::elu(%x, %a, %s, %i)"), "3x4"),
    GC("elu default", G1_("aten::elu(%x)"), "3x4"),
    GC("selu", G1_("aten::selu(%x)"), "3x4"),
    GC("celu", GX1_(KF_("a", "0.7"), "aten::celu(%x, %a)"), "3x4"),
    GC("gelu", G1_("aten::gelu(%x)"), "3x4:-3:3"),
    GC("gelu none", GX1_(KS_("a", "none"), "aten::gelu(%x, %a)"), "3x4:-3:3"),
    GC("gelu tanh", GX1_(KS_("a", "tanh"), "aten::gelu(%x, %a)"), "3x4:-3:3"),
    GC("silu", G1_("aten::silu(%x)"), "3x4:-4:4"),
    GC("mish", G1_("aten::mish(%x)"), "3x4:-4:4"),
    GC("softplus", G1_("aten::softplus(%x)"), "3x4:-4:4"),
    GC("softplus beta threshold", GX1_(KF_("b", "2.") KF_("t", "3."), "aten::softplus(%x, %b, %t)"), "3x4:-3:3"),
    GC("log_sigmoid", G1_("aten::log_sigmoid(%x)"), "3x4:-4:4"),
    GC("hardtanh", G1_("aten::hardtanh(%x)"), "3x4"),
    GC("hardtanh bounds", GX1_(KF_("a", "-0.5") KF_("b", "1.5"), "aten::hardtanh(%x, %a, %b)"), "3x4"),
    GC("hardsigmoid", G1_("aten::hardsigmoid(%x)"), "3x4:-5:5"),
    GC("hardswish", G1_("aten::hardswish(%x)"), "3x4:-5:5"),
    GC("threshold", GX1_(KF_("t", "0.5") KF_("v", "-3."), "aten::threshold(%x, %t, %v)"), "3x4"),
    /* ---- clamp ---- */
    GC("clamp both", GX1_(KF_("a", "-0.5") KF_("b", "1."), "aten::clamp(%x, %a, %b)"), "3x4"),
    GC("clamp min", GX1_(KN_ KF_("a", "-0.5"), "aten::clamp(%x, %a, %none)"), "3x4"),
    GC("clamp max", GX1_(KN_ KI_("b", "1"), "aten::clamp(%x, %none, %b)"), "3x4"),
    GC("clamp inverted", GX1_(KF_("a", "1.") KF_("b", "-1."), "aten::clamp(%x, %a, %b)"), "3x4"),
    GC("clamp.Tensor both", GX3_("", "aten::clamp(%x, %y, %z)"), "3x4", "3x1:-1:0", "1x4:0:1"),
    GC("clamp.Tensor inverted", GX3_("", "aten::clamp(%x, %y, %z)"), "3x4", "3x4:0.5:1", "3x4:-1:0.4"),
    GC("clamp.Tensor min", GX2_(KN_, "aten::clamp(%x, %y, %none)"), "3x4", "4"),
    GC("clamp.Tensor max", GX2_(KN_, "aten::clamp(%x, %none, %y)"), "3x4", "3x1"),
    GC("clamp_min", GX1_(KF_("a", "-0.5"), "aten::clamp_min(%x, %a)"), "3x4"),
    GC("clamp_max", GX1_(KF_("a", "0.5"), "aten::clamp_max(%x, %a)"), "3x4"),
    GC("clamp_min.Tensor", G2_("aten::clamp_min(%x, %y)"), "3x4", "1x4"),
    GC("clamp_max.Tensor", G2_("aten::clamp_max(%x, %y)"), "3x1", "3x4"),
    /* ---- arithmetic ---- */
    GC("add.Tensor broadcast", G2K_("aten::add(%x, %y, %a)"), "3x1", "1x4"),
    GC("add.Tensor rank", G2_("aten::add(%x, %y)"), "2x3x4", "4"),
    GC("add.Scalar", G1K_("aten::add(%x, %b, %a)"), "3x4"),
    GC("sub.Tensor broadcast", G2K_("aten::sub(%x, %y, %a)"), "3x1", "1x4"),
    GC("sub.Scalar", G1K_("aten::sub(%x, %c, %a)"), "3x4"),
    GC("rsub.Tensor", G2K_("aten::rsub(%x, %y, %b)"), "3x1", "1x4"),
    GC("rsub.Scalar", G1K_("aten::rsub(%x, %c, %a)"), "3x4"),
    GC("mul.Tensor broadcast", G2_("aten::mul(%x, %y)"), "3x1", "1x4"),
    GC("mul.Tensor 0-d", G2_("aten::mul(%x, %y)"), "3x4", "-"),
    GC("mul.Scalar", G1K_("aten::mul(%x, %c)"), "3x4"),
    GC("div.Tensor broadcast", G2_("aten::div(%x, %y)"), "3x1", "1x4:0.5:2"),
    GC("div.Scalar", G1K_("aten::div(%x, %c)"), "3x4"),
    GC("div.Tensor_mode None", GX2_(KN_, "aten::div(%x, %y, %none)"), "3x1", "1x4:0.5:2"),
    GC("div.Tensor_mode floor", GX2_(KS_("m", "floor"), "aten::div(%x, %y, %m)"), "3x1", "1x4:0.5:2"),
    GC("div.Scalar_mode None", GX1_(KN_ KF_("d", "-1.5"), "aten::div(%x, %d, %none)"), "3x4"),
    GC("div.Scalar_mode trunc", GX1_(KS_("m", "trunc") KF_("d", "-1.5"), "aten::div(%x, %d, %m)"), "3x4"),
    GC("floor_divide", G2_("aten::floor_divide(%x, %y)"), "3x4", "3x4:0.5:2"),
    GC("remainder.Tensor", G2_("aten::remainder(%x, %y)"), "3x1:-5:5", "1x4:0.7:2"),
    GC("remainder.Scalar", G1K_("aten::remainder(%x, %c)"), "3x4:-5:5"),
    GC("fmod.Tensor", G2_("aten::fmod(%x, %y)"), "3x1:-5:5", "1x4:-2:-0.7"),
    GC("fmod.Scalar", G1K_("aten::fmod(%x, %c)"), "3x4:-5:5"),
    GC("pow.Tensor_Tensor", G2_("aten::pow(%x, %y)"), "3x1:0.5:2", "1x4"),
    GC("pow.Tensor_Scalar int", G1K_("aten::pow(%x, %a)"), "3x4"),
    GC("pow.Tensor_Scalar float", G1K_("aten::pow(%x, %b)"), "3x4:0.5:2"),
    GC("pow.Tensor_Scalar 0", GX1_(KI_("z", "0"), "aten::pow(%x, %z)"), "3x4"),
    GC("pow.Scalar", GX1_(KF_("base", "1.7"), "aten::pow(%base, %x)"), "3x4"),
    GC("atan2", G2_("aten::atan2(%x, %y)"), "3x1", "1x4"),
    GC("hypot", G2_("aten::hypot(%x, %y)"), "3x1", "1x4"),
    GC("maximum", G2_("aten::maximum(%x, %y)"), "3x1", "1x4"),
    GC("minimum", G2_("aten::minimum(%x, %y)"), "3x1", "1x4"),
    GC("max.other", G2_("aten::max(%x, %y)"), "3x4", "3x4"),
    GC("min.other", G2_("aten::min(%x, %y)"), "3x4", "4"),
    GC("comparison", G2_("aten::lt(%x, %y)"), "3x4", "3x4"),
    /* ---- ops added with the ops-pointwise branch ---- */
    GC("clip both", GX1_(KF_("a", "-0.5") KF_("b", "1."), "aten::clip(%x, %a, %b)"), "3x4"),
    GC("clip min", GX1_(KN_ KF_("a", "-0.5"), "aten::clip(%x, %a, %none)"), "3x4"),
    GC("clip.Tensor both", GX3_("", "aten::clip(%x, %y, %z)"), "3x4", "3x1:-1:0", "1x4:0:1"),
    GC("true_divide.Tensor", G2_("aten::true_divide(%x, %y)"), "3x1", "1x4:0.5:2"),
    GC("true_divide.Scalar", G1K_("aten::true_divide(%x, %c)"), "3x4"),
    GC("absolute", G1_("aten::absolute(%x)"), "3x4"),
    GC("fix", G1_("aten::fix(%x)"), "3x4"),
    GC("special_expit", G1_("aten::special_expit(%x)"), "3x4:-4:4"),
    GC("asinh", G1_("aten::asinh(%x)"), "3x4"),
    GC("acosh", G1_("aten::acosh(%x)"), "3x4:1.2:3"),
    GC("atanh", G1_("aten::atanh(%x)"), "3x4:-0.9:0.9"),
    GC("deg2rad", G1_("aten::deg2rad(%x)"), "3x4"),
    GC("rad2deg", G1_("aten::rad2deg(%x)"), "3x4"),
    GC("sinc", G1_("aten::sinc(%x)"), "3x4"),
    GC("erfinv", G1_("aten::erfinv(%x)"), "3x4:-0.9:0.9"),
    GC("copysign.Tensor", G2_("aten::copysign(%x, %y)"), "3x1", "1x4"),
    GC("copysign.Scalar", G1K_("aten::copysign(%x, %c)"), "3x4"),
    GC("fmax", G2_("aten::fmax(%x, %y)"), "3x1", "1x4"),
    GC("fmin", G2_("aten::fmin(%x, %y)"), "3x1", "1x4"),
    GC("xlogy.Tensor", G2_("aten::xlogy(%x, %y)"), "3x1", "1x4:0.5:2"),
    GC("xlogy.Scalar_Other", GX1_(KF_("o", "2.5"), "aten::xlogy(%x, %o)"), "3x4"),
    GC("xlogy.Scalar_Self", GX1_(KF_("s", "1.5"), "aten::xlogy(%s, %x)"), "3x4:0.5:2"),
    GC("float_power.Tensor_Tensor", G2_("aten::float_power(%x, %y)"), "3x1:0.5:2", "1x4"),
    GC("float_power.Tensor_Scalar int", G1K_("aten::float_power(%x, %a)"), "3x4"),
    GC("float_power.Tensor_Scalar float", G1K_("aten::float_power(%x, %b)"), "3x4:0.5:2"),
    GC("float_power.Scalar", GX1_(KF_("base", "1.7"), "aten::float_power(%base, %x)"), "3x4"),
    GCT("float_power float32", G2_("aten::float_power(%x, %y)"), 1e-3, 1e-3, 1e-4, "3x1:0.5:2:f32", "1x4:f32"),
    GC("heaviside", G2_("aten::heaviside(%x, %y)"), "3x4", "3x4"),
    GC("signbit", G1_("aten::signbit(%x)"), "3x4"),
    /* ---- ternary ---- */
    GC("where.self", G3_("aten::where(%x, %y, %z)"), "3x4:bool", "3x1", "1x4"),
    GC("where.ScalarSelf", GX2_(KF_("s", "2."), "aten::where(%x, %s, %y)"), "3x4:bool", "4"),
    GC("where.ScalarOther", GX2_(KF_("s", "2."), "aten::where(%x, %y, %s)"), "3x4:bool", "3x1"),
    GC("lerp.Tensor", G3_("aten::lerp(%x, %y, %z)"), "3x1", "1x4", "3x4:0:1"),
    GC("lerp.Scalar", GX2_(KF_("w", "0.3"), "aten::lerp(%x, %y, %w)"), "3x4", "4"),
    GC("addcmul", GX3_(KF_("v", "0.5"), "aten::addcmul(%x, %y, %z, %v)"), "3x4", "3x1", "1x4"),
    GC("addcmul default", G3_("aten::addcmul(%x, %y, %z)"), "4", "3x4", "3x4"),
    GC("addcdiv", GX3_(KF_("v", "-2."), "aten::addcdiv(%x, %y, %z, %v)"), "3x4", "3x1", "1x4:0.5:2"),
    GC("masked_fill.Tensor", G3_("aten::masked_fill(%x, %y, %z)"), "4", "3x4:bool", "-"),
    GC("masked_fill.Scalar", GX2_(KF_("v", "3."), "aten::masked_fill(%x, %y, %v)"), "3x4", "3x4:bool"),
    /* ---- conversions ---- */
    /* float64 -> float32 -> float64: the gradient comes back as float64 */
    GCT("to.dtype", GX1_(KI_("dt", "6") "  %f : bool = prim::Constant[value=0]()\n" KN_, "aten::to(%x, %dt, %f, %f, %none)"),
        1e-2, 1e-3, 1e-4, "3x4"),
    GCT("to.other", "graph(%x : Tensor, %y : Tensor):\n  %f : bool = prim::Constant[value=0]()\n" KN_
                   "  %r : Tensor = aten::to(%x, %y, %f, %f, %none)\n  return (%r)\n",
        1e-2, 1e-3, 1e-4, "3x4", "3x4:f32"),
    GC("type_as", G2_("aten::type_as(%x, %y)"), "3x4:f32", "3x4"),
    /* float32: the gradient stays float32 (loose finite differences) */
    GCT("mul.Tensor float32", G2_("aten::mul(%x, %y)"), 1e-2, 1e-3, 1e-3, "3x1:f32", "1x4:f32"),
    GCT("gelu float32", G1_("aten::gelu(%x)"), 1e-2, 1e-2, 1e-3, "3x4:f32"),
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

/* ---- kinks and special values: PyTorch 1.13's own gradients (output gradient ones) ---- */

static fbx_graph *parse(const char *text);

#define GK(n, g, in, vals, exp) {.name = n, .graph = g, .inputs = {in}, .values = {vals}, .expect = {exp}}
#define V_(...) (const double[]){__VA_ARGS__}
#define inf_ INFINITY
#define nan_ NAN

static const gc_case kinks[] = {
    GK("relu at 0", G1_("aten::relu(%x)"), "3", V_(-3, 0, 3), V_(0, 0, 1)),
    GK("abs at 0", G1_("aten::abs(%x)"), "3", V_(-3, 0, 3), V_(-1, 0, 1)),
    GK("clamp at the bounds, NaN", GX1_(KF_("a", "-1.") KF_("b", "1."), "aten::clamp(%x, %a, %b)"), "5",
       V_(-1, 0, 1, 2, nan_), V_(1, 1, 1, 0, 0)),
    GK("clamp inverted", GX1_(KF_("a", "1.") KF_("b", "-1."), "aten::clamp(%x, %a, %b)"), "4", V_(-1, 0, 1, 2),
       V_(0, 0, 0, 0)),
    GK("hardtanh at the bounds", G1_("aten::hardtanh(%x)"), "4", V_(-1, 0, 1, 2), V_(0, 1, 0, 0)),
    GK("relu6 at 0 and 6", G1_("aten::relu6(%x)"), "4", V_(-1, 0, 6, 2), V_(0, 0, 0, 1)),
    GK("hardsigmoid at +-3", G1_("aten::hardsigmoid(%x)"), "4", V_(-3, 0, 3, 2),
       V_(0, 1.0 / 6, 0, 1.0 / 6)),
    GK("hardswish at +-3", G1_("aten::hardswish(%x)"), "4", V_(-3, 0, 3, 2), V_(-0.5, 0.5, 1.5, 2.0 / 3 + 0.5)),
    GK("threshold at the threshold", GX1_(KF_("t", "1.") KF_("v", "5."), "aten::threshold(%x, %t, %v)"), "4",
       V_(-3, 1, 3, 2), V_(0, 0, 1, 1)),
    GK("leaky_relu at 0", GX1_(KF_("s", "0.2"), "aten::leaky_relu(%x, %s)"), "3", V_(-3, 0, 3), V_(0.2, 0.2, 1)),
    GK("elu at 0", G1_("aten::elu(%x)"), "3", V_(-3, 0, 3), V_(0.049787068367863944, 1, 1)),
    GK("logit outside [0, 1]", G1_("aten::logit(%x)"), "5", V_(0, 0.5, 1, 1.5, -0.1),
       V_(inf_, 4, inf_, nan_, nan_)),
    GK("logit eps", GX1_(KF_("e", "0.1"), "aten::logit(%x, %e)"), "5", V_(0, 0.05, 0.5, 0.95, 1), V_(0, 0, 4, 0, 0)),
    GK("nan_to_num", G1_("aten::nan_to_num(%x)"), "3", V_(1, nan_, inf_), V_(1, 0, 0)),
    GK("softplus at the threshold", GX1_(KF_("b", "2.") KF_("t", "3."), "aten::softplus(%x, %b, %t)"), "3",
       V_(1, 1.5, 2), V_(0.88079707797788231, 0.95257412682243336, 1)),
    GK("sqrt at 0", G1_("aten::sqrt(%x)"), "1", V_(0), V_(inf_)),
    GK("pow.Scalar base 0", GX1_(KF_("z", "0."), "aten::pow(%z, %x)"), "3", V_(-1, 0, 2), V_(-inf_, 0, 0)),
    GK("pow.Tensor_Scalar exponent 0 at 0", GX1_(KI_("z", "0"), "aten::pow(%x, %z)"), "2", V_(0, 2), V_(0, 0)),
    GK("frac", G1_("aten::frac(%x)"), "2", V_(1.5, -2), V_(1, 1)),
    GK("floor", G1_("aten::floor(%x)"), "2", V_(1.5, -2), V_(0, 0)),
    /* maximum/minimum: ties halve, NaN passes to both */
    {.name = "maximum ties and NaN", .graph = G2_("aten::maximum(%x, %y)"), .inputs = {"3", "3"},
     .values = {V_(1, 2, nan_), V_(1, 3, 1)}, .expect = {V_(0.5, 0, 1), V_(0.5, 1, 1)}},
    {.name = "minimum ties", .graph = G2_("aten::minimum(%x, %y)"), .inputs = {"3", "3"},
     .values = {V_(1, 2, 4), V_(1, 3, 1)}, .expect = {V_(0.5, 1, 0), V_(0.5, 0, 1)}},
    {.name = "clamp.Tensor min > max", .graph = G3_("aten::clamp(%x, %y, %z)"), .inputs = {"4", "4", "4"},
     .values = {V_(-1, 0, 1, 2), V_(-1, 0.5, 0, 0), V_(1, 1, 1, -1)},
     .expect = {V_(1, 0, 1, 0), V_(0, 1, 0, 0), V_(0, 0, 0, 1)}},
    {.name = "clamp_min.Tensor", .graph = G2_("aten::clamp_min(%x, %y)"), .inputs = {"4", "4"},
     .values = {V_(-1, 0, 1, 2), V_(-1, 0.5, 0, 0)}, .expect = {V_(1, 0, 1, 1), V_(0, 1, 0, 0)}},
    {.name = "hypot at 0", .graph = G2_("aten::hypot(%x, %y)"), .inputs = {"1", "1"}, .values = {V_(0), V_(0)},
     .expect = {V_(nan_), V_(nan_)}},
    {.name = "remainder", .graph = G2_("aten::remainder(%x, %y)"), .inputs = {"4", "4"},
     .values = {V_(1.5, -2, 3, 0), V_(2, 2, -1, 1)}, .expect = {V_(1, 1, 1, 1), V_(-0.0, 1, 3, -0.0)}},
    {.name = "fmod", .graph = G2_("aten::fmod(%x, %y)"), .inputs = {"4", "4"},
     .values = {V_(1.5, -2, 3, 0), V_(2, 2, -1, 1)}, .expect = {V_(1, 1, 1, 1), V_(-0.0, 1, 3, -0.0)}},
    /* ops added with the ops-pointwise branch (PyTorch 1.13's gradients) */
    {.name = "fmax ties and NaN", .graph = G2_("aten::fmax(%x, %y)"), .inputs = {"4", "4"},
     .values = {V_(1, 2, nan_, 3), V_(1, 3, 1, nan_)}, .expect = {V_(1, 0, 0, 1), V_(0, 1, 1, 0)}},
    {.name = "fmin ties and NaN", .graph = G2_("aten::fmin(%x, %y)"), .inputs = {"4", "4"},
     .values = {V_(1, 2, nan_, 3), V_(1, 3, 1, nan_)}, .expect = {V_(1, 1, 0, 1), V_(0, 0, 1, 0)}},
    {.name = "xlogy at 0", .graph = G2_("aten::xlogy(%x, %y)"), .inputs = {"5", "5"},
     .values = {V_(0, 0, 0, 2, 0), V_(0, -1, nan_, 0, 3)},
     .expect = {V_(0, 0, nan_, -inf_, 1.0986122886681098), V_(nan_, -0.0, nan_, inf_, 0)}},
    GK("xlogy.Scalar_Other at 0", GX1_(KF_("o", "0."), "aten::xlogy(%x, %o)"), "2", V_(0, 2), V_(0, -inf_)),
    GK("sinc at 0", G1_("aten::sinc(%x)"), "2", V_(0, 0.5), V_(0, -1.2732395447351625)),
    GK("copysign.Scalar at 0", GX1_(KF_("o", "-1."), "aten::copysign(%x, %o)"), "3", V_(0, -2, 3), V_(0, 1, -1)),
    GK("erfinv", G1_("aten::erfinv(%x)"), "2", V_(0, 0.5), V_(0.88622692545275801, 1.1125848189719496)),
    GK("acosh at 1", G1_("aten::acosh(%x)"), "2", V_(1, 2), V_(inf_, 0.5773502691896258)),
    {.name = "where", .graph = G3_("aten::where(%x, %y, %z)"), .inputs = {"2:bool", "2", "1"},
     .values = {V_(1, 0), V_(1, 2), V_(3)}, .expect = {NULL, V_(1, 0), V_(1)}},
    {.name = "lerp", .graph = G3_("aten::lerp(%x, %y, %z)"), .inputs = {"2", "2", "1"},
     .values = {V_(1, 2), V_(3, 5), V_(0.5)}, .expect = {V_(0.5, 0.5), V_(0.5, 0.5), V_(5)}},
};

START_TEST(test_kinks) {
  char msg[16384];
  ck_assert_msg(gc_check(&kinks[_i], msg, sizeof msg, NULL), "%s", msg);
}
END_TEST

/* digamma (lgamma's derivative) against PyTorch 1.13 */
START_TEST(test_digamma) {
  static const double x[] = {0., -0., -1., -1.5, 0.25, 1., 2.5, 7.3, 30., 1e-3, -2.2};
  static const double want[] = {-INFINITY, INFINITY, NAN, 0.7031566406452433, -4.2274535333762655,
                                -0.5772156649015328, 0.7031566406452431, 1.917820335637986, 3.384438132685525,
                                -1000.5755719318104, 5.322870221172645};
  fbx_graph *g = parse(G1_("aten::digamma(%x)"));
  fbx_tensor *t;
  int64_t n = 11;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 1, &n, x));
  fbx_interp *it;
  OK(fbx_interp_create(&it, g));
  fbx_ivalue in[1] = {fbx_iv_tensor(t)}, out[1] = {fbx_iv_none()};
  OK(fbx_interp_run(it, in, 1, out, NULL));
  for (int i = 0; i < 11; i++) {
    double v = fbx_tensor_get_f64(out[0].u.t, i);
    if (isnan(want[i]) || isinf(want[i]))
      ck_assert_msg(isnan(want[i]) ? isnan(v) : v == want[i], "digamma(%g) = %g, PyTorch %g", x[i], v, want[i]);
    else
      ck_assert_msg(fabs(v - want[i]) <= 1e-13 * fmax(1, fabs(want[i])), "digamma(%g) = %.17g, PyTorch %.17g", x[i],
                    v, want[i]);
  }
  fbx_iv_release(&out[0]);
  fbx_interp_destroy(it);
  fbx_tensor_release(t);
  fbx_graph_destroy(g);
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
  tcase_add_loop_test(tc, test_kinks, 0, (int)(sizeof kinks / sizeof kinks[0]));
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
  tcase_add_test(tc, test_digamma);
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
