/* The CUDA backend: the scheduled IR printed as CUDA C through the kit's
 * CUDA dialect (prelude, op templates, casts, loads, stores, kernel
 * signatures), for NVRTC (host->nvrtc_compile).
 *
 * The root block's statements become kernels, launched in order:
 *
 *   pointwise   a loop nest without a Reduce: its perfectly nested loops are
 *               collapsed into one iteration space walked by a grid-stride
 *               loop (any grid covers it; launch ceil(n / 256) blocks of
 *               256, capped), the rest of the nest runs in each thread.
 *   row         a loop nest with a Reduce inside (row reductions, softmax,
 *               normalizations after rowblock): one thread block per
 *               iteration of its (collapsed) outer loops, block-stride over
 *               them (launch min(rows, cap) blocks of 256). In the row, a
 *               loop is spread over the block's threads, a Reduce is
 *               accumulated per thread then combined with warp shuffles and
 *               a 32-entry shared array (any block size that is a multiple
 *               of 32, up to 1024), a Store of a row value is made by thread
 *               0, a Let is computed by every thread (its value is uniform);
 *               every row statement ends with __syncthreads(), so a later
 *               pass reads what any thread of an earlier one wrote.
 *   single      statements at the root that are not loops (a full
 *               reduction), or statements that use a local another root
 *               statement defined: one kernel, one block, the row rules.
 *
 * Kernel NAME_<i> takes every buffer as a pointer (b<n>, in buffer order:
 * inputs const, outputs, then the temporaries run allocates; a view, a temp
 * with `alias`, is declared in the body as its base's pointer) and each
 * scalar input j as `double fs<j>, int64_t is<j>` (the one its kind does not
 * use is 0). Sizes and strides are literals, as in C: the kernel is
 * specialized on its input specs; under dynamic shapes (dynamic.c) a
 * size-dependent value is the int64 argument is<ninputs + i> of its size
 * expression, and the launch comment gives the grid as a formula. The grid of each kernel (the blocks in
 * its launch comment) is returned beside the text; plugin.c launches them
 * through the kit's CUDA driver module (kit_cuda.h). Combiners are the kit's rows (NaN
 * propagation included); no OpenMP-style NaN flag is needed.
 *
 * NVRTC contracts a * b + c into FMAs unless given --fmad=false, which the
 * host's nvrtc_compile service does not pass (see kit_print.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "te.h"

#define CU FBXK_CUDA
#define CU_BLOCK TE_CUDA_BLOCK
#define CU_MAX_GRID TE_CUDA_MAX_GRID

typedef struct cg {
  const te_kernel_ir *k;
  fbxk_printer p;
  int oom;
  const char *bad; /* an IR construct this backend does not print */
  int ntemps;      /* e0, e1, ...: one per op */
} cg;

static void expr(cg *c, fbxk_buf *b, const te_expr *e);

static char *take(cg *c, fbxk_buf *b) {
  if (!b->data && !b->oom) fbxk_puts(b, "");
  char *s = fbxk_take(b);
  if (!s) c->oom = 1;
  return s;
}

/* A size: its literal, or (dynamic shapes) the kernel argument of size
 * expression sx, is<ninputs + sx - 1>. */
static const char *sz(const cg *c, char *out, size_t cap, int64_t v, int sx) {
  if (sx) snprintf(out, cap, "is%d", c->k->ninputs + sx - 1);
  else snprintf(out, cap, "%" PRId64, v);
  return out;
}

/* The product of sizes ext[from..n) (sx: their size expressions) as text. */
static const char *sz_prod(const cg *c, char *out, size_t cap, const int64_t *ext, const int *sx, int from, int n) {
  int64_t lit = 1;
  size_t o = 0;
  out[0] = 0;
  for (int i = from; i < n; i++) {
    if (!sx || !sx[i]) lit *= ext[i];
    else o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, "%sis%d", o ? " * " : "", c->k->ninputs + sx[i] - 1);
  }
  if (!o) snprintf(out, cap, "%" PRId64, lit);
  else if (lit != 1) snprintf(out + o, o < cap ? cap - o : 0, " * %" PRId64, lit);
  if (o) { /* parenthesized */
    size_t l = strlen(out);
    if (l + 3 < cap) {
      memmove(out + 1, out, l + 1);
      out[0] = '(';
      out[l + 1] = ')';
      out[l + 2] = 0;
    }
  }
  return out;
}

