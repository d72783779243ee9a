/* The schedule: IR -> IR transformations, each one switchable off
 * (FUSEBOX_TE_DISABLE) so that a wrong answer can be bisected.
 *
 *   inline     a temporary computed by a pointwise nest (one Store of its
 *              loop vars, the buffer's only store) is substituted into
 *              every Load of it, NNC's
 *              computeInline: intermediates live in registers. Reduction
 *              results stay buffers: they are reused across a reduction
 *              (softmax's max and sum are read by every element of a row).
 *              First, a temporary read by a reduction and by the nest
 *              writing an output of its layout is stored in that output
 *              (store_in_output: a hand-written softmax's exp once).
 *   (always)   loops of extent 1 are dropped (their var becomes 0).
 *   rowblock   consecutive nests whose outer loops have the same extent and
 *              whose hand-over buffers are indexed by that loop var at the
 *              same position are fused into one outer loop: a row softmax
 *              computes max, sum and result of row i in turn, so its second
 *              and third passes read the row from cache, not memory.
 *   (always)   accesses are linearized: offset + sum of stride * var.
 *   flatten    For i < A { For j < B { ... } } becomes one loop of A*B
 *              where every access has coef(i) == B * coef(j) (contiguous for
 *              all of them): long inner loops for the vectorizer.
 *   parallel   the outer loop of a nest moving at least par_min elements
 *              is marked parallel (OpenMP in C; the evaluator runs serially).
 *   vectorize  innermost loops without a Reduce, sum Reduces and float
 *              max/min Reduces are marked for SIMD (C: a max/min reduction
 *              with a NaN flag beside it).
 * The default schedule is the list above, so a pointwise group becomes one
 * flat parallel SIMD loop, a row reduction one parallel loop over rows with
 * a vectorized reduction inside, a softmax one parallel loop over rows with
 * three passes over its row. */
#include <stdio.h>
#include <string.h>

#include "te.h"

const char *const te_transform_names[6] = {"inline", "rowblock", "flatten", "parallel", "vectorize", "registers"};

/* ---- walking ------------------------------------------------------------------------- */

typedef te_expr *(*expr_fn)(te_kernel_ir *k, te_expr *e, void *ud);

/* Rewrite every expression tree under s with f applied bottom-up to loads. */
static te_expr *rewrite_expr(te_kernel_ir *k, te_expr *e, expr_fn f, void *ud) {
  if (!e) return NULL;
  if (e->kind == TE_E_LOAD) {
    for (int i = 0; i < e->acc.nidx; i++) e->acc.idx[i] = rewrite_expr(k, e->acc.idx[i], f, ud);
    return f(k, e, ud);
  }
  for (int i = 0; i < e->nargs; i++) e->a[i] = rewrite_expr(k, e->a[i], f, ud);
  return e;
}

static void rewrite_stmt(te_kernel_ir *k, te_stmt *s, expr_fn f, void *ud) {
  for (; s; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: rewrite_stmt(k, s->first, f, ud); break;
      case TE_S_FOR: rewrite_stmt(k, s->body, f, ud); break;
      case TE_S_STORE:
        for (int i = 0; i < s->acc.nidx; i++) s->acc.idx[i] = rewrite_expr(k, s->acc.idx[i], f, ud);
        s->value = rewrite_expr(k, s->value, f, ud);
        break;
      case TE_S_LET: case TE_S_REDUCE: s->value = rewrite_expr(k, s->value, f, ud); break;
    }
  }
}

/* Substitute loop vars in every expression and index under s. */
typedef struct subst_ud {
  const int *vars;
  te_expr *const *by;
  int n;
} subst_ud;

static te_expr *subst_leaf(te_kernel_ir *k, te_expr *e, void *ud) {
  (void)k;
  (void)ud;
  return e;
}

