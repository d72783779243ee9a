/* The graph passes: table-driven cases on IR text, the corpus, idempotence,
 * off switches, logging and allocation failures.
 *
 * Each case gives an input graph, a comma list of passes, and the expected
 * graph written by hand from the pass semantics (passes.h). Graphs are
 * compared after renaming every value in definition order, so expected texts
 * may name values freely; everything else (order, types, attributes) must
 * match the printer's output exactly. The verifier runs after every pass. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "passes/passes.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------- */

static fbx_graph *parse(const char *text, const char *what) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), what);
  ck_assert_msg(st == NULL, "%s: parse: %s", what, fbx_status_message(st));
  return g;
}

static void assert_valid(const fbx_graph *g, const char *what) {
  fbx_status *st = fbx_graph_verify(g);
  if (st) {
    char *text = fbx_graph_print(g);
    ck_abort_msg("%s: verify: %s\n%s", what, fbx_status_message(st), text ? text : "");
  }
}

static unsigned canon_counter;

static void canon_block(fbx_block *b);

static void canon_value(fbx_value *v) {
  char name[32];
  snprintf(name, sizeof name, "v%u", canon_counter++);
  ck_assert_int_eq(fbx_value_set_name(v, name), 0);
}

static void canon_node(fbx_node *n) {
  for (int i = 0; i < n->noutputs; i++) canon_value(n->outputs[i]);
  for (int i = 0; i < n->nblocks; i++) canon_block(n->blocks[i]);
}

static void canon_block(fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(b); i++) canon_value(fbx_block_param(b, i));
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) canon_node(n);
}

/* The graph's text with values renamed v0, v1, ... in definition order. */
static char *canon_print(fbx_graph *g) {
  /* Two rounds so that a new name never meets an old one of the same spelling. */
  canon_counter = 1000000;
  canon_block(g->block);
  canon_counter = 0;
  canon_block(g->block);
  char *s = fbx_graph_print(g);
  ck_assert_ptr_nonnull(s);
  return s;
}

static char *print(const fbx_graph *g) {
  char *s = fbx_graph_print(g);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* Run the comma list one pass at a time, verifying after each. */
static bool run_passes(fbx_graph *g, const char *list, const char *what) {
  bool any = false;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    bool changed = true;
    fbx_status *st = fbx_pass_run_list(g, name, &changed);
    ck_assert_msg(st == NULL, "%s: pass %s: %s", what, name, fbx_status_message(st));
    char ctx[300];
    snprintf(ctx, sizeof ctx, "%s after %s", what, name);
    assert_valid(g, ctx);
    any |= changed;
  }
  return any;
}

typedef struct pass_case {
  const char *name;
  const char *passes;
  const char *input;
  const char *expected; /* NULL: the graph must come out unchanged (and changed=false) */
} pass_case;

static void run_case(const pass_case *c) {
  fbx_graph *g = parse(c->input, c->name);
  assert_valid(g, c->name);
  char *before = print(g);
  bool changed = run_passes(g, c->passes, c->name);
  char *after = print(g);
  const char *want_text = c->expected ? c->expected : c->input;
  fbx_graph *want = parse(want_text, c->name);
  char *got_canon = canon_print(g);
  char *want_canon = canon_print(want);
  ck_assert_msg(!strcmp(got_canon, want_canon), "%s (%s):\n--- input\n%s--- got\n%s--- expected\n%s", c->name,
                c->passes, before, after, want_text);
  if (c->expected)
    ck_assert_msg(changed, "%s: passes changed the graph but reported changed=false", c->name);
  else
    ck_assert_msg(!changed, "%s: graph unchanged but changed=true reported", c->name);
  fbx_free(before);
  fbx_free(after);
  fbx_free(got_canon);
  fbx_free(want_canon);
  fbx_graph_destroy(g);
  fbx_graph_destroy(want);
}

/* ---- dce -------------------------------------------------------------------------- */

static const pass_case dce_cases[] = {
    {"dce_dead_pure_chain", "dce",
     "graph(%x : Tensor, %unused : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : Tensor = aten::mul(%x, %x)\n"
     "  %b : Tensor = aten::relu(%a)\n"
     "  %y : Tensor = aten::add(%x, %x, %1)\n"
     "  return (%y)\n",
     "graph(%x : Tensor, %unused : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %y : Tensor = aten::add(%x, %x, %1)\n"
     "  return (%y)\n"},
    {"dce_keeps_side_effects", "dce",
     "graph(%x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %s : str = prim::Constant[value=\"hi\"]()\n"
     "  %a : Tensor = aten::add_(%x, %x, %1)\n"
     "  %b : Tensor = aten::mul(%x, %x)\n"
     "   = prim::Print(%s, %b)\n"
     "  %l : Tensor[] = prim::ListConstruct(%x)\n"
     "  %l2 : Tensor[] = aten::append(%l, %x)\n"
     "   = aten::warn(%s, %1)\n"
     "  %c : Tensor = aten::sigmoid(%x)\n"
     "  %d : Tensor = aten::__and__(%x, %x)\n"
     "  %r : Tensor = aten::rand_like(%x)\n"
     "  return (%x)\n",
     "graph(%x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %s : str = prim::Constant[value=\"hi\"]()\n"
     "  %a : Tensor = aten::add_(%x, %x, %1)\n"
     "  %b : Tensor = aten::mul(%x, %x)\n"
     "   = prim::Print(%s, %b)\n"
     "  %l : Tensor[] = prim::ListConstruct(%x)\n"
     "  %l2 : Tensor[] = aten::append(%l, %x)\n"
     "   = aten::warn(%s, %1)\n"
     "  return (%x)\n"},
    {"dce_if_unused_outputs", "dce",
     "graph(%x : Tensor, %c : bool):\n"
     "  %r : Tensor, %u : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a : Tensor = aten::relu(%x)\n"
     "      %b : Tensor = aten::neg(%x)\n"
     "      -> (%a, %b)\n"
     "    block1():\n"
     "      %d : Tensor = aten::sigmoid(%x)\n"
     "      -> (%x, %d)\n"
     "  return (%r)\n",
     "graph(%x : Tensor, %c : bool):\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a : Tensor = aten::relu(%x)\n"
     "      -> (%a)\n"
     "    block1():\n"
     "      -> (%x)\n"
     "  return (%r)\n"},
    {"dce_if_raise_kept_pure_if_removed", "dce",
     "graph(%x : Tensor, %c : bool):\n"
     "  %m : str = prim::Constant[value=\"bad\"]()\n"
     "   = prim::If(%c)\n"
     "    block0():\n"
     "       = prim::RaiseException(%m)\n"
     "      -> ()\n"
     "    block1():\n"
     "      -> ()\n"
     "  %t : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a : Tensor = aten::relu(%x)\n"
     "      -> (%a)\n"
     "    block1():\n"
     "      -> (%x)\n"
     "  return (%x)\n",
     "graph(%x : Tensor, %c : bool):\n"
     "  %m : str = prim::Constant[value=\"bad\"]()\n"
     "   = prim::If(%c)\n"
     "    block0():\n"
     "       = prim::RaiseException(%m)\n"
     "      -> ()\n"
     "    block1():\n"
     "      -> ()\n"
     "  return (%x)\n"},
    {"dce_loop_unused_carried", "dce",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %y : Tensor, %k : int = prim::Loop(%n, %t, %x, %1)\n"
     "    block0(%i : int, %acc : Tensor, %kk : int):\n"
     "      %acc2 : Tensor = aten::mul(%acc, %acc)\n"
     "      %kk2 : int = aten::add(%kk, %1)\n"
     "      -> (%t, %acc2, %kk2)\n"
     "  return (%y)\n",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %y : Tensor = prim::Loop(%n, %t, %x)\n"
     "    block0(%i : int, %acc : Tensor):\n"
     "      %acc2 : Tensor = aten::mul(%acc, %acc)\n"
     "      -> (%t, %acc2)\n"
     "  return (%y)\n"},
    {"dce_loop_carried_feeding_live_value_kept", "dce",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %y : Tensor, %k : int = prim::Loop(%n, %t, %x, %1)\n"
     "    block0(%i : int, %acc : Tensor, %kk : int):\n"
     "      %acc2 : Tensor = aten::mul(%acc, %kk)\n"
     "      %kk2 : int = aten::add(%kk, %1)\n"
     "      -> (%t, %acc2, %kk2)\n"
     "  return (%y)\n",
     NULL},
    {"dce_loop_condition_from_carried_kept", "dce",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %y : Tensor, %k : int = prim::Loop(%n, %t, %x, %1)\n"
     "    block0(%i : int, %acc : Tensor, %kk : int):\n"
     "      %acc2 : Tensor = aten::mul(%acc, %acc)\n"
     "      %kk2 : int = aten::add(%kk, %1)\n"
     "      %go : bool = aten::lt(%kk2, %n)\n"
     "      -> (%go, %acc2, %kk2)\n"
     "  return (%y)\n",
     NULL},
    {"dce_pure_loop_removed_effect_loop_kept", "dce",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %y : Tensor = prim::Loop(%n, %t, %x)\n"
     "    block0(%i : int, %acc : Tensor):\n"
     "      %acc2 : Tensor = aten::mul(%acc, %acc)\n"
     "      -> (%t, %acc2)\n"
     "  %s : str = prim::Constant[value=\"x\"]()\n"
     "   = prim::Loop(%n, %t)\n"
     "    block0(%j : int):\n"
     "       = prim::Print(%s)\n"
     "      -> (%t)\n"
     "  return (%x)\n",
     "graph(%x : Tensor, %n : int):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %s : str = prim::Constant[value=\"x\"]()\n"
     "   = prim::Loop(%n, %t)\n"
     "    block0(%j : int):\n"
     "       = prim::Print(%s)\n"
     "      -> (%t)\n"
     "  return (%x)\n"},
    {"dce_nothing_to_do", "dce",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %a : Tensor = aten::mul(%x, %y)\n"
     "  return (%a, %x)\n",
     NULL},
};

