/* Save versus recompute in the forward/backward split: what PyTorch's
 * Inductor does with its min-cut partitioner, here as a greedy rule.
 *
 * The backward graph B reads forward values. By default each one is saved:
 * the forward graph F returns it as an extra output and B takes it as an
 * input. With F and B fused, that costs a write in F's kernel and a read in
 * B's: 2 * bytes(v) (for a real output of S, which F writes anyway, the
 * read alone). A value that is a cheap pointwise function of S's inputs
 * (pointwise ops and constants all the way down) can instead be computed
 * again inside B, where the fuser keeps it in registers of the kernel that
 * uses it. That costs reading the S inputs it depends on that B does not
 * read already; F pays nothing for them (the tape keeps S's inputs alive).
 *
 * The rule: visit the saved values in S's order and recompute v when the
 * bytes of the S inputs its recomputation newly needs are fewer than what
 * saving v costs. In S's order a value's producers were decided first, so
 * its recomputation reuses theirs, and an S input once read is free for
 * every later value. When B already reads the inputs — the usual case, since
 * the pointwise formulas themselves read them — every cheap saved value goes,
 * which is the min cut of the pointwise region: forward+backward ratio-IoU's
 * 11 saved intermediates become 19 recomputed nodes over the 8 inputs B
 * reads anyway. When B does not, the greedy order may save a value a global
 * min cut would recompute, never one that costs more to recompute than to
 * save. Compute is not counted: fused pointwise work is memory-bound. The
 * executor asks for recomputation only when a fuser fuses F and B
 * (exec/grad.c): unfused, each recomputed node writes its output once more.
 *
 * Bytes come from S's types: a static specialization knows every size; a
 * size that is not known counts as RC_UNKNOWN_NUMEL elements.
 *
 * A value that B compares with another computed value (aten::eq, ne, lt,
 * le, gt, ge: amax/amin/max/min find their argument's ties by equality with
 * the saved result) is recomputed only when every op of its recomputation
 * is correctly rounded and cannot be contracted (add, sub, mul, min/max,
 * clamp, where, casts, ...: the same bits in any implementation; see
 * exact_op); otherwise it is saved,
 * since a log or exp recomputed by the interpreter may differ by an ulp
 * from the one the forward's kernel made, and an equality that held in F
 * would fail in B (fuzz seed 1100602: amin's gradient over a size-1 dim came
 * out 0/0 = NaN where log(x) was recomputed). Each decision
 * looks at RC_MAX_VISIT nodes not yet recomputed at most (beyond that the
 * value is saved), so the whole choice stays linear in S. Random, in-place,
 * aliasing and side-effecting ops are never recomputed.
 */
#include <string.h>

#include "autodiff/split.h"
#include "base/alloc.h"
#include "ops/optable.h"

#define RC_MAX_VISIT 256
#define RC_UNKNOWN_NUMEL 1048576.0

typedef struct rc_frame {
  const fbx_node *n;
  bool expanded;
} rc_frame;

static bool is_s_input(const fbx_split *d, const fbx_value *v) { return v->node == d->S->block->param; }
static bool is_const(const fbx_value *v) { return v->node->kind == FBX_SYM_prim_Constant; }

static bool cheap_op(const fbx_node *n) {
  if (n->noutputs != 1 || n->nblocks || fbx_node_subgraph(n) || n->outputs[0]->type->kind != FBX_TYPE_TENSOR)
    return false;
  fbx_type *types[FBX_SCHEMA_MAX_ARGS];
  if (n->ninputs > FBX_SCHEMA_MAX_ARGS) return false;
  for (int i = 0; i < n->ninputs; i++) types[i] = n->inputs[i]->type;
  const fbx_op *op = fbx_op_resolve_types(n->kind, types, n->ninputs);
  if (!op) return false;
  if (op->category != FBX_OPCAT_UNARY && op->category != FBX_OPCAT_BINARY && op->category != FBX_OPCAT_TERNARY &&
      op->category != FBX_OPCAT_CONVERSION)
    return false;
  unsigned bad = FBX_OPF_SIDE_EFFECT | FBX_OPF_NONDET | FBX_OPF_INPLACE | FBX_OPF_ALIAS | FBX_OPF_MUTABLE_OUT;
  return !(op->flags & bad) && !fbx_op_kind_has_flag(n->kind, bad);
}

