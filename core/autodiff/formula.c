/* Gradient formulas: the engine that reads the formula lists
 * (formulas_pointwise.h, formulas_reduce.h, formulas_linalg.h,
 * formulas_shape.h, formulas_extra.h, formulas_compat.h, formulas_nn.h: IR-text templates; builders.h: C builders) and
 * instantiates them into a backward graph. API: autodiff/autodiff.h.
 *
 * ---- The template format ------------------------------------------------------------
 *
 * A row G(op_id, ir_text) gives the gradient of the op-table row
 * FBX_OP_<op_id> as a TorchScript-IR graph:
 *
 *   graph(%self : Tensor, %other : Tensor, %alpha : Scalar, %result : Tensor, %grad : Tensor):
 *     %ga : Tensor = aten::mul(%grad, %alpha)
 *     %s : int[] = aten::size(%other)
 *     %g_other : Tensor = aten::_grad_sum_to_size(%ga, %s)
 *     ...
 *     return (%g_self, %g_other, %none)
 *
 * Parameters, in this order:
 *   - every schema argument of the row, in schema order, named as in the
 *     schema (keyword-only ones too);
 *   - the row's outputs: %result, or %result0, %result1, ... for several;
 *   - one gradient per output: %grad, or %grad0, %grad1, ...
 * Returns: one value per schema argument: its gradient, or a None constant
 * where it has none (non-tensor arguments, masks, conditions, integer
 * operands).
 *
 * Each template is parsed once (thread-safe, at first use) and cleaned by
 * DCE. Instantiating it for node n clones the nodes that the wanted
 * gradients need, in template order, to the end of env->block:
 *   - a gradient parameter becomes the given gradient value; a NULL one, for
 *     an op with several outputs, becomes aten::zeros_like(output) (if every
 *     output gradient is NULL nothing is built at all);
 *   - a forward argument or output becomes env->fwd_value(...) of it, asked
 *     only for the parameters the cloned nodes actually use, so the caller
 *     saves exactly those; a trailing schema argument that n omitted becomes
 *     a constant holding the schema default.
 * Rewrites made while instantiating (so that templates can stay generic):
 *   - `%s = aten::size(%p)` + `aten::_grad_sum_to_size(%g, %s)`, with %p a
 *     forward argument, is dropped (the result is %g) when the IR types of p
 *     and of the gradient's forward counterpart have completely known and
 *     equal sizes. The counterpart is output k when %g is the gradient
 *     parameter %gradk, else output 0: the unreduced gradient of a
 *     broadcasting op has the output's shape. Formulas for which that is not
 *     true use aten::sum_to_size, which is never dropped. The executor gives
 *     subgraphs their profiled sizes, so static graphs get no reductions in
 *     their backward (fusers want that).
 *   - `aten::mul(%x, 1)` by the int constant 1 (add/sub's default alpha),
 *     with %x a tensor whose IR type, or for a gradient parameter its
 *     forward output's, shows a floating dtype, is dropped (the result is
 *     %x): backward graphs have no in-place ops.
 *   - `prim::dtype(%p)` of a forward argument or output whose IR type knows
 *     its dtype becomes an int constant, so a conversion formula converts
 *     back without saving its input.
 * Gradients keep the input's dtype: where the IR types show that input i's
 * floating dtype differs from output 0's (mixed-dtype arithmetic), the
 * gradient is converted with aten::to.dtype. Conversion rows
 * (FBX_OPCAT_CONVERSION) convert in their template instead.
 *
 * A node's row is found from its IR types (fbx_op_resolve_types); a node
 * whose types leave the overload open, or whose row has no formula, is not
 * differentiable. A template returning None for every argument is still a
 * formula: the op sits inside differentiable regions and passes no gradient
 * (comparisons, floor/round/sign: zero gradients, as in PyTorch).
 *
 * B(op_id, fn) rows give a C builder instead (builders.h); the engine calls
 * it with fbx_grad_build's contract after the all-NULL check. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "autodiff/builders.h"
#include "autodiff/formulas_compat.h"
#include "autodiff/formulas_extra.h"
#include "autodiff/formulas_linalg.h"
#include "autodiff/formulas_nn.h"
#include "autodiff/formulas_pointwise.h"
#include "autodiff/formulas_reduce.h"
#include "autodiff/formulas_shape.h"
#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "passes/passes.h"

#define FBX_GRAD_DECL_(id, fn) \
  fbx_status *fn(const fbx_grad_env *, const fbx_node *, fbx_value *const *, fbx_value **);
FBX_GRAD_BUILDERS(FBX_GRAD_DECL_)
#undef FBX_GRAD_DECL_

typedef struct tmpl_row {
  int op;
  const char *text;
} tmpl_row;

typedef struct builder_row {
  int op;
  fbx_grad_builder_fn fn;
} builder_row;

/* The trailing sentinel keeps the arrays non-empty while lists are empty. */
static const tmpl_row tmpl_rows[] = {
#define FBX_GRAD_ROW_(id, text) {FBX_OP_##id, text},
    FBX_GRAD_FORMULAS_POINTWISE(FBX_GRAD_ROW_) FBX_GRAD_FORMULAS_REDUCE(FBX_GRAD_ROW_)
        FBX_GRAD_FORMULAS_LINALG(FBX_GRAD_ROW_) FBX_GRAD_FORMULAS_SHAPE(FBX_GRAD_ROW_)
            FBX_GRAD_FORMULAS_EXTRA(FBX_GRAD_ROW_) FBX_GRAD_FORMULAS_COMPAT(FBX_GRAD_ROW_)
                FBX_GRAD_FORMULAS_NN(FBX_GRAD_ROW_)
#undef FBX_GRAD_ROW_
    {-1, NULL}};

