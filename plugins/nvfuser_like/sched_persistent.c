/* The persistent normalization scheduler's decision: in an inner reduction
 * segment with more than one phase (softmax: max, then sum of exp, then the
 * division; layer norm: mean, variance, then the affine epilogue), the row
 * values that a later phase uses (the input row itself, exp(x - max), x -
 * mean) are kept in local memory when they fit in `persist_limit` bytes:
 * the row is read from global memory once and each value computed once.
 * When they do not fit (or FUSEBOX_NVF_DISABLE=persistent), the reduction
 * scheduler recomputes them from the inputs in each phase. With a row per
 * work-item (a CPU device) the kept rows are the work-item's private arrays:
 * what is saved then is the recomputation (exp(x - max) in softmax), since
 * the row itself is read again from the core's cache (and so is a cast of
 * it, or a few additions of it: layer norm's x - mean in float64, recomputed
 * for less than its store and load cost), and the work-group is made
 * smaller when its work-items' arrays would not stay in the cache. */
#include "nvf.h"

/* Is t, up to `depth` operations deep, casts, negations, sums, differences
 * and products of segment inputs, constants and row-uniform values (each
 * recomputed in a cycle or two from a row in the core's cache)? */
static int cheap_from_inputs(const nvf_lctx *c, int t, int depth) {
  const nvf_fusion *f = c->f;
  if (!nvf_in_seg(c, t) || f->tv[t].scalar || f->tv[t].is_const || nvf_uniform(c, t)) return 1;
  if (depth == 0) return 0;
  const nvf_expr *x = &f->ex[f->tv[t].def];
  if (x->kind == NVF_E_BCAST) return cheap_from_inputs(c, x->in[0], depth);
  if (x->kind != NVF_E_PW) return 0;
  if (x->op >= 0 && x->op != FBXK_OP_NEG && x->op != FBXK_OP_ADD_T && x->op != FBXK_OP_SUB_T && x->op != FBXK_OP_MUL_T)
    return 0;
  for (int a = 0; a < x->nin; a++)
    if (!cheap_from_inputs(c, x->in[a], depth - 1)) return 0;
  return 1;
}

/* Bytes of t's elements (its iteration domains; a reduced or broadcast
 * domain holds one). */
static int64_t tv_bytes(const nvf_tv *tv) {
  int64_t n = fbxk_dtype_size(tv->dtype);
  for (int d = 0; d < tv->nd; d++)
    if (tv->dom[d].type == NVF_ID_ITER) n *= tv->dom[d].extent;
  return n;
}

static int home_dtype(int dt) { return dt == FBXK_F32 || dt == FBXK_F64; }

