/* Peephole rewrites: small local patterns, each counted and logged.
 *
 * A rewritten node is removed when it is left without uses; the producers it
 * read from are left to dce. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "passes/passes.h"
#include "passes/passutil.h"

enum rule {
  R_T_T,
  R_CONTIGUOUS,
  R_TUPLE_UNPACK,
  R_TUPLE_INDEX,
  R_LIST_UNPACK,
  R_IF_CONST,
  R_IS_NONE,
  R_UNCHECKED_CAST,
  R_CAST_CONST,
  R_COUNT
};

static const char *const rule_names[R_COUNT] = {
    "t(t(x))", "contiguous", "TupleUnpack(TupleConstruct)", "TupleIndex(TupleConstruct)",
    "ListUnpack(ListConstruct)", "If(constant)", "is/isnot None", "unchecked_cast", "unchecked_cast(constant)"};

typedef struct ph_ctx {
  int counts[R_COUNT];
} ph_ctx;

static bool type_contiguous(const fbx_type *t) {
  if (t->kind != FBX_TYPE_TENSOR || t->rank < 0) return false;
  if (t->rank == 0) return true;
  if (!t->strides) return false;
  for (int i = 0; i < t->rank; i++) {
    if (t->sizes[i] < 0) return false; /* unknown or symbolic */
    if (t->sizes[i] == 0) return true;  /* empty: every layout is contiguous */
  }
  int64_t expected = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    if (t->sizes[i] != 1 && t->strides[i] != expected) return false;
    expected *= t->sizes[i];
  }
  return true;
}

/* Replace n's outputs by `vals` (one per output) and remove n. */
static fbx_status *forward(fbx_node *n, fbx_value *const *vals) {
  for (int i = 0; i < n->noutputs; i++) FBX_TRY(fbx_passutil_replace_uses(n->outputs[i], vals[i]));
  fbx_node_destroy(n);
  return NULL;
}

/* Can a None-typed value never be identical to a value of type t? */
static bool never_none(const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_OPTIONAL:
    case FBX_TYPE_NONE:
    case FBX_TYPE_NAMED: /* Any, Scalar, classes: unknown */
      return false;
    default: return true;
  }
}

/* Inline the taken block of an If on a constant condition before the If. */
static fbx_status *inline_if(fbx_node *n, int taken) {
  fbx_block *b = n->blocks[taken];
  for (fbx_node *m = fbx_block_first(b), *next; m; m = next) {
    next = m->next;
    fbx_node_move_before(m, n);
  }
  for (int i = 0; i < n->noutputs; i++)
    FBX_TRY(fbx_passutil_replace_uses(n->outputs[i], fbx_block_return(b, i)));
  fbx_node_destroy(n);
  return NULL;
}

static bool is_scalar_kind(fbx_type_kind k) {
  return k == FBX_TYPE_INT || k == FBX_TYPE_FLOAT || k == FBX_TYPE_BOOL || k == FBX_TYPE_STR || k == FBX_TYPE_DEVICE;
}

/* prim::unchecked_cast of a constant that is not None: the constant itself
 * when its type is already a plain scalar type (the cast only widened it to
 * Scalar, number or an optional), else a new int/float/bool constant of the
 * type the cast names (or, for Scalar and number, of the value's own kind).
 * Formulas cast their optional Scalar arguments this way; folded, the
 * operation that uses the cast sees a constant scalar, which fusers accept.
 * *out is NULL when the rule does not apply. */
static fbx_status *cast_constant(fbx_node *n, fbx_value **out) {
  *out = NULL;
  fbx_value *in = n->inputs[0];
  const fbx_type *to = n->outputs[0]->type;
  if (!fbx_value_is_const(in) || fbx_value_is_none(in) || to->kind == FBX_TYPE_OPTIONAL || to->kind == FBX_TYPE_NONE)
    return NULL;
  bool widening = to->kind == FBX_TYPE_NUMBER || (to->kind == FBX_TYPE_NAMED && to->name && !strcmp(to->name, "Scalar"));
  if (is_scalar_kind(in->type->kind)) {
    if (to->kind == in->type->kind || widening) *out = in;
    return NULL;
  }
  const fbx_attr *a = fbx_node_attr(in->node, FBX_SYM_attr_value);
  if (!a || (a->kind != FBX_ATTR_INT && a->kind != FBX_ATTR_FLOAT)) return NULL;
  fbx_type_kind k;
  if (a->kind == FBX_ATTR_FLOAT && (to->kind == FBX_TYPE_FLOAT || widening)) k = FBX_TYPE_FLOAT;
  else if (a->kind == FBX_ATTR_INT && (to->kind == FBX_TYPE_INT || to->kind == FBX_TYPE_BOOL)) k = to->kind;
  else if (a->kind == FBX_ATTR_INT && widening) k = FBX_TYPE_INT;
  else return NULL;
  fbx_value *c = k == FBX_TYPE_FLOAT  ? fbx_insert_const_float(n->owner, n, a->u.f)
                 : k == FBX_TYPE_BOOL ? fbx_insert_const_bool(n->owner, n, a->u.i != 0)
                                      : fbx_insert_const_int(n->owner, n, a->u.i);
  if (!c) return fbx_status_nomem();
  *out = c;
  return NULL;
}

