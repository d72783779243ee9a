#include "ir/verify.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "base/workcount.h"
#include "ir/text.h"

typedef struct vctx {
  const fbx_graph *g;
  fbx_ptrmap in_scope; /* values visible at the current point */
  fbx_ptrmap slots;    /* &user->inputs[offset] -> how many use-list entries name that input slot */
  fbx_status *err;
} vctx;

static fbx_status *fail_at(const fbx_node *n, const char *fmt, const char *detail) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "invalid graph: ");
  fbx_strbuf_printf(&b, fmt, detail);
  if (n && n->kind != FBX_SYM_prim_Param && n->kind != FBX_SYM_prim_Return) {
    fbx_strbuf_puts(&b, "\n  in node: ");
    fbx_node_print_line(&b, n);
  } else if (n) {
    fbx_strbuf_printf(&b, " (in %s of a block)", fbx_sym_str(n->kind));
  }
  if (n && n->srcloc) fbx_strbuf_printf(&b, "  # %s", n->srcloc);
  fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_VERIFY, "%s", b.data);
  fbx_strbuf_free(&b);
  return st;
}

static bool type_is(const fbx_value *v, fbx_type_kind k) { return v->type && v->type->kind == k; }

static fbx_status *check_type(const fbx_node *n, const fbx_type *t) {
  if (!t) return fail_at(n, "%s", "a value has no type");
  switch (t->kind) {
    case FBX_TYPE_TENSOR:
      if (t->dtype != FBX_DTYPE_UNDEFINED && !fbx_dtype_valid(t->dtype))
        return fail_at(n, "%s", "tensor type with an invalid dtype");
      if (t->rank < -1 || (t->rank > 0 && !t->sizes))
        return fail_at(n, "%s", "tensor type with a malformed rank");
      return NULL;
    case FBX_TYPE_OPTIONAL:
    case FBX_TYPE_LIST:
      if (t->nelems != 1) return fail_at(n, "%s", "Optional/List type without one element type");
      return check_type(n, t->elems[0]);
    case FBX_TYPE_DICT:
      if (t->nelems != 2) return fail_at(n, "%s", "Dict type without key and value types");
      /* fallthrough */
    default:
      for (int i = 0; i < t->nelems; i++) FBX_TRY(check_type(n, t->elems[i]));
      return NULL;
  }
}

static fbx_status *define(vctx *c, const fbx_node *n, fbx_value *v, int offset) {
  if (v->node != n || v->offset != offset)
    return fail_at(n, "value %%%s has a wrong defining node or offset", v->name);
  if (!v->name || !*v->name) return fail_at(n, "%s", "a value has no name");
  FBX_TRY(check_type(n, v->type));
  if (fbx_ptrmap_put(&c->in_scope, v, (void *)v)) return fbx_status_nomem();
  return NULL;
}

/* Use lists against inputs. A value's entries are counted by the input slot
 * they name when its defining node is checked (definitions come first: the
 * scope check runs before this), so a user finds its slot's count in O(1): a
 * value used by k nodes costs O(k), not the O(k^2) of searching its list
 * from every user. */
static fbx_status *check_uses(vctx *c, const fbx_node *n) {
  for (int i = 0; i < n->ninputs; i++) {
    fbx_work_add(FBX_WORK_VERIFY_USE, 1);
    if ((uintptr_t)fbx_ptrmap_get(&c->slots, &n->inputs[i]) != 1)
      return fail_at(n, "the use list of %%%s does not record this input exactly once", n->inputs[i]->name);
  }
  for (int o = 0; o < n->noutputs; o++) {
    fbx_value *v = n->outputs[o];
    fbx_work_add(FBX_WORK_VERIFY_USE, (uint64_t)v->nuses);
    for (int u = 0; u < v->nuses; u++) {
      const fbx_use *use = &v->uses[u];
      if (use->offset < 0 || use->offset >= use->user->ninputs || use->user->inputs[use->offset] != v)
        return fail_at(n, "the use list of %%%s names a node that does not use it", v->name);
      if (use->user->use_at[use->offset] != u)
        return fail_at(n, "the use list of %%%s is out of step with its users' input slots", v->name);
      fbx_value *const *slot = &use->user->inputs[use->offset];
      uintptr_t k = (uintptr_t)fbx_ptrmap_get(&c->slots, slot);
      if (fbx_ptrmap_put(&c->slots, slot, (void *)(k + 1))) return fbx_status_nomem();
    }
  }
  return NULL;
}

