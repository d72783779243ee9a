/* Lowering: segments (sched.h), the kernel IR's construction, and what every
 * scheduler needs to emit a kernel: values of tensor views (pointwise rows
 * of the kit, casts, loads, broadcasts as aliases), indexing and stores. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nvf.h"

/* ---- kernel IR ---------------------------------------------------------------------- */

void nvf_kir_init(nvf_kernel_ir *k, fbxk_dialect d, const char *name) {
  memset(k, 0, sizeof *k);
  k->dialect = d;
  snprintf(k->name, sizeof k->name, "%s", name);
  k->open[0] = &k->root;
}

void nvf_kir_free(nvf_kernel_ir *k) {
  for (nvf_knode *n = k->all, *nx; n; n = nx) {
    nx = n->all;
    nvf_host->free(n->a);
    nvf_host->free(n->b);
    nvf_host->free(n->c);
    nvf_host->free(n->d);
    nvf_host->free(n);
  }
  k->all = NULL;
}

static char *dup(nvf_kernel_ir *k, const char *s) {
  if (!s) return NULL;
  char *r = nvf_host->alloc(strlen(s) + 1);
  if (!r) k->oom = 1;
  else strcpy(r, s);
  return r;
}

nvf_knode *nvf_kir_add(nvf_kernel_ir *k, nvf_kkind kind, const char *a, const char *b, const char *c, const char *d) {
  nvf_knode *n = nvf_host->alloc(sizeof *n);
  if (!n) {
    k->oom = 1;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->all = k->all;
  k->all = n;
  n->a = dup(k, a);
  n->b = dup(k, b);
  n->c = dup(k, c);
  n->d = dup(k, d);
  nvf_knode *blk = k->open[k->depth];
  if (k->tail[k->depth]) k->tail[k->depth]->next = n;
  else blk->body = n;
  k->tail[k->depth] = n;
  if ((kind == NVF_K_FOR || kind == NVF_K_IF) && k->depth + 1 < NVF_KDEPTH) {
    k->depth++;
    k->open[k->depth] = n;
    k->tail[k->depth] = NULL;
  }
  return n;
}

void nvf_kir_close(nvf_kernel_ir *k) {
  if (k->depth > 0) k->depth--;
}

void nvf_kir_stmt(nvf_kernel_ir *k, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof line) {
    fbxk_buf b = {0};
    va_start(ap, fmt);
    fbxk_vprintf(&b, fmt, ap);
    va_end(ap);
    char *s = fbxk_take(&b);
    if (!s) k->oom = 1;
    else nvf_kir_add(k, NVF_K_STMT, s, NULL, NULL, NULL);
    fbxk_free(s);
    return;
  }
  nvf_kir_add(k, NVF_K_STMT, line, NULL, NULL, NULL);
}

/* ---- segments ----------------------------------------------------------------------- */

static unsigned red_mask(const nvf_fusion *f, const nvf_expr *e) {
  unsigned m = 0;
  if (e->kind != NVF_E_REDUCE) return 0;
  const nvf_tv *o = &f->tv[e->out];
  for (int d = 0; d < o->nd; d++)
    if (o->dom[d].type == NVF_ID_REDUCTION && o->dom[d].axis >= 0) m |= 1u << o->dom[d].axis;
  return m;
}

