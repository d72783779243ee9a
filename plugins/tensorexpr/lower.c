/* Lowering: a group's subgraph and its input specs -> the loop-nest IR.
 *
 * Every tensor value gets a buffer (an input, a temporary, or an output) and
 * every node a loop nest that computes its buffer: NNC's "one Tensor per
 * op", the schedule then inlines what need not be stored.
 *   - pointwise rows of the kit: one loop per output dim; operands read with
 *     broadcasting explicit (index 0 on a broadcast dim), cast to the row's
 *     compute dtype (PyTorch's promotion through fbxk_op_dtypes), the row's
 *     template applied, the result in its result dtype;
 *   - sum/mean/amax/amin over constant dims: loops over the kept dims, a
 *     Reduce over the reduced ones (combiner: the kit's ADD_T / MAX_OTHER /
 *     MIN_OTHER; float sums accumulate in float32, in float64 for float64
 *     data, integer ones in int64), then the Store (mean divides by the count with DIV_T);
 *   - softmax/log_softmax over a constant dim: the row max (a Reduce into a
 *     temporary); softmax in float32/float64 then writes exp(x - max) into
 *     its output, sums the output and divides it in place; log_softmax (and
 *     softmax into half/bfloat16) sums exp(x - max) and computes (x - max) -
 *     log(sum) or exp(x - max) / sum.
 */
#include <stdio.h>
#include <string.h>

#include "te.h"

/* ---- classification ------------------------------------------------------------------ */

static int schema_is(const fbxp_node *n, const char *prefix) {
  const char *s = te_host->node_schema(n);
  return s && !strncmp(s, prefix, strlen(prefix));
}

/* the accumulator of a float sum over dtype dt: float32 (float64 for
 * float64 data); half and bfloat16 sum in float32 as PyTorch does */
static int sum_acc(int dt) { return dt == FBXK_F64 ? FBXK_F64 : FBXK_F32; }

static int dtype_ok(int dt) {
  return dt == FBXK_F32 || dt == FBXK_F64 || dt == FBXK_F16 || dt == FBXK_BF16 || dt == FBXK_I64 ||
         dt == FBXK_I32 || dt == FBXK_I16 || dt == FBXK_I8 || dt == FBXK_U8 || dt == FBXK_BOOL;
}

/* a constant int, or -1 when not one */
static int const_int(const fbxp_value *v, int64_t *out) { return te_host->value_const_int(v, out) ? 0 : -1; }

/* The reductions: where their arguments are (input indices, -1: absent). */
typedef struct red_form {
  const char *schema;
  te_red red;
  int dims;      /* the dims: a list (or one int with dims_int; None allowed with dims_none); -1: all */
  int dims_int, dims_none;
  int keep;      /* keepdim; -1: false */
  int dtype;     /* a dtype argument that must be None; -1: none */
  int corr;      /* var/std: unbiased (a bool) or, with corr_int, the correction (None: 1) */
  int corr_int;
} red_form;

static const red_form red_forms[] = {
    {"aten::sum.dim_IntList(", TE_RED_SUM, 1, 0, 1, 2, 3, -1, 0},
    {"aten::sum(Tensor self, *", TE_RED_SUM, -1, 0, 0, -1, 1, -1, 0},
    {"aten::mean.dim(", TE_RED_MEAN, 1, 0, 1, 2, 3, -1, 0},
    {"aten::mean(Tensor self, *", TE_RED_MEAN, -1, 0, 0, -1, 1, -1, 0},
    {"aten::amax(", TE_RED_AMAX, 1, 0, 0, 2, -1, -1, 0},
    {"aten::amin(", TE_RED_AMIN, 1, 0, 0, 2, -1, -1, 0},
    {"aten::max(Tensor self)", TE_RED_AMAX, -1, 0, 0, -1, -1, -1, 0},
    {"aten::min(Tensor self)", TE_RED_AMIN, -1, 0, 0, -1, -1, -1, 0},
    {"aten::max.dim(", TE_RED_AMAX, 1, 1, 0, 2, -1, -1, 0},
    {"aten::min.dim(", TE_RED_AMIN, 1, 1, 0, 2, -1, -1, 0},
    {"aten::prod.dim_int(", TE_RED_PROD, 1, 1, 0, 2, 3, -1, 0},
    {"aten::prod(Tensor self, *", TE_RED_PROD, -1, 0, 0, -1, 1, -1, 0},
    {"aten::var(Tensor self, bool", TE_RED_VAR, -1, 0, 0, -1, -1, 1, 0},
    {"aten::var.dim(", TE_RED_VAR, 1, 0, 1, 3, -1, 2, 0},
    {"aten::var.correction(", TE_RED_VAR, 1, 0, 1, 3, -1, 2, 1},
    {"aten::std(Tensor self, bool", TE_RED_STD, -1, 0, 0, -1, -1, 1, 0},
    {"aten::std.dim(", TE_RED_STD, 1, 0, 1, 3, -1, 2, 0},
    {"aten::std.correction(", TE_RED_STD, 1, 0, 1, 3, -1, 2, 1},
};