static fbx_status *check_inputs_in_scope(vctx *c, const fbx_node *n) {
  for (int i = 0; i < n->ninputs; i++) {
    if (!fbx_ptrmap_get(&c->in_scope, n->inputs[i]))
      return fail_at(n, "%%%s is used where it is not defined (definitions must dominate uses)",
                     n->inputs[i]->name);
  }
  return NULL;
}

static fbx_status *check_block(vctx *c, const fbx_block *b);

static fbx_status *check_control(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_If) {
    if (n->nblocks != 2) return fail_at(n, "%s", "prim::If must have exactly 2 blocks");
    if (n->ninputs != 1) return fail_at(n, "%s", "prim::If takes exactly one input, the condition");
    if (!type_is(n->inputs[0], FBX_TYPE_BOOL))
      return fail_at(n, "%s", "the condition of prim::If must be a bool");
    for (int i = 0; i < 2; i++) {
      if (fbx_block_nparams(n->blocks[i])) return fail_at(n, "%s", "prim::If blocks take no parameters");
      if (fbx_block_nreturns(n->blocks[i]) != n->noutputs)
        return fail_at(n, "%s", "a prim::If block returns a different number of values than the node outputs");
    }
  } else if (n->kind == FBX_SYM_prim_Loop) {
    if (n->nblocks != 1) return fail_at(n, "%s", "prim::Loop must have exactly 1 block");
    if (n->ninputs < 2) return fail_at(n, "%s", "prim::Loop needs (max_trip_count, start_condition, carried...)");
    if (!type_is(n->inputs[0], FBX_TYPE_INT)) return fail_at(n, "%s", "prim::Loop's trip count must be an int");
    if (!type_is(n->inputs[1], FBX_TYPE_BOOL)) return fail_at(n, "%s", "prim::Loop's start condition must be a bool");
    int carried = n->ninputs - 2;
    const fbx_block *body = n->blocks[0];
    if (n->noutputs != carried) return fail_at(n, "%s", "prim::Loop must output one value per carried input");
    if (fbx_block_nparams(body) != carried + 1)
      return fail_at(n, "%s", "prim::Loop's block must take (iteration, carried...) parameters");
    if (!type_is(fbx_block_param(body, 0), FBX_TYPE_INT))
      return fail_at(n, "%s", "prim::Loop's iteration parameter must be an int");
    if (fbx_block_nreturns(body) != carried + 1)
      return fail_at(n, "%s", "prim::Loop's block must return (condition, carried...)");
    if (!type_is(fbx_block_return(body, 0), FBX_TYPE_BOOL))
      return fail_at(n, "%s", "prim::Loop's block must return a bool condition first");
  } else if (n->kind == FBX_SYM_prim_Constant) {
    if (n->ninputs || n->noutputs != 1 || n->nblocks)
      return fail_at(n, "%s", "prim::Constant takes no inputs and has exactly one output");
    const fbx_attr *a = fbx_node_attr(n, FBX_SYM_attr_value);
    fbx_type_kind k = n->outputs[0]->type->kind;
    bool ok = true;
    if (k == FBX_TYPE_INT || k == FBX_TYPE_BOOL)
      ok = a && a->kind == FBX_ATTR_INT;
    else if (k == FBX_TYPE_FLOAT)
      ok = a && a->kind == FBX_ATTR_FLOAT;
    else if (k == FBX_TYPE_STR || k == FBX_TYPE_DEVICE)
      ok = a && a->kind == FBX_ATTR_STR;
    else if (k == FBX_TYPE_NONE)
      ok = !a;
    else if (k == FBX_TYPE_TENSOR)
      ok = a && a->kind == FBX_ATTR_TENSOR;
    if (!ok) return fail_at(n, "%s", "prim::Constant's value attribute does not fit its output type");
  } else if (n->nblocks) {
    return fail_at(n, "%s", "only prim::If and prim::Loop may have blocks");
  }
  return NULL;
}

