/* Gradient formulas written in C (builders.h): the Tensor[] ops, and the
 * ops whose formula depends on constant arguments (var/std's correction, a
 * norm's p, permute's dims, dropout's and batch_norm's training flag
 * (when it is a constant),
 * cdist's p, einsum's equation, optional weights and biases), and the
 * normalizations and classification losses.
 *
 * Each builder appends nodes to env->block with a small emitter whose error
 * is sticky: after the first failure every emit returns NULL and the
 * builder returns that status at the end, so the formulas read as straight
 * lists of ops. Forward values come through env->fwd_value (the caller
 * saves what is asked for); constants of the node are read at build time,
 * and a formula that needs a constant the node does not have fails with
 * FBX_ERR_UNSUPPORTED (the node then stays out of differentiable regions'
 * reach only if the caller checks; the message names the node). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <fusebox/tensor.h>

#include "autodiff/builders.h"
#include "ir/type.h"
#include "ops/optable.h"

typedef struct em {
  const fbx_grad_env *env;
  const fbx_node *n;
  fbx_status *st;
} em;

static void em_fail(em *e, fbx_status *st) {
  if (!e->st) e->st = st;
  else fbx_status_free(st);
}

static fbx_value *em_nomem(em *e) {
  em_fail(e, fbx_status_nomem());
  return NULL;
}

/* Append `kind`(ins...) with one output of type ty (NULL: Tensor). */
static fbx_value *emitv(em *e, const char *kind, fbx_type *ty, int nin, fbx_value *const *ins) {
  if (e->st) return NULL;
  for (int i = 0; i < nin; i++)
    if (!ins[i]) return NULL; /* an earlier emit failed */
  fbx_sym sym;
  if (fbx_sym_intern(&sym, kind, strlen(kind))) return em_nomem(e);
  fbx_node *m = fbx_node_create(e->env->graph, sym, 1);
  if (!m) return em_nomem(e);
  for (int i = 0; i < nin; i++)
    if (fbx_node_add_input(m, ins[i])) {
      fbx_node_destroy(m);
      return em_nomem(e);
    }
  if (ty) fbx_value_set_type(m->outputs[0], ty);
  fbx_node_append(e->env->block, m);
  return m->outputs[0];
}

/* Append `kind`(ins...) with nout Tensor outputs into outv. */
static void emit_multi(em *e, const char *kind, int nin, fbx_value *const *ins, int nout, fbx_value **outv) {
  for (int k = 0; k < nout; k++) outv[k] = NULL;
  if (e->st) return;
  for (int i = 0; i < nin; i++)
    if (!ins[i]) return;
  fbx_sym sym;
  if (fbx_sym_intern(&sym, kind, strlen(kind))) {
    em_nomem(e);
    return;
  }
  fbx_node *m = fbx_node_create(e->env->graph, sym, nout);
  if (!m) {
    em_nomem(e);
    return;
  }
  for (int i = 0; i < nin; i++)
    if (fbx_node_add_input(m, ins[i])) {
      fbx_node_destroy(m);
      em_nomem(e);
      return;
    }
  fbx_node_append(e->env->block, m);
  for (int k = 0; k < nout; k++) outv[k] = m->outputs[k];
}

#define EMIT(e, kind, ty, ...) \
  emitv(e, kind, ty, (int)(sizeof((fbx_value *[]){__VA_ARGS__}) / sizeof(fbx_value *)), (fbx_value *[]){__VA_ARGS__})
#define T_ NULL /* Tensor */

static fbx_type *t_int(void) { return fbx_type_simple(FBX_TYPE_INT); }
static fbx_type *t_list(em *e, fbx_type *elem) {
  if (e->st) return NULL;
  fbx_type *t = fbx_type_container(e->env->graph->arena, FBX_TYPE_LIST, 1, &elem);
  if (!t) em_nomem(e);
  return t;
}
static fbx_type *t_ints(em *e) { return t_list(e, t_int()); }
static fbx_type *t_tensors(em *e) { return t_list(e, fbx_type_tensor_any()); }

static fbx_value *c_int(em *e, int64_t v) {
  if (e->st) return NULL;
  fbx_value *r = fbx_insert_const_int(e->env->block, NULL, v);
  return r ? r : em_nomem(e);
}
static fbx_value *c_float(em *e, double v) {
  if (e->st) return NULL;
  fbx_value *r = fbx_insert_const_float(e->env->block, NULL, v);
  return r ? r : em_nomem(e);
}
static fbx_value *c_bool(em *e, bool v) {
  if (e->st) return NULL;
  fbx_value *r = fbx_insert_const_bool(e->env->block, NULL, v);
  return r ? r : em_nomem(e);
}
static fbx_value *c_none(em *e) {
  if (e->st) return NULL;
  fbx_value *r = fbx_insert_const_none(e->env->block, NULL);
  return r ? r : em_nomem(e);
}

/* prim::ListConstruct(items) of type `ty`. */
static fbx_value *list_of(em *e, fbx_type *ty, int n, fbx_value *const *items) {
  fbx_value *l = emitv(e, "prim::ListConstruct", ty, n, items);
  return l;
}
static fbx_value *c_ints(em *e, int n, const int64_t *v) {
  fbx_value *items[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) items[i] = c_int(e, v[i]);
  return list_of(e, t_ints(e), n, items);
}

/* The backward-graph value of the node's input i. */
static fbx_value *in(em *e, int i) {
  if (e->st) return NULL;
  fbx_value *r = NULL;
  fbx_status *st = e->env->fwd_value(e->env->ctx, e->n->inputs[i], &r);
  if (st) em_fail(e, st);
  return r;
}
static fbx_value *out(em *e, int i) {
  if (e->st) return NULL;
  fbx_value *r = NULL;
  fbx_status *st = e->env->fwd_value(e->env->ctx, e->n->outputs[i], &r);
  if (st) em_fail(e, st);
  return r;
}

/* The node's optional input i is given (present and not None). */
static bool has_input(const fbx_node *n, int i) { return n->ninputs > i && !fbx_value_is_none(n->inputs[i]); }

/* aten::size(x) as an int[] value. */
static fbx_value *size_of(em *e, fbx_value *x) { return EMIT(e, "aten::size", t_ints(e), x); }

static fbx_status *unsupported(em *e, const char *why) {
  fbx_status *st = fbx_status_new(FBX_ERR_UNSUPPORTED, "no gradient formula for %s with %s", fbx_sym_str(e->n->kind), why);
  fbx_status_free(e->st);
  return st;
}

/* Constant int list (prim::Constant[value=[...]] or a ListConstruct of int
 * constants): the count, or -1. */
static int const_ints(const fbx_value *v, int64_t *out, int cap) {
  const fbx_node *d = v->node;
  if (d->kind == FBX_SYM_prim_Constant) {
    fbx_attr *a = d->nattrs ? &d->attrs[0] : NULL;
    if (!a || a->kind != FBX_ATTR_INTS || a->n > cap) return -1;
    memcpy(out, a->u.is, sizeof(int64_t) * (size_t)a->n);
    return a->n;
  }
  if (d->kind != FBX_SYM_prim_ListConstruct || d->ninputs > cap) return -1;
  /* a list that anything else consumes may be mutated (aten::append in a
   * loop): only its run-time value counts then */
  for (int u = 0; u < v->nuses; u++) {
    const fbx_node *user = v->uses[u].user;
    if (user->kind == FBX_SYM_prim_ListConstruct || !fbx_op_kind_known(user->kind) ||
        fbx_op_kind_has_flag(user->kind, FBX_OPF_INPLACE) || !fbx_sym_in_ns(user->kind, "aten"))
      return -1;
  }
  for (int i = 0; i < d->ninputs; i++)
    if (!fbx_value_const_int(d->inputs[i], &out[i])) return -1;
  return d->ninputs;
}