/* A correctly rounded op (or an exact one): its result has the same bits
 * whoever computes it, so B's recomputation equals F's value. Not div and
 * sqrt (OpenCL allows them 2.5 and 3 ulp), and not an add or sub of a
 * product, which a kernel may contract into a fused multiply-add. */
static bool exact_op(const fbx_node *n) {
  const char *k = fbx_sym_str(n->kind);
  if (!strcmp(k, "aten::add") || !strcmp(k, "aten::sub") || !strcmp(k, "aten::rsub"))
    for (int i = 0; i < n->ninputs; i++)
      if (!strcmp(fbx_sym_str(n->inputs[i]->node->kind), "aten::mul")) return false;
  static const char *const EXACT[] = {
      "aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::neg", "aten::abs",
      "aten::relu", "aten::max", "aten::min", "aten::maximum", "aten::minimum", "aten::clamp", "aten::clamp_min",
      "aten::clamp_max", "aten::where", "aten::to", "aten::type_as", "aten::floor", "aten::ceil", "aten::trunc",
      "aten::round", "aten::sign", "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
      "aten::logical_not", "aten::logical_and", "aten::logical_or", "aten::masked_fill", "aten::square"};
  for (size_t i = 0; i < sizeof EXACT / sizeof EXACT[0]; i++)
    if (!strcmp(k, EXACT[i])) return true;
  return false;
}

fbx_status *fbx_split_recompute_init(fbx_split *d) {
  if (!d->recompute) return NULL;
  size_t nv = d->S->next_value_id ? (size_t)d->S->next_value_id : 1;
  d->cheap = fbx_calloc(2 * nv, sizeof *d->cheap); /* cheap[], then exact[] */
  if (!d->cheap) return fbx_status_nomem();
  d->exact = d->cheap + nv;
  for (const fbx_node *n = fbx_block_first(d->S->block); n; n = n->next) {
    if (!cheap_op(n)) continue;
    bool ok = true, exact = exact_op(n);
    for (int i = 0; i < n->ninputs && ok; i++) {
      const fbx_value *in = n->inputs[i];
      ok = is_const(in) || is_s_input(d, in) || d->cheap[in->id];
      exact = exact && (is_const(in) || is_s_input(d, in) || d->exact[in->id]);
    }
    d->cheap[n->outputs[0]->id] = ok;
    d->exact[n->outputs[0]->id] = ok && exact;
  }
  return NULL;
}

void fbx_split_recompute_free(fbx_split *d) {
  fbx_free(d->cheap);
  d->cheap = NULL;
  d->exact = NULL;
  fbx_ptrmap_free(&d->recomputed_of);
}

static double bytes_of(const fbx_value *v) {
  const fbx_type *t = v->type;
  if (t->kind != FBX_TYPE_TENSOR) return 8;
  double n = t->dtype == FBX_DTYPE_UNDEFINED ? 4 : (double)fbx_dtype_size(t->dtype);
  if (t->rank < 0) return n * RC_UNKNOWN_NUMEL;
  bool unknown = false;
  for (int i = 0; i < t->rank; i++) {
    if (t->sizes[i] >= 0) n *= (double)t->sizes[i];
    else unknown = true;
  }
  return unknown ? n * RC_UNKNOWN_NUMEL : n;
}

/* A value of v's recomputation that is itself computed (not a leaf, not yet done). */
static bool to_build(const fbx_split *d, const fbx_value *v) {
  return !is_const(v) && !is_s_input(d, v) && !fbx_ptrmap_has(&d->recomputed_of, v);
}

static fbx_status *push(rc_frame **stk, int *sp, int *cap, const fbx_node *n) {
  if (*sp == *cap) {
    int nc = *cap ? 2 * *cap : 32;
    rc_frame *ns = fbx_realloc(*stk, sizeof *ns * (size_t)nc);
    if (!ns) return fbx_status_nomem();
    *stk = ns;
    *cap = nc;
  }
  (*stk)[(*sp)++] = (rc_frame){n, false};
  return NULL;
}

/* What recomputing cheap value v would take: *new_bytes, the bytes of the S
 * inputs B does not read yet; *missing, whether one of them is not saved
 * (respecializing cannot add inputs). *ok is false when the part of v's
 * recomputation not built yet has more than RC_MAX_VISIT nodes. */
