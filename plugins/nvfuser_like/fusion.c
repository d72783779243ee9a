/* The fusion IR (fusion.h): classification, building, axes, printing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nvf.h"

/* ---- classification ------------------------------------------------------------------ */

static int schema_is(const fbxp_node *n, const char *prefix) {
  const char *s = nvf_host->node_schema(n);
  return s && !strncmp(s, prefix, strlen(prefix));
}

static int dtype_ok(int dt) {
  return dt == FBXK_F32 || dt == FBXK_F64 || dt == FBXK_F16 || dt == FBXK_BF16 || dt == FBXK_I64 ||
         dt == FBXK_I32 || dt == FBXK_I16 || dt == FBXK_I8 || dt == FBXK_U8 || dt == FBXK_BOOL;
}

static int cint(const fbxp_value *v, int64_t *out) { return nvf_host->value_const_int(v, out) ? 0 : -1; }

/* dims list -> normalized sorted dims (rank known), 0 or -1 */
static int norm_dims(const int64_t *dims, int nd, int rank, nvf_ninfo *o) {
  int seen[NVF_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) {
    int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (d < 0 || d >= rank || seen[d]) return -1;
    seen[d] = 1;
  }
  o->nd = 0;
  for (int d = 0; d < rank; d++)
    if (seen[d]) o->dims[o->nd++] = d;
  return 0;
}