/* ---- cse -------------------------------------------------------------------------- */

static const pass_case cse_cases[] = {
    {"cse_basic", "cse",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %a : Tensor = aten::mul(%x, %y)\n"
     "  %b : Tensor = aten::mul(%x, %y)\n"
     "  %c : Tensor = aten::mul(%y, %x)\n"
     "  %d : Tensor = aten::div(%a, %b)\n"
     "  %e : Tensor = aten::div(%d, %c)\n"
     "  return (%e)\n",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %a : Tensor = aten::mul(%x, %y)\n"
     "  %c : Tensor = aten::mul(%y, %x)\n"
     "  %d : Tensor = aten::div(%a, %a)\n"
     "  %e : Tensor = aten::div(%d, %c)\n"
     "  return (%e)\n"},
    {"cse_constants_by_type_and_bits", "cse",
     "graph():\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : int = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=1.]()\n"
     "  %4 : float = prim::Constant[value=nan]()\n"
     "  %5 : float = prim::Constant[value=nan]()\n"
     "  %6 : float = prim::Constant[value=0.]()\n"
     "  %7 : float = prim::Constant[value=-0.]()\n"
     "  %8 : bool = prim::Constant[value=1]()\n"
     "  %r : (int, int, float, float, float, float, float, bool) = "
     "prim::TupleConstruct(%1, %2, %3, %4, %5, %6, %7, %8)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=1.]()\n"
     "  %4 : float = prim::Constant[value=nan]()\n"
     "  %6 : float = prim::Constant[value=0.]()\n"
     "  %7 : float = prim::Constant[value=-0.]()\n"
     "  %8 : bool = prim::Constant[value=1]()\n"
     "  %r : (int, int, float, float, float, float, float, bool) = "
     "prim::TupleConstruct(%1, %1, %3, %4, %4, %6, %7, %8)\n"
     "  return (%r)\n"},
    {"cse_nondeterministic_not_merged", "cse",
     "graph(%x : Tensor):\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %p : float = prim::Constant[value=0.5]()\n"
     "  %f : bool = prim::Constant[value=0]()\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %r1 : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)\n"
     "  %r2 : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)\n"
     "  %d1 : Tensor = aten::dropout(%x, %p, %t)\n"
     "  %d2 : Tensor = aten::dropout(%x, %p, %t)\n"
     "  %e1 : Tensor = aten::dropout(%x, %p, %f)\n"
     "  %e2 : Tensor = aten::dropout(%x, %p, %f)\n"
     "  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%r1, %r2, %d1, %d2, %e1, %e2)\n"
     "  return (%r)\n",
     "graph(%x : Tensor):\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %p : float = prim::Constant[value=0.5]()\n"
     "  %f : bool = prim::Constant[value=0]()\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %r1 : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)\n"
     "  %r2 : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)\n"
     "  %d1 : Tensor = aten::dropout(%x, %p, %t)\n"
     "  %d2 : Tensor = aten::dropout(%x, %p, %t)\n"
     "  %e1 : Tensor = aten::dropout(%x, %p, %f)\n"
     "  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%r1, %r2, %d1, %d2, %e1, %e1)\n"
     "  return (%r)\n"},
    {"cse_scoped_by_block", "cse",
     "graph(%x : Tensor, %c : bool):\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %b : Tensor = aten::relu(%x)\n"
     "      %s : Tensor = aten::sigmoid(%b)\n"
     "      -> (%s)\n"
     "    block1():\n"
     "      %s2 : Tensor = aten::sigmoid(%a)\n"
     "      -> (%s2)\n"
     "  %s3 : Tensor = aten::sigmoid(%a)\n"
     "  %o : Tensor = aten::mul(%r, %s3)\n"
     "  return (%o)\n",
     "graph(%x : Tensor, %c : bool):\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %s : Tensor = aten::sigmoid(%a)\n"
     "      -> (%s)\n"
     "    block1():\n"
     "      %s2 : Tensor = aten::sigmoid(%a)\n"
     "      -> (%s2)\n"
     "  %s3 : Tensor = aten::sigmoid(%a)\n"
     "  %o : Tensor = aten::mul(%r, %s3)\n"
     "  return (%o)\n"},
    {"cse_with_mutation_only_immutable", "cse",
     "graph(%x : Tensor, %n : int):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %b : Tensor = aten::relu(%x)\n"
     "  %c : Tensor = aten::add_(%a, %x, %1)\n"
     "  %i : int = aten::add(%n, %1)\n"
     "  %j : int = aten::add(%n, %1)\n"
     "  %d : int = aten::dim(%x)\n"
     "  %e : int = aten::dim(%x)\n"
     "  %r : (Tensor, Tensor, int, int, int, int) = prim::TupleConstruct(%a, %b, %i, %j, %d, %e)\n"
     "  return (%r)\n",
     "graph(%x : Tensor, %n : int):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %b : Tensor = aten::relu(%x)\n"
     "  %c : Tensor = aten::add_(%a, %x, %1)\n"
     "  %i : int = aten::add(%n, %1)\n"
     "  %d : int = aten::dim(%x)\n"
     "  %e : int = aten::dim(%x)\n"
     "  %r : (Tensor, Tensor, int, int, int, int) = prim::TupleConstruct(%a, %b, %i, %i, %d, %e)\n"
     "  return (%r)\n"},
    {"cse_list_mutation_leaves_tensors_mergeable", "cse",
     "graph(%x : Tensor):\n"
     "  %l : int[] = prim::ListConstruct()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : int[] = aten::append(%l, %1)\n"
     "  %d1 : int = aten::dim(%x)\n"
     "  %d2 : int = aten::dim(%x)\n"
     "  %r1 : Tensor = aten::relu(%x)\n"
     "  %r2 : Tensor = aten::relu(%x)\n"
     "  %m1 : int[] = prim::ListConstruct(%d1)\n"
     "  %m2 : int[] = prim::ListConstruct(%d2)\n"
     "  %o : (int, int, Tensor, Tensor, int[], int[], int[]) = prim::TupleConstruct(%d1, %d2, %r1, %r2, %m1, %m2, %l)\n"
     "  return (%o)\n",
     "graph(%x : Tensor):\n"
     "  %l : int[] = prim::ListConstruct()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : int[] = aten::append(%l, %1)\n"
     "  %d1 : int = aten::dim(%x)\n"
     "  %r1 : Tensor = aten::relu(%x)\n"
     "  %m1 : int[] = prim::ListConstruct(%d1)\n"
     "  %m2 : int[] = prim::ListConstruct(%d1)\n"
     "  %o : (int, int, Tensor, Tensor, int[], int[], int[]) = prim::TupleConstruct(%d1, %d1, %r1, %r1, %m1, %m2, %l)\n"
     "  return (%o)\n"},
    {"cse_lists_without_mutation", "cse",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %l1 : Tensor[] = prim::ListConstruct(%x, %y)\n"
     "  %l2 : Tensor[] = prim::ListConstruct(%x, %y)\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %a : Tensor = aten::cat(%l1, %0)\n"
     "  %b : Tensor = aten::cat(%l2, %0)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)\n"
     "  return (%r)\n",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %l1 : Tensor[] = prim::ListConstruct(%x, %y)\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %a : Tensor = aten::cat(%l1, %0)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %a)\n"
     "  return (%r)\n"},
    {"cse_lists_with_mutation_kept", "cse",
     "graph(%x : Tensor, %y : Tensor):\n"
     "  %l1 : Tensor[] = prim::ListConstruct(%x, %y)\n"
     "  %l2 : Tensor[] = prim::ListConstruct(%x, %y)\n"
     "  %l3 : Tensor[] = aten::append(%l1, %x)\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %a : Tensor = aten::cat(%l1, %0)\n"
     "  %b : Tensor = aten::cat(%l2, %0)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)\n"
     "  return (%r)\n",
     NULL},
    {"cse_side_effects_not_merged", "cse",
     "graph(%x : Tensor):\n"
     "  %s : str = prim::Constant[value=\"m\"]()\n"
     "   = prim::Print(%s)\n"
     "   = prim::Print(%s)\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : Tensor = aten::add_(%x, %x, %1)\n"
     "  %b : Tensor = aten::add_(%x, %x, %1)\n"
     "  return (%a, %b)\n",
     NULL},
};