static void subst_stmt(te_kernel_ir *k, te_stmt *s, const int *vars, te_expr *const *by, int n) {
  for (; s; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: subst_stmt(k, s->first, vars, by, n); break;
      case TE_S_FOR: subst_stmt(k, s->body, vars, by, n); break;
      case TE_S_STORE:
        for (int i = 0; i < s->acc.nidx; i++) s->acc.idx[i] = te_subst(k, s->acc.idx[i], vars, by, n);
        s->value = te_subst(k, s->value, vars, by, n);
        break;
      case TE_S_LET: case TE_S_REDUCE: s->value = te_subst(k, s->value, vars, by, n); break;
    }
  }
}

/* ---- inline -------------------------------------------------------------------------- */

/* The Store at the bottom of a pure pointwise nest (For chains around one
 * Store), or NULL. vars[] gets the loop vars outermost first. */
static te_stmt *pointwise_store(te_stmt *s, int *vars, int *nv) {
  *nv = 0;
  while (s->kind == TE_S_FOR) {
    vars[(*nv)++] = s->var;
    te_stmt *b = s->body;
    if (!b->first || b->first->next) return NULL;
    s = b->first;
  }
  return s->kind == TE_S_STORE ? s : NULL;
}

typedef struct inl_ud {
  int buf;
  te_stmt *store;
} inl_ud;

static te_expr *inline_load(te_kernel_ir *k, te_expr *e, void *ud) {
  inl_ud *u = ud;
  if (e->acc.buf != u->buf) return e;
  /* the store's index tuple names the producer's vars (or 0) per dim */
  int vars[TE_MAX_DIMS], n = 0;
  te_expr *by[TE_MAX_DIMS];
  for (int d = 0; d < u->store->acc.nidx; d++)
    if (u->store->acc.idx[d]->kind == TE_E_VAR) {
      vars[n] = u->store->acc.idx[d]->id;
      by[n++] = e->acc.idx[d];
    }
  te_expr *v = te_subst(k, u->store->value, vars, by, n);
  return v ? v : e;
}

static int count_stores(const te_stmt *s, int buf) {
  int n = 0;
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) n += count_stores(s->first, buf);
    else if (s->kind == TE_S_FOR) n += count_stores(s->body, buf);
    else if (s->kind == TE_S_STORE) n += s->acc.buf == buf;
  }
  return n;
}

/* ---- a temporary stored in an output (before inline) --------------------------------------
 *
 * A softmax written by hand (exp(x - max), its row sum, the division) reads
 * the temporary e from a reduction and from the nest that writes the
 * output: inlined into both, exp runs twice per element. When the output
 * has e's dtype and shape, is written only by that nest and that nest reads
 * e only at the element it writes, e is stored in the output instead: the
 * reduction sums the output, and the last nest rewrites it in place (what
 * aten::softmax's lowering does; rowblock then keeps the row in cache). */

typedef struct rd_ud {
  int buf, n;
  const te_access *same; /* count only loads not at this tuple (NULL: count all) */
} rd_ud;

static int same_tuple(const te_access *a, const te_access *b) {
  if (a->nidx != b->nidx || a->linear || b->linear) return 0;
  for (int d = 0; d < a->nidx; d++) {
    const te_expr *x = a->idx[d], *y = b->idx[d];
    if (x->kind != y->kind || (x->kind == TE_E_VAR && x->id != y->id) || (x->kind == TE_E_IMM && x->imm.i != y->imm.i) ||
        (x->kind != TE_E_VAR && x->kind != TE_E_IMM))
      return 0;
  }
  return 1;
}

static te_expr *count_reads(te_kernel_ir *k, te_expr *e, void *ud) {
  (void)k;
  rd_ud *u = ud;
  if (e->acc.buf == u->buf && (!u->same || !same_tuple(&e->acc, u->same))) u->n++;
  return e;
}

static int reads(te_kernel_ir *k, te_stmt *s, int buf, const te_access *except_at) {
  rd_ud u = {buf, 0, except_at};
  te_stmt *save = s->next;
  s->next = NULL; /* this statement only */
  rewrite_stmt(k, s, count_reads, &u);
  s->next = save;
  return u.n;
}

static int has_reduce(const te_stmt *s) {
  for (; s; s = s->next)
    if (s->kind == TE_S_REDUCE || (s->kind == TE_S_BLOCK && has_reduce(s->first)) ||
        (s->kind == TE_S_FOR && has_reduce(s->body->first)))
      return 1;
  return 0;
}