te_nclass te_classify(const fbxp_node *n, te_typeof_fn tf, void *ctx, te_ninfo *o) {
  memset(o, 0, sizeof *o);
  o->cls = TE_N_NO;
  const char *k = te_host->node_kind(n);
  if (!strcmp(k, "prim::Constant")) return o->cls = TE_N_CONST;
  if (!strcmp(k, "prim::ListConstruct")) {
    int64_t tmp[TE_MAX_DIMS];
    int len = te_host->value_const_int_list(te_host->node_output(n, 0), tmp, TE_MAX_DIMS);
    if (len >= 0 && len <= TE_MAX_DIMS) return o->cls = TE_N_LIST;
    /* tensors for one aten::cat */
    const fbxp_value *lv = te_host->node_output(n, 0);
    int32_t idx;
    if (te_host->value_num_uses(lv) != 1 || te_host->node_num_inputs(n) < 1) return TE_N_NO;
    const fbxp_node *u = te_host->value_use(lv, 0, &idx);
    if (!u || !schema_is(u, "aten::cat(") || idx != 0) return TE_N_NO;
    int dt = -2;
    for (int i = 0; i < te_host->node_num_inputs(n); i++) {
      te_vtype t = tf(ctx, te_host->node_input(n, i));
      if (!t.known || !t.tensor || (t.dtype >= 0 && !dtype_ok(t.dtype))) return TE_N_NO;
      if (dt != -2 && t.dtype != dt) return TE_N_NO; /* no promotion across the pieces */
      dt = t.dtype;
    }
    o->sop = TE_SH_TLIST;
    return o->cls = TE_N_SHAPE;
  }
  if (schema_is(n, "aten::cat(")) {
    const fbxp_node *l = te_host->value_producer(te_host->node_input(n, 0));
    int64_t dim;
    if (!l || strcmp(te_host->node_kind(l), "prim::ListConstruct") || const_int(te_host->node_input(n, 1), &dim))
      return TE_N_NO;
    te_ninfo li;
    if (te_classify(l, tf, ctx, &li) != TE_N_SHAPE || li.sop != TE_SH_TLIST) return TE_N_NO;
    o->sop = TE_SH_CAT;
    return o->cls = TE_N_SHAPE;
  }
  if (schema_is(n, "aten::chunk(")) {
    const fbxp_value *lv = te_host->node_output(n, 0);
    int32_t idx;
    int64_t chunks, dim;
    if (te_host->value_num_uses(lv) != 1) return TE_N_NO;
    const fbxp_node *u = te_host->value_use(lv, 0, &idx);
    if (!u || strcmp(te_host->node_kind(u), "prim::ListUnpack")) return TE_N_NO;
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    if (!x.known || !x.tensor || (x.dtype >= 0 && !dtype_ok(x.dtype))) return TE_N_NO;
    if (const_int(te_host->node_input(n, 1), &chunks) || chunks < 1 || const_int(te_host->node_input(n, 2), &dim))
      return TE_N_NO;
    o->sop = TE_SH_CHUNK;
    return o->cls = TE_N_SHAPE;
  }
  if (!strcmp(k, "prim::ListUnpack")) {
    const fbxp_node *ch = te_host->value_producer(te_host->node_input(n, 0));
    te_ninfo ci;
    if (!ch || !schema_is(ch, "aten::chunk(") || te_classify(ch, tf, ctx, &ci) != TE_N_SHAPE) return TE_N_NO;
    for (int i = 0; i < te_host->node_num_outputs(n); i++) {
      te_vtype t = tf(ctx, te_host->node_output(n, i));
      if (!t.known || !t.tensor) return TE_N_NO;
    }
    o->sop = TE_SH_UNPACK;
    return o->cls = TE_N_SHAPE;
  }
  /* max.dim/min.dim: the values only (their indices unused) */
  int nout = te_host->node_num_outputs(n);
  int mmdim = schema_is(n, "aten::max.dim(") || schema_is(n, "aten::min.dim(");
  if (nout != 1 && !(mmdim && nout == 2)) return TE_N_NO;
  if (mmdim && te_host->value_num_uses(te_host->node_output(n, 1)) > 0) {
    te_vtype it = tf(ctx, te_host->node_output(n, 1));
    if (!it.known || !it.tensor || (it.dtype >= 0 && it.dtype != FBXK_I64)) return TE_N_NO;
    o->indices = 1;
  }
  /* the result's own type (-1 when not profiled: then only computed) */
  te_vtype out = tf(ctx, te_host->node_output(n, 0));
  if (!out.known || !out.tensor) return TE_N_NO;
  int nin = te_host->node_num_inputs(n);
  if (schema_is(n, "aten::type_as(")) {
    te_vtype x = tf(ctx, te_host->node_input(n, 0)), y = tf(ctx, te_host->node_input(n, 1));
    if (!x.known || !x.tensor || !y.known || !y.tensor || (x.dtype >= 0 && !dtype_ok(x.dtype)) ||
        (y.dtype >= 0 && !dtype_ok(y.dtype)))
      return TE_N_NO;
    if (y.dtype >= 0 && out.dtype >= 0 && out.dtype != y.dtype) return TE_N_NO;
    o->sop = TE_SH_TYPE_AS;
    o->rdtype = o->cdtype = y.dtype;
    return o->cls = TE_N_SHAPE;
  }
  o->lead = -1;
  /* _grad_sum_to_size(x, size): a sum over the leading dims x has beyond
   * size (dropped) and the dims where size is 1 (kept); size None: x */
  if (schema_is(n, "aten::_grad_sum_to_size(")) {
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    int unknown = x.known && x.tensor && x.dtype < 0;
    if (nin < 2 || !x.known || !x.tensor || (!unknown && !fbxk_is_float(x.dtype))) return TE_N_NO;
    const fbxp_value *sv = te_host->node_input(n, 1);
    int64_t size[TE_MAX_DIMS];
    int ro = te_host->value_is_none(sv) ? -1 : te_host->value_const_int_list(sv, size, TE_MAX_DIMS);
    if (ro < 0 && !te_host->value_is_none(sv)) return TE_N_NO;
    o->red = TE_RED_SUM;
    o->ndims = 0;
    o->lead = -2;
    if (unknown) return o->cls = TE_N_RED; /* compile sees the rank */
    if (ro > x.ndim) return TE_N_NO;
    if (ro >= 0) {
      int lead = x.ndim - ro;
      for (int d = 0; d < x.ndim; d++)
        if (d < lead || size[d - lead] == 1) o->dims[o->ndims++] = d;
      if (o->ndims) o->lead = lead;
    }
    o->rdtype = x.dtype;
    o->cdtype = sum_acc(x.dtype);
    if (out.dtype >= 0 && out.dtype != x.dtype) return TE_N_NO;
    return o->cls = TE_N_RED;
  }
  /* reductions */
  const red_form *rf = NULL;
  for (size_t i = 0; i < sizeof red_forms / sizeof red_forms[0] && !rf; i++)
    if (schema_is(n, red_forms[i].schema)) rf = &red_forms[i];
  if (rf) {
    int need = rf->dims > rf->keep ? rf->dims : rf->keep;
    if (rf->dtype > need) need = rf->dtype;
    if (rf->corr > need) need = rf->corr;
    if (nin <= need) return TE_N_NO;
    te_red red = rf->red;
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    int unknown = x.known && x.tensor && x.dtype < 0;
    if (!x.known || !x.tensor || (!unknown && (!dtype_ok(x.dtype) || x.ndim < 1))) return TE_N_NO;
    int64_t dims[TE_MAX_DIMS], keep = 0;
    int nd = -1; /* -1: all dims */
    if (rf->dims >= 0) {
      const fbxp_value *dv = te_host->node_input(n, rf->dims);
      if (rf->dims_int) {
        if (const_int(dv, &dims[0])) return TE_N_NO;
        nd = 1;
      } else if (!(rf->dims_none && te_host->value_is_none(dv))) {
        nd = te_host->value_const_int_list(dv, dims, TE_MAX_DIMS);
        if (nd < 1) return TE_N_NO;
      }
    }
    if (rf->keep >= 0 && const_int(te_host->node_input(n, rf->keep), &keep)) return TE_N_NO;
    if (rf->dtype >= 0 && !te_host->value_is_none(te_host->node_input(n, rf->dtype))) return TE_N_NO;
    o->corr = 0;
    if (red == TE_RED_VAR || red == TE_RED_STD) {
      int64_t c = 1;
      const fbxp_value *cv = rf->corr >= 0 ? te_host->node_input(n, rf->corr) : NULL;
      if (cv && !(rf->corr_int && te_host->value_is_none(cv)) && const_int(cv, &c)) return TE_N_NO;
      o->corr = (double)c; /* unbiased: 1/0; correction: its value (None: 1) */
    }
    o->keepdim = keep != 0;
    o->red = red;
    o->ndims = -1;
    if (unknown) /* not profiled: the dims are checked when compile sees the rank */
      return o->cls = TE_N_RED;
    if (nd > x.ndim) return TE_N_NO;
    int seen[TE_MAX_DIMS] = {0};
    for (int i = 0; i < nd; i++) {
      int64_t d = dims[i] < 0 ? dims[i] + x.ndim : dims[i];
      if (d < 0 || d >= x.ndim || seen[d]) return TE_N_NO;
      seen[d] = 1;
    }
    o->ndims = 0;
    for (int d = 0; d < x.ndim; d++)
      if (nd < 0 || seen[d]) o->dims[o->ndims++] = d;
    int fl = fbxk_is_float(x.dtype);
    if ((red == TE_RED_MEAN || red == TE_RED_VAR || red == TE_RED_STD) && !fl) return TE_N_NO;
    if (red == TE_RED_SUM || red == TE_RED_MEAN || red == TE_RED_PROD || red == TE_RED_VAR || red == TE_RED_STD) {
      o->rdtype = fl ? x.dtype : FBXK_I64;
      /* float sums in float32 (float64 for float64), as PyTorch's CPU
       * kernels; the C backend sums in blocks of lanes (codegen_c.c). A
       * product stays in float64 (not vectorized: no speed to win) */
      o->cdtype = !fl ? FBXK_I64 : red == TE_RED_PROD ? FBXK_F64 : sum_acc(x.dtype);
    } else {
      o->rdtype = x.dtype;
      o->cdtype = x.dtype;
    }
    if (out.dtype >= 0 && o->rdtype != out.dtype) return TE_N_NO;
    return o->cls = TE_N_RED;
  }
  if (schema_is(n, "aten::layer_norm(")) {
    if (nin < 6) return TE_N_NO;
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    int unknown = x.known && x.tensor && x.dtype < 0;
    if (!x.known || !x.tensor || (!unknown && (!fbxk_is_float(x.dtype) || x.ndim < 1))) return TE_N_NO;
    int64_t shape[TE_MAX_DIMS];
    int ns = te_host->value_const_int_list(te_host->node_input(n, 1), shape, TE_MAX_DIMS);
    if (ns < 1) return TE_N_NO;
    for (int p = 2; p <= 3; p++) {
      const fbxp_value *wv = te_host->node_input(n, p);
      if (te_host->value_is_none(wv)) continue;
      te_vtype w = tf(ctx, wv);
      if (!w.known || !w.tensor || (w.dtype >= 0 && !unknown && w.dtype != x.dtype)) return TE_N_NO;
    }
    te_vtype e = tf(ctx, te_host->node_input(n, 4));
    if (!e.known || e.tensor || e.dtype != FBXK_F64) return TE_N_NO;
    o->ndims = ns;
    if (unknown) return o->cls = TE_N_NORM;
    if (ns > x.ndim) return TE_N_NO;
    o->rdtype = x.dtype;
    o->cdtype = x.dtype == FBXK_F64 ? FBXK_F64 : FBXK_F32;
    if (out.dtype >= 0 && out.dtype != x.dtype) return TE_N_NO;
    return o->cls = TE_N_NORM;
  }
  static const struct {
    const char *schema;
    te_shape_op op;
    int nlist, nint; /* constant arguments after self: int lists, then ints */
  } shapes[] = {
      {"aten::permute(", TE_SH_PERMUTE, 1, 0},          {"aten::t(", TE_SH_T, 0, 0},
      {"aten::transpose.int(", TE_SH_TRANSPOSE, 0, 2},  {"aten::unsqueeze(", TE_SH_UNSQUEEZE, 0, 1},
      {"aten::squeeze(Tensor(a) self)", TE_SH_SQUEEZE, 0, 0}, {"aten::squeeze.dim(", TE_SH_SQUEEZE_DIM, 0, 1},
      {"aten::expand(", TE_SH_EXPAND, 1, 0},            {"aten::expand_as(", TE_SH_EXPAND_AS, 0, 0},
      {"aten::view(", TE_SH_VIEW, 1, 0},                {"aten::reshape(", TE_SH_VIEW, 1, 0},
      {"aten::flatten.using_ints(", TE_SH_VIEW, 0, 2},  {"aten::view_as(", TE_SH_VIEW, 0, 0},
      {"aten::reshape_as(", TE_SH_VIEW, 0, 0},
  };
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    if (!schema_is(n, shapes[si].schema)) continue;
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    int unknown = x.known && x.tensor && x.dtype < 0;
    if (!x.known || !x.tensor || (!unknown && !dtype_ok(x.dtype))) return TE_N_NO;
    int a = 1;
    for (int i = 0; i < shapes[si].nlist; i++, a++) {
      int64_t tmp[TE_MAX_DIMS];
      if (a >= nin || te_host->value_const_int_list(te_host->node_input(n, a), tmp, TE_MAX_DIMS) < 0) return TE_N_NO;
    }
    for (int i = 0; i < shapes[si].nint; i++, a++) {
      int64_t tmp;
      if (a >= nin || const_int(te_host->node_input(n, a), &tmp)) return TE_N_NO;
    }
    if (schema_is(n, "aten::view_as(") || schema_is(n, "aten::reshape_as(")) {
      te_vtype y = tf(ctx, te_host->node_input(n, 1));
      if (!y.known || !y.tensor) return TE_N_NO;
    }
    if (shapes[si].op == TE_SH_EXPAND_AS) {
      te_vtype y = tf(ctx, te_host->node_input(n, 1));
      if (!y.known || !y.tensor) return TE_N_NO;
    }
    /* expand(..., implicit): a constant bool */
    if (shapes[si].op == TE_SH_EXPAND && nin > 2) {
      int64_t tmp;
      if (const_int(te_host->node_input(n, 2), &tmp)) return TE_N_NO;
    }
    o->sop = shapes[si].op;
    o->rdtype = o->cdtype = x.dtype;
    if (!unknown && out.dtype >= 0 && out.dtype != x.dtype) return TE_N_NO;
    return o->cls = TE_N_SHAPE;
  }
  int sm = schema_is(n, "aten::softmax.int("), lsm = schema_is(n, "aten::log_softmax.int(");
  if (sm || lsm) {
    if (nin < 3) return TE_N_NO;
    te_vtype x = tf(ctx, te_host->node_input(n, 0));
    int64_t dim, dt = -1;
    int unknown = x.known && x.tensor && x.dtype < 0;
    if (!x.known || !x.tensor || (!unknown && (!fbxk_is_float(x.dtype) || x.ndim < 1)) ||
        const_int(te_host->node_input(n, 1), &dim))
      return TE_N_NO;
    const fbxp_value *dv = te_host->node_input(n, 2);
    if (!te_host->value_is_none(dv) && (const_int(dv, &dt) || !fbxk_is_float((int)dt))) return TE_N_NO;
    o->log = lsm;
    if (unknown) return o->cls = TE_N_SOFTMAX; /* not profiled: compile checks the rest */
    if (dim < 0) dim += x.ndim;
    if (dim < 0 || dim >= x.ndim) return TE_N_NO;
    o->ndims = 1;
    o->dims[0] = (int)dim;
    o->log = lsm;
    o->rdtype = dt >= 0 ? (int)dt : x.dtype;
    o->cdtype = o->rdtype; /* float compute type (half/bfloat16: float) */
    if (out.dtype >= 0 && o->rdtype != out.dtype) return TE_N_NO;
    return o->cls = TE_N_SOFTMAX;
  }
  /* pointwise rows */
  if (fbxk_op_match(te_host, n, &o->m) < 0) return TE_N_NO;
  fbxk_typed ty[FBXK_MAX_OP_ARGS];
  int unknown[FBXK_MAX_OP_ARGS] = {0}, nunknown = 0;
  int sel = fbxk_op_selector(o->m.op);
  for (int i = 0; i < o->m.noperands; i++) {
    te_vtype t = tf(ctx, te_host->node_input(n, o->m.operand_input[i]));
    if (!t.known) return TE_N_NO;
    if (t.tensor && t.dtype < 0) nunknown += unknown[i] = 1;
    else if (!dtype_ok(t.dtype)) return TE_N_NO;
    ty[i] = (fbxk_typed){t.dtype, t.prio};
  }
  for (int i = 0; i < o->m.nparams; i++) {
    te_vtype t = tf(ctx, te_host->node_input(n, o->m.param_input[i]));
    if (!t.known || t.tensor) return TE_N_NO;
  }
  int64_t to = -1;
  if (fbxk_op_rule(o->m.op) == FBXK_R_TO && (const_int(te_host->node_input(n, 1), &to) || !dtype_ok((int)to)))
    return TE_N_NO;
  /* a conversion to its input's own dtype returns the input (an alias):
   * fused, it would be a copy, and an in-place write through one name
   * would no longer reach the other (as the legacy fuser, ops.c) */
  if (to >= 0 && (unknown[0] || ty[0].dtype == (int)to)) return TE_N_NO;
  /* Unprofiled operands (FUSEBOX_PROFILING_RUNS=0): the op is taken only
   * if it has a template whatever dtype they turn out to have (the real
   * dtypes are checked again when compile sees the specs). */
  static const int cands[] = {FBXK_F32, FBXK_F64, FBXK_F16, FBXK_BF16, FBXK_I64, FBXK_I32,
                              FBXK_I16, FBXK_I8, FBXK_U8, FBXK_BOOL};
  int ncand = nunknown ? (int)(sizeof cands / sizeof cands[0]) : 1;
  for (int c = 0; c < ncand; c++) {
    for (int i = 0; i < o->m.noperands; i++)
      if (unknown[i]) ty[i].dtype = i == sel ? FBXK_BOOL : cands[c];
    if (to >= 0) {
      o->cdtype = ty[0].dtype;
      o->rdtype = (int)to;
    } else if (fbxk_op_dtypes(o->m.op, ty, o->m.noperands, &o->cdtype, &o->rdtype)) {
      return TE_N_NO;
    }
    if (sel >= 0 && ty[sel].dtype != FBXK_BOOL) return TE_N_NO;
    if (!fbxk_op_template(o->m.op, o->cdtype) || !dtype_ok(o->rdtype)) return TE_N_NO;
    if (!nunknown && out.dtype >= 0 && o->rdtype != out.dtype) return TE_N_NO;
  }
  if (nunknown) o->cdtype = o->rdtype = -1;
  return o->cls = TE_N_PW;
}

