/* DifferentiableGraph creation (core/autodiff/diffgraph.c): which values
 * require gradients, and how create_subgraphs groups nodes.
 *
 * Structure checks on hand-written graphs (loops, ifs, in-place ops,
 * min_size) and on every corpus graph: the grouped graph verifies, no group
 * holds control flow, side effects or in-place ops, a second run changes
 * nothing, and the grouped graph still computes what the original does (its
 * groups run through the interpreter, outputs compared bit for bit with the
 * ungrouped graph's). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "corpus_case.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "ops/optable.h"
#include "passes/passes.h"
#include "testutil.h"

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", st ? fbx_status_message(st) : "");
  return g;
}

static void verify_ok(const fbx_graph *g) {
  fbx_status *st = fbx_graph_verify(g);
  ck_assert_msg(!st, "verify: %s", st ? fbx_status_message(st) : "");
}

static bool *all_inputs(const fbx_graph *g, bool on) {
  int n = fbx_graph_ninputs(g);
  bool *r = calloc((size_t)(n ? n : 1), sizeof *r);
  for (int i = 0; i < n; i++) r[i] = on;
  return r;
}

static int create(fbx_graph *g, const bool *rg, int min_size) {
  int n = -1;
  fbx_status *st = fbx_autodiff_create_subgraphs(g, rg, min_size, &n);
  ck_assert_msg(!st, "create_subgraphs: %s", st ? fbx_status_message(st) : "");
  verify_ok(g);
  return n;
}

static bool value_rg(const fbx_graph *g, const bool *rg, const char *name) {
  fbx_value *v = fbx_graph_find_value(g, name);
  ck_assert_msg(v, "no value %%%s", name);
  return rg[v->id];
}

/* Nodes of kind k in block b (not recursing). */
static int count_kind(const fbx_block *b, fbx_sym k) {
  int c = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) c += n->kind == k;
  return c;
}

static const fbx_node *first_kind(const fbx_block *b, fbx_sym k) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next)
    if (n->kind == k) return n;
  return NULL;
}

static int count_nonconst(const fbx_graph *g) {
  int c = 0;
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next) c += n->kind != FBX_SYM_prim_Constant;
  return c;
}

/* ---- requires_grad ---------------------------------------------------------------- */

START_TEST(requires_grad_propagation) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %y : Tensor, %n : int, %c : bool):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::mul(%x, %x)\n"
      "  %s : int = aten::size(%a, %one)\n"
      "  %b : Tensor = aten::gt(%a, %y)\n"
      "  %l : Tensor[] = prim::ListConstruct(%a, %y)\n"
      "  %z : Tensor = aten::cat(%l, %one)\n"
      "  %i : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      -> (%y)\n"
      "    block1():\n"
      "      %t : Tensor = aten::neg(%a)\n"
      "      -> (%t)\n"
      "  %w : Tensor = prim::Loop(%n, %c, %y)\n"
      "    block0(%it : int, %acc : Tensor):\n"
      "      %acc2 : Tensor = aten::add(%acc, %a, %one)\n"
      "      -> (%c, %acc2)\n"
      "  %v : Tensor = prim::Loop(%n, %c, %y)\n"
      "    block0(%it2 : int, %acc3 : Tensor):\n"
      "      %acc4 : Tensor = aten::neg(%acc3)\n"
      "      -> (%c, %acc4)\n"
      "  return (%z, %i, %w, %v, %s, %b)\n");
  bool in[4] = {true, false, false, false}, *rg = NULL;
  ck_assert(!fbx_autodiff_requires_grad(g, in, &rg));
  ck_assert(value_rg(g, rg, "x"));
  ck_assert(!value_rg(g, rg, "y"));
  ck_assert(value_rg(g, rg, "a"));
  ck_assert(!value_rg(g, rg, "s")); /* int */
  ck_assert(!value_rg(g, rg, "n"));
  ck_assert(value_rg(g, rg, "l"));  /* Tensor[] holding a */
  ck_assert(value_rg(g, rg, "z"));
  ck_assert(value_rg(g, rg, "t"));
  ck_assert(value_rg(g, rg, "i")); /* one branch requires grad */
  /* a carried value that starts without grad and gets it in the body */
  ck_assert(value_rg(g, rg, "acc"));
  ck_assert(value_rg(g, rg, "acc2"));
  ck_assert(value_rg(g, rg, "w"));
  /* a carried value that never meets x */
  ck_assert(!value_rg(g, rg, "acc3"));
  ck_assert(!value_rg(g, rg, "v"));
  free(rg);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(requires_grad_integer_tensors) {
  fbx_graph *g = parse(
      "graph(%x : Float(2, 3), %k : Long(2, 3)):\n"
      "  %a : Float(2, 3) = aten::mul(%x, %x)\n"
      "  %b : Long(2, 3) = aten::argmax(%a)\n"
      "  %c : Float(2, 3) = aten::mul(%k, %k)\n"
      "  return (%b, %c)\n");
  bool in[2] = {true, true}, *rg = NULL;
  ck_assert(!fbx_autodiff_requires_grad(g, in, &rg));
  ck_assert(value_rg(g, rg, "a"));
  ck_assert(!value_rg(g, rg, "k")); /* an integer tensor never requires grad */
  ck_assert(!value_rg(g, rg, "b"));
  ck_assert(!value_rg(g, rg, "c"));
  free(rg);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- grouping on small graphs ------------------------------------------------------- */

START_TEST(ratio_iou_one_group) {
  char *text = tu_read_file(tu_src_path("examples/ratio_iou.ir"), NULL);
  ck_assert(text);
  fbx_graph *g = parse(text);
  free(text);
  int before = count_nonconst(g);
  bool *rg = all_inputs(g, true);
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next)
    if (n->kind != FBX_SYM_prim_Constant && !fbx_grad_has_formula(n)) {
      printf("ratio_iou_one_group: skipped, %s has no gradient formula yet\n", fbx_sym_str(n->kind));
      free(rg);
      fbx_graph_destroy(g);
      return;
    }
  ck_assert_int_eq(create(g, rg, 2), 1);
  /* all 20 pointwise nodes in one group, nothing left beside it */
  ck_assert_int_eq(count_nonconst(g), 1);
  const fbx_node *dg = first_kind(g->block, FBX_SYM_prim_DifferentiableGraph);
  ck_assert(dg);
  ck_assert_int_eq(count_nonconst(fbx_node_subgraph(dg)), before);
  ck_assert_int_eq(dg->ninputs, 8);
  ck_assert_int_eq(dg->noutputs, 1);
  /* its constants came along; none is left outside */
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), 0);
  ck_assert_int_gt(count_kind(fbx_node_subgraph(dg)->block, FBX_SYM_prim_Constant), 0);
  /* idempotent */
  char *p1 = fbx_graph_print(g);
  ck_assert_int_eq(create(g, rg, 2), 0);
  char *p2 = fbx_graph_print(g);
  ck_assert_str_eq(p1, p2);
  free(p1);
  free(p2);
  free(rg);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(nothing_requires_grad) {
  char *text = tu_read_file(tu_src_path("examples/ratio_iou.ir"), NULL);
  fbx_graph *g = parse(text);
  free(text);
  bool *rg = all_inputs(g, false);
  ck_assert_int_eq(create(g, rg, 1), 0);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), 0);
  free(rg);
  fbx_graph_destroy(g);
}
END_TEST