/* ---- Tensor[] ops -------------------------------------------------------------------- */

/* The elements of the forward Tensor[] input i, when a prim::ListConstruct
 * built it (their count is then known): backward values, or -1. */
static int list_elems(em *e, int i, fbx_value **elems, int cap) {
  const fbx_node *d = e->n->inputs[i]->node;
  if (d->kind != FBX_SYM_prim_ListConstruct || d->ninputs > cap) return -1;
  for (int k = 0; k < d->ninputs && !e->st; k++) {
    fbx_status *st = e->env->fwd_value(e->env->ctx, d->inputs[k], &elems[k]);
    if (st) em_fail(e, st);
  }
  return d->ninputs;
}

#define MAX_LIST 64

/* cat: each input gets its slice of the gradient along dim. */
fbx_status *fbx_grad_cat(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                         fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *elems[MAX_LIST], *parts[MAX_LIST];
  int cnt = list_elems(&e, 0, elems, MAX_LIST);
  if (cnt < 0) {
    /* the list's length is known at run time only */
    grad_inputs[0] = EMIT(&e, "fusebox::cat_backward", t_tensors(&e), grad_outputs[0], in(&e, 0), in(&e, 1));
    return e.st;
  }
  fbx_value *dim = in(&e, 1), *off = c_int(&e, 0);
  for (int k = 0; k < cnt; k++) {
    fbx_value *len = EMIT(&e, "aten::size", t_int(), elems[k], dim);
    parts[k] = EMIT(&e, "aten::narrow", T_, grad_outputs[0], dim, off, len);
    if (k + 1 < cnt) off = EMIT(&e, "aten::add", t_int(), off, len);
  }
  grad_inputs[0] = list_of(&e, t_tensors(&e), cnt, parts);
  return e.st;
}

/* stack: the gradient unbound along dim. */
fbx_status *fbx_grad_stack(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                           fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  grad_inputs[0] = EMIT(&e, "aten::unbind", t_tensors(&e), grad_outputs[0], in(&e, 1));
  return e.st;
}

/* chunk, split, split_with_sizes: the gradients concatenated along dim (the
 * last schema argument). */
fbx_status *fbx_grad_split_like(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  grad_inputs[0] = EMIT(&e, "aten::cat", T_, grad_outputs[0], in(&e, n->ninputs - 1));
  return e.st;
}

/* unbind: the gradients stacked along dim. */
fbx_status *fbx_grad_unbind(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                            fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  grad_inputs[0] = EMIT(&e, "aten::stack", T_, grad_outputs[0], in(&e, 1));
  return e.st;
}

/* broadcast_tensors: each gradient summed back to its input's size. */
fbx_status *fbx_grad_broadcast_tensors(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                       fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *elems[MAX_LIST], *parts[MAX_LIST];
  int cnt = list_elems(&e, 0, elems, MAX_LIST);
  if (cnt < 0) {
    grad_inputs[0] = EMIT(&e, "fusebox::broadcast_tensors_backward", t_tensors(&e), grad_outputs[0], in(&e, 0));
    return e.st;
  }
  for (int k = 0; k < cnt; k++) {
    fbx_value *gk = EMIT(&e, "aten::__getitem__", T_, grad_outputs[0], c_int(&e, k));
    fbx_value *sz = size_of(&e, elems[k]);
    parts[k] = EMIT(&e, "aten::sum_to_size", T_, gk, sz);
  }
  grad_inputs[0] = list_of(&e, t_tensors(&e), cnt, parts);
  return e.st;
}

/* meshgrid(tensors) / meshgrid.indexing(tensors, indexing): grid k holds
 * input k along dim p_k (k; with "xy" the first two swapped), so its
 * gradient is the grid's summed over every other dim, in the input's shape
 * (0-d or 1-d); for a list no prim::ListConstruct of the graph builds,
 * fusebox::meshgrid_backward does the same at run time. An indexing that is
 * not a constant is not differentiated. */
fbx_status *fbx_grad_meshgrid(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                              fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  bool xy = false;
  if (n->ninputs > 1) {
    const fbx_node *c = n->inputs[1]->node;
    const fbx_attr *a = c->kind == FBX_SYM_prim_Constant ? fbx_node_attr(c, FBX_SYM_attr_value) : NULL;
    if (!a || a->kind != FBX_ATTR_STR) return unsupported(&e, "a non-constant indexing");
    xy = !strcmp(a->u.s, "xy");
  }
  fbx_value *elems[MAX_LIST], *parts[MAX_LIST];
  int cnt = list_elems(&e, 0, elems, MAX_LIST);
  if (cnt < 0) { /* a list no prim::ListConstruct builds: the runtime op */
    grad_inputs[0] = EMIT(&e, "fusebox::meshgrid_backward", t_tensors(&e), grad_outputs[0], in(&e, 0), c_bool(&e, xy));
    return e.st;
  }
  fbx_value *f = c_bool(&e, false), *none = c_none(&e);
  for (int k = 0; k < cnt; k++) {
    int p = xy && cnt >= 2 && k < 2 ? 1 - k : k;
    fbx_value *gk = EMIT(&e, "aten::__getitem__", T_, grad_outputs[0], c_int(&e, k));
    if (cnt > 1) {
      int64_t dims[MAX_LIST];
      int nd = 0;
      for (int d = 0; d < cnt; d++)
        if (d != p) dims[nd++] = d;
      gk = EMIT(&e, "aten::sum", T_, gk, c_ints(&e, nd, dims), f, none);
    }
    parts[k] = EMIT(&e, "aten::reshape", T_, gk, size_of(&e, elems[k]));
  }
  grad_inputs[0] = list_of(&e, t_tensors(&e), cnt, parts);
  return e.st;
}

/* ---- var / std ------------------------------------------------------------------------- */

/* var(self, unbiased), var.dim(self, dim, unbiased, keepdim),
 * var.correction(self, dim, *, correction, keepdim), and std the same:
 *   var: grad * 2 (x - mean) / (N - correction)
 *   std: grad * (x - mean) / ((N - correction) * result), 0 where result is 0 */
