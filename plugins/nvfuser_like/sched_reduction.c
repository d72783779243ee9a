/* The reduction scheduler (and the kernel shape the persistent one shares).
 *
 * A segment with reductions over the axes R (rmask) and kept axes K is a set
 * of rows: rows = prod K, row length L = prod R. Values are in phases: phase
 * p computes, per row element, what depends on p reductions, and ends with
 * the reductions of those values; values uniform along R (the reductions'
 * results and what is computed from them alone) live at kernel scope.
 *   inner (R are the innermost axes): one work-group of `block` threads per
 *     row, each thread strided over the row; a reduction ends with a tree in
 *     local memory (block reduction with barriers), every thread then holds
 *     the result; uniform outputs are written by thread 0;
 *   outer: one thread per row (K flattened), a serial loop over the row per
 *     phase, no barriers.
 * Values a later phase needs are recomputed from the inputs unless the
 * persistent decision (sched_persistent.c) keeps them in local memory. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nvf.h"

static int vector_row_ok(const nvf_lctx *c, const nvf_params *p);

void nvf_sched_reduction_params(nvf_lctx *c) {
  const nvf_fusion *f = c->f;
  nvf_params *p = &c->pl->seg[c->s].p;
  p->kind = NVF_SCHED_REDUCTION;
  /* what the persistent decision and the lowering set: a segment scheduled
   * again (as for a GPU, FUSEBOX_NVF_NVRTC_CHECK) starts afresh */
  p->local_bytes = 0;
  p->out_rows = p->stream = p->nan_blind = 0;
  p->rmask = c->rmask;
  p->rows = p->row_len = 1;
  int max_kept = -1, min_red = NVF_MAX_DIMS;
  for (int a = 0; a < f->naxes; a++) {
    if (c->rmask >> a & 1) {
      p->row_len *= f->axis_extent[a];
      if (a < min_red) min_red = a;
    } else {
      p->rows *= f->axis_extent[a];
      max_kept = a;
    }
  }
  /* a CPU device runs a work-group's work-items one after another on a core:
   * a row per work-item reads it sequentially, without barriers or trees */
  p->cpu_row = max_kept < min_red && c->pl->cpu_rows;
  p->inner = max_kept < min_red && !p->cpu_row;
  p->lanes = p->cpu_row && p->row_len % NVF_LANES == 0 && p->row_len >= 2 * NVF_LANES ? NVF_LANES : 1;
  p->regs = 0;
  if (p->inner) {
    int b = 1;
    while (b < p->row_len && b < 256) b *= 2;
    p->block = b;
    p->groups = p->rows;
    /* CUDA: a thread's elements of the row in an unrolled loop of a known
     * count: its loads all in flight at once, and a kept row in registers */
    int64_t per = (p->row_len + b - 1) / b;
    if (c->k->dialect == FBXK_CUDA && per <= NVF_CUDA_ROW_REGS) p->regs = (int)per;
  } else {
    p->block = 64;
    p->groups = (p->rows + p->block - 1) / p->block;
  }
  p->vrow = vector_row_ok(c, p) ? NVF_VROW : 0;
  p->nphases = 1;
  const nvf_segment *sg = &c->pl->seg[c->s];
  for (int i = 0; i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    int ph = -1;
    if (x->kind == NVF_E_REDUCE && c->level[x->out] > c->level[x->in[0]]) ph = c->level[x->in[0]];
    else if (!nvf_uniform(c, x->out)) ph = c->level[x->out];
    if (ph + 1 > p->nphases) p->nphases = ph + 1;
  }
}

static int float_dt(int dt) { return dt == FBXK_F32 || dt == FBXK_F64; }

/* May a CPU row's loops compute on OpenCL vectors of NVF_VROW lanes? One
 * reduced axis, the innermost, a multiple of NVF_VROW long; every value
 * varying along it float32/float64 from an op with a vector form; every
 * tensor read or written along it contiguous there. */