static char *expr_str(cg *c, const te_expr *e) {
  fbxk_buf b = {0};
  expr(c, &b, e);
  return take(c, &b);
}

static void access(cg *c, fbxk_buf *b, const te_access *a) {
  if (!a->linear) {
    c->bad = "an access not linearized";
    return;
  }
  char t1[32];
  fbxk_printf(b, "b%d[", a->buf);
  int any = 0;
  if (a->offset || a->offset_sx || !a->nterms) {
    fbxk_printf(b, "%s", sz(c, t1, sizeof t1, a->offset, a->offset_sx));
    any = 1;
  }
  for (int t = 0; t < a->nterms; t++) {
    if (any) fbxk_puts(b, " + ");
    if (a->coef[t] != 1 || a->coef_sx[t]) fbxk_printf(b, "%s * ", sz(c, t1, sizeof t1, a->coef[t], a->coef_sx[t]));
    fbxk_printf(b, "v%d", a->var[t]);
    any = 1;
  }
  fbxk_puts(b, "]");
}

static char *access_str(cg *c, const te_access *a) {
  fbxk_buf b = {0};
  access(c, &b, a);
  return take(c, &b);
}

/* `x` as dtype dt, printed into a fresh string */
static char *cast_str(cg *c, int dt, const char *x) {
  fbxk_buf b = {0};
  fbxk_print_cast(&b, dt, x, CU);
  return take(c, &b);
}

static void expr(cg *c, fbxk_buf *b, const te_expr *e) {
  if (c->oom || c->bad) return;
  switch (e->kind) {
    case TE_E_IMM:
      if (e->imm_sx) fbxk_printf(b, "((%s)is%d)", fbxk_compute_type(e->dtype, CU), c->k->ninputs + e->imm_sx - 1);
      else if (fbxk_is_float(e->dtype)) fbxk_print_float(b, e->imm.f, e->dtype, CU);
      else fbxk_print_int(b, e->imm.i);
      return;
    case TE_E_VAR: fbxk_printf(b, "v%d", e->id); return;
    case TE_E_LOCAL: fbxk_printf(b, "l%d", e->id); return;
    case TE_E_SCALAR: fbxk_printf(b, fbxk_is_float(e->dtype) ? "fs%d" : "is%d", e->id); return;
    case TE_E_LOAD: {
      char *a = access_str(c, &e->acc);
      if (a) fbxk_print_load(b, e->dtype, a, CU);
      fbxk_free(a);
      return;
    }
    case TE_E_CAST: {
      char *s = expr_str(c, e->a[0]);
      if (s) fbxk_print_cast(b, e->dtype, s, CU);
      fbxk_free(s);
      return;
    }
    case TE_E_OP: {
      char *args[FBXK_MAX_OP_ARGS] = {0};
      for (int i = 0; i < e->nargs; i++) args[i] = expr_str(c, e->a[i]);
      fbxk_buf raw = {0};
      if (!c->oom && !c->bad) fbxk_op_print_facts(&raw, e->op, e->cdtype, 1, CU, (const char *const *)args, e->facts);
      for (int i = 0; i < e->nargs; i++) fbxk_free(args[i]);
      char *r = take(c, &raw);
      /* as fbxk_op_eval (and the C backend): the raw value rounded to the
       * compute dtype (or a truth value), then converted to the result dtype */
      int rawdt = fbxk_op_is_bool_valued(e->op) ? FBXK_BOOL : e->cdtype;
      char *o = r ? cast_str(c, rawdt, r) : NULL;
      fbxk_free(r);
      char *f = o && rawdt != e->dtype ? cast_str(c, e->dtype, o) : o;
      if (f != o) fbxk_free(o);
      if (!f) return;
      int t = c->ntemps++;
      fbxk_p_line(&c->p, "const %s e%d = %s;", fbxk_compute_type(e->dtype, CU), t, f);
      fbxk_free(f);
      fbxk_printf(b, "e%d", t);
      return;
    }
    case TE_E_ADD: case TE_E_MUL:
      fbxk_puts(b, "(");
      expr(c, b, e->a[0]);
      fbxk_puts(b, e->kind == TE_E_ADD ? " + " : " * ");
      expr(c, b, e->a[1]);
      fbxk_puts(b, ")");
      return;
  }
  c->bad = "an expression kind it does not know";
}

