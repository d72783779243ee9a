/* The C backend: the scheduled IR printed as one C function through the
 * kit (its prelude, op templates, casts, loads and stores), compiled by
 * host->cc_compile.
 *
 *   void NAME(char *const *bufs, const double *fs, const int64_t *is, int nt)
 *
 * bufs: every buffer's base in buffer order (inputs, outputs, temporaries
 * allocated by run); fs/is: scalar inputs by kernel input index; nt: the
 * OpenMP team size of parallel loops. Loops marked parallel get
 * `#pragma omp parallel for`, vectorized ones `#pragma omp simd` (a sum
 * Reduce: `simd reduction(+:local)`). Sizes and strides are literals: the
 * kernel is specialized on its input specs. Each op's value is a named
 * constant (e0, e1, ...) printed before the statement that uses it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "te.h"

typedef struct cg {
  const te_kernel_ir *k;
  fbxk_printer p;
  int oom;
  int ntemps; /* e0, e1, ...: one per op of the statement being printed */
} cg;

static void expr(cg *c, fbxk_buf *b, const te_expr *e);

static char *expr_str(cg *c, const te_expr *e) {
  fbxk_buf b = {0};
  expr(c, &b, e);
  if (!b.data && !b.oom) fbxk_puts(&b, "");
  char *s = fbxk_take(&b);
  if (!s) c->oom = 1;
  return s;
}

/* A size: its literal, or (dynamic shapes) size expression sx's kernel argument. */
static const char *size_text(char *out, size_t cap, const te_kernel_ir *k, int64_t v, int sx) {
  if (sx) snprintf(out, cap, "is[%d]", k->ninputs + sx - 1);
  else snprintf(out, cap, "%" PRId64, v);
  return out;
}

static void access(fbxk_buf *b, const te_kernel_ir *k, const te_access *a) {
  char t1[32];
  fbxk_printf(b, "b%d[", a->buf);
  int any = 0;
  if (a->offset || a->offset_sx || !a->nterms) {
    fbxk_printf(b, "%s", size_text(t1, sizeof t1, k, a->offset, a->offset_sx));
    any = 1;
  }
  for (int t = 0; t < a->nterms; t++) {
    if (any) fbxk_puts(b, " + ");
    if (a->coef[t] != 1 || a->coef_sx[t]) fbxk_printf(b, "%s * ", size_text(t1, sizeof t1, k, a->coef[t], a->coef_sx[t]));
    fbxk_printf(b, "v%d", a->var[t]);
    any = 1;
  }
  fbxk_puts(b, "]");
}

static void expr(cg *c, fbxk_buf *b, const te_expr *e) {
  switch (e->kind) {
    case TE_E_IMM:
      if (e->imm_sx) fbxk_printf(b, "((%s)is[%d])", fbxk_compute_type(e->dtype, FBXK_C), c->k->ninputs + e->imm_sx - 1);
      else if (fbxk_is_float(e->dtype)) fbxk_print_float(b, e->imm.f, e->dtype, FBXK_C);
      else fbxk_print_int(b, e->imm.i);
      break;
    case TE_E_VAR: fbxk_printf(b, "v%d", e->id); break;
    case TE_E_LOCAL: fbxk_printf(b, "l%d", e->id); break;
    case TE_E_SCALAR: fbxk_printf(b, fbxk_is_float(e->dtype) ? "fs[%d]" : "is[%d]", e->id); break;
    case TE_E_LOAD: {
      fbxk_buf a = {0};
      access(&a, c->k, &e->acc);
      char *s = fbxk_take(&a);
      if (!s) {
        c->oom = 1;
        return;
      }
      fbxk_print_load(b, e->dtype, s, FBXK_C);
      fbxk_free(s);
      break;
    }
    case TE_E_CAST: {
      char *s = expr_str(c, e->a[0]);
      if (!s) return;
      fbxk_print_cast(b, e->dtype, s, FBXK_C);
      fbxk_free(s);
      break;
    }
    case TE_E_OP: {
      char *args[FBXK_MAX_OP_ARGS] = {0};
      for (int i = 0; i < e->nargs; i++) args[i] = expr_str(c, e->a[i]);
      fbxk_buf raw = {0};
      if (!c->oom) fbxk_op_print_facts(&raw, e->op, e->cdtype, 1, FBXK_C, (const char *const *)args, e->facts);
      for (int i = 0; i < e->nargs; i++) fbxk_free(args[i]);
      char *r = fbxk_take(&raw);
      if (!r) {
        c->oom = 1;
        return;
      }
      /* as fbxk_op_eval: the raw value rounded to the compute dtype (or a
       * truth value), then converted to the result dtype */
      int rawdt = fbxk_op_is_bool_valued(e->op) ? FBXK_BOOL : e->cdtype;
      fbxk_buf once = {0};
      fbxk_print_cast(&once, rawdt, r, FBXK_C);
      fbxk_free(r);
      char *o = fbxk_take(&once);
      if (!o) {
        c->oom = 1;
        return;
      }
      /* one named value per op: the text stays linear in the IR's size
       * (templates repeat their arguments: a NaN-propagating max names
       * each one three times) */
      fbxk_buf full = {0};
      if (rawdt == e->dtype) fbxk_puts(&full, o);
      else fbxk_print_cast(&full, e->dtype, o, FBXK_C);
      fbxk_free(o);
      char *f = fbxk_take(&full);
      if (!f) {
        c->oom = 1;
        return;
      }
      int t = c->ntemps++;
      fbxk_p_line(&c->p, "const %s e%d = %s;", fbxk_compute_type(e->dtype, FBXK_C), t, f);
      fbxk_free(f);
      fbxk_printf(b, "e%d", t);
      break;
    }
    case TE_E_ADD: case TE_E_MUL: {
      fbxk_puts(b, "(");
      expr(c, b, e->a[0]);
      fbxk_puts(b, e->kind == TE_E_ADD ? " + " : " * ");
      expr(c, b, e->a[1]);
      fbxk_puts(b, ")");
      break;
    }
  }
}

