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
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autodiff/autodiff.h"
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
    "  %b : Tensor = aten::sin(%a)\n"
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
      "  %a : Tensor = aten::sin(%x)\n"
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
      "  %o : Tensor = aten::cos(%i)\n"
      "  return (%o)\n");
  bool rg[3] = {true, false, false};
  ck_assert_int_eq(create(g, rg, 2), 2);
  const fbx_node *loop = first_kind(g->block, FBX_SYM_prim_Loop), *iff = first_kind(g->block, FBX_SYM_prim_If);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), 0); /* sin, cos: one node each */
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
      "  %a : Tensor = aten::sin(%x)\n"
      "  %s : int = aten::size(%a, %one)\n"
      "  %b : Tensor = aten::cos(%a)\n"
      "  %r : Tensor = aten::rand_like(%a)\n"
      "  %c : Tensor = aten::mul(%b, %r)\n"
      "  %d : Tensor = aten::exp(%c)\n"
      "  return (%d, %s)\n");
  bool rg[2] = {true, true};
  ck_assert_int_eq(create(g, rg, 2), 2);
  /* rand_like(a) between {sin, cos} and {mul, exp}: merging would put a
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

static const char *case_file(const char *name, const char *file) {
  static char buf[4][4096];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 4096, "%s/%s/%s", tu_src_path("tests/corpus/cases"), name, file);
  return p;
}

/* Inputs from the case's args file; *is_float[i] for floating tensors. */
static int load_args(const char *name, fbx_ivalue *in, bool *is_float, int cap) {
  char *text = tu_read_file(case_file(name, "args"), NULL);
  if (!text) return -1;
  int n = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l && n < cap; l = strtok_r(NULL, "\n", &save)) {
    while (*l == ' ') l++;
    size_t len = strlen(l);
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\r')) l[--len] = '\0';
    if (!len) continue;
    is_float[n] = false;
    if (len > 4 && !strcmp(l + len - 4, ".npy")) {
      fbx_tensor *t = NULL;
      fbx_status *st = fbx_npy_read_file(&t, case_file(name, l));
      ck_assert_msg(!st, "%s: %s", name, st ? fbx_status_message(st) : "");
      is_float[n] = fbx_dtype_is_floating(t->dtype);
      in[n] = fbx_iv_tensor(t);
    } else if (!strcmp(l, "None")) {
      in[n] = fbx_iv_none();
    } else if (!strcmp(l, "true") || !strcmp(l, "false")) {
      in[n] = fbx_iv_bool(l[0] == 't');
    } else {
      char *end;
      long long i = strtoll(l, &end, 10);
      in[n] = *end ? fbx_iv_float(strtod(l, NULL)) : fbx_iv_int(i);
    }
    n++;
  }
  free(text);
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
  DIR *d = opendir(tu_src_path("tests/corpus/cases"));
  ck_assert(d);
  struct dirent *e;
  char *names[512];
  int ncases = 0;
  while ((e = readdir(d)) && ncases < 512)
    if (e->d_name[0] != '.') names[ncases++] = strdup(e->d_name);
  closedir(d);
  int groups = 0, ran = 0, with_groups = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = names[c];
    fbx_graph *g = NULL;
    if (fbx_graph_parse_file(&g, case_file(name, "graph.ir"))) {
      free(names[c]);
      continue;
    }
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
    free(names[c]);
  }
  printf("create_subgraphs: %d corpus graphs, %d with groups (%d groups), %d grouped graphs run identically\n",
         ncases, with_groups, groups, ran);
  ck_assert_int_ge(ncases, 50);
  /* many cases are one op per output (no group of two); about 40 have groups */
  ck_assert_int_ge(with_groups, 30);
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
  tcase_add_test(tc, only_nodes_touching_grad);
  tcase_add_test(tc, groups_within_blocks);
  tcase_add_test(tc, inplace_stays_outside);
  tcase_add_test(tc, convexity);
  tcase_add_test(tc, lists_join);
  suite_add_tcase(s, tc);
  tc = tcase_create("corpus");
  tcase_add_test(tc, corpus_structure);
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