fbx_status *fbx_grad_var_std(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                             fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  const char *name = fbx_sym_str(n->kind);
  /* var_mean / std_mean: (var or std, mean); either gradient may be absent */
  bool with_mean = !strcmp(name, "aten::var_mean") || !strcmp(name, "aten::std_mean");
  fbx_value *gmean = with_mean && n->noutputs > 1 ? grad_outputs[1] : NULL;
  if (!grad_outputs[0] && !gmean) return NULL;
  bool is_std = !strcmp(name, "aten::std") || !strcmp(name, "aten::std_mean");
  int64_t corr = 1;
  fbx_value *dim, *keepdim;
  if (n->ninputs <= 2) { /* var(self, unbiased=True) */
    if (n->ninputs == 2 && !fbx_value_const_int(n->inputs[1], &corr))
      return unsupported(&e, "a non-constant unbiased");
    dim = c_none(&e);
    keepdim = c_bool(&e, false);
  } else {
    /* unbiased (bool) or correction (int?, None meaning 1) */
    const fbx_value *c = n->inputs[2];
    if (!fbx_value_is_none(c) && !fbx_value_const_int(c, &corr)) return unsupported(&e, "a non-constant correction");
    dim = in(&e, 1);
    keepdim = n->ninputs > 3 ? in(&e, 3) : c_bool(&e, false);
  }
  fbx_value *self = in(&e, 0), *none = c_none(&e), *t = c_bool(&e, true), *one = c_int(&e, 1);
  fbx_value *sizes = size_of(&e, self);
  fbx_value *gm = NULL; /* the mean's part: g spread over the reduced dims, / count */
  if (gmean) {
    fbx_value *s1 = EMIT(&e, "fusebox::sum_backward", T_, gmean, sizes, dim, keepdim);
    fbx_value *nin = EMIT(&e, "aten::numel", t_int(), self), *nout = EMIT(&e, "aten::numel", t_int(), gmean);
    fbx_value *cnt = EMIT(&e, "aten::floordiv", t_int(), nin, nout);
    gm = EMIT(&e, "aten::div", T_, s1, cnt);
  }
  if (!grad_outputs[0]) {
    grad_inputs[0] = gm;
    return e.st;
  }
  fbx_value *mu = EMIT(&e, "aten::mean", T_, self, dim, t, none);
  fbx_value *d = EMIT(&e, "aten::sub", T_, self, mu, one);
  fbx_value *g = EMIT(&e, "fusebox::sum_backward", T_, grad_outputs[0], sizes, dim, keepdim);
  fbx_value *nin = EMIT(&e, "aten::numel", t_int(), self), *nout = EMIT(&e, "aten::numel", t_int(), grad_outputs[0]);
  fbx_value *cnt = EMIT(&e, "aten::floordiv", t_int(), nin, nout);
  fbx_value *den = EMIT(&e, "aten::sub", t_int(), cnt, c_int(&e, corr));
  fbx_value *dg = EMIT(&e, "aten::mul", T_, d, g);
  if (!is_std) {
    fbx_value *f = EMIT(&e, "aten::div", fbx_type_simple(FBX_TYPE_FLOAT), c_float(&e, 2.0), den);
    grad_inputs[0] = EMIT(&e, "aten::mul", T_, dg, f);
  } else {
    fbx_value *r = EMIT(&e, "fusebox::sum_backward", T_, out(&e, 0), sizes, dim, keepdim);
    fbx_value *rd = EMIT(&e, "aten::mul", T_, r, den);
    fbx_value *q = EMIT(&e, "aten::div", T_, dg, rd);
    fbx_value *zero = EMIT(&e, "aten::eq", T_, r, c_int(&e, 0));
    grad_inputs[0] = EMIT(&e, "aten::masked_fill", T_, q, zero, c_int(&e, 0));
  }
  if (gm) grad_inputs[0] = EMIT(&e, "aten::add", T_, grad_inputs[0], gm, one);
  return e.st;
}

/* ---- norms ------------------------------------------------------------------------------- */

/* norm.Scalar(self, p), norm.ScalarOpt_dim(self, p?, dim, keepdim),
 * frobenius_norm.dim(self, dim, keepdim),
 * linalg_vector_norm(self, ord, dim?, keepdim, *, dtype?), for a constant p:
 *   p = 2: self * g / r;  p = 1: sign(self) * g;  p = +-inf: the gradient
 *   shared by the elements whose |self| equals r;  p = 0: none;
 *   other p: sign(self) |self|^(p-1) g / r^(p-1).
 * (g, r: the output gradient and the result put back to self's shape; 0
 * where r is 0, as PyTorch's norm_backward.) */
/* The p-norm gradient of node e->n (self: input 0, result: output 0) for
 * output gradient go; p < 0 reads p from input 1 (a constant number, None
 * for 2). */
static fbx_status *norm_grad(em *ep, fbx_value *go, double p, fbx_value *dim, fbx_value *keepdim,
                             fbx_value **grad_inputs) {
  em e = *ep;
  const fbx_node *n = e.n;
  if (p < 0) {
    p = 2;
    if (has_input(n, 1) && !fbx_value_const_float(n->inputs[1], &p)) return unsupported(&e, "a non-constant p");
  }
  fbx_value *self = in(&e, 0);
  if (p == 0) return e.st;
  fbx_value *sizes = size_of(&e, self);
  fbx_value *g = EMIT(&e, "fusebox::sum_backward", T_, go, sizes, dim, keepdim);
  fbx_value *zero = c_int(&e, 0);
  if (p == 1) {
    fbx_value *s = EMIT(&e, "aten::sign", T_, self);
    grad_inputs[0] = EMIT(&e, "aten::mul", T_, s, g);
    return e.st;
  }
  fbx_value *r = EMIT(&e, "fusebox::sum_backward", T_, out(&e, 0), sizes, dim, keepdim);
  if (isinf(p)) {
    fbx_value *a = EMIT(&e, "aten::abs", T_, self);
    fbx_value *m = EMIT(&e, "aten::eq", T_, a, r);
    fbx_value *cnt = EMIT(&e, "aten::sum", T_, m, dim, c_bool(&e, true), c_none(&e));
    fbx_value *s = EMIT(&e, "aten::sign", T_, self);
    fbx_value *sm = EMIT(&e, "aten::mul", T_, s, m);
    fbx_value *gc = EMIT(&e, "aten::div", T_, g, cnt);
    grad_inputs[0] = EMIT(&e, "aten::mul", T_, sm, gc);
    return e.st;
  }
  fbx_value *num, *den;
  if (p == 2) {
    num = self;
    den = r;
  } else {
    fbx_value *a = EMIT(&e, "aten::abs", T_, self);
    fbx_value *ap = EMIT(&e, "aten::pow", T_, a, c_float(&e, p - 1));
    num = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::sign", T_, self), ap);
    den = EMIT(&e, "aten::pow", T_, r, c_float(&e, p - 1));
  }
  fbx_value *q = EMIT(&e, "aten::div", T_, EMIT(&e, "aten::mul", T_, num, g), den);
  fbx_value *rz = EMIT(&e, "aten::eq", T_, r, zero);
  grad_inputs[0] = EMIT(&e, "aten::masked_fill", T_, q, rz, zero);
  return e.st;
}

fbx_status *fbx_grad_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                          fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  const char *name = fbx_sym_str(n->kind);
  if (!strcmp(name, "aten::frobenius_norm"))
    return norm_grad(&e, grad_outputs[0], 2, in(&e, 1), n->ninputs > 2 ? in(&e, 2) : c_bool(&e, false), grad_inputs);
  return norm_grad(&e, grad_outputs[0], -1, n->ninputs > 2 ? in(&e, 2) : c_none(&e),
                   n->ninputs > 3 ? in(&e, 3) : c_bool(&e, false), grad_inputs);
}

/* The length of a constant int list input (a prim::ListConstruct or a list
 * literal), -1 when it is not one, 0 for None. */
static int const_list_len(const fbx_value *v) {
  if (fbx_value_is_none(v)) return 0;
  const fbx_node *d = v->node;
  if (d->kind == FBX_SYM_prim_ListConstruct) return d->ninputs;
  if (d->kind == FBX_SYM_prim_Constant && d->nattrs && d->attrs[0].kind == FBX_ATTR_INTS) return d->attrs[0].n;
  return -1;
}