fbxp_status *nvf_segment_fusion(nvf_plan *pl, const nvf_fusion *f) {
  pl->f = f;
  pl->nsegs = 0;
  pl->seg_of_expr = nvf_host->alloc(sizeof(int) * (size_t)(f->nexpr + 1));
  pl->materialize = nvf_host->alloc(sizeof(int) * (size_t)(f->ntv + 1));
  if (!pl->seg_of_expr || !pl->materialize) return nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory");
  unsigned mask[NVF_MAX_SEGS] = {0};
  int used[NVF_MAX_SEGS] = {0};
  for (int e = 0; e < f->nexpr; e++) {
    const nvf_expr *x = &f->ex[e];
    int s = 0;
    for (int i = 0; i < x->nin; i++) {
      int d = f->tv[x->in[i]].def;
      if (d >= 0 && pl->seg_of_expr[d] > s) s = pl->seg_of_expr[d];
    }
    unsigned m = red_mask(f, x);
    if (m) {
      while (s < NVF_MAX_SEGS && mask[s] && mask[s] != m) s++;
      if (s >= NVF_MAX_SEGS)
        return nvf_host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like: more than 16 segments");
      mask[s] = m;
    }
    pl->seg_of_expr[e] = s;
    used[s] = 1;
  }
  /* dense segment numbers */
  int renum[NVF_MAX_SEGS];
  for (int s = 0; s < NVF_MAX_SEGS; s++) renum[s] = used[s] ? pl->nsegs++ : -1;
  for (int s = 0; s < NVF_MAX_SEGS; s++)
    if (used[s]) pl->seg[renum[s]].rmask = mask[s];
  for (int e = 0; e < f->nexpr; e++) pl->seg_of_expr[e] = renum[pl->seg_of_expr[e]];
  for (int s = 0; s < pl->nsegs; s++) {
    nvf_segment *sg = &pl->seg[s];
    sg->nexprs = 0;
    for (int e = 0; e < f->nexpr; e++) sg->nexprs += pl->seg_of_expr[e] == s;
    if (!(sg->exprs = nvf_host->alloc(sizeof(int) * (size_t)(sg->nexprs + 1))))
      return nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory");
    int k = 0;
    for (int e = 0; e < f->nexpr; e++)
      if (pl->seg_of_expr[e] == s) sg->exprs[k++] = e;
  }
  for (int t = 0; t < f->ntv; t++) pl->materialize[t] = f->tv[t].output;
  for (int e = 0; e < f->nexpr; e++)
    for (int i = 0; i < f->ex[e].nin; i++) {
      int t = f->ex[e].in[i], d = f->tv[t].def;
      if (d >= 0 && pl->seg_of_expr[d] != pl->seg_of_expr[e]) pl->materialize[t] = 1;
    }
  return NULL;
}

void nvf_plan_free(nvf_plan *pl) {
  for (int s = 0; s < pl->nsegs; s++) {
    nvf_host->free(pl->seg[s].exprs);
    nvf_kir_free(&pl->seg[s].k);
  }
  nvf_host->free(pl->seg_of_expr);
  nvf_host->free(pl->materialize);
  pl->nsegs = 0;
  pl->seg_of_expr = pl->materialize = NULL;
}

void nvf_params_print(const nvf_params *p, fbxk_buf *b) {
  if (p->kind == NVF_SCHED_POINTWISE) {
    fbxk_printf(b, "pointwise(numel=%lld, vec=%d, %s, block=%d, groups=%lld)", (long long)p->numel, p->vec,
                p->pw_chunk ? "flat index, a chunk per work-item" : p->vload ? "flat index, 16-byte accesses" : p->dense ? "flat index" : p->pw_row ? "a row per work-item" : "indexed per axis", p->block,
                (long long)p->groups);
    return;
  }
  fbxk_printf(b, "%s(%s, axes=0x%x, rows=%lld, row=%lld, block=%d, groups=%lld, phases=%d", p->kind == NVF_SCHED_PERSISTENT ? "persistent" : "reduction",
              p->inner ? "inner" : p->cpu_row ? "row per work-item" : "outer", p->rmask, (long long)p->rows, (long long)p->row_len, p->block, (long long)p->groups, p->nphases);
  if (p->lanes > 1) fbxk_printf(b, ", lanes=%d", p->lanes);
  if (p->vrow > 1) fbxk_printf(b, ", vector=%d", p->vrow);
  if (p->regs) fbxk_printf(b, ", %d per thread unrolled", p->regs);
  if (p->kind == NVF_SCHED_PERSISTENT)
    fbxk_printf(b, ", %s=%lld B%s", p->cpu_row ? "private" : p->regs ? "registers" : "local", (long long)p->local_bytes,
                p->regs ? " per row" : "");
  if (p->out_rows) fbxk_printf(b, ", kept in output rows=%d", p->out_rows);
  if (p->stream) fbxk_puts(b, ", outputs streamed past the cache");
  if (p->nan_blind) fbxk_printf(b, ", maxima without the NaN test=%d", p->nan_blind);
  fbxk_puts(b, ")");
}

/* ---- lowering context ---------------------------------------------------------------- */

int nvf_in_seg(const nvf_lctx *c, int tv) {
  int d = c->f->tv[tv].def;
  return d >= 0 && c->pl->seg_of_expr[d] == c->s;
}

int nvf_uniform(const nvf_lctx *c, int tv) {
  for (int a = 0; a < c->f->naxes; a++)
    if ((c->rmask >> a & 1) && nvf_tv_has_axis(&c->f->tv[tv], a)) return 0;
  return 1;
}