/* ---- constprop -------------------------------------------------------------------- */

static const pass_case constprop_cases[] = {
    {"constprop_arithmetic", "constprop,dce",
     "graph():\n"
     "  %a : int = prim::Constant[value=7]()\n"
     "  %b : int = prim::Constant[value=2]()\n"
     "  %h : float = prim::Constant[value=0.5]()\n"
     "  %s : int = aten::add(%a, %b)\n"
     "  %m : int = aten::mul(%a, %b)\n"
     "  %d : float = aten::div(%a, %b)\n"
     "  %f : float = aten::sub(%a, %h)\n"
     "  %n : int = aten::neg(%a)\n"
     "  %r : (int, int, float, float, int) = prim::TupleConstruct(%s, %m, %d, %f, %n)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %s : int = prim::Constant[value=9]()\n"
     "  %m : int = prim::Constant[value=14]()\n"
     "  %d : float = prim::Constant[value=3.5]()\n"
     "  %f : float = prim::Constant[value=6.5]()\n"
     "  %n : int = prim::Constant[value=-7]()\n"
     "  %r : (int, int, float, float, int) = prim::TupleConstruct(%s, %m, %d, %f, %n)\n"
     "  return (%r)\n"},
    {"constprop_python_floor_semantics", "constprop,dce",
     "graph():\n"
     "  %a : int = prim::Constant[value=-7]()\n"
     "  %b : int = prim::Constant[value=2]()\n"
     "  %c : int = prim::Constant[value=7]()\n"
     "  %d : int = prim::Constant[value=-2]()\n"
     "  %x : float = prim::Constant[value=7.5]()\n"
     "  %y : float = prim::Constant[value=-2.]()\n"
     "  %q1 : int = aten::floordiv(%a, %b)\n"
     "  %r1 : int = aten::remainder(%a, %b)\n"
     "  %q2 : int = aten::floordiv(%c, %d)\n"
     "  %r2 : int = aten::remainder(%c, %d)\n"
     "  %q3 : float = aten::floordiv(%x, %y)\n"
     "  %r3 : float = aten::remainder(%x, %y)\n"
     "  %r : (int, int, int, int, float, float) = prim::TupleConstruct(%q1, %r1, %q2, %r2, %q3, %r3)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %q1 : int = prim::Constant[value=-4]()\n"
     "  %r1 : int = prim::Constant[value=1]()\n"
     "  %q2 : int = prim::Constant[value=-4]()\n"
     "  %r2 : int = prim::Constant[value=-1]()\n"
     "  %q3 : float = prim::Constant[value=-4.]()\n"
     "  %r3 : float = prim::Constant[value=-0.5]()\n"
     "  %r : (int, int, int, int, float, float) = prim::TupleConstruct(%q1, %r1, %q2, %r2, %q3, %r3)\n"
     "  return (%r)\n"},
    {"constprop_division_by_zero_not_folded", "constprop",
     "graph():\n"
     "  %a : int = prim::Constant[value=7]()\n"
     "  %z : int = prim::Constant[value=0]()\n"
     "  %fz : float = prim::Constant[value=0.]()\n"
     "  %d : float = aten::div(%a, %z)\n"
     "  %q : int = aten::floordiv(%a, %z)\n"
     "  %r : int = aten::remainder(%a, %z)\n"
     "  %f : float = aten::div(%a, %fz)\n"
     "  %g : float = aten::floordiv(%fz, %fz)\n"
     "  %t : (float, int, int, float, float) = prim::TupleConstruct(%d, %q, %r, %f, %g)\n"
     "  return (%t)\n",
     NULL},
    {"constprop_pow", "constprop,dce",
     "graph():\n"
     "  %a : int = prim::Constant[value=2]()\n"
     "  %b : int = prim::Constant[value=10]()\n"
     "  %n : int = prim::Constant[value=-1]()\n"
     "  %p1 : float = aten::pow(%a, %b)\n"
     "  %p2 : int = aten::pow(%a, %b)\n"
     "  %p3 : float = aten::pow(%a, %n)\n"
     "  %p4 : int = aten::pow(%a, %n)\n"
     "  %r : (float, int, float, int) = prim::TupleConstruct(%p1, %p2, %p3, %p4)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %a : int = prim::Constant[value=2]()\n"
     "  %n : int = prim::Constant[value=-1]()\n"
     "  %p1 : float = prim::Constant[value=1024.]()\n"
     "  %p2 : int = prim::Constant[value=1024]()\n"
     "  %p3 : float = prim::Constant[value=0.5]()\n"
     "  %p4 : int = aten::pow(%a, %n)\n"
     "  %r : (float, int, float, int) = prim::TupleConstruct(%p1, %p2, %p3, %p4)\n"
     "  return (%r)\n"},
    {"constprop_compare_and_logic", "constprop,dce",
     "graph():\n"
     "  %a : int = prim::Constant[value=3]()\n"
     "  %b : float = prim::Constant[value=3.5]()\n"
     "  %s1 : str = prim::Constant[value=\"ab\"]()\n"
     "  %s2 : str = prim::Constant[value=\"b\"]()\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %f : bool = prim::Constant[value=0]()\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %c1 : bool = aten::lt(%a, %b)\n"
     "  %c2 : bool = aten::eq(%a, %a)\n"
     "  %c3 : bool = aten::gt(%s1, %s2)\n"
     "  %c4 : bool = aten::ne(%s1, %s2)\n"
     "  %c5 : bool = aten::__not__(%t)\n"
     "  %c6 : bool = aten::__and__(%t, %f)\n"
     "  %c7 : bool = aten::__or__(%t, %f)\n"
     "  %c8 : bool = aten::__is__(%none, %none)\n"
     "  %c9 : bool = aten::__isnot__(%a, %none)\n"
     "  %r : (bool, bool, bool, bool, bool, bool, bool, bool, bool) = "
     "prim::TupleConstruct(%c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %c1 : bool = prim::Constant[value=1]()\n"
     "  %c2 : bool = prim::Constant[value=1]()\n"
     "  %c3 : bool = prim::Constant[value=0]()\n"
     "  %c4 : bool = prim::Constant[value=1]()\n"
     "  %c5 : bool = prim::Constant[value=0]()\n"
     "  %c6 : bool = prim::Constant[value=0]()\n"
     "  %c7 : bool = prim::Constant[value=1]()\n"
     "  %c8 : bool = prim::Constant[value=1]()\n"
     "  %c9 : bool = prim::Constant[value=1]()\n"
     "  %r : (bool, bool, bool, bool, bool, bool, bool, bool, bool) = "
     "prim::TupleConstruct(%c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9)\n"
     "  return (%r)\n"},
    {"constprop_conversions_minmax_str", "constprop,dce",
     "graph():\n"
     "  %x : float = prim::Constant[value=-2.7]()\n"
     "  %i : int = prim::Constant[value=3]()\n"
     "  %z : int = prim::Constant[value=0]()\n"
     "  %j : int = prim::Constant[value=5]()\n"
     "  %s : str = prim::Constant[value=\"ab\"]()\n"
     "  %k1 : int = aten::Int(%x)\n"
     "  %k2 : float = aten::Float(%i)\n"
     "  %k3 : bool = aten::Bool(%z)\n"
     "  %k4 : int = prim::min(%i, %j)\n"
     "  %k5 : float = prim::max(%i, %x)\n"
     "  %k6 : str = aten::add(%s, %s)\n"
     "  %k7 : int = aten::len(%s)\n"
     "  %r : (int, float, bool, int, float, str, int) = prim::TupleConstruct(%k1, %k2, %k3, %k4, %k5, %k6, %k7)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %k1 : int = prim::Constant[value=-2]()\n"
     "  %k2 : float = prim::Constant[value=3.]()\n"
     "  %k3 : bool = prim::Constant[value=0]()\n"
     "  %k4 : int = prim::Constant[value=3]()\n"
     "  %k5 : float = prim::Constant[value=3.]()\n"
     "  %k6 : str = prim::Constant[value=\"abab\"]()\n"
     "  %k7 : int = prim::Constant[value=2]()\n"
     "  %r : (int, float, bool, int, float, str, int) = prim::TupleConstruct(%k1, %k2, %k3, %k4, %k5, %k6, %k7)\n"
     "  return (%r)\n"},
    {"constprop_tensor_types", "constprop,dce",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
     "      %y : Float(*, 3, requires_grad=0, device=cpu)):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %m : int = prim::Constant[value=-1]()\n"
     "  %d : int = aten::dim(%x)\n"
     "  %s1 : int = aten::size(%x, %1)\n"
     "  %s2 : int = aten::size(%x, %m)\n"
     "  %sz : int[] = aten::size(%x)\n"
     "  %dt : int = prim::dtype(%x)\n"
     "  %dev : Device = prim::device(%x)\n"
     "  %u0 : int = aten::size(%y, %0)\n"
     "  %u1 : int = aten::size(%y, %1)\n"
     "  %r : (int, int, int, int[], int, Device, int, int) = "
     "prim::TupleConstruct(%d, %s1, %s2, %sz, %dt, %dev, %u0, %u1)\n"
     "  return (%r)\n",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
     "      %y : Float(*, 3, requires_grad=0, device=cpu)):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %d : int = prim::Constant[value=2]()\n"
     "  %s1 : int = prim::Constant[value=3]()\n"
     "  %s2 : int = prim::Constant[value=3]()\n"
     "  %sz : int[] = prim::Constant[value=[2, 3]]()\n"
     "  %dt : int = prim::Constant[value=6]()\n"
     "  %dev : Device = prim::Constant[value=\"cpu\"]()\n"
     "  %u0 : int = aten::size(%y, %0)\n"
     "  %u1 : int = prim::Constant[value=3]()\n"
     "  %r : (int, int, int, int[], int, Device, int, int) = "
     "prim::TupleConstruct(%d, %s1, %s2, %sz, %dt, %dev, %u0, %u1)\n"
     "  return (%r)\n"},
    {"constprop_list_and_tuple_elements", "constprop,dce",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %m1 : int = prim::Constant[value=-1]()\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
     "  %n : int = aten::len(%l)\n"
     "  %e : Tensor = aten::__getitem__(%l, %m1)\n"
     "  %t : (Tensor, int) = prim::TupleConstruct(%a, %n)\n"
     "  %k : int = prim::TupleIndex(%t, %1)\n"
     "  %r : Tensor = aten::mul(%e, %a)\n"
     "  %o : (Tensor, int) = prim::TupleConstruct(%r, %k)\n"
     "  return (%o)\n",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %n : int = prim::Constant[value=2]()\n"
     "  %r : Tensor = aten::mul(%b, %a)\n"
     "  %o : (Tensor, int) = prim::TupleConstruct(%r, %n)\n"
     "  return (%o)\n"},
    {"constprop_mutated_list_not_folded", "constprop",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %l : Tensor[] = prim::ListConstruct(%a)\n"
     "  %l2 : Tensor[] = aten::append(%l, %b)\n"
     "  %n : int = aten::len(%l)\n"
     "  %e : Tensor = aten::__getitem__(%l, %0)\n"
     "  %o : (int, Tensor) = prim::TupleConstruct(%n, %e)\n"
     "  return (%o)\n",
     NULL},
    {"constprop_inside_blocks", "constprop,dce",
     "graph(%n : int, %c : bool):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %a : int = aten::add(%n, %1)\n"
     "  %r : int = prim::If(%c)\n"
     "    block0():\n"
     "      %b : int = aten::add(%1, %2)\n"
     "      %d : int = aten::mul(%b, %b)\n"
     "      -> (%d)\n"
     "    block1():\n"
     "      -> (%a)\n"
     "  return (%r)\n",
     "graph(%n : int, %c : bool):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : int = aten::add(%n, %1)\n"
     "  %r : int = prim::If(%c)\n"
     "    block0():\n"
     "      %d : int = prim::Constant[value=9]()\n"
     "      -> (%d)\n"
     "    block1():\n"
     "      -> (%a)\n"
     "  return (%r)\n"},
    {"constprop_non_constant_inputs_kept", "constprop",
     "graph(%n : int, %x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : int = aten::add(%n, %1)\n"
     "  %s : int = aten::size(%x, %1)\n"
     "  %d : int = aten::dim(%x)\n"
     "  %m : int = prim::Constant[value=-9223372036854775808]()\n"
     "  %m1 : int = prim::Constant[value=-1]()\n"
     "  %q : int = aten::floordiv(%m, %m1)\n"
     "  %r : (int, int, int, int) = prim::TupleConstruct(%a, %s, %d, %q)\n"
     "  return (%r)\n",
     NULL},
};

