/* The forward/backward split: reverse-mode differentiation of a straight-
 * line subgraph S into a forward graph F and a backward graph B.
 *
 * S's nodes are visited last to first with a map from S values to their
 * gradient in B (absent = zero, never materialized). A value used several
 * times gets the sum of its users' contributions (aten::add, only when a
 * second one arrives). Each node's formula comes from fbx_grad_build; the
 * plumbing (prim::ListConstruct/ListUnpack, TupleConstruct/TupleUnpack) is
 * routed here, prim::Constant has no gradient.
 *
 * What B reads from the forward is decided by the formulas: fbx_grad_build
 * calls fwd_value for each forward value it uses, and the answer is
 *   - a copy of it in B when it is a constant or a list built of constants
 *     only (never saved);
 *   - a new B input `saved_<name>` otherwise, remembered as a saved
 *     reference: S's input i (from_forward false), or F's output j, where j
 *     is the value's own position when S already returns it, else a new
 *     output appended to F.
 * After B is built and dead code removed, saved values that nothing reads
 * any more (a formula computed a gradient nobody needs) are dropped again,
 * with the F outputs only they used.
 *
 * With recomputation asked for (fbx_autodiff_differentiate_ex), saved values
 * that are cheap pointwise functions of S's inputs are then replaced by
 * their recomputation in B where that moves fewer bytes (recompute.c), and
 * pruned like the others.
 *
 * Respecialization keeps base's saved list as it is: B' gets one input per
 * base saved value (unused ones included) and may read nothing else but
 * what it can recompute from them, when base was made with recomputation. */
#include <stdio.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "autodiff/split.h"
#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strmap.h"
#include "ir/verify.h"
#include "passes/passes.h"

typedef fbx_split dstate; /* autodiff/split.h */

static fbx_value *identity_map(void *ctx, fbx_value *v) {
  (void)ctx;
  return v;
}

/* `prefix` + name, made unique in B with a numeric suffix. Every other
 * value of B has a fresh numeric name (nodes are cloned into B without
 * their names), so the names given here are the only ones that can clash:
 * they are kept in d->b_names, and a lookup does not scan B. */
static fbx_status *set_unique_name(dstate *d, fbx_value *v, const char *prefix, const char *name) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s%s", prefix, name);
  for (int k = 1; fbx_strmap_has(&d->b_names, buf); k++) snprintf(buf, sizeof buf, "%s%s_%d", prefix, name, k);
  if (fbx_value_set_name(v, buf) || fbx_strmap_put(&d->b_names, v->name, v)) return fbx_status_nomem();
  return NULL;
}

static fbx_value *add_b_input(dstate *d, const fbx_value *like) {
  fbx_type *t = fbx_type_clone(d->B->arena, like->type);
  return t ? fbx_graph_add_input(d->B, t, NULL) : NULL;
}

/* ---- what the backward reads from the forward ---------------------------------------- */

static fbx_status *copy_constant(dstate *d, const fbx_value *v, fbx_value **out) {
  fbx_value *c = fbx_ptrmap_get(&d->const_of, v);
  if (!c) {
    fbx_node *copy = fbx_node_clone_into(d->B->block, v->node, identity_map, NULL);
    if (!copy) return fbx_status_nomem();
    /* at the top, so it precedes every use whenever it is asked for */
    fbx_node_detach(copy);
    fbx_node_prepend(d->B->block, copy);
    c = copy->outputs[0];
    if (fbx_ptrmap_put(&d->const_of, v, c)) return fbx_status_nomem();
  }
  *out = c;
  return NULL;
}

/* A list built of constants only (layer_norm's normalized_shape, a
 * reduction's dims): rebuilt in B as constants are, never saved. Saved, it
 * was an extra output of F, and an eager tape entry then ran F (the whole
 * op again) for it on every forward (issue 16). */
static bool const_list(const fbx_value *v) {
  const fbx_node *n = v->node;
  if (n->kind != FBX_SYM_prim_ListConstruct) return false;
  for (int i = 0; i < n->ninputs; i++)
    if (n->inputs[i]->node->kind != FBX_SYM_prim_Constant) return false;
  return true;
}

