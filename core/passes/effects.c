/* Side effects, mutation and nondeterminism of nodes: the rules in one place.
 *
 * When the op table (core/ops) exists it becomes the source of truth for
 * these properties; until then they are spelled out here by op name, and
 * passes.h documents them. Everything unknown is treated conservatively:
 * code in another namespace is assumed to have effects. */
#include <string.h>

#include "passes/passes.h"
#include "passes/passutil.h"

static bool name_in(const char *name, const char *const *list) {
  for (; *list; list++)
    if (!strcmp(name, *list)) return true;
  return false;
}

static bool is_aten(const fbx_node *n) { return fbx_sym_in_ns(n->kind, "aten"); }

/* aten::add_ and aten::copy_, not aten::__and__. */
static bool is_inplace_name(const char *u) {
  size_t len = strlen(u);
  return len >= 2 && u[len - 1] == '_' && u[len - 2] != '_';
}

static const char *const container_mutators[] = {
    "append", "_set_item", "__setitem__", "insert", "pop", "clear", "extend", "remove",
    "reverse", "update", "setdefault", "popitem", "__delitem__", "Delete",
    /* augmented assignment on tensors: x &= y */
    "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", NULL};

bool fbx_node_is_mutating(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_SetAttr) return true;
  if (!is_aten(n)) return false;
  const char *u = fbx_sym_unqual(n->kind);
  if (is_inplace_name(u) || name_in(u, container_mutators)) return true;
  /* list.sort() sorts in place and returns nothing; aten::sort of a tensor
   * returns (values, indices). */
  return !strcmp(u, "sort") && n->noutputs == 0;
}

static bool block_has_side_effects(const fbx_block *b) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next)
    if (fbx_node_has_side_effects(n)) return true;
  return false;
}

static const char *const effectful_prims[] = {
    "RaiseException", "Print", "SetAttr", "profile", "profile_ivalue", "Enter", "Exit",
    "rpc_async", "CallFunction", "CallMethod", "AddStatValue", "TimePoint", NULL};

static const char *const effectful_atens[] = {"warn", "manual_seed", "save", "wait", NULL};

bool fbx_node_has_side_effects(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_Param || n->kind == FBX_SYM_prim_Return) return true;
  for (int i = 0; i < n->nblocks; i++)
    if (block_has_side_effects(n->blocks[i])) return true;
  const fbx_graph *sub = fbx_node_subgraph(n);
  if (sub && block_has_side_effects(sub->block)) return true;
  if (n->kind == FBX_SYM_prim_If || n->kind == FBX_SYM_prim_Loop) return false;
  const char *u = fbx_sym_unqual(n->kind);
  if (fbx_sym_in_ns(n->kind, "prim")) {
    if (name_in(u, effectful_prims)) return true;
  } else if (is_aten(n)) {
    if (name_in(u, effectful_atens) || fbx_node_is_mutating(n)) return true;
  } else if (!fbx_sym_in_ns(n->kind, "fusebox")) {
    return true; /* unknown namespace: unknown code */
  }
  /* A node without outputs can only be there for its effect. */
  return n->noutputs == 0;
}

/* The `train` argument of the dropout family is its last input. */
static bool train_is_const_false(const fbx_node *n) {
  int64_t v;
  if (n->ninputs < 1) return false;
  const fbx_value *t = n->inputs[n->ninputs - 1];
  return t->type->kind == FBX_TYPE_BOOL && fbx_value_const_int(t, &v) && v == 0;
}

static const char *const random_ops[] = {
    "rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
    "bernoulli", "normal", "poisson", "multinomial", "native_dropout", "uniform_", "normal_",
    "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_", "log_normal_", NULL};

static const char *const dropout_ops[] = {
    "dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "dropout_",
    "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_", NULL};