nvf_nclass nvf_classify(const fbxp_node *n, nvf_typeof_fn tf, void *ctx, nvf_ninfo *o) {
  memset(o, 0, sizeof *o);
  o->cls = NVF_N_NO;
  o->out_dtype = -1;
  const char *k = nvf_host->node_kind(n);
  if (!strcmp(k, "prim::Constant")) return o->cls = NVF_N_CONST;
  if (!strcmp(k, "prim::ListConstruct")) {
    int64_t tmp[NVF_MAX_DIMS];
    int len = nvf_host->value_const_int_list(nvf_host->node_output(n, 0), tmp, NVF_MAX_DIMS);
    return o->cls = len >= 0 && len <= NVF_MAX_DIMS ? NVF_N_LIST : NVF_N_NO;
  }
  if (nvf_host->node_num_outputs(n) != 1) return NVF_N_NO;
  nvf_vtype out = tf(ctx, nvf_host->node_output(n, 0));
  if (!out.known || !out.tensor) return NVF_N_NO;
  int nin = nvf_host->node_num_inputs(n);
  int is_red = 1;
  if (schema_is(n, "aten::sum.dim_IntList(")) o->red = NVF_RED_SUM;
  else if (schema_is(n, "aten::mean.dim(")) o->red = NVF_RED_SUM, o->mean = 1;
  else if (schema_is(n, "aten::amax(")) o->red = NVF_RED_MAX;
  else if (schema_is(n, "aten::amin(")) o->red = NVF_RED_MIN;
  else is_red = 0;
  if (is_red) {
    if (nin < 3) return NVF_N_NO;
    nvf_vtype x = tf(ctx, nvf_host->node_input(n, 0));
    int64_t dims[NVF_MAX_DIMS], keep;
    int nd = nvf_host->value_const_int_list(nvf_host->node_input(n, 1), dims, NVF_MAX_DIMS);
    if (!x.known || !x.tensor || nd < 1 || cint(nvf_host->node_input(n, 2), &keep)) return NVF_N_NO;
    if (o->red == NVF_RED_SUM && (nin < 4 || !nvf_host->value_is_none(nvf_host->node_input(n, 3)))) return NVF_N_NO;
    o->keepdim = keep != 0;
    o->keep_mask = keep ? ~0u : 0u;
    o->nd = -1;
    if (x.dtype < 0) return o->cls = NVF_N_RED; /* unprofiled: compile checks the rest */
    if (!dtype_ok(x.dtype) || x.ndim < 1 || norm_dims(dims, nd, x.ndim, o)) return NVF_N_NO;
    int fl = fbxk_is_float(x.dtype);
    if (o->mean && !fl) return NVF_N_NO;
    /* max/min combine with the kit's NaN-propagating maximum/minimum rows */
    if (o->red != NVF_RED_SUM && !fbxk_op_template(o->red == NVF_RED_MAX ? FBXK_OP_MAXIMUM : FBXK_OP_MINIMUM, x.dtype))
      return NVF_N_NO;
    o->out_dtype = o->red == NVF_RED_SUM && !fl ? FBXK_I64 : x.dtype;
    if (out.dtype >= 0 && out.dtype != o->out_dtype) return NVF_N_NO;
    return o->cls = NVF_N_RED;
  }
  /* sum_to_size / _grad_sum_to_size to a constant size: a sum over the
   * leading dims (dropped) and the dims the size has as 1 (kept) */
  if (schema_is(n, "aten::sum_to_size(") || schema_is(n, "aten::_grad_sum_to_size(")) {
    nvf_vtype x = tf(ctx, nvf_host->node_input(n, 0));
    int64_t size[NVF_MAX_DIMS];
    int ns = nin == 2 ? nvf_host->value_const_int_list(nvf_host->node_input(n, 1), size, NVF_MAX_DIMS) : -1;
    if (!x.known || !x.tensor || ns < 0 || ns > NVF_MAX_DIMS) return NVF_N_NO;
    o->red = NVF_RED_SUM;
    o->nd = -1;
    if (x.dtype < 0) return o->cls = NVF_N_RED;
    if (!dtype_ok(x.dtype) || x.ndim < ns || x.ndim > NVF_MAX_DIMS || !fbxk_is_float(x.dtype)) return NVF_N_NO;
    o->nd = 0;
    o->keep_mask = 0;
    for (int d = 0; d < x.ndim; d++) {
      int sd = d - (x.ndim - ns);
      if (sd < 0) o->dims[o->nd++] = d;
      else if (size[sd] == 1) {
        o->dims[o->nd++] = d;
        o->keep_mask |= 1u << d;
      }
    }
    if (o->nd == 0) return NVF_N_NO; /* nothing to sum: the host's no-op */
    o->out_dtype = x.dtype;
    if (out.dtype >= 0 && out.dtype != o->out_dtype) return NVF_N_NO;
    return o->cls = NVF_N_RED;
  }
  int sm = schema_is(n, "aten::softmax.int("), lsm = schema_is(n, "aten::log_softmax.int(");
  if (sm || lsm) {
    nvf_vtype x = tf(ctx, nvf_host->node_input(n, 0));
    int64_t dim, dt = -1;
    if (nin < 3 || !x.known || !x.tensor || cint(nvf_host->node_input(n, 1), &dim)) return NVF_N_NO;
    const fbxp_value *dv = nvf_host->node_input(n, 2);
    if (!nvf_host->value_is_none(dv) && (cint(dv, &dt) || !fbxk_is_float((int)dt))) return NVF_N_NO;
    o->log = lsm;
    o->nd = -1;
    o->dims[0] = (int)dim;
    if (x.dtype < 0) return o->cls = NVF_N_SOFTMAX;
    if (!fbxk_is_float(x.dtype) || x.ndim < 1 || norm_dims(&dim, 1, x.ndim, o)) return NVF_N_NO;
    o->out_dtype = dt >= 0 ? (int)dt : x.dtype;
    if (out.dtype >= 0 && out.dtype != o->out_dtype) return NVF_N_NO;
    return o->cls = NVF_N_SOFTMAX;
  }
  if (schema_is(n, "aten::layer_norm(")) {
    nvf_vtype x = tf(ctx, nvf_host->node_input(n, 0));
    int64_t shape[NVF_MAX_DIMS];
    double eps;
    if (nin != 6 || !x.known || !x.tensor) return NVF_N_NO;
    int ns = nvf_host->value_const_int_list(nvf_host->node_input(n, 1), shape, NVF_MAX_DIMS);
    if (ns < 1 || !nvf_host->value_const_float(nvf_host->node_input(n, 4), &eps)) return NVF_N_NO;
    for (int i = 2; i <= 3; i++) {
      const fbxp_value *v = nvf_host->node_input(n, i);
      if (nvf_host->value_is_none(v)) continue;
      nvf_vtype t = tf(ctx, v);
      if (!t.known || !t.tensor || (t.dtype >= 0 && !fbxk_is_float(t.dtype))) return NVF_N_NO;
    }
    o->nd = -ns; /* the last ns dims */
    if (x.dtype < 0) return o->cls = NVF_N_LAYER_NORM;
    if (!fbxk_is_float(x.dtype) || x.ndim < ns) return NVF_N_NO;
    o->nd = ns;
    for (int i = 0; i < ns; i++) o->dims[i] = x.ndim - ns + i;
    o->out_dtype = x.dtype;
    if (out.dtype >= 0 && out.dtype != o->out_dtype) return NVF_N_NO;
    return o->cls = NVF_N_LAYER_NORM;
  }
  /* pointwise rows of the kit */
  if (fbxk_op_match(nvf_host, n, &o->m) < 0) return NVF_N_NO;
  fbxk_typed ty[FBXK_MAX_OP_ARGS];
  int unknown = 0, sel = fbxk_op_selector(o->m.op);
  for (int i = 0; i < o->m.noperands; i++) {
    nvf_vtype t = tf(ctx, nvf_host->node_input(n, o->m.operand_input[i]));
    if (!t.known) return NVF_N_NO;
    if (t.tensor && t.dtype < 0) unknown = 1;
    else if (!dtype_ok(t.dtype)) return NVF_N_NO;
    ty[i] = (fbxk_typed){t.dtype, t.prio};
  }
  for (int i = 0; i < o->m.nparams; i++) {
    nvf_vtype t = tf(ctx, nvf_host->node_input(n, o->m.param_input[i]));
    if (!t.known || t.tensor) return NVF_N_NO;
  }
  int64_t to = -1;
  if (fbxk_op_rule(o->m.op) == FBXK_R_TO && (cint(nvf_host->node_input(n, 1), &to) || !dtype_ok((int)to)))
    return NVF_N_NO;
  /* a conversion to its input's own dtype returns the input (an alias):
   * fused, it would be a copy, and an in-place write through one name
   * would no longer reach the other (as the legacy fuser, ops.c) */
  if (to >= 0 && (unknown || ty[0].dtype == (int)to)) return NVF_N_NO;
  if (unknown) { /* unprofiled: compile sees the dtypes; taken when float32 has a template */
    o->cdtype = o->rdtype = -1;
    return fbxk_op_template(o->m.op, FBXK_F32) || fbxk_op_template(o->m.op, FBXK_I64) ? (o->cls = NVF_N_PW) : NVF_N_NO;
  }
  if (to >= 0) {
    o->cdtype = ty[0].dtype;
    o->rdtype = (int)to;
  } else if (fbxk_op_dtypes(o->m.op, ty, o->m.noperands, &o->cdtype, &o->rdtype)) {
    return NVF_N_NO;
  }
  if (sel >= 0 && ty[sel].dtype != FBXK_BOOL) return NVF_N_NO;
  if (!fbxk_op_template(o->m.op, o->cdtype) || !dtype_ok(o->rdtype)) return NVF_N_NO;
  if (out.dtype >= 0 && o->rdtype != out.dtype) return NVF_N_NO;
  return o->cls = NVF_N_PW;
}