static const char *chain3 =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %b : Tensor = aten::tanh(%a)\n"
    "  %c : Tensor = aten::exp(%b)\n"
    "  return (%c)\n";

START_TEST(min_size_respected) {
  for (int min = 1; min <= 4; min++) {
    fbx_graph *g = parse(chain3);
    bool rg[2] = {true, true};
    ck_assert_int_eq(create(g, rg, min), min <= 3 ? 1 : 0);
    ck_assert_int_eq(count_nonconst(g), min <= 3 ? 1 : 3);
    fbx_graph_destroy(g);
  }
}
END_TEST

/* A node alone forms a DifferentiableGraph when its own backward is a
 * graph (FBX_AUTODIFF_SOLO_BACKWARD_OPS compute ops or more): gelu,
 * softmax, log_softmax, a loss; not mul or tanh, whose backward is one or
 * three pointwise ops, nor layer_norm, whose backward is one row kernel
 * (fusebox::layer_norm_backward). */
/* Groups made of `op_line` alone; a group must hold `members` non-constant
 * nodes (the op and the lists it reads). */
static int solo_groups(const char *op_line, int nin, int members) {
  char text[1024];
  snprintf(text, sizeof text,
           "graph(%%x : Float(4, 8), %%w : Float(8), %%b : Float(8), %%t : Float(4, 8)):\n"
           "  %%none : NoneType = prim::Constant()\n"
           "  %%eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
           "  %%true : bool = prim::Constant[value=1]()\n"
           "  %%dim : int = prim::Constant[value=1]()\n"
           "  %%red : int = prim::Constant[value=1]()\n"
           "  %%approx : str = prim::Constant[value=\"none\"]()\n"
           "  %%n8 : int = prim::Constant[value=8]()\n"
           "  %%shape : int[] = prim::ListConstruct(%%n8)\n"
           "  %%y : Tensor = %s\n"
           "  return (%%y)\n",
           op_line);
  fbx_graph *g = parse(text);
  bool rg[4] = {true, nin > 1, nin > 2, false};
  int n = create(g, rg, 2);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), n);
  if (n) {
    const fbx_node *dg = first_kind(g->block, FBX_SYM_prim_DifferentiableGraph);
    ck_assert_int_eq(count_nonconst(fbx_node_subgraph(dg)), members);
  }
  ck_assert_int_eq(create(g, rg, 2), 0); /* idempotent */
  fbx_graph_destroy(g);
  return n;
}

START_TEST(composite_node_alone) {
  ck_assert_int_eq(solo_groups("aten::layer_norm(%x, %shape, %w, %b, %eps, %true)", 3, 2), 0);
  ck_assert_int_eq(solo_groups("aten::gelu(%x, %approx)", 1, 1), 1);
  ck_assert_int_eq(solo_groups("aten::softmax(%x, %dim, %none)", 1, 1), 1);
  ck_assert_int_eq(solo_groups("aten::log_softmax(%x, %dim, %none)", 1, 1), 1);
  ck_assert_int_eq(solo_groups("aten::mse_loss(%x, %t, %red)", 1, 1), 1);
  ck_assert_int_eq(solo_groups("aten::mul(%x, %t)", 1, 1), 0);
  ck_assert_int_eq(solo_groups("aten::tanh(%x)", 1, 1), 0);
  ck_assert_int_eq(solo_groups("aten::sum(%x, %none)", 1, 1), 0);
  /* min_size 1 is unchanged: every candidate */
  fbx_graph *g = parse("graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n  return (%y)\n");
  bool rg[1] = {true};
  ck_assert_int_eq(create(g, rg, 1), 1);
  fbx_graph_destroy(g);
}
END_TEST

/* Only y requires grad: x*x does not touch it and stays out. */
START_TEST(only_nodes_touching_grad) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %a : Tensor = aten::mul(%x, %x)\n"
      "  %b : Tensor = aten::mul(%a, %y)\n"
      "  %c : Tensor = aten::exp(%b)\n"
      "  return (%c)\n");
  bool rg[2] = {false, true};
  ck_assert_int_eq(create(g, rg, 2), 1);
  const fbx_node *first = fbx_block_first(g->block);
  ck_assert_str_eq(fbx_sym_str(first->kind), "aten::mul");
  const fbx_node *dg = first_kind(g->block, FBX_SYM_prim_DifferentiableGraph);
  ck_assert_int_eq(count_nonconst(fbx_node_subgraph(dg)), 2);
  fbx_graph_destroy(g);
}
END_TEST