/* ---- constpool -------------------------------------------------------------------- */

static const pass_case constpool_cases[] = {
    {"constpool_merge_and_move", "constpool",
     "graph(%x : Tensor):\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %y : Tensor = aten::add(%a, %x, %1)\n"
     "  %2 : int = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=2.]()\n"
     "  %z : Tensor = aten::mul(%y, %3)\n"
     "  %w : Tensor = aten::add(%z, %y, %2)\n"
     "  return (%w)\n",
     "graph(%x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=2.]()\n"
     "  %a : Tensor = aten::relu(%x)\n"
     "  %y : Tensor = aten::add(%a, %x, %1)\n"
     "  %z : Tensor = aten::mul(%y, %3)\n"
     "  %w : Tensor = aten::add(%z, %y, %1)\n"
     "  return (%w)\n"},
    {"constpool_hoists_from_blocks", "constpool",
     "graph(%x : Tensor, %c : bool, %n : int):\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %1 : int = prim::Constant[value=1]()\n"
     "      %a : Tensor = aten::add(%x, %x, %1)\n"
     "      -> (%a)\n"
     "    block1():\n"
     "      %2 : int = prim::Constant[value=2]()\n"
     "      %b : Tensor = aten::add(%x, %x, %2)\n"
     "      -> (%b)\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %y : Tensor = prim::Loop(%n, %t, %r)\n"
     "    block0(%i : int, %acc : Tensor):\n"
     "      %3 : int = prim::Constant[value=1]()\n"
     "      %acc2 : Tensor = aten::add(%acc, %x, %3)\n"
     "      -> (%t, %acc2)\n"
     "  return (%y)\n",
     "graph(%x : Tensor, %c : bool, %n : int):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a : Tensor = aten::add(%x, %x, %1)\n"
     "      -> (%a)\n"
     "    block1():\n"
     "      %b : Tensor = aten::add(%x, %x, %2)\n"
     "      -> (%b)\n"
     "  %y : Tensor = prim::Loop(%n, %t, %r)\n"
     "    block0(%i : int, %acc : Tensor):\n"
     "      %acc2 : Tensor = aten::add(%acc, %x, %1)\n"
     "      -> (%t, %acc2)\n"
     "  return (%y)\n"},
    {"constpool_types_kept_apart", "constpool",
     "graph():\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : bool = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=1.]()\n"
     "  %4 : str = prim::Constant[value=\"cpu\"]()\n"
     "  %5 : Device = prim::Constant[value=\"cpu\"]()\n"
     "  %6 : NoneType = prim::Constant()\n"
     "  %7 : NoneType = prim::Constant()\n"
     "  %8 : float = prim::Constant[value=nan]()\n"
     "  %9 : float = prim::Constant[value=nan]()\n"
     "  %r : (int, bool, float, str, Device, NoneType, NoneType, float, float) = "
     "prim::TupleConstruct(%1, %2, %3, %4, %5, %6, %7, %8, %9)\n"
     "  return (%r)\n",
     "graph():\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : bool = prim::Constant[value=1]()\n"
     "  %3 : float = prim::Constant[value=1.]()\n"
     "  %4 : str = prim::Constant[value=\"cpu\"]()\n"
     "  %5 : Device = prim::Constant[value=\"cpu\"]()\n"
     "  %6 : NoneType = prim::Constant()\n"
     "  %8 : float = prim::Constant[value=nan]()\n"
     "  %r : (int, bool, float, str, Device, NoneType, NoneType, float, float) = "
     "prim::TupleConstruct(%1, %2, %3, %4, %5, %6, %6, %8, %8)\n"
     "  return (%r)\n"},
    {"constpool_tensors_with_mutation_kept", "constpool",
     "graph(%x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %a : Tensor = prim::Constant[value={2}]()\n"
     "  %b : Tensor = prim::Constant[value={2}]()\n"
     "  %c : Tensor = aten::add_(%a, %x, %1)\n"
     "  %r : Tensor = aten::mul(%b, %c)\n"
     "  return (%r)\n",
     NULL},
    {"constpool_tensors_without_mutation_merged", "constpool",
     "graph(%x : Tensor):\n"
     "  %a : Tensor = prim::Constant[value={2}]()\n"
     "  %r : Tensor = aten::mul(%x, %a)\n"
     "  %b : Tensor = prim::Constant[value={2}]()\n"
     "  %s : Tensor = aten::mul(%r, %b)\n"
     "  return (%s)\n",
     "graph(%x : Tensor):\n"
     "  %a : Tensor = prim::Constant[value={2}]()\n"
     "  %r : Tensor = aten::mul(%x, %a)\n"
     "  %s : Tensor = aten::mul(%r, %a)\n"
     "  return (%s)\n"},
    {"constpool_function_constant_stays", "constpool",
     "graph(%x : Tensor, %c : bool):\n"
     "  %r : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      -> (%x)\n"
     "    block1():\n"
     "      %f : Function = prim::Constant[name=\"fallback_function\", fallback=1]()\n"
     "      %t : (Tensor) = prim::CallFunction(%f, %x)\n"
     "      %u : Tensor = prim::TupleUnpack(%t)\n"
     "      -> (%u)\n"
     "  return (%r)\n",
     NULL},
    {"constpool_already_pooled", "constpool",
     "graph(%x : Tensor):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %y : Tensor = aten::add(%x, %x, %1)\n"
     "  %z : Tensor = aten::add(%y, %x, %2)\n"
     "  return (%z)\n",
     NULL},
};

/* ---- peephole --------------------------------------------------------------------- */