nvf_vtype nvf_typeof_profiled(void *ctx, const fbxp_value *v) {
  (void)ctx;
  nvf_vtype t = {0};
  switch (nvf_host->value_kind(v)) {
    case FBXP_TYPE_TENSOR: {
      fbxp_tensor_type tt = {.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0};
      if (nvf_host->value_tensor_type(v, &tt)) return t;
      if (tt.device_type != 0 && tt.device_type != kDLCPU) return t;
      if (tt.dtype < 0 || tt.ndim < 0) return (nvf_vtype){1, 1, -1, -1, FBXK_PRIO_TENSOR};
      return (nvf_vtype){1, 1, tt.dtype, tt.ndim, tt.ndim ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM};
    }
    case FBXP_TYPE_INT: return (nvf_vtype){1, 0, FBXK_I64, 0, FBXK_PRIO_SCALAR};
    case FBXP_TYPE_BOOL: return (nvf_vtype){1, 0, FBXK_BOOL, 0, FBXK_PRIO_SCALAR};
    case FBXP_TYPE_FLOAT: return (nvf_vtype){1, 0, FBXK_F64, 0, FBXK_PRIO_SCALAR};
    default: return t;
  }
}

/* ---- building ------------------------------------------------------------------------ */

#define MAXV 1024

typedef struct bctx {
  nvf_fusion *f;
  int *uf; /* parents of domains tv * NVF_MAX_DIMS + d */
  int nv;
  const fbxp_value *vals[MAXV];
  int tvs[MAXV];
  char err[200];
} bctx;

static int find_tv(bctx *c, const fbxp_value *v) {
  for (int i = c->nv - 1; i >= 0; i--)
    if (c->vals[i] == v) return c->tvs[i];
  return -1;
}

static int bind(bctx *c, const fbxp_value *v, int t) {
  if (t < 0 || c->nv >= MAXV) return -1;
  c->vals[c->nv] = v;
  c->tvs[c->nv++] = t;
  return 0;
}

static int new_tv(bctx *c, int dtype) {
  nvf_fusion *f = c->f;
  if (f->ntv >= NVF_MAX_TVS) return -1;
  nvf_tv *t = &f->tv[f->ntv];
  memset(t, 0, sizeof *t);
  t->dtype = dtype;
  t->def = t->input = -1;
  t->prio = FBXK_PRIO_TENSOR;
  for (int d = 0; d < NVF_MAX_DIMS; d++) c->uf[f->ntv * NVF_MAX_DIMS + d] = f->ntv * NVF_MAX_DIMS + d;
  return f->ntv++;
}

static int uf_find(int *uf, int x) {
  while (uf[x] != x) x = uf[x] = uf[uf[x]];
  return x;
}

static void unite(bctx *c, int ta, int da, int tb, int db) {
  const nvf_id *a = &c->f->tv[ta].dom[da], *b = &c->f->tv[tb].dom[db];
  if (a->type == NVF_ID_BROADCAST || b->type == NVF_ID_BROADCAST) return;
  int x = uf_find(c->uf, ta * NVF_MAX_DIMS + da), y = uf_find(c->uf, tb * NVF_MAX_DIMS + db);
  if (x != y) c->uf[x] = y;
}

static int new_expr(bctx *c, nvf_expr_kind kind, int out) {
  nvf_fusion *f = c->f;
  if (f->nexpr >= NVF_MAX_EXPRS) return -1;
  nvf_expr *e = &f->ex[f->nexpr];
  memset(e, 0, sizeof *e);
  e->kind = kind;
  e->out = out;
  e->op = -1;
  f->tv[out].def = f->nexpr;
  return f->nexpr++;
}

static int const_tv(bctx *c, int dtype, fbxk_scalar v) {
  int t = new_tv(c, dtype);
  if (t < 0) return -1;
  c->f->tv[t].scalar = c->f->tv[t].is_const = 1;
  c->f->tv[t].cval = v;
  c->f->tv[t].prio = FBXK_PRIO_SCALAR;
  return t;
}

/* logical dims (non-reduction domains) of t: their indices into dom */
static int logical(const nvf_tv *t, int *idx) {
  int n = 0;
  for (int d = 0; d < t->nd; d++)
    if (t->dom[d].type != NVF_ID_REDUCTION) idx[n++] = d;
  return n;
}

int nvf_tv_logical(const nvf_tv *t, int64_t *sizes) {
  int idx[NVF_MAX_DIMS], n = logical(t, idx);
  for (int i = 0; i < n; i++) sizes[i] = t->dom[idx[i]].extent;
  return n;
}

int nvf_tv_has_axis(const nvf_tv *t, int a) {
  for (int d = 0; d < t->nd; d++)
    if (t->dom[d].type == NVF_ID_ITER && t->dom[d].axis == a) return 1;
  return 0;
}