static te_expr *rename_load(te_kernel_ir *k, te_expr *e, void *ud) {
  (void)k;
  const int *from_to = ud;
  if (e->acc.buf == from_to[0]) e->acc.buf = from_to[1];
  return e;
}

static int same_layout(const te_buf *a, const te_buf *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d] || (a->sizes[d] != 1 && a->strides[d] != b->strides[d])) return 0;
  return 1;
}

static void store_in_output(te_kernel_ir *k) {
  /* one output only (a softmax written by hand): with several, a backward
   * kernel that sums a broadcast gradient got wrong values (fuzz seed
   * 800238, tests/data/fuzz/minimum_grad_ties.ir) */
  int outputs = 0;
  for (int b = 0; b < k->nbufs; b++) outputs += k->bufs[b].kind == TE_BUF_OUTPUT;
  if (outputs != 1) return;
  for (te_stmt *s = k->root->first; s; s = s->next) {
    int vars[TE_MAX_DIMS], nv;
    te_stmt *st = s->kind == TE_S_FOR ? pointwise_store(s, vars, &nv) : NULL;
    if (!st || st->acc.linear || k->bufs[st->acc.buf].kind != TE_BUF_TEMP) continue;
    int t = st->acc.buf, ok = count_stores(k->root->first, t) == 1;
    for (int b = 0; ok && b < k->nbufs; b++) ok = k->bufs[b].alias != t + 1;
    if (!ok) continue;
    /* the nest f after s that writes an output from t; a reduction reading t between them */
    int red = 0;
    for (te_stmt *f = s->next; f; f = f->next) {
      int fv[TE_MAX_DIMS], nf;
      te_stmt *fs = f->kind == TE_S_FOR ? pointwise_store(f, fv, &nf) : NULL;
      int o = fs ? fs->acc.buf : -1;
      if (!fs || !reads(k, f, t, NULL) || k->bufs[o].kind != TE_BUF_OUTPUT || k->bufs[o].alias) {
        if (reads(k, f, t, NULL)) {
          if (f->kind != TE_S_FOR || !has_reduce(f->body->first)) break; /* a pointwise reader: inline as usual */
          red = 1;
        }
        continue;
      }
      /* f reads t only where it writes o; o: t's layout, written only by f, read
       * nowhere from s to f, aliased by nothing; nothing after f reads t */
      int good = red && same_layout(&k->bufs[t], &k->bufs[o]) && count_stores(k->root->first, o) == 1 &&
                 !fs->acc.linear && !reads(k, f, t, &fs->acc);
      for (te_stmt *m = s; good && m != f->next; m = m->next) good = !reads(k, m, o, NULL);
      for (te_stmt *m = f->next; good && m; m = m->next) good = !reads(k, m, t, NULL);
      for (int b = 0; good && b < k->nbufs; b++) good = k->bufs[b].alias != o + 1;
      if (good) {
        int from_to[2] = {t, o};
        st->acc.buf = o;
        rewrite_stmt(k, s->next, rename_load, from_to);
        k->bufs[t].numel = 0;
      }
      break;
    }
  }
}

void te_inline(te_kernel_ir *k) {
  store_in_output(k);
  te_stmt **pp = &k->root->first;
  while (*pp) {
    te_stmt *s = *pp;
    int vars[TE_MAX_DIMS], nv;
    te_stmt *st = s->kind == TE_S_FOR || s->kind == TE_S_STORE ? pointwise_store(s, vars, &nv) : NULL;
    /* only a buffer written once: its loads all mean this value (a
     * softmax rewrites its output in place) */
    int ok = st && k->bufs[st->acc.buf].kind == TE_BUF_TEMP && count_stores(k->root->first, st->acc.buf) == 1;
    for (int b = 0; ok && b < k->nbufs; b++) ok = k->bufs[b].alias != st->acc.buf + 1; /* a view reads its memory */
    /* every var of the nest is a store index (the value uses no other) */
    for (int d = 0; ok && d < st->acc.nidx; d++) {
      te_expr *ix = st->acc.idx[d];
      ok = ix->kind == TE_E_VAR || ix->kind == TE_E_IMM;
    }
    if (!ok) {
      pp = &s->next;
      continue;
    }
    inl_ud u = {st->acc.buf, st};
    *pp = s->next; /* the nest goes; its consumers compute its value */
    rewrite_stmt(k, *pp, inline_load, &u);
    k->bufs[st->acc.buf].numel = 0; /* no longer stored */
  }
  (void)subst_leaf;
}