static const pass_case peephole_cases[] = {
    {"peephole_t_t", "peephole,dce",
     "graph(%x : Tensor):\n"
     "  %a : Tensor = aten::t(%x)\n"
     "  %b : Tensor = aten::t(%a)\n"
     "  %c : Tensor = aten::t(%b)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%b, %c)\n"
     "  return (%r)\n",
     "graph(%x : Tensor):\n"
     "  %c : Tensor = aten::t(%x)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%x, %c)\n"
     "  return (%r)\n"},
    {"peephole_contiguous", "peephole",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
     "      %y : Float(2, 3, strides=[1, 2], requires_grad=0, device=cpu),\n"
     "      %z : Tensor):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %a : Tensor = aten::contiguous(%x, %0)\n"
     "  %b : Tensor = aten::contiguous(%y, %0)\n"
     "  %c : Tensor = aten::contiguous(%z, %0)\n"
     "  %d : Tensor = aten::contiguous(%x, %2)\n"
     "  %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %d)\n"
     "  return (%r)\n",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
     "      %y : Float(2, 3, strides=[1, 2], requires_grad=0, device=cpu),\n"
     "      %z : Tensor):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %b : Tensor = aten::contiguous(%y, %0)\n"
     "  %c : Tensor = aten::contiguous(%z, %0)\n"
     "  %d : Tensor = aten::contiguous(%x, %2)\n"
     "  %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %b, %c, %d)\n"
     "  return (%r)\n"},
    {"peephole_tuples", "peephole,dce",
     "graph(%a : Tensor, %b : int):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %t : (Tensor, int) = prim::TupleConstruct(%a, %b)\n"
     "  %x : Tensor, %y : int = prim::TupleUnpack(%t)\n"
     "  %z : int = prim::TupleIndex(%t, %1)\n"
     "  %r : (int, Tensor, int) = prim::TupleConstruct(%y, %x, %z)\n"
     "  return (%r)\n",
     "graph(%a : Tensor, %b : int):\n"
     "  %r : (int, Tensor, int) = prim::TupleConstruct(%b, %a, %b)\n"
     "  return (%r)\n"},
    {"peephole_list_unpack", "peephole,dce",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
     "  %x : Tensor, %y : Tensor = prim::ListUnpack(%l)\n"
     "  %r : Tensor = aten::mul(%y, %x)\n"
     "  return (%r)\n",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %r : Tensor = aten::mul(%b, %a)\n"
     "  return (%r)\n"},
    {"peephole_list_unpack_mutated_kept", "peephole",
     "graph(%a : Tensor, %b : Tensor):\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
     "  %l2 : Tensor[] = aten::_set_item(%l, %0, %b)\n"
     "  %x : Tensor, %y : Tensor = prim::ListUnpack(%l)\n"
     "  %r : Tensor = aten::mul(%y, %x)\n"
     "  return (%r)\n",
     NULL},
    {"peephole_if_constant", "peephole",
     "graph(%x : Tensor, %c : bool):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %f : bool = prim::Constant[value=0]()\n"
     "  %a : Tensor = prim::If(%t)\n"
     "    block0():\n"
     "      %a1 : Tensor = aten::relu(%x)\n"
     "      -> (%a1)\n"
     "    block1():\n"
     "      %a2 : Tensor = aten::neg(%x)\n"
     "      -> (%a2)\n"
     "  %b : Tensor = prim::If(%f)\n"
     "    block0():\n"
     "      %b1 : Tensor = aten::relu(%a)\n"
     "      -> (%b1)\n"
     "    block1():\n"
     "      %b2 : Tensor = aten::neg(%a)\n"
     "      -> (%b2)\n"
     "  %d : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      -> (%a)\n"
     "    block1():\n"
     "      -> (%b)\n"
     "  return (%d)\n",
     "graph(%x : Tensor, %c : bool):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %f : bool = prim::Constant[value=0]()\n"
     "  %a1 : Tensor = aten::relu(%x)\n"
     "  %b2 : Tensor = aten::neg(%a1)\n"
     "  %d : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      -> (%a1)\n"
     "    block1():\n"
     "      -> (%b2)\n"
     "  return (%d)\n"},
    {"peephole_if_nested_constant", "peephole",
     "graph(%x : Tensor):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %a : Tensor = prim::If(%t)\n"
     "    block0():\n"
     "      %b : Tensor = prim::If(%t)\n"
     "        block0():\n"
     "          %r : Tensor = aten::relu(%x)\n"
     "          -> (%r)\n"
     "        block1():\n"
     "          -> (%x)\n"
     "      -> (%b)\n"
     "    block1():\n"
     "      -> (%x)\n"
     "  return (%a)\n",
     "graph(%x : Tensor):\n"
     "  %t : bool = prim::Constant[value=1]()\n"
     "  %r : Tensor = aten::relu(%x)\n"
     "  return (%r)\n"},
    {"peephole_if_nonconstant_kept", "peephole",
     "graph(%x : Tensor, %c : bool):\n"
     "  %a : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a1 : Tensor = aten::relu(%x)\n"
     "      -> (%a1)\n"
     "    block1():\n"
     "      -> (%x)\n"
     "  return (%a)\n",
     NULL},
    {"peephole_is_none", "peephole",
     "graph(%x : Tensor, %o : Tensor?):\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %a : bool = aten::__is__(%x, %none)\n"
     "  %b : bool = aten::__isnot__(%x, %none)\n"
     "  %c : bool = aten::__is__(%o, %none)\n"
     "  %r : (bool, bool, bool) = prim::TupleConstruct(%a, %b, %c)\n"
     "  return (%r)\n",
     "graph(%x : Tensor, %o : Tensor?):\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %a : bool = prim::Constant[value=0]()\n"
     "  %b : bool = prim::Constant[value=1]()\n"
     "  %c : bool = aten::__is__(%o, %none)\n"
     "  %r : (bool, bool, bool) = prim::TupleConstruct(%a, %b, %c)\n"
     "  return (%r)\n"},
    {"peephole_unchecked_cast", "peephole",
     "graph(%x : Tensor, %o : Tensor?):\n"
     "  %a : Tensor = prim::unchecked_cast(%x)\n"
     "  %b : Tensor = prim::unchecked_cast(%o)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)\n"
     "  return (%r)\n",
     "graph(%x : Tensor, %o : Tensor?):\n"
     "  %b : Tensor = prim::unchecked_cast(%o)\n"
     "  %r : (Tensor, Tensor) = prim::TupleConstruct(%x, %b)\n"
     "  return (%r)\n"},
    /* As gradient formulas instantiate clamp's: an optional Scalar bound that
     * is a constant becomes that constant. */
    {"peephole_unchecked_cast_constant", "peephole",
     "graph(%x : Tensor):\n"
     "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n"
     "  %s : Scalar = prim::unchecked_cast(%e)\n"
     "  %ge : Tensor = aten::ge(%x, %s)\n"
     "  %oi : int? = prim::Constant[value=3]()\n"
     "  %i : int = prim::unchecked_cast(%oi)\n"
     "  %os : Scalar? = prim::Constant[value=0.5]()\n"
     "  %n : Scalar = prim::unchecked_cast(%os)\n"
     "  %ob : bool? = prim::Constant[value=1]()\n"
     "  %b : bool = prim::unchecked_cast(%ob)\n"
     "  %r : (Tensor, int, Scalar, bool) = prim::TupleConstruct(%ge, %i, %n, %b)\n"
     "  return (%r)\n",
     "graph(%x : Tensor):\n"
     "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n"
     "  %ge : Tensor = aten::ge(%x, %e)\n"
     "  %oi : int? = prim::Constant[value=3]()\n"
     "  %0 : int = prim::Constant[value=3]()\n"
     "  %os : Scalar? = prim::Constant[value=0.5]()\n"
     "  %1 : float = prim::Constant[value=0.5]()\n"
     "  %ob : bool? = prim::Constant[value=1]()\n"
     "  %2 : bool = prim::Constant[value=1]()\n"
     "  %r : (Tensor, int, Scalar, bool) = prim::TupleConstruct(%ge, %0, %1, %2)\n"
     "  return (%r)\n"},
    /* None, a non-constant, a cast to an optional and a tensor constant stay. */
    {"peephole_unchecked_cast_constant_kept", "peephole",
     "graph(%x : Tensor, %f : float?):\n"
     "  %none : NoneType = prim::Constant()\n"
     "  %a : float = prim::unchecked_cast(%none)\n"
     "  %b : float = prim::unchecked_cast(%f)\n"
     "  %c0 : float = prim::Constant[value=2.]()\n"
     "  %c : float? = prim::unchecked_cast(%c0)\n"
     "  %r : (float, float, float?) = prim::TupleConstruct(%a, %b, %c)\n"
     "  return (%r)\n",
     NULL},
};

/* ---- pipeline ---------------------------------------------------------------------- */