int nvf_tv_nonpos(const nvf_fusion *f, int t) {
  if (t < 0 || t >= f->ntv || f->tv[t].def < 0) return 0;
  const nvf_expr *x = &f->ex[f->tv[t].def];
  if (x->kind != NVF_E_PW || x->op != FBXK_OP_SUB_T || x->noperands != 2) return 0;
  int a = x->in[0], b = x->in[1];
  while (b >= 0 && f->tv[b].def >= 0 && f->ex[f->tv[b].def].kind == NVF_E_BCAST) b = f->ex[f->tv[b].def].in[0];
  if (b < 0 || f->tv[b].def < 0) return 0;
  const nvf_expr *m = &f->ex[f->tv[b].def];
  if (m->kind != NVF_E_REDUCE || m->red != NVF_RED_MAX || m->in[0] != a) return 0;
  const nvf_tv *ta = &f->tv[a];
  if (ta->scalar || !fbxk_is_float(ta->dtype) || f->tv[b].dtype != ta->dtype) return 0;
  /* a's dimensions are distinct axes: the broadcast of the max then lines
   * up with the dimensions it was taken over (a broadcast that put a kept
   * dimension in another place would have merged two of a's axes) */
  for (int i = 0; i < ta->nd; i++) {
    if (ta->dom[i].type == NVF_ID_BROADCAST) continue;
    if (ta->dom[i].axis < 0) return 0;
    for (int j = 0; j < i; j++)
      if (ta->dom[j].type != NVF_ID_BROADCAST && ta->dom[j].axis == ta->dom[i].axis) return 0;
  }
  return 1;
}

/* t with leading broadcast domains up to logical rank r (t itself when it has it) */
static int bcast_rank(bctx *c, int t, int r) {
  nvf_fusion *f = c->f;
  if (f->tv[t].scalar) return t;
  int idx[NVF_MAX_DIMS], lr = logical(&f->tv[t], idx);
  if (lr == r && lr == f->tv[t].nd) return t;
  int o = new_tv(c, f->tv[t].dtype);
  if (o < 0) return -1;
  nvf_tv *ot = &f->tv[o];
  ot->nd = r;
  for (int d = 0; d < r - lr; d++) ot->dom[d] = (nvf_id){NVF_ID_BROADCAST, 1, -1};
  for (int i = 0; i < lr; i++) {
    ot->dom[r - lr + i] = f->tv[t].dom[idx[i]];
    unite(c, o, r - lr + i, t, idx[i]);
  }
  int e = new_expr(c, NVF_E_BCAST, o);
  if (e < 0) return -1;
  f->ex[e].nin = 1;
  f->ex[e].in[0] = t;
  return o;
}

/* A pointwise expression: op (kit row, -1 a cast) over operands then params. */
static int pw(bctx *c, int op, int cdtype, int rdtype, const int *ops, int nops, const int *params, int npar) {
  nvf_fusion *f = c->f;
  int r = 0, args[2 * FBXK_MAX_OP_ARGS];
  for (int i = 0; i < nops; i++) {
    if (ops[i] < 0) return -1;
    int idx[NVF_MAX_DIMS];
    if (!f->tv[ops[i]].scalar && logical(&f->tv[ops[i]], idx) > r) r = logical(&f->tv[ops[i]], idx);
  }
  for (int i = 0; i < nops; i++)
    if ((args[i] = bcast_rank(c, ops[i], r)) < 0) return -1;
  for (int i = 0; i < npar; i++) args[nops + i] = params[i];
  int o = new_tv(c, rdtype);
  if (o < 0) return -1;
  nvf_tv *ot = &f->tv[o];
  ot->nd = r;
  ot->prio = FBXK_PRIO_SCALAR;
  for (int d = 0; d < r; d++) ot->dom[d] = (nvf_id){NVF_ID_BROADCAST, 1, -1};
  for (int i = 0; i < nops; i++) {
    const nvf_tv *a = &f->tv[args[i]];
    if (a->scalar) continue;
    if (a->prio > ot->prio) ot->prio = a->prio;
    for (int d = 0; d < r; d++) {
      if (a->dom[d].type != NVF_ID_ITER) continue;
      if (ot->dom[d].type == NVF_ID_ITER && ot->dom[d].extent != a->dom[d].extent) {
        snprintf(c->err, sizeof c->err, "nvfuser_like: operands do not broadcast");
        return -1;
      }
      ot->dom[d] = a->dom[d];
    }
  }
  if (ot->prio == FBXK_PRIO_SCALAR) ot->prio = FBXK_PRIO_ZERODIM;
  for (int i = 0; i < nops; i++)
    if (!f->tv[args[i]].scalar)
      for (int d = 0; d < r; d++) unite(c, o, d, args[i], d);
  int e = new_expr(c, NVF_E_PW, o);
  if (e < 0) return -1;
  f->ex[e].op = op;
  f->ex[e].cdtype = cdtype;
  f->ex[e].noperands = nops;
  f->ex[e].nin = nops + npar;
  memcpy(f->ex[e].in, args, sizeof(int) * (size_t)(nops + npar));
  return o;
}

static int cast(bctx *c, int t, int dtype) {
  if (t < 0) return -1;
  if (c->f->tv[t].dtype == dtype) return t;
  return pw(c, -1, c->f->tv[t].dtype, dtype, &t, 1, NULL, 0);
}

/* a row with dtypes from the kit's promotion */
static int pw2(bctx *c, int op, int a, int b) {
  if (a < 0 || b < 0) return -1;
  fbxk_typed ty[2] = {{c->f->tv[a].dtype, c->f->tv[a].prio}, {c->f->tv[b].dtype, c->f->tv[b].prio}};
  int cd, rd, ops[2] = {a, b};
  if (fbxk_op_dtypes(op, ty, 2, &cd, &rd)) return -1;
  return pw(c, op, cd, rd, ops, 2, NULL, 0);
}