static const builder_row builder_rows[] = {
#define FBX_GRAD_BROW_(id, fn) {FBX_OP_##id, fn},
    FBX_GRAD_BUILDERS(FBX_GRAD_BROW_)
#undef FBX_GRAD_BROW_
    {-1, NULL}};

typedef struct formula {
  fbx_graph *tmpl; /* parsed template, or NULL */
  fbx_grad_builder_fn build;
} formula;

static formula formulas[FBX_OP_COUNT];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static fbx_status *init_status; /* a broken list: reported by every fbx_grad_build */

static fbx_status *check_arity(const fbx_op *op, const fbx_graph *t) {
  int nouts = op->schema.nrets;
  int want_params = op->schema.nargs + 2 * nouts;
  if (fbx_graph_ninputs(t) != want_params || fbx_graph_noutputs(t) != op->schema.nargs)
    return fbx_status_new(FBX_ERR_INTERNAL,
                          "gradient formula for %s: %d parameters and %d returns, expected %d and %d (%s)",
                          op->id_name, fbx_graph_ninputs(t), fbx_graph_noutputs(t), want_params,
                          op->schema.nargs, op->schema_text);
  return NULL;
}

static fbx_status *load_formulas(void) {
  FBX_TRY(fbx_op_table_init());
  for (size_t i = 0; tmpl_rows[i].text; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)tmpl_rows[i].op);
    if (!op) return fbx_status_nomem();
    if (formulas[op->id].tmpl)
      return fbx_status_new(FBX_ERR_INTERNAL, "two gradient formulas for %s", op->id_name);
    char name[160];
    snprintf(name, sizeof name, "<gradient formula %s>", op->id_name);
    fbx_graph *g = NULL;
    FBX_TRY(fbx_graph_parse(&g, tmpl_rows[i].text, strlen(tmpl_rows[i].text), name));
    formulas[op->id].tmpl = g;
    FBX_TRY(check_arity(op, g));
    FBX_TRY(fbx_pass_dce(g, NULL));
  }
  for (size_t i = 0; builder_rows[i].fn; i++) {
    formula *f = &formulas[builder_rows[i].op];
    if (f->tmpl || f->build)
      return fbx_status_new(FBX_ERR_INTERNAL, "two gradient formulas for %s",
                            fbx_op_get((fbx_op_id)builder_rows[i].op)->id_name);
    f->build = builder_rows[i].fn;
  }
  return NULL;
}

static void init_formulas(void) { init_status = load_formulas(); }

static bool loaded(void) {
  pthread_once(&init_once, init_formulas);
  return init_status == NULL;
}