static fbx_status *survey(fbx_split *d, const fbx_value *v, double *new_bytes, bool *missing, bool *ok) {
  fbx_ptrmap seen = {0};
  const fbx_value **stk = NULL;
  int sp = 0, cap = 0, visited = 0;
  fbx_status *st = NULL;
  *new_bytes = 0;
  *missing = false;
  *ok = true;
#define RC_PUSH(x)                                                                  \
  do {                                                                              \
    if (sp == cap) {                                                                \
      int nc_ = cap ? 2 * cap : 32;                                                 \
      const fbx_value **ns_ = fbx_realloc(stk, sizeof *ns_ * (size_t)nc_);          \
      if (!ns_) {                                                                   \
        st = fbx_status_nomem();                                                    \
        goto done;                                                                  \
      }                                                                             \
      stk = ns_;                                                                    \
      cap = nc_;                                                                    \
    }                                                                               \
    stk[sp++] = (x);                                                                \
  } while (0)
  if (fbx_ptrmap_put(&seen, v, (void *)v)) {
    st = fbx_status_nomem();
    goto done;
  }
  RC_PUSH(v);
  while (sp > 0) {
    const fbx_value *x = stk[--sp];
    if (is_s_input(d, x)) {
      if (!fbx_ptrmap_has(&d->saved_of, x)) {
        *new_bytes += bytes_of(x);
        *missing = true;
      }
      continue;
    }
    if (!to_build(d, x)) continue;
    if (++visited > RC_MAX_VISIT) {
      *ok = false;
      break;
    }
    const fbx_node *n = x->node;
    for (int i = 0; i < n->ninputs; i++) {
      const fbx_value *in = n->inputs[i];
      if (is_const(in) || fbx_ptrmap_has(&seen, in)) continue;
      if (fbx_ptrmap_put(&seen, in, (void *)in)) {
        st = fbx_status_nomem();
        goto done;
      }
      RC_PUSH(in);
    }
  }
#undef RC_PUSH
done:
  fbx_free(stk);
  fbx_ptrmap_free(&seen);
  return st;
}

typedef struct rc_inputs {
  const fbx_node *n;
  fbx_value **b; /* B value of n's input i */
} rc_inputs;

static fbx_value *map_input(void *ctx, fbx_value *v) {
  const rc_inputs *r = ctx;
  for (int i = 0; i < r->n->ninputs; i++)
    if (r->n->inputs[i] == v) return r->b[i];
  return NULL;
}

/* B's leading region: the constants and the lists of constants that
 * copy_constant and copy_const_list put at B's top (a list's constants
 * come before it, so a list may sit above constants of other lists). */
static bool b_leading(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_Constant) return true;
  if (n->kind != FBX_SYM_prim_ListConstruct) return false;
  for (int i = 0; i < n->ninputs; i++)
    if (!is_const(n->inputs[i])) return false;
  return true;
}

/* Node n again in B, its inputs already there; placed after the previous
 * recomputed node, so that the recomputation leads B in S's order (after
 * B's whole leading region, whose constants it may read: stopping at the
 * first node that is not a constant put it above a constant list and
 * below that list the constant it read, fuzz seed 572). */
static fbx_status *build_node(fbx_split *d, const fbx_node *n) {
  fbx_value **b = fbx_calloc((size_t)n->ninputs + 1, sizeof *b);
  if (!b) return fbx_status_nomem();
  fbx_status *st = NULL;
  for (int i = 0; i < n->ninputs && !st; i++) {
    const fbx_value *in = n->inputs[i];
    if (is_const(in) || is_s_input(d, in)) st = fbx_split_fwd_value(d, in, &b[i]);
    else if (!(b[i] = fbx_ptrmap_get(&d->recomputed_of, in)))
      st = fbx_status_new(FBX_ERR_INTERNAL, "autodiff: recomputing %%%s before its input %%%s", n->outputs[0]->name,
                          in->name);
  }
  rc_inputs r = {n, b};
  fbx_node *c = NULL;
  if (!st && !(c = fbx_node_clone_into(d->B->block, n, map_input, &r))) st = fbx_status_nomem();
  fbx_free(b);
  if (st) return st;
  fbx_node_detach(c);
  if (d->rc_last) {
    fbx_node_insert_after(c, d->rc_last);
  } else {
    fbx_node *pos = fbx_block_first(d->B->block);
    while (pos && b_leading(pos)) pos = pos->next;
    if (pos) fbx_node_insert_before(c, pos);
    else fbx_node_append(d->B->block, c);
  }
  d->rc_last = c;
  d->nrecompute_nodes++;
  if (fbx_ptrmap_put(&d->recomputed_of, n->outputs[0], c->outputs[0])) return fbx_status_nomem();
  return NULL;
}