static int pw1(bctx *c, int op, int a) {
  if (a < 0) return -1;
  fbxk_typed ty = {c->f->tv[a].dtype, c->f->tv[a].prio};
  int cd, rd;
  if (fbxk_op_dtypes(op, &ty, 1, &cd, &rd)) return -1;
  return pw(c, op, cd, rd, &a, 1, NULL, 0);
}

/* reduce logical dims of t; keep: broadcast domains put back */
static int reduce(bctx *c, int t, const int *dims, int nd, nvf_red red, int acc, unsigned keep) {
  nvf_fusion *f = c->f;
  if (t < 0 || f->tv[t].scalar) return -1;
  int idx[NVF_MAX_DIMS], lr = logical(&f->tv[t], idx);
  int in = t;
  if (lr != f->tv[t].nd && (in = bcast_rank(c, t, lr)) < 0) return -1; /* drop old reduction domains */
  if (f->tv[in].nd != lr) return -1;
  int o = new_tv(c, acc);
  if (o < 0) return -1;
  nvf_tv *ot = &f->tv[o];
  ot->nd = lr;
  for (int d = 0; d < lr; d++) {
    ot->dom[d] = f->tv[in].dom[d];
    unite(c, o, d, in, d);
  }
  for (int i = 0; i < nd; i++) {
    nvf_id *id = &ot->dom[dims[i]];
    if (id->type == NVF_ID_BROADCAST) *id = (nvf_id){NVF_ID_REDUCTION, 1, -1};
    else id->type = NVF_ID_REDUCTION;
  }
  int e = new_expr(c, NVF_E_REDUCE, o);
  if (e < 0) return -1;
  f->ex[e].red = red;
  f->ex[e].cdtype = acc;
  f->ex[e].nin = 1;
  f->ex[e].in[0] = in;
  if (!keep) return o;
  int k = new_tv(c, acc);
  if (k < 0) return -1;
  f->tv[k] = f->tv[o];
  f->tv[k].def = -1;
  for (int d = 0; d < lr; d++) {
    if (f->tv[k].dom[d].type == NVF_ID_REDUCTION && (keep >> d & 1)) f->tv[k].dom[d] = (nvf_id){NVF_ID_BROADCAST, 1, -1};
    unite(c, k, d, o, d);
  }
  int eb = new_expr(c, NVF_E_BCAST, k);
  if (eb < 0) return -1;
  f->ex[eb].nin = 1;
  f->ex[eb].in[0] = o;
  return k;
}

static int64_t count_of(const nvf_fusion *f, int t, const int *dims, int nd) {
  int idx[NVF_MAX_DIMS];
  logical(&f->tv[t], idx);
  int64_t n = 1;
  for (int i = 0; i < nd; i++) n *= f->tv[t].dom[idx[dims[i]]].extent;
  return n;
}

static int red_node(bctx *c, int x, const nvf_ninfo *in) {
  nvf_fusion *f = c->f;
  int dt = f->tv[x].dtype, fl = fbxk_is_float(dt);
  /* sums and means accumulate in float64, as the reference interpreter does:
   * their results feed any op (a sin of a large mean magnifies a float32
   * rounding a thousandfold); softmax's and layer norm's statistics, which
   * only normalize, accumulate in float32 */
  int acc = in->red == NVF_RED_SUM ? (fl ? FBXK_F64 : FBXK_I64) : dt;
  int s = reduce(c, x, in->dims, in->nd, in->red, acc, in->keep_mask);
  if (in->mean) {
    int64_t n = count_of(f, x, in->dims, in->nd);
    /* a float32 (or half) mean overflows when its sum does, as PyTorch's
     * and the interpreter's (fuzz seed 1200904): the sum passes float32 */
    if (fl && dt != FBXK_F64) s = cast(c, cast(c, s, FBXK_F32), FBXK_F64);
    s = pw2(c, FBXK_OP_DIV_T, s, const_tv(c, FBXK_I64, (fbxk_scalar){0, n}));
  }
  return cast(c, s, in->red == NVF_RED_SUM && !fl ? FBXK_I64 : dt);
}

static int softmax_node(bctx *c, int x, const nvf_ninfo *in) {
  nvf_fusion *f = c->f;
  int xd = cast(c, x, in->out_dtype);
  int cd = in->out_dtype == FBXK_F64 ? FBXK_F64 : FBXK_F32;
  int xc = cast(c, xd, cd);
  int m = reduce(c, xc, in->dims, 1, NVF_RED_MAX, cd, ~0u);
  int d = pw2(c, FBXK_OP_SUB_T, xc, m);
  int e = pw1(c, FBXK_OP_EXP, d);
  int s = reduce(c, e, in->dims, 1, NVF_RED_SUM, cd, ~0u);
  /* exp times the sum's reciprocal, as PyTorch's CPU kernel and the
   * interpreter scale a row: one division per row, not per element */
  int r = in->log ? pw2(c, FBXK_OP_SUB_T, d, pw1(c, FBXK_OP_LOG, s)) : pw2(c, FBXK_OP_MUL_T, e, pw1(c, FBXK_OP_RECIPROCAL, s));
  (void)f;
  return cast(c, r, in->out_dtype);
}