static fbx_status *check_subgraph(const fbx_node *n) {
  const fbx_graph *sub = fbx_node_subgraph(n);
  if (!sub) return NULL;
  /* A differentiated prim::DifferentiableGraph's forward subgraph also
   * returns the values its backward saves; the node outputs only the real
   * outputs, which come first (PyTorch prints them that way). */
  bool extra_outputs_ok = n->kind == FBX_SYM_prim_DifferentiableGraph;
  if (fbx_graph_ninputs(sub) != n->ninputs || fbx_graph_noutputs(sub) < n->noutputs ||
      (!extra_outputs_ok && fbx_graph_noutputs(sub) != n->noutputs))
    return fail_at(n, "%s", "a group node and its subgraph differ in input or output count");
  fbx_status *st = fbx_graph_verify(sub);
  if (st) return fbx_status_wrap(st, "in the subgraph of %s", fbx_sym_str(n->kind));
  return NULL;
}


/* "<what>: %name is declared <declared> but <producer> gives <produced>". */
static fbx_status *disagree(const fbx_node *n, const char *what, const fbx_value *v, const fbx_type *produced,
                            const char *producer) {
  fbx_strbuf d = {0};
  fbx_strbuf_printf(&d, "%s: %%%s is declared ", what, v->name);
  fbx_type_print(&d, v->type);
  fbx_strbuf_printf(&d, " but %s ", producer);
  fbx_type_print(&d, produced);
  fbx_status *st = d.oom ? fbx_status_nomem() : fail_at(n, "%s", d.data);
  fbx_strbuf_free(&d);
  return st;
}

static fbx_status *agree(const fbx_node *n, const char *what, const fbx_value *v, const fbx_type *produced,
                         const char *producer) {
  if (v->type && produced && !fbx_type_may_agree(v->type, produced)) return disagree(n, what, v, produced, producer);
  return NULL;
}

/* A declared type must not contradict what produces the value: the
 * executor sizes its output buffers from the declared types, so a `Tensor`
 * that is really a 3-tuple would overflow them (issue #12). */