/* ---- statements ------------------------------------------------------------------------- */

static void line_store(cg *c, const te_stmt *s) {
  char *lv = access_str(c, &s->acc), *val = lv ? expr_str(c, s->value) : NULL;
  if (lv && val) {
    fbxk_buf st = {0};
    fbxk_print_store(&st, c->k->bufs[s->acc.buf].dtype, lv, val, CU);
    char *line = take(c, &st);
    if (line) fbxk_p_line(&c->p, "%s", line);
    fbxk_free(line);
  }
  fbxk_free(lv);
  fbxk_free(val);
}

static void reduce_init(cg *c, const te_stmt *s) {
  fbxk_buf ib = {0};
  if (fbxk_is_float(s->dtype)) fbxk_print_float(&ib, s->init.f, s->dtype, CU);
  else fbxk_print_int(&ib, s->init.i);
  char *init = take(c, &ib);
  if (init) fbxk_p_line(&c->p, "%s l%d = %s;", fbxk_compute_type(s->dtype, CU), s->local, init);
  fbxk_free(init);
}

/* `acc = combine(acc, x)` for the Reduce's combiner, in its dtype */
static void combine_line(cg *c, const te_stmt *s, const char *acc, const char *x) {
  const char *args[2] = {acc, x};
  fbxk_buf comb = {0};
  fbxk_op_print(&comb, s->combiner, s->dtype, CU, args);
  char *cs = take(c, &comb);
  char *line = cs ? cast_str(c, s->dtype, cs) : NULL;
  if (line) fbxk_p_line(&c->p, "%s = %s;", acc, line);
  fbxk_free(cs);
  fbxk_free(line);
}

static void reduce_body(cg *c, const te_stmt *s) {
  char acc[32];
  snprintf(acc, sizeof acc, "l%d", s->local);
  char *val = expr_str(c, s->value);
  if (val) combine_line(c, s, acc, val);
  fbxk_free(val);
}

static void stmts_thread(cg *c, const te_stmt *s);

/* One thread's statement: serial, as in C without pragmas. */
static void stmt_thread(cg *c, const te_stmt *s) {
  char v[32], ext[32];
  switch (s->kind) {
    case TE_S_BLOCK: stmts_thread(c, s->first); return;
    case TE_S_FOR:
      snprintf(v, sizeof v, "v%d", s->var);
      sz(c, ext, sizeof ext, s->extent, s->extent_sx);
      fbxk_p_for(&c->p, NULL, v, "0", ext, "1");
      stmts_thread(c, s->body->first);
      fbxk_p_close(&c->p);
      return;
    case TE_S_STORE: line_store(c, s); return;
    case TE_S_LET: {
      char *val = expr_str(c, s->value);
      if (val) fbxk_p_line(&c->p, "const %s l%d = %s;", fbxk_compute_type(s->dtype, CU), s->local, val);
      fbxk_free(val);
      return;
    }
    case TE_S_REDUCE:
      reduce_init(c, s);
      for (int i = 0; i < s->nloops; i++) {
        snprintf(v, sizeof v, "v%d", s->rvar[i]);
        sz(c, ext, sizeof ext, s->rextent[i], s->rextent_sx[i]);
        fbxk_p_for(&c->p, NULL, v, "0", ext, "1");
      }
      reduce_body(c, s);
      for (int i = 0; i < s->nloops; i++) fbxk_p_close(&c->p);
      return;
  }
  c->bad = "a statement kind it does not know";
}

static void stmts_thread(cg *c, const te_stmt *s) {
  for (; s && !c->oom && !c->bad; s = s->next) stmt_thread(c, s);
}