static fbx_value *const_in_b(void *ctx, fbx_value *v) { return fbx_ptrmap_get(&((dstate *)ctx)->const_of, v); }

static fbx_status *copy_const_list(dstate *d, const fbx_value *v, fbx_value **out) {
  fbx_value *c = fbx_ptrmap_get(&d->const_of, v);
  if (!c) {
    const fbx_node *n = v->node;
    fbx_value *ci;
    for (int i = 0; i < n->ninputs; i++) FBX_TRY(copy_constant(d, n->inputs[i], &ci));
    fbx_node *copy = fbx_node_clone_into(d->B->block, n, const_in_b, d);
    if (!copy) return fbx_status_nomem();
    /* at the top like a constant, its constants moved before it */
    fbx_node_detach(copy);
    fbx_node_prepend(d->B->block, copy);
    for (int i = 0; i < n->ninputs; i++) {
      fbx_node *k = ((fbx_value *)fbx_ptrmap_get(&d->const_of, n->inputs[i]))->node;
      fbx_node_detach(k);
      fbx_node_prepend(d->B->block, k);
    }
    c = copy->outputs[0];
    if (fbx_ptrmap_put(&d->const_of, v, c)) return fbx_status_nomem();
  }
  *out = c;
  return NULL;
}

static bool is_s_input(const dstate *d, const fbx_value *v) { return v->node == d->S->block->param; }

static fbx_status *save_value(dstate *d, const fbx_value *v, fbx_value **out) {
  fbx_saved_ref ref;
  if (is_s_input(d, v)) {
    ref = (fbx_saved_ref){false, v->offset};
  } else {
    fbx_value *fv = d->f_of[v->id];
    int j = -1;
    for (int k = 0; k < d->nreal && j < 0; k++)
      if (fbx_graph_output(d->F, k) == fv) j = k;
    if (j < 0) {
      if (fbx_block_add_return(d->F->block, fv)) return fbx_status_nomem();
      j = fbx_graph_noutputs(d->F) - 1;
    }
    ref = (fbx_saved_ref){true, j};
  }
  if (d->nsaved == d->cap_saved) {
    int cap = d->cap_saved ? 2 * d->cap_saved : 8;
    fbx_saved_ref *ns = fbx_realloc(d->saved, sizeof *ns * (size_t)cap);
    if (!ns) return fbx_status_nomem();
    d->saved = ns;
    d->cap_saved = cap;
  }
  fbx_value *in = add_b_input(d, v);
  if (!in) return fbx_status_nomem();
  FBX_TRY(set_unique_name(d, in, "saved_", v->name));
  if (fbx_ptrmap_put(&d->saved_of, v, in)) return fbx_status_nomem();
  d->saved[d->nsaved++] = ref;
  *out = in;
  return NULL;
}

static fbx_status *fwd_value(void *ctx, const fbx_value *v, fbx_value **out) {
  dstate *d = ctx;
  if (v->node->kind == FBX_SYM_prim_Constant) return copy_constant(d, v, out);
  if (const_list(v)) return copy_const_list(d, v, out);
  fbx_value *in = fbx_ptrmap_get(&d->saved_of, v);
  if (in) {
    *out = in;
    return NULL;
  }
  if (d->fixed_saved) {
    FBX_TRY(fbx_split_recompute_missing(d, v, out));
    if (*out) return NULL;
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "autodiff: the backward for this set of defined output gradients needs %%%s, which the "
                          "forward does not save",
                          v->name);
  }
  return save_value(d, v, out);
}

fbx_status *fbx_split_fwd_value(void *ctx, const fbx_value *v, fbx_value **out) { return fwd_value(ctx, v, out); }

/* ---- building B -------------------------------------------------------------------------- */

static fbx_node *b_node(dstate *d, const char *kind, int noutputs) {
  fbx_sym k;
  if (fbx_sym_intern(&k, kind, strlen(kind))) return NULL;
  fbx_node *n = fbx_node_create(d->B, k, noutputs);
  if (n) fbx_node_append(d->B->block, n);
  return n;
}

static bool type_is_vague_tensor(const fbx_type *t) {
  return t->kind == FBX_TYPE_TENSOR && t->dtype == FBX_DTYPE_UNDEFINED && t->rank < 0;
}