te_vtype te_typeof_profiled(void *ctx, const fbxp_value *v) {
  (void)ctx;
  te_vtype t = {0};
  switch (te_host->value_kind(v)) {
    case FBXP_TYPE_TENSOR: {
      fbxp_tensor_type tt = {.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0};
      if (te_host->value_tensor_type(v, &tt)) return t;
      if (tt.device_type != 0 && tt.device_type != kDLCPU) return t;
      /* an unprofiled tensor (FUSEBOX_PROFILING_RUNS=0): dtype and rank -1;
       * te_classify is then optimistic and compile sees the real specs */
      if (tt.dtype < 0 || tt.ndim < 0) return (te_vtype){1, 1, -1, -1, FBXK_PRIO_TENSOR};
      return (te_vtype){1, 1, tt.dtype, tt.ndim, tt.ndim ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM};
    }
    case FBXP_TYPE_INT: return (te_vtype){1, 0, FBXK_I64, 0, FBXK_PRIO_SCALAR};
    case FBXP_TYPE_BOOL: return (te_vtype){1, 0, FBXK_BOOL, 0, FBXK_PRIO_SCALAR};
    case FBXP_TYPE_FLOAT: return (te_vtype){1, 0, FBXK_F64, 0, FBXK_PRIO_SCALAR};
    default: return t;
  }
}

/* ---- lowering ------------------------------------------------------------------------ */

#define MAXV 1024

typedef struct vinfo {
  const fbxp_value *v;
  te_vtype t;
  int buf;            /* tensors */
  int64_t sizes[TE_MAX_DIMS];
  te_expr *scalar;    /* scalars */
} vinfo;

typedef struct lctx {
  te_kernel_ir *k;
  te_expr *eps;  /* TE_RED_RSTD's eps (in the accumulation dtype) */
  int nv;
  vinfo vs[MAXV];
} lctx;

static vinfo *find(lctx *c, const fbxp_value *v) {
  for (int i = 0; i < c->nv; i++)
    if (c->vs[i].v == v) return &c->vs[i];
  return NULL;
}

static te_vtype typeof_lowered(void *ctx, const fbxp_value *v) {
  lctx *c = ctx;
  vinfo *i = find(c, v);
  if (i) return i->t;
  /* constants and the node's own result (its type in the group's subgraph) */
  return te_typeof_profiled(NULL, v);
}

static fbxp_status *unsupported(const char *fmt, const char *a) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, a);
  return te_host->status_new(FBXP_ERR_UNSUPPORTED, msg);
}

static fbxp_status *nomem(void) { return te_host->status_new(FBXP_ERR_NOMEM, "tensorexpr: out of memory"); }

static int add_buf(te_kernel_ir *k, te_buf_kind kind, int dtype, int ndim, const int64_t *sizes) {
  if (k->nbufs >= TE_MAX_BUFS) return -1;
  te_buf *b = &k->bufs[k->nbufs];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->dtype = dtype;
  b->ndim = ndim;
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    b->sizes[d] = sizes[d];
    b->strides[d] = s;
    s *= sizes[d];
  }
  b->numel = s;
  if (kind == TE_BUF_TEMP) b->slot = k->ntemps++;
  return k->nbufs++;
}