static int layer_norm_node(bctx *c, const fbxp_node *n, int x, const nvf_ninfo *in) {
  nvf_fusion *f = c->f;
  double eps = 0;
  nvf_host->value_const_float(nvf_host->node_input(n, 4), &eps);
  int64_t cnt = count_of(f, x, in->dims, in->nd);
  /* statistics in float64, as the reference interpreter (a float32
   * variance overflows for values near 1e30: fuzz seed 800803) */
  int x64 = cast(c, x, FBXK_F64);
  int s1 = reduce(c, x64, in->dims, in->nd, NVF_RED_SUM, FBXK_F64, ~0u);
  int mu = pw2(c, FBXK_OP_DIV_T, s1, const_tv(c, FBXK_I64, (fbxk_scalar){0, cnt}));
  int xm = pw2(c, FBXK_OP_SUB_T, x64, mu);
  int sq = pw2(c, FBXK_OP_MUL_T, xm, xm);
  int s2 = reduce(c, sq, in->dims, in->nd, NVF_RED_SUM, FBXK_F64, ~0u);
  int var = pw2(c, FBXK_OP_DIV_T, s2, const_tv(c, FBXK_I64, (fbxk_scalar){0, cnt}));
  int ve = pw2(c, FBXK_OP_ADD_T, var, const_tv(c, FBXK_F64, (fbxk_scalar){eps, 0}));
  int rstd = pw1(c, FBXK_OP_RSQRT, ve);
  int cd = f->tv[x].dtype == FBXK_F64 ? FBXK_F64 : FBXK_F32;
  const fbxp_value *w = nvf_host->node_input(n, 2), *b = nvf_host->node_input(n, 3);
  int wt = nvf_host->value_is_none(w) ? -1 : find_tv(c, w), bt = nvf_host->value_is_none(b) ? -1 : find_tv(c, b);
  int w32 = nvf_host->value_is_none(w) || (wt >= 0 && f->tv[wt].dtype == FBXK_F32);
  int b32 = nvf_host->value_is_none(b) || (bt >= 0 && f->tv[bt].dtype == FBXK_F32);
  int y;
  if (f->tv[x].dtype == FBXK_F32 && w32 && b32) {
    /* float32 throughout, with float32 (or no) parameters: the row is
     * normalized in float32 by the statistics rounded to float32, by the
     * interpreter's float32 formula ((x - mean) * rstd * w + b): half the
     * vector width of the float64 pass */
    y = pw2(c, FBXK_OP_MUL_T, pw2(c, FBXK_OP_SUB_T, x, cast(c, mu, FBXK_F32)), cast(c, rstd, FBXK_F32));
  } else {
    y = cast(c, pw2(c, FBXK_OP_MUL_T, xm, rstd), cd);
  }
  if (!nvf_host->value_is_none(w)) y = pw2(c, FBXK_OP_MUL_T, y, cast(c, find_tv(c, w), cd));
  /* + bias, or + 0 as PyTorch's kernel adds a zero bias: a zero result is +0 */
  y = pw2(c, FBXK_OP_ADD_T, y,
          nvf_host->value_is_none(b) ? const_tv(c, cd, (fbxk_scalar){0.0, 0}) : cast(c, find_tv(c, b), cd));
  return cast(c, y, in->out_dtype);
}

/* a scalar operand: a graph input TV or a constant */
static int operand(bctx *c, const fbxp_value *v) {
  int t = find_tv(c, v);
  if (t >= 0) return t;
  double d;
  int64_t i;
  if (nvf_host->value_const_float(v, &d)) return const_tv(c, FBXK_F64, (fbxk_scalar){d, 0});
  if (nvf_host->value_const_int(v, &i))
    return const_tv(c, nvf_host->value_kind(v) == FBXP_TYPE_BOOL ? FBXK_BOOL : FBXK_I64, (fbxk_scalar){0, i});
  return -1;
}

static nvf_vtype typeof_built(void *ctx, const fbxp_value *v) {
  bctx *c = ctx;
  int t = find_tv(c, v);
  if (t < 0) return nvf_typeof_profiled(NULL, v); /* constants; the node's own output */
  const nvf_tv *tv = &c->f->tv[t];
  int idx[NVF_MAX_DIMS];
  if (tv->scalar) return (nvf_vtype){1, 0, tv->dtype, 0, FBXK_PRIO_SCALAR};
  int r = logical(tv, idx);
  return (nvf_vtype){1, 1, tv->dtype, r, r ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM};
}

static fbxp_status *unsupported(bctx *c, const char *what, const fbxp_node *n) {
  char msg[300];
  snprintf(msg, sizeof msg, "%s%s%s", c->err[0] ? c->err : "nvfuser_like: cannot build the fusion at ", c->err[0] ? "" : what,
           c->err[0] ? "" : (n ? nvf_host->node_kind(n) : ""));
  return nvf_host->status_new(FBXP_ERR_UNSUPPORTED, msg);
}