static const pass_case pipeline_cases[] = {
    {"pipeline_default", "default",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %0 : int = prim::Constant[value=0]()\n"
     "  %d : int = aten::dim(%x)\n"
     "  %two : int = prim::Constant[value=2]()\n"
     "  %c : bool = aten::eq(%d, %two)\n"
     "  %y : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %a : Tensor = aten::t(%x)\n"
     "      %b : Tensor = aten::t(%a)\n"
     "      %e : Tensor = aten::mul(%b, %b)\n"
     "      -> (%e)\n"
     "    block1():\n"
     "      %u : str = prim::Constant[value=\"rank\"]()\n"
     "       = prim::RaiseException(%u)\n"
     "      -> (%x)\n"
     "  %s : int = aten::size(%x, %0)\n"
     "  %s2 : int = aten::size(%x, %0)\n"
     "  %z : Tensor = aten::add(%y, %x, %1)\n"
     "  %w : Tensor = aten::mul(%z, %s)\n"
     "  %v : Tensor = aten::mul(%z, %s2)\n"
     "  %o : (Tensor, Tensor) = prim::TupleConstruct(%w, %v)\n"
     "  return (%o)\n",
     "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
     "  %1 : int = prim::Constant[value=1]()\n"
     "  %2 : int = prim::Constant[value=2]()\n"
     "  %e : Tensor = aten::mul(%x, %x)\n"
     "  %z : Tensor = aten::add(%e, %x, %1)\n"
     "  %w : Tensor = aten::mul(%z, %2)\n"
     "  %o : (Tensor, Tensor) = prim::TupleConstruct(%w, %w)\n"
     "  return (%o)\n"},
    {"pipeline_list_of_passes", "constprop,peephole,dce",
     "graph(%x : Tensor):\n"
     "  %a : int = prim::Constant[value=1]()\n"
     "  %b : int = prim::Constant[value=2]()\n"
     "  %c : bool = aten::lt(%a, %b)\n"
     "  %y : Tensor = prim::If(%c)\n"
     "    block0():\n"
     "      %r : Tensor = aten::relu(%x)\n"
     "      -> (%r)\n"
     "    block1():\n"
     "      -> (%x)\n"
     "  return (%y)\n",
     "graph(%x : Tensor):\n"
     "  %r : Tensor = aten::relu(%x)\n"
     "  return (%r)\n"},
};

#define CASE_TEST(name, table)                                                    \
  START_TEST(name) { run_case(&table[_i]); }                                      \
  END_TEST

CASE_TEST(dce_case, dce_cases)
CASE_TEST(cse_case, cse_cases)
CASE_TEST(constprop_case, constprop_cases)
CASE_TEST(constpool_case, constpool_cases)
CASE_TEST(peephole_case, peephole_cases)
CASE_TEST(pipeline_case, pipeline_cases)

#define NCASES(t) ((int)(sizeof t / sizeof t[0]))

/* Every case input, under every single pass and the default pipeline, stays
 * valid; and the default pipeline is idempotent on it. */
static const struct {
  const pass_case *cases;
  int count;
} all_tables[] = {
    {dce_cases, NCASES(dce_cases)},           {cse_cases, NCASES(cse_cases)},
    {constprop_cases, NCASES(constprop_cases)}, {constpool_cases, NCASES(constpool_cases)},
    {peephole_cases, NCASES(peephole_cases)}, {pipeline_cases, NCASES(pipeline_cases)},
};

static void check_all_passes_and_idempotence(const char *text, const char *what) {
  static const char *const lists[] = {"dce", "cse", "constprop", "constpool", "peephole"};
  for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
    fbx_graph *g = parse(text, what);
    run_passes(g, lists[k], what);
    fbx_graph_destroy(g);
  }
  fbx_graph *g = parse(text, what);
  run_passes(g, "default", what);
  char *first = print(g);
  bool changed = true;
  fbx_status *st = fbx_pass_run_list(g, "default", &changed);
  ck_assert_msg(st == NULL, "%s: %s", what, fbx_status_message(st));
  char *second = print(g);
  ck_assert_msg(!changed, "%s: second default run reported a change", what);
  ck_assert_msg(!strcmp(first, second), "%s: second run changed the graph:\n%s\n---\n%s", what, first, second);
  fbx_free(first);
  fbx_free(second);
  fbx_graph_destroy(g);
}

START_TEST(cases_all_passes_valid_and_idempotent) {
  int n = 0;
  for (size_t t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++)
    for (int i = 0; i < all_tables[t].count; i++, n++)
      check_all_passes_and_idempotence(all_tables[t].cases[i].input, all_tables[t].cases[i].name);
  ck_assert_int_ge(n, 40);
}
END_TEST

static const char *case_input(const char *name) {
  for (size_t t = 0; t < sizeof all_tables / sizeof all_tables[0]; t++)
    for (int i = 0; i < all_tables[t].count; i++)
      if (!strcmp(all_tables[t].cases[i].name, name)) return all_tables[t].cases[i].input;
  ck_abort_msg("no case %s", name);
  return NULL;
}

/* ---- effects ------------------------------------------------------------------------ */

static const fbx_node *node_of(const fbx_graph *g, const char *name) {
  fbx_value *v = fbx_graph_find_value(g, name);
  ck_assert_msg(v != NULL, "no value %%%s", name);
  return v->node;
}

START_TEST(effects_classification) {
  fbx_graph *g = parse(
      "graph(%x : Tensor, %c : bool):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %p : float = prim::Constant[value=0.5]()\n"
      "  %f : bool = prim::Constant[value=0]()\n"
      "  %inplace : Tensor = aten::add_(%x, %x, %1)\n"
      "  %copy : Tensor = aten::copy_(%x, %x, %f)\n"
      "  %and : Tensor = aten::__and__(%x, %x)\n"
      "  %iand : Tensor = aten::__iand__(%x, %x)\n"
      "  %l : int[] = prim::ListConstruct(%1)\n"
      "  %app : int[] = aten::append(%l, %1)\n"
      "  %drop_eval : Tensor = aten::dropout(%x, %p, %f)\n"
      "  %drop_train : Tensor = aten::dropout(%x, %p, %c)\n"
      "  %rnd : Tensor = aten::randn_like(%x)\n"
      "  %unk : Tensor = foo::bar(%x)\n"
      "  %grp : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      -> (%x)\n"
      "    block1():\n"
      "      %m : str = prim::Constant[value=\"no\"]()\n"
      "       = prim::RaiseException(%m)\n"
      "      -> (%x)\n"
      "  %pure_if : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %q : Tensor = aten::relu(%x)\n"
      "      -> (%q)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  return (%x)\n",
      "effects");
  ck_assert(fbx_node_has_side_effects(node_of(g, "inplace")));
  ck_assert(fbx_node_is_mutating(node_of(g, "inplace")));
  ck_assert(fbx_node_is_mutating(node_of(g, "copy")));
  ck_assert(!fbx_node_has_side_effects(node_of(g, "and")));
  ck_assert(!fbx_node_is_mutating(node_of(g, "and")));
  /* Not by the trailing-underscore rule, but `x &= y` is in place. */
  ck_assert(fbx_node_is_mutating(node_of(g, "iand")));
  ck_assert(fbx_node_is_mutating(node_of(g, "app")));
  ck_assert(!fbx_node_has_side_effects(node_of(g, "l")));
  ck_assert(!fbx_node_is_nondeterministic(node_of(g, "drop_eval")));
  ck_assert(fbx_node_is_nondeterministic(node_of(g, "drop_train")));
  ck_assert(fbx_node_is_nondeterministic(node_of(g, "rnd")));
  ck_assert(!fbx_node_has_side_effects(node_of(g, "rnd")));
  ck_assert(fbx_node_has_side_effects(node_of(g, "unk")));
  ck_assert(fbx_node_has_side_effects(node_of(g, "grp")));
  ck_assert(!fbx_node_has_side_effects(node_of(g, "pure_if")));
  ck_assert(fbx_graph_has_mutation(g));
  ck_assert(fbx_value_may_be_mutated(fbx_graph_find_value(g, "l")));
  fbx_graph_destroy(g);

  g = parse(
      "graph(%x : Tensor):\n"
      "  %l : Tensor[] = prim::ListConstruct(%x, %x)\n"
      "  %n : int = aten::len(%l)\n"
      "  return (%n)\n",
      "no mutation");
  ck_assert(!fbx_graph_has_mutation(g));
  ck_assert(!fbx_value_may_be_mutated(fbx_graph_find_value(g, "l")));
  fbx_graph_destroy(g);

  /* What mutation reaches, by kind of object. */
  g = parse(
      "graph(%x : Tensor, %p : (int, Tensor), %q : Tensor[], %r : int[]?):\n"
      "  %l : int[] = prim::ListConstruct()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %a : int[] = aten::append(%l, %1)\n"
      "  return (%x)\n",
      "list mutation");
  unsigned mask = fbx_graph_mutation_mask(g);
  ck_assert_uint_eq(mask, FBX_MUT_LIST);
  ck_assert(!fbx_type_may_be_written(fbx_graph_find_value(g, "x")->type, mask));
  ck_assert(!fbx_type_may_be_written(fbx_graph_find_value(g, "p")->type, mask));
  ck_assert(fbx_type_may_be_written(fbx_graph_find_value(g, "q")->type, mask));
  ck_assert(fbx_type_may_be_written(fbx_graph_find_value(g, "r")->type, mask));
  ck_assert(fbx_type_may_be_written(fbx_graph_find_value(g, "l")->type, mask));
  ck_assert(!fbx_type_may_be_written(fbx_graph_find_value(g, "1")->type, FBX_MUT_ALL));
  fbx_graph_destroy(g);
  g = parse(
      "graph(%x : Tensor):\n"
      "  %y : Tensor = aten::relu_(%x)\n"
      "  return (%x)\n",
      "tensor mutation");
  ck_assert_uint_eq(fbx_graph_mutation_mask(g), FBX_MUT_TENSOR);
  fbx_graph_destroy(g);
  g = parse(
      "graph(%x : Tensor):\n"
      "  %y : Tensor = custom::op(%x)\n"
      "  return (%y)\n",
      "unknown code");
  ck_assert_uint_eq(fbx_graph_mutation_mask(g), FBX_MUT_ALL);
  ck_assert(fbx_node_has_side_effects(fbx_graph_find_value(g, "y")->node));
  fbx_graph_destroy(g);
}
END_TEST