/* NULL, or a copy of the load error for the caller to own. */
static fbx_status *ready(void) {
  if (loaded()) return NULL;
  return fbx_status_new(fbx_status_code(init_status), "%s", fbx_status_message(init_status));
}

/* ---- looking a node up --------------------------------------------------------------- */

static const fbx_op *resolve(const fbx_node *n) {
  fbx_type *types[FBX_SCHEMA_MAX_ARGS];
  if (n->ninputs > FBX_SCHEMA_MAX_ARGS) return NULL;
  for (int i = 0; i < n->ninputs; i++) types[i] = n->inputs[i]->type;
  return fbx_op_resolve_types(n->kind, types, n->ninputs);
}

static const formula *lookup(const fbx_node *n, const fbx_op **op) {
  if (!loaded()) return NULL; /* the error is reported by fbx_grad_build */
  *op = resolve(n);
  if (!*op) return NULL;
  const formula *f = &formulas[(*op)->id];
  return f->tmpl || f->build ? f : NULL;
}

bool fbx_grad_op_has_formula(int op_id) {
  if (!loaded() || op_id < 0 || op_id >= FBX_OP_COUNT) return false;
  return formulas[op_id].tmpl || formulas[op_id].build;
}

bool fbx_grad_has_formula(const fbx_node *n) {
  const fbx_op *op;
  return lookup(n, &op) != NULL;
}

/* Can input i of n carry a gradient at all, judging by its schema argument
 * and IR type? */
static bool input_can_have_grad(const fbx_op *op, const fbx_node *n, int i) {
  if (i >= n->ninputs) return false;
  if (!op->schema.varargs) {
    if (i >= op->schema.nargs || op->schema.args[i].type != FBX_ARG_TENSOR) return false;
  }
  const fbx_type *t = n->inputs[i]->type;
  if (t->kind == FBX_TYPE_OPTIONAL) t = t->elems[0];
  if (t->kind == FBX_TYPE_LIST) t = t->elems[0];
  if (t->kind == FBX_TYPE_NONE) return false;
  if (t->kind != FBX_TYPE_TENSOR) return !op->schema.varargs;
  return t->dtype == FBX_DTYPE_UNDEFINED || fbx_dtype_is_floating(t->dtype);
}

bool fbx_grad_input_differentiable(const fbx_node *n, int i) {
  const fbx_op *op;
  const formula *f = lookup(n, &op);
  if (!f || !input_can_have_grad(op, n, i)) return false;
  return !f->tmpl || !fbx_value_is_none(fbx_graph_output(f->tmpl, i));
}

/* ---- instantiation --------------------------------------------------------------------- */

typedef struct inst {
  const fbx_grad_env *env;
  const fbx_node *n;
  const fbx_op *op;
  fbx_value *const *gouts;
  const fbx_graph *t;
  int nargs, nouts;
  fbx_ptrmap map;     /* template value -> backward value */
  fbx_ptrmap needed;  /* template top-level nodes the wanted returns need */
} inst;

static fbx_status *nomem(void) { return fbx_status_nomem(); }

/* Which kind of template parameter v is; *k gets its index within the kind. */
enum { P_NONE, P_ARG, P_OUT, P_GRAD };
static int param_kind(const inst *c, const fbx_value *v, int *k) {
  if (v->node != c->t->block->param) return P_NONE;
  int p = v->offset;
  if (p < c->nargs) {
    *k = p;
    return P_ARG;
  }
  p -= c->nargs;
  if (p < c->nouts) {
    *k = p;
    return P_OUT;
  }
  *k = p - c->nouts;
  return P_GRAD;
}