static int vector_row_ok(const nvf_lctx *c, const nvf_params *p) {
  const nvf_fusion *f = c->f;
  int last = f->naxes - 1;
  if (c->k->dialect != FBXK_OPENCL || !p->cpu_row || p->lanes != NVF_LANES || c->pl->disable_vec || last < 0 ||
      c->rmask != 1u << last || p->row_len % NVF_VROW != 0)
    return 0;
  const nvf_segment *sg = &c->pl->seg[c->s];
  for (int i = 0; i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    int o = x->out;
    if (nvf_uniform(c, o)) continue;
    if (!float_dt(f->tv[o].dtype)) return 0;
    if (x->kind == NVF_E_REDUCE && !float_dt(x->cdtype)) return 0;
    if (x->kind == NVF_E_PW && x->op >= 0 && !fbxk_op_vectorizable(x->op, x->cdtype)) return 0;
    if (c->pl->materialize[o] && nvf_tv_axis_stride(c, o, last) != 1) return 0;
    for (int a = 0; a < x->nin; a++) {
      int t = x->in[a];
      if (f->tv[t].scalar || f->tv[t].is_const || nvf_uniform(c, t)) continue;
      if (!float_dt(f->tv[t].dtype)) return 0;
      if (!nvf_in_seg(c, t) && nvf_tv_axis_stride(c, t, last) != 1) return 0;
    }
  }
  return 1;
}

static int is_phase_reduce(const nvf_lctx *c, int e, int phase) {
  const nvf_expr *x = &c->f->ex[e];
  return x->kind == NVF_E_REDUCE && c->level[x->out] > c->level[x->in[0]] && c->level[x->in[0]] == phase;
}

static void print_init(fbxk_buf *b, nvf_red red, int dt, fbxk_dialect d) {
  if (red == NVF_RED_SUM) {
    if (fbxk_is_float(dt)) fbxk_print_float(b, 0.0, dt, d);
    else fbxk_print_int(b, 0);
  } else if (fbxk_is_float(dt)) {
    fbxk_print_float(b, red == NVF_RED_MAX ? -INFINITY : INFINITY, dt, d);
  } else {
    fbxk_print_int(b, red == NVF_RED_MAX ? INT64_MIN : INT64_MAX);
  }
}

/* the combination of a and b (compute representation of dt) */
void nvf_print_combine(fbxk_buf *b, nvf_red red, int dt, fbxk_dialect d, const char *x, const char *y) {
  const char *args[2] = {x, y};
  if (red == NVF_RED_SUM) fbxk_op_print(b, FBXK_OP_ADD_T, dt, d, args);
  else fbxk_op_print(b, red == NVF_RED_MAX ? FBXK_OP_MAXIMUM : FBXK_OP_MINIMUM, dt, d, args);
}

/* Values uniform along the row (statistics and what is computed from them)
 * at kernel scope once they can be, so that the loops do not recompute
 * them per element; those that are outputs are stored (by thread 0). */
static void store_uniform(nvf_lctx *c, int level, int inner) {
  const nvf_segment *sg = &c->pl->seg[c->s];
  for (int i = 0; i < sg->nexprs; i++) {
    int t = c->f->ex[sg->exprs[i]].out;
    if (nvf_uniform(c, t) && c->level[t] == level && c->f->ex[sg->exprs[i]].kind == NVF_E_PW) nvf_emit_value(c, t);
  }
  for (int i = 0; i < sg->nexprs; i++) {
    int t = c->f->ex[sg->exprs[i]].out;
    if (!c->pl->materialize[t] || !nvf_uniform(c, t) || c->level[t] != level) continue;
    nvf_emit_value(c, t);
    if (inner) nvf_kir_add(c->k, NVF_K_IF, "tid == 0", NULL, NULL, NULL);
    nvf_emit_store(c, t);
    if (inner) nvf_kir_close(c->k);
  }
}

/* A value kept for later phases: p<t>[j] (a vector row: its lanes from j on),
 * or its place in its home output row. */
static void persist_store(nvf_lctx *c, int t) {
  const char *v = nvf_emit_value(c, t);
  if (c->row_home[t] >= 0) { /* in its home output row */
    int vec = nvf_is_vec(c, t);
    char *a = nvf_home_addr(c, t, vec);
    fbxk_buf b = {0};
    if (vec) fbxk_print_vstore(&b, c->f->tv[t].dtype, c->vw, a ? a : "x", v);
    else fbxk_print_store(&b, c->f->tv[t].dtype, a ? a : "x", v, c->k->dialect);
    fbxk_free(a);
    char *s = fbxk_take(&b);
    if (!s) c->k->oom = 1;
    else nvf_kir_stmt(c->k, "%s", s);
    fbxk_free(s);
    return;
  }
  if (!nvf_is_vec(c, t)) {
    nvf_kir_stmt(c->k, "p%d[%s] = %s;", t, c->row_index, v);
    return;
  }
  char ptr[32];
  snprintf(ptr, sizeof ptr, "p%d + j", t);
  fbxk_buf b = {0};
  fbxk_print_vstore(&b, c->f->tv[t].dtype, c->vw, ptr, v);
  char *s = fbxk_take(&b);
  if (!s) c->k->oom = 1;
  else nvf_kir_stmt(c->k, "%s", s);
  fbxk_free(s);
}