static int tensor_param(const nvf_lctx *c, int t) { return !c->f->tv[t].scalar; }

fbxp_status *nvf_lctx_init(nvf_lctx *c, nvf_plan *pl, int s, fbxk_dialect d) {
  const nvf_fusion *f = pl->f;
  memset(c, 0, sizeof *c);
  c->pl = pl;
  c->f = f;
  c->s = s;
  c->k = &pl->seg[s].k;
  c->rmask = pl->seg[s].rmask;
  c->scope = 1;
  size_t n = (size_t)f->ntv + 1;
  c->avail = nvf_host->alloc(n);
  c->persist = nvf_host->alloc(n);
  c->level = nvf_host->alloc(sizeof(int) * n);
  c->param_of = nvf_host->alloc(sizeof(int) * n);
  c->row_home = nvf_host->alloc(sizeof(int) * n);
  c->holds = nvf_host->alloc(sizeof(int) * n);
  c->names = nvf_host->alloc(sizeof *c->names * n);
  c->nan_blind = nvf_host->alloc(n);
  if (!c->avail || !c->persist || !c->level || !c->param_of || !c->row_home || !c->holds || !c->names ||
      !c->nan_blind) {
    nvf_lctx_free(c);
    return nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory");
  }
  memset(c->avail, 0, n);
  memset(c->persist, 0, n);
  memset(c->nan_blind, 0, n);
  char name[48];
  snprintf(name, sizeof name, "nvf_k%d", s);
  nvf_kir_free(c->k);
  nvf_kir_init(c->k, d, name);
  for (int t = 0; t < f->ntv; t++) {
    c->param_of[t] = -1;
    c->row_home[t] = c->holds[t] = -1;
    c->level[t] = 0;
  }
  const nvf_segment *sg = &pl->seg[s];
  for (int i = 0; i < sg->nexprs; i++) {
    const nvf_expr *x = &f->ex[sg->exprs[i]];
    int lv = 0;
    for (int a = 0; a < x->nin; a++)
      if (c->level[x->in[a]] > lv) lv = c->level[x->in[a]];
    c->level[x->out] = lv + (red_mask(f, x) ? 1 : 0);
  }
  /* parameters: tensors read, tensors written, scalars */
  nvf_kernel_ir *k = c->k;
  for (int pass = 0; pass < 3; pass++)
    for (int t = 0; t < f->ntv; t++) {
      const nvf_tv *tv = &f->tv[t];
      int want = 0;
      if (pass == 2) want = tv->scalar && !tv->is_const && tv->input >= 0;
      else if (pass == 1) want = nvf_in_seg(c, t) && pl->materialize[t];
      else if (tensor_param(c, t) && !nvf_in_seg(c, t))
        for (int i = 0; i < sg->nexprs && !want; i++)
          for (int a = 0; a < f->ex[sg->exprs[i]].nin; a++) want |= f->ex[sg->exprs[i]].in[a] == t;
      if (pass == 2 && want) { /* only scalars this segment uses */
        want = 0;
        for (int i = 0; i < sg->nexprs && !want; i++)
          for (int a = 0; a < f->ex[sg->exprs[i]].nin; a++) want |= f->ex[sg->exprs[i]].in[a] == t;
      }
      if (!want) continue;
      if (k->nparams >= NVF_MAX_PARAMS) {
        nvf_lctx_free(c);
        return nvf_host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like: too many kernel parameters");
      }
      int p = k->nparams++;
      c->param_of[t] = p;
      snprintf(k->pname[p], sizeof k->pname[p], "%s%d", pass == 2 ? "s" : "T", t);
      k->params[p].name = k->pname[p];
      k->params[p].dtype = tv->dtype;
      k->params[p].kind = pass == 0 ? FBXK_PARAM_IN : pass == 1 ? FBXK_PARAM_OUT : FBXK_PARAM_VALUE;
    }
  return NULL;
}

void nvf_lctx_free(nvf_lctx *c) {
  nvf_host->free(c->avail);
  nvf_host->free(c->persist);
  nvf_host->free(c->level);
  nvf_host->free(c->param_of);
  nvf_host->free(c->row_home);
  nvf_host->free(c->holds);
  nvf_host->free(c->names);
  nvf_host->free(c->nan_blind);
  c->avail = c->persist = c->nan_blind = NULL;
  c->level = c->param_of = c->row_home = c->holds = NULL;
  c->names = NULL;
}