/* Groups form inside loop and if bodies, never across their boundary. */
START_TEST(groups_within_blocks) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %n : int, %c : bool):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::tanh(%x)\n"
      "  %w : Tensor = prim::Loop(%n, %c, %a)\n"
      "    block0(%it : int, %acc : Tensor):\n"
      "      %p : Tensor = aten::mul(%acc, %a)\n"
      "      %q : Tensor = aten::tanh(%p)\n"
      "      %r : Tensor = aten::add(%q, %x, %one)\n"
      "      -> (%c, %r)\n"
      "  %i : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %s : Tensor = aten::exp(%w)\n"
      "      %t : Tensor = aten::neg(%s)\n"
      "      -> (%t)\n"
      "    block1():\n"
      "      -> (%w)\n"
      "  %o : Tensor = aten::sigmoid(%i)\n"
      "  return (%o)\n");
  bool rg[3] = {true, false, false};
  ck_assert_int_eq(create(g, rg, 2), 2);
  const fbx_node *loop = first_kind(g->block, FBX_SYM_prim_Loop), *iff = first_kind(g->block, FBX_SYM_prim_If);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), 0); /* tanh, sigmoid: one node each */
  ck_assert_int_eq(count_kind(loop->blocks[0], FBX_SYM_prim_DifferentiableGraph), 1);
  ck_assert_int_eq(count_nonconst(fbx_node_subgraph(first_kind(loop->blocks[0], FBX_SYM_prim_DifferentiableGraph))),
                   3);
  ck_assert_int_eq(count_kind(iff->blocks[0], FBX_SYM_prim_DifferentiableGraph), 1);
  /* with min_size 1 the outer nodes form groups of their own */
  ck_assert_int_eq(create(g, rg, 1), 2);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), 2);
  fbx_graph_destroy(g);
}
END_TEST

/* An in-place op stays outside, and so does everything that may share
 * storage with the tensor it writes. */
START_TEST(inplace_stays_outside) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::mul(%x, %y)\n"
      "  %b : Tensor = aten::exp(%a)\n"
      "  %v : Tensor = aten::t(%b)\n"
      "  %c : Tensor = aten::sigmoid(%y)\n"
      "  %d : Tensor = aten::add_(%v, %c, %one)\n"
      "  %e : Tensor = aten::tanh(%x)\n"
      "  %f : Tensor = aten::mul(%e, %c)\n"
      "  return (%b, %f)\n");
  bool rg[2] = {true, true};
  create(g, rg, 1);
  /* b (written through its view v), v, and the add_ itself stay as they are */
  const char *outside[] = {"b", "v", "d"};
  for (int i = 0; i < 3; i++) {
    fbx_value *v = fbx_graph_find_value(g, outside[i]);
    ck_assert_msg(v && v->node->owner == g->block && v->node->kind != FBX_SYM_prim_DifferentiableGraph,
                  "%%%s was grouped", outside[i]);
  }
  ck_assert_ptr_null(fbx_graph_find_value(g, "f")); /* tanh, mul: grouped */
  fbx_graph_destroy(g);
}
END_TEST

/* A non-member that depends on the group and feeds nothing back moves
 * below it; one that would make the group non-convex keeps them apart. */
START_TEST(convexity) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::tanh(%x)\n"
      "  %s : int = aten::size(%a, %one)\n"
      "  %b : Tensor = aten::sigmoid(%a)\n"
      "  %r : Tensor = aten::rand_like(%a)\n"
      "  %c : Tensor = aten::mul(%b, %r)\n"
      "  %d : Tensor = aten::exp(%c)\n"
      "  return (%d, %s)\n");
  bool rg[2] = {true, true};
  ck_assert_int_eq(create(g, rg, 2), 2);
  /* rand_like(a) between {tanh, sigmoid} and {mul, exp}: merging would put a
   * path a -> rand_like -> mul outside the group */
  const fbx_node *n = fbx_block_first(g->block);
  int seen = 0;
  for (; n; n = n->next) seen += n->kind == FBX_SYM_prim_DifferentiableGraph;
  ck_assert_int_eq(seen, 2);
  fbx_graph_destroy(g);
}
END_TEST

/* chunk -> ListUnpack -> pointwise: the unpack joins; a list built for cat
 * joins when cat does. */
START_TEST(lists_join) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %two : int = prim::Constant[value=2]()\n"
      "  %a : Tensor = aten::mul(%x, %y)\n"
      "  %l : Tensor[] = aten::chunk(%a, %two, %one)\n"
      "  %p : Tensor, %q : Tensor = prim::ListUnpack(%l)\n"
      "  %s : Tensor = aten::sigmoid(%p)\n"
      "  %t : Tensor = aten::tanh(%q)\n"
      "  %m : Tensor[] = prim::ListConstruct(%s, %t)\n"
      "  %c : Tensor = aten::cat(%m, %one)\n"
      "  return (%c)\n");
  bool rg[2] = {true, true};
  const fbx_node *chunk = fbx_graph_find_value(g, "l")->node, *cat = fbx_graph_find_value(g, "c")->node;
  if (!fbx_grad_has_formula(chunk) || !fbx_grad_has_formula(cat)) {
    /* shape formulas come with the reduce/linalg/shape list */
    printf("lists_join: skipped, aten::chunk or aten::cat has no gradient formula yet\n");
    fbx_graph_destroy(g);
    return;
  }
  ck_assert_int_eq(create(g, rg, 2), 1);
  ck_assert_int_eq(count_nonconst(g), 1);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- the corpus ------------------------------------------------------------------------ */

/* The case's inputs (failing the test when they cannot be read); is_float[i]
 * for floating tensors, the inputs that require grad. */