/* linalg_norm(self, ord?, dim?, keepdim, *, dtype?) and .ord_str: the
 * vector norms (ord None, or a constant number with one dim) and "fro" over
 * any dims are fbx_grad_norm's p-norms; the matrix orders have no gradient
 * here (nor ord with dim None, whose kind depends on self's rank). */
fbx_status *fbx_grad_linalg_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                 fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  const fbx_node *o = n->inputs[1]->node;
  bool fro = o->kind == FBX_SYM_prim_Constant && o->nattrs && o->attrs[0].kind == FBX_ATTR_STR &&
             !strcmp(o->attrs[0].u.s, "fro");
  if (!fbx_value_is_none(n->inputs[1]) && !fro && const_list_len(n->inputs[2]) != 1)
    return unsupported(&e, "a matrix norm order (or an order with dim None)");
  return norm_grad(&e, grad_outputs[0], fro ? 2.0 : -1, in(&e, 2), in(&e, 3), grad_inputs);
}

/* ---- linear, permute (layer_norm: formulas_reduce.h) -------------------------------------------------------- */

/* linear(input, weight, bias?) = matmul(input, weight.t()) + bias */
fbx_status *fbx_grad_linear(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                            fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *wt = EMIT(&e, "aten::t", T_, in(&e, 1));
  fbx_value *gi = EMIT(&e, "fusebox::matmul_backward", T_, grad_outputs[0], in(&e, 0), wt);
  if (gi) {
    fbx_node *mb = gi->node;
    if (!fbx_node_add_output(mb, fbx_type_tensor_any())) return em_nomem(&e), e.st;
    grad_inputs[0] = gi;
    grad_inputs[1] = EMIT(&e, "aten::t", T_, mb->outputs[1]);
  }
  if (has_input(n, 2))
    grad_inputs[2] =
        EMIT(&e, "aten::sum_to_size", T_, grad_outputs[0], size_of(&e, in(&e, 2)));
  return e.st;
}

/* permute(self, dims): the gradient permuted by the inverse permutation. */
fbx_status *fbx_grad_permute(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                             fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  int64_t dims[FBX_MAX_DIMS], inv[FBX_MAX_DIMS];
  int nd = const_ints(n->inputs[1], dims, FBX_MAX_DIMS);
  if (nd < 0) {
    grad_inputs[0] = EMIT(&e, "fusebox::permute_backward", T_, grad_outputs[0], in(&e, 1));
    return e.st;
  }
  for (int i = 0; i < nd; i++) {
    int64_t d = dims[i] < 0 ? dims[i] + nd : dims[i];
    if (d < 0 || d >= nd) return unsupported(&e, "a dim out of range");
    inv[d] = i;
  }
  grad_inputs[0] = EMIT(&e, "aten::permute", T_, grad_outputs[0], c_ints(&e, nd, inv));
  return e.st;
}

/* ---- losses with optional weights ----------------------------------------------------- */

/* binary_cross_entropy_with_logits(self, target, weight?, pos_weight?, reduction),
 * PyTorch 1.13's formulas, with g the output gradient put back to the
 * elementwise shape and pt = pos_weight * target:
 *   d self   = g * weight * ((pt + 1 - target) * sigmoid(self) - pt)
 *              (no pos_weight: sigmoid(self) - target)
 *   d target = g * weight * (log_sigmoid(-self) - pos_weight * log_sigmoid(self))
 *              (no pos_weight: -self)
 * weight and pos_weight get no gradient (PyTorch defines none). */
fbx_status *fbx_grad_bce_with_logits(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                     fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  bool has_w = has_input(n, 2);
  bool has_pw = has_input(n, 3);
  fbx_value *x = in(&e, 0), *t = in(&e, 1), *one = c_int(&e, 1);
  fbx_value *red = n->ninputs > 4 ? in(&e, 4) : c_int(&e, 1);
  fbx_value *xs = size_of(&e, x);
  fbx_value *g = EMIT(&e, "fusebox::loss_reduction_backward", T_, grad_outputs[0], xs, red);
  if (has_w) g = EMIT(&e, "aten::mul", T_, g, in(&e, 2));
  fbx_value *sig = EMIT(&e, "aten::sigmoid", T_, x);
  fbx_value *ds, *dt;
  if (has_pw) {
    fbx_value *pw = in(&e, 3);
    fbx_value *pt = EMIT(&e, "aten::mul", T_, pw, t);
    fbx_value *c = EMIT(&e, "aten::sub", T_, EMIT(&e, "aten::add", T_, pt, one, one), t, one);
    ds = EMIT(&e, "aten::sub", T_, EMIT(&e, "aten::mul", T_, c, sig), pt, one);
    fbx_value *lneg = EMIT(&e, "aten::log_sigmoid", T_, EMIT(&e, "aten::neg", T_, x));
    fbx_value *lpos = EMIT(&e, "aten::log_sigmoid", T_, x);
    dt = EMIT(&e, "aten::sub", T_, lneg, EMIT(&e, "aten::mul", T_, pw, lpos), one);
  } else {
    ds = EMIT(&e, "aten::sub", T_, sig, t, one);
    dt = EMIT(&e, "aten::neg", T_, x);
  }
  grad_inputs[0] = EMIT(&e, "aten::sum_to_size", T_, EMIT(&e, "aten::mul", T_, ds, g), xs);
  grad_inputs[1] = EMIT(&e, "aten::sum_to_size", T_, EMIT(&e, "aten::mul", T_, dt, g),
                        size_of(&e, t));
  return e.st;
}

/* ---- dropout, batch_norm, group_norm ------------------------------------------------------ */

/* dropout(input, p, train) for a constant train: the identity when not
 * training; when training, grad / (1 - p) where the output is nonzero, 0
 * elsewhere. The forward keeps no mask, so the kept elements are read off
 * the output: exact wherever input != 0 (a kept nonzero input stays
 * nonzero). At input == 0 a kept element is taken as dropped (gradient 0
 * where PyTorch gives grad / (1 - p)); a NaN input passes the gradient
 * either way. p == 1 drops everything (gradient 0, as PyTorch). A train
 * flag known only at run time (a graph input) gets the same rule from one
 * op, fusebox::dropout_backward (ops/list_nn.h). */
fbx_status *fbx_grad_dropout(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                             fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  int64_t train;
  if (!fbx_value_const_int(n->inputs[2], &train)) {
    /* known at run time only: one op picks the identity or the mask */
    grad_inputs[0] = EMIT(&e, "fusebox::dropout_backward", T_, grad_outputs[0], out(&e, 0), in(&e, 1), in(&e, 2));
    return e.st;
  }
  if (!train) {
    grad_inputs[0] = grad_outputs[0];
    return NULL;
  }
  double p;
  fbx_value *scaled;
  if (fbx_value_const_float(n->inputs[1], &p)) {
    scaled = EMIT(&e, "aten::mul", T_, grad_outputs[0], c_float(&e, p < 1 ? 1 / (1 - p) : 0));
  } else {
    fbx_value *q = EMIT(&e, "aten::sub", fbx_type_simple(FBX_TYPE_FLOAT), c_float(&e, 1), in(&e, 1));
    scaled = EMIT(&e, "aten::div", T_, grad_outputs[0], q);
  }
  fbx_value *kept = EMIT(&e, "aten::ne", T_, out(&e, 0), c_int(&e, 0));
  grad_inputs[0] = EMIT(&e, "aten::where", T_, kept, scaled, c_int(&e, 0));
  return e.st;
}

/* rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), means over dims
 * (kept): the input gradient of a normalization with batch statistics. */