/* A prim::Constant holding a schema default. */
static fbx_status *default_const(inst *c, const fbx_schema_arg *a, fbx_value **out) {
  fbx_block *b = c->env->block;
  const fbx_ivalue *d = &a->def;
  fbx_value *v = NULL;
  switch (d->kind) {
    case FBX_IV_NONE: v = fbx_insert_const_none(b, NULL); break;
    case FBX_IV_INT: v = fbx_insert_const_int(b, NULL, d->u.i); break;
    case FBX_IV_FLOAT: v = fbx_insert_const_float(b, NULL, d->u.f); break;
    case FBX_IV_BOOL: v = fbx_insert_const_bool(b, NULL, d->u.b); break;
    case FBX_IV_STR: {
      fbx_node *k = fbx_node_create(c->env->graph, FBX_SYM_prim_Constant, 1);
      if (!k || fbx_node_set_s(k, FBX_SYM_attr_value, fbx_iv_str_data(d))) return nomem();
      fbx_value_set_type(k->outputs[0], fbx_type_simple(FBX_TYPE_STR));
      fbx_node_append(b, k);
      v = k->outputs[0];
      break;
    }
    case FBX_IV_LIST: {
      int64_t items[FBX_SCHEMA_MAX_ARGS];
      int len = fbx_iv_list_len(d);
      if (len > FBX_SCHEMA_MAX_ARGS) break;
      for (int i = 0; i < len; i++) {
        const fbx_ivalue *e = fbx_iv_list_at(d, i);
        if (e->kind != FBX_IV_INT) return fbx_status_new(FBX_ERR_UNSUPPORTED, "gradient of %s: default of '%s' is not an int list", c->op->schema_text, a->name);
        items[i] = e->u.i;
      }
      fbx_node *k = fbx_node_create(c->env->graph, FBX_SYM_prim_Constant, 1);
      fbx_type *it = fbx_type_simple(FBX_TYPE_INT);
      fbx_type *lt = fbx_type_container(c->env->graph->arena, FBX_TYPE_LIST, 1, &it);
      if (!k || !lt || fbx_node_set_is(k, FBX_SYM_attr_value, items, len)) return nomem();
      fbx_value_set_type(k->outputs[0], lt);
      fbx_node_append(b, k);
      v = k->outputs[0];
      break;
    }
    default: break;
  }
  if (!v) {
    if (d->kind == FBX_IV_NONE || d->kind == FBX_IV_INT || d->kind == FBX_IV_FLOAT || d->kind == FBX_IV_BOOL)
      return nomem();
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "gradient of %s: cannot spell the default of '%s' as a constant",
                          c->op->schema_text, a->name ? a->name : "?");
  }
  *out = v;
  return NULL;
}

static fbx_status *fwd(inst *c, const fbx_value *v, fbx_value **out) {
  FBX_TRY(c->env->fwd_value(c->env->ctx, v, out));
  if (!*out) return fbx_status_new(FBX_ERR_INTERNAL, "fwd_value gave no value for %%%s", v->name);
  return NULL;
}

static fbx_status *resolve_value(inst *c, const fbx_value *tv, fbx_value **out);
static fbx_status *clone_node(inst *c, const fbx_node *tn);

static fbx_status *resolve_param(inst *c, const fbx_value *tv, fbx_value **out) {
  int k;
  switch (param_kind(c, tv, &k)) {
    case P_ARG:
      if (k < c->n->ninputs) return fwd(c, c->n->inputs[k], out);
      return default_const(c, &c->op->schema.args[k], out);
    case P_OUT: return fwd(c, c->n->outputs[k], out);
    case P_GRAD: {
      if (c->gouts[k]) {
        *out = c->gouts[k];
        return NULL;
      }
      /* An op with several outputs, gradients for only some of them. */
      fbx_value *r;
      FBX_TRY(resolve_value(c, fbx_graph_input(c->t, c->nargs + k), &r));
      fbx_sym zl;
      if (fbx_sym_intern(&zl, "aten::zeros_like", 16)) return nomem();
      fbx_node *z = fbx_node_create(c->env->graph, zl, 1);
      if (!z || fbx_node_add_input(z, r)) return nomem();
      fbx_node_append(c->env->block, z);
      *out = z->outputs[0];
      return NULL;
    }
    default: return fbx_status_new(FBX_ERR_INTERNAL, "not a template parameter: %%%s", tv->name);
  }
}

static fbx_status *resolve_value(inst *c, const fbx_value *tv, fbx_value **out) {
  fbx_value *v = fbx_ptrmap_get(&c->map, tv);
  if (!v) {
    if (tv->node == c->t->block->param)
      FBX_TRY(resolve_param(c, tv, &v));
    else
      FBX_TRY(clone_node(c, tv->node)); /* a deferred aten::size */
    if (!v) v = fbx_ptrmap_get(&c->map, tv);
    if (!v) return fbx_status_new(FBX_ERR_INTERNAL, "gradient formula for %s uses %%%s before defining it",
                                  c->op->id_name, tv->name);
    if (fbx_ptrmap_put(&c->map, tv, v)) return nomem();
  }
  *out = v;
  return NULL;
}