void nvf_sched_persistent_decide(nvf_lctx *c) {
  const nvf_fusion *f = c->f;
  nvf_params *p = &c->pl->seg[c->s].p;
  if ((!p->inner && !p->cpu_row) || p->nphases < 2 || c->pl->disable_persist) return;
  const nvf_segment *sg = &c->pl->seg[c->s];
  unsigned char *want = c->persist;
  for (int i = 0; i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    int use_phase;
    if (x->kind == NVF_E_REDUCE && c->level[x->out] > c->level[x->in[0]]) use_phase = c->level[x->in[0]];
    else if (!nvf_uniform(c, x->out)) use_phase = c->level[x->out];
    else continue;
    for (int a = 0; a < x->nin; a++) {
      int t = x->in[a];
      if (f->tv[t].scalar || nvf_uniform(c, t)) continue;
      /* a broadcast is an alias: keep what it aliases */
      while (nvf_in_seg(c, t) && f->ex[f->tv[t].def].kind == NVF_E_BCAST) t = f->ex[f->tv[t].def].in[0];
      /* a row per work-item reads an input row again from its core's cache:
       * only computed values are worth keeping (not an input's cast, nor a
       * few additions or products of it: layer norm's x - mean) */
      if (p->cpu_row && cheap_from_inputs(c, t, 4)) continue;
      if (c->level[t] < use_phase) want[t] = 1;
    }
  }
  int64_t bytes = 0;
  for (int t = 0; t < f->ntv; t++)
    if (want[t]) bytes += p->row_len * (f->tv[t].dtype == FBXK_F64 || !fbxk_is_float(f->tv[t].dtype) ? 8 : 4);
  /* A CPU work-item's row that every phase reads from its core's cache
   * (nothing worth a private array: layer norm recomputes x - mean) is
   * still the persistent schedule: the row comes from memory once. */
  int64_t row_bytes = p->row_len * 8;
  int cached_row = p->cpu_row && bytes == 0 && row_bytes <= c->pl->persist_limit;
  if ((bytes == 0 && !cached_row) || bytes > c->pl->persist_limit) {
    for (int t = 0; t < f->ntv; t++) want[t] = 0;
    return;
  }
  p->kind = NVF_SCHED_PERSISTENT;
  p->local_bytes = bytes;
  /* An output too large to stay in the cache (the kernel reads and writes
   * at least the device's cache size: PoCL reports its CPU's last level)
   * is written in the last phase with non-temporal stores: an ordinary
   * store first reads the line from memory, three transfers a value for a
   * row read once and written once where two will do. Its rows are then not kept values'
   * homes (a home is written in an earlier phase and read back): private
   * arrays hold them. PoCL, [4096, 1024], 2 threads, the kernel alone in
   * hand-written variants, 300 alternated runs (5th percentile): softmax
   * with exp(x - max) in the output row 0.98 ms, in a private array with
   * the output streamed 0.89 ms. The work-group's last work-item fences
   * the streamed stores (FBXK_STREAM_FENCE waits for them to drain), so
   * a larger group fences less often: work-groups of 4 rows (private
   * arrays within 16 KiB) against 16 or 32 (the NVF_CPU_PRIVATE bound
   * below), the same softmax, 3 rounds of 300 alternated runs: 0.90-0.94
   * ms against 0.86-0.89 (5th percentile), 0.97-1.04 against 0.93-1.00
   * (median). */
  if (p->cpu_row && p->vrow && c->pl->stream_bytes > 0) {
    int64_t io = 0;
    for (int t = 0; t < f->ntv; t++) {
      int in_seg = nvf_in_seg(c, t);
      if (c->param_of[t] >= 0 && !f->tv[t].scalar && (!in_seg || c->pl->materialize[t])) io += tv_bytes(&f->tv[t]);
    }
    p->stream = io >= c->pl->stream_bytes;
  }
  if (p->cpu_row) {
    /* A kept row whose last reader is the last phase, which also writes an
     * output row of the same dtype and layout: the work-item keeps the
     * value in that output row instead of a private array. The last phase
     * loads the value at j before it stores anything at j (the reduction
     * scheduler loads such values first; a value is loaded once per element
     * and reused), and nothing reads it after. So
     * the output's lines come into the cache while the row is computed
     * (softmax: exp(x - max) is written there), not in a final pass of
     * stores that each wait for a line from memory. */
    int last = p->nphases - 1;
    for (int t = 0; t < f->ntv && !p->stream; t++) {
      if (!want[t] || c->level[t] >= last || !home_dtype(f->tv[t].dtype)) continue;
      for (int o = 0; o < f->ntv; o++) {
        if (!c->pl->materialize[o] || !nvf_in_seg(c, o) || c->level[o] != last || f->tv[o].dtype != f->tv[t].dtype ||
            !nvf_tv_flat(c, o) || c->holds[o] >= 0)
          continue;
        c->row_home[t] = o;
        c->holds[o] = t;
        p->out_rows++;
        bytes -= p->row_len * (f->tv[t].dtype == FBXK_F64 ? 8 : 4);
        break;
      }
    }
    p->local_bytes = bytes;
    /* a CPU device's work-group keeps every work-item's private arrays
     * (PoCL: one copy per work-item): at most NVF_CPU_PRIVATE bytes in all,
     * so that they stay in the core's cache */
    int b = p->block;
    while (b > 8 && (int64_t)b * bytes > NVF_CPU_PRIVATE) b /= 2;
    p->block = b;
    p->groups = (p->rows + b - 1) / b;
  }
}