/* A vectorized float sum: SUM_LANES partial sums (independent add chains,
 * so the loop runs at the adds' throughput, not their latency), summed
 * pairwise at the end of each block of SUM_BLOCK elements of the inner
 * loop; the block sums are added in float64 and the total rounded once to
 * the accumulator's dtype. A float32 row of 1024 elements is one block:
 * 32 lanes of 32 terms each, then a pairwise tree. */
#define SUM_LANES 32
#define SUM_BLOCK 4096

static void sum_lanes(cg *c, const te_stmt *s) {
  fbxk_printer *p = &c->p;
  const char *t = fbxk_compute_type(s->dtype, FBXK_C);
  int l = s->local, w = s->dtype == FBXK_F64 ? SUM_LANES / 2 : SUM_LANES, n = s->nloops;
  int64_t e = s->rextent[n - 1];
  int esx = s->rextent_sx[n - 1]; /* dynamic shapes: the extent is a kernel argument, its value unknown here */
  char v[32], ext[32], lane[48], total[48], et[32];
  size_text(et, sizeof et, c->k, e, esx);
  fbxk_p_open(p, "%s", "");
  fbxk_p_line(p, "double l%d_t = 0;", l);
  for (int i = 0; i < n - 1; i++) {
    snprintf(v, sizeof v, "v%d", s->rvar[i]);
    size_text(ext, sizeof ext, c->k, s->rextent[i], s->rextent_sx[i]);
    fbxk_p_for(p, NULL, v, "0", ext, "1");
  }
  /* one block (a loop of them when the inner extent is longer, or unknown) */
  if (esx || e > SUM_BLOCK) {
    fbxk_p_open(p, "for (int64_t l%d_b = 0; l%d_b < %s; l%d_b += %d)", l, l, et, l, SUM_BLOCK);
    fbxk_p_line(p, "const int64_t l%d_n = %s - l%d_b < %d ? %s - l%d_b : %d;", l, et, l, SUM_BLOCK, et, l, SUM_BLOCK);
  } else {
    fbxk_p_open(p, "%s", "");
    fbxk_p_line(p, "const int64_t l%d_b = 0, l%d_n = %" PRId64 ";", l, l, e);
  }
  fbxk_p_line(p, "%s l%d_v[%d] = {0};", t, l, w);
  fbxk_p_line(p, "int64_t l%d_j = 0;", l);
  /* blocks are multiples of w but the last: a tail when w does not divide e */
  for (int tail = 0; tail < (esx || e % w ? 2 : 1) && !c->oom; tail++) {
    if (!tail) {
      fbxk_p_open(p, "for (; l%d_j + %d <= l%d_n; l%d_j += %d)", l, w, l, l, w);
      fbxk_p_line(p, "#pragma omp simd");
      fbxk_p_open(p, "for (int64_t l%d_k = 0; l%d_k < %d; l%d_k++)", l, l, w, l);
      fbxk_p_line(p, "const int64_t v%d = l%d_b + l%d_j + l%d_k;", s->rvar[n - 1], l, l, l);
      snprintf(lane, sizeof lane, "l%d_v[l%d_k]", l, l);
    } else {
      /* the rest of the block goes into lane 0 */
      fbxk_p_open(p, "for (; l%d_j < l%d_n; l%d_j++)", l, l, l);
      fbxk_p_line(p, "const int64_t v%d = l%d_b + l%d_j;", s->rvar[n - 1], l, l);
      snprintf(lane, sizeof lane, "l%d_v[0]", l);
    }
    char *val = expr_str(c, s->value);
    if (!val) return;
    const char *args[2] = {lane, val};
    fbxk_buf comb = {0};
    fbxk_op_print(&comb, s->combiner, s->dtype, FBXK_C, args);
    fbxk_free(val);
    char *cs = fbxk_take(&comb);
    if (!cs) {
      c->oom = 1;
      return;
    }
    fbxk_p_line(p, "%s = (%s)(%s);", lane, t, cs);
    fbxk_free(cs);
    fbxk_p_close(p);
    if (!tail) fbxk_p_close(p);
  }
  /* the lanes summed pairwise: w/2 sums, then w/4, ... */
  fbxk_p_open(p, "for (int l%d_h = %d; l%d_h > 0; l%d_h /= 2)", l, w / 2, l, l);
  fbxk_p_line(p, "for (int l%d_k = 0; l%d_k < l%d_h; l%d_k++) l%d_v[l%d_k] = (%s)(l%d_v[l%d_k] + l%d_v[l%d_k + l%d_h]);",
              l, l, l, l, l, l, t, l, l, l, l, l);
  fbxk_p_close(p);
  fbxk_p_line(p, "l%d_t += (double)l%d_v[0];", l, l);
  fbxk_p_close(p);
  for (int i = 0; i < n - 1; i++) fbxk_p_close(p);
  snprintf(lane, sizeof lane, "l%d", l);
  snprintf(total, sizeof total, "(%s)l%d_t", t, l);
  const char *args[2] = {lane, total};
  fbxk_buf comb = {0};
  fbxk_op_print(&comb, s->combiner, s->dtype, FBXK_C, args);
  char *cs = fbxk_take(&comb);
  if (!cs) {
    c->oom = 1;
    return;
  }
  fbxk_p_line(p, "l%d = (%s)(%s);", l, t, cs);
  fbxk_free(cs);
  fbxk_p_close(p);
}

