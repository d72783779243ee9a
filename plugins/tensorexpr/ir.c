/* The loop-nest IR: an arena and the node constructors. */
#include <string.h>

#include "te.h"

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  max_align_t data[];
} chunk;

struct te_arena {
  chunk *head;
  int oom;
};

te_arena *te_arena_create(void) {
  te_arena *a = te_host->alloc(sizeof *a);
  if (a) memset(a, 0, sizeof *a);
  return a;
}

void te_arena_destroy(te_arena *a) {
  if (!a) return;
  for (chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    te_host->free(c);
  }
  te_host->free(a);
}

void *te_arena_alloc(te_arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  if (!a->head || a->head->used + n > a->head->cap) {
    size_t cap = n > 65536 ? n : 65536;
    chunk *c = te_host->alloc(sizeof *c + cap);
    if (!c) {
      a->oom = 1;
      return NULL;
    }
    c->next = a->head;
    c->used = 0;
    c->cap = cap;
    a->head = c;
  }
  void *p = (char *)a->head->data + a->head->used;
  a->head->used += n;
  memset(p, 0, n);
  return p;
}

static te_expr *node(te_kernel_ir *k, te_ekind kind, int dtype) {
  te_expr *e = te_arena_alloc(k->arena, sizeof *e);
  if (e) {
    e->kind = kind;
    e->dtype = dtype;
  }
  return e;
}

te_expr *te_imm(te_kernel_ir *k, int dtype, fbxk_scalar v) {
  te_expr *e = node(k, TE_E_IMM, dtype);
  if (e) e->imm = v;
  return e;
}

te_expr *te_imm_i(te_kernel_ir *k, int64_t v) { return te_imm(k, FBXK_I64, (fbxk_scalar){0, v}); }

te_expr *te_var(te_kernel_ir *k, int id) {
  te_expr *e = node(k, TE_E_VAR, FBXK_I64);
  if (e) e->id = id;
  return e;
}

te_expr *te_local(te_kernel_ir *k, int id, int dtype) {
  te_expr *e = node(k, TE_E_LOCAL, dtype);
  if (e) e->id = id;
  return e;
}

te_expr *te_scalar_arg(te_kernel_ir *k, int slot, int dtype) {
  te_expr *e = node(k, TE_E_SCALAR, dtype);
  if (e) e->id = slot;
  return e;
}

te_expr *te_load(te_kernel_ir *k, int buf, int nidx, te_expr *const *idx) {
  te_expr *e = node(k, TE_E_LOAD, k->bufs[buf].dtype);
  if (!e) return NULL;
  e->acc.buf = buf;
  e->acc.nidx = nidx;
  for (int i = 0; i < nidx; i++) {
    if (!idx[i]) return NULL;
    e->acc.idx[i] = idx[i];
  }
  return e;
}

te_expr *te_cast(te_kernel_ir *k, te_expr *x, int dtype) {
  if (!x) return NULL;
  if (x->dtype == dtype) return x;
  te_expr *e = node(k, TE_E_CAST, dtype);
  if (e) {
    e->nargs = 1;
    e->a[0] = x;
  }
  return e;
}

te_expr *te_op(te_kernel_ir *k, int op, int cdtype, int rdtype, int nargs, te_expr *const *args) {
  te_expr *e = node(k, TE_E_OP, rdtype);
  if (!e) return NULL;
  e->op = op;
  e->cdtype = cdtype;
  e->nargs = nargs;
  for (int i = 0; i < nargs; i++) {
    if (!args[i]) return NULL;
    e->a[i] = args[i];
  }
  return e;
}

te_expr *te_idx(te_kernel_ir *k, te_ekind kind, te_expr *x, te_expr *y) {
  if (!x || !y) return NULL;
  te_expr *e = node(k, kind, FBXK_I64);
  if (e) {
    e->nargs = 2;
    e->a[0] = x;
    e->a[1] = y;
  }
  return e;
}

te_stmt *te_block(te_kernel_ir *k) {
  te_stmt *s = te_arena_alloc(k->arena, sizeof *s);
  if (s) s->kind = TE_S_BLOCK;
  return s;
}

void te_append(te_stmt *block, te_stmt *s) {
  if (!block || !s) return;
  te_stmt **p = &block->first;
  while (*p) p = &(*p)->next;
  *p = s;
}

te_stmt *te_for(te_kernel_ir *k, int var, int64_t extent, te_stmt *body) {
  if (!body) return NULL;
  te_stmt *s = te_arena_alloc(k->arena, sizeof *s);
  if (!s) return NULL;
  s->kind = TE_S_FOR;
  s->var = var;
  s->extent = extent;
  s->body = body;
  return s;
}

te_stmt *te_store(te_kernel_ir *k, int buf, int nidx, te_expr *const *idx, te_expr *value) {
  if (!value) return NULL;
  te_stmt *s = te_arena_alloc(k->arena, sizeof *s);
  if (!s) return NULL;
  s->kind = TE_S_STORE;
  s->acc.buf = buf;
  s->acc.nidx = nidx;
  for (int i = 0; i < nidx; i++) {
    if (!idx[i]) return NULL;
    s->acc.idx[i] = idx[i];
  }
  s->value = value;
  return s;
}

te_stmt *te_let(te_kernel_ir *k, int local, te_expr *value) {
  if (!value) return NULL;
  te_stmt *s = te_arena_alloc(k->arena, sizeof *s);
  if (!s) return NULL;
  s->kind = TE_S_LET;
  s->local = local;
  s->dtype = k->local_dtype[local];
  s->value = value;
  return s;
}

int te_new_var(te_kernel_ir *k) { return k->nvars++; }

int te_new_local(te_kernel_ir *k, int dtype) {
  if (k->nlocals >= (int)(sizeof k->local_dtype / sizeof k->local_dtype[0])) return -1;
  k->local_dtype[k->nlocals] = dtype;
  return k->nlocals++;
}

te_expr *te_expr_copy(te_kernel_ir *k, const te_expr *e) {
  te_expr *c = te_arena_alloc(k->arena, sizeof *c);
  if (c) *c = *e;
  return c;
}

te_expr *te_subst(te_kernel_ir *k, te_expr *e, const int *vars, te_expr *const *by, int n) {
  if (!e) return NULL;
  switch (e->kind) {
    case TE_E_VAR:
      for (int i = 0; i < n; i++)
        if (vars[i] == e->id) return by[i];
      return e;
    case TE_E_IMM: case TE_E_LOCAL: case TE_E_SCALAR: return e;
    case TE_E_LOAD: {
      te_expr *c = te_expr_copy(k, e);
      if (!c) return NULL;
      for (int i = 0; i < e->acc.nidx; i++)
        if (!(c->acc.idx[i] = te_subst(k, e->acc.idx[i], vars, by, n))) return NULL;
      return c;
    }
    default: {
      te_expr *c = te_expr_copy(k, e);
      if (!c) return NULL;
      for (int i = 0; i < e->nargs; i++)
        if (!(c->a[i] = te_subst(k, e->a[i], vars, by, n))) return NULL;
      return c;
    }
  }
}