/* Resolve every value that node tn (or a node in its blocks) uses and that
 * is defined outside tn. */
static fbx_status *resolve_free(inst *c, const fbx_node *tn) {
  for (int i = 0; i < tn->ninputs; i++) {
    const fbx_value *v = tn->inputs[i];
    if (v->node == c->t->block->param || v->node->owner == c->t->block) {
      fbx_value *r;
      FBX_TRY(resolve_value(c, v, &r));
    }
  }
  for (int b = 0; b < tn->nblocks; b++) {
    FBX_TRY(resolve_free(c, tn->blocks[b]->ret));
    for (const fbx_node *m = fbx_block_first(tn->blocks[b]); m; m = m->next) FBX_TRY(resolve_free(c, m));
  }
  return NULL;
}

static fbx_value *map_value(void *ctx, fbx_value *v) { return fbx_ptrmap_get(&((inst *)ctx)->map, v); }

static fbx_status *clone_node(inst *c, const fbx_node *tn) {
  FBX_TRY(resolve_free(c, tn));
  fbx_node *m = fbx_node_clone_into(c->env->block, tn, map_value, c);
  if (!m) return nomem();
  for (int i = 0; i < tn->noutputs; i++)
    if (fbx_ptrmap_put(&c->map, tn->outputs[i], m->outputs[i])) return nomem();
  return NULL;
}

static bool is_kind(const fbx_node *n, const char *kind) { return !strcmp(fbx_sym_str(n->kind), kind); }

/* The forward value standing for template parameter tv (an argument or an
 * output), or NULL (a gradient, or an omitted argument). */
static const fbx_value *fwd_of(const inst *c, const fbx_value *tv) {
  int k;
  switch (param_kind(c, tv, &k)) {
    case P_ARG: return k < c->n->ninputs ? c->n->inputs[k] : NULL;
    case P_OUT: return c->n->outputs[k];
    default: return NULL;
  }
}

static bool sizes_known_equal(const fbx_type *a, const fbx_type *b) {
  if (!a || !b || a->kind != FBX_TYPE_TENSOR || b->kind != FBX_TYPE_TENSOR) return false;
  if (a->rank < 0 || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->sizes[i] == FBX_SIZE_UNKNOWN || a->sizes[i] != b->sizes[i]) return false;
  return true;
}

/* Is tn `aten::_grad_sum_to_size(%g, aten::size(%p))` with the sizes of p
 * and of g's forward counterpart known and equal? */
static bool sum_to_size_noop(const inst *c, const fbx_node *tn) {
  if (!is_kind(tn, "aten::_grad_sum_to_size") || tn->ninputs != 2) return false;
  const fbx_node *s = tn->inputs[1]->node;
  if (s->owner != c->t->block || !is_kind(s, "aten::size") || s->ninputs != 1) return false;
  int k;
  if (param_kind(c, s->inputs[0], &k) != P_ARG) return false;
  const fbx_value *p = fwd_of(c, s->inputs[0]);
  if (!p) return false;
  int out = 0;
  if (param_kind(c, tn->inputs[0], &k) == P_GRAD) out = k;
  return sizes_known_equal(p->type, c->n->outputs[out]->type);
}

/* aten::size of a forward argument: cloned only when something other than
 * a dropped _grad_sum_to_size uses it. */
static bool deferred(const inst *c, const fbx_node *tn) {
  int k;
  return is_kind(tn, "aten::size") && tn->ninputs == 1 && param_kind(c, tn->inputs[0], &k) == P_ARG;
}

/* prim::dtype(%p) with p's dtype known: the ScalarType code, else -1. */
static int known_dtype(const inst *c, const fbx_node *tn) {
  if (!is_kind(tn, "prim::dtype") || tn->ninputs != 1) return -1;
  const fbx_value *p = fwd_of(c, tn->inputs[0]);
  if (!p || p->type->kind != FBX_TYPE_TENSOR || p->type->dtype == FBX_DTYPE_UNDEFINED) return -1;
  return (int)p->type->dtype;
}