/* ---- maxima whose NaN test no output can see ------------------------------------------------- */

/* Does a NaN operand of x make its result NaN? (operands only; a cast to a
 * float dtype and a broadcast carry the value) */
static int nan_carrying(const nvf_fusion *f, const nvf_expr *x) {
  if (x->kind == NVF_E_BCAST) return 1;
  if (x->kind != NVF_E_PW) return 0;
  if (x->op < 0) return fbxk_is_float(f->tv[x->out].dtype);
  switch (x->op) {
  case FBXK_OP_ADD_T: case FBXK_OP_SUB_T: case FBXK_OP_MUL_T: case FBXK_OP_DIV_T:
  case FBXK_OP_NEG: case FBXK_OP_EXP: case FBXK_OP_LOG: case FBXK_OP_RECIPROCAL:
    return 1;
  default:
    return 0;
  }
}

/* r[t] = 1 for `from` and every value the segment computes from it, element
 * for element, through NaN-carrying operations (carry) or any (!carry). */
static void reach(const nvf_lctx *c, int from, int carry, unsigned char *r) {
  const nvf_fusion *f = c->f;
  const nvf_segment *sg = &c->pl->seg[c->s];
  memset(r, 0, (size_t)f->ntv);
  r[from] = 1;
  for (int i = 0; i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    if (carry && !nan_carrying(f, x)) continue;
    int n = carry && x->kind == NVF_E_PW ? x->noperands : x->nin;
    for (int a = 0; a < n && !r[x->out]; a++) r[x->out] = r[x->in[a]];
  }
}

/* A max (or min) m of a float row x may skip the NaN test (one instruction
 * a step where the test takes three: the max phase of softmax, PyTorch,
 * [4096, 1024], the kernel alone: about 7% of its time) when nothing it
 * writes can tell: m is not written, and some sum S in the segment adds
 * values that are NaN wherever x is (exp(x - m): a chain of NaN-carrying
 * operations from x), and every output that m reaches is NaN wherever S
 * is. A NaN in x then makes S NaN, hence every output m reaches, whatever
 * m was (softmax, log_softmax). The max without the test still is the max
 * of the row's other values, so exp(x - m) keeps x - m <= 0. */
static void find_nan_blind(nvf_lctx *c) {
  const nvf_fusion *f = c->f;
  const nvf_segment *sg = &c->pl->seg[c->s];
  nvf_params *p = &c->pl->seg[c->s].p;
  p->nan_blind = 0;
  if (!p->cpu_row) return; /* a CPU row's loops (a GPU's threads keep the test) */
  size_t n = (size_t)f->ntv;
  unsigned char *rx = nvf_host->alloc(n), *rm = nvf_host->alloc(n), *rs = nvf_host->alloc(n);
  for (int i = 0; rx && rm && rs && i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    if (x->kind != NVF_E_REDUCE || x->red == NVF_RED_SUM || !fbxk_is_float(x->cdtype) || c->pl->materialize[x->out])
      continue;
    reach(c, x->in[0], 1, rx);
    reach(c, x->out, 0, rm);
    for (int j = 0; j < sg->nexprs && !c->nan_blind[x->out]; j++) {
      const nvf_expr *s = &f->ex[sg->exprs[j]];
      if (s->kind != NVF_E_REDUCE || s->red != NVF_RED_SUM || !rx[s->in[0]]) continue;
      reach(c, s->out, 1, rs);
      int ok = 1;
      for (int t = 0; t < f->ntv && ok; t++)
        if (rm[t] && c->pl->materialize[t] && nvf_in_seg(c, t) && !rs[t]) ok = 0;
      if (ok) c->nan_blind[x->out] = 1, p->nan_blind++;
    }
  }
  nvf_host->free(rx);
  nvf_host->free(rm);
  nvf_host->free(rs);
}

/* acc = the larger (smaller) of acc and v without the NaN test, for a
 * nan_blind reduction: `v > acc ? v : acc` (x86: one vmaxps) */