static fbx_status *check_agreement(const fbx_node *n) {
  fbx_sym k = n->kind;
  if (k == FBX_SYM_prim_TupleConstruct) {
    if (n->noutputs != 1) return fail_at(n, "%s", "prim::TupleConstruct has exactly one output");
    const fbx_type *t = n->outputs[0]->type;
    if (t->kind == FBX_TYPE_NAMED) return NULL;
    if (t->kind != FBX_TYPE_TUPLE || t->nelems != n->ninputs) {
      fbx_strbuf d = {0};
      fbx_strbuf_printf(&d, "prim::TupleConstruct of %d value%s: %%%s is declared ", n->ninputs,
                        n->ninputs == 1 ? "" : "s", n->outputs[0]->name);
      fbx_type_print(&d, t);
      fbx_strbuf_printf(&d, ", not a tuple of %d", n->ninputs);
      fbx_status *st = d.oom ? fbx_status_nomem() : fail_at(n, "%s", d.data);
      fbx_strbuf_free(&d);
      return st;
    }
    for (int i = 0; i < n->ninputs; i++)
      if (!fbx_type_may_agree(t->elems[i], n->inputs[i]->type))
        return disagree(n, "prim::TupleConstruct", n->outputs[0], n->inputs[i]->type, "an element is");
    return NULL;
  }
  if (k == FBX_SYM_prim_TupleUnpack) {
    if (n->ninputs != 1) return fail_at(n, "%s", "prim::TupleUnpack takes exactly one input");
    const fbx_type *t = n->inputs[0]->type;
    if (t->kind == FBX_TYPE_NAMED) return NULL;
    if (t->kind != FBX_TYPE_TUPLE || t->nelems != n->noutputs) {
      fbx_strbuf d = {0};
      fbx_strbuf_printf(&d, "prim::TupleUnpack into %d value%s: %%%s is declared ", n->noutputs,
                        n->noutputs == 1 ? "" : "s", n->inputs[0]->name);
      fbx_type_print(&d, t);
      fbx_strbuf_printf(&d, ", not a tuple of %d", n->noutputs);
      fbx_status *st = d.oom ? fbx_status_nomem() : fail_at(n, "%s", d.data);
      fbx_strbuf_free(&d);
      return st;
    }
    for (int i = 0; i < n->noutputs; i++)
      FBX_TRY(agree(n, "prim::TupleUnpack", n->outputs[i], t->elems[i], "the tuple's element is"));
    return NULL;
  }
  if (k == FBX_SYM_prim_ListConstruct) {
    if (n->noutputs != 1) return fail_at(n, "%s", "prim::ListConstruct has exactly one output");
    const fbx_type *t = n->outputs[0]->type;
    if (t->kind == FBX_TYPE_NAMED) return NULL;
    if (t->kind != FBX_TYPE_LIST) {
      fbx_strbuf d = {0};
      fbx_strbuf_printf(&d, "prim::ListConstruct: %%%s is declared ", n->outputs[0]->name);
      fbx_type_print(&d, t);
      fbx_strbuf_puts(&d, ", not a list");
      fbx_status *st = d.oom ? fbx_status_nomem() : fail_at(n, "%s", d.data);
      fbx_strbuf_free(&d);
      return st;
    }
    for (int i = 0; i < n->ninputs; i++)
      if (!fbx_type_may_agree(t->elems[0], n->inputs[i]->type))
        return disagree(n, "prim::ListConstruct", n->outputs[0], n->inputs[i]->type, "an element is");
    return NULL;
  }
  if (k == FBX_SYM_prim_ListUnpack) {
    if (n->ninputs != 1) return fail_at(n, "%s", "prim::ListUnpack takes exactly one input");
    const fbx_type *t = n->inputs[0]->type;
    if (t->kind == FBX_TYPE_LIST)
      for (int i = 0; i < n->noutputs; i++)
        FBX_TRY(agree(n, "prim::ListUnpack", n->outputs[i], t->elems[0], "the list's element is"));
    return NULL;
  }
  if (k == FBX_SYM_prim_If && n->nblocks == 2) {
    for (int b = 0; b < 2; b++)
      for (int i = 0; i < n->noutputs && i < fbx_block_nreturns(n->blocks[b]); i++)
        FBX_TRY(agree(n, "prim::If", n->outputs[i], fbx_block_return(n->blocks[b], i)->type,
                      b ? "the false block returns" : "the true block returns"));
    return NULL;
  }
  if (k == FBX_SYM_prim_Loop && n->nblocks == 1) {
    const fbx_block *body = n->blocks[0];
    int carried = n->ninputs - 2;
    for (int i = 0; i < carried && i + 1 < fbx_block_nparams(body) && i + 1 < fbx_block_nreturns(body) &&
                    i < n->noutputs;
         i++) {
      FBX_TRY(agree(n, "prim::Loop", fbx_block_param(body, i + 1), n->inputs[i + 2]->type,
                    "the carried input is"));
      FBX_TRY(agree(n, "prim::Loop", n->outputs[i], n->inputs[i + 2]->type, "the carried input is"));
      FBX_TRY(agree(n, "prim::Loop", n->outputs[i], fbx_block_return(body, i + 1)->type, "the block returns"));
    }
    return NULL;
  }
  const fbx_graph *sub = fbx_node_subgraph(n);
  if (sub) {
    for (int i = 0; i < n->ninputs && i < fbx_graph_ninputs(sub); i++)
      FBX_TRY(agree(n, "subgraph input", fbx_graph_input(sub, i), n->inputs[i]->type, "the node passes"));
    for (int i = 0; i < n->noutputs && i < fbx_graph_noutputs(sub); i++)
      FBX_TRY(agree(n, "group output", n->outputs[i], fbx_graph_output(sub, i)->type, "its subgraph returns"));
  }
  return NULL;
}

static fbx_status *check_node(vctx *c, const fbx_block *b, const fbx_node *n) {
  if (n->owner != b) return fail_at(n, "%s", "a node's owner is not the block that lists it");
  if (n->graph != c->g) return fail_at(n, "%s", "a node belongs to another graph");
  FBX_TRY(check_inputs_in_scope(c, n));
  FBX_TRY(check_uses(c, n));
  FBX_TRY(check_control(n));
  FBX_TRY(check_subgraph(n));
  FBX_TRY(check_agreement(n));
  for (int i = 0; i < n->nblocks; i++) {
    if (n->blocks[i]->owning != n) return fail_at(n, "%s", "a block's owning node is wrong");
    FBX_TRY(check_block(c, n->blocks[i]));
  }
  for (int o = 0; o < n->noutputs; o++) FBX_TRY(define(c, n, n->outputs[o], o));
  return NULL;
}

