/* The loop-nest IR as text (explain --source, tests):
 *
 *   buf in0 float32 [4, 8] strides [8, 1] (input 0)
 *   for v0 in 0..4 parallel {
 *     reduce l0 float64 = 0 ADD_T over v1 in 0..8 of cast<float64>(in0[v0, v1])
 *     out0[v0, 0] = cast<float32>(l0)
 *   }
 * Tuple accesses print as buf[i, j]; linear ones as buf[off + c*v ...]. */
#include <inttypes.h>
#include <string.h>

#include "te.h"

static void scalar(fbxk_buf *b, int dt, fbxk_scalar v) {
  if (fbxk_is_float(dt)) fbxk_printf(b, "%.9g", v.f);
  else fbxk_printf(b, "%" PRId64, v.i);
}

static void expr(fbxk_buf *b, const te_kernel_ir *k, const te_expr *e);

static void access(fbxk_buf *b, const te_kernel_ir *k, const te_access *a) {
  fbxk_printf(b, "%s[", k->bufs[a->buf].name ? k->bufs[a->buf].name : "?");
  if (!a->linear) {
    for (int i = 0; i < a->nidx; i++) {
      if (i) fbxk_puts(b, ", ");
      expr(b, k, a->idx[i]);
    }
  } else {
    int any = 0;
    if (a->offset || !a->nterms) {
      fbxk_printf(b, "%" PRId64, a->offset);
      any = 1;
    }
    for (int t = 0; t < a->nterms; t++) {
      fbxk_puts(b, any ? " + " : "");
      if (a->coef[t] != 1) fbxk_printf(b, "%" PRId64 "*", a->coef[t]);
      fbxk_printf(b, "v%d", a->var[t]);
      any = 1;
    }
  }
  fbxk_puts(b, "]");
}

static void expr(fbxk_buf *b, const te_kernel_ir *k, const te_expr *e) {
  if (!e) {
    fbxk_puts(b, "<null>");
    return;
  }
  switch (e->kind) {
    case TE_E_IMM: scalar(b, e->dtype, e->imm); break;
    case TE_E_VAR: fbxk_printf(b, "v%d", e->id); break;
    case TE_E_LOCAL: fbxk_printf(b, "l%d", e->id); break;
    case TE_E_SCALAR: fbxk_printf(b, "arg%d", e->id); break;
    case TE_E_LOAD: access(b, k, &e->acc); break;
    case TE_E_CAST:
      fbxk_printf(b, "cast<%s>(", fbxk_dtype_name(e->dtype));
      expr(b, k, e->a[0]);
      fbxk_puts(b, ")");
      break;
    case TE_E_OP:
      fbxk_printf(b, "%s<%s>(", fbxk_op_id(e->op), fbxk_dtype_name(e->cdtype));
      for (int i = 0; i < e->nargs; i++) {
        if (i) fbxk_puts(b, ", ");
        expr(b, k, e->a[i]);
      }
      fbxk_puts(b, ")");
      break;
    case TE_E_ADD: case TE_E_MUL:
      fbxk_puts(b, "(");
      expr(b, k, e->a[0]);
      fbxk_puts(b, e->kind == TE_E_ADD ? " + " : " * ");
      expr(b, k, e->a[1]);
      fbxk_puts(b, ")");
      break;
  }
}

static void indent(fbxk_buf *b, int n) {
  for (int i = 0; i < n; i++) fbxk_puts(b, "  ");
}

static void stmts(fbxk_buf *b, const te_kernel_ir *k, const te_stmt *s, int ind) {
  for (; s; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: stmts(b, k, s->first, ind); break;
      case TE_S_FOR:
        indent(b, ind);
        fbxk_printf(b, "for v%d in 0..%" PRId64 "%s%s {\n", s->var, s->extent, s->parallel ? " parallel" : "",
                    s->vectorize ? " vectorize" : "");
        stmts(b, k, s->body->first, ind + 1);
        indent(b, ind);
        fbxk_puts(b, "}\n");
        break;
      case TE_S_STORE:
        indent(b, ind);
        access(b, k, &s->acc);
        fbxk_puts(b, " = ");
        expr(b, k, s->value);
        fbxk_puts(b, "\n");
        break;
      case TE_S_LET:
        indent(b, ind);
        fbxk_printf(b, "let l%d %s = ", s->local, fbxk_dtype_name(s->dtype));
        expr(b, k, s->value);
        fbxk_puts(b, "\n");
        break;
      case TE_S_REDUCE:
        indent(b, ind);
        fbxk_printf(b, "reduce l%d %s = ", s->local, fbxk_dtype_name(s->dtype));
        scalar(b, s->dtype, s->init);
        fbxk_printf(b, " %s%s over", fbxk_op_id(s->combiner), s->vectorize ? " vectorize" : "");
        for (int i = 0; i < s->nloops; i++) fbxk_printf(b, "%s v%d in 0..%" PRId64, i ? "," : "", s->rvar[i], s->rextent[i]);
        fbxk_puts(b, " of ");
        expr(b, k, s->value);
        fbxk_puts(b, "\n");
        break;
    }
  }
}

char *te_ir_print(const te_kernel_ir *k) {
  fbxk_buf b = {0};
  static const char *kinds[] = {"input", "output", "temp"};
  for (int i = 0; i < k->nbufs; i++) {
    const te_buf *bf = &k->bufs[i];
    if (bf->kind == TE_BUF_TEMP && !bf->numel && !bf->alias) continue; /* inlined */
    fbxk_printf(&b, "buf %s %s [", bf->name ? bf->name : "?", fbxk_dtype_name(bf->dtype));
    for (int d = 0; d < bf->ndim; d++) fbxk_printf(&b, "%s%" PRId64, d ? ", " : "", bf->sizes[d]);
    fbxk_puts(&b, "] strides [");
    for (int d = 0; d < bf->ndim; d++) fbxk_printf(&b, "%s%" PRId64, d ? ", " : "", bf->strides[d]);
    if (bf->alias) fbxk_printf(&b, "] (a view of %s)\n", k->bufs[bf->alias - 1].name ? k->bufs[bf->alias - 1].name : "?");
    else fbxk_printf(&b, "] (%s %d)\n", kinds[bf->kind], bf->slot);
  }
  stmts(&b, k, k->root ? k->root->first : NULL, 0);
  if (!b.data && !b.oom) fbxk_puts(&b, "");
  return fbxk_take(&b);
}