bool fbx_node_is_nondeterministic(const fbx_node *n) {
  if (!is_aten(n)) return false;
  const char *u = fbx_sym_unqual(n->kind);
  if (name_in(u, random_ops)) return true;
  if (name_in(u, dropout_ops)) return !train_is_const_false(n);
  /* rrelu(self, lower, upper, training=False, generator=None): training is
   * the fourth input. */
  if (!strcmp(u, "rrelu") || !strcmp(u, "rrelu_")) {
    int64_t v;
    return !(n->ninputs >= 4 && n->inputs[3]->type->kind == FBX_TYPE_BOOL &&
             fbx_value_const_int(n->inputs[3], &v) && v == 0);
  }
  return false;
}

/* ---- what mutation can reach --------------------------------------------------
 *
 * A small type-based alias analysis: values are grouped by the kinds of
 * mutable object they are or hold (tensors, lists, dicts, anything else),
 * and a graph by the kinds its mutating nodes write. A value can be written
 * only if its kinds meet the graph's. Writing a list (append) does not write
 * the tensors in it; writing a tensor in place writes every tensor (it may be
 * a view of any other). */

static unsigned type_classes(const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_TENSOR: return FBX_MUT_TENSOR;
    case FBX_TYPE_LIST: return FBX_MUT_LIST | type_classes(t->elems[0]);
    case FBX_TYPE_DICT: return FBX_MUT_DICT | type_classes(t->elems[0]) | type_classes(t->elems[1]);
    case FBX_TYPE_NAMED: return FBX_MUT_ALL; /* Any, classes, Future(...): unknown */
    case FBX_TYPE_OPTIONAL:
    case FBX_TYPE_TUPLE: {
      unsigned m = 0;
      for (int i = 0; i < t->nelems; i++) m |= type_classes(t->elems[i]);
      return m;
    }
    default: return 0;
  }
}

/* The kind of object a mutating node writes: its first input itself. */
static unsigned written_classes(const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_TENSOR: return FBX_MUT_TENSOR;
    case FBX_TYPE_LIST: return FBX_MUT_LIST;
    case FBX_TYPE_DICT: return FBX_MUT_DICT;
    case FBX_TYPE_OPTIONAL: return written_classes(t->elems[0]);
    default: return FBX_MUT_ALL;
  }
}

static bool is_unknown_code(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_CallFunction || n->kind == FBX_SYM_prim_CallMethod) return true;
  return !is_aten(n) && !fbx_sym_in_ns(n->kind, "prim") && !fbx_sym_in_ns(n->kind, "fusebox");
}

static unsigned block_mutation_mask(const fbx_block *b) {
  unsigned m = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (fbx_node_is_mutating(n)) m |= n->ninputs ? written_classes(n->inputs[0]->type) : FBX_MUT_ALL;
    else if (is_unknown_code(n)) m |= FBX_MUT_ALL;
    for (int i = 0; i < n->nblocks; i++) m |= block_mutation_mask(n->blocks[i]);
  }
  return m;
}

unsigned fbx_graph_mutation_mask(const fbx_graph *g) { return block_mutation_mask(g->block); }

bool fbx_type_may_be_written(const fbx_type *t, unsigned mask) { return (type_classes(t) & mask) != 0; }

bool fbx_graph_has_mutation(const fbx_graph *g) { return fbx_graph_mutation_mask(g) != 0; }
/* Could a value of type t be (or contain) a reference to a mutable
 * container? Tensors are not containers here: mutating a tensor element does
 * not change what a list holds. */
static bool may_alias_container(const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_LIST:
    case FBX_TYPE_DICT:
    case FBX_TYPE_NAMED: return true;
    case FBX_TYPE_OPTIONAL:
    case FBX_TYPE_TUPLE:
      for (int i = 0; i < t->nelems; i++)
        if (may_alias_container(t->elems[i])) return true;
      return false;
    default: return false;
  }
}

bool fbx_value_may_be_mutated(const fbx_value *v) {
  if (!fbx_type_may_be_written(v->type, fbx_graph_mutation_mask(v->node->graph))) return false;
  for (int i = 0; i < v->nuses; i++) {
    const fbx_node *u = v->uses[i].user;
    if (u->kind == FBX_SYM_prim_Return || u->nblocks || fbx_node_has_side_effects(u)) return true;
    for (int o = 0; o < u->noutputs; o++)
      if (may_alias_container(u->outputs[o]->type)) return true;
  }
  return false;
}