/* ---- unit loops and nested blocks ------------------------------------------------------------------------ */

static void drop_units_in(te_kernel_ir *k, te_stmt *block) {
  te_stmt **pp = &block->first;
  while (*pp) {
    te_stmt *s = *pp;
    if (s->kind == TE_S_BLOCK) {
      /* a nested block: its statements in its place (blocks only group) */
      te_stmt *first = s->first, *last = first;
      if (!first) {
        *pp = s->next;
        continue;
      }
      while (last->next) last = last->next;
      last->next = s->next;
      *pp = first;
      continue;
    }
    if (s->kind == TE_S_FOR) {
      drop_units_in(k, s->body);
      if (s->extent == 1) {
        te_expr *zero = te_imm_i(k, 0);
        if (!zero) return;
        subst_stmt(k, s->body->first, &s->var, &zero, 1);
        /* splice the body in place of the loop */
        te_stmt *first = s->body->first, *last = first;
        if (!first) {
          *pp = s->next;
          continue;
        }
        while (last->next) last = last->next;
        last->next = s->next;
        *pp = first;
        continue;
      }
    }
    pp = &s->next;
  }
}

void te_drop_unit_loops(te_kernel_ir *k) { drop_units_in(k, k->root); }

/* ---- rowblock ------------------------------------------------------------------------ */

/* position of var v in a tuple (the only position using it), -2: v at a
 * position but not alone there, -1: absent */
static int var_pos(const te_access *a, int v) {
  int pos = -1;
  for (int d = 0; d < a->nidx; d++) {
    const te_expr *e = a->idx[d];
    if (e->kind == TE_E_VAR && e->id == v) {
      if (pos >= 0) return -2;
      pos = d;
    } else if (e->kind != TE_E_VAR && e->kind != TE_E_IMM) {
      return -2;
    }
  }
  return pos;
}

typedef struct rb_ud {
  int buf, v, pos, ok;
} rb_ud;

static void check_loads(te_expr *e, rb_ud *u) {
  if (!e) return;
  if (e->kind == TE_E_LOAD) {
    if (e->acc.buf == u->buf && var_pos(&e->acc, u->v) != u->pos) u->ok = 0;
    for (int i = 0; i < e->acc.nidx; i++) check_loads(e->acc.idx[i], u);
    return;
  }
  for (int i = 0; i < e->nargs; i++) check_loads(e->a[i], u);
}

static void check_stmt_loads(te_stmt *s, rb_ud *u) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) check_stmt_loads(s->first, u);
    else if (s->kind == TE_S_FOR) check_stmt_loads(s->body, u);
    else check_loads(s->value, u);
  }
}

/* every store of s1 (outer var v1) to a buffer s2 (outer var v2) reads:
 * same position for v1 in the store and v2 in each load */
static int stores_ok(const te_kernel_ir *k, te_stmt *s, int v1, te_stmt *s2) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK && !stores_ok(k, s->first, v1, s2)) return 0;
    if (s->kind == TE_S_FOR && !stores_ok(k, s->body, v1, s2)) return 0;
    if (s->kind != TE_S_STORE) continue;
    int pos = var_pos(&s->acc, v1);
    for (int b = 0; b < k->nbufs; b++) /* a view of it, read anywhere in s2: its rows are not s1's */
      if (k->bufs[b].alias == s->acc.buf + 1) {
        rb_ud view = {b, -12345, -7, 1};
        check_stmt_loads(s2->body, &view);
        if (!view.ok) return 0;
      }
    rb_ud u = {s->acc.buf, s2->var, pos, 1};
    check_stmt_loads(s2->body, &u);
    if (!u.ok) return 0;
    if (pos < 0) {
      /* not indexed by the row: only fine if s2 does not read it */
      rb_ud any = {s->acc.buf, -12345, -7, 1};
      check_stmt_loads(s2->body, &any);
      if (!any.ok) return 0;
    }
  }
  return 1;
}