static int load_args(const char *name, fbx_ivalue *in, bool *is_float, int cap) {
  fbx_strbuf why = {0};
  int n = cc_load_inputs(name, in, cap, &why);
  ck_assert_msg(n >= 0, "%s: %s", name, why.data);
  for (int i = 0; i < n; i++) is_float[i] = in[i].kind == FBX_IV_TENSOR && fbx_dtype_is_floating(in[i].u.t->dtype);
  return n;
}

static fbx_status *run_subgraph(void *ctx, const fbx_node *node, const fbx_ivalue *inputs, int nin,
                                fbx_ivalue *outputs, int nout) {
  (void)ctx;
  (void)nout;
  fbx_interp *it = NULL;
  FBX_TRY(fbx_interp_create(&it, fbx_node_subgraph(node)));
  fbx_status *st = fbx_interp_run(it, inputs, nin, outputs, NULL);
  fbx_interp_destroy(it);
  return st;
}

static bool iv_identical(const fbx_ivalue *a, const fbx_ivalue *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case FBX_IV_TENSOR: {
      const fbx_tensor *x = a->u.t, *y = b->u.t;
      if (x->dtype != y->dtype || !fbx_tensor_same_shape(x, y)) return false;
      for (int64_t i = 0; i < x->numel; i++) {
        double p = fbx_tensor_get_f64(x, i), q = fbx_tensor_get_f64(y, i);
        if (!(p == q || (isnan(p) && isnan(q)))) return false;
      }
      return true;
    }
    case FBX_IV_TUPLE:
    case FBX_IV_LIST:
      if (a->u.l->n != b->u.l->n) return false;
      for (int i = 0; i < a->u.l->n; i++)
        if (!iv_identical(&a->u.l->items[i], &b->u.l->items[i])) return false;
      return true;
    case FBX_IV_INT: return a->u.i == b->u.i;
    case FBX_IV_FLOAT: return a->u.f == b->u.f || (isnan(a->u.f) && isnan(b->u.f));
    case FBX_IV_BOOL: return a->u.b == b->u.b;
    default: return true;
  }
}

static bool block_is_clean(const fbx_block *b, const char **why) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (n->nblocks) *why = "control flow";
    else if (fbx_node_has_side_effects(n)) *why = "a side effect";
    else if (fbx_node_is_mutating(n) || fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE)) *why = "an in-place op";
    else continue;
    return false;
  }
  return true;
}

/* Every DifferentiableGraph in b (recursively) is clean; returns their count. */
static int check_groups(const char *name, const fbx_block *b) {
  int c = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) c += check_groups(name, n->blocks[k]);
    if (n->kind != FBX_SYM_prim_DifferentiableGraph) continue;
    const char *why = NULL;
    ck_assert_msg(block_is_clean(fbx_node_subgraph(n)->block, &why), "%s: a group holds %s", name, why);
    c++;
  }
  return c;
}

START_TEST(corpus_structure) {
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int ncases = cc_list(&names);
  int groups = 0, ran = 0, with_groups = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = names[c];
    fbx_graph *g = NULL;
    if (fbx_graph_parse_file(&g, cc_path(name, "graph.ir"))) continue;
    fbx_ivalue in[32] = {0};
    bool is_float[32] = {0};
    int nin = load_args(name, in, is_float, 32);
    ck_assert_int_eq(nin, fbx_graph_ninputs(g));
    /* what the original computes, when the interpreter can run it */
    fbx_interp *it = NULL;
    fbx_ivalue want[16] = {0}, got[16] = {0};
    int nout = fbx_graph_noutputs(g);
    bool runs = nout <= 16 && !fbx_interp_create(&it, g);
    if (runs) {
      fbx_status *st = fbx_interp_run(it, in, nin, want, NULL);
      runs = !st;
      fbx_status_free(st);
    }
    fbx_interp_destroy(it);
    int n = create(g, is_float, 2);
    char *p1 = fbx_graph_print(g);
    int found = check_groups(name, g->block);
    ck_assert_int_eq(found, n);
    groups += n;
    with_groups += n > 0;
    /* idempotent */
    ck_assert_int_eq(create(g, is_float, 2), 0);
    char *p2 = fbx_graph_print(g);
    ck_assert_msg(!strcmp(p1, p2), "%s: a second create_subgraphs changed the graph", name);
    free(p1);
    free(p2);
    if (runs && n) {
      fbx_run_opts opts = {.run_group = run_subgraph};
      ck_assert(!fbx_interp_create(&it, g));
      fbx_status *st = fbx_interp_run(it, in, nin, got, &opts);
      ck_assert_msg(!st, "%s: the grouped graph fails: %s", name, st ? fbx_status_message(st) : "");
      for (int k = 0; k < nout; k++)
        ck_assert_msg(iv_identical(&got[k], &want[k]), "%s: output %d differs after grouping", name, k);
      fbx_interp_destroy(it);
      ran++;
    }
    printf("  %-28s %d group%s%s\n", name, n, n == 1 ? "" : "s", runs && n ? ", same outputs" : "");
    for (int k = 0; k < nout && k < 16; k++) {
      fbx_iv_release(&want[k]);
      fbx_iv_release(&got[k]);
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&in[i]);
    fbx_graph_destroy(g);
  }
  cc_free_names(names, ncases);
  printf("create_subgraphs: %d corpus graphs, %d with groups (%d groups), %d grouped graphs run identically\n",
         ncases, with_groups, groups, ran);
  if (!cc_list_filtered()) ck_assert_int_ge(ncases, 50);
  /* many cases are one op per output (no group of two); 43 group today */
  if (!cc_list_filtered()) ck_assert_int_ge(with_groups, 40);
}
END_TEST

/* ---- differentiate: PyTorch's gradients on the corpus ------------------------------ */

typedef struct missing_ops {
  char *names[128];
  int counts[128];
  int n;
} missing_ops;