const char *nvf_idx(nvf_lctx *c, int which) {
  fbxk_printer p;
  fbxk_p_init(&p, c->k->dialect);
  const char *s = which == 0 ? fbxk_p_global_id(&p, 0) : which == 1 ? fbxk_p_local_id(&p, 0) : fbxk_p_group_id(&p, 0);
  snprintf(c->idxbuf[which], sizeof c->idxbuf[which], "%s", s);
  fbxk_buf_free(&p.buf);
  return c->idxbuf[which];
}

void nvf_emit_axes(nvf_lctx *c, unsigned mask, const char *flat) {
  const nvf_fusion *f = c->f;
  char cur[32];
  snprintf(cur, sizeof cur, "%s", flat);
  int last = -1;
  for (int a = 0; a < f->naxes; a++)
    if (mask >> a & 1) last = a;
  if (last < 0) return;
  int first = -1;
  for (int a = 0; a < f->naxes && first < 0; a++)
    if (mask >> a & 1) first = a;
  for (int a = last; a >= 0; a--) {
    if (!(mask >> a & 1)) continue;
    if (a == first) {
      nvf_kir_stmt(c->k, "const int64_t i%d = %s;", a, cur);
      break;
    }
    nvf_kir_stmt(c->k, "const int64_t i%d = %s %% %lld;", a, cur, (long long)f->axis_extent[a]);
    int q = c->nq++;
    nvf_kir_stmt(c->k, "const int64_t q%d = %s / %lld;", q, cur, (long long)f->axis_extent[a]);
    snprintf(cur, sizeof cur, "q%d", q);
  }
}

/* element strides of tv per axis (0 where it does not vary) */
static void axis_strides(const nvf_lctx *c, int t, int64_t *st) {
  const nvf_tv *tv = &c->f->tv[t];
  for (int a = 0; a < NVF_MAX_DIMS; a++) st[a] = 0;
  if (tv->def < 0 && tv->input >= 0) {
    for (int d = 0; d < tv->nd; d++)
      if (tv->dom[d].type == NVF_ID_ITER && tv->dom[d].axis >= 0) st[tv->dom[d].axis] = tv->stride[d];
    return;
  }
  int64_t acc = 1;
  for (int d = tv->nd - 1; d >= 0; d--) {
    if (tv->dom[d].type == NVF_ID_REDUCTION) continue;
    if (tv->dom[d].type == NVF_ID_ITER && tv->dom[d].axis >= 0) st[tv->dom[d].axis] = acc;
    acc *= tv->dom[d].extent;
  }
}

/* Is t indexed by the flat index (every axis, contiguous in axis order)? */
int nvf_tv_flat(const nvf_lctx *c, int t) {
  int64_t st[NVF_MAX_DIMS], acc = 1;
  axis_strides(c, t, st);
  for (int a = c->f->naxes - 1; a >= 0; a--) {
    if (!nvf_tv_has_axis(&c->f->tv[t], a) || st[a] != acc) return 0;
    acc *= c->f->axis_extent[a];
  }
  return 1;
}

int nvf_tv_axisless(const nvf_lctx *c, int t) {
  for (int a = 0; a < c->f->naxes; a++)
    if (nvf_tv_has_axis(&c->f->tv[t], a)) return 0;
  return 1;
}

int64_t nvf_tv_axis_stride(const nvf_lctx *c, int t, int axis) {
  int64_t st[NVF_MAX_DIMS];
  axis_strides(c, t, st);
  return nvf_tv_has_axis(&c->f->tv[t], axis) ? st[axis] : 0;
}

int nvf_is_vec(const nvf_lctx *c, int t) {
  const nvf_tv *tv = &c->f->tv[t];
  /* a broadcast is its input's value (an alias): a vector when that is */
  if (nvf_in_seg(c, t) && c->f->ex[tv->def].kind == NVF_E_BCAST) return nvf_is_vec(c, c->f->ex[tv->def].in[0]);
  return c->vw > 1 && !tv->scalar && !tv->is_const && !nvf_uniform(c, t);
}

void nvf_offset(nvf_lctx *c, int t, fbxk_buf *b) {
  if (c->flat && nvf_tv_flat(c, t)) {
    fbxk_puts(b, c->flat);
    return;
  }
  int64_t st[NVF_MAX_DIMS];
  axis_strides(c, t, st);
  int any = 0;
  for (int a = 0; a < c->f->naxes; a++) {
    if (!st[a] || !nvf_tv_has_axis(&c->f->tv[t], a)) continue;
    if (st[a] == 1) fbxk_printf(b, "%si%d", any ? " + " : "", a);
    else fbxk_printf(b, "%si%d * %lld", any ? " + " : "", a, (long long)st[a]);
    any = 1;
  }
  if (!any) fbxk_puts(b, "0");
}

