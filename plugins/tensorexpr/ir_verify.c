/* The IR verifier: what every pass must leave true.
 *   - every loop var is bound by exactly one enclosing For or Reduce where
 *     it is used, and each loop binds a fresh var;
 *   - a local is used only after its Let or Reduce, in the same or an inner
 *     block;
 *   - accesses name a buffer of the kernel, tuples have one index per dim,
 *     linear forms name bound vars; stores never write an input;
 *   - every access stays inside its buffer for all values of its vars
 *     (indices are affine with non-negative strides, so the extreme corner
 *     suffices);
 *   - kit ops have their row's argument count; extents are positive.
 * Returns 0, or -1 with the first problem in msg. */
#include <stdio.h>
#include <string.h>

#include "te.h"

typedef struct vctx {
  const te_kernel_ir *k;
  int64_t *extent; /* per var: its extent while bound, 0 when not */
  int *bound_once;
  char *local_ok;
  char *msg;
  size_t cap;
  int bad;
} vctx;

static void fail(vctx *c, const char *what, int id) {
  if (c->bad) return;
  c->bad = 1;
  snprintf(c->msg, c->cap, "%s (%d)", what, id);
}

static void vexpr(vctx *c, const te_expr *e);

static void vaccess(vctx *c, const te_access *a) {
  if (a->buf < 0 || a->buf >= c->k->nbufs) return fail(c, "access to an unknown buffer", a->buf);
  const te_buf *b = &c->k->bufs[a->buf];
  int64_t hi = 0;
  if (!a->linear) {
    if (a->nidx != b->ndim) return fail(c, "index tuple rank differs from its buffer's", a->buf);
    for (int d = 0; d < a->nidx; d++) {
      const te_expr *e = a->idx[d];
      vexpr(c, e);
      if (c->bad) return;
      if (e->kind == TE_E_IMM && (e->imm.i < 0 || e->imm.i >= b->sizes[d])) return fail(c, "constant index out of range", a->buf);
      if (e->kind == TE_E_VAR && c->extent[e->id] > b->sizes[d]) return fail(c, "loop runs past a dim", a->buf);
    }
    return;
  }
  hi = a->offset;
  for (int t = 0; t < a->nterms; t++) {
    int v = a->var[t];
    if (v < 0 || v >= c->k->nvars || !c->extent[v]) return fail(c, "linear index names an unbound var", v);
    if (a->coef[t] < 0) return fail(c, "negative stride", a->buf);
    hi += a->coef[t] * (c->extent[v] - 1);
  }
  int64_t span = 0; /* the last element the buffer's view covers */
  for (int d = 0; d < b->ndim; d++) span += (b->sizes[d] - 1) * b->strides[d];
  int empty = 0;
  for (int d = 0; d < b->ndim; d++) empty |= b->sizes[d] == 0;
  if (!empty && (a->offset < 0 || hi > span)) return fail(c, "access outside its buffer", a->buf);
}

static void vexpr(vctx *c, const te_expr *e) {
  if (c->bad) return;
  if (!e) return fail(c, "missing expression", 0);
  switch (e->kind) {
    case TE_E_VAR:
      if (e->id < 0 || e->id >= c->k->nvars || !c->extent[e->id]) fail(c, "unbound loop var", e->id);
      return;
    case TE_E_LOCAL:
      if (e->id < 0 || e->id >= c->k->nlocals || !c->local_ok[e->id]) fail(c, "local used before its definition", e->id);
      return;
    case TE_E_SCALAR:
      if (e->id < 0 || e->id >= c->k->ninputs || c->k->input_kind[e->id] == FBXP_ARG_TENSOR)
        fail(c, "scalar argument is not a scalar input", e->id);
      return;
    case TE_E_IMM: return;
    case TE_E_LOAD: return vaccess(c, &e->acc);
    case TE_E_OP:
      if (e->nargs != fbxk_op_noperands(e->op) + fbxk_op_nparams(e->op)) return fail(c, "op with a wrong argument count", e->op);
      break;
    case TE_E_CAST:
      if (e->nargs != 1) return fail(c, "cast without its argument", 0);
      break;
    default:
      if (e->nargs != 2) return fail(c, "index arithmetic without two arguments", 0);
      break;
  }
  for (int i = 0; i < e->nargs; i++) vexpr(c, e->a[i]);
}

static void bind(vctx *c, int v, int64_t extent) {
  if (v < 0 || v >= c->k->nvars) return fail(c, "loop var out of range", v);
  if (c->bound_once[v]++) return fail(c, "loop var bound twice", v);
  if (extent < 1) return fail(c, "loop extent below 1", v);
  c->extent[v] = extent;
}

static void vstmts(vctx *c, const te_stmt *s) {
  int defined[64], nd = 0; /* locals defined in this block: undefined again at its end */
  for (; s && !c->bad; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: vstmts(c, s->first); break;
      case TE_S_FOR:
        if (!s->body || s->body->kind != TE_S_BLOCK) return fail(c, "for without a body block", s->var);
        bind(c, s->var, s->extent);
        vstmts(c, s->body->first);
        if (s->var >= 0 && s->var < c->k->nvars) c->extent[s->var] = 0;
        break;
      case TE_S_STORE:
        if (s->acc.buf >= 0 && s->acc.buf < c->k->nbufs && c->k->bufs[s->acc.buf].kind == TE_BUF_INPUT)
          return fail(c, "store to an input", s->acc.buf);
        vaccess(c, &s->acc);
        vexpr(c, s->value);
        break;
      case TE_S_LET: case TE_S_REDUCE:
        if (s->local < 0 || s->local >= c->k->nlocals) return fail(c, "local out of range", s->local);
        if (s->kind == TE_S_REDUCE) {
          for (int i = 0; i < s->nloops; i++) bind(c, s->rvar[i], s->rextent[i]);
          if (fbxk_op_noperands(s->combiner) != 2) fail(c, "combiner is not a binary row", s->combiner);
        }
        vexpr(c, s->value);
        if (s->kind == TE_S_REDUCE)
          for (int i = 0; i < s->nloops; i++)
            if (s->rvar[i] >= 0 && s->rvar[i] < c->k->nvars) c->extent[s->rvar[i]] = 0;
        c->local_ok[s->local] = 1;
        if (nd < 64) defined[nd++] = s->local;
        break;
    }
  }
  for (int i = 0; i < nd; i++) c->local_ok[defined[i]] = 0;
}

int te_ir_verify(const te_kernel_ir *k, char *msg, size_t cap) {
  vctx c = {k, NULL, NULL, NULL, msg, cap, 0};
  size_t nv = (size_t)(k->nvars + 1), nl = (size_t)(k->nlocals + 1);
  c.extent = te_host->alloc(nv * sizeof *c.extent);
  c.bound_once = te_host->alloc(nv * sizeof *c.bound_once);
  c.local_ok = te_host->alloc(nl);
  if (!c.extent || !c.bound_once || !c.local_ok) {
    snprintf(msg, cap, "out of memory");
    c.bad = 1;
  } else {
    memset(c.extent, 0, nv * sizeof *c.extent);
    memset(c.bound_once, 0, nv * sizeof *c.bound_once);
    memset(c.local_ok, 0, nl);
    if (!k->root || k->root->kind != TE_S_BLOCK) fail(&c, "the root is not a block", 0);
    else vstmts(&c, k->root->first);
  }
  te_host->free(c.extent);
  te_host->free(c.bound_once);
  te_host->free(c.local_ok);
  return c.bad ? -1 : 0;
}
