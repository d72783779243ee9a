/* dynamic.c — dynamic shapes (NNC's symbolic-shape kernels, issue 14.5).
 *
 * Under ABI 1.1 the host may pass specs whose sizes are symbols
 * (FBXP_ACCEPTS_SYMBOLIC, at the `dynamic` levels of
 * FUSEBOX_FUSION_STRATEGY): one kernel must then serve every binding of the
 * symbols. Lowering and the schedule work on concrete sizes, so the kernel
 * is built twice, for two representative bindings (symbol j = A_j, then
 * B_j: distinct primes, ascending in j at A and descending at B), and the two scheduled IRs are compared node by
 * node. They must have the same structure (every decision the lowering and
 * the schedule made is the same at both points); every integer that differs
 * (a loop extent, a stride or offset in an access, a buffer's size, stride or
 * element count, an immediate such as a mean's count) must be a product of
 * symbols times a constant: factoring its value at A over the primes A_j
 * gives the product, which must predict its value at B exactly. Such a field
 * is marked with a size expression (te_sizex, ir.h), whose value is passed
 * to the kernel at run time as is[ninputs + i] (codegen_c.c, eval.c print or
 * read it instead of the literal). Size-1 dims stay concrete (the host never
 * makes them symbols), so broadcasting is specialized as before.
 *
 * What is refused (FBXP_ERR_UNSUPPORTED, the group then runs in the
 * interpreter for that pattern): a value that is not such a product (a cat's
 * offset is a sum of sizes, var/std divide by count - correction), views
 * whose constant sizes do not fit the representative sizes, a structure that
 * differs between the two bindings, more than TE_MAX_SYMS symbols or
 * TE_MAX_SX size expressions. The schedule runs with a parallel threshold of
 * 0 for such kernels (the element count is not known when it decides). */
#include <stdio.h>
#include <string.h>

#include "te.h"

static const int64_t PA[TE_MAX_SYMS] = {101, 103, 107, 109, 113, 127, 131, 137,
                                        139, 149, 151, 157, 163, 167, 173, 179};
/* descending where PA ascends: a value that depends on how sizes compare
 * (a max or min of two sizes, a choice made by comparing them) takes
 * another symbol's value at B than at A, and is refused */
static const int64_t PB[TE_MAX_SYMS] = {269, 263, 257, 251, 241, 239, 233, 229,
                                        227, 223, 211, 199, 197, 193, 191, 181};

int te_specs_symbolic(const fbxp_arg_spec *in, int32_t nin) {
  for (int i = 0; i < nin; i++)
    if (in[i].kind == FBXP_ARG_TENSOR)
      for (int d = 0; d < in[i].ndim; d++)
        if (FBXP_IS_SYMBOL(in[i].sizes[d])) return 1;
  return 0;
}

const char *te_dyn_specs(const fbxp_arg_spec *in, int32_t nin, int which, fbxp_arg_spec *out) {
  const int64_t *P = which ? PB : PA;
  for (int i = 0; i < nin; i++) {
    out[i] = in[i];
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    fbxp_arg_spec *s = &out[i];
    int unknown = 0;
    double numel = 1;
    for (int d = 0; d < s->ndim; d++) {
      if (FBXP_IS_SYMBOL(s->sizes[d])) {
        int id = FBXP_SYMBOL_ID(s->sizes[d]);
        if (id < 0 || id >= TE_MAX_SYMS) return "more symbols than a kernel takes (16)";
        s->sizes[d] = P[id];
      }
      if (s->strides[d] == FBXP_DIM_UNKNOWN) unknown = 1;
      numel *= (double)s->sizes[d];
    }
    if (numel > (double)(1ll << 40)) return "too many symbolic dims in one tensor";
    if (unknown) { /* a symbolic input is contiguous */
      int64_t acc = 1;
      for (int d = s->ndim - 1; d >= 0; d--) {
        s->strides[d] = acc;
        acc *= s->sizes[d];
      }
    }
  }
  return NULL;
}

typedef struct dyn {
  te_kernel_ir *a;
  const te_kernel_ir *b;
  const char *why;
} dyn;

static int fail(dyn *d, const char *why) {
  if (!d->why) d->why = why;
  return -1;
}

/* The size expression of a field worth va at A and vb at B (*sx = 0: a
 * constant). */