fbxp_status *nvf_fusion_build(nvf_fusion *f, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin) {
  bctx *c = nvf_host->alloc(sizeof *c);
  int *uf = nvf_host->alloc(sizeof(int) * NVF_MAX_TVS * NVF_MAX_DIMS);
  fbxp_status *st = NULL;
  if (!c || !uf) {
    nvf_host->free(c);
    nvf_host->free(uf);
    return nvf_host->status_new(FBXP_ERR_NOMEM, "nvfuser_like: out of memory");
  }
  memset(c, 0, sizeof *c);
  c->f = f;
  c->uf = uf;
  if (nin != nvf_host->graph_num_inputs(g) || nin > NVF_MAX_IO ||
      nvf_host->graph_num_outputs(g) > NVF_MAX_IO) {
    st = nvf_host->status_new(FBXP_ERR_INVALID, "nvfuser_like: input specs do not match the group's inputs");
    goto done;
  }
  f->ninputs = nin;
  for (int i = 0; i < nin && !st; i++) {
    const fbxp_value *v = nvf_host->graph_input(g, i);
    f->input_kind[i] = in[i].kind;
    int t;
    if (in[i].kind == FBXP_ARG_TENSOR) {
      if (!dtype_ok(in[i].dtype) || in[i].device_type != kDLCPU || in[i].ndim < 0 || in[i].ndim > NVF_MAX_DIMS) {
        st = unsupported(c, "an input's dtype, rank or device: ", NULL);
        break;
      }
      for (int d = 0; d < in[i].ndim; d++)
        if (in[i].sizes[d] < 0) st = unsupported(c, "symbolic sizes (dynamic shapes are not scheduled)", NULL);
      if (st || (t = new_tv(c, in[i].dtype)) < 0) break;
      nvf_tv *tv = &f->tv[t];
      tv->nd = in[i].ndim;
      tv->prio = in[i].ndim ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM;
      for (int d = 0; d < in[i].ndim; d++) {
        int64_t e = in[i].sizes[d];
        tv->dom[d] = (nvf_id){e == 1 ? NVF_ID_BROADCAST : NVF_ID_ITER, e, -1};
        tv->stride[d] = in[i].strides[d];
      }
    } else {
      int dt = in[i].kind == FBXP_ARG_FLOAT ? FBXK_F64 : nvf_host->value_kind(v) == FBXP_TYPE_BOOL ? FBXK_BOOL : FBXK_I64;
      if ((t = new_tv(c, dt)) < 0) break;
      f->tv[t].scalar = 1;
      f->tv[t].prio = FBXK_PRIO_SCALAR;
    }
    f->tv[t].input = i;
    f->input_tv[i] = t;
    bind(c, v, t);
  }
  for (const fbxp_node *n = nvf_host->block_first(nvf_host->graph_block(g)); n && !st; n = nvf_host->node_next(n)) {
    nvf_ninfo info;
    nvf_nclass cls = nvf_classify(n, typeof_built, c, &info);
    if (cls == NVF_N_CONST || cls == NVF_N_LIST) continue;
    int out = -1;
    if (cls == NVF_N_PW) {
      int ops[FBXK_MAX_OP_ARGS], params[FBXK_MAX_OP_ARGS];
      int sel = fbxk_op_selector(info.m.op);
      for (int i = 0; i < info.m.noperands; i++) {
        int t = operand(c, nvf_host->node_input(n, info.m.operand_input[i]));
        ops[i] = i == sel ? t : cast(c, t, info.cdtype);
      }
      for (int i = 0; i < info.m.nparams; i++) params[i] = operand(c, nvf_host->node_input(n, info.m.param_input[i]));
      int ok = 1;
      for (int i = 0; i < info.m.noperands; i++) ok &= ops[i] >= 0;
      for (int i = 0; i < info.m.nparams; i++) ok &= params[i] >= 0;
      if (ok) out = pw(c, info.m.op, info.cdtype, info.rdtype, ops, info.m.noperands, params, info.m.nparams);
    } else if (cls == NVF_N_RED || cls == NVF_N_SOFTMAX || cls == NVF_N_LAYER_NORM) {
      int x = find_tv(c, nvf_host->node_input(n, 0));
      if (x >= 0 && !f->tv[x].scalar && info.nd > 0) {
        if (cls == NVF_N_RED) out = red_node(c, x, &info);
        else if (cls == NVF_N_SOFTMAX) out = softmax_node(c, x, &info);
        else out = layer_norm_node(c, n, x, &info);
      }
    }
    if (out < 0 || bind(c, nvf_host->node_output(n, 0), out)) st = unsupported(c, "", n);
  }
  if (st) goto done;
  f->noutputs = nvf_host->graph_num_outputs(g);
  for (int o = 0; o < f->noutputs && !st; o++) {
    int t = find_tv(c, nvf_host->graph_output(g, o));
    if (t < 0 || f->tv[t].scalar) {
      st = unsupported(c, "an output that is not a tensor it computes: ", NULL);
      break;
    }
    if (f->tv[t].input >= 0 || f->tv[t].output || f->tv[t].def < 0) t = pw(c, -1, f->tv[t].dtype, f->tv[t].dtype, &t, 1, NULL, 0);
    else if (f->tv[t].nd != logical(&f->tv[t], (int[NVF_MAX_DIMS]){0})) t = bcast_rank(c, t, logical(&f->tv[t], (int[NVF_MAX_DIMS]){0}));
    if (t < 0) {
      st = unsupported(c, "too many tensor views", NULL);
      break;
    }
    f->tv[t].output = 1;
    f->output_tv[o] = t;
  }
  /* axes: union-find classes of iteration/reduction domains with extent != 1 */
  if (!st) {
    int root_axis[NVF_MAX_TVS * NVF_MAX_DIMS];
    for (int i = 0; i < f->ntv * NVF_MAX_DIMS; i++) root_axis[i] = -1;
    /* the reference: the TV with the most such domains orders the axes */
    int ref = -1, best = -1;
    for (int t = 0; t < f->ntv; t++) {
      int k = 0;
      for (int d = 0; d < f->tv[t].nd; d++) k += f->tv[t].dom[d].extent != 1;
      if (k > best) best = k, ref = t;
    }
    f->naxes = 0;
    for (int pass = 0; pass < 2 && !st; pass++)
      for (int t = pass ? 0 : ref; t < (pass ? f->ntv : ref + 1) && !st; t++)
        for (int d = 0; d < f->tv[t].nd; d++) {
          nvf_id *id = &f->tv[t].dom[d];
          if (id->type == NVF_ID_BROADCAST || id->extent == 1) {
            id->axis = -1;
            continue;
          }
          int r = uf_find(uf, t * NVF_MAX_DIMS + d);
          if (root_axis[r] < 0) {
            if (f->naxes >= NVF_MAX_DIMS) {
              st = unsupported(c, "more than 8 distinct axes", NULL);
              break;
            }
            root_axis[r] = f->naxes;
            f->axis_extent[f->naxes++] = id->extent;
          }
          id->axis = root_axis[r];
          if (f->axis_extent[id->axis] != id->extent) st = unsupported(c, "domains of one axis with two extents", NULL);
        }
    for (int t = 0; t < f->ntv && !st; t++)
      for (int d = 0; d < f->tv[t].nd; d++)
        for (int e = d + 1; e < f->tv[t].nd; e++)
          if (f->tv[t].dom[d].axis >= 0 && f->tv[t].dom[d].axis == f->tv[t].dom[e].axis)
            st = unsupported(c, "a tensor view with two domains on one axis", NULL);
    /* Every kernel launches over its segment's axes and stores an output at
     * each index it visits. When one axis is empty, no index is visited, so
     * an output without that axis (abs of a 0-dim input next to an add that
     * broadcasts it over [0, 1]) would never be written. */
    int empty_axis = 0;
    for (int a = 0; a < f->naxes; a++) empty_axis |= f->axis_extent[a] == 0;
    for (int o = 0; o < f->noutputs && empty_axis && !st; o++) {
      const nvf_tv *tv = &f->tv[f->output_tv[o]];
      int64_t n = 1;
      for (int d = 0; d < tv->nd; d++) n *= tv->dom[d].extent;
      if (n > 0) st = unsupported(c, "an empty axis beside a non-empty output", NULL);
    }
  }
done:
  nvf_host->free(c);
  nvf_host->free(uf);
  return st;
}