/* ---- tensor folder hook -------------------------------------------------------------- */

static int folder_calls;

/* A stand-in for the reference interpreter: abs of the constant {2} is itself. */
static fbx_status *fake_folder(fbx_node *n, bool *folded) {
  folder_calls++;
  *folded = false;
  if (strcmp(fbx_sym_str(n->kind), "aten::abs")) return NULL;
  fbx_value_replace_all_uses(n->outputs[0], n->inputs[0]);
  *folded = true;
  return NULL;
}

START_TEST(tensor_folder_hook) {
  const char *text =
      "graph(%x : Tensor):\n"
      "  %t : Tensor = prim::Constant[value={2}]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %a : Tensor = aten::abs(%t)\n"
      "  %b : Tensor = aten::mul(%a, %x)\n"
      "  %r : Tensor = aten::rand_like(%t, %none, %none, %none, %none, %none)\n"
      "  %o : (Tensor, Tensor) = prim::TupleConstruct(%b, %r)\n"
      "  return (%o)\n";
  fbx_graph *g = parse(text, "folder");
  folder_calls = 0;
  fbx_pass_set_tensor_folder(fake_folder);
  bool changed = false;
  fbx_status *st = fbx_pass_constprop(g, &changed);
  fbx_pass_set_tensor_folder(NULL);
  ck_assert_msg(st == NULL, "%s", fbx_status_message(st));
  ck_assert(changed);
  /* Called for abs only: mul has a non-constant input, rand_like is random. */
  ck_assert_int_eq(folder_calls, 1);
  assert_valid(g, "folder");
  fbx_node *mul = fbx_graph_find_value(g, "b")->node;
  ck_assert_ptr_eq(mul->inputs[0], fbx_graph_find_value(g, "t"));
  ck_assert_ptr_null(fbx_graph_find_value(g, "a"));
  fbx_graph_destroy(g);

  /* Unregistered: nothing happens to tensors. */
  g = parse(text, "folder");
  st = fbx_pass_constprop(g, &changed);
  ck_assert(st == NULL && !changed);
  fbx_graph_destroy(g);
}
END_TEST

/* A folder with a bug: its constant lands after the node's users. */
static fbx_status *bad_folder(fbx_node *n, bool *folded) {
  *folded = false;
  if (strcmp(fbx_sym_str(n->kind), "aten::abs")) return NULL;
  fbx_node *c = fbx_node_create(n->graph, FBX_SYM_prim_Constant, 1);
  ck_assert_ptr_nonnull(c);
  fbx_node_append(n->graph->block, c);
  fbx_value_set_type(c->outputs[0], fbx_type_simple(FBX_TYPE_NONE));
  fbx_value_replace_all_uses(n->outputs[0], c->outputs[0]);
  *folded = true;
  return NULL;
}

START_TEST(pipeline_verifies_between_passes) {
  fbx_graph *g = parse(
      "graph(%x : Tensor):\n"
      "  %t : Tensor = prim::Constant[value={2}]()\n"
      "  %a : Tensor = aten::abs(%t)\n"
      "  %b : Tensor = aten::mul(%a, %x)\n"
      "  return (%b)\n",
      "bad folder");
  setenv("FUSEBOX_VERIFY", "1", 1);
  fbx_pass_set_tensor_folder(bad_folder);
  fbx_status *st = fbx_pass_pipeline(g, "default");
  fbx_pass_set_tensor_folder(NULL);
  unsetenv("FUSEBOX_VERIFY");
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_VERIFY);
  ck_assert_msg(strstr(fbx_status_message(st), "after pass constprop"), "%s", fbx_status_message(st));
  fbx_status_free(st);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- pipeline API ---------------------------------------------------------------------- */

START_TEST(pipeline_unknown_pass) {
  fbx_graph *g = parse("graph(%x : Tensor):\n  %a : Tensor = aten::relu(%x)\n  return (%x)\n", "unknown");
  fbx_status *st = fbx_pass_pipeline(g, "dce,frobnicate");
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  const char *msg = fbx_status_message(st);
  ck_assert_msg(strstr(msg, "frobnicate") && strstr(msg, "constprop") && strstr(msg, "peephole"), "%s", msg);
  fbx_status_free(st);
  /* Nothing ran, not even the valid dce before the bad name. */
  ck_assert_int_eq(fbx_graph_count_nodes(g), 1);
  ck_assert(fbx_pass_pipeline(g, "dce") == NULL);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 0);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(disable_switch) {
  const char *text =
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %a : Tensor = aten::mul(%x, %y)\n"
      "  %b : Tensor = aten::mul(%x, %y)\n"
      "  %d : Tensor = aten::relu(%x)\n"
      "  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)\n"
      "  return (%r)\n";
  fbx_graph *g = parse(text, "disable");
  setenv("FUSEBOX_DISABLE_PASSES", "peephole,cse", 1);
  ck_assert(fbx_pass_disabled("cse") && fbx_pass_disabled("peephole") && !fbx_pass_disabled("dce"));
  bool changed = true;
  ck_assert(fbx_pass_cse(g, &changed) == NULL);
  ck_assert(!changed);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 4);
  ck_assert(fbx_pass_run_list(g, "default", &changed) == NULL);
  ck_assert(changed);                             /* dce still ran */
  ck_assert_int_eq(fbx_graph_count_nodes(g), 3); /* but the muls were not merged */
  setenv("FUSEBOX_DISABLE_PASSES", "all", 1);
  ck_assert(fbx_pass_disabled("dce"));
  fbx_graph_destroy(g);
  g = parse(text, "disable");
  ck_assert(fbx_pass_run_list(g, "default", &changed) == NULL);
  ck_assert(!changed);
  ck_assert(fbx_pass_dce(g, &changed) == NULL && !changed);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 4);
  unsetenv("FUSEBOX_DISABLE_PASSES");
  ck_assert(fbx_pass_run_list(g, "default", &changed) == NULL);
  ck_assert(changed);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 2);
  fbx_graph_destroy(g);
}
END_TEST

/* Capture what the passes write to stderr while running `list` on `text`. */
static char *capture_log(const char *text, const char *list) {
  fbx_graph *g = parse(text, "log");
  fflush(stderr);
  char path[] = "/tmp/fbx_passes_logXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  int saved = dup(2);
  dup2(fd, 2);
  fbx_status *st = fbx_pass_pipeline(g, list);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  ck_assert(st == NULL);
  char *out = tu_read_file(path, NULL);
  unlink(path);
  ck_assert_ptr_nonnull(out);
  fbx_graph_destroy(g);
  return out;
}

START_TEST(logging) {
  const char *text =
      "graph(%x : Tensor):\n"
      "  %a : Tensor = aten::relu(%x)\n"
      "  %b : Tensor = aten::relu(%x)\n"
      "  %c : Tensor = aten::sigmoid(%x)\n"
      "  %r : Tensor = aten::mul(%a, %b)\n"
      "  return (%r)\n";
  setenv("FUSEBOX_LOG", "passes", 1);
  fbx_log_reload();
  char *out = capture_log(text, "default");
  ck_assert_msg(strstr(out, "dce: removed 1 nodes"), "%s", out);
  ck_assert_msg(strstr(out, "cse: merged 1 nodes"), "%s", out);
  ck_assert_msg(strstr(out, "graph after cse:"), "%s", out);
  ck_assert_msg(strstr(out, "aten::mul(%a, %a)"), "%s", out);
  free(out);
  setenv("FUSEBOX_DISABLE_PASSES", "cse", 1);
  out = capture_log(text, "cse");
  ck_assert_msg(strstr(out, "cse: skipped"), "%s", out);
  free(out);
  unsetenv("FUSEBOX_DISABLE_PASSES");
  setenv("FUSEBOX_LOG", "", 1);
  fbx_log_reload();
  out = capture_log(text, "default");
  ck_assert_str_eq(out, "");
  free(out);
}
END_TEST

/* ---- the corpus --------------------------------------------------------------------------- */

typedef struct corpus {
  char **paths;
  int count;
  int real; /* from tests/corpus (PyTorch's own graphs); the rest from tests/passes */
} corpus;

