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
 * it: layer norm's float64 copy of its float32 input), and the work-group is
 * made smaller when its work-items' arrays would not stay in the cache. */
#include "nvf.h"

/* what t is a cast (or a chain of casts) of */
static int cast_source(const nvf_lctx *c, int t) {
  while (nvf_in_seg(c, t)) {
    const nvf_expr *x = &c->f->ex[c->f->tv[t].def];
    if (x->kind != NVF_E_PW || x->op >= 0) break;
    t = x->in[0];
  }
  return t;
}

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
       * only computed values are worth keeping (not an input's cast either) */
      if (p->cpu_row && !nvf_in_seg(c, cast_source(c, t))) continue;
      if (c->level[t] < use_phase) want[t] = 1;
    }
  }
  int64_t bytes = 0;
  for (int t = 0; t < f->ntv; t++)
    if (want[t]) bytes += p->row_len * (f->tv[t].dtype == FBXK_F64 || !fbxk_is_float(f->tv[t].dtype) ? 8 : 4);
  if (bytes == 0 || bytes > c->pl->persist_limit) {
    for (int t = 0; t < f->ntv; t++) want[t] = 0;
    return;
  }
  p->kind = NVF_SCHED_PERSISTENT;
  p->local_bytes = bytes;
  if (p->cpu_row) {
    /* a CPU device's work-group keeps every work-item's private arrays
     * (PoCL: one copy per work-item): at most NVF_CPU_PRIVATE bytes in all,
     * so that they stay in the core's cache */
    int b = p->block;
    while (b > 8 && (int64_t)b * bytes > NVF_CPU_PRIVATE) b /= 2;
    p->block = b;
    p->groups = (p->rows + b - 1) / b;
  }
}