/* The gradient of v takes v's type where its own says nothing more. B's
 * inputs keep theirs (they are B's signature). */
static fbx_status *adopt_type(dstate *d, fbx_value *g, const fbx_value *v) {
  if (g->node == d->B->block->param || !type_is_vague_tensor(g->type) || v->type->kind != FBX_TYPE_TENSOR)
    return NULL;
  fbx_type *t = fbx_type_clone(d->B->arena, v->type);
  if (!t) return fbx_status_nomem();
  fbx_value_set_type(g, t);
  return NULL;
}

static fbx_status *unpack(dstate *d, fbx_value *packed, const fbx_node *like, bool list, fbx_value ***elems) {
  fbx_node *u = b_node(d, list ? "prim::ListUnpack" : "prim::TupleUnpack", like->ninputs);
  if (!u || fbx_node_add_input(u, packed)) return fbx_status_nomem();
  for (int i = 0; i < like->ninputs; i++) {
    fbx_type *t = fbx_type_clone(d->B->arena, like->inputs[i]->type);
    if (!t) return fbx_status_nomem();
    fbx_value_set_type(u->outputs[i], t);
  }
  *elems = u->outputs;
  return NULL;
}

/* grad[v] += g */
static fbx_status *accumulate(dstate *d, const fbx_value *v, fbx_value *g) {
  if (!g) return NULL;
  fbx_value *old = d->grad[v->id];
  if (!old) {
    d->grad[v->id] = g;
    return adopt_type(d, g, v);
  }
  if (v->type->kind == FBX_TYPE_LIST || v->type->kind == FBX_TYPE_TUPLE) {
    /* Lists add by concatenation: sum them element by element, which needs
     * their length, known only for a list S itself builds. */
    const fbx_node *p = v->node;
    bool list = v->type->kind == FBX_TYPE_LIST;
    if (p->kind != (list ? FBX_SYM_prim_ListConstruct : FBX_SYM_prim_TupleConstruct))
      return fbx_status_new(FBX_ERR_UNSUPPORTED,
                            "autodiff: %%%s (%s) is used several times; its gradients cannot be added", v->name,
                            list ? "a list" : "a tuple");
    fbx_value **a, **b;
    FBX_TRY(unpack(d, old, p, list, &a));
    FBX_TRY(unpack(d, g, p, list, &b));
    fbx_value **sums = fbx_arena_alloc(d->B->arena, sizeof *sums * (size_t)(p->ninputs ? p->ninputs : 1));
    if (!sums) return fbx_status_nomem();
    for (int i = 0; i < p->ninputs; i++) {
      sums[i] = a[i];
      if (!d->rg[p->inputs[i]->id]) continue;
      fbx_node *add = b_node(d, "aten::add", 1);
      fbx_value *one = add ? fbx_insert_const_int(d->B->block, add, 1) : NULL;
      if (!one || fbx_node_add_input(add, a[i]) || fbx_node_add_input(add, b[i]) || fbx_node_add_input(add, one))
        return fbx_status_nomem();
      sums[i] = add->outputs[0];
      FBX_TRY(adopt_type(d, sums[i], p->inputs[i]));
    }
    /* built last: b_node appends, and the pack reads the sums */
    fbx_node *pack = b_node(d, list ? "prim::ListConstruct" : "prim::TupleConstruct", 1);
    fbx_type *t = fbx_type_clone(d->B->arena, v->type);
    if (!pack || !t) return fbx_status_nomem();
    fbx_value_set_type(pack->outputs[0], t);
    for (int i = 0; i < p->ninputs; i++)
      if (fbx_node_add_input(pack, sums[i])) return fbx_status_nomem();
    d->grad[v->id] = pack->outputs[0];
    return NULL;
  }
  fbx_node *add = b_node(d, "aten::add", 1);
  if (!add) return fbx_status_nomem();
  fbx_value *one = fbx_insert_const_int(d->B->block, add, 1);
  if (!one || fbx_node_add_input(add, old) || fbx_node_add_input(add, g) || fbx_node_add_input(add, one))
    return fbx_status_nomem();
  d->grad[v->id] = add->outputs[0];
  return adopt_type(d, add->outputs[0], v);
}