static void add_path(corpus *c, const char *path) {
  c->paths = realloc(c->paths, sizeof *c->paths * (size_t)(c->count + 1));
  ck_assert_ptr_nonnull(c->paths);
  c->paths[c->count++] = strdup(path);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static corpus load_corpus(void) {
  corpus c = {0};
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", tu_src_path("tests/corpus/graphs"));
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      size_t n = strlen(e->d_name);
      if (n > 3 && !strcmp(e->d_name + n - 3, ".ir")) {
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        add_path(&c, p);
      }
    }
    closedir(d);
  }
  snprintf(dir, sizeof dir, "%s", tu_src_path("tests/corpus/cases"));
  d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (e->d_name[0] == '.') continue;
      char p[8192];
      snprintf(p, sizeof p, "%s/%s/graph.ir", dir, e->d_name);
      if (access(p, R_OK) == 0) add_path(&c, p);
    }
    closedir(d);
  }
  if (c.count) qsort(c.paths, (size_t)c.count, sizeof *c.paths, cmp_str);
  c.real = c.count;
  snprintf(dir, sizeof dir, "%s", tu_src_path("tests/passes"));
  d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      size_t n = strlen(e->d_name);
      if (n > 3 && !strcmp(e->d_name + n - 3, ".ir")) {
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        add_path(&c, p);
      }
    }
    closedir(d);
  }
  return c;
}

static void free_corpus(corpus *c) {
  for (int i = 0; i < c->count; i++) free(c->paths[i]);
  free(c->paths);
}

/* The corpus must not be (nearly) empty: an empty one would pass vacuously. */
enum { MIN_CORPUS_GRAPHS = 20 };

static corpus load_corpus_checked(void) {
  corpus c = load_corpus();
  int real = c.real;
  if (real < MIN_CORPUS_GRAPHS) free_corpus(&c);
  ck_assert_msg(real >= MIN_CORPUS_GRAPHS, "only %d corpus graphs found under tests/corpus", real);
  return c;
}

/* Parse a corpus graph; NULL (and the error noted in *errors) when the parser
 * rejects it, so that one unparsable graph does not hide results for the rest.
 * The test still fails at the end for it. */
static fbx_graph *load_graph(const char *path, char *errors, size_t cap) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (!st) return g;
  size_t len = strlen(errors);
  const char *msg = fbx_status_message(st);
  snprintf(errors + len, cap - len, "%.*s\n", (int)strcspn(msg, "\n"), msg);
  fbx_status_free(st);
  return NULL;
}

static char parse_errors[1 << 16];

START_TEST(corpus_every_pass_keeps_graphs_valid) {
  corpus c = load_corpus_checked();
  static const char *const lists[] = {"dce", "cse", "constprop", "constpool", "peephole", "default"};
  parse_errors[0] = '\0';
  for (int i = 0; i < c.count; i++) {
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
      fbx_graph *g = load_graph(c.paths[i], parse_errors, sizeof parse_errors);
      if (!g) break;
      char what[8300];
      snprintf(what, sizeof what, "%s [%s]", c.paths[i], lists[k]);
      run_passes(g, lists[k], what);
      fbx_graph_destroy(g);
    }
  }
  free_corpus(&c);
  ck_assert_msg(!parse_errors[0], "corpus graphs the parser rejects:\n%s", parse_errors);
}
END_TEST

START_TEST(corpus_pipeline_idempotent) {
  corpus c = load_corpus_checked();
  int shrunk = 0;
  parse_errors[0] = '\0';
  for (int i = 0; i < c.count; i++) {
    fbx_graph *g = load_graph(c.paths[i], parse_errors, sizeof parse_errors);
    if (!g) continue;
    int before = fbx_graph_count_nodes(g);
    run_passes(g, "default", c.paths[i]);
    shrunk += fbx_graph_count_nodes(g) < before;
    char *first = print(g);
    bool changed = true;
    fbx_status *st = fbx_pass_run_list(g, "default", &changed);
    ck_assert_msg(st == NULL, "%s: %s", c.paths[i], fbx_status_message(st));
    char *second = print(g);
    ck_assert_msg(!changed, "%s: second default run reported a change", c.paths[i]);
    ck_assert_msg(!strcmp(first, second), "%s: second run changed the graph:\n%s\n---\n%s", c.paths[i], first,
                  second);
    /* The printed result parses back to the same text. */
    fbx_graph *again = parse(second, c.paths[i]);
    char *third = print(again);
    ck_assert_msg(!strcmp(second, third), "%s: optimized graph does not round-trip", c.paths[i]);
    fbx_free(first);
    fbx_free(second);
    fbx_free(third);
    fbx_graph_destroy(again);
    fbx_graph_destroy(g);
  }
  /* Real graphs have constants to pool and dead nodes to remove. */
  int count = c.count;
  free_corpus(&c);
  ck_assert_msg(shrunk > 0, "the pipeline optimized none of %d corpus graphs", count);
  ck_assert_msg(!parse_errors[0], "corpus graphs the parser rejects:\n%s", parse_errors);
}
END_TEST

/* ---- allocation failures ---------------------------------------------------------------- */

static void fault_inject(const char *text, const char *what) {
  fbx_graph *g0 = parse(text, what);
  bool completed = false;
  for (long n = 0; n < 100000 && !completed; n++) {
    fbx_graph *g = fbx_graph_clone(g0);
    ck_assert_ptr_nonnull(g);
    fbx_alloc_fail_after(n);
    fbx_status *st = fbx_pass_pipeline(g, "default");
    long failures = fbx_alloc_failures();
    fbx_alloc_fail_after(-1);
    ck_assert_msg(st == NULL || fbx_status_code(st) == FBX_ERR_NOMEM, "%s, fail after %ld: %s", what, n,
                  fbx_status_message(st));
    if (failures == 0) {
      ck_assert_msg(st == NULL, "%s: no allocation failed but got %s", what, fbx_status_message(st));
      completed = true;
    } else {
      ck_assert_msg(st != NULL, "%s, fail after %ld: an allocation failed but the pipeline succeeded", what, n);
    }
    fbx_status_free(st);
    /* Half optimized is fine; invalid is not. */
    char ctx[512];
    snprintf(ctx, sizeof ctx, "%s after failing allocation %ld", what, n);
    assert_valid(g, ctx);
    fbx_graph_destroy(g);
  }
  ck_assert(completed);
  fbx_graph_destroy(g0);
}

START_TEST(pipeline_survives_allocation_failures) {
  static const char *const names[] = {
      "pipeline_default",           "dce_loop_unused_carried",           "dce_if_unused_outputs",
      "constprop_tensor_types",     "constprop_list_and_tuple_elements", "constprop_conversions_minmax_str",
      "peephole_if_constant",       "peephole_is_none",                  "cse_lists_without_mutation",
      "cse_scoped_by_block",        "constpool_hoists_from_blocks",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) fault_inject(case_input(names[i]), names[i]);
  /* A few real graphs, the largest ones exercising the most paths. */
  corpus c = load_corpus();
  for (int i = 0; i < c.count; i += c.count / 8 + 1) {
    char *text = tu_read_file(c.paths[i], NULL);
    ck_assert_ptr_nonnull(text);
    fbx_graph *g = NULL;
    fbx_status *st = fbx_graph_parse(&g, text, strlen(text), c.paths[i]);
    fbx_graph_destroy(g);
    if (!st) fault_inject(text, c.paths[i]); /* unparsable ones are reported by the corpus tests */
    fbx_status_free(st);
    free(text);
  }
  free_corpus(&c);
}
END_TEST

int main(void) {
  Suite *s = suite_create("passes");
  TCase *tc = tcase_create("cases");
  tcase_add_loop_test(tc, dce_case, 0, NCASES(dce_cases));
  tcase_add_loop_test(tc, cse_case, 0, NCASES(cse_cases));
  tcase_add_loop_test(tc, constprop_case, 0, NCASES(constprop_cases));
  tcase_add_loop_test(tc, constpool_case, 0, NCASES(constpool_cases));
  tcase_add_loop_test(tc, peephole_case, 0, NCASES(peephole_cases));
  tcase_add_loop_test(tc, pipeline_case, 0, NCASES(pipeline_cases));
  suite_add_tcase(s, tc);
  TCase *api = tcase_create("api");
  tcase_add_test(api, effects_classification);
  tcase_add_test(api, tensor_folder_hook);
  tcase_add_test(api, pipeline_unknown_pass);
  tcase_add_test(api, disable_switch);
  tcase_add_test(api, logging);
  tcase_add_test(api, pipeline_verifies_between_passes);
  tcase_add_test(api, cases_all_passes_valid_and_idempotent);
  suite_add_tcase(s, api);
  TCase *corp = tcase_create("corpus");
  tcase_set_timeout(corp, 600);
  tcase_add_test(corp, corpus_every_pass_keeps_graphs_valid);
  tcase_add_test(corp, corpus_pipeline_idempotent);
  tcase_add_test(corp, pipeline_survives_allocation_failures);
  suite_add_tcase(s, corp);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