static void note_missing(missing_ops *m, const char *kind) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->names[i], kind)) {
      m->counts[i]++;
      return;
    }
  if (m->n < 128) {
    m->names[m->n] = strdup(kind);
    m->counts[m->n++] = 1;
  }
}

static bool straight_line(const fbx_graph *g) {
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next)
    if (n->nblocks) return false;
  return true;
}

/* A graph returning one tuple returns its elements instead (the corpus
 * flattens outputs depth-first; grad_outK follows that order). */
static bool flatten_tuple_return(fbx_graph *g) {
  if (fbx_graph_noutputs(g) != 1) return true;
  fbx_value *r = fbx_graph_output(g, 0);
  if (r->node->kind != FBX_SYM_prim_TupleConstruct) return r->type->kind != FBX_TYPE_TUPLE;
  fbx_node *tc = r->node;
  for (int i = 0; i < tc->ninputs; i++)
    if (tc->inputs[i]->type->kind == FBX_TYPE_TUPLE) return false;
  fbx_block_erase_return(g->block, 0);
  for (int i = 0; i < tc->ninputs; i++) ck_assert(!fbx_block_add_return(g->block, tc->inputs[i]));
  if (!r->nuses) fbx_node_destroy(tc);
  return true;
}

/* Ops on the gradient path that have no formula (nodes with an output
 * requiring grad). Returns how many were noted. */
static int note_formula_gaps(const fbx_graph *g, const bool *in_rg, missing_ops *all, char *line, size_t cap) {
  bool *rg = NULL;
  ck_assert(!fbx_autodiff_requires_grad(g, in_rg, &rg));
  missing_ops here = {0};
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next) {
    if (n->kind == FBX_SYM_prim_Constant || n->kind == FBX_SYM_prim_ListConstruct ||
        n->kind == FBX_SYM_prim_ListUnpack || n->kind == FBX_SYM_prim_TupleConstruct ||
        n->kind == FBX_SYM_prim_TupleUnpack)
      continue;
    bool on_path = false;
    for (int o = 0; o < n->noutputs; o++) on_path |= rg[n->outputs[o]->id];
    if (on_path && !fbx_grad_has_formula(n)) note_missing(&here, fbx_sym_str(n->kind));
  }
  size_t len = 0;
  line[0] = '\0';
  for (int i = 0; i < here.n; i++) {
    note_missing(all, here.names[i]);
    len += (size_t)snprintf(line + len, len < cap ? cap - len : 0, "%s%s", i ? ", " : "", here.names[i]);
    free(here.names[i]);
  }
  free(rg);
  return here.n;
}

static fbx_status *run_graph(const fbx_graph *g, const fbx_ivalue *in, int nin, fbx_ivalue *out) {
  fbx_interp *it = NULL;
  FBX_TRY(fbx_interp_create(&it, g));
  fbx_status *st = fbx_interp_run(it, in, nin, out, NULL);
  fbx_interp_destroy(it);
  return st;
}

/* Run F, then B with the given output gradients; grads[i] gets the
 * gradient of S input i (None where B gives none). */
static fbx_status *forward_backward(const fbx_gradient *gr, const fbx_graph *fwd, const fbx_ivalue *in, int nin,
                                    const fbx_ivalue *gout, int ngout, fbx_ivalue *grads) {
  int nf = fbx_graph_noutputs(fwd), nb = fbx_graph_ninputs(gr->backward);
  fbx_ivalue *fo = calloc((size_t)nf + 1, sizeof *fo), *bin = calloc((size_t)nb + 1, sizeof *bin),
             *bout = calloc((size_t)gr->ngrads + 1, sizeof *bout);
  fbx_status *st = run_graph(fwd, in, nin, fo);
  if (!st) {
    ck_assert_int_eq(nb, ngout + gr->nsaved);
    for (int k = 0; k < ngout; k++) bin[k] = gout[k];
    for (int s = 0; s < gr->nsaved; s++) {
      fbx_saved_ref r = gr->saved[s];
      ck_assert(r.index >= 0 && r.index < (r.from_forward ? nf : nin));
      bin[ngout + s] = r.from_forward ? fo[r.index] : in[r.index];
    }
    st = run_graph(gr->backward, bin, nb, bout);
  }
  for (int k = 0; !st && k < gr->ngrads; k++) {
    grads[gr->grad_of[k]] = bout[k];
    bout[k] = fbx_iv_none();
  }
  for (int k = 0; k < nf; k++) fbx_iv_release(&fo[k]);
  for (int k = 0; k < gr->ngrads; k++) fbx_iv_release(&bout[k]);
  free(fo);
  free(bin);
  free(bout);
  return st;
}

typedef enum gverdict { G_PASS, G_FAIL, G_SKIP } gverdict;