static fbx_value *norm_input_grad(em *e, fbx_value *dxhat, fbx_value *xhat, fbx_value *rstd, fbx_value *dims) {
  fbx_value *t = c_bool(e, true), *none = c_none(e), *one = c_int(e, 1);
  fbx_value *a = EMIT(e, "aten::mean", T_, dxhat, dims, t, none);
  fbx_value *b = EMIT(e, "aten::mean", T_, EMIT(e, "aten::mul", T_, dxhat, xhat), dims, t, none);
  fbx_value *inner =
      EMIT(e, "aten::sub", T_, EMIT(e, "aten::sub", T_, dxhat, a, one), EMIT(e, "aten::mul", T_, xhat, b), one);
  return EMIT(e, "aten::mul", T_, inner, rstd);
}

/* [size(x, 0), k, -1] */
static fbx_value *ncl_sizes(em *e, fbx_value *x, fbx_value *k) {
  fbx_value *items[3] = {EMIT(e, "aten::size", t_int(), x, c_int(e, 0)), k, c_int(e, -1)};
  return list_of(e, t_ints(e), 3, items);
}

/* batch_norm(input, weight?, bias?, running_mean?, running_var?, training,
 * momentum, eps, cudnn_enabled). For a constant training flag the input is
 * viewed as [N, C, L]; statistics are per channel over N and L.
 *   batch statistics (training, or no running stats): as layer_norm with
 *     mean and biased variance over (N, L);
 *   running statistics: d input = grad * weight * rsqrt(running_var + eps),
 *     d weight = sum(grad * (x - running_mean) * rsqrt(running_var + eps)).
 * d bias = sum(grad) over (N, L). The running stats get no gradient (they
 * are buffers in PyTorch: not differentiable inputs here). A training flag
 * known only at run time goes to fusebox::batch_norm_backward
 * (ops/list_nn.h), which picks the statistics when it runs. */
fbx_status *fbx_grad_batch_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  int64_t training;
  bool has_w = !fbx_value_is_none(n->inputs[1]), has_b = !fbx_value_is_none(n->inputs[2]);
  if (!fbx_value_const_int(n->inputs[5], &training)) {
    /* known at run time only: one op picks batch or running statistics */
    fbx_value *ins[7] = {grad_outputs[0], in(&e, 0), in(&e, 1), in(&e, 3), in(&e, 4), in(&e, 5), in(&e, 7)};
    fbx_value *g3[3];
    emit_multi(&e, "fusebox::batch_norm_backward", 7, ins, 3, g3);
    grad_inputs[0] = g3[0];
    if (has_w) grad_inputs[1] = g3[1];
    if (has_b) grad_inputs[2] = g3[2];
    return e.st;
  }
  bool batch_stats = training || fbx_value_is_none(n->inputs[3]) || fbx_value_is_none(n->inputs[4]);
  fbx_value *x = in(&e, 0), *eps = in(&e, 7), *one = c_int(&e, 1), *none = c_none(&e), *f = c_bool(&e, false);
  fbx_value *c = EMIT(&e, "aten::size", t_int(), x, one);
  fbx_value *sz3 = ncl_sizes(&e, x, c);
  fbx_value *x3 = EMIT(&e, "aten::reshape", T_, x, sz3);
  fbx_value *g3 = EMIT(&e, "aten::reshape", T_, grad_outputs[0], sz3);
  fbx_value *d02[2] = {c_int(&e, 0), c_int(&e, 2)};
  fbx_value *dims = list_of(&e, t_ints(&e), 2, d02);
  fbx_value *m1 = c_int(&e, -1);
  fbx_value *col_items[2] = {m1, one};
  fbx_value *col = list_of(&e, t_ints(&e), 2, col_items); /* [C] -> [C, 1] */
  fbx_value *xhat, *gi3;
  fbx_value *wc = has_w ? EMIT(&e, "aten::reshape", T_, in(&e, 1), col) : NULL;
  if (batch_stats) {
    fbx_value *t = c_bool(&e, true);
    fbx_value *mu = EMIT(&e, "aten::mean", T_, x3, dims, t, none);
    fbx_value *xc = EMIT(&e, "aten::sub", T_, x3, mu, one);
    fbx_value *var = EMIT(&e, "aten::mean", T_, EMIT(&e, "aten::mul", T_, xc, xc), dims, t, none);
    fbx_value *rstd = EMIT(&e, "aten::rsqrt", T_, EMIT(&e, "aten::add", T_, var, eps, one));
    xhat = EMIT(&e, "aten::mul", T_, xc, rstd);
    fbx_value *dxhat = has_w ? EMIT(&e, "aten::mul", T_, g3, wc) : g3;
    gi3 = norm_input_grad(&e, dxhat, xhat, rstd, dims);
  } else {
    fbx_value *rstd = EMIT(&e, "aten::rsqrt", T_, EMIT(&e, "aten::add", T_, in(&e, 4), eps, one));
    fbx_value *rstd_c = EMIT(&e, "aten::reshape", T_, rstd, col);
    fbx_value *mean_c = EMIT(&e, "aten::reshape", T_, in(&e, 3), col);
    xhat = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::sub", T_, x3, mean_c, one), rstd_c);
    fbx_value *scale = has_w ? EMIT(&e, "aten::mul", T_, rstd_c, wc) : rstd_c;
    gi3 = EMIT(&e, "aten::mul", T_, g3, scale);
  }
  grad_inputs[0] = EMIT(&e, "aten::reshape", T_, gi3, size_of(&e, x));
  if (has_w) grad_inputs[1] = EMIT(&e, "aten::sum", T_, EMIT(&e, "aten::mul", T_, g3, xhat), dims, f, none);
  if (has_b) grad_inputs[2] = EMIT(&e, "aten::sum", T_, g3, dims, f, none);
  return e.st;
}

/* group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled): the
 * input viewed as [N, G, L] is normalized like layer_norm over L; the
 * per-channel weight and bias act on the [N, C, L'] view. */
fbx_status *fbx_grad_group_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  bool has_w = has_input(n, 2);
  bool has_b = has_input(n, 3);
  fbx_value *x = in(&e, 0), *one = c_int(&e, 1), *none = c_none(&e), *t = c_bool(&e, true), *f = c_bool(&e, false);
  fbx_value *eps = n->ninputs > 4 ? in(&e, 4) : c_float(&e, 1e-5);
  fbx_value *m1 = c_int(&e, -1);
  fbx_value *last = list_of(&e, t_ints(&e), 1, &m1);
  fbx_value *szg = ncl_sizes(&e, x, in(&e, 1));
  fbx_value *szc = ncl_sizes(&e, x, EMIT(&e, "aten::size", t_int(), x, one));
  fbx_value *x3 = EMIT(&e, "aten::reshape", T_, x, szg);
  fbx_value *mu = EMIT(&e, "aten::mean", T_, x3, last, t, none);
  fbx_value *xc = EMIT(&e, "aten::sub", T_, x3, mu, one);
  fbx_value *var = EMIT(&e, "aten::mean", T_, EMIT(&e, "aten::mul", T_, xc, xc), last, t, none);
  fbx_value *rstd = EMIT(&e, "aten::rsqrt", T_, EMIT(&e, "aten::add", T_, var, eps, one));
  fbx_value *xhat = EMIT(&e, "aten::mul", T_, xc, rstd);
  fbx_value *gc = EMIT(&e, "aten::reshape", T_, grad_outputs[0], szc);
  fbx_value *dxhat = EMIT(&e, "aten::reshape", T_, grad_outputs[0], szg);
  fbx_value *d02[2] = {c_int(&e, 0), c_int(&e, 2)};
  fbx_value *dims = list_of(&e, t_ints(&e), 2, d02);
  if (has_w) {
    fbx_value *col_items[2] = {m1, one};
    fbx_value *wc = EMIT(&e, "aten::reshape", T_, in(&e, 2), list_of(&e, t_ints(&e), 2, col_items));
    dxhat = EMIT(&e, "aten::reshape", T_, EMIT(&e, "aten::mul", T_, gc, wc), szg);
    fbx_value *xhat_c = EMIT(&e, "aten::reshape", T_, xhat, szc);
    grad_inputs[2] = EMIT(&e, "aten::sum", T_, EMIT(&e, "aten::mul", T_, gc, xhat_c), dims, f, none);
  }
  if (has_b) grad_inputs[3] = EMIT(&e, "aten::sum", T_, gc, dims, f, none);
  fbx_value *gi = norm_input_grad(&e, dxhat, xhat, rstd, last);
  grad_inputs[0] = EMIT(&e, "aten::reshape", T_, gi, size_of(&e, x));
  return e.st;
}