static void set_name(nvf_lctx *c, int t, const char *s) {
  snprintf(c->names[t], sizeof c->names[t], "%s", s);
  c->avail[t] = (unsigned char)c->scope;
}

static void decl(nvf_lctx *c, int t, const char *expr) {
  const nvf_tv *tv = &c->f->tv[t];
  char name[24];
  snprintf(name, sizeof name, "v%d", t);
  const char *ty = nvf_is_vec(c, t) ? fbxk_vector_type(tv->dtype, c->vw) : NULL;
  nvf_kir_stmt(c->k, "const %s %s = %s;", ty ? ty : fbxk_compute_type(tv->dtype, c->k->dialect), name, expr);
  set_name(c, t, name);
}

static char *take(nvf_lctx *c, fbxk_buf *b) {
  char *s = fbxk_take(b);
  if (!s) c->k->oom = 1;
  return s;
}

char *nvf_home_addr(nvf_lctx *c, int t, int vec) {
  int o = c->row_home[t];
  fbxk_buf a = {0};
  fbxk_printf(&a, vec ? "%s + (" : "%s[", c->k->pname[c->param_of[o]]);
  nvf_offset(c, o, &a);
  fbxk_puts(&a, vec ? ")" : "]");
  return take(c, &a);
}

/* dtypes whose compute representation is wider than the dtype itself */
static int narrow_compute(int dt) { return dt != FBXK_F32 && dt != FBXK_F64 && dt != FBXK_I64 && dt != FBXK_BOOL; }

const char *nvf_emit_value(nvf_lctx *c, int t) {
  const nvf_fusion *f = c->f;
  const nvf_tv *tv = &f->tv[t];
  fbxk_dialect d = c->k->dialect;
  if (tv->is_const) {
    fbxk_buf b = {0};
    if (tv->dtype == FBXK_F64) fbxk_print_float(&b, tv->cval.f, FBXK_F64, d);
    else fbxk_print_int(&b, tv->cval.i);
    char *s = take(c, &b);
    snprintf(c->names[t], sizeof c->names[t], "%s", s ? s : "0");
    fbxk_free(s);
    return c->names[t];
  }
  if (tv->scalar) return c->k->pname[c->param_of[t] >= 0 ? c->param_of[t] : 0];
  if (c->avail[t]) return c->names[t];
  fbxk_buf b = {0};
  int vec = nvf_is_vec(c, t);
  if (c->persist[t] && c->level[t] < c->phase && c->row_home[t] >= 0) {
    char *a = nvf_home_addr(c, t, vec);
    if (vec) fbxk_print_vload(&b, c->vw, a ? a : "0");
    else fbxk_print_load(&b, tv->dtype, a ? a : "0", d);
    fbxk_free(a);
  } else if (c->persist[t] && c->level[t] < c->phase) {
    char a[64];
    snprintf(a, sizeof a, "p%d + %s", t, c->row_index);
    if (vec) fbxk_print_vload(&b, c->vw, a);
    else fbxk_printf(&b, "p%d[%s]", t, c->row_index);
  } else if (!nvf_in_seg(c, t)) {
    fbxk_buf a = {0};
    fbxk_printf(&a, vec ? "%s + (" : "%s[", c->k->pname[c->param_of[t]]);
    nvf_offset(c, t, &a);
    fbxk_puts(&a, vec ? ")" : "]");
    char *s = take(c, &a);
    if (vec) fbxk_print_vload(&b, c->vw, s ? s : "0"); /* float32/float64: storage is compute */
    else fbxk_print_load(&b, tv->dtype, s ? s : "0", d);
    fbxk_free(s);
  } else {
    const nvf_expr *x = &f->ex[tv->def];
    if (x->kind == NVF_E_BCAST) {
      const char *in = nvf_emit_value(c, x->in[0]);
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%s", in);
      set_name(c, t, tmp);
      return c->names[t];
    }
    if (x->kind == NVF_E_REDUCE || x->op < 0) { /* a cast (or a reduction over extent-1 domains only) */
      const char *in = nvf_emit_value(c, x->in[0]);
      if (nvf_is_vec(c, x->in[0])) fbxk_print_vcast(&b, tv->dtype, c->vw, in);
      else fbxk_print_cast(&b, tv->dtype, in, d);
    } else {
      char args[2 * FBXK_MAX_OP_ARGS][96];
      const char *ap[2 * FBXK_MAX_OP_ARGS];
      int sel = fbxk_op_selector(x->op);
      for (int i = 0; i < x->nin; i++) {
        const char *v = nvf_emit_value(c, x->in[i]);
        if (i == sel || f->tv[x->in[i]].dtype == x->cdtype) {
          snprintf(args[i], sizeof args[i], "%s", v);
        } else {
          fbxk_buf cb = {0};
          if (nvf_is_vec(c, x->in[i])) fbxk_print_vcast(&cb, x->cdtype, c->vw, v);
          else fbxk_print_cast(&cb, x->cdtype, v, d);
          char *s = take(c, &cb);
          snprintf(args[i], sizeof args[i], "%s", s ? s : "0");
          fbxk_free(s);
        }
        ap[i] = args[i];
      }
      fbxk_buf vb = {0};
      unsigned facts = x->op == FBXK_OP_EXP && nvf_tv_nonpos(f, x->in[0]) ? FBXK_FACT_NONPOS : 0u;
      fbxk_op_print_facts(&vb, x->op, x->cdtype, vec ? c->vw : 1, d, ap, facts);
      char *val = take(c, &vb);
      /* Every op's result is rounded to its dtype, as PyTorch's eager op
       * writes it: float16/bfloat16 compute in float and int32/int16/int8
       * in int64_t (fbxk_compute_type), so their values are rounded or
       * narrowed here, not only at the store (issue 21: bf16
       * cos(log(x)) * 100 kept float32 intermediates). */
      if (vec && tv->dtype != x->cdtype) fbxk_print_vcast(&b, tv->dtype, c->vw, val ? val : "0");
      else if (vec) fbxk_puts(&b, val ? val : "0"); /* float32/float64 of a vectorizable row */
      else if (fbxk_op_is_bool_valued(x->op) || tv->dtype != x->cdtype || narrow_compute(tv->dtype))
        fbxk_print_cast(&b, tv->dtype, val ? val : "0", d);
      else fbxk_puts(&b, val ? val : "0");
      fbxk_free(val);
    }
  }
  char *e = take(c, &b);
  decl(c, t, e ? e : "0");
  fbxk_free(e);
  return c->names[t];
}