static void print_blind_combine(fbxk_buf *b, nvf_red red, const char *acc, const char *v) {
  fbxk_printf(b, "(((%s) %s (%s)) ? (%s) : (%s))", v, red == NVF_RED_MAX ? ">" : "<", acc, v, acc);
}

/* A vector row's accumulator lanes for reduction e: a sum keeps the 8 lanes
 * of the scalar kernel (the same rounding); a max or min, whose value does
 * not depend on the order, takes a lane per vector lane: no chain of two
 * NaN-aware selects per step (the max phase streams the row from memory). */
static int acc_lanes(const nvf_lctx *c, int e) {
  const nvf_params *p = &c->pl->seg[c->s].p;
  return c->f->ex[e].red == NVF_RED_SUM ? p->lanes : p->vrow;
}

/* Vectors per step of a vector row loop in phase ph: 4 when the phase
 * takes a max or a min and the row is a whole number of 4 vectors, else 1.
 * A max's accumulator is one chain of dependent NaN-aware selects (compare,
 * mask or, blend: about 5 cycles a vector on this project's CPU), which
 * bounds the pass that streams the row from memory; four accumulators
 * (accu<e>[4], registers once the unrolled inner loop is flattened) are
 * four chains. The order of a max does not matter, and sums in the same
 * phase still add their vectors in row order. PoCL, softmax [4096, 1024],
 * 2 threads, the kernel alone in a loop of its own (session 18, fastest of
 * 100 runs, three rounds): 1.26-1.30 ms -> 1.13-1.24 ms. */
static int phase_unroll(const nvf_lctx *c, int ph) {
  const nvf_params *p = &c->pl->seg[c->s].p;
  const nvf_segment *sg = &c->pl->seg[c->s];
  if (!p->vrow || p->row_len % (4 * p->vrow)) return 1;
  for (int i = 0; i < sg->nexprs; i++) {
    int e = sg->exprs[i];
    if (is_phase_reduce(c, e, ph) && c->f->ex[e].red != NVF_RED_SUM) return 4;
  }
  return 1;
}

/* Reduction e of value v in a vector row loop: the accumulator accv<e> has
 * the lanes' count of lanes (8), v twice as many or more: each group of 8
 * combined in order, so lane l sees elements l, l + 8, l + 16, ... as the
 * scalar lanes do (the same sums, bit for bit). */
static void reduce_vec(nvf_lctx *c, int e, const char *v, int unroll) {
  const nvf_expr *x = &c->f->ex[e];
  const nvf_params *p = &c->pl->seg[c->s].p;
  fbxk_dialect d = c->k->dialect;
  int in = x->in[0];
  fbxk_buf cb = {0};
  if (!nvf_is_vec(c, in)) fbxk_print_cast(&cb, x->cdtype, v, d); /* the same value in every lane */
  else if (c->f->tv[in].dtype == x->cdtype) fbxk_puts(&cb, v);
  else fbxk_print_vcast(&cb, x->cdtype, p->vrow, v);
  char *cv = fbxk_take(&cb);
  char name[24], acc[24];
  snprintf(name, sizeof name, "rv%d", e);
  if (unroll > 1 && x->red != NVF_RED_SUM) snprintf(acc, sizeof acc, "accu%d[u]", e);
  else snprintf(acc, sizeof acc, "accv%d", e);
  const char *vt = fbxk_vector_type(x->cdtype, p->vrow);
  if (nvf_is_vec(c, in)) nvf_kir_stmt(c->k, "const %s %s = %s;", vt ? vt : "?", name, cv ? cv : "0");
  else nvf_kir_stmt(c->k, "const %s %s = (%s)(%s);", vt ? vt : "?", name, vt ? vt : "?", cv ? cv : "0");
  fbxk_free(cv);
  int al = acc_lanes(c, e), ng = p->vrow / al;
  for (int g = 0; g < ng; g++) {
    char part[48];
    if (ng == 1) snprintf(part, sizeof part, "%s", name);
    else if (ng == 2) snprintf(part, sizeof part, "%s.%s", name, g ? "hi" : "lo");
    else snprintf(part, sizeof part, "%s.%s.%s", name, g / 2 ? "hi" : "lo", g % 2 ? "hi" : "lo");
    const char *args[2] = {acc, part};
    fbxk_buf b = {0};
    if (x->red == NVF_RED_SUM) fbxk_op_print_vec(&b, FBXK_OP_ADD_T, x->cdtype, al, d, args);
    else if (c->nan_blind[x->out]) print_blind_combine(&b, x->red, acc, part);
    else fbxk_op_print_vec(&b, x->red == NVF_RED_MAX ? FBXK_OP_MAXIMUM : FBXK_OP_MINIMUM, x->cdtype, al, d, args);
    char *s = fbxk_take(&b);
    if (!s) c->k->oom = 1;
    else nvf_kir_stmt(c->k, "%s = %s;", acc, s);
    fbxk_free(s);
  }
}