static int sizex(dyn *d, int64_t va, int64_t vb, int *sx) {
  *sx = 0;
  if (va == vb) return 0;
  if (va <= 0 || vb <= 0) return fail(d, "a size-dependent value that is not a product of sizes");
  te_sizex x;
  memset(&x, 0, sizeof x);
  int64_t r = va, p;
  for (int j = 0; j < TE_MAX_SYMS; j++)
    while (r % PA[j] == 0) {
      r /= PA[j];
      x.e[j]++;
    }
  x.c = p = r;
  for (int j = 0; j < TE_MAX_SYMS; j++)
    for (int e = 0; e < x.e[j]; e++) {
      if (p > INT64_MAX / PB[j]) return fail(d, "a size-dependent value that is not a product of sizes");
      p *= PB[j];
    }
  if (p != vb)
    return fail(d, "a size-dependent value that is not a product of sizes (a sum of sizes, or a count minus a "
                   "correction)");
  te_kernel_ir *k = d->a;
  for (int i = 0; i < k->nsx; i++)
    if (!memcmp(&k->sx[i], &x, sizeof x)) {
      *sx = i + 1;
      return 0;
    }
  if (k->nsx == TE_MAX_SX) return fail(d, "more size expressions than a kernel takes");
  k->sx[k->nsx++] = x;
  *sx = k->nsx;
  return 0;
}

static int same_expr(dyn *d, te_expr *x, const te_expr *y);

static int same_access(dyn *d, te_access *x, const te_access *y) {
  if (x->buf != y->buf || x->linear != y->linear) return fail(d, "the kernels differ between sizes");
  if (!x->linear) {
    if (x->nidx != y->nidx) return fail(d, "the kernels differ between sizes");
    for (int i = 0; i < x->nidx; i++)
      if (same_expr(d, x->idx[i], y->idx[i])) return -1;
    return 0;
  }
  if (x->nterms != y->nterms) return fail(d, "the kernels differ between sizes");
  if (sizex(d, x->offset, y->offset, &x->offset_sx)) return -1;
  for (int t = 0; t < x->nterms; t++) {
    if (x->var[t] != y->var[t]) return fail(d, "the kernels differ between sizes");
    if (sizex(d, x->coef[t], y->coef[t], &x->coef_sx[t])) return -1;
  }
  return 0;
}

static int same_expr(dyn *d, te_expr *x, const te_expr *y) {
  if (!x || !y) return x == NULL && y == NULL ? 0 : fail(d, "the kernels differ between sizes");
  if (x->kind != y->kind || x->dtype != y->dtype || x->id != y->id || x->op != y->op || x->cdtype != y->cdtype ||
      x->nargs != y->nargs)
    return fail(d, "the kernels differ between sizes");
  if (x->kind == TE_E_IMM) {
    if (!fbxk_is_float(x->dtype)) return sizex(d, x->imm.i, y->imm.i, &x->imm_sx);
    if (x->imm.f == y->imm.f) return 0;
    int64_t va = (int64_t)x->imm.f, vb = (int64_t)y->imm.f;
    if ((double)va != x->imm.f || (double)vb != y->imm.f)
      return fail(d, "a size-dependent value that is not a product of sizes");
    return sizex(d, va, vb, &x->imm_sx);
  }
  if (x->kind == TE_E_LOAD && same_access(d, &x->acc, &y->acc)) return -1;
  for (int i = 0; i < x->nargs; i++)
    if (same_expr(d, x->a[i], y->a[i])) return -1;
  return 0;
}

static int same_stmts(dyn *d, te_stmt *x, const te_stmt *y) {
  for (; x || y; x = x->next, y = y->next) {
    if (!x || !y || x->kind != y->kind) return fail(d, "the kernels differ between sizes");
    switch (x->kind) {
      case TE_S_BLOCK:
        if (same_stmts(d, x->first, y->first)) return -1;
        break;
      case TE_S_FOR:
        if (x->var != y->var || x->parallel != y->parallel || x->vectorize != y->vectorize)
          return fail(d, "the kernels differ between sizes");
        if (sizex(d, x->extent, y->extent, &x->extent_sx) || same_stmts(d, x->body, y->body)) return -1;
        break;
      case TE_S_STORE:
        if (same_access(d, &x->acc, &y->acc) || same_expr(d, x->value, y->value)) return -1;
        break;
      case TE_S_LET:
        if (x->local != y->local || x->dtype != y->dtype) return fail(d, "the kernels differ between sizes");
        if (same_expr(d, x->value, y->value)) return -1;
        break;
      case TE_S_REDUCE:
        if (x->local != y->local || x->dtype != y->dtype || x->combiner != y->combiner || x->nloops != y->nloops ||
            x->vectorize != y->vectorize || memcmp(&x->init, &y->init, sizeof x->init))
          return fail(d, "the kernels differ between sizes");
        for (int i = 0; i < x->nloops; i++) {
          if (x->rvar[i] != y->rvar[i]) return fail(d, "the kernels differ between sizes");
          if (sizex(d, x->rextent[i], y->rextent[i], &x->rextent_sx[i])) return -1;
        }
        if (same_expr(d, x->value, y->value)) return -1;
        break;
    }
  }
  return 0;
}

