/* The IR interpreter (NNC's SimpleIREval): runs the scheduled IR directly,
 * op by op through fbxk_op_eval, the scalar functions the kit generates
 * from the same templates the C backend prints, so the two backends compute
 * the same values. Used to test lowering and schedules without a compiler,
 * and as the fallback when no C compiler works. Serial: `parallel` marks
 * are ignored. */
#include <string.h>

#include "te.h"

typedef struct ev {
  const te_kernel_ir *k;
  char *const *bufs;
  const double *fs;
  const int64_t *is;
  int64_t *vars;
  fbxk_scalar *locals;
} ev;

/* A size: the literal, or (dynamic shapes) size expression sx's value,
 * is[ninputs + sx - 1] */
static int64_t sz(const ev *c, int64_t v, int sx) { return sx ? c->is[c->k->ninputs + sx - 1] : v; }

static int64_t offset(const ev *c, const te_access *a) {
  int64_t o = sz(c, a->offset, a->offset_sx);
  for (int t = 0; t < a->nterms; t++) o += sz(c, a->coef[t], a->coef_sx[t]) * c->vars[a->var[t]];
  return o;
}

static fbxk_scalar load(int dt, const char *p) {
  fbxk_scalar r = {0, 0};
  switch (dt) {
    case FBXK_F32: { float f; memcpy(&f, p, 4); r.f = f; break; }
    case FBXK_F64: memcpy(&r.f, p, 8); break;
    case FBXK_F16: { uint16_t h; memcpy(&h, p, 2); r.f = fbxk_h2f(h); break; }
    case FBXK_BF16: { uint16_t h; memcpy(&h, p, 2); r.f = fbxk_b2f(h); break; }
    case FBXK_I64: memcpy(&r.i, p, 8); break;
    case FBXK_I32: { int32_t x; memcpy(&x, p, 4); r.i = x; break; }
    case FBXK_I16: { int16_t x; memcpy(&x, p, 2); r.i = x; break; }
    case FBXK_I8: r.i = (int8_t)*p; break;
    case FBXK_U8: r.i = (uint8_t)*p; break;
    case FBXK_BOOL: r.i = *p != 0; break;
    default: break;
  }
  return r;
}

static void store(int dt, char *p, fbxk_scalar v) {
  switch (dt) {
    case FBXK_F32: { float f = (float)v.f; memcpy(p, &f, 4); break; }
    case FBXK_F64: memcpy(p, &v.f, 8); break;
    case FBXK_F16: { uint16_t h = fbxk_f2h((float)v.f); memcpy(p, &h, 2); break; }
    case FBXK_BF16: { uint16_t h = fbxk_f2b((float)v.f); memcpy(p, &h, 2); break; }
    case FBXK_I64: memcpy(p, &v.i, 8); break;
    case FBXK_I32: { int32_t x = (int32_t)v.i; memcpy(p, &x, 4); break; }
    case FBXK_I16: { int16_t x = (int16_t)v.i; memcpy(p, &x, 2); break; }
    case FBXK_I8: *p = (char)(int8_t)v.i; break;
    case FBXK_U8: *p = (char)(uint8_t)v.i; break;
    case FBXK_BOOL: *p = v.i != 0; break;
    default: break;
  }
}

static char *addr(const ev *c, const te_access *a) {
  int dt = c->k->bufs[a->buf].dtype;
  int base = c->k->bufs[a->buf].alias ? c->k->bufs[a->buf].alias - 1 : a->buf; /* a view reads its base */
  return c->bufs[base] + offset(c, a) * fbxk_dtype_size(dt);
}

static fbxk_scalar eval(const ev *c, const te_expr *e) {
  fbxk_scalar r = {0, 0};
  switch (e->kind) {
    case TE_E_IMM:
      if (e->imm_sx) {
        r.i = sz(c, 0, e->imm_sx);
        r.f = (double)r.i;
        return r;
      }
      return e->imm;
    case TE_E_VAR: r.i = c->vars[e->id]; return r;
    case TE_E_LOCAL: return c->locals[e->id];
    case TE_E_SCALAR:
      if (fbxk_is_float(e->dtype)) r.f = c->fs[e->id];
      else r.i = c->is[e->id];
      return r;
    case TE_E_LOAD: return load(e->dtype, addr(c, &e->acc));
    case TE_E_CAST: return fbxk_scalar_cast(e->a[0]->dtype, e->dtype, eval(c, e->a[0]));
    case TE_E_OP: {
      fbxk_scalar a[FBXK_MAX_OP_ARGS];
      for (int i = 0; i < e->nargs; i++) a[i] = eval(c, e->a[i]);
      fbxk_op_eval(e->op, e->cdtype, e->dtype, a, &r);
      return r;
    }
    case TE_E_ADD: r.i = eval(c, e->a[0]).i + eval(c, e->a[1]).i; return r;
    case TE_E_MUL: r.i = eval(c, e->a[0]).i * eval(c, e->a[1]).i; return r;
  }
  return r;
}

static void reduce_loops(const ev *c, const te_stmt *s, int level) {
  if (level == s->nloops) {
    fbxk_scalar a[2] = {c->locals[s->local], eval(c, s->value)};
    fbxk_op_eval(s->combiner, s->dtype, s->dtype, a, &c->locals[s->local]);
    return;
  }
  for (int64_t i = 0, n = sz(c, s->rextent[level], s->rextent_sx[level]); i < n; i++) {
    c->vars[s->rvar[level]] = i;
    reduce_loops(c, s, level + 1);
  }
}

static void run(const ev *c, const te_stmt *s) {
  for (; s; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: run(c, s->first); break;
      case TE_S_FOR:
        for (int64_t i = 0, n = sz(c, s->extent, s->extent_sx); i < n; i++) {
          c->vars[s->var] = i;
          run(c, s->body->first);
        }
        break;
      case TE_S_STORE: store(c->k->bufs[s->acc.buf].dtype, addr(c, &s->acc), eval(c, s->value)); break;
      case TE_S_LET: c->locals[s->local] = eval(c, s->value); break;
      case TE_S_REDUCE:
        c->locals[s->local] = s->init;
        reduce_loops(c, s, 0);
        break;
    }
  }
}

int te_eval(const te_kernel_ir *k, char *const *bufs, const double *fs, const int64_t *is) {
  int64_t vars_small[256];
  fbxk_scalar locals_small[256];
  int64_t *vars = k->nvars <= 256 ? vars_small : te_host->alloc(sizeof(int64_t) * (size_t)k->nvars);
  fbxk_scalar *locals = k->nlocals <= 256 ? locals_small : te_host->alloc(sizeof(fbxk_scalar) * (size_t)k->nlocals);
  int ok = vars && locals;
  if (ok) {
    ev c = {k, bufs, fs, is, vars, locals};
    run(&c, k->root->first);
  }
  if (vars != vars_small) te_host->free(vars);
  if (locals != locals_small) te_host->free(locals);
  return ok ? 0 : -1;
}