/* x = combine(x, y) for reduction red on w lanes (w = 1: scalars). */
static void combine_stmt(nvf_lctx *c, nvf_red red, int dt, int w, const char *decl, const char *x, const char *a,
                         const char *b) {
  const char *args[2] = {a, b};
  fbxk_buf pb = {0};
  if (w == 1) nvf_print_combine(&pb, red, dt, c->k->dialect, a, b);
  else fbxk_op_print_vec(&pb, red == NVF_RED_SUM ? FBXK_OP_ADD_T : red == NVF_RED_MAX ? FBXK_OP_MAXIMUM : FBXK_OP_MINIMUM,
                         dt, w, c->k->dialect, args);
  char *s = fbxk_take(&pb);
  if (!s) c->k->oom = 1;
  else nvf_kir_stmt(c->k, "%s%s = %s;", decl, x, s);
  fbxk_free(s);
}

/* After a phase's loop: reduction e's lanes into acc<e>, pairwise (lane k
 * with lane k + L/2, then k + L/4, ...), then into acc<e>'s initial value:
 * log2(L) dependent steps where a chain over the lanes took L (a row's
 * fixed cost: 32 dependent adds were about 5% of a softmax row of 1024 on
 * PoCL). The scalar-lane kernel (accl<e>[L]) folds in the same order as
 * the vector one (accv<e>: .lo with .hi), so a sum has the same bits in
 * both. */
static void fold_lanes(nvf_lctx *c, int e, int lanes) {
  const nvf_params *p = &c->pl->seg[c->s].p;
  const nvf_expr *x = &c->f->ex[e];
  fbxk_dialect d = c->k->dialect;
  char acc[24], cur[24], nx[24], lo[32], hi[32], decl[48];
  snprintf(acc, sizeof acc, "acc%d", e);
  if (!p->vrow) {
    char l0[24], lw[32];
    snprintf(l0, sizeof l0, "accl%d[l]", e);
    snprintf(lw, sizeof lw, "accl%d[l + w]", e);
    fbxk_buf pb = {0};
    nvf_print_combine(&pb, x->red, x->cdtype, d, l0, lw);
    char *s = fbxk_take(&pb);
    if (!s) c->k->oom = 1;
    else nvf_kir_stmt(c->k, "for (int w = %d; w >= 1; w /= 2) for (int l = 0; l < w; l++) %s = %s;", lanes / 2, l0, s);
    fbxk_free(s);
    snprintf(l0, sizeof l0, "accl%d[0]", e);
    combine_stmt(c, x->red, x->cdtype, 1, "", acc, acc, l0);
    return;
  }
  snprintf(cur, sizeof cur, "accv%d", e);
  for (int w = acc_lanes(c, e); w > 1; w /= 2) {
    int h = w / 2;
    const char *ty = h > 1 ? fbxk_vector_type(x->cdtype, h) : fbxk_compute_type(x->cdtype, d);
    snprintf(nx, sizeof nx, "fv%d_%d", e, h);
    snprintf(lo, sizeof lo, "%s.lo", cur);
    snprintf(hi, sizeof hi, "%s.hi", cur);
    snprintf(decl, sizeof decl, "const %s ", ty ? ty : "?");
    combine_stmt(c, x->red, x->cdtype, h, decl, nx, lo, hi);
    snprintf(cur, sizeof cur, "%s", nx);
  }
  combine_stmt(c, x->red, x->cdtype, 1, "", acc, acc, cur);
}

/* One FBXK_PREFETCH-style statement per cache line of the vector at t's
 * current element, `ahead` elements further. */