/* zeros shaped like forward value v (for the elements of an unpacked list
 * or tuple whose gradient is undefined while a sibling's is not). */
static fbx_status *zeros_like(dstate *d, const fbx_value *v, fbx_value **out) {
  fbx_value *fv;
  FBX_TRY(fwd_value(d, v, &fv));
  fbx_node *z = b_node(d, "aten::zeros_like", 1);
  if (!z || fbx_node_add_input(z, fv)) return fbx_status_nomem();
  FBX_TRY(adopt_type(d, z->outputs[0], v));
  *out = z->outputs[0];
  return NULL;
}

static bool type_can_hold_grad(const fbx_type *t) { return fbx_type_contains_tensor(t); }

static fbx_status *backward_construct(dstate *d, const fbx_node *n, bool list) {
  fbx_value *g = d->grad[n->outputs[0]->id], **elems;
  FBX_TRY(unpack(d, g, n, list, &elems));
  for (int i = 0; i < n->ninputs; i++)
    if (d->rg[n->inputs[i]->id]) FBX_TRY(accumulate(d, n->inputs[i], elems[i]));
  return NULL;
}

static fbx_status *backward_unpack(dstate *d, const fbx_node *n, bool list) {
  int count = n->noutputs ? n->noutputs : 1;
  fbx_type **elem_types = fbx_arena_alloc(d->B->arena, sizeof *elem_types * (size_t)count);
  fbx_value **elems = fbx_arena_alloc(d->B->arena, sizeof *elems * (size_t)count);
  if (!elem_types || !elems) return fbx_status_nomem();
  for (int o = 0; o < n->noutputs; o++) {
    const fbx_value *v = n->outputs[o];
    fbx_value *g = d->grad[v->id];
    if (!g && d->rg[v->id]) FBX_TRY(zeros_like(d, v, &g));
    if (!g && !(g = fbx_insert_const_none(d->B->block, NULL))) return fbx_status_nomem();
    elems[o] = g;
    elem_types[o] = g->type;
  }
  fbx_node *pack = b_node(d, list ? "prim::ListConstruct" : "prim::TupleConstruct", 1);
  if (!pack) return fbx_status_nomem();
  for (int o = 0; o < n->noutputs; o++)
    if (fbx_node_add_input(pack, elems[o])) return fbx_status_nomem();
  fbx_type *t = list ? fbx_type_clone(d->B->arena, n->inputs[0]->type)
                     : fbx_type_container(d->B->arena, FBX_TYPE_TUPLE, n->noutputs, elem_types);
  if (!t) return fbx_status_nomem();
  fbx_value_set_type(pack->outputs[0], t);
  return accumulate(d, n->inputs[0], pack->outputs[0]);
}

static fbx_status *backward_node(dstate *d, const fbx_node *n) {
  bool any_grad = false, any_rg = false;
  for (int o = 0; o < n->noutputs; o++) any_grad |= d->grad[n->outputs[o]->id] != NULL;
  for (int i = 0; i < n->ninputs; i++) any_rg |= d->rg[n->inputs[i]->id];
  if (!any_grad || !any_rg || n->kind == FBX_SYM_prim_Constant) return NULL;
  if (n->kind == FBX_SYM_prim_ListConstruct) return backward_construct(d, n, true);
  if (n->kind == FBX_SYM_prim_TupleConstruct) return backward_construct(d, n, false);
  if (n->kind == FBX_SYM_prim_ListUnpack) return backward_unpack(d, n, true);
  if (n->kind == FBX_SYM_prim_TupleUnpack) return backward_unpack(d, n, false);
  fbx_value **gout = fbx_calloc((size_t)(n->noutputs ? n->noutputs : 1), sizeof *gout);
  fbx_value **gin = fbx_calloc((size_t)(n->ninputs ? n->ninputs : 1), sizeof *gin);
  fbx_status *st = NULL;
  if (!gout || !gin) {
    st = fbx_status_nomem();
    goto done;
  }
  for (int o = 0; o < n->noutputs; o++) gout[o] = d->grad[n->outputs[o]->id];
  fbx_grad_env env = {.graph = d->B, .block = d->B->block, .fwd_value = fwd_value, .ctx = d};
  if ((st = fbx_grad_build(&env, n, gout, gin))) goto done;
  for (int i = 0; i < n->ninputs && !st; i++)
    if (d->rg[n->inputs[i]->id] && type_can_hold_grad(n->inputs[i]->type)) st = accumulate(d, n->inputs[i], gin[i]);
done:
  fbx_free(gout);
  fbx_free(gin);
  return st;
}