/* ---- distances ---------------------------------------------------------------------------- */

/* cdist(x1 [..., P, M], x2 [..., R, M], p) for a constant p, through the
 * pairwise differences d = x1[..., :, None, :] - x2[..., None, :, :] and
 * the output gradient g and distance r put on [..., P, R, 1]:
 *   p = 1: sign(d) g;  p = 2: d g / r;  p = inf: sign(d) g where |d| == r;
 *   other p: sign(d) |d|^(p-1) g / r^(p-1);  p = 0: no gradient;
 * 0 where r is 0 (PyTorch's _cdist_backward), summed over R for x1 and
 * over P (negated) for x2, then back over broadcast batch dims. */
fbx_status *fbx_grad_cdist(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                           fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  double p = 2;
  if (n->ninputs > 2 && !fbx_value_const_float(n->inputs[2], &p)) return unsupported(&e, "a non-constant p");
  if (p == 0) return NULL;
  fbx_value *x1 = in(&e, 0), *x2 = in(&e, 1), *one = c_int(&e, 1), *m1 = c_int(&e, -1), *zero = c_int(&e, 0);
  fbx_value *d = EMIT(&e, "aten::sub", T_, EMIT(&e, "aten::unsqueeze", T_, x1, c_int(&e, -2)),
                      EMIT(&e, "aten::unsqueeze", T_, x2, c_int(&e, -3)), one);
  fbx_value *g = EMIT(&e, "aten::unsqueeze", T_, grad_outputs[0], m1);
  fbx_value *gd;
  if (p == 1) {
    gd = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::sign", T_, d), g);
  } else {
    fbx_value *r = EMIT(&e, "aten::unsqueeze", T_, out(&e, 0), m1);
    if (isinf(p)) {
      fbx_value *at_max = EMIT(&e, "aten::eq", T_, EMIT(&e, "aten::abs", T_, d), r);
      gd = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::sign", T_, d), at_max), g);
    } else {
      fbx_value *num = d, *den = r;
      if (p != 2) {
        fbx_value *ap = EMIT(&e, "aten::pow", T_, EMIT(&e, "aten::abs", T_, d), c_float(&e, p - 1));
        num = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::sign", T_, d), ap);
        den = EMIT(&e, "aten::pow", T_, r, c_float(&e, p - 1));
      }
      fbx_value *q = EMIT(&e, "aten::div", T_, EMIT(&e, "aten::mul", T_, num, g), den);
      gd = EMIT(&e, "aten::masked_fill", T_, q, EMIT(&e, "aten::eq", T_, r, zero), zero);
    }
  }
  fbx_value *none = c_none(&e), *f = c_bool(&e, false);
  fbx_value *dr = c_int(&e, -2), *dp = c_int(&e, -3);
  fbx_value *g1 = EMIT(&e, "aten::sum", T_, gd, list_of(&e, t_ints(&e), 1, &dr), f, none);
  fbx_value *g2 = EMIT(&e, "aten::neg", T_, EMIT(&e, "aten::sum", T_, gd, list_of(&e, t_ints(&e), 1, &dp), f, none));
  grad_inputs[0] = EMIT(&e, "aten::sum_to_size", T_, g1, size_of(&e, x1));
  grad_inputs[1] = EMIT(&e, "aten::sum_to_size", T_, g2, size_of(&e, x2));
  return e.st;
}

/* cosine_similarity(x1, x2, dim, eps) as PyTorch 1.13 computes it: x1 and
 * x2 broadcast to a, b; y = sum(a / na * b / nb, dim) with na = max(|a|,
 * eps) (the clamp under no_grad: the norm's own gradient a / |a| flows,
 * 0 where |a| is 0). With g and y unsqueezed at dim:
 *   d a = g (b / (na nb) - y a / (na |a|)),  d b likewise;
 * each summed back to its input's size. */
fbx_status *fbx_grad_cosine_similarity(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                       fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *x[2] = {in(&e, 0), in(&e, 1)};
  fbx_value *dim = n->ninputs > 2 ? in(&e, 2) : c_int(&e, 1);
  fbx_value *eps = n->ninputs > 3 ? in(&e, 3) : c_float(&e, 1e-8);
  fbx_value *zero = c_int(&e, 0), *none = c_none(&e), *t = c_bool(&e, true), *one = c_int(&e, 1);
  fbx_value *bt = EMIT(&e, "aten::broadcast_tensors", t_tensors(&e), list_of(&e, t_tensors(&e), 2, x));
  fbx_value *v[2], *raw[2], *nrm[2];
  fbx_value *dl = list_of(&e, t_ints(&e), 1, &dim);
  for (int k = 0; k < 2; k++) {
    v[k] = EMIT(&e, "aten::__getitem__", T_, bt, c_int(&e, k));
    raw[k] = EMIT(&e, "aten::linalg_vector_norm", T_, v[k], c_int(&e, 2), dl, t, none);
    nrm[k] = EMIT(&e, "aten::clamp_min", T_, raw[k], eps);
  }
  fbx_value *y = EMIT(&e, "aten::unsqueeze", T_, out(&e, 0), dim);
  fbx_value *g = EMIT(&e, "aten::unsqueeze", T_, grad_outputs[0], dim);
  fbx_value *nn = EMIT(&e, "aten::mul", T_, nrm[0], nrm[1]);
  for (int k = 0; k < 2; k++) {
    fbx_value *cross = EMIT(&e, "aten::div", T_, v[1 - k], nn);
    fbx_value *self = EMIT(&e, "aten::div", T_, EMIT(&e, "aten::mul", T_, y, v[k]),
                           EMIT(&e, "aten::mul", T_, nrm[k], raw[k]));
    self = EMIT(&e, "aten::masked_fill", T_, self, EMIT(&e, "aten::eq", T_, raw[k], zero), zero);
    fbx_value *gk = EMIT(&e, "aten::mul", T_, g, EMIT(&e, "aten::sub", T_, cross, self, one));
    grad_inputs[k] = EMIT(&e, "aten::sum_to_size", T_, gk, size_of(&e, x[k]));
  }
  return e.st;
}

/* ---- classification losses ---------------------------------------------------------------- */