/* Declare loop vars vars[0..n) (extents ext) from the flat index `t`, the
 * last var fastest. */
static void decompose(cg *c, const char *t, const int *vars, const int64_t *ext, const int *sx, int n) {
  char inner[256], e[32];
  for (int i = n - 1; i >= 0; i--) {
    sz_prod(c, inner, sizeof inner, ext, sx, i + 1, n);
    sz(c, e, sizeof e, ext[i], sx ? sx[i] : 0);
    if (n == 1) fbxk_p_line(&c->p, "const int64_t v%d = %s;", vars[i], t);
    else if (i == 0) fbxk_p_line(&c->p, "const int64_t v%d = %s / %s;", vars[i], t, inner);
    else if (!strcmp(inner, "1")) fbxk_p_line(&c->p, "const int64_t v%d = %s %% %s;", vars[i], t, e);
    else fbxk_p_line(&c->p, "const int64_t v%d = (%s / %s) %% %s;", vars[i], t, inner, e);
  }
}

/* The block's cooperative reduction of local l<id> (every thread holds a
 * partial value): warp shuffles, one value per warp in shared memory, the
 * first warp combines those; every thread gets the result. */
static void block_combine(cg *c, const te_stmt *s) {
  fbxk_printer *p = &c->p;
  const char *t = fbxk_compute_type(s->dtype, CU);
  char acc[32], other[40];
  snprintf(acc, sizeof acc, "l%d", s->local);
  snprintf(other, sizeof other, "l%d_o", s->local);
  fbxk_buf ib = {0};
  if (fbxk_is_float(s->dtype)) fbxk_print_float(&ib, s->init.f, s->dtype, CU);
  else fbxk_print_int(&ib, s->init.i);
  char *init = take(c, &ib);
  if (!init) return;
  for (int round = 0; round < 2; round++) {
    if (round == 1) {
      fbxk_p_line(p, "if ((threadIdx.x & 31u) == 0u) l%d_w[threadIdx.x >> 5] = %s;", s->local, acc);
      fbxk_p_line(p, "__syncthreads();");
      fbxk_p_open(p, "if (threadIdx.x < 32u)");
      fbxk_p_line(p, "%s = threadIdx.x < (blockDim.x >> 5) ? l%d_w[threadIdx.x] : %s;", acc, s->local, init);
    }
    fbxk_p_open(p, "for (unsigned off = 16u; off > 0u; off >>= 1)");
    fbxk_p_line(p, "const %s %s = __shfl_down_sync(0xffffffffu, %s, off);", t, other, acc);
    combine_line(c, s, acc, other);
    fbxk_p_close(p);
    if (round == 1) {
      fbxk_p_line(p, "if (threadIdx.x == 0u) l%d_w[0] = %s;", s->local, acc);
      fbxk_p_close(p);
      fbxk_p_line(p, "__syncthreads();");
      fbxk_p_line(p, "%s = l%d_w[0];", acc, s->local);
      fbxk_p_line(p, "__syncthreads();");
    }
  }
  fbxk_free(init);
}

static void stmts_block(cg *c, const te_stmt *s);

/* A statement the whole block executes (its threads cooperate). */
static void stmt_block(cg *c, const te_stmt *s) {
  fbxk_printer *p = &c->p;
  char ext[32];
  switch (s->kind) {
    case TE_S_BLOCK: stmts_block(c, s->first); return;
    case TE_S_FOR:
      fbxk_p_open(p, "for (int64_t v%d = threadIdx.x; v%d < %s; v%d += blockDim.x)", s->var, s->var,
                  sz(c, ext, sizeof ext, s->extent, s->extent_sx), s->var);
      stmts_thread(c, s->body->first);
      fbxk_p_close(p);
      fbxk_p_line(p, "__syncthreads();");
      return;
    case TE_S_STORE:
      fbxk_p_open(p, "if (threadIdx.x == 0u)");
      line_store(c, s);
      fbxk_p_close(p);
      fbxk_p_line(p, "__syncthreads();");
      return;
    case TE_S_LET: stmt_thread(c, s); return;
    case TE_S_REDUCE: {
      char total[256];
      sz_prod(c, total, sizeof total, s->rextent, s->rextent_sx, 0, s->nloops);
      fbxk_p_line(p, "__shared__ %s l%d_w[32];", fbxk_compute_type(s->dtype, CU), s->local);
      reduce_init(c, s);
      fbxk_p_open(p, "for (int64_t r%d = threadIdx.x; r%d < %s; r%d += blockDim.x)", s->local, s->local, total,
                  s->local);
      char t[32];
      snprintf(t, sizeof t, "r%d", s->local);
      decompose(c, t, s->rvar, s->rextent, s->rextent_sx, s->nloops);
      reduce_body(c, s);
      fbxk_p_close(p);
      block_combine(c, s);
      return;
    }
  }
  c->bad = "a statement kind it does not know";
}