/* ---- the whole split -------------------------------------------------------------------- */

static fbx_status *check_straight_line(const fbx_graph *S) {
  for (const fbx_node *n = fbx_block_first(S->block); n; n = n->next)
    if (n->nblocks || fbx_node_subgraph(n))
      return fbx_status_new(FBX_ERR_UNSUPPORTED, "autodiff: cannot differentiate a subgraph holding %s",
                            fbx_sym_str(n->kind));
  return NULL;
}

/* F = clone(S); f_of maps S's values to F's (clone keeps the order). */
static fbx_status *clone_forward(dstate *d) {
  d->F = fbx_graph_clone(d->S);
  d->f_of = fbx_calloc(d->S->next_value_id ? d->S->next_value_id : 1, sizeof *d->f_of);
  if (!d->F || !d->f_of) return fbx_status_nomem();
  for (int i = 0; i < fbx_graph_ninputs(d->S); i++) d->f_of[fbx_graph_input(d->S, i)->id] = fbx_graph_input(d->F, i);
  const fbx_node *f = fbx_block_first(d->F->block);
  for (const fbx_node *s = fbx_block_first(d->S->block); s; s = s->next, f = f->next)
    for (int o = 0; o < s->noutputs; o++) d->f_of[s->outputs[o]->id] = f->outputs[o];
  return NULL;
}

/* B's first inputs: one gradient per defined output. */
static fbx_status *add_grad_inputs(dstate *d, const bool *output_grad_defined) {
  for (int j = 0; j < fbx_graph_noutputs(d->S); j++) {
    if (output_grad_defined && !output_grad_defined[j]) continue;
    const fbx_value *v = fbx_graph_output(d->S, j);
    fbx_value *in = add_b_input(d, v);
    if (!in) return fbx_status_nomem();
    FBX_TRY(set_unique_name(d, in, "grad_", v->name));
    if (d->rg[v->id]) FBX_TRY(accumulate(d, v, in));
  }
  return NULL;
}

static fbx_status *run_backward(dstate *d) {
  for (const fbx_node *n = fbx_block_last(d->S->block); n; n = n->prev) FBX_TRY(backward_node(d, n));
  return NULL;
}

static fbx_status *add_outputs(dstate *d, fbx_gradient *r, const bool *input_requires_grad) {
  int nin = fbx_graph_ninputs(d->S);
  r->grad_of = fbx_malloc(sizeof *r->grad_of * (size_t)(nin ? nin : 1));
  if (!r->grad_of) return fbx_status_nomem();
  for (int i = 0; i < nin; i++) {
    fbx_value *g = d->grad[fbx_graph_input(d->S, i)->id];
    if (!input_requires_grad[i] || !g) continue;
    if (fbx_block_add_return(d->B->block, g)) return fbx_status_nomem();
    r->grad_of[r->ngrads++] = i;
  }
  return NULL;
}

/* Drop saved values B no longer reads, and the F outputs only they used:
 * marked, then erased in one pass each (one at a time was quadratic in the
 * number of saved values: a 64k-node chain saves tens of thousands). */