void nvf_emit_store(nvf_lctx *c, int t) {
  const char *v = nvf_emit_value(c, t);
  char val[64];
  snprintf(val, sizeof val, "%s", v);
  fbxk_buf a = {0}, b = {0};
  int vec = nvf_is_vec(c, t);
  fbxk_printf(&a, vec ? "%s + (" : "%s[", c->k->pname[c->param_of[t]]);
  nvf_offset(c, t, &a);
  fbxk_puts(&a, vec ? ")" : "]");
  char *lv = take(c, &a);
  const nvf_params *p = &c->pl->seg[c->s].p;
  if (vec && p->stream && c->phase == p->nphases - 1)
    fbxk_print_vstore_nt(&b, c->f->tv[t].dtype, c->vw, lv ? lv : "x", val);
  else if (vec) fbxk_print_vstore(&b, c->f->tv[t].dtype, c->vw, lv ? lv : "x", val);
  else fbxk_print_store(&b, c->f->tv[t].dtype, lv ? lv : "x", val, c->k->dialect);
  fbxk_free(lv);
  char *s = take(c, &b);
  if (s) nvf_kir_stmt(c->k, "%s", s);
  fbxk_free(s);
}

void nvf_scope_exit(nvf_lctx *c) {
  for (int t = 0; t < c->f->ntv; t++)
    if (c->avail[t] == 2) c->avail[t] = 0;
}

fbxp_status *nvf_schedule_segment(nvf_plan *pl, int s, fbxk_dialect d) {
  nvf_lctx c;
  fbxp_status *st = nvf_lctx_init(&c, pl, s, d);
  if (st) return st;
  if (pl->seg[s].rmask) {
    nvf_sched_reduction_params(&c);
    nvf_sched_persistent_decide(&c);
    st = nvf_sched_reduction_lower(&c);
  } else {
    nvf_sched_pointwise_params(&c);
    st = nvf_sched_pointwise_lower(&c);
  }
  if (!st && c.k->oom) st = nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory");
  nvf_lctx_free(&c);
  return st;
}