static gverdict grad_case(const char *name, missing_ops *missing, char *why, size_t cap, int *ncompared) {
  fbx_graph *g = NULL;
  gverdict v = G_SKIP;
  fbx_ivalue in[32] = {0}, gout[16] = {0}, grads[32] = {0};
  bool is_float[32] = {0}, defined[16] = {0};
  int nin = 0, ngout = 0, nout = 0;
  fbx_gradient *gr = NULL;
  snprintf(why, cap, "?");
  if (fbx_graph_parse_file(&g, cc_path(name, "graph.ir"))) {
    snprintf(why, cap, "does not parse");
    goto done;
  }
  /* as the executor would: constant conditions fold away (dropout's
   * `if training`, F.functions' argument checks) */
  fbx_status *pst = fbx_pass_pipeline(g, "default");
  ck_assert_msg(!pst, "%s: passes: %s", name, pst ? fbx_status_message(pst) : "");
  if (!straight_line(g)) {
    snprintf(why, cap, "control flow");
    goto done;
  }
  if (!flatten_tuple_return(g)) {
    snprintf(why, cap, "nested tuple outputs");
    goto done;
  }
  nin = load_args(name, in, is_float, 32);
  nout = fbx_graph_noutputs(g);
  ck_assert(nout <= 16);
  fbx_ivalue sparse[16];
  fbx_strbuf gw = {0};
  ck_assert_msg(cc_load_grad_outputs(name, sparse, defined, nout, &gw) >= 0, "%s: %s", name, gw.data);
  for (int k = 0; k < nout; k++)
    if (defined[k]) gout[ngout++] = sparse[k];
  char gaps[512];
  if (note_formula_gaps(g, is_float, missing, gaps, sizeof gaps)) {
    snprintf(why, cap, "missing formula%s: %s", strchr(gaps, ',') ? "s" : "", gaps);
    goto done;
  }
  fbx_status *st = fbx_autodiff_differentiate(&gr, g, is_float, defined);
  if (st) {
    v = fbx_status_code(st) == FBX_ERR_UNSUPPORTED ? G_SKIP : G_FAIL;
    snprintf(why, cap, "differentiate: %s", fbx_status_message(st));
    fbx_status_free(st);
    goto done;
  }
  if ((st = forward_backward(gr, gr->forward, in, nin, gout, ngout, grads))) {
    v = G_FAIL;
    snprintf(why, cap, "running F and B: %s", fbx_status_message(st));
    fbx_status_free(st);
    goto done;
  }
  v = G_PASS;
  for (int i = 0; i < nin && v == G_PASS; i++) {
    if (!is_float[i]) continue;
    bool compared;
    fbx_strbuf w = {0};
    if (!cc_check_input_grad(name, fbx_graph_input(g, i)->name, &grads[i], &compared, &w)) {
      v = G_FAIL;
      snprintf(why, cap, "%s", w.data);
    }
    *ncompared += compared;
    fbx_strbuf_free(&w);
  }
  if (v == G_FAIL) {
    char *b = fbx_graph_print(gr->backward);
    fprintf(stderr, "%s: backward graph:\n%s\n", name, b);
    free(b);
  }
done:
  fbx_gradient_free(gr);
  for (int i = 0; i < 32; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&grads[i]);
  }
  for (int k = 0; k < 16; k++) fbx_iv_release(&gout[k]);
  fbx_graph_destroy(g);
  return v;
}

START_TEST(corpus_gradients) {
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int ncases = cc_list(&names);
  int pass = 0, fail = 0, skip = 0, with_grads = 0, compared = 0;
  missing_ops missing = {0};
  for (int c = 0; c < ncases; c++) {
    if (cc_has_input_grads(names[c])) {
      with_grads++;
      char why[1024];
      gverdict v = grad_case(names[c], &missing, why, sizeof why, &compared);
      if (v == G_PASS) printf("  PASS %s\n", names[c]);
      else printf("  %s %s: %s\n", v == G_FAIL ? "FAIL" : "skip", names[c], why);
      pass += v == G_PASS;
      fail += v == G_FAIL;
      skip += v == G_SKIP;
    }
  }
  cc_free_names(names, ncases);
  printf("differentiate: %d corpus cases with gradients: %d match PyTorch (%d input gradients), %d fail, %d skipped\n",
         with_grads, pass, compared, fail, skip);
  if (missing.n) {
    printf("ops without a gradient formula (cases needing them):");
    for (int i = 0; i < missing.n; i++) {
      printf("%s %s (%d)", i ? "," : "", missing.names[i], missing.counts[i]);
      free(missing.names[i]);
    }
    printf("\n");
  }
  fflush(stdout);
  if (!cc_list_filtered()) ck_assert_int_ge(with_grads, 40);
  ck_assert_msg(fail == 0, "%d corpus cases give gradients that differ from PyTorch's; see above", fail);
  /* 51 today; fewer means cases that used to be differentiated no longer are */
  if (!cc_list_filtered()) ck_assert_int_ge(pass, 51);
}
END_TEST

/* ---- differentiate: structure, masks, finite differences ---------------------------- */

/* Three outputs; %a feeds two nodes (accumulation), %b is both an output
 * and an intermediate (saved as the output it already is), %y is read by
 * three nodes. */
static const char *multi =
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %b : Tensor = aten::tanh(%a)\n"
    "  %c : Tensor = aten::exp(%a)\n"
    "  %d : Tensor = aten::div(%b, %y)\n"
    "  %e : Tensor = aten::add(%d, %c, %one)\n"
    "  return (%b, %e, %c)\n";

#define NX 6
static const int64_t sizes23[2] = {2, 3};

static fbx_ivalue f64_tensor(const double *v) {
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 2, sizes23, v));
  return fbx_iv_tensor(t);
}

/* sum over defined k of G_k * out_k, for the forward at inputs (x, y) */
static double weighted_loss(const fbx_graph *g, const double *x, const double *y, const double (*G)[NX],
                            const bool *defined) {
  fbx_ivalue in[2] = {f64_tensor(x), f64_tensor(y)}, out[3] = {0};
  ck_assert(!run_graph(g, in, 2, out));
  double L = 0;
  for (int k = 0; k < 3; k++) {
    if (defined[k])
      for (int e = 0; e < NX; e++) L += G[k][e] * fbx_tensor_get_f64(out[k].u.t, e);
    fbx_iv_release(&out[k]);
  }
  fbx_iv_release(&in[0]);
  fbx_iv_release(&in[1]);
  return L;
}

/* B (from differentiate or respecialize, with F = fwd) against central
 * differences of the weighted loss. */