static fbx_status *prune_saved(dstate *d, int ngrad_inputs) {
  fbx_node *params = d->B->block->param, *ret = d->F ? d->F->block->ret : NULL;
  unsigned char *dropp = fbx_calloc((size_t)params->noutputs + 1, 1);
  unsigned char *dropr = ret ? fbx_calloc((size_t)ret->ninputs + 1, 1) : NULL;
  if (!dropp || (ret && !dropr)) {
    fbx_free(dropp);
    fbx_free(dropr);
    return fbx_status_nomem();
  }
  int keep = 0, extra = 0, dropped_extra = 0;
  for (int s = 0; s < d->nsaved; s++) {
    fbx_value *in = fbx_graph_input(d->B, ngrad_inputs + s);
    fbx_saved_ref ref = d->saved[s];
    bool is_extra = ref.from_forward && ref.index >= d->nreal;
    if (in->nuses) {
      if (is_extra) ref.index = d->nreal + extra++;
      d->saved[keep++] = ref;
      continue;
    }
    dropp[ngrad_inputs + s] = 1;
    if (is_extra) dropr[d->nreal + extra + dropped_extra++] = 1;
  }
  fbx_node_erase_outputs(params, dropp);
  if (ret) fbx_node_remove_inputs(ret, dropr);
  fbx_free(dropp);
  fbx_free(dropr);
  d->nsaved = keep;
  return NULL;
}

static fbx_status *finish(dstate *d, fbx_gradient *r, int ngrad_inputs, bool prune) {
  FBX_TRY(fbx_pass_dce(d->B, NULL));
  if (prune) FBX_TRY(prune_saved(d, ngrad_inputs));
  fbx_status *st = d->F ? fbx_graph_verify(d->F) : NULL;
  if (st) return fbx_status_wrap(st, "autodiff: the forward graph");
  if ((st = fbx_graph_verify(d->B))) return fbx_status_wrap(st, "autodiff: the backward graph");
  r->nsaved = d->nsaved;
  r->saved = d->saved;
  d->saved = NULL;
  return NULL;
}

static void dstate_free(dstate *d) {
  fbx_split_recompute_free(d);
  fbx_free(d->f_of);
  fbx_free(d->rg);
  fbx_free(d->grad);
  fbx_ptrmap_free(&d->saved_of);
  fbx_ptrmap_free(&d->const_of);
  fbx_strmap_free(&d->b_names);
  fbx_free(d->saved);
  fbx_graph_destroy(d->F);
  fbx_graph_destroy(d->B);
}

static fbx_status *begin(dstate *d, const fbx_graph *S, const bool *input_requires_grad, fbx_gradient **r) {
  FBX_TRY(check_straight_line(S));
  d->S = S;
  d->nreal = fbx_graph_noutputs(S);
  FBX_TRY(fbx_autodiff_requires_grad(S, input_requires_grad, &d->rg));
  d->grad = fbx_calloc(S->next_value_id ? S->next_value_id : 1, sizeof *d->grad);
  d->B = fbx_graph_create();
  *r = fbx_calloc(1, sizeof **r);
  if (!d->grad || !d->B || !*r) return fbx_status_nomem();
  (*r)->nreal_outputs = d->nreal;
  (*r)->recompute = d->recompute;
  return fbx_split_recompute_init(d);
}

fbx_status *fbx_autodiff_differentiate_ex(fbx_gradient **out, const fbx_graph *S, const bool *input_requires_grad,
                                          const bool *output_grad_defined, bool recompute) {
  dstate d = {.recompute = recompute};
  fbx_gradient *r = NULL;
  fbx_status *st = begin(&d, S, input_requires_grad, &r);
  if (!st) st = clone_forward(&d);
  if (!st) st = add_grad_inputs(&d, output_grad_defined);
  int ngrad_inputs = st ? 0 : fbx_graph_ninputs(d.B);
  if (!st) st = run_backward(&d);
  if (!st) st = add_outputs(&d, r, input_requires_grad);
  if (!st && recompute) {
    /* what B really reads: a formula may have asked for a value whose gradient nobody needs */
    st = fbx_pass_dce(d.B, NULL);
    fbx_ptrmap_free(&d.const_of); /* DCE may have removed copies: copy again when asked */
    if (!st) st = fbx_split_recompute_saved(&d);
  }
  if (!st) st = finish(&d, r, ngrad_inputs, true);
  if (!st) {
    r->nrecomputed = d.nrecomputed;
    r->nrecompute_nodes = d.nrecompute_nodes;
  }
  if (st) {
    fbx_gradient_free(r);
    dstate_free(&d);
    return st;
  }
  r->forward = d.F;
  r->backward = d.B;
  d.F = d.B = NULL;
  dstate_free(&d);
  *out = r;
  return NULL;
}