/* binary_cross_entropy(self, target, weight?, reduction), PyTorch 1.13's
 * formulas with g the output gradient put back to the elementwise shape
 * (times weight):
 *   d self   = g (self - target) / max((1 - self) self, 1e-12)
 *   d target = -g logit(self) */
fbx_status *fbx_grad_bce(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                         fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *x = in(&e, 0), *t = in(&e, 1), *one = c_int(&e, 1);
  fbx_value *red = n->ninputs > 3 ? in(&e, 3) : c_int(&e, 1);
  fbx_value *xs = size_of(&e, x);
  fbx_value *g = EMIT(&e, "fusebox::loss_reduction_backward", T_, grad_outputs[0], xs, red);
  if (has_input(n, 2)) g = EMIT(&e, "aten::mul", T_, g, in(&e, 2));
  fbx_value *den = EMIT(&e, "aten::mul", T_, EMIT(&e, "aten::rsub", T_, x, one, one), x);
  den = EMIT(&e, "aten::clamp_min", T_, den, c_float(&e, 1e-12));
  fbx_value *ds = EMIT(&e, "aten::div", T_, EMIT(&e, "aten::sub", T_, x, t, one), den);
  grad_inputs[0] = EMIT(&e, "aten::mul", T_, ds, g);
  fbx_value *lg = EMIT(&e, "aten::logit", T_, x, c_none(&e));
  grad_inputs[1] = EMIT(&e, "aten::neg", T_, EMIT(&e, "aten::mul", T_, lg, g));
  return e.st;
}

/* The gradient wrt the log-probabilities x ([C], [N, C] or [N, C, d...];
 * classes along cd) of
 *   (1 - ls) nll_loss(x, target, weight, reduction, ignore_index)
 *   + ls / C * smooth,  smooth = -sum_c weight_c x_c per element, 0 where
 *     ignored; reduced by sum, or for mean divided by the summed weights
 *     of the non-ignored targets (their count without weight), as nll's
 *     mean -- PyTorch 1.13's cross_entropy with label smoothing;
 * ls = 0 is plain nll_loss (mean: divided by the summed target weights). */
static fbx_value *nll_dlogp(em *e, fbx_value *x, fbx_value *cd, int64_t red, fbx_value *grad, double ls) {
  /* red < 0: the reduction is known at run time only */
  const fbx_node *n = e->n;
  bool has_w = has_input(n, 2);
  fbx_value *t = in(e, 1), *zero = c_int(e, 0), *none = c_none(e);
  fbx_value *ii = n->ninputs > 4 ? in(e, 4) : c_int(e, -100);
  fbx_value *w = has_w ? in(e, 2) : NULL;
  fbx_value *valid = EMIT(e, "aten::ne", T_, t, ii);
  fbx_value *ts = EMIT(e, "aten::masked_fill", T_, t, EMIT(e, "aten::eq", T_, t, ii), zero);
  fbx_value *validf = EMIT(e, "aten::type_as", T_, valid, x);
  fbx_value *wt = validf;
  if (has_w) {
    fbx_type *tt = fbx_type_tensor_any();
    fbx_type *opt = e->st ? NULL : fbx_type_container(e->env->graph->arena, FBX_TYPE_OPTIONAL, 1, &tt);
    if (!opt && !e->st) em_nomem(e);
    fbx_value *ix = list_of(e, t_list(e, opt), 1, &ts);
    wt = EMIT(e, "aten::mul", T_, EMIT(e, "aten::index", T_, w, ix), validf);
  }
  fbx_value *gn = grad;
  if (red == 1) {
    gn = EMIT(e, "aten::div", T_, grad, EMIT(e, "aten::sum", T_, wt, none));
  } else if (red < 0) {
    /* mean divides by the summed weights; sum and none by 1 (none's
     * gradient has target's shape, sum's is 0-d: broadcasting covers both) */
    fbx_value *is_mean = EMIT(e, "aten::eq", fbx_type_simple(FBX_TYPE_BOOL), in(e, 3), c_int(e, 1));
    fbx_value *mt = EMIT(e, "aten::tensor", T_, is_mean, none, none, c_bool(e, false));
    fbx_value *den = EMIT(e, "aten::where", T_, mt, EMIT(e, "aten::sum", T_, wt, none), c_int(e, 1));
    gn = EMIT(e, "aten::div", T_, grad, den);
  }
  fbx_value *coef = EMIT(e, "aten::mul", T_, wt, gn);
  coef = EMIT(e, "aten::mul", T_, coef, c_float(e, -(1 - ls)));
  fbx_value *z = EMIT(e, "aten::zeros_like", T_, x, none, none, none, none, none);
  fbx_value *dl = EMIT(e, "aten::scatter", T_, z, cd, EMIT(e, "aten::unsqueeze", T_, ts, cd),
                       EMIT(e, "aten::unsqueeze", T_, coef, cd));
  if (ls == 0) return dl;
  fbx_value *gs = red == 1 || red < 0 ? gn : grad;
  fbx_value *ncls = EMIT(e, "aten::size", t_int(), x, cd);
  fbx_value *k = EMIT(e, "aten::div", fbx_type_simple(FBX_TYPE_FLOAT), c_float(e, -ls), ncls);
  fbx_value *s = EMIT(e, "aten::mul", T_, EMIT(e, "aten::mul", T_, validf, gs), k);
  s = EMIT(e, "aten::expand_as", T_, EMIT(e, "aten::unsqueeze", T_, s, cd), x);
  if (has_w) {
    /* weight runs along the class dim: move it last, scale, move it back */
    fbx_value *m1 = c_int(e, -1);
    fbx_value *st = EMIT(e, "aten::mul", T_, EMIT(e, "aten::transpose", T_, s, cd, m1), w);
    s = EMIT(e, "aten::transpose", T_, st, cd, m1);
  }
  return EMIT(e, "aten::add", T_, dl, s, c_int(e, 1));
}

/* The class dim of x: 0 for [C], else 1. */
static fbx_value *class_dim(em *e, fbx_value *x) {
  fbx_value *r = EMIT(e, "aten::sub", t_int(), EMIT(e, "aten::dim", t_int(), x), c_int(e, 1));
  return EMIT(e, "prim::min", t_int(), r, c_int(e, 1));
}

/* The node's reduction (0 none, 1 mean, 2 sum), or -1 when only the run
 * knows it. */
static int64_t reduction_of(const fbx_node *n) {
  int64_t red = 1;
  if (n->ninputs > 3 && !fbx_value_const_int(n->inputs[3], &red)) return -1;
  return red;
}

/* nll_loss / nll_loss_nd(self, target, weight?, reduction, ignore_index),
 * -weight[target] g at each target class, 0 for
 * ignored targets; mean divides by the summed weights of the non-ignored
 * targets. target and weight get no gradient (as in PyTorch). */
fbx_status *fbx_grad_nll_loss(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                              fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  fbx_value *x = in(&e, 0);
  grad_inputs[0] = nll_dlogp(&e, x, class_dim(&e, x), reduction_of(n), grad_outputs[0], 0);
  return e.st;
}

/* cross_entropy_loss(self, target, weight?, reduction, ignore_index,
 * label_smoothing) with class-index targets, for a constant
 * label_smoothing: the loss is nll_loss_nd (with smoothing, PyTorch 1.13's
 * mix; see nll_dlogp) of log_softmax(self) over the class dim, so
 *   d self = D - softmax(self) * sum(D, class dim),  D = d loss / d log_softmax.
 * Probability targets (a floating target of self's shape) are refused. */