static void check_against_fd(const fbx_graph *S, const fbx_gradient *gr, const fbx_graph *fwd, const bool *defined) {
  double x[NX] = {0.3, -0.7, 1.1, 0.05, -1.3, 0.9}, y[NX] = {0.6, 1.4, -0.8, 1.9, 0.7, -1.2};
  double G[3][NX] = {{0.5, -1, 0.25, 2, -0.3, 1}, {1, 0.2, -0.7, 0.4, 0.9, -1.5}, {-0.6, 0.3, 1.2, -0.1, 0.8, 0.5}};
  fbx_ivalue in[2] = {f64_tensor(x), f64_tensor(y)}, gout[3] = {0}, grads[2] = {0};
  int ngout = 0;
  for (int k = 0; k < 3; k++)
    if (defined[k]) gout[ngout++] = f64_tensor(G[k]);
  fbx_status *st = forward_backward(gr, fwd, in, 2, gout, ngout, grads);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  bool any = defined[0] || defined[1] || defined[2];
  double *vars[2] = {x, y};
  for (int i = 0; i < 2; i++) {
    if (!any) {
      ck_assert_int_eq(grads[i].kind, FBX_IV_NONE);
      continue;
    }
    ck_assert_int_eq(grads[i].kind, FBX_IV_TENSOR);
    for (int e = 0; e < NX; e++) {
      double keep = vars[i][e], h = 1e-6;
      vars[i][e] = keep + h;
      double up = weighted_loss(S, x, y, G, defined);
      vars[i][e] = keep - h;
      double down = weighted_loss(S, x, y, G, defined);
      vars[i][e] = keep;
      double fd = (up - down) / (2 * h), an = fbx_tensor_get_f64(grads[i].u.t, e);
      ck_assert_msg(fabs(fd - an) <= 1e-6 + 1e-6 * fabs(fd), "input %d element %d: analytic %.12g, numeric %.12g "
                    "(mask %d%d%d)", i, e, an, fd, defined[0], defined[1], defined[2]);
    }
  }
  for (int k = 0; k < 3; k++) fbx_iv_release(&gout[k]);
  for (int i = 0; i < 2; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&grads[i]);
  }
}

START_TEST(split_structure) {
  fbx_graph *S = parse(multi);
  bool rg[2] = {true, true};
  fbx_gradient *gr = NULL;
  fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  verify_ok(gr->forward);
  verify_ok(gr->backward);
  ck_assert_int_eq(gr->nreal_outputs, 3);
  ck_assert_int_eq(gr->ngrads, 2);
  ck_assert_int_eq(gr->grad_of[0], 0);
  ck_assert_int_eq(gr->grad_of[1], 1);
  /* B's inputs: three gradients, then the saved values, readably named */
  ck_assert_int_eq(fbx_graph_ninputs(gr->backward), 3 + gr->nsaved);
  ck_assert_str_eq(fbx_graph_input(gr->backward, 0)->name, "grad_b");
  ck_assert_str_eq(fbx_graph_input(gr->backward, 1)->name, "grad_e");
  ck_assert_str_eq(fbx_graph_input(gr->backward, 2)->name, "grad_c");
  int extra = 0;
  for (int s = 0; s < gr->nsaved; s++) {
    fbx_saved_ref r = gr->saved[s];
    const fbx_value *in = fbx_graph_input(gr->backward, 3 + s);
    ck_assert_msg(!strncmp(in->name, "saved_", 6), "B input %s", in->name);
    ck_assert(in->nuses > 0); /* nothing saved that B does not read */
    if (!r.from_forward) continue;
    const char *fname = fbx_graph_output(gr->forward, r.index)->name;
    /* b and c are outputs already: referred to, not added again */
    if (!strcmp(fname, "b")) ck_assert_int_eq(r.index, 0);
    if (!strcmp(fname, "c")) ck_assert_int_eq(r.index, 2);
    if (r.index >= 3) extra++;
    for (int t = 0; t < s; t++)
      ck_assert(!(gr->saved[t].from_forward && gr->saved[t].index == r.index)); /* deduplicated */
  }
  ck_assert_int_eq(fbx_graph_noutputs(gr->forward), 3 + extra);
  /* constants are copied, never saved */
  for (int s = 0; s < gr->nsaved; s++)
    if (gr->saved[s].from_forward)
      ck_assert(fbx_graph_output(gr->forward, gr->saved[s].index)->node->kind != FBX_SYM_prim_Constant);
  fbx_gradient_free(gr);
  fbx_graph_destroy(S);
}
END_TEST

/* Lists of constants (layer_norm's normalized_shape, sum's dims) are
 * rebuilt in B like constants, never saved: saved, they were extra
 * outputs of F, and an eager tape entry ran F (the op again) on every
 * forward just to hand them over (issue 16). */
START_TEST(const_lists_not_saved) {
  static const char *graphs[] = {
      "graph(%x : Tensor, %w : Tensor, %b : Tensor):\n"
      "  %n : int = prim::Constant[value=4]()\n"
      "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %shape : int[] = prim::ListConstruct(%n)\n"
      "  %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %t)\n"
      "  return (%y)\n",
      "graph(%x : Tensor):\n"
      "  %d0 : int = prim::Constant[value=0]()\n"
      "  %d1 : int = prim::Constant[value=-1]()\n"
      "  %f : bool = prim::Constant[value=0]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %dl : int[] = prim::ListConstruct(%d1, %d0)\n"
      "  %y : Tensor = aten::mean(%x, %dl, %f, %none)\n"
      "  return (%y)\n",
  };
  for (size_t gi = 0; gi < sizeof graphs / sizeof graphs[0]; gi++) {
    fbx_graph *S = parse(graphs[gi]);
    bool rg[3] = {true, true, true};
    fbx_gradient *gr = NULL;
    fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
    verify_ok(gr->forward);
    verify_ok(gr->backward);
    for (int k = 0; k < gr->nsaved; k++)
      ck_assert_msg(!gr->saved[k].from_forward || gr->saved[k].index < gr->nreal_outputs,
                    "graph %zu: saved value %d is an extra output of F (%%%s)", gi, k,
                    fbx_graph_output(gr->forward, gr->saved[k].index)->name);
    ck_assert_int_eq(fbx_graph_noutputs(gr->forward), gr->nreal_outputs);
    fbx_gradient_free(gr);
    fbx_graph_destroy(S);
  }
}
END_TEST