static void stmts(cg *c, const te_stmt *s) {
  fbxk_printer *p = &c->p;
  char v[32], ext[32];
  for (; s && !c->oom; s = s->next) {
    switch (s->kind) {
      case TE_S_BLOCK: stmts(c, s->first); break;
      case TE_S_FOR: {
        snprintf(v, sizeof v, "v%d", s->var);
        size_text(ext, sizeof ext, c->k, s->extent, s->extent_sx);
        const char *pragma = s->parallel && s->vectorize ? "#pragma omp parallel for simd num_threads(nt) schedule(static)"
                             : s->parallel ? "#pragma omp parallel for num_threads(nt) schedule(static)"
                             : s->vectorize ? "#pragma omp simd" : NULL;
        fbxk_p_for(p, pragma, v, "0", ext, "1");
        stmts(c, s->body->first);
        fbxk_p_close(p);
        break;
      }
      case TE_S_STORE: {
        fbxk_buf a = {0};
        access(&a, c->k, &s->acc);
        char *lv = fbxk_take(&a), *val = expr_str(c, s->value);
        if (lv && val) {
          fbxk_buf st = {0};
          fbxk_print_store(&st, c->k->bufs[s->acc.buf].dtype, lv, val, FBXK_C);
          char *line = fbxk_take(&st);
          if (line) fbxk_p_line(p, "%s", line);
          else c->oom = 1;
          fbxk_free(line);
        } else {
          c->oom = 1;
        }
        fbxk_free(lv);
        fbxk_free(val);
        break;
      }
      case TE_S_LET: {
        char *val = expr_str(c, s->value);
        if (val) fbxk_p_line(p, "const %s l%d = %s;", fbxk_compute_type(s->dtype, FBXK_C), s->local, val);
        fbxk_free(val);
        break;
      }
      case TE_S_REDUCE: {
        fbxk_buf ib = {0};
        if (fbxk_is_float(s->dtype)) fbxk_print_float(&ib, s->init.f, s->dtype, FBXK_C);
        else fbxk_print_int(&ib, s->init.i);
        char *init = fbxk_take(&ib);
        if (!init) {
          c->oom = 1;
          break;
        }
        fbxk_p_line(p, "%s l%d = %s;", fbxk_compute_type(s->dtype, FBXK_C), s->local, init);
        fbxk_free(init);
        /* a vectorized float max/min: the plain max/min as an OpenMP
         * reduction and a NaN flag beside it; the same value as the row's
         * NaN-propagating combiner (a NaN anywhere makes the result NaN) */
        if (s->vectorize && fbxk_is_float(s->dtype) && s->combiner == FBXK_OP_ADD_T) {
          sum_lanes(c, s);
          break;
        }
        int minmax = s->vectorize && fbxk_is_float(s->dtype) &&
                     (s->combiner == FBXK_OP_MAX_OTHER || s->combiner == FBXK_OP_MIN_OTHER);
        if (minmax) {
          int mx = s->combiner == FBXK_OP_MAX_OTHER;
          /* the flag as wide as a lane (a float32 max with an int64 flag
           * took two vectors of flags per vector of values) */
          fbxk_p_line(p, "%s l%d_nan = 0;", fbxk_compute_type(s->dtype, FBXK_C)[0] == 'd' ? "int64_t" : "int32_t",
                      s->local);
          for (int i = 0; i < s->nloops; i++) {
            char pr[96];
            snprintf(pr, sizeof pr, "#pragma omp simd reduction(%s:l%d) reduction(|:l%d_nan)", mx ? "max" : "min",
                     s->local, s->local);
            snprintf(v, sizeof v, "v%d", s->rvar[i]);
            size_text(ext, sizeof ext, c->k, s->rextent[i], s->rextent_sx[i]);
            fbxk_p_for(p, i == s->nloops - 1 ? pr : NULL, v, "0", ext, "1");
          }
          char *val = expr_str(c, s->value);
          if (!val) break;
          fbxk_p_line(p, "const %s x = %s;", fbxk_compute_type(s->dtype, FBXK_C), val);
          fbxk_free(val);
          fbxk_p_line(p, "l%d_nan |= x != x;", s->local);
          fbxk_p_line(p, "l%d = x %s l%d ? x : l%d;", s->local, mx ? ">" : "<", s->local, s->local);
          for (int i = 0; i < s->nloops; i++) fbxk_p_close(p);
          fbxk_p_line(p, "if (l%d_nan) l%d = FBXK_NAN;", s->local, s->local);
          break;
        }
        for (int i = 0; i < s->nloops; i++) {
          char pr[64];
          snprintf(pr, sizeof pr, "#pragma omp simd reduction(+:l%d)", s->local);
          snprintf(v, sizeof v, "v%d", s->rvar[i]);
          size_text(ext, sizeof ext, c->k, s->rextent[i], s->rextent_sx[i]);
          fbxk_p_for(p, s->vectorize && i == s->nloops - 1 ? pr : NULL, v, "0", ext, "1");
        }
        char acc[32];
        snprintf(acc, sizeof acc, "l%d", s->local);
        char *val = expr_str(c, s->value);
        if (!val) break;
        const char *args[2] = {acc, val};
        fbxk_buf comb = {0};
        fbxk_op_print(&comb, s->combiner, s->dtype, FBXK_C, args);
        fbxk_free(val);
        char *cs = fbxk_take(&comb);
        if (!cs) {
          c->oom = 1;
          break;
        }
        fbxk_buf cast = {0};
        fbxk_print_cast(&cast, s->dtype, cs, FBXK_C);
        fbxk_free(cs);
        char *line = fbxk_take(&cast);
        if (line) fbxk_p_line(p, "l%d = %s;", s->local, line);
        else c->oom = 1;
        fbxk_free(line);
        for (int i = 0; i < s->nloops; i++) fbxk_p_close(p);
        break;
      }
    }
  }
}