fbx_status *fbx_grad_cross_entropy(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                   fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  int64_t red = reduction_of(n);
  double ls = 0;
  if (n->ninputs > 5 && !fbx_value_const_float(n->inputs[5], &ls)) return unsupported(&e, "a non-constant label_smoothing");
  const fbx_type *tt = n->inputs[1]->type;
  if (tt->kind == FBX_TYPE_TENSOR && fbx_dtype_is_floating(tt->dtype))
    return unsupported(&e, "probability (floating) targets");
  fbx_value *x = in(&e, 0), *none = c_none(&e);
  fbx_value *cd = class_dim(&e, x);
  fbx_value *d = nll_dlogp(&e, x, cd, red, grad_outputs[0], ls);
  fbx_value *sm = EMIT(&e, "aten::softmax", T_, x, cd, none);
  fbx_value *sd = EMIT(&e, "aten::sum", T_, d, list_of(&e, t_ints(&e), 1, &cd), c_bool(&e, true), none);
  grad_inputs[0] = EMIT(&e, "aten::sub", T_, d, EMIT(&e, "aten::mul", T_, sm, sd), c_int(&e, 1));
  return e.st;
}

/* ---- einsum ---------------------------------------------------------------------------------- */

#define EIN_MAX 8

static bool ein_label(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

/* A string constant in the backward graph. */
static fbx_value *c_str(em *e, const char *s) {
  if (e->st) return NULL;
  fbx_node *k = fbx_node_create(e->env->graph, FBX_SYM_prim_Constant, 1);
  if (!k) return em_nomem(e);
  if (fbx_node_set_s(k, FBX_SYM_attr_value, s)) {
    fbx_node_destroy(k);
    return em_nomem(e);
  }
  fbx_value_set_type(k->outputs[0], fbx_type_simple(FBX_TYPE_STR));
  fbx_node_append(e->env->block, k);
  return k->outputs[0];
}

/* einsum(equation, tensors, path) for a constant equation (explicit `->`
 * or implicit output) over a Tensor[] built by prim::ListConstruct. The
 * gradient of operand i is the einsum of the output gradient and the other
 * operands onto i's labels; labels only operand i has (summed in the
 * forward) are left out of that einsum and broadcast back with unsqueeze +
 * expand_as. An operand with a letter repeated (its diagonal) gets that
 * einsum over its distinct letters put back on the diagonal by
 * fusebox::einsum_diag_backward. Refused, like the forward kernel refuses
 * it: ellipsis. */
fbx_status *fbx_grad_einsum(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                            fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  const fbx_node *eqn = n->inputs[0]->node;
  if (eqn->kind != FBX_SYM_prim_Constant || !eqn->nattrs || eqn->attrs[0].kind != FBX_ATTR_STR)
    return unsupported(&e, "a non-constant equation");
  const char *eq = eqn->attrs[0].u.s;
  if (strstr(eq, "...")) return unsupported(&e, "an ellipsis ('...') in the equation");
  /* full: an operand's subscripts as written; lab: its distinct letters */
  char lab[EIN_MAX][FBX_MAX_DIMS + 1], full[EIN_MAX][FBX_MAX_DIMS + 1], outl[FBX_MAX_DIMS * EIN_MAX + 1];
  int nops = 0, len[EIN_MAX] = {0}, flen[EIN_MAX] = {0}, nout = 0, count[128] = {0};
  bool explicit_out = false;
  lab[0][0] = full[0][0] = 0;
  nops = 1;
  for (const char *p = eq; *p; p++) {
    char ch = *p;
    if (ch == ' ') continue;
    if (ch == ',') {
      if (explicit_out || nops >= EIN_MAX) return unsupported(&e, "more operands than fusebox's einsum takes");
      lab[nops][0] = full[nops][0] = 0;
      nops++;
      continue;
    }
    if (ch == '-' && p[1] == '>') {
      explicit_out = true;
      p++;
      continue;
    }
    if (!ein_label(ch)) return unsupported(&e, "an equation character other than letters, ',', '->'");
    if (explicit_out) {
      if (nout >= FBX_MAX_DIMS) return unsupported(&e, "too many output labels");
      outl[nout++] = ch;
      continue;
    }
    int i = nops - 1;
    if (flen[i] >= FBX_MAX_DIMS) return unsupported(&e, "too many labels in an operand");
    full[i][flen[i]++] = ch;
    full[i][flen[i]] = 0;
    count[(int)ch]++;
    if (strchr(lab[i], ch)) continue; /* a diagonal: the letter counts once among i's dims */
    lab[i][len[i]++] = ch;
    lab[i][len[i]] = 0;
  }
  if (!explicit_out)
    for (int ch = 0; ch < 128; ch++)
      if (count[ch] == 1) outl[nout++] = (char)ch;
  outl[nout] = 0;
  fbx_value *elems[EIN_MAX], *grads[EIN_MAX];
  int cnt = list_elems(&e, 1, elems, EIN_MAX);
  if (cnt < 0) {
    /* a list from outside the graph (a subgraph input): its elements at
     * run time, as many as the equation names (the forward checked that) */
    fbx_value *l = in(&e, 1);
    for (int k = 0; k < nops; k++) elems[k] = EMIT(&e, "aten::__getitem__", T_, l, c_int(&e, k));
    cnt = nops;
  }
  if (cnt != nops) return unsupported(&e, "an operand count that does not match the equation");
  fbx_value *none = c_none(&e);
  for (int i = 0; i < nops && !e.st; i++) {
    /* "<out>,<other operands>-><i's labels that something else has>" */
    char geq[(FBX_MAX_DIMS + 1) * (EIN_MAX + 1) + 4];
    fbx_value *ops[EIN_MAX + 1];
    int at = 0, nin = 0;
    memcpy(geq, outl, (size_t)nout);
    at = nout;
    ops[nin++] = grad_outputs[0];
    for (int j = 0; j < nops; j++) {
      if (j == i) continue;
      geq[at++] = ',';
      memcpy(geq + at, full[j], (size_t)flen[j]);
      at += flen[j];
      ops[nin++] = elems[j];
    }
    geq[at++] = '-';
    geq[at++] = '>';
    bool kept[FBX_MAX_DIMS];
    for (int k = 0; k < len[i]; k++) {
      char ch = lab[i][k];
      kept[k] = strchr(outl, ch) != NULL;
      for (int j = 0; j < nops && !kept[k]; j++)
        if (j != i && strchr(lab[j], ch)) kept[k] = true;
      if (kept[k]) geq[at++] = ch;
    }
    geq[at] = 0;
    fbx_value *gi = EMIT(&e, "aten::einsum", T_, c_str(&e, geq), list_of(&e, t_tensors(&e), nin, ops), none);
    bool any_dropped = false;
    for (int k = 0; k < len[i]; k++)
      if (!kept[k]) {
        gi = EMIT(&e, "aten::unsqueeze", T_, gi, c_int(&e, k));
        any_dropped = true;
      }
    if (flen[i] != len[i]) /* a diagonal: gi (broadcast) onto it in zeros of the operand's sizes */
      gi = EMIT(&e, "fusebox::einsum_diag_backward", T_, gi, c_str(&e, full[i]),
                EMIT(&e, "aten::size", t_ints(&e), elems[i]));
    else if (any_dropped)
      gi = EMIT(&e, "aten::expand_as", T_, gi, elems[i]);
    grads[i] = gi;
  }
  grad_inputs[1] = list_of(&e, t_tensors(&e), nops, grads);
  return e.st;
}