static vinfo *new_tensor(lctx *c, const fbxp_value *v, int dtype, int ndim, const int64_t *sizes) {
  if (c->nv >= MAXV) return NULL;
  int b = add_buf(c->k, TE_BUF_TEMP, dtype, ndim, sizes);
  if (b < 0) return NULL;
  vinfo *i = &c->vs[c->nv++];
  memset(i, 0, sizeof *i);
  i->v = v;
  i->t = (te_vtype){1, 1, dtype, ndim, ndim ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM};
  i->buf = b;
  memcpy(i->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
  return i;
}

/* The expression of an operand at the output point `vars` (rank r):
 * tensors are loaded with broadcasting; scalars are their expression. */
static te_expr *operand_at(lctx *c, const fbxp_value *v, int r, const int *vars) {
  vinfo *i = find(c, v);
  te_kernel_ir *k = c->k;
  if (i && i->t.tensor) {
    te_expr *idx[TE_MAX_DIMS];
    int nd = i->t.ndim;
    for (int d = 0; d < nd; d++) {
      int od = d + r - nd;
      idx[d] = i->sizes[d] == 1 || od < 0 ? te_imm_i(k, 0) : te_var(k, vars[od]);
    }
    return te_load(k, i->buf, nd, idx);
  }
  if (i) return i->scalar;
  double f;
  int64_t iv;
  if (te_host->value_const_float(v, &f)) return te_imm(k, FBXK_F64, (fbxk_scalar){f, 0});
  if (te_host->value_const_int(v, &iv))
    return te_imm(k, te_host->value_kind(v) == FBXP_TYPE_BOOL ? FBXK_BOOL : FBXK_I64, (fbxk_scalar){0, iv});
  return NULL;
}

/* For v_0 < s_0 { ... For v_{r-1} { inner } } */
static te_stmt *nest(te_kernel_ir *k, int r, const int *vars, const int64_t *sizes, te_stmt *inner) {
  te_stmt *s = inner;
  for (int d = r - 1; d >= 0; d--) {
    te_stmt *b = te_block(k);
    if (!b) return NULL;
    te_append(b, s);
    s = te_for(k, vars[d], sizes[d], b);
    if (!s) return NULL;
  }
  return s;
}

static te_stmt *store_all(te_kernel_ir *k, int buf, int r, const int *vars, te_expr *value) {
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) idx[d] = k->bufs[buf].sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, vars[d]);
  return te_store(k, buf, r, idx, value);
}

static fbxp_status *lower_pw(lctx *c, const fbxp_node *n, const te_ninfo *in) {
  te_kernel_ir *k = c->k;
  int64_t sizes[TE_MAX_DIMS];
  int r = 0;
  for (int i = 0; i < in->m.noperands; i++) {
    vinfo *v = find(c, te_host->node_input(n, in->m.operand_input[i]));
    if (v && v->t.tensor && v->t.ndim > r) r = v->t.ndim;
  }
  for (int d = 0; d < r; d++) sizes[d] = 1;
  for (int i = 0; i < in->m.noperands; i++) {
    vinfo *v = find(c, te_host->node_input(n, in->m.operand_input[i]));
    if (!v || !v->t.tensor) continue;
    for (int d = 0; d < v->t.ndim; d++) {
      int od = d + r - v->t.ndim;
      int64_t s = v->sizes[d];
      if (s != 1 && sizes[od] != 1 && s != sizes[od])
        return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: operands do not broadcast");
      if (s != 1) sizes[od] = s;
    }
  }
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), in->rdtype, r, sizes);
  if (!out) return nomem();
  int vars[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) vars[d] = te_new_var(k);
  te_expr *args[FBXK_MAX_OP_ARGS];
  int sel = fbxk_op_selector(in->m.op);
  for (int i = 0; i < in->m.noperands; i++) {
    te_expr *e = operand_at(c, te_host->node_input(n, in->m.operand_input[i]), r, vars);
    args[i] = i == sel ? e : te_cast(k, e, in->cdtype);
  }
  for (int i = 0; i < in->m.nparams; i++)
    args[in->m.noperands + i] = te_cast(k, operand_at(c, te_host->node_input(n, in->m.param_input[i]), r, vars), in->cdtype);
  te_expr *val = te_op(k, in->m.op, in->cdtype, in->rdtype, in->m.noperands + in->m.nparams, args);
  te_stmt *s = nest(k, r, vars, sizes, store_all(k, out->buf, r, vars, val));
  if (!s) return nomem();
  te_append(k->root, s);
  return NULL;
}

static te_stmt *reduce_stmt(te_kernel_ir *k, int local, int combiner, fbxk_scalar init, int nl, const int *rv,
                            const int64_t *re, te_expr *value) {
  if (!value) return NULL;
  te_stmt *s = te_arena_alloc(k->arena, sizeof *s);
  if (!s) return NULL;
  s->kind = TE_S_REDUCE;
  s->local = local;
  s->dtype = k->local_dtype[local];
  s->combiner = combiner;
  s->init = init;
  s->nloops = nl;
  for (int i = 0; i < nl; i++) {
    s->rvar[i] = rv[i];
    s->rextent[i] = re[i];
  }
  s->value = value;
  return s;
}

static fbxk_scalar red_init(te_red red, int dt) {
  int fl = fbxk_is_float(dt);
  if (red == TE_RED_PROD) return (fbxk_scalar){1, 1};
  if (red == TE_RED_AMAX) return fl ? (fbxk_scalar){-__builtin_inf(), 0} : (fbxk_scalar){0, dt == FBXK_BOOL ? 0 : INT64_MIN};
  if (red == TE_RED_AMIN) return fl ? (fbxk_scalar){__builtin_inf(), 0} : (fbxk_scalar){0, dt == FBXK_BOOL ? 1 : INT64_MAX};
  return (fbxk_scalar){0, 0};
}

static int red_combiner(te_red red) {
  return red == TE_RED_AMAX   ? FBXK_OP_MAX_OTHER
         : red == TE_RED_AMIN ? FBXK_OP_MIN_OTHER
         : red == TE_RED_PROD ? FBXK_OP_MUL_T
                              : FBXK_OP_ADD_T;
}

/* One reduction of x (vinfo) over the sorted dims `dims` into a new buffer
 * of dtype rdtype (keep: 0 the reduced dims dropped, 1 kept as size 1,
 * 2 + lead: dropped before dim lead, kept from it on), the reduced value being f(x) where f is
 * given as a callback of the load. Returns the buffer's vinfo. */
typedef te_expr *(*elem_fn)(lctx *c, te_expr *x, const int *xidx_vars, void *ud);

static vinfo *reduce(lctx *c, const fbxp_value *result, vinfo *x, const int *dims, int nd, int keep, te_red red,
                     int accdt, int rdtype, elem_fn f, void *ud, double corr) {
  te_kernel_ir *k = c->k;
  int r = x->t.ndim, isred[TE_MAX_DIMS] = {0};
  for (int i = 0; i < nd; i++) isred[dims[i]] = 1;
  int64_t osz[TE_MAX_DIMS] = {0};
  int ovars[TE_MAX_DIMS], ro = 0, xv[TE_MAX_DIMS], rv[TE_MAX_DIMS], nrv = 0;
  int64_t re[TE_MAX_DIMS], count = 1;
  for (int d = 0; d < r; d++) {
    if (isred[d]) {
      xv[d] = rv[nrv] = te_new_var(k);
      re[nrv++] = x->sizes[d];
      count *= x->sizes[d];
      if (keep == 1 || (keep >= 2 && d >= keep - 2)) {
        osz[ro] = 1;
        ovars[ro++] = te_new_var(k);
      }
    } else {
      osz[ro] = x->sizes[d];
      xv[d] = ovars[ro++] = te_new_var(k);
    }
  }
  vinfo *out = new_tensor(c, result, rdtype, ro, osz);
  if (!out) return NULL;
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) idx[d] = x->sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, xv[d]);
  te_expr *val = te_load(k, x->buf, r, idx);
  if (f) val = f(c, val, xv, ud);
  int local = te_new_local(k, accdt);
  if (local < 0) return NULL;
  te_expr *cv = te_cast(k, val, accdt);
  te_stmt *rs = reduce_stmt(k, local, red_combiner(red), red_init(red, accdt), nrv, rv, re, cv);
  te_expr *res = te_local(k, local, accdt);
  if (red == TE_RED_MEAN) {
    te_expr *a[2] = {res, te_imm(k, accdt, (fbxk_scalar){(double)count, count})};
    res = te_op(k, FBXK_OP_DIV_T, accdt, accdt, 2, a);
  } else if (red == TE_RED_VAR || red == TE_RED_STD || red == TE_RED_RSTD) {
    /* PyTorch: the sum of squares over max(count - correction, 0) */
    double dof = (double)count - corr;
    te_expr *a[2] = {res, te_imm(k, accdt, (fbxk_scalar){dof > 0 ? dof : 0, 0})};
    res = te_op(k, FBXK_OP_DIV_T, accdt, accdt, 2, a);
    if (red == TE_RED_STD) res = te_op(k, FBXK_OP_SQRT, accdt, accdt, 1, &res);
    if (red == TE_RED_RSTD) {
      te_expr *e[2] = {res, c->eps};
      te_expr *ve = te_op(k, FBXK_OP_ADD_T, accdt, accdt, 2, e);
      res = te_op(k, FBXK_OP_RSQRT, accdt, accdt, 1, &ve);
    }
  }
  te_stmt *body = te_block(k);
  if (!body || !rs) return NULL;
  te_append(body, rs);
  te_append(body, store_all(k, out->buf, ro, ovars, te_cast(k, res, rdtype)));
  te_stmt *s = ro ? nest(k, ro, ovars, osz, body) : body;
  if (!s) return NULL;
  te_append(k->root, s);
  return out;
}

/* softmax's pieces as kit rows in compute dtype cd */
typedef struct smctx {
  int cd;
  vinfo *m;       /* the row max (keepdim) */
} smctx;