/* Mark the top-level template nodes that value tv depends on. */
static fbx_status *mark_needed(inst *c, const fbx_value *tv);
static fbx_status *mark_node(inst *c, const fbx_node *tn) {
  for (int i = 0; i < tn->ninputs; i++) FBX_TRY(mark_needed(c, tn->inputs[i]));
  for (int b = 0; b < tn->nblocks; b++) {
    FBX_TRY(mark_node(c, tn->blocks[b]->ret));
    for (const fbx_node *m = fbx_block_first(tn->blocks[b]); m; m = m->next) FBX_TRY(mark_node(c, m));
  }
  return NULL;
}
static fbx_status *mark_needed(inst *c, const fbx_value *tv) {
  const fbx_node *d = tv->node;
  if (d->owner != c->t->block || d == c->t->block->param || fbx_ptrmap_has(&c->needed, d)) return NULL;
  if (fbx_ptrmap_put(&c->needed, d, (void *)d)) return nomem();
  return mark_node(c, d);
}

static fbx_status *cast_to_input_dtype(inst *c, int i, fbx_value **g) {
  if (c->op->category == FBX_OPCAT_CONVERSION || c->n->noutputs < 1) return NULL;
  const fbx_type *in = c->n->inputs[i]->type, *out = c->n->outputs[0]->type;
  if (in->kind != FBX_TYPE_TENSOR || out->kind != FBX_TYPE_TENSOR) return NULL;
  if (in->dtype == FBX_DTYPE_UNDEFINED || out->dtype == FBX_DTYPE_UNDEFINED || in->dtype == out->dtype) return NULL;
  fbx_block *b = c->env->block;
  fbx_value *dt = fbx_insert_const_int(b, NULL, (int64_t)in->dtype);
  fbx_value *f1 = fbx_insert_const_bool(b, NULL, false);
  fbx_value *f2 = fbx_insert_const_bool(b, NULL, false);
  fbx_value *none = fbx_insert_const_none(b, NULL);
  fbx_sym to;
  if (!dt || !f1 || !f2 || !none || fbx_sym_intern(&to, "aten::to", 8)) return nomem();
  fbx_node *k = fbx_node_create(c->env->graph, to, 1);
  if (!k || fbx_node_add_input(k, *g) || fbx_node_add_input(k, dt) || fbx_node_add_input(k, f1) ||
      fbx_node_add_input(k, f2) || fbx_node_add_input(k, none))
    return nomem();
  fbx_node_append(b, k);
  *g = k->outputs[0];
  return NULL;
}

static bool floating_tensor_type(const fbx_type *t) {
  return t && t->kind == FBX_TYPE_TENSOR && fbx_dtype_is_floating(t->dtype);
}

/* Is tn `aten::mul(%x, 1)` (add/sub's alpha at its default), the int
 * constant 1, with %x a tensor whose IR type (or, for a gradient
 * parameter, its forward output's) shows a floating dtype? Then *out gets
 * %x: multiplying by 1 keeps it as it is, and backward graphs have no
 * in-place ops that could tell the two apart. (A bool or integral %x
 * keeps the mul: bool * 1 promotes.) */
static fbx_status *mul_by_one(inst *c, const fbx_node *tn, fbx_value **out) {
  *out = NULL;
  if (!is_kind(tn, "aten::mul") || tn->ninputs != 2) return NULL;
  const fbx_value *k1 = tn->inputs[1];
  fbx_value *one, *x;
  int k;
  if (k1->node == c->t->block->param) {
    if (param_kind(c, k1, &k) != P_ARG) return NULL;
    FBX_TRY(resolve_value(c, k1, &one));
  } else {
    one = (fbx_value *)k1;
  }
  int64_t v;
  if (one->node->kind != FBX_SYM_prim_Constant || one->type->kind != FBX_TYPE_INT || !fbx_value_const_int(one, &v) ||
      v != 1)
    return NULL;
  FBX_TRY(resolve_value(c, tn->inputs[0], &x));
  bool floating = floating_tensor_type(x->type);
  if (!floating && param_kind(c, tn->inputs[0], &k) == P_GRAD) floating = floating_tensor_type(c->n->outputs[k]->type);
  if (floating) *out = x;
  return NULL;
}