static void stmts_block(cg *c, const te_stmt *s) {
  for (; s && !c->oom && !c->bad; s = s->next) stmt_block(c, s);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static int has_reduce(const te_stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == TE_S_REDUCE) return 1;
    if (s->kind == TE_S_BLOCK && has_reduce(s->first)) return 1;
    if (s->kind == TE_S_FOR && has_reduce(s->body->first)) return 1;
  }
  return 0;
}

/* Locals used (an expression reads l<id>) / defined (Let, Reduce) under s. */
static void expr_locals(const te_expr *e, unsigned char *used, int nlocals) {
  if (!e) return;
  if (e->kind == TE_E_LOCAL && e->id >= 0 && e->id < nlocals) used[e->id] = 1;
  if (e->kind == TE_E_LOAD) {
    for (int i = 0; i < e->acc.nidx; i++) expr_locals(e->acc.idx[i], used, nlocals);
    return;
  }
  for (int i = 0; i < e->nargs; i++) expr_locals(e->a[i], used, nlocals);
}

static void stmt_locals(const te_stmt *s, int one, unsigned char *used, unsigned char *defd, int nlocals) {
  for (; s; s = one ? NULL : s->next) {
    if (s->kind == TE_S_BLOCK) stmt_locals(s->first, 0, used, defd, nlocals);
    else if (s->kind == TE_S_FOR) stmt_locals(s->body->first, 0, used, defd, nlocals);
    if (s->kind == TE_S_STORE || s->kind == TE_S_LET || s->kind == TE_S_REDUCE) expr_locals(s->value, used, nlocals);
    if (s->kind == TE_S_STORE)
      for (int i = 0; i < s->acc.nidx; i++) expr_locals(s->acc.idx[i], used, nlocals);
    if ((s->kind == TE_S_LET || s->kind == TE_S_REDUCE) && s->local >= 0 && s->local < nlocals) defd[s->local] = 1;
  }
}

/* The perfectly nested loops from s (each body one For); *inner gets the
 * innermost, its body is what runs per point. */
static int collapse(const te_stmt *s, int *vars, int64_t *ext, int *sx, const te_stmt **inner) {
  int n = 0;
  while (n < TE_MAX_LIN) {
    vars[n] = s->var;
    sx[n] = s->extent_sx;
    ext[n++] = s->extent;
    *inner = s;
    const te_stmt *b = s->body->first;
    if (!b || b->next || b->kind != TE_S_FOR) break;
    s = b;
  }
  return n;
}