void te_rowblock(te_kernel_ir *k) {
  te_stmt *s = k->root->first;
  while (s && s->next) {
    te_stmt *t = s->next;
    if (s->kind == TE_S_FOR && t->kind == TE_S_FOR && s->extent == t->extent && stores_ok(k, s->body, s->var, t)) {
      te_expr *v1 = te_var(k, s->var);
      if (!v1) return;
      subst_stmt(k, t->body->first, &t->var, &v1, 1);
      te_stmt *last = s->body->first;
      if (!last) s->body->first = t->body->first;
      else {
        while (last->next) last = last->next;
        last->next = t->body->first;
      }
      s->next = t->next;
      continue;
    }
    s = t;
  }
}

/* ---- linearize ------------------------------------------------------------------------ */

/* mul * e added to the linear form; -1 when e is not affine in the vars
 * (index arithmetic: immediates, vars, sums, products with an immediate) */
static int lin_term(te_access *a, const te_expr *e, int64_t mul) {
  switch (e->kind) {
    case TE_E_IMM: a->offset += e->imm.i * mul; return 0;
    case TE_E_VAR: {
      if (mul == 0) return 0;
      int t = 0;
      while (t < a->nterms && a->var[t] != e->id) t++;
      if (t == a->nterms) {
        if (a->nterms >= TE_MAX_LIN) return -1;
        a->var[a->nterms] = e->id;
        a->coef[a->nterms++] = 0;
      }
      a->coef[t] += mul;
      return 0;
    }
    case TE_E_ADD: return lin_term(a, e->a[0], mul) || lin_term(a, e->a[1], mul) ? -1 : 0;
    case TE_E_MUL:
      if (e->a[0]->kind == TE_E_IMM) return lin_term(a, e->a[1], mul * e->a[0]->imm.i);
      if (e->a[1]->kind == TE_E_IMM) return lin_term(a, e->a[0], mul * e->a[1]->imm.i);
      return -1;
    default: return -1;
  }
}

static int linearize_acc(te_kernel_ir *k, te_access *a) {
  if (a->linear) return 0;
  const te_buf *b = &k->bufs[a->buf];
  a->offset = 0;
  a->nterms = 0;
  for (int d = 0; d < a->nidx; d++)
    if (lin_term(a, a->idx[d], b->strides[d])) return -1;
  /* a term whose coefficients cancelled */
  int w = 0;
  for (int t = 0; t < a->nterms; t++)
    if (a->coef[t]) {
      a->var[w] = a->var[t];
      a->coef[w++] = a->coef[t];
    }
  a->nterms = w;
  a->linear = 1;
  return 0;
}

/* (the "not linear" flag travels in ud: no thread-local state, which a
 * plugin unloaded at exit would leave behind in every thread) */
static te_expr *lin_load(te_kernel_ir *k, te_expr *e, void *ud) {
  if (linearize_acc(k, &e->acc)) *(int *)ud = 1;
  return e;
}

static void lin_stmt(te_kernel_ir *k, te_stmt *s, int *bad) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) lin_stmt(k, s->first, bad);
    else if (s->kind == TE_S_FOR) lin_stmt(k, s->body, bad);
    else if (s->kind == TE_S_STORE && linearize_acc(k, &s->acc)) *bad = 1;
  }
}

/* 1 when an index is not linear in the loop vars */
int te_linearize(te_kernel_ir *k) {
  int bad = 0;
  rewrite_stmt(k, k->root, lin_load, &bad);
  lin_stmt(k, k->root, &bad);
  return bad;
}

/* ---- flatten ---------------------------------------------------------------------------- */