static fbx_status *instantiate(inst *c, fbx_value **grad_inputs) {
  const fbx_graph *t = c->t;
  bool want[FBX_SCHEMA_MAX_ARGS] = {false};
  for (int i = 0; i < c->nargs && i < c->n->ninputs; i++) {
    const fbx_value *r = fbx_graph_output(t, i);
    want[i] = !fbx_value_is_none(r) && input_can_have_grad(c->op, c->n, i);
    if (want[i]) FBX_TRY(mark_needed(c, r));
  }
  for (fbx_node *tn = fbx_block_first(t->block); tn; tn = tn->next) {
    if (!fbx_ptrmap_has(&c->needed, tn) || (tn->noutputs && fbx_ptrmap_has(&c->map, tn->outputs[0]))) continue;
    if (deferred(c, tn)) continue;
    if (sum_to_size_noop(c, tn)) {
      fbx_value *g;
      FBX_TRY(resolve_value(c, tn->inputs[0], &g));
      if (fbx_ptrmap_put(&c->map, tn->outputs[0], g)) return nomem();
      continue;
    }
    int dt = known_dtype(c, tn);
    if (dt >= 0) {
      fbx_value *k = fbx_insert_const_int(c->env->block, NULL, dt);
      if (!k || fbx_ptrmap_put(&c->map, tn->outputs[0], k)) return nomem();
      continue;
    }
    fbx_value *same;
    FBX_TRY(mul_by_one(c, tn, &same));
    if (same) {
      if (fbx_ptrmap_put(&c->map, tn->outputs[0], same)) return nomem();
      continue;
    }
    FBX_TRY(clone_node(c, tn));
  }
  for (int i = 0; i < c->nargs && i < c->n->ninputs; i++) {
    if (!want[i]) continue;
    fbx_value *g;
    FBX_TRY(resolve_value(c, fbx_graph_output(t, i), &g));
    FBX_TRY(cast_to_input_dtype(c, i, &g));
    grad_inputs[i] = g;
  }
  return NULL;
}

static fbx_status *no_formula(const fbx_node *n, const fbx_op *op) {
  fbx_strbuf b = {0};
  fbx_node_print_line(&b, n);
  fbx_status *st;
  if (op)
    st = fbx_status_new(FBX_ERR_UNSUPPORTED, "no gradient formula for %s%s%s (node: %s)", fbx_sym_str(op->schema.name),
                        op->schema.overload[0] ? "." : "", op->schema.overload, b.data ? b.data : "");
  else
    st = fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "no gradient formula for %s: its IR types do not decide the overload (node: %s)",
                        fbx_sym_str(n->kind), b.data ? b.data : "");
  fbx_strbuf_free(&b);
  return st;
}

fbx_status *fbx_grad_build(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                           fbx_value **grad_inputs) {
  for (int i = 0; i < n->ninputs; i++) grad_inputs[i] = NULL;
  FBX_TRY(ready());
  const fbx_op *op = resolve(n);
  if (!op) return no_formula(n, NULL);
  const formula *f = &formulas[op->id];
  if (!f->tmpl && !f->build) return no_formula(n, op);
  bool any = false;
  for (int j = 0; j < n->noutputs; j++) any |= grad_outputs[j] != NULL;
  if (!any) return NULL;
  if (f->build) return f->build(env, n, grad_outputs, grad_inputs);
  if (n->noutputs != op->schema.nrets)
    return fbx_status_new(FBX_ERR_INTERNAL, "%s has %d outputs, its schema %d", fbx_sym_str(n->kind), n->noutputs,
                          op->schema.nrets);
  inst c = {.env = env, .n = n, .op = op, .gouts = grad_outputs, .t = f->tmpl, .nargs = op->schema.nargs,
            .nouts = op->schema.nrets};
  fbx_status *st = instantiate(&c, grad_inputs);
  fbx_ptrmap_free(&c.map);
  fbx_ptrmap_free(&c.needed);
  if (st)
    for (int i = 0; i < n->ninputs; i++) grad_inputs[i] = NULL;
  return st;
}