static void kernel_begin(cg *c, const char *name, int idx) {
  const te_kernel_ir *k = c->k;
  fbxk_param ps[TE_MAX_BUFS * 2 + TE_MAX_SX];
  char names[TE_MAX_BUFS * 2 + TE_MAX_SX][16];
  int n = 0;
  for (int i = 0; i < k->nbufs; i++) {
    const te_buf *b = &k->bufs[i];
    if (b->kind == TE_BUF_TEMP && !b->numel) continue; /* inlined, or a view (declared in the body) */
    snprintf(names[n], sizeof names[n], "b%d", i);
    ps[n] = (fbxk_param){names[n], b->dtype, b->kind == TE_BUF_INPUT ? FBXK_PARAM_IN : FBXK_PARAM_OUT};
    n++;
  }
  for (int i = 0; i < k->ninputs && n + 2 <= TE_MAX_BUFS * 2; i++) {
    if (k->input_kind[i] == FBXP_ARG_TENSOR) continue;
    snprintf(names[n], sizeof names[n], "fs%d", i);
    ps[n++] = (fbxk_param){names[n - 1], FBXK_F64, FBXK_PARAM_VALUE};
    snprintf(names[n], sizeof names[n], "is%d", i);
    ps[n++] = (fbxk_param){names[n - 1], FBXK_I64, FBXK_PARAM_VALUE};
  }
  for (int i = 0; i < k->nsx; i++) { /* dynamic shapes: the size expressions' values */
    snprintf(names[n], sizeof names[n], "is%d", k->ninputs + i);
    ps[n++] = (fbxk_param){names[n - 1], FBXK_I64, FBXK_PARAM_VALUE};
  }
  char kname[96];
  snprintf(kname, sizeof kname, "%s_%d", name, idx);
  fbxk_p_kernel_begin(&c->p, kname, ps, n);
  /* views (reshapes lowered without a copy): loads through the base's
   * pointer, with the view's own strides */
  for (int i = 0; i < k->nbufs; i++) {
    const te_buf *b = &k->bufs[i];
    if (b->kind != TE_BUF_TEMP || b->numel || !b->alias) continue;
    int base = b->alias - 1;
    while (base >= 0 && base < k->nbufs && k->bufs[base].alias) base = k->bufs[base].alias - 1; /* a view of a view */
    if (base < 0 || base >= k->nbufs) {
      c->bad = "a view of no buffer";
      return;
    }
    const char *t = fbxk_storage_type(b->dtype, CU);
    fbxk_p_line(&c->p, "const %s *b%d = (const %s *)b%d; /* view of b%d */", t, i, t, base, b->alias - 1);
  }
}