/* ---- printing ------------------------------------------------------------------------ */

static void print_tv(const nvf_fusion *f, int t, fbxk_buf *b) {
  const nvf_tv *tv = &f->tv[t];
  if (tv->is_const) {
    if (tv->dtype == FBXK_F64) fbxk_printf(b, "double(%.17g)", tv->cval.f);
    else fbxk_printf(b, "%s(%lld)", tv->dtype == FBXK_BOOL ? "bool" : "int64", (long long)tv->cval.i);
    return;
  }
  fbxk_printf(b, "T%d_%s", t, tv->input >= 0 ? "g" : tv->output ? "o" : "l");
  if (tv->scalar) {
    fbxk_printf(b, "(%s scalar)", fbxk_dtype_name(tv->dtype));
    return;
  }
  fbxk_puts(b, "[");
  for (int d = 0; d < tv->nd; d++) {
    const nvf_id *id = &tv->dom[d];
    fbxk_printf(b, "%s%cS%d{%lld}", d ? ", " : "", "irb"[id->type], id->axis, (long long)id->extent);
  }
  fbxk_printf(b, "] %s", fbxk_dtype_name(tv->dtype));
}

void nvf_fusion_print(const nvf_fusion *f, fbxk_buf *b) {
  fbxk_printf(b, "Inputs:\n");
  for (int i = 0; i < f->ninputs; i++) {
    fbxk_puts(b, "  ");
    print_tv(f, f->input_tv[i], b);
    fbxk_puts(b, "\n");
  }
  fbxk_printf(b, "Axes:");
  for (int a = 0; a < f->naxes; a++) fbxk_printf(b, " %d{%lld}", a, (long long)f->axis_extent[a]);
  fbxk_printf(b, "\nExpressions:\n");
  static const char *rn[] = {"sum", "max", "min"};
  for (int e = 0; e < f->nexpr; e++) {
    const nvf_expr *x = &f->ex[e];
    fbxk_puts(b, "  ");
    print_tv(f, x->out, b);
    fbxk_puts(b, " = ");
    if (x->kind == NVF_E_PW) fbxk_printf(b, "%s", x->op < 0 ? "cast" : fbxk_op_id(x->op));
    else if (x->kind == NVF_E_REDUCE) fbxk_printf(b, "reduce_%s", rn[x->red]);
    else fbxk_puts(b, "broadcast");
    fbxk_puts(b, "(");
    for (int i = 0; i < x->nin; i++) {
      if (i) fbxk_puts(b, ", ");
      print_tv(f, x->in[i], b);
    }
    fbxk_puts(b, ")");
    if (x->kind == NVF_E_PW && x->op >= 0) fbxk_printf(b, " in %s", fbxk_dtype_name(x->cdtype));
    fbxk_puts(b, "\n");
  }
  fbxk_printf(b, "Outputs:");
  for (int o = 0; o < f->noutputs; o++) fbxk_printf(b, " T%d_o", f->output_tv[o]);
  fbxk_puts(b, "\n");
}