/* Values defined in a block leave scope when the block ends. */
static void leave_block(vctx *c, const fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(b); i++) {
    /* ptrmap has no delete: map to NULL and treat NULL-valued keys as gone. */
    fbx_ptrmap_put(&c->in_scope, fbx_block_param(b, i), NULL);
  }
  for (fbx_node *n = fbx_block_first(b); n; n = n->next)
    for (int o = 0; o < n->noutputs; o++) fbx_ptrmap_put(&c->in_scope, n->outputs[o], NULL);
}

static fbx_status *check_block(vctx *c, const fbx_block *b) {
  if (b->graph != c->g) return fail_at(b->param, "%s", "a block belongs to another graph");
  if (b->param->owner != b || b->ret->owner != b || b->param->prev || b->param->next ||
      b->ret->prev || b->ret->next)
    return fail_at(b->param, "%s", "a block's sentinels are linked into its node list");
  for (int i = 0; i < fbx_block_nparams(b); i++) FBX_TRY(define(c, b->param, fbx_block_param(b, i), i));
  FBX_TRY(check_uses(c, b->param));
  int64_t last_topo = b->param->topo;
  const fbx_node *prev = NULL;
  for (const fbx_node *n = b->first; n; prev = n, n = n->next) {
    if (n->prev != prev) return fail_at(n, "%s", "the node list's back links are broken");
    if (n->topo <= last_topo) return fail_at(n, "%s", "topological positions are out of order");
    last_topo = n->topo;
    FBX_TRY(check_node(c, b, n));
  }
  if (b->last != prev) return fail_at(b->ret, "%s", "a block's last-node link is wrong");
  if (b->ret->topo <= last_topo) return fail_at(b->ret, "%s", "topological positions are out of order");
  FBX_TRY(check_inputs_in_scope(c, b->ret));
  FBX_TRY(check_uses(c, b->ret));
  leave_block(c, b);
  return NULL;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static fbx_status *collect_names(const fbx_block *b, const char ***names, int *n, int *cap);

static fbx_status *push_name(const char *name, const char ***names, int *n, int *cap) {
  if (*n == *cap) {
    int ncap = *cap ? *cap * 2 : 64;
    const char **nn = fbx_realloc((void *)*names, sizeof **names * (size_t)ncap);
    if (!nn) return fbx_status_nomem();
    *names = nn;
    *cap = ncap;
  }
  (*names)[(*n)++] = name;
  return NULL;
}

static fbx_status *collect_names(const fbx_block *b, const char ***names, int *n, int *cap) {
  for (int i = 0; i < fbx_block_nparams(b); i++) FBX_TRY(push_name(fbx_block_param(b, i)->name, names, n, cap));
  for (const fbx_node *m = fbx_block_first(b); m; m = m->next) {
    for (int o = 0; o < m->noutputs; o++) FBX_TRY(push_name(m->outputs[o]->name, names, n, cap));
    for (int i = 0; i < m->nblocks; i++) FBX_TRY(collect_names(m->blocks[i], names, n, cap));
  }
  return NULL;
}

static fbx_status *check_unique_names(const fbx_graph *g) {
  const char **names = NULL;
  int n = 0, cap = 0;
  fbx_status *st = collect_names(g->block, &names, &n, &cap);
  if (!st && n > 1) {
    qsort((void *)names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 1; i < n && !st; i++)
      if (!strcmp(names[i - 1], names[i]))
        st = fbx_status_new(FBX_ERR_VERIFY, "invalid graph: the value name %%%s is defined twice", names[i]);
  }
  fbx_free((void *)names);
  return st;
}

fbx_status *fbx_graph_verify(const fbx_graph *g) {
  vctx c = {.g = g};
  if (g->block->owning) return fbx_status_new(FBX_ERR_VERIFY, "invalid graph: the top block has an owning node");
  fbx_status *st = check_block(&c, g->block);
  fbx_ptrmap_free(&c.in_scope);
  fbx_ptrmap_free(&c.slots);
  if (st) return st;
  return check_unique_names(g);
}