char *te_codegen_cuda(const te_kernel_ir *k, const char *name, const char *first_line, int *nkernels,
                      const char **unsupported, te_cuda_grid **grids) {
  cg c = {.k = k};
  *nkernels = 0;
  *unsupported = NULL;
  te_cuda_grid *grid = NULL;
  int gcap = 0;
  if (grids) *grids = NULL;
  fbxk_p_init(&c.p, CU);
  if (first_line) fbxk_p_puts(&c.p, first_line);
  fbxk_p_puts(&c.p, fbxk_prelude(CU));
  int nl = k->nlocals > 0 ? k->nlocals : 1;
  unsigned char *defd = fbxk_alloc((size_t)nl), *used = fbxk_alloc((size_t)nl), *scratch = fbxk_alloc((size_t)nl);
  if (!defd || !used || !scratch) c.oom = 1;
  const te_stmt *s = k->root->first;
  while (s && !c.oom && !c.bad) {
    /* a run of root statements: one, extended to the last later statement
     * that uses a local some statement of the run defines at the root
     * (one kernel: locals do not cross kernels) */
    const te_stmt *first = s, *last = s;
    memset(defd, 0, (size_t)nl);
    for (const te_stmt *n = s;; n = n->next) {
      if ((n->kind == TE_S_LET || n->kind == TE_S_REDUCE) && n->local >= 0 && n->local < nl) defd[n->local] = 1;
      for (const te_stmt *m = last->next; m; m = m->next) {
        memset(used, 0, (size_t)nl);
        stmt_locals(m, 1, used, scratch, nl);
        for (int i = 0; i < nl; i++)
          if (used[i] && defd[i]) {
            last = m;
            break;
          }
      }
      if (n == last) break;
    }
    int single = first != last || first->kind != TE_S_FOR;
    int idx = (*nkernels)++;
    c.ntemps = 0;
    fbxk_p_puts(&c.p, "\n");
    int vars[TE_MAX_LIN], sxs[TE_MAX_LIN];
    int64_t ext[TE_MAX_LIN], total = 1;
    const te_stmt *inner = NULL;
    int nv = single ? 0 : collapse(first, vars, ext, sxs, &inner);
    /* the iteration count: literal extents multiplied, symbolic ones
     * (dynamic shapes) as a size expression computed at run time */
    te_cuda_grid gd;
    memset(&gd, 0, sizeof gd);
    gd.total.c = 1;
    for (int i = 0; i < nv; i++) {
      if (!sxs[i]) {
        total *= ext[i];
        gd.total.c *= ext[i];
        continue;
      }
      gd.dynamic = 1;
      const te_sizex *x = &k->sx[sxs[i] - 1];
      gd.total.c *= x->c;
      for (int j = 0; j < TE_MAX_SYMS; j++) gd.total.e[j] = (unsigned char)(gd.total.e[j] + x->e[j]);
    }
    int row = !single && has_reduce(inner->body->first);
    int64_t blocks = single ? 1 : row ? total : (total + CU_BLOCK - 1) / CU_BLOCK;
    if (blocks > CU_MAX_GRID) blocks = CU_MAX_GRID;
    if (blocks < 1) blocks = 1;
    gd.blocks = blocks;
    gd.row = row;
    gd.single = single;
    char totals[256];
    sz_prod(&c, totals, sizeof totals, ext, sxs, 0, nv);
    if (grids && idx >= gcap) {
      int ncap = gcap ? 2 * gcap : 8;
      te_cuda_grid *g = fbxk_alloc((size_t)ncap * sizeof *g);
      if (!g) {
        c.oom = 1;
        break;
      }
      if (grid) memcpy(g, grid, (size_t)gcap * sizeof *g);
      fbxk_free(grid);
      grid = g;
      gcap = ncap;
    }
    if (grids) grid[idx] = gd;
    if (gd.dynamic)
      fbxk_p_line(&c.p, "/* %s_%d: %s; launch <<<%s%s, %d>>> (at most %d blocks; any multiple of 32 threads per block) */",
                  name, idx, row ? "one block per row" : "grid-stride", totals, row ? "" : " / 256, rounded up", CU_BLOCK,
                  CU_MAX_GRID);
    else
      fbxk_p_line(&c.p, "/* %s_%d: %s; launch <<<%" PRId64 ", %d>>> (any multiple of 32 threads per block) */", name,
                  idx, single ? "one block" : row ? "one block per row" : "grid-stride", blocks, CU_BLOCK);
    kernel_begin(&c, name, idx);
    if (single) {
      fbxk_p_line(&c.p, "if (blockIdx.x != 0u) return;");
      for (const te_stmt *t = first; !c.oom && !c.bad; t = t->next) {
        stmt_block(&c, t);
        if (t == last) break;
      }
    } else {
      const char *flat = row ? "t_row" : "t_pt";
      fbxk_p_open(&c.p, row ? "for (int64_t %s = blockIdx.x; %s < %s; %s += gridDim.x)"
                            : "for (int64_t %s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; %s < %s"
                              "; %s += (int64_t)gridDim.x * blockDim.x)",
                  flat, flat, totals, flat);
      decompose(&c, flat, vars, ext, sxs, nv);
      if (row) stmts_block(&c, inner->body->first);
      else stmts_thread(&c, inner->body->first);
      fbxk_p_close(&c.p);
    }
    fbxk_p_close(&c.p);
    s = last->next;
  }
  fbxk_free(defd);
  fbxk_free(used);
  fbxk_free(scratch);
  char *src = fbxk_p_take(&c.p);
  if (c.oom || c.bad) {
    fbxk_free(src);
    fbxk_free(grid);
    *unsupported = c.bad;
    return NULL;
  }
  if (grids) *grids = grid;
  return src;
}

int64_t te_cuda_blocks(const te_cuda_grid *g, const int64_t *sym) {
  if (!g->dynamic) return g->blocks;
  int64_t t = g->total.c;
  for (int j = 0; j < TE_MAX_SYMS; j++)
    for (int e = 0; e < g->total.e[j]; e++) t *= sym[j];
  int64_t b = g->single ? 1 : g->row ? t : (t + TE_CUDA_BLOCK - 1) / TE_CUDA_BLOCK;
  return b > TE_CUDA_MAX_GRID ? TE_CUDA_MAX_GRID : b < 1 ? 1 : b;
}