static void prefetch_lines(nvf_lctx *c, const nvf_params *p, int t, const char *macro, int64_t ahead) {
  int per_line = c->f->tv[t].dtype == FBXK_F64 ? 8 : 16;
  for (int e = 0; e < p->vrow; e += per_line) {
    fbxk_buf b = {0};
    fbxk_printf(&b, "%s(%s, ", macro, c->k->pname[c->param_of[t]]);
    nvf_offset(c, t, &b);
    if (ahead + e) fbxk_printf(&b, " + %lld", (long long)(ahead + e));
    fbxk_puts(&b, ");");
    char *s = fbxk_take(&b);
    if (!s) c->k->oom = 1;
    else nvf_kir_stmt(c->k, "%s", s);
    fbxk_free(s);
  }
}

/* A vector row's loop asks for the next row's lines of the inputs it
 * streams (the second pass over the row, or the only one): the work-group's
 * next work-item reads that row, and a CPU's prefetchers stop at the page
 * boundary a 4 KiB row ends at, so its first pass would wait on memory at
 * every line. Inputs laid out row after row only (the next row is row_len
 * further). */
static void prefetch_next_rows(nvf_lctx *c, const nvf_params *p) {
  const nvf_fusion *f = c->f;
  int last = f->naxes - 1;
  for (int t = 0; t < f->ntv; t++) {
    if (c->param_of[t] < 0 || nvf_in_seg(c, t) || f->tv[t].scalar || !nvf_tv_has_axis(&f->tv[t], last) ||
        !nvf_tv_flat(c, t) || !float_dt(f->tv[t].dtype))
      continue;
    prefetch_lines(c, p, t, "FBXK_PREFETCH", p->row_len);
  }
  /* and the lines of an output row this work-item writes in a later phase
   * (for writing: they come from memory while this pass computes) */
  for (int t = 0; t < f->ntv && !p->stream; t++) /* (a kept row's home is written in this pass already;
                                                 streamed outputs are never read) */
    if (c->pl->materialize[t] && nvf_in_seg(c, t) && c->level[t] > c->phase && nvf_tv_flat(c, t) &&
        float_dt(f->tv[t].dtype) && c->holds[t] < 0)
      prefetch_lines(c, p, t, "FBXK_PREFETCH_W", 0);
}