static te_expr *load_row_stat(lctx *c, vinfo *st, const int *xv, int r) {
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) idx[d] = st->sizes[d] == 1 ? te_imm_i(c->k, 0) : te_var(c->k, xv[d]);
  return te_load(c->k, st->buf, r, idx);
}

static te_expr *x_minus_max(lctx *c, te_expr *x, const int *xv, smctx *s) {
  te_expr *a[2] = {te_cast(c->k, x, s->cd), load_row_stat(c, s->m, xv, s->m->t.ndim)};
  return te_op(c->k, FBXK_OP_SUB_T, s->cd, s->cd, 2, a);
}

/* exp(x - max): its operand is <= 0 or NaN (the max is over x's row), so
 * the kit's exp for such operands prints (FBXK_FACT_NONPOS, the same bits) */
static te_expr *exp_shifted(lctx *c, te_expr *x, const int *xv, void *ud) {
  smctx *s = ud;
  te_expr *a[1] = {x_minus_max(c, x, xv, s)};
  te_expr *e = te_op(c->k, FBXK_OP_EXP, s->cd, s->cd, 1, a);
  if (e) e->facts = FBXK_FACT_NONPOS;
  return e;
}

static te_expr *to_cd(lctx *c, te_expr *x, const int *xv, void *ud) {
  (void)xv;
  return te_cast(c->k, x, ((smctx *)ud)->cd);
}

/* v * (1 / s): softmax's scaling as PyTorch's CPU kernel, the interpreter
 * and nvfuser_like do it (one reciprocal per row, which the C compiler
 * hoists out of the row's loop), so that the rounding is theirs. */
static te_expr *times_inverse(lctx *c, te_expr *v, te_expr *s, int cd) {
  te_expr *a[2] = {te_imm(c->k, cd, (fbxk_scalar){1.0, 0}), s};
  te_expr *b[2] = {v, te_op(c->k, FBXK_OP_DIV_T, cd, cd, 2, a)};
  return te_op(c->k, FBXK_OP_MUL_T, cd, cd, 2, b);
}

static fbxp_status *lower_softmax(lctx *c, const fbxp_node *n, const te_ninfo *in) {
  te_kernel_ir *k = c->k;
  vinfo *x = find(c, te_host->node_input(n, 0));
  if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", te_host->node_kind(n));
  int cd = in->rdtype == FBXK_F64 ? FBXK_F64 : FBXK_F32;
  smctx s = {cd, NULL};
  int r = x->t.ndim, dim = in->dims[0];
  s.m = reduce(c, NULL, x, &dim, 1, 1, TE_RED_AMAX, cd, cd, to_cd, &s, 0);
  if (!s.m) return nomem();
  if (!in->log && in->rdtype == cd) {
    /* softmax in float32/float64: exp(x - max) once, into the output,
     * then the sum of the output and the output divided by it in place
     * (after rowblock the row stays in cache for those two passes) */
    vinfo *out = new_tensor(c, te_host->node_output(n, 0), in->rdtype, r, x->sizes);
    if (!out) return nomem();
    int va[TE_MAX_DIMS], vb[TE_MAX_DIMS];
    for (int d = 0; d < r; d++) va[d] = te_new_var(k);
    te_expr *ia[TE_MAX_DIMS];
    for (int d = 0; d < r; d++) ia[d] = x->sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, va[d]);
    te_expr *e = exp_shifted(c, te_load(k, x->buf, r, ia), va, &s);
    te_stmt *sa = nest(k, r, va, x->sizes, store_all(k, out->buf, r, va, te_cast(k, e, in->rdtype)));
    if (!sa) return nomem();
    te_append(k->root, sa);
    vinfo *sum = reduce(c, NULL, out, &dim, 1, 1, TE_RED_SUM, cd, cd, NULL, NULL, 0);
    if (!sum) return nomem();
    for (int d = 0; d < r; d++) vb[d] = te_new_var(k);
    te_expr *ib[TE_MAX_DIMS];
    for (int d = 0; d < r; d++) ib[d] = x->sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, vb[d]);
    te_expr *q = times_inverse(c, te_load(k, out->buf, r, ib), load_row_stat(c, sum, vb, r), cd);
    te_stmt *sb = nest(k, r, vb, x->sizes, store_all(k, out->buf, r, vb, q));
    if (!sb) return nomem();
    te_append(k->root, sb);
    return NULL;
  }
  vinfo *sum = reduce(c, NULL, x, &dim, 1, 1, TE_RED_SUM, cd, cd, exp_shifted, &s, 0);
  if (!sum) return nomem();
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), in->rdtype, r, x->sizes);
  if (!out) return nomem();
  int vars[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) vars[d] = te_new_var(k);
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) idx[d] = x->sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, vars[d]);
  te_expr *xl = te_load(k, x->buf, r, idx);
  te_expr *val;
  if (in->log) {
    te_expr *l[1] = {load_row_stat(c, sum, vars, r)};
    te_expr *a[2] = {x_minus_max(c, xl, vars, &s), te_op(k, FBXK_OP_LOG, cd, cd, 1, l)};
    val = te_op(k, FBXK_OP_SUB_T, cd, cd, 2, a);
  } else {
    val = times_inverse(c, exp_shifted(c, xl, vars, &s), load_row_stat(c, sum, vars, r), cd);
  }
  te_stmt *st = nest(k, r, vars, x->sizes, store_all(k, out->buf, r, vars, te_cast(k, val, in->rdtype)));
  if (!st) return nomem();
  te_append(k->root, st);
  return NULL;
}

/* (x - mean)^2 in the mean's dtype (float32, float64 for float64 data),
 * mean being the keepdim row statistic in ud: the second of two passes
 * over the row (after rowblock it reads the row from cache) */
static te_expr *sq_dev(lctx *c, te_expr *x, const int *xv, void *ud) {
  vinfo *m = ud;
  te_kernel_ir *k = c->k;
  int dt = m->t.dtype;
  te_expr *a[2] = {te_cast(k, x, dt), load_row_stat(c, m, xv, m->t.ndim)};
  te_expr *d = te_op(k, FBXK_OP_SUB_T, dt, dt, 2, a);
  te_expr *b[2] = {d, d ? te_expr_copy(k, d) : NULL};
  return te_op(k, FBXK_OP_MUL_T, dt, dt, 2, b);
}

typedef struct argctx {
  vinfo *m;  /* the extremum, keepdim */
  int dim, fl;
} argctx;

/* where(x == m || isnan(x), i, INT64_MAX): the smallest such i is the
 * index PyTorch returns (the first extremum, or the first NaN) */
static te_expr *arg_index(lctx *c, te_expr *x, const int *xv, void *ud) {
  argctx *a = ud;
  te_kernel_ir *k = c->k;
  int cd = a->fl ? FBXK_F64 : FBXK_I64;
  te_expr *xc = te_cast(k, x, cd);
  te_expr *e[2] = {xc, te_cast(k, load_row_stat(c, a->m, xv, a->m->t.ndim), cd)};
  te_expr *cond = te_op(k, FBXK_OP_EQ_T, cd, FBXK_BOOL, 2, e);
  if (a->fl) {
    te_expr *xn = te_expr_copy(k, xc);
    te_expr *o[2] = {cond, te_op(k, FBXK_OP_ISNAN, cd, FBXK_BOOL, 1, &xn)};
    cond = te_op(k, FBXK_OP_LOGICAL_OR, FBXK_BOOL, FBXK_BOOL, 2, o);
  }
  te_expr *w[3] = {cond, te_var(k, xv[a->dim]), te_imm_i(k, INT64_MAX)};
  return te_op(k, FBXK_OP_WHERE, FBXK_I64, FBXK_I64, 3, w);
}

/* max.dim/min.dim with their indices: the extremum (keepdim; a view of it
 * without the dim when keepdim is false), then the first index holding it */
static fbxp_status *lower_arg_red(lctx *c, const fbxp_node *n, const te_ninfo *in, vinfo *x) {
  te_kernel_ir *k = c->k;
  int r = x->t.ndim, dim = in->dims[0];
  const fbxp_value *vals = te_host->node_output(n, 0);
  vinfo *m = reduce(c, in->keepdim ? vals : NULL, x, in->dims, 1, 1, in->red, in->cdtype, in->rdtype, NULL, NULL, 0);
  if (!m) return nomem();
  if (!in->keepdim) {
    int64_t sz[TE_MAX_DIMS];
    int ro = 0;
    for (int d = 0; d < r; d++)
      if (d != dim) sz[ro++] = x->sizes[d];
    vinfo *v = new_tensor(c, vals, in->rdtype, ro, sz);
    if (!v) return nomem();
    te_buf *b = &k->bufs[v->buf];
    for (int d = 0, j = 0; d < r; d++)
      if (d != dim) b->strides[j++] = k->bufs[m->buf].strides[d];
    b->numel = 0;
    b->alias = m->buf + 1;
  }
  argctx a = {m, dim, fbxk_is_float(x->t.dtype)};
  if (!reduce(c, te_host->node_output(n, 1), x, in->dims, 1, in->keepdim, TE_RED_AMIN, FBXK_I64, FBXK_I64, arg_index, &a, 0))
    return nomem();
  return NULL;
}