char *te_codegen_c(const te_kernel_ir *k, const char *name, const char *first_line) {
  cg c = {.k = k};
  fbxk_p_init(&c.p, FBXK_C);
  if (first_line) fbxk_p_puts(&c.p, first_line);
  fbxk_p_puts(&c.p, fbxk_prelude(FBXK_C));
  fbxk_p_puts(&c.p, "\n#ifdef _OPENMP\nint te_openmp = 1;\n#else\nint te_openmp = 0;\n#endif\n");
  fbxk_p_open(&c.p, "void %s(char *const *bufs, const double *fs, const int64_t *is, int nt)", name);
  fbxk_p_line(&c.p, "(void)fs; (void)is; (void)nt;");
  for (int i = 0; i < k->nbufs; i++) {
    const te_buf *b = &k->bufs[i];
    if (b->kind == TE_BUF_TEMP && !b->numel && !b->alias) continue;
    /* a view reads its base's memory: neither is restrict */
    int aliased = b->alias != 0;
    for (int j = 0; j < k->nbufs && !aliased; j++) aliased = k->bufs[j].alias == i + 1;
    int base = b->alias ? b->alias - 1 : i;
    int ro = k->bufs[base].kind == TE_BUF_INPUT;
    const char *t = fbxk_storage_type(b->dtype, FBXK_C);
    fbxk_p_line(&c.p, "%s%s *%sb%d = (%s%s *)bufs[%d]; /* %s */", ro ? "const " : "", t, aliased ? "" : "restrict ", i,
                ro ? "const " : "", t, base, b->name ? b->name : "");
  }
  stmts(&c, k->root->first);
  fbxk_p_close(&c.p);
  char *src = fbxk_p_take(&c.p);
  if (c.oom) {
    fbxk_free(src);
    return NULL;
  }
  return src;
}