fbxp_status *nvf_sched_reduction_lower(nvf_lctx *c) {
  const nvf_fusion *f = c->f;
  const nvf_params *p = &c->pl->seg[c->s].p;
  const nvf_segment *sg = &c->pl->seg[c->s];
  nvf_kernel_ir *k = c->k;
  fbxk_dialect d = k->dialect;
  unsigned all = (1u << f->naxes) - 1;
  char buf[160], blk[24], len[24];
  snprintf(blk, sizeof blk, "%d", p->block);
  snprintf(len, sizeof len, "%lld", (long long)p->row_len);
  find_nan_blind(c);
  /* local memory first: persistent rows, reduction scratch */
  for (int t = 0; t < f->ntv; t++)
    if (c->persist[t] && c->row_home[t] < 0) {
      snprintf(buf, sizeof buf, "p%d", t);
      nvf_knode *n = nvf_kir_add(k, p->cpu_row || p->regs ? NVF_K_PRIVATE : NVF_K_LOCAL, buf, NULL, NULL, NULL);
      if (n) n->dtype = f->tv[t].dtype, n->n = p->regs ? p->regs : p->row_len;
    }
  if (p->inner)
    for (int i = 0; i < sg->nexprs; i++) {
      int e = sg->exprs[i];
      if (!is_phase_reduce(c, e, c->level[f->ex[e].in[0]])) continue;
      snprintf(buf, sizeof buf, "r%d", e);
      nvf_knode *n = nvf_kir_add(k, NVF_K_LOCAL, buf, NULL, NULL, NULL);
      if (n) n->dtype = f->ex[e].cdtype, n->n = p->block;
    }
  if (p->inner) {
    nvf_kir_stmt(k, "const int64_t row = (int64_t)(%s);", nvf_idx(c, 2));
    nvf_kir_stmt(k, "const int64_t tid = (int64_t)(%s);", nvf_idx(c, 1));
  } else {
    nvf_kir_stmt(k, "const int64_t row = (int64_t)(%s);", nvf_idx(c, 0));
    snprintf(buf, sizeof buf, "row < %lld", (long long)p->rows);
    nvf_kir_add(k, NVF_K_IF, buf, NULL, NULL, NULL);
  }
  nvf_emit_axes(c, all & ~c->rmask, "row");
  c->row_index = p->regs ? "k" : "j";
  c->phase = 0;
  store_uniform(c, 0, p->inner);
  char nl[16];
  snprintf(nl, sizeof nl, "%d", p->lanes);
  for (int ph = 0; ph < p->nphases; ph++) {
    c->phase = ph;
    int lanes = 0; /* this phase reduces: its loop in lanes */
    int unroll = phase_unroll(c, ph);
    for (int i = 0; i < sg->nexprs; i++) {
      int e = sg->exprs[i];
      if (!is_phase_reduce(c, e, ph)) continue;
      fbxk_buf b = {0};
      print_init(&b, f->ex[e].red, f->ex[e].cdtype, d);
      char *s = fbxk_take(&b);
      const char *ct = fbxk_compute_type(f->ex[e].cdtype, d);
      nvf_kir_stmt(k, "%s acc%d = %s;", ct, e, s ? s : "0");
      if (p->vrow) { /* the lanes as one vector: lane l accumulates elements l, l + 8, ... as before */
        const char *vt = fbxk_vector_type(f->ex[e].cdtype, acc_lanes(c, e));
        if (unroll > 1 && f->ex[e].red != NVF_RED_SUM) {
          nvf_kir_stmt(k, "%s accu%d[%d];", vt ? vt : "?", e, unroll);
          nvf_kir_stmt(k, "for (int u = 0; u < %d; u++) accu%d[u] = (%s)(acc%d);", unroll, e, vt ? vt : "?", e);
        } else {
          nvf_kir_stmt(k, "%s accv%d = (%s)(acc%d);", vt ? vt : "?", e, vt ? vt : "?", e);
        }
        lanes = p->lanes;
      } else if (p->lanes > 1) {
        nvf_kir_stmt(k, "%s accl%d[%d];", ct, e, p->lanes);
        nvf_kir_stmt(k, "for (int l = 0; l < %d; l++) accl%d[l] = acc%d;", p->lanes, e, e);
        lanes = p->lanes;
      }
      fbxk_free(s);
    }
    char vs[16];
    snprintf(vs, sizeof vs, "%d", p->vrow);
    if (p->vrow && unroll > 1) {
      char us[16], ns[16];
      snprintf(us, sizeof us, "%d", unroll * p->vrow);
      snprintf(ns, sizeof ns, "%d", unroll);
      nvf_kir_add(k, NVF_K_FOR, "j0", "0", len, us);
      nvf_kir_stmt(k, "#pragma unroll");
      nvf_kir_add(k, NVF_K_FOR, "u", "0", ns, "1");
      nvf_kir_stmt(k, "const long j = j0 + u * %d;", p->vrow);
    } else if (p->vrow) {
      nvf_kir_add(k, NVF_K_FOR, "j", "0", len, vs);
    } else if (lanes) {
      nvf_kir_add(k, NVF_K_FOR, "j0", "0", len, nl);
      nvf_kir_add(k, NVF_K_FOR, "l", "0", nl, "1");
      nvf_kir_stmt(k, "const long j = j0 + l;");
    } else if (p->regs) {
      char nk[16];
      snprintf(nk, sizeof nk, "%d", p->regs);
      nvf_kir_stmt(k, "#pragma unroll");
      nvf_kir_add(k, NVF_K_FOR, "k", "0", nk, "1");
      nvf_kir_stmt(k, "const int64_t j = tid + k * %d;", p->block);
      if (p->row_len % p->block) {
        snprintf(buf, sizeof buf, "j < %lld", (long long)p->row_len);
        nvf_kir_add(k, NVF_K_IF, buf, NULL, NULL, NULL);
      }
    } else {
      nvf_kir_add(k, NVF_K_FOR, "j", p->inner ? "tid" : "0", len, p->inner ? blk : "1");
    }
    c->scope = 2;
    c->vw = p->vrow;
    nvf_emit_axes(c, c->rmask, "j");
    if (p->vrow && ph == (p->nphases > 1 ? 1 : 0)) prefetch_next_rows(c, p);
    /* kept values that live in an output row are loaded before anything of
     * the element is stored: a value is otherwise loaded where it is first
     * used, which may come after its home's store (layer_norm(x) + relu(x):
     * relu(x) kept in the layer norm's output row) */
    if (ph == p->nphases - 1)
      for (int t = 0; t < f->ntv; t++)
        if (c->persist[t] && c->row_home[t] >= 0 && c->level[t] < ph) nvf_emit_value(c, t);
    for (int i = 0; i < sg->nexprs; i++) {
      int e = sg->exprs[i];
      const nvf_expr *x = &f->ex[e];
      if (is_phase_reduce(c, e, ph)) {
        const char *v = nvf_emit_value(c, x->in[0]);
        fbxk_buf cb = {0}, b = {0};
        if (p->vrow) {
          reduce_vec(c, e, v, unroll);
          goto stored;
        }
        fbxk_print_cast(&cb, x->cdtype, v, d);
        char *cv = fbxk_take(&cb);
        char acc[24];
        snprintf(acc, sizeof acc, lanes ? "accl%d[l]" : "acc%d", e);
        if (c->nan_blind[x->out] && x->red != NVF_RED_SUM) print_blind_combine(&b, x->red, acc, cv ? cv : "0");
        else nvf_print_combine(&b, x->red, x->cdtype, d, acc, cv ? cv : "0");
        char *s = fbxk_take(&b);
        nvf_kir_stmt(k, "%s = %s;", acc, s ? s : "0");
        fbxk_free(cv);
        fbxk_free(s);
      }
    stored:;
      int t = x->out;
      if (c->level[t] == ph && !nvf_uniform(c, t)) {
        if (c->persist[t]) persist_store(c, t);
        if (c->pl->materialize[t]) nvf_emit_store(c, t);
      }
    }
    /* persistent inputs of the segment: loaded once in phase 0 */
    if (ph == 0)
      for (int t = 0; t < f->ntv; t++)
        if (c->persist[t] && !nvf_in_seg(c, t)) persist_store(c, t);
    nvf_kir_close(k);
    if ((lanes && !p->vrow) || (p->vrow && unroll > 1)) nvf_kir_close(k);
    if (p->regs && p->row_len % p->block) nvf_kir_close(k);
    nvf_scope_exit(c);
    c->scope = 1;
    c->vw = 0;
    for (int i = 0; i < sg->nexprs && lanes; i++) {
      int e = sg->exprs[i];
      if (!is_phase_reduce(c, e, ph)) continue;
      if (p->vrow && unroll > 1 && f->ex[e].red != NVF_RED_SUM) { /* the accumulators into one, then its lanes */
        const char *vt = fbxk_vector_type(f->ex[e].cdtype, p->vrow);
        nvf_kir_stmt(k, "%s accv%d = accu%d[0];", vt ? vt : "?", e, e);
        for (int u = 1; u < unroll; u++) {
          char a[24], b2[24];
          snprintf(a, sizeof a, "accv%d", e);
          snprintf(b2, sizeof b2, "accu%d[%d]", e, u);
          combine_stmt(c, f->ex[e].red, f->ex[e].cdtype, p->vrow, "", a, a, b2);
        }
      }
      fold_lanes(c, e, lanes);
    }
    for (int i = 0; i < sg->nexprs; i++) {
      int e = sg->exprs[i];
      if (!is_phase_reduce(c, e, ph)) continue;
      char acc[24], r[24];
      snprintf(acc, sizeof acc, "acc%d", e);
      snprintf(r, sizeof r, "r%d", e);
      if (p->inner) {
        nvf_knode *n = nvf_kir_add(k, NVF_K_BLOCK_REDUCE, acc, r, "tid", NULL);
        if (n) n->dtype = f->ex[e].cdtype, n->red = (int)f->ex[e].red, n->n = p->block;
      }
      int o = f->ex[e].out;
      nvf_kir_stmt(k, "const %s v%d = %s;", fbxk_compute_type(f->tv[o].dtype, d), o, acc);
      snprintf(c->names[o], sizeof c->names[o], "v%d", o);
      c->avail[o] = 1;
    }
    store_uniform(c, ph + 1, p->inner);
  }
  /* one fence a work-group, after its last work-item's row (PoCL runs a
   * work-group's work-items in order on one thread): a fence waits for the
   * streamed stores to drain, and after every row it cost 15% of a softmax
   * kernel's time (the kernel alone, PoCL, [4096, 1024]); once a group of 4,
   * about 3%, and groups of 32 gained another 4% (sched_persistent.c);
   * outside the row's test: the last work-item may have no row) */
  if (!p->inner) nvf_kir_close(k);
  if (p->stream) nvf_kir_stmt(k, "if (get_local_id(0) == get_local_size(0) - 1) FBXK_STREAM_FENCE();");
  return NULL;
}