static fbxp_status *lower_red(lctx *c, const fbxp_node *n, const te_ninfo *in) {
  vinfo *x = find(c, te_host->node_input(n, 0));
  if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", te_host->node_kind(n));
  if (in->ndims < 0) return unsupported("tensorexpr: %s over dims of an unknown rank", te_host->node_kind(n));
  if (in->lead == -2) {
    /* the identity: the result is x's buffer */
    if (c->nv >= MAXV) return nomem();
    vinfo *o = &c->vs[c->nv++];
    *o = *x;
    o->v = te_host->node_output(n, 0);
    return NULL;
  }
  if (in->lead >= 0) {
    const fbxp_value *sv = te_host->node_input(n, 1);
    int64_t size[TE_MAX_DIMS];
    int ro = te_host->value_const_int_list(sv, size, TE_MAX_DIMS);
    if (ro != x->t.ndim - in->lead) return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: _grad_sum_to_size's size does not fit");
    for (int j = 0; j < ro; j++)
      if (size[j] != 1 && size[j] != x->sizes[in->lead + j])
        return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: _grad_sum_to_size's size is not a broadcast of its input");
  }
  if (in->indices) return lower_arg_red(c, n, in, x);
  vinfo *m = NULL;
  if (in->red == TE_RED_VAR || in->red == TE_RED_STD) {
    /* two passes: the mean (in the accumulation dtype, kept as a row
     * statistic), then the squared deviations from it */
    m = reduce(c, NULL, x, in->dims, in->ndims, 1, TE_RED_MEAN, in->cdtype, in->cdtype, NULL, NULL, 0);
    if (!m) return nomem();
  }
  if (!reduce(c, te_host->node_output(n, 0), x, in->dims, in->ndims, in->lead >= 0 ? 2 + in->lead : in->keepdim,
              in->red, in->cdtype, in->rdtype,
              m ? sq_dev : NULL, m, in->corr))
    return nomem();
  return NULL;
}

/* aten::layer_norm(x, normalized_shape, weight?, bias?, eps, cudnn_enable):
 * the mean and the biased variance over the last dims (row statistics in
 * the compute dtype, two passes over the row), then (x - mean) * rsqrt(var + eps) [* weight] + (bias or 0)
 * in the compute dtype (float32 for float32/half/bfloat16; + 0 makes a zero result +0, as PyTorch has it) */
static fbxp_status *lower_layer_norm(lctx *c, const fbxp_node *n, const te_ninfo *in) {
  te_kernel_ir *k = c->k;
  vinfo *x = find(c, te_host->node_input(n, 0));
  if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", te_host->node_kind(n));
  int r = x->t.ndim, nk = in->ndims, dims[TE_MAX_DIMS];
  int64_t shape[TE_MAX_DIMS];
  if (nk < 1 || nk > r || te_host->value_const_int_list(te_host->node_input(n, 1), shape, TE_MAX_DIMS) != nk)
    return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: layer_norm's normalized_shape does not fit the input");
  for (int i = 0; i < nk; i++) {
    dims[i] = r - nk + i;
    if (shape[i] != x->sizes[dims[i]])
      return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: layer_norm's normalized_shape is not the input's last sizes");
  }
  int cd = in->cdtype;
  /* the row statistics in float64 (as the reference interpreter): a float32
   * variance overflows for values near 1e30 (fuzz seed 800803) */
  vinfo *m = reduce(c, NULL, x, dims, nk, 1, TE_RED_MEAN, FBXK_F64, FBXK_F64, NULL, NULL, 0);
  if (!m) return nomem();
  int vars[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) vars[d] = te_new_var(k);
  te_expr *eps = operand_at(c, te_host->node_input(n, 4), r, vars);
  if (!eps) return unsupported("tensorexpr: %s's eps is not a number", te_host->node_kind(n));
  /* rsqrt(var + eps) once per row: a row statistic */
  c->eps = te_cast(k, eps, FBXK_F64);
  vinfo *v = reduce(c, NULL, x, dims, nk, 1, TE_RED_RSTD, FBXK_F64, FBXK_F64, sq_dev, m, 0);
  if (!v) return nomem();
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), in->rdtype, r, x->sizes);
  if (!out) return nomem();
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < r; d++) idx[d] = x->sizes[d] == 1 ? te_imm_i(k, 0) : te_var(k, vars[d]);
  te_expr *rstd = te_cast(k, load_row_stat(c, v, vars, r), cd);
  te_expr *xm[2] = {te_cast(k, te_load(k, x->buf, r, idx), cd), te_cast(k, load_row_stat(c, m, vars, r), cd)};
  te_expr *y[2] = {te_op(k, FBXK_OP_SUB_T, cd, cd, 2, xm), rstd};
  te_expr *val = te_op(k, FBXK_OP_MUL_T, cd, cd, 2, y);
  for (int p = 2; p <= 3; p++) {
    const fbxp_value *wv = te_host->node_input(n, p);
    if (te_host->value_is_none(wv)) continue;
    vinfo *w = find(c, wv);
    if (!w || !w->t.tensor) return unsupported("tensorexpr: %s's weight or bias is not a tensor", te_host->node_kind(n));
    te_expr *a[2] = {val, te_cast(k, operand_at(c, wv, r, vars), cd)};
    val = te_op(k, p == 2 ? FBXK_OP_MUL_T : FBXK_OP_ADD_T, cd, cd, 2, a);
  }
  if (te_host->value_is_none(te_host->node_input(n, 3))) { /* + 0, as PyTorch's zero bias: a zero result is +0 */
    te_expr *a[2] = {val, te_imm(k, cd, (fbxk_scalar){0.0, 0})};
    val = te_op(k, FBXK_OP_ADD_T, cd, cd, 2, a);
  }
  te_stmt *st = nest(k, r, vars, x->sizes, store_all(k, out->buf, r, vars, te_cast(k, val, in->rdtype)));
  if (!st) return nomem();
  te_append(k->root, st);
  return NULL;
}

static int norm_dim(int64_t d, int r, int *out) {
  if (d < 0) d += r;
  if (d < 0 || d >= r) return -1;
  *out = (int)d;
  return 0;
}

/* Shape-only ops: a copy nest whose load is the index remap (a broadcast
 * dim read at 0); the inline transformation then substitutes it into its
 * consumers, so no copy is made when it is inlined. */
/* prim::ListUnpack of aten::chunk(x, chunks, dim): piece p is x's slice
 * [p * size, p * size + its size) along dim, size = ceil(n / chunks) */
static fbxp_status *lower_unpack(lctx *c, const fbxp_node *n) {
  te_kernel_ir *k = c->k;
  const fbxp_node *ch = te_host->value_producer(te_host->node_input(n, 0));
  vinfo *x = ch ? find(c, te_host->node_input(ch, 0)) : NULL;
  int64_t chunks = 0, d64 = 0;
  int r = x && x->t.tensor ? x->t.ndim : 0, dim = 0;
  if (!x || !x->t.tensor || const_int(te_host->node_input(ch, 1), &chunks) || chunks < 1 ||
      const_int(te_host->node_input(ch, 2), &d64) || norm_dim(d64, r, &dim))
    return unsupported("tensorexpr: %s of a chunk it cannot read", te_host->node_kind(n));
  int64_t len = x->sizes[dim], size = (len + chunks - 1) / chunks;
  int np = size ? (int)((len + size - 1) / size) : 0;
  if (np != te_host->node_num_outputs(n))
    return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: prim::ListUnpack's outputs are not the chunk's pieces");
  for (int p = 0; p < np; p++) {
    int64_t sz[TE_MAX_DIMS], off = p * size;
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)r);
    sz[dim] = len - off < size ? len - off : size;
    vinfo *out = new_tensor(c, te_host->node_output(n, p), x->t.dtype, r, sz);
    if (!out) return nomem();
    int vars[TE_MAX_DIMS];
    te_expr *idx[TE_MAX_DIMS];
    for (int d = 0; d < r; d++) vars[d] = te_new_var(k);
    for (int d = 0; d < r; d++) {
      if (x->sizes[d] == 1) idx[d] = te_imm_i(k, 0);
      else if (d != dim) idx[d] = te_var(k, vars[d]);
      else if (sz[d] == 1) idx[d] = te_imm_i(k, off);
      else idx[d] = off ? te_idx(k, TE_E_ADD, te_var(k, vars[d]), te_imm_i(k, off)) : te_var(k, vars[d]);
    }
    te_stmt *st = nest(k, r, vars, sz, store_all(k, out->buf, r, vars, te_load(k, x->buf, r, idx)));
    if (!st) return nomem();
    te_append(k->root, st);
  }
  return NULL;
}

/* aten::cat(ListConstruct(pieces), dim): one nest per piece storing it at
 * its offset along dim (the result is then a buffer, not inlined) */