/* Apply the first rule that matches n; *rule is set to it, or R_COUNT. */
static fbx_status *rewrite(fbx_node *n, enum rule *rule) {
  *rule = R_COUNT;
  fbx_node *src = n->ninputs ? n->inputs[0]->node : NULL;
  int64_t k;

  if (n->kind == FBX_SYM_aten_t && n->ninputs == 1 && n->noutputs == 1 && src->kind == FBX_SYM_aten_t &&
      src->ninputs == 1 && !fbx_value_may_be_mutated(n->outputs[0])) {
    *rule = R_T_T;
    return forward(n, &src->inputs[0]);
  }
  if (n->kind == FBX_SYM_aten_contiguous && n->noutputs == 1 && (n->ninputs == 1 || n->ninputs == 2) &&
      type_contiguous(n->inputs[0]->type)) {
    /* memory_format 0 is torch.contiguous_format. */
    if (n->ninputs == 1 || (fbx_value_const_int(n->inputs[1], &k) && k == 0)) {
      *rule = R_CONTIGUOUS;
      return forward(n, &n->inputs[0]);
    }
  }
  if (n->kind == FBX_SYM_prim_TupleUnpack && n->ninputs == 1 && src->kind == FBX_SYM_prim_TupleConstruct &&
      src->ninputs == n->noutputs) {
    *rule = R_TUPLE_UNPACK;
    return forward(n, src->inputs);
  }
  if (n->kind == FBX_SYM_prim_TupleIndex) {
    fbx_value *e = fbx_passutil_fold_index(n);
    if (e) {
      *rule = R_TUPLE_INDEX;
      return forward(n, &e);
    }
  }
  if (n->kind == FBX_SYM_prim_ListUnpack && n->ninputs == 1 && src->kind == FBX_SYM_prim_ListConstruct &&
      src->ninputs == n->noutputs && !fbx_value_may_be_mutated(n->inputs[0])) {
    *rule = R_LIST_UNPACK;
    return forward(n, src->inputs);
  }
  if (n->kind == FBX_SYM_prim_If && n->nblocks == 2 && n->ninputs == 1 &&
      n->inputs[0]->type->kind == FBX_TYPE_BOOL && fbx_value_const_int(n->inputs[0], &k)) {
    *rule = R_IF_CONST;
    return inline_if(n, k ? 0 : 1);
  }
  if ((n->kind == FBX_SYM_aten___is__ || n->kind == FBX_SYM_aten___isnot__) && n->ninputs == 2 &&
      n->noutputs == 1 && n->outputs[0]->type->kind == FBX_TYPE_BOOL) {
    const fbx_type *a = n->inputs[0]->type, *b = n->inputs[1]->type;
    int result = -1; /* of `is` */
    if (a->kind == FBX_TYPE_NONE && b->kind == FBX_TYPE_NONE) result = 1;
    else if ((a->kind == FBX_TYPE_NONE && never_none(b)) || (b->kind == FBX_TYPE_NONE && never_none(a)))
      result = 0;
    if (result >= 0) {
      bool v = n->kind == FBX_SYM_aten___is__ ? result : !result;
      fbx_value *c = fbx_insert_const_bool(n->owner, n, v);
      if (!c) return fbx_status_nomem();
      *rule = R_IS_NONE;
      const char *name = n->outputs[0]->name;
      FBX_TRY(forward(n, &c));
      if (!fbx_passutil_is_numeric_name(name)) c->name = name; /* its old holder is gone */
      return NULL;
    }
  }
  if (n->kind == FBX_SYM_prim_unchecked_cast && n->ninputs == 1 && n->noutputs == 1 &&
      never_none(n->inputs[0]->type) && fbx_type_equal(n->inputs[0]->type, n->outputs[0]->type)) {
    *rule = R_UNCHECKED_CAST;
    return forward(n, &n->inputs[0]);
  }
  if (n->kind == FBX_SYM_prim_unchecked_cast && n->ninputs == 1 && n->noutputs == 1) {
    fbx_value *c;
    FBX_TRY(cast_constant(n, &c));
    if (c) {
      *rule = R_CAST_CONST;
      return forward(n, &c);
    }
  }
  return NULL;
}

static fbx_status *ph_block(ph_ctx *c, fbx_block *b) {
  for (fbx_node *n = fbx_block_first(b); n;) {
    fbx_node *prev = n->prev; /* rewrites remove n, never what precedes it */
    enum rule r;
    FBX_TRY(rewrite(n, &r));
    if (r == R_COUNT) {
      for (int i = 0; i < n->nblocks; i++) FBX_TRY(ph_block(c, n->blocks[i]));
      n = n->next;
      continue;
    }
    c->counts[r]++;
    /* Go on from what now follows prev: a constant the rewrite inserted, or
     * the nodes an If on a constant inlined, which get their turn too. */
    n = prev ? prev->next : fbx_block_first(b);
  }
  return NULL;
}

fbx_status *fbx_pass_peephole(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("peephole", changed)) return NULL;
  ph_ctx c = {0};
  fbx_status *err = ph_block(&c, g->block);
  int total = 0;
  for (int r = 0; r < R_COUNT; r++) total += c.counts[r];
  if (changed) *changed = total > 0;
  if (total && fbx_log_on(FBX_LOG_PASSES)) {
    char line[512];
    size_t len = 0;
    for (int r = 0; r < R_COUNT && len < sizeof line; r++)
      if (c.counts[r])
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s x%d", len ? ", " : "", rule_names[r],
                                c.counts[r]);
    fbx_log(FBX_LOG_PASSES, "peephole: %d rewrites (%s)", total, line);
  }
  return err;
}