/* v computed again in B (post-order over the part not built yet). */
static fbx_status *recompute_value(fbx_split *d, const fbx_value *v, fbx_value **out) {
  rc_frame *stk = NULL;
  int sp = 0, cap = 0;
  fbx_status *st = to_build(d, v) ? push(&stk, &sp, &cap, v->node) : NULL;
  while (!st && sp > 0) {
    rc_frame *f = &stk[sp - 1];
    const fbx_node *n = f->n;
    if (f->expanded) {
      sp--;
      if (!fbx_ptrmap_has(&d->recomputed_of, n->outputs[0])) st = build_node(d, n);
      continue;
    }
    f->expanded = true;
    for (int i = n->ninputs - 1; i >= 0 && !st; i--)
      if (to_build(d, n->inputs[i])) st = push(&stk, &sp, &cap, n->inputs[i]->node);
  }
  fbx_free(stk);
  if (st) return st;
  *out = fbx_ptrmap_get(&d->recomputed_of, v);
  return *out ? NULL : fbx_status_new(FBX_ERR_INTERNAL, "autodiff: %%%s was not recomputed", v->name);
}

/* Whether B compares v with a tensor that is not a constant (a Scalar
 * bound, clamp's, is a number from the graph): such a comparison needs v's
 * bits exactly as F made them (see the top). */
static bool compared_in_b(const fbx_value *v) {
  static const char *const CMP[] = {"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge"};
  for (int u = 0; u < v->nuses; u++) {
    const fbx_node *n = v->uses[u].user;
    const char *k = fbx_sym_str(n->kind);
    bool cmp = false;
    for (size_t c = 0; c < sizeof CMP / sizeof CMP[0] && !cmp; c++) cmp = !strcmp(k, CMP[c]);
    if (!cmp) continue;
    for (int i = 0; i < n->ninputs; i++)
      if (n->inputs[i] != v && n->inputs[i]->type->kind == FBX_TYPE_TENSOR && !is_const(n->inputs[i])) return true;
  }
  return false;
}

fbx_status *fbx_split_recompute_saved(fbx_split *d) {
  if (!d->recompute || !d->cheap) return NULL;
  for (const fbx_node *n = fbx_block_first(d->S->block); n; n = n->next) {
    if (n->noutputs != 1) continue;
    const fbx_value *v = n->outputs[0];
    fbx_value *in = fbx_ptrmap_get(&d->saved_of, v);
    if (!in || !in->nuses || !d->cheap[v->id] || (!d->exact[v->id] && compared_in_b(in))) continue;
    bool real = false; /* F returns it anyway: saving it costs B's read alone */
    for (int u = 0; u < v->nuses && !real; u++) real = v->uses[u].user == d->S->block->ret;
    double saving = (real ? 1 : 2) * bytes_of(v), new_bytes;
    bool missing, ok;
    FBX_TRY(survey(d, v, &new_bytes, &missing, &ok));
    if (!ok || new_bytes >= saving) continue;
    fbx_value *r;
    FBX_TRY(recompute_value(d, v, &r));
    if (fbx_value_replace_all_uses(in, r)) return fbx_status_nomem();
    d->nrecomputed++;
  }
  return NULL;
}

fbx_status *fbx_split_recompute_missing(fbx_split *d, const fbx_value *v, fbx_value **out) {
  *out = NULL;
  if (!d->recompute || !d->cheap || !d->cheap[v->id]) return NULL;
  double new_bytes;
  bool missing, ok;
  FBX_TRY(survey(d, v, &new_bytes, &missing, &ok));
  if (!ok || missing) return NULL;
  return recompute_value(d, v, out);
}