static int64_t coef_of(const te_access *a, int v) {
  for (int t = 0; t < a->nterms; t++)
    if (a->var[t] == v) return a->coef[t];
  return 0;
}

typedef struct fl_ud {
  int vi, vj;
  int64_t B;
  int ok, apply;
} fl_ud;

static void fl_acc(te_access *a, fl_ud *u) {
  if (!a->linear) {
    u->ok = 0;
    return;
  }
  int64_t ci = coef_of(a, u->vi), cj = coef_of(a, u->vj);
  if (ci != u->B * cj) u->ok = 0;
  if (u->apply) {
    int w = 0;
    for (int t = 0; t < a->nterms; t++)
      if (a->var[t] != u->vi) {
        a->var[w] = a->var[t];
        a->coef[w++] = a->coef[t];
      }
    a->nterms = w;
  }
}

static void fl_expr(te_expr *e, fl_ud *u) {
  if (!e) return;
  if (e->kind == TE_E_VAR && (e->id == u->vi || e->id == u->vj)) u->ok = 0; /* a var used as a value */
  if (e->kind == TE_E_LOAD) fl_acc(&e->acc, u);
  for (int i = 0; i < e->nargs; i++) fl_expr(e->a[i], u);
}

static void fl_stmt(te_stmt *s, fl_ud *u) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) fl_stmt(s->first, u);
    else if (s->kind == TE_S_FOR) fl_stmt(s->body, u);
    else {
      if (s->kind == TE_S_STORE) fl_acc(&s->acc, u);
      fl_expr(s->value, u);
    }
  }
}

static void flatten_in(te_stmt *block) {
  for (te_stmt *s = block->first; s; s = s->next) {
    if (s->kind != TE_S_FOR) continue;
    flatten_in(s->body);
    for (;;) {
      te_stmt *in = s->body->first;
      if (!in || in->next || in->kind != TE_S_FOR) break;
      fl_ud u = {s->var, in->var, in->extent, 1, 0};
      fl_stmt(in->body, &u);
      if (!u.ok) break;
      u.apply = 1;
      fl_stmt(in->body, &u);
      s->var = in->var;
      s->extent *= in->extent;
      s->body = in->body;
    }
  }
}

void te_flatten(te_kernel_ir *k) { flatten_in(k->root); }

/* ---- registers ---------------------------------------------------------------------------
 *
 * After rowblock, a row statistic is stored and read back in the same row
 * iteration (softmax's max and sum). `Store t[i] = v` followed, in the same
 * block, by loads of t at the same linear index becomes `Let l = v`, the
 * loads read l, and the store goes when nothing else reads t: the
 * statistic lives in a register and the loops after it vectorize (a load
 * from a just-written buffer keeps GCC from it). */

static int same_access(const te_access *a, const te_access *b) {
  if (a->buf != b->buf || !a->linear || !b->linear || a->offset != b->offset || a->nterms != b->nterms) return 0;
  for (int t = 0; t < a->nterms; t++)
    if (coef_of(b, a->var[t]) != a->coef[t]) return 0;
  return 1;
}

typedef struct reg_ud {
  const te_access *acc;
  int local, dtype;
  int other_reads; /* loads of the buffer at another index */
} reg_ud;

static te_expr *reg_load(te_kernel_ir *k, te_expr *e, void *ud) {
  reg_ud *u = ud;
  if (e->acc.buf != u->acc->buf) return e;
  if (!same_access(&e->acc, u->acc)) {
    u->other_reads++;
    return e;
  }
  te_expr *l = te_local(k, u->local, u->dtype);
  return l ? l : e;
}

static te_expr *count_load(te_kernel_ir *k, te_expr *e, void *ud) {
  reg_ud *u = ud;
  if (e->acc.buf == u->acc->buf || k->bufs[e->acc.buf].alias == u->acc->buf + 1) u->other_reads++;
  return e;
}