static fbxp_status *lower_cat(lctx *c, const fbxp_node *n) {
  te_kernel_ir *k = c->k;
  const fbxp_node *l = te_host->value_producer(te_host->node_input(n, 0));
  int np = l ? te_host->node_num_inputs(l) : 0, r = -1, dim = 0;
  int64_t d64, osz[TE_MAX_DIMS];
  if (np < 1 || np > MAXV || const_int(te_host->node_input(n, 1), &d64))
    return unsupported("tensorexpr: %s of a list it cannot read", te_host->node_kind(n));
  int dt = -1;
  for (int p = 0; p < np; p++) {
    vinfo *x = find(c, te_host->node_input(l, p));
    if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", te_host->node_kind(n));
    if (p == 0) {
      r = x->t.ndim;
      dt = x->t.dtype;
      if (r < 1 || norm_dim(d64, r, &dim)) return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: aten::cat's dim is out of range");
      memcpy(osz, x->sizes, sizeof(int64_t) * (size_t)r);
      osz[dim] = 0;
    }
    if (x->t.ndim != r || x->t.dtype != dt)
      return unsupported("tensorexpr: aten::cat of pieces of different ranks or dtypes%s", "");
    for (int d = 0; d < r; d++)
      if (d != dim && x->sizes[d] != osz[d])
        return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: aten::cat's pieces differ in a size");
    osz[dim] += x->sizes[dim];
  }
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), dt, r, osz);
  if (!out) return nomem();
  int64_t off = 0;
  for (int p = 0; p < np; p++) {
    vinfo *x = find(c, te_host->node_input(l, p));
    int vars[TE_MAX_DIMS];
    te_expr *si[TE_MAX_DIMS];
    for (int d = 0; d < r; d++) vars[d] = te_new_var(k);
    for (int d = 0; d < r; d++) {
      if (osz[d] == 1) si[d] = te_imm_i(k, 0);
      else if (d != dim) si[d] = te_var(k, vars[d]);
      else if (x->sizes[d] == 1) si[d] = te_imm_i(k, off);
      else si[d] = off ? te_idx(k, TE_E_ADD, te_var(k, vars[d]), te_imm_i(k, off)) : te_var(k, vars[d]);
    }
    te_stmt *st = nest(k, r, vars, x->sizes, te_store(k, out->buf, r, si, operand_at(c, x->v, r, vars)));
    if (!st) return nomem();
    te_append(k->root, st);
    off += x->sizes[dim];
  }
  return NULL;
}

/* The strides of a view of (sizes, strides) with new sizes, or -1 when
 * the memory cannot be viewed so (PyTorch's rule: each run of new dims
 * must cover a run of old dims that is contiguous in memory). Size-1 dims
 * carry no stride information (lowering gives them stride 0). */
static int view_strides(int r, const int64_t *sz, const int64_t *st0, int nr, const int64_t *nsz, int64_t *nst) {
  int64_t st[TE_MAX_DIMS];
  for (int d = r - 1; d >= 0; d--) st[d] = sz[d] != 1 ? st0[d] : d == r - 1 ? 1 : st[d + 1] * sz[d + 1];
  int64_t numel = 1;
  for (int d = 0; d < r; d++) numel *= sz[d];
  if (numel == 0 || r == 0) {
    int64_t s = 1;
    for (int d = nr - 1; d >= 0; d--) {
      nst[d] = s;
      s *= nsz[d] ? nsz[d] : 1;
    }
    return 0;
  }
  int vd = nr - 1;
  int64_t base = st[r - 1], tn = 1, vn = 1;
  for (int d = r - 1; d >= 0; d--) {
    tn *= sz[d];
    /* the run of old dims ends at d when d - 1 is not contiguous with it */
    if (d == 0 || (sz[d - 1] != 1 && st[d - 1] != tn * base)) {
      while (vd >= 0 && (vn < tn || nsz[vd] == 1)) {
        nst[vd] = vn * base;
        vn *= nsz[vd];
        vd--;
      }
      if (vn != tn) return -1;
      if (d > 0) {
        base = st[d - 1];
        tn = vn = 1;
      }
    }
  }
  return vd == -1 ? 0 : -1;
}

/* view/reshape/flatten: a buffer over the same memory (alias), strides by
 * PyTorch's rule; when x's memory cannot be viewed so (reshape of strided
 * data), a contiguous copy of x is viewed */
static fbxp_status *lower_view(lctx *c, const fbxp_node *n, vinfo *x) {
  te_kernel_ir *k = c->k;
  int rx = x->t.ndim, ro = 0;
  int64_t osz[TE_MAX_DIMS], numel = 1, known = 1;
  for (int d = 0; d < rx; d++) numel *= x->sizes[d];
  if (schema_is(n, "aten::flatten.using_ints(")) {
    int64_t a, b;
    int da = 0, db = 0;
    if (const_int(te_host->node_input(n, 1), &a) || const_int(te_host->node_input(n, 2), &b)) return unsupported("%s", "tensorexpr: flatten's dims");
    if (rx == 0) {
      osz[ro++] = 1;
    } else {
      if (norm_dim(a, rx, &da) || norm_dim(b, rx, &db) || da > db)
        return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: flatten's dims are out of range");
      for (int d = 0; d < rx; d++) {
        if (d <= da || d > db) osz[ro++] = x->sizes[d];
        else osz[ro - 1] *= x->sizes[d];
      }
    }
  } else if (schema_is(n, "aten::view_as(") || schema_is(n, "aten::reshape_as(")) {
    vinfo *o = find(c, te_host->node_input(n, 1));
    if (!o || !o->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", te_host->node_kind(n));
    ro = o->t.ndim;
    memcpy(osz, o->sizes, sizeof(int64_t) * (size_t)ro);
  } else {
    ro = te_host->value_const_int_list(te_host->node_input(n, 1), osz, TE_MAX_DIMS);
    int infer = -1;
    for (int d = 0; d < ro; d++) {
      if (osz[d] == -1 && infer < 0) infer = d;
      else if (osz[d] < 0) ro = -1;
      else known *= osz[d];
      if (ro < 0) break;
    }
    if (ro >= 0 && infer >= 0) {
      if (known == 0 || numel % known) ro = -1;
      else osz[infer] = numel / known;
    }
  }
  int64_t total = 1;
  for (int d = 0; d < ro; d++) total *= osz[d];
  if (ro < 0 || total != numel)
    return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: a view's sizes do not match its input's");
  int xb = x->buf;
  int64_t nst[TE_MAX_DIMS];
  if (view_strides(rx, x->sizes, k->bufs[xb].strides, ro, osz, nst)) {
    /* a contiguous copy first */
    vinfo *cp = new_tensor(c, NULL, x->t.dtype, rx, x->sizes);
    if (!cp) return nomem();
    int vars[TE_MAX_DIMS];
    for (int d = 0; d < rx; d++) vars[d] = te_new_var(k);
    te_stmt *st = nest(k, rx, vars, x->sizes, store_all(k, cp->buf, rx, vars, operand_at(c, x->v, rx, vars)));
    if (!st) return nomem();
    te_append(k->root, st);
    cp->v = NULL;
    xb = cp->buf;
    if (view_strides(rx, x->sizes, k->bufs[xb].strides, ro, osz, nst))
      return te_host->status_new(FBXP_ERR_INTERNAL, "tensorexpr: a contiguous buffer cannot be viewed");
  }
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), x->t.dtype, ro, osz);
  if (!out) return nomem();
  te_buf *b = &k->bufs[out->buf];
  int root = k->bufs[xb].alias ? k->bufs[xb].alias - 1 : xb;
  for (int d = 0; d < ro; d++) b->strides[d] = osz[d] == 1 ? 0 : nst[d];
  b->numel = 0;
  b->alias = root + 1;
  return NULL;
}

