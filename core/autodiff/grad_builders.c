/* Gradient formulas written in C (builders.h): the Tensor[] ops, and the
 * ops whose formula depends on constant arguments (var/std's correction, a
 * norm's p, permute's dims, optional weights and biases).
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
    fbx_value *sz = EMIT(&e, "aten::size", t_ints(&e), elems[k]);
    parts[k] = EMIT(&e, "aten::sum_to_size", T_, gk, sz);
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
  if (!grad_outputs[0]) return NULL;
  const char *name = fbx_sym_str(n->kind);
  bool is_std = !strcmp(name, "aten::std");
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
  fbx_value *sizes = EMIT(&e, "aten::size", t_ints(&e), self);
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
fbx_status *fbx_grad_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                          fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  const char *name = fbx_sym_str(n->kind);
  double p = 2;
  fbx_value *dim, *keepdim;
  if (!strcmp(name, "aten::frobenius_norm")) {
    dim = in(&e, 1);
    keepdim = n->ninputs > 2 ? in(&e, 2) : c_bool(&e, false);
  } else {
    if (n->ninputs > 1 && !fbx_value_is_none(n->inputs[1]) && !fbx_value_const_float(n->inputs[1], &p))
      return unsupported(&e, "a non-constant p");
    dim = n->ninputs > 2 ? in(&e, 2) : c_none(&e);
    keepdim = n->ninputs > 3 ? in(&e, 3) : c_bool(&e, false);
  }
  fbx_value *self = in(&e, 0);
  if (p == 0) return e.st;
  fbx_value *sizes = EMIT(&e, "aten::size", t_ints(&e), self);
  fbx_value *g = EMIT(&e, "fusebox::sum_backward", T_, grad_outputs[0], sizes, dim, keepdim);
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

/* ---- layer_norm, linear, permute -------------------------------------------------------- */

/* layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable):
 * over the last len(normalized_shape) dims flattened to one (N values),
 * with xhat = (x - mean) * rstd and dxhat = grad * weight:
 *   d input  = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
 *   d weight = grad * xhat summed to weight's size;  d bias = grad summed */
fbx_status *fbx_grad_layer_norm(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                fbx_value **grad_inputs) {
  em e = {env, n, NULL};
  if (!grad_outputs[0]) return NULL;
  bool has_w = n->ninputs > 2 && !fbx_value_is_none(n->inputs[2]);
  bool has_b = n->ninputs > 3 && !fbx_value_is_none(n->inputs[3]);
  fbx_value *x = in(&e, 0), *none = c_none(&e), *t = c_bool(&e, true), *one = c_int(&e, 1);
  fbx_value *eps = n->ninputs > 4 ? in(&e, 4) : c_float(&e, 1e-5);
  fbx_value *k = EMIT(&e, "aten::len", t_int(), in(&e, 1));
  fbx_value *sd = EMIT(&e, "aten::sub", t_int(), EMIT(&e, "aten::dim", t_int(), x), k);
  fbx_value *m1 = c_int(&e, -1);
  fbx_value *x2 = EMIT(&e, "aten::flatten", T_, x, sd, m1);
  fbx_value *last = list_of(&e, t_ints(&e), 1, &m1);
  fbx_value *mu = EMIT(&e, "aten::mean", T_, x2, last, t, none);
  fbx_value *xc = EMIT(&e, "aten::sub", T_, x2, mu, one);
  fbx_value *var = EMIT(&e, "aten::mean", T_, EMIT(&e, "aten::mul", T_, xc, xc), last, t, none);
  fbx_value *rstd = EMIT(&e, "aten::rsqrt", T_, EMIT(&e, "aten::add", T_, var, eps, one));
  fbx_value *xhat = EMIT(&e, "aten::mul", T_, xc, rstd);
  fbx_value *xsz = EMIT(&e, "aten::size", t_ints(&e), x);
  fbx_value *g2 = EMIT(&e, "aten::reshape", T_, grad_outputs[0], EMIT(&e, "aten::size", t_ints(&e), x2));
  fbx_value *dxhat = g2;
  if (has_w) {
    fbx_value *w = in(&e, 2);
    fbx_value *wf = EMIT(&e, "aten::reshape", T_, w, list_of(&e, t_ints(&e), 1, &m1));
    dxhat = EMIT(&e, "aten::mul", T_, g2, wf);
    fbx_value *gw = EMIT(&e, "aten::reshape", T_, EMIT(&e, "aten::mul", T_, g2, xhat), xsz);
    grad_inputs[2] = EMIT(&e, "aten::sum_to_size", T_, gw, EMIT(&e, "aten::size", t_ints(&e), w));
  }
  if (has_b)
    grad_inputs[3] =
        EMIT(&e, "aten::sum_to_size", T_, grad_outputs[0], EMIT(&e, "aten::size", t_ints(&e), in(&e, 3)));
  fbx_value *a = EMIT(&e, "aten::mean", T_, dxhat, last, t, none);
  fbx_value *b = EMIT(&e, "aten::mean", T_, EMIT(&e, "aten::mul", T_, dxhat, xhat), last, t, none);
  fbx_value *inner = EMIT(&e, "aten::sub", T_, EMIT(&e, "aten::sub", T_, dxhat, a, one),
                          EMIT(&e, "aten::mul", T_, xhat, b), one);
  grad_inputs[0] = EMIT(&e, "aten::reshape", T_, EMIT(&e, "aten::mul", T_, inner, rstd), xsz);
  return e.st;
}

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
  if (n->ninputs > 2 && !fbx_value_is_none(n->inputs[2]))
    grad_inputs[2] =
        EMIT(&e, "aten::sum_to_size", T_, grad_outputs[0], EMIT(&e, "aten::size", t_ints(&e), in(&e, 2)));
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
  bool has_w = n->ninputs > 2 && !fbx_value_is_none(n->inputs[2]);
  bool has_pw = n->ninputs > 3 && !fbx_value_is_none(n->inputs[3]);
  fbx_value *x = in(&e, 0), *t = in(&e, 1), *one = c_int(&e, 1);
  fbx_value *red = n->ninputs > 4 ? in(&e, 4) : c_int(&e, 1);
  fbx_value *xs = EMIT(&e, "aten::size", t_ints(&e), x);
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
                        EMIT(&e, "aten::size", t_ints(&e), t));
  return e.st;
}