static void registers_in(te_kernel_ir *k, te_stmt *block) {
  for (te_stmt **pp = &block->first; *pp; pp = &(*pp)->next) {
    te_stmt *s = *pp;
    if (s->kind == TE_S_FOR) {
      registers_in(k, s->body);
      continue;
    }
    if (s->kind != TE_S_STORE || k->bufs[s->acc.buf].kind != TE_BUF_TEMP || !s->acc.linear || !s->next) continue;
    int dt = k->bufs[s->acc.buf].dtype;
    int local = te_new_local(k, dt);
    if (local < 0) return;
    reg_ud u = {&s->acc, local, dt, 0};
    for (te_stmt *t = s->next; t; t = t->next) {
      te_stmt *save = t->next;
      t->next = NULL; /* this statement only */
      rewrite_stmt(k, t, reg_load, &u);
      t->next = save;
    }
    /* Let l = value; Store t[i] = l */
    te_stmt *let = te_let(k, local, s->value);
    te_expr *lv = te_local(k, local, dt);
    if (!let || !lv) return;
    s->value = lv;
    let->next = s;
    *pp = let;
    pp = &let->next;
    /* the store goes when nothing else reads the buffer */
    reg_ud any = {&s->acc, -1, dt, 0};
    rewrite_stmt(k, k->root, count_load, &any);
    if (!any.other_reads) {
      s->kind = TE_S_BLOCK; /* an empty block */
      s->first = NULL;
      k->bufs[s->acc.buf].numel = 0;
    }
  }
}

void te_registers(te_kernel_ir *k) { registers_in(k, k->root); }

/* ---- parallel, vectorize ------------------------------------------------------------------ */

static int64_t work(const te_stmt *s) {
  int64_t w = 0;
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) w += work(s->first);
    else if (s->kind == TE_S_FOR) w += s->extent * work(s->body);
    else if (s->kind == TE_S_REDUCE) {
      int64_t n = 1;
      for (int i = 0; i < s->nloops; i++) n *= s->rextent[i];
      w += n;
    } else {
      w += 1;
    }
  }
  return w;
}

void te_parallelize(te_kernel_ir *k, int64_t par_min) {
  for (te_stmt *s = k->root->first; s; s = s->next)
    if (s->kind == TE_S_FOR && s->extent > 1 && s->extent * work(s->body->first) >= par_min) s->parallel = 1;
}

static int has_loop(const te_stmt *s) {
  for (; s; s = s->next)
    if (s->kind == TE_S_FOR || s->kind == TE_S_REDUCE || (s->kind == TE_S_BLOCK && has_loop(s->first))) return 1;
  return 0;
}

static void vec_in(te_stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_BLOCK) vec_in(s->first);
    else if (s->kind == TE_S_FOR) {
      if (!has_loop(s->body->first)) s->vectorize = 1;
      else vec_in(s->body);
    } else if (s->kind == TE_S_REDUCE &&
               (s->combiner == FBXK_OP_ADD_T || (fbxk_is_float(s->dtype) && (s->combiner == FBXK_OP_MAX_OTHER ||
                                                                              s->combiner == FBXK_OP_MIN_OTHER)))) {
      /* a product is not vectorized (the C backend knows +, max and min reductions) */
      s->vectorize = 1;
    }
  }
}

void te_vectorize(te_kernel_ir *k) { vec_in(k->root); }

fbxp_status *te_schedule(te_kernel_ir *k, unsigned on, int64_t par_min) {
  if (on & TE_T_INLINE) te_inline(k);
  te_drop_unit_loops(k);
  if (on & TE_T_ROWBLOCK) te_rowblock(k);
  if (te_linearize(k)) return te_host->status_new(FBXP_ERR_INTERNAL, "tensorexpr: an index is not linear in the loop vars");
  if (on & TE_T_REGISTERS) te_registers(k);
  if (on & TE_T_FLATTEN) te_flatten(k);
  if (on & TE_T_PARALLEL) te_parallelize(k, par_min);
  if (on & TE_T_VECTORIZE) te_vectorize(k);
  char msg[160];
  if (te_ir_verify(k, msg, sizeof msg)) {
    char full[220];
    snprintf(full, sizeof full, "tensorexpr: the scheduled IR is invalid: %s", msg);
    return te_host->status_new(FBXP_ERR_INTERNAL, full);
  }
  return NULL;
}