static fbxp_status *lower_shape(lctx *c, const fbxp_node *n, const te_ninfo *in) {
  te_kernel_ir *k = c->k;
  const char *kind = te_host->node_kind(n);
  if (in->sop == TE_SH_VIEW) {
    vinfo *x = find(c, te_host->node_input(n, 0));
    if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", kind);
    return lower_view(c, n, x);
  }
  if (in->sop == TE_SH_CHUNK || in->sop == TE_SH_TLIST) return NULL; /* read by their one user */
  if (in->sop == TE_SH_UNPACK) return lower_unpack(c, n);
  if (in->sop == TE_SH_CAT) return lower_cat(c, n);
  if (in->sop == TE_SH_TYPE_AS) {
    vinfo *x = find(c, te_host->node_input(n, 0)), *y = find(c, te_host->node_input(n, 1));
    if (!x || !x->t.tensor || !y || !y->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", kind);
    vinfo *out = new_tensor(c, te_host->node_output(n, 0), y->t.dtype, x->t.ndim, x->sizes);
    if (!out) return nomem();
    int vars[TE_MAX_DIMS];
    for (int d = 0; d < x->t.ndim; d++) vars[d] = te_new_var(k);
    te_stmt *st = nest(k, x->t.ndim, vars, x->sizes,
                       store_all(k, out->buf, x->t.ndim, vars, te_cast(k, operand_at(c, x->v, x->t.ndim, vars), y->t.dtype)));
    if (!st) return nomem();
    te_append(k->root, st);
    return NULL;
  }
  vinfo *x = find(c, te_host->node_input(n, 0));
  if (!x || !x->t.tensor) return unsupported("tensorexpr: %s of a non-tensor", kind);
  int rx = x->t.ndim, ro = rx, map[TE_MAX_DIMS], perm[TE_MAX_DIMS];
  int64_t osz[TE_MAX_DIMS], l[TE_MAX_DIMS];
  for (int d = 0; d < rx; d++) map[d] = d, perm[d] = d, osz[d] = x->sizes[d];
  int bad = 0;
  switch (in->sop) {
    case TE_SH_PERMUTE: {
      int seen[TE_MAX_DIMS] = {0};
      if (te_host->value_const_int_list(te_host->node_input(n, 1), l, TE_MAX_DIMS) != rx) bad = 1;
      for (int j = 0; j < rx && !bad; j++)
        if (norm_dim(l[j], rx, &perm[j]) || seen[perm[j]]++) bad = 1;
      break;
    }
    case TE_SH_T:
      if (rx > 2) bad = 1;
      else if (rx == 2) perm[0] = 1, perm[1] = 0;
      break;
    case TE_SH_TRANSPOSE: {
      int64_t a, b;
      int da, db;
      if (const_int(te_host->node_input(n, 1), &a) || const_int(te_host->node_input(n, 2), &b)) bad = 1;
      else if (rx == 0) bad = (a != 0 && a != -1) || (b != 0 && b != -1);
      else if (norm_dim(a, rx, &da) || norm_dim(b, rx, &db)) bad = 1;
      else perm[da] = db, perm[db] = da;
      break;
    }
    case TE_SH_UNSQUEEZE: {
      int64_t a;
      int d;
      if (const_int(te_host->node_input(n, 1), &a) || norm_dim(a, rx + 1, &d) || rx + 1 > TE_MAX_DIMS) {
        bad = 1;
        break;
      }
      ro = rx + 1;
      for (int j = 0; j < ro; j++) osz[j] = j < d ? x->sizes[j] : j == d ? 1 : x->sizes[j - 1];
      for (int i = 0; i < rx; i++) map[i] = i < d ? i : i + 1;
      break;
    }
    case TE_SH_SQUEEZE: case TE_SH_SQUEEZE_DIM: {
      int64_t a = 0;
      int only = -1;
      if (in->sop == TE_SH_SQUEEZE_DIM) {
        if (const_int(te_host->node_input(n, 1), &a)) bad = 1;
        else if (rx == 0) bad = a != 0 && a != -1;
        else if (norm_dim(a, rx, &only)) bad = 1;
        if (bad || rx == 0) break;
      }
      ro = 0;
      for (int i = 0; i < rx; i++) {
        if (x->sizes[i] == 1 && (only < 0 || only == i)) {
          map[i] = -1;
          continue;
        }
        map[i] = ro;
        osz[ro++] = x->sizes[i];
      }
      break;
    }
    case TE_SH_EXPAND: case TE_SH_EXPAND_AS: {
      if (in->sop == TE_SH_EXPAND) {
        ro = te_host->value_const_int_list(te_host->node_input(n, 1), l, TE_MAX_DIMS);
      } else {
        vinfo *o = find(c, te_host->node_input(n, 1));
        ro = o && o->t.tensor ? o->t.ndim : -1;
        for (int j = 0; j < ro; j++) l[j] = o->sizes[j];
      }
      if (ro < rx) {
        bad = 1;
        break;
      }
      for (int j = 0; j < ro && !bad; j++) {
        int i = j - (ro - rx);
        if (i < 0) {
          bad = l[j] < 0;
          osz[j] = l[j];
          continue;
        }
        map[i] = j;
        if (l[j] == -1 || l[j] == x->sizes[i]) osz[j] = x->sizes[i];
        else if (x->sizes[i] == 1 && l[j] >= 0) osz[j] = l[j];
        else bad = 1;
      }
      break;
    }
    default: bad = 1; break;
  }
  if (bad) return te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: a shape op's arguments do not fit its input");
  if (in->sop == TE_SH_PERMUTE || in->sop == TE_SH_T || in->sop == TE_SH_TRANSPOSE)
    for (int j = 0; j < rx; j++) {
      osz[j] = x->sizes[perm[j]];
      map[perm[j]] = j;
    }
  vinfo *out = new_tensor(c, te_host->node_output(n, 0), x->t.dtype, ro, osz);
  if (!out) return nomem();
  int vars[TE_MAX_DIMS];
  for (int d = 0; d < ro; d++) vars[d] = te_new_var(k);
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < rx; d++) idx[d] = x->sizes[d] == 1 || map[d] < 0 ? te_imm_i(k, 0) : te_var(k, vars[map[d]]);
  te_stmt *st = nest(k, ro, vars, osz, store_all(k, out->buf, ro, vars, te_load(k, x->buf, rx, idx)));
  if (!st) return nomem();
  te_append(k->root, st);
  return NULL;
}

static int spec_dtype_ok(const fbxp_arg_spec *s) { return s->device_type == kDLCPU && dtype_ok(s->dtype); }

fbxp_status *te_lower(te_kernel_ir *k, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin) {
  lctx *c = te_host->alloc(sizeof *c);
  if (!c) return nomem();
  memset(c, 0, sizeof *c);
  c->k = k;
  fbxp_status *st = NULL;
  if (!(k->root = te_block(k))) {
    st = nomem();
    goto done;
  }
  if (nin != te_host->graph_num_inputs(g) || nin > TE_MAX_BUFS) {
    st = te_host->status_new(FBXP_ERR_INVALID, "tensorexpr: input specs do not match the group's inputs");
    goto done;
  }
  k->ninputs = nin;
  for (int i = 0; i < nin; i++) {
    const fbxp_value *v = te_host->graph_input(g, i);
    vinfo *vi = &c->vs[c->nv++];
    vi->v = v;
    k->input_kind[i] = in[i].kind;
    k->input_buf[i] = -1;
    if (in[i].kind == FBXP_ARG_TENSOR) {
      if (!spec_dtype_ok(&in[i]) || in[i].ndim < 0 || in[i].ndim > TE_MAX_DIMS) {
        st = unsupported("tensorexpr: input '%s' has a dtype or device the fuser does not take", te_host->value_name(v));
        goto done;
      }
      int b = add_buf(k, TE_BUF_INPUT, in[i].dtype, in[i].ndim, in[i].sizes);
      if (b < 0) {
        st = unsupported("tensorexpr: too many buffers%s", "");
        goto done;
      }
      for (int d = 0; d < in[i].ndim; d++) k->bufs[b].strides[d] = in[i].sizes[d] == 1 ? 0 : in[i].strides[d];
      k->bufs[b].slot = i;
      k->input_buf[i] = b;
      vi->buf = b;
      vi->t = (te_vtype){1, 1, in[i].dtype, in[i].ndim, in[i].ndim ? FBXK_PRIO_TENSOR : FBXK_PRIO_ZERODIM};
      memcpy(vi->sizes, in[i].sizes, sizeof(int64_t) * (size_t)in[i].ndim);
    } else {
      int dt = in[i].kind == FBXP_ARG_FLOAT ? FBXK_F64
               : te_host->value_kind(v) == FBXP_TYPE_BOOL ? FBXK_BOOL : FBXK_I64;
      vi->t = (te_vtype){1, 0, dt, 0, FBXK_PRIO_SCALAR};
      vi->scalar = te_scalar_arg(k, i, dt);
    }
  }
  for (const fbxp_node *n = te_host->block_first(te_host->graph_block(g)); n && !st; n = te_host->node_next(n)) {
    te_ninfo info;
    switch (te_classify(n, typeof_lowered, c, &info)) {
      case TE_N_CONST: case TE_N_LIST: break;
      case TE_N_PW: st = lower_pw(c, n, &info); break;
      case TE_N_RED: st = lower_red(c, n, &info); break;
      case TE_N_NORM: st = lower_layer_norm(c, n, &info); break;
      case TE_N_SHAPE: st = lower_shape(c, n, &info); break;
      case TE_N_SOFTMAX: st = lower_softmax(c, n, &info); break;
      default: st = unsupported("tensorexpr: cannot lower %s", te_host->node_kind(n)); break;
    }
  }
  if (st) goto done;
  k->noutputs = te_host->graph_num_outputs(g);
  for (int o = 0; o < k->noutputs && !st; o++) {
    vinfo *vi = find(c, te_host->graph_output(g, o));
    if (!vi || !vi->t.tensor) {
      st = unsupported("tensorexpr: group output %s is not a tensor the kernel computes", te_host->value_name(te_host->graph_output(g, o)));
      break;
    }
    te_buf *b = &k->bufs[vi->buf];
    if (b->kind == TE_BUF_TEMP && !b->alias) {
      b->kind = TE_BUF_OUTPUT;
      b->slot = o;
      k->output_buf[o] = vi->buf;
      continue;
    }
    /* an input or an output already: copy it into a new output buffer */
    int nb = add_buf(k, TE_BUF_OUTPUT, vi->t.dtype, vi->t.ndim, vi->sizes);
    if (nb < 0) {
      st = nomem();
      break;
    }
    k->bufs[nb].slot = o;
    k->output_buf[o] = nb;
    int vars[TE_MAX_DIMS];
    for (int d = 0; d < vi->t.ndim; d++) vars[d] = te_new_var(k);
    te_stmt *s = nest(k, vi->t.ndim, vars, vi->sizes,
                      store_all(k, nb, vi->t.ndim, vars, operand_at(c, vi->v, vi->t.ndim, vars)));
    if (!s) st = nomem();
    else te_append(k->root, s);
  }
  /* temporaries are numbered densely again (outputs took some) */
  k->ntemps = 0;
  for (int b = 0; b < k->nbufs; b++)
    if (k->bufs[b].kind == TE_BUF_TEMP) k->bufs[b].slot = k->ntemps++;
  for (int b = 0; b < k->nbufs; b++) {
    static const char *pre[] = {"in", "out", "t"};
    char name[32];
    snprintf(name, sizeof name, "%s%d", pre[k->bufs[b].kind], k->bufs[b].slot);
    char *s = te_arena_alloc(k->arena, strlen(name) + 1);
    if (!s) {
      if (!st) st = nomem();
      break;
    }
    strcpy(s, name);
    k->bufs[b].name = s;
  }
done:
  te_host->free(c);
  return st;
}