void te_dyn_describe(const te_kernel_ir *k, fbxk_buf *b) {
  fbxk_printf(b, "/* ==== dynamic shapes: one kernel for every size; the IR is printed at the representative sizes");
  for (int j = 0; j < k->nsyms; j++)
    if (k->sym_input[j] >= 0) fbxk_printf(b, " s%d = %lld", j, (long long)PA[j]);
  fbxk_printf(b, "; kernel size arguments:");
  for (int i = 0; i < k->nsx; i++) {
    fbxk_printf(b, "%s is[%d] = ", i ? "," : "", k->ninputs + i);
    int any = 0;
    if (k->sx[i].c != 1) {
      fbxk_printf(b, "%lld", (long long)k->sx[i].c);
      any = 1;
    }
    for (int j = 0; j < TE_MAX_SYMS; j++)
      for (int e = 0; e < k->sx[i].e[j]; e++) {
        fbxk_printf(b, "%ss%d", any ? "*" : "", j);
        any = 1;
      }
  }
  fbxk_printf(b, " ==== */\n");
}

const char *te_dyn_match(te_kernel_ir *a, const te_kernel_ir *b, const fbxp_arg_spec *in, int32_t nin) {
  dyn d = {.a = a, .b = b};
  a->nsx = 0;
  a->nsyms = 0;
  for (int j = 0; j < TE_MAX_SYMS; j++) a->sym_input[j] = a->sym_dim[j] = -1;
  for (int i = 0; i < nin; i++)
    if (in[i].kind == FBXP_ARG_TENSOR)
      for (int dd = 0; dd < in[i].ndim; dd++) {
        if (!FBXP_IS_SYMBOL(in[i].sizes[dd])) continue;
        int id = FBXP_SYMBOL_ID(in[i].sizes[dd]);
        if (a->sym_input[id] >= 0) continue;
        a->sym_input[id] = i;
        a->sym_dim[id] = dd;
        if (id + 1 > a->nsyms) a->nsyms = id + 1;
      }
  if (a->nbufs != b->nbufs || a->ninputs != b->ninputs || a->noutputs != b->noutputs || a->nvars != b->nvars ||
      a->nlocals != b->nlocals)
    return "the kernels differ between sizes";
  for (int i = 0; i < a->ninputs; i++)
    if (a->input_kind[i] != b->input_kind[i] || a->input_buf[i] != b->input_buf[i])
      return "the kernels differ between sizes";
  for (int i = 0; i < a->noutputs; i++)
    if (a->output_buf[i] != b->output_buf[i]) return "the kernels differ between sizes";
  for (int i = 0; i < a->nbufs; i++) {
    te_buf *x = &a->bufs[i];
    const te_buf *y = &b->bufs[i];
    if (x->kind != y->kind || x->slot != y->slot || x->dtype != y->dtype || x->ndim != y->ndim || x->alias != y->alias)
      return "the kernels differ between sizes";
    for (int dd = 0; dd < x->ndim; dd++)
      if (sizex(&d, x->sizes[dd], y->sizes[dd], &x->sizes_sx[dd]) ||
          sizex(&d, x->strides[dd], y->strides[dd], &x->strides_sx[dd]))
        return d.why;
    if (sizex(&d, x->numel, y->numel, &x->numel_sx)) return d.why;
  }
  if (same_stmts(&d, a->root, b->root)) return d.why;
  /* every symbol a size expression uses is bound by an input */
  for (int i = 0; i < a->nsx; i++)
    for (int j = 0; j < TE_MAX_SYMS; j++)
      if (a->sx[i].e[j] && a->sym_input[j] < 0) return "a size that no input binds";
  return NULL;
}

int te_dyn_bind(const te_kernel_ir *k, const fbxp_arg *in, int32_t nin, int64_t *sxv, int64_t *sym) {
  for (int j = 0; j < TE_MAX_SYMS; j++) sym[j] = 0;
  for (int j = 0; j < k->nsyms; j++) {
    sym[j] = 0;
    int i = k->sym_input[j], d = k->sym_dim[j];
    if (i < 0) continue;
    if (i >= nin || in[i].kind != FBXP_ARG_TENSOR || !in[i].u.tensor || d >= in[i].u.tensor->ndim) return -1;
    sym[j] = in[i].u.tensor->shape[d];
  }
  for (int i = 0; i < k->nsx; i++) {
    int64_t v = k->sx[i].c;
    for (int j = 0; j < k->nsyms; j++)
      for (int e = 0; e < k->sx[i].e[j]; e++) v *= sym[j];
    sxv[i] = v;
  }
  return 0;
}

void te_dyn_buf(const te_buf *b, const int64_t *sxv, int64_t *sizes, int64_t *strides, int64_t *numel) {
  for (int d = 0; d < b->ndim; d++) {
    sizes[d] = b->sizes_sx[d] ? sxv[b->sizes_sx[d] - 1] : b->sizes[d];
    strides[d] = b->strides_sx[d] ? sxv[b->strides_sx[d] - 1] : b->strides[d];
  }
  if (numel) *numel = b->numel_sx ? sxv[b->numel_sx - 1] : b->numel;
}