START_TEST(split_finite_differences) {
  fbx_graph *S = parse(multi);
  bool rg[2] = {true, true};
  fbx_gradient *base = NULL;
  ck_assert(!fbx_autodiff_differentiate(&base, S, rg, NULL));
  for (int m = 0; m < 8; m++) {
    bool defined[3] = {m & 1, (m >> 1) & 1, (m >> 2) & 1};
    /* a fresh split for this mask */
    fbx_gradient *gr = NULL;
    fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, defined);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
    check_against_fd(S, gr, gr->forward, defined);
    fbx_gradient_free(gr);
    /* base's forward and saved values, another backward */
    fbx_gradient *re = NULL;
    st = fbx_autodiff_respecialize(&re, S, base, rg, defined);
    ck_assert_msg(!st, "mask %d: %s", m, st ? fbx_status_message(st) : "");
    ck_assert_ptr_null(re->forward);
    ck_assert_int_eq(re->nsaved, base->nsaved);
    ck_assert_int_eq(fbx_graph_ninputs(re->backward), (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + base->nsaved);
    verify_ok(re->backward);
    check_against_fd(S, re, base->forward, defined);
    fbx_gradient_free(re);
  }
  fbx_gradient_free(base);
  fbx_graph_destroy(S);
}
END_TEST

/* A base split for output b alone saves nothing that exp's gradient needs
 * (its result c): respecializing for c must refuse. */
START_TEST(respecialize_needs_unsaved) {
  fbx_graph *S = parse(multi);
  bool rg[2] = {true, true}, only_b[3] = {true, false, false}, only_c[3] = {false, false, true};
  fbx_gradient *base = NULL, *re = NULL;
  ck_assert(!fbx_autodiff_differentiate(&base, S, rg, only_b));
  fbx_status *st = fbx_autodiff_respecialize(&re, S, base, rg, only_c);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(fbx_status_message(st), "%c"), "%s", fbx_status_message(st));
  fbx_status_free(st);
  ck_assert_ptr_null(re);
  fbx_gradient_free(base);
  fbx_graph_destroy(S);
}
END_TEST

/* Only x requires grad: B returns one gradient and saves less. */
START_TEST(partial_requires_grad) {
  fbx_graph *S = parse(multi);
  bool both[2] = {true, true}, only_x[2] = {true, false};
  fbx_gradient *a = NULL, *b = NULL;
  ck_assert(!fbx_autodiff_differentiate(&a, S, both, NULL));
  ck_assert(!fbx_autodiff_differentiate(&b, S, only_x, NULL));
  ck_assert_int_eq(b->ngrads, 1);
  ck_assert_int_eq(b->grad_of[0], 0);
  ck_assert_int_le(b->nsaved, a->nsaved);
  fbx_gradient_free(a);
  fbx_gradient_free(b);
  fbx_graph_destroy(S);
}
END_TEST

START_TEST(rejects_control_flow) {
  fbx_graph *S = parse(
      "graph(%x : Tensor, %c : bool):\n"
      "  %y : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %t : Tensor = aten::exp(%x)\n"
      "      -> (%t)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  return (%y)\n");
  bool rg[2] = {true, false};
  fbx_gradient *gr = NULL;
  fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  fbx_status_free(st);
  fbx_graph_destroy(S);
}
END_TEST

/* Every allocation failing in turn: a status, never a crash or a leak. */
START_TEST(split_out_of_memory) {
  fbx_graph *S = parse(multi);
  bool rg[2] = {true, true};
  fbx_gradient *warm = NULL;
  ck_assert(!fbx_autodiff_differentiate(&warm, S, rg, NULL)); /* formula templates parsed once */
  int failures = 0;
  for (long n = 0;; n++) {
    fbx_gradient *gr = NULL;
    fbx_alloc_fail_after(n);
    fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
    fbx_alloc_fail_after(-1);
    if (!st) {
      fbx_gradient_free(gr);
      break;
    }
    ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
    fbx_status_free(st);
    failures++;
  }
  ck_assert_int_gt(failures, 10);
  for (long n = 0;; n++) {
    fbx_graph *g = parse(multi);
    fbx_alloc_fail_after(n);
    fbx_status *st = fbx_autodiff_create_subgraphs(g, rg, 1, NULL);
    fbx_alloc_fail_after(-1);
    fbx_graph_destroy(g);
    if (!st) break;
    ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
    fbx_status_free(st);
  }
  fbx_gradient_free(warm);
  fbx_graph_destroy(S);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("autodiff_graph");
  TCase *tc = tcase_create("requires_grad");
  tcase_add_test(tc, requires_grad_propagation);
  tcase_add_test(tc, requires_grad_integer_tensors);
  suite_add_tcase(s, tc);
  tc = tcase_create("create_subgraphs");
  tcase_add_test(tc, ratio_iou_one_group);
  tcase_add_test(tc, nothing_requires_grad);
  tcase_add_test(tc, min_size_respected);
  tcase_add_test(tc, composite_node_alone);
  tcase_add_test(tc, only_nodes_touching_grad);
  tcase_add_test(tc, groups_within_blocks);
  tcase_add_test(tc, inplace_stays_outside);
  tcase_add_test(tc, convexity);
  tcase_add_test(tc, lists_join);
  suite_add_tcase(s, tc);
  tc = tcase_create("differentiate");
  tcase_add_test(tc, split_structure);
  tcase_add_test(tc, const_lists_not_saved);
  tcase_add_test(tc, split_finite_differences);
  tcase_add_test(tc, respecialize_needs_unsaved);
  tcase_add_test(tc, partial_requires_grad);
  tcase_add_test(tc, rejects_control_flow);
  tcase_add_test(tc, split_out_of_memory);
  suite_add_tcase(s, tc);
  tc = tcase_create("corpus");
  tcase_add_test(tc, corpus_structure);
  tcase_add_test(tc, corpus_gradients);
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