fbx_status *fbx_autodiff_differentiate(fbx_gradient **out, const fbx_graph *S, const bool *input_requires_grad,
                                       const bool *output_grad_defined) {
  return fbx_autodiff_differentiate_ex(out, S, input_requires_grad, output_grad_defined, false);
}

/* The S value that base's saved[k] stands for. */
static fbx_status *base_saved_value(const fbx_graph *S, const fbx_strmap *s_names, const fbx_gradient *base, int k,
                                    const fbx_value **out) {
  fbx_saved_ref ref = base->saved[k];
  if (!ref.from_forward) {
    if (ref.index < 0 || ref.index >= fbx_graph_ninputs(S)) goto bad;
    *out = fbx_graph_input(S, ref.index);
    return NULL;
  }
  if (!base->forward || ref.index < 0 || ref.index >= fbx_graph_noutputs(base->forward)) goto bad;
  /* F is a clone of S: its values keep S's names. */
  *out = fbx_strmap_get(s_names, fbx_graph_output(base->forward, ref.index)->name);
  if (*out) return NULL;
bad:
  return fbx_status_new(FBX_ERR_INVALID_ARG, "autodiff: respecialize: saved value %d does not belong to this subgraph", k);
}

fbx_status *fbx_autodiff_respecialize(fbx_gradient **out, const fbx_graph *S, const fbx_gradient *base,
                                      const bool *input_requires_grad, const bool *output_grad_defined) {
  dstate d = {.fixed_saved = true, .recompute = base->recompute};
  fbx_gradient *r = NULL;
  fbx_strmap s_names = {0}; /* S's values by name (S is straight-line: one block) */
  fbx_status *st = begin(&d, S, input_requires_grad, &r);
  for (int i = 0; !st && i < fbx_graph_ninputs(S); i++)
    if (fbx_strmap_put(&s_names, fbx_graph_input(S, i)->name, fbx_graph_input(S, i))) st = fbx_status_nomem();
  for (const fbx_node *n = st ? NULL : fbx_block_first(S->block); n && !st; n = n->next)
    for (int o = 0; o < n->noutputs && !st; o++)
      if (fbx_strmap_put(&s_names, n->outputs[o]->name, n->outputs[o])) st = fbx_status_nomem();
  if (!st) st = add_grad_inputs(&d, output_grad_defined);
  int ngrad_inputs = st ? 0 : fbx_graph_ninputs(d.B);
  for (int k = 0; !st && k < base->nsaved; k++) {
    const fbx_value *v = NULL;
    fbx_value *in = NULL;
    if (!(st = base_saved_value(S, &s_names, base, k, &v)) && !(in = add_b_input(&d, v))) st = fbx_status_nomem();
    if (!st) st = set_unique_name(&d, in, "saved_", v->name);
    if (!st && fbx_ptrmap_put(&d.saved_of, v, in)) st = fbx_status_nomem();
  }
  if (!st && base->nsaved && !(d.saved = fbx_malloc(sizeof *d.saved * (size_t)base->nsaved))) st = fbx_status_nomem();
  if (!st) {
    if (base->nsaved) memcpy(d.saved, base->saved, sizeof *d.saved * (size_t)base->nsaved);
    d.nsaved = base->nsaved;
    st = run_backward(&d);
  }
  fbx_strmap_free(&s_names);
  if (!st) st = add_outputs(&d, r, input_requires_grad);
  if (!st) st = finish(&d, r, ngrad_inputs, false);
  if (st) {
    fbx_gradient_free(r);
    dstate_free(&d);
    return st;
  }
  r->nrecompute_nodes = d.nrecompute_nodes;
  r->backward = d.B;
  d.B = NULL;
  dstate_free(&d);
  *out = r;
  return NULL;
}

void fbx_gradient_free(fbx_gradient *g) {
  if (!g) return;
  fbx_graph_destroy(g->forward);
  fbx_graph_destroy(g->backward);
  fbx_free(g->saved);
  fbx_free(g->grad_of);
  fbx_free(g);
}
