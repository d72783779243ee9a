/* A group's subgraph -> kernel IR, for the dtypes (and ranks) of the input
 * specs. Sizes are not looked at: the kernel is reused for any sizes.
 *
 * Values are emitted recursively from the group's outputs. An aten::chunk
 * (with its prim::ListUnpack) is pushed to the kernel's inputs, as PyTorch's
 * fuser did with its broadcasting chunk: piece k of chunk(f(a, b)) is
 * f(piece k of a, piece k of b), so the chunked value's cone is emitted
 * once per piece, reading views of the inputs (the views are made at run
 * time; an input of size 1 along the chunked dim is not cut). An aten::cat
 * output is written piece by piece into its slices. */
#include <stdio.h>
#include <string.h>

#include "lf.h"

#define MEMO_MAX (LF_MAX_VALUES * 2)

typedef struct builder {
  lf_kir *k;
  const fbxp_graph *g;
  const fbxp_arg_spec *in;
  int nmemo;
  struct {
    const fbxp_value *v;
    int space;
    int id;
  } memo[MEMO_MAX];
  const fbxp_node *chunk_nodes[LF_MAX_CHUNKS];
  char why[256];
} builder;

static int fail(builder *b, const char *fmt, const char *a) {
  if (!b->why[0]) snprintf(b->why, sizeof b->why, fmt, a);
  return -1;
}

static int input_index(const builder *b, const fbxp_value *v) {
  for (int i = 0; i < lf_host->graph_num_inputs(b->g); i++)
    if (lf_host->graph_input(b->g, i) == v) return i;
  return -1;
}

static int is_kind(const fbxp_node *n, const char *kind) { return n && !strcmp(lf_host->node_kind(n), kind); }

/* The rank of a value: the broadcast of its operands' ranks. */
static int rank_of(builder *b, const fbxp_value *v, int depth) {
  int i = input_index(b, v);
  if (i >= 0) return b->in[i].kind == FBXP_ARG_TENSOR ? b->in[i].ndim : 0;
  const fbxp_node *p = lf_host->value_producer(v);
  if (!p || depth > 256) return 0;
  if (is_kind(p, "prim::ListUnpack")) {
    const fbxp_node *ch = lf_host->value_producer(lf_host->node_input(p, 0));
    return ch ? rank_of(b, lf_host->node_input(ch, 0), depth + 1) : 0;
  }
  int r = 0;
  for (int j = 0; j < lf_host->node_num_inputs(p); j++) {
    const fbxp_value *a = lf_host->node_input(p, j);
    if (lf_host->value_kind(a) != FBXP_TYPE_TENSOR) continue;
    int ra = rank_of(b, a, depth + 1);
    if (ra > r) r = ra;
  }
  return r;
}

static int new_value(builder *b, lf_vkind kind) {
  if (b->k->nvalues == LF_MAX_VALUES) return fail(b, "legacy: more than %s values in one kernel", "512");
  lf_value *v = &b->k->values[b->k->nvalues];
  memset(v, 0, sizeof *v);
  v->kind = kind;
  return b->k->nvalues++;
}

static int memo_get(const builder *b, const fbxp_value *v, int space) {
  for (int i = 0; i < b->nmemo; i++)
    if (b->memo[i].v == v && b->memo[i].space == space) return b->memo[i].id;
  return -1;
}

static int memo_put(builder *b, const fbxp_value *v, int space, int id) {
  if (id < 0) return id;
  if (b->nmemo == MEMO_MAX) return fail(b, "legacy: kernel too large (%s)", "value memo");
  b->memo[b->nmemo].v = v;
  b->memo[b->nmemo].space = space;
  b->memo[b->nmemo].id = id;
  b->nmemo++;
  return id;
}

static int emit(builder *b, const fbxp_value *v, int space, int depth);

static int emit_input(builder *b, int i, int space) {
  lf_kir *k = b->k;
  const fbxp_arg_spec *s = &b->in[i];
  if (s->kind != FBXP_ARG_TENSOR) {
    int id = new_value(b, LF_SCALAR);
    if (id < 0) return id;
    k->values[id].slot = i;
    k->values[id].dtype = s->kind == FBXP_ARG_FLOAT ? FBXK_F64 : s->dtype == FBXK_BOOL ? FBXK_BOOL : FBXK_I64;
    k->values[id].prio = FBXK_PRIO_SCALAR;
    return id;
  }
  if (!fbxk_valid_dtype(s->dtype)) return fail(b, "legacy: input dtype not supported%s", "");
  if (k->noperands == LF_MAX_ARGS) return fail(b, "legacy: more than %s tensor operands", "64");
  int id = new_value(b, LF_LOAD);
  if (id < 0) return id;
  lf_operand *o = &k->operands[k->noperands];
  o->input = i;
  o->dtype = s->dtype;
  o->chunk = space < 0 ? -1 : space / LF_MAX_ARGS;
  o->piece = space < 0 ? 0 : space % LF_MAX_ARGS;
  if (o->chunk >= 0) {
    lf_chunk *c = &k->chunks[o->chunk];
    int seen = 0;
    for (int j = 0; j < c->ncone; j++) seen |= c->cone[j] == i;
    if (!seen) c->cone[c->ncone++] = i;
  }
  k->values[id].slot = k->noperands++;
  k->values[id].dtype = s->dtype;
  k->values[id].prio = s->ndim == 0 ? FBXK_PRIO_ZERODIM : FBXK_PRIO_TENSOR;
  if (s->ndim > k->rank) k->rank = s->ndim;
  return id;
}

static int emit_const(builder *b, const fbxp_value *v) {
  int64_t i;
  double f;
  int id;
  fbxp_type_kind kind = lf_host->value_kind(v);
  if (kind == FBXP_TYPE_FLOAT && lf_host->value_const_float(v, &f)) {
    if ((id = new_value(b, LF_CONST)) < 0) return id;
    b->k->values[id].dtype = FBXK_F64;
    b->k->values[id].cf = f;
  } else if ((kind == FBXP_TYPE_INT || kind == FBXP_TYPE_BOOL) && lf_host->value_const_int(v, &i)) {
    if ((id = new_value(b, LF_CONST)) < 0) return id;
    b->k->values[id].dtype = kind == FBXP_TYPE_BOOL ? FBXK_BOOL : FBXK_I64;
    b->k->values[id].ci = i;
  } else {
    return fail(b, "legacy: constant %%%s is not a number", lf_host->value_name(v));
  }
  b->k->values[id].prio = FBXK_PRIO_SCALAR;
  return id;
}

/* piece `k` of aten::chunk(x, n, dim) through its prim::ListUnpack */
static int emit_piece(builder *b, const fbxp_node *unpack, int piece, int space, int depth) {
  lf_kir *k = b->k;
  const fbxp_node *ch = lf_host->value_producer(lf_host->node_input(unpack, 0));
  if (!is_kind(ch, "aten::chunk")) return fail(b, "legacy: prim::ListUnpack of %s", ch ? lf_host->node_kind(ch) : "an input");
  if (space >= 0) return fail(b, "legacy: a chunk inside a chunk's input%s", "");
  int c = -1;
  for (int i = 0; i < k->nchunks; i++)
    if (b->chunk_nodes[i] == ch) c = i;
  if (c < 0) {
    int64_t n, dim;
    if (!lf_host->value_const_int(lf_host->node_input(ch, 1), &n) ||
        !lf_host->value_const_int(lf_host->node_input(ch, 2), &dim))
      return fail(b, "legacy: aten::chunk needs constant chunks and dim%s", "");
    if (k->nchunks == LF_MAX_CHUNKS) return fail(b, "legacy: more than %s chunks", "16");
    if (n != lf_host->node_num_outputs(unpack) || n < 1 || n > LF_MAX_ARGS)
      return fail(b, "legacy: aten::chunk count differs from its unpack%s", "");
    int rank = rank_of(b, lf_host->node_input(ch, 0), 0);
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return fail(b, "legacy: aten::chunk dim out of range%s", "");
    c = k->nchunks++;
    b->chunk_nodes[c] = ch;
    memset(&k->chunks[c], 0, sizeof k->chunks[c]);
    k->chunks[c].nchunks = (int)n;
    k->chunks[c].dim = (int)dim;
    k->chunks[c].rank = rank;
  }
  return emit(b, lf_host->node_input(ch, 0), c * LF_MAX_ARGS + piece, depth + 1);
}

static int emit_op(builder *b, const fbxp_node *p, int space, int depth) {
  fbxk_match m;
  if (fbxk_op_match(lf_host, p, &m) < 0) return fail(b, "legacy: %s is not a fusable pointwise op", lf_host->node_kind(p));
  int args[4];
  fbxk_typed ops[FBXK_MAX_OP_ARGS];
  int nargs = m.noperands + m.nparams;
  for (int i = 0; i < nargs; i++) {
    int input = i < m.noperands ? m.operand_input[i] : m.param_input[i - m.noperands];
    args[i] = emit(b, lf_host->node_input(p, input), space, depth + 1);
    if (args[i] < 0) return -1;
  }
  lf_kir *k = b->k;
  int prio = FBXK_PRIO_ZERODIM;
  for (int i = 0; i < m.noperands; i++) {
    ops[i].dtype = k->values[args[i]].dtype;
    ops[i].prio = k->values[args[i]].prio;
    if (ops[i].prio == FBXK_PRIO_TENSOR) prio = FBXK_PRIO_TENSOR;
  }
  int cd, rd;
  if (fbxk_op_rule(m.op) == FBXK_R_TO) {
    int64_t dt = 0;
    lf_host->value_const_int(lf_host->node_input(p, 1), &dt);
    cd = rd = (int)dt;
  } else if (fbxk_op_dtypes(m.op, ops, m.noperands, &cd, &rd)) {
    return fail(b, "legacy: no tensor operand for %s", lf_host->node_kind(p));
  }
  if (!fbxk_op_template(m.op, cd)) {
    snprintf(b->why, sizeof b->why, "legacy: %s is not fused for dtype %d", fbxk_op_name(m.op), cd);
    return -1;
  }
  int id = new_value(b, LF_OP);
  if (id < 0) return id;
  lf_value *v = &k->values[id];
  v->op = m.op;
  v->cdtype = cd;
  v->dtype = rd;
  v->prio = prio;
  v->nargs = nargs;
  memcpy(v->args, args, sizeof args);
  return id;
}

static int emit(builder *b, const fbxp_value *v, int space, int depth) {
  if (depth > 1000) return fail(b, "legacy: group too deep%s", "");
  int i = input_index(b, v);
  int sp = space;
  const fbxp_node *p = i >= 0 ? NULL : lf_host->value_producer(v);
  /* only tensor inputs and nodes reading them differ between chunk pieces;
   * scalars and constants are shared */
  if (i >= 0 && b->in[i].kind != FBXP_ARG_TENSOR) sp = -1;
  if (p && is_kind(p, "prim::Constant")) sp = -1;
  int id = memo_get(b, v, sp);
  if (id >= 0) return id;
  if (i >= 0) return memo_put(b, v, sp, emit_input(b, i, sp));
  if (!p) return fail(b, "legacy: value %%%s has no producer in the group", lf_host->value_name(v));
  if (is_kind(p, "prim::Constant")) return memo_put(b, v, sp, emit_const(b, v));
  if (is_kind(p, "prim::ListUnpack")) {
    int piece = -1;
    for (int j = 0; j < lf_host->node_num_outputs(p); j++)
      if (lf_host->node_output(p, j) == v) piece = j;
    return memo_put(b, v, sp, emit_piece(b, p, piece, space, depth));
  }
  return memo_put(b, v, sp, emit_op(b, p, space, depth));
}

static uint64_t cone_of(const lf_kir *k, int id, int depth) {
  const lf_value *v = &k->values[id];
  if (v->kind == LF_LOAD) return (uint64_t)1 << v->slot;
  if (v->kind != LF_OP || depth > 1000) return 0;
  uint64_t m = 0;
  for (int i = 0; i < v->nargs; i++) m |= cone_of(k, v->args[i], depth + 1);
  return m;
}

static int add_store(builder *b, int value, int output, int npieces, int piece, int cat_dim) {
  lf_kir *k = b->k;
  if (k->nstores + k->noperands >= LF_MAX_ARGS) return fail(b, "legacy: more than %s kernel arguments", "64");
  if (k->values[value].kind == LF_SCALAR || k->values[value].kind == LF_CONST)
    return fail(b, "legacy: output %s is not a tensor", "");
  lf_store *s = &k->stores[k->nstores++];
  s->value = value;
  s->output = output;
  s->dtype = k->values[value].dtype;
  s->npieces = npieces;
  s->piece = piece;
  s->cat_dim = cat_dim;
  s->cone = cone_of(k, value, 0);
  k->out_cone[output] |= s->cone;
  return 0;
}

fbxp_status *lf_kir_build(lf_kir *k, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin) {
  static _Thread_local builder bb; /* large; compile runs under the host's lock, one at a time per thread */
  builder *b = &bb;
  memset(b, 0, sizeof *b);
  memset(k, 0, sizeof *k);
  b->k = k;
  b->g = g;
  b->in = in;
  if (nin != lf_host->graph_num_inputs(g) || nin > LF_MAX_ARGS * 2)
    return lf_host->status_new(FBXP_ERR_UNSUPPORTED, "legacy: too many kernel inputs");
  k->ninputs = nin;
  for (int i = 0; i < nin; i++) {
    k->input_kind[i] = in[i].kind;
    k->input_dtype[i] = in[i].dtype;
    k->input_ndim[i] = in[i].kind == FBXP_ARG_TENSOR ? in[i].ndim : 0;
    if (in[i].kind == FBXP_ARG_TENSOR && in[i].device_type != kDLCPU)
      return lf_host->status_new(FBXP_ERR_UNSUPPORTED, "legacy: only CPU tensors run here");
    if (in[i].kind == FBXP_ARG_TENSOR && (in[i].ndim < 0 || in[i].ndim > FBXP_MAX_DIMS))
      return lf_host->status_new(FBXP_ERR_UNSUPPORTED, "legacy: bad rank");
  }
  k->noutputs = lf_host->graph_num_outputs(g);
  if (k->noutputs > LF_MAX_ARGS) return lf_host->status_new(FBXP_ERR_UNSUPPORTED, "legacy: too many outputs");
  int out_rank[LF_MAX_ARGS];
  for (int o = 0; o < k->noutputs && !b->why[0]; o++) {
    const fbxp_value *v = lf_host->graph_output(g, o);
    const fbxp_node *p = lf_host->value_producer(v);
    if (p && is_kind(p, "aten::cat")) {
      const fbxp_node *lc = lf_host->value_producer(lf_host->node_input(p, 0));
      int64_t dim;
      if (!is_kind(lc, "prim::ListConstruct") || !lf_host->value_const_int(lf_host->node_input(p, 1), &dim)) {
        fail(b, "legacy: aten::cat needs a list construct and a constant dim%s", "");
        break;
      }
      int n = lf_host->node_num_inputs(lc);
      int rank = n ? rank_of(b, lf_host->node_input(lc, 0), 0) : 0;
      if (dim < 0) dim += rank;
      if (n < 1 || dim < 0 || dim >= rank) {
        fail(b, "legacy: aten::cat dim out of range%s", "");
        break;
      }
      k->out_npieces[o] = n;
      k->out_cat_dim[o] = (int)dim;
      out_rank[o] = rank;
      for (int j = 0; j < n && !b->why[0]; j++) {
        const fbxp_value *e = lf_host->node_input(lc, j);
        if (rank_of(b, e, 0) != rank) fail(b, "legacy: aten::cat of tensors of different ranks%s", "");
        int id = emit(b, e, -1, 0);
        if (id >= 0 && k->values[id].dtype != k->values[k->stores[k->nstores > 0 ? k->nstores - 1 : 0].value].dtype &&
            j > 0)
          fail(b, "legacy: aten::cat of different dtypes%s", "");
        if (id >= 0) add_store(b, id, o, n, j, (int)dim);
      }
    } else {
      out_rank[o] = rank_of(b, v, 0);
      int id = emit(b, v, -1, 0);
      if (id >= 0) add_store(b, id, o, 0, 0, 0);
    }
  }
  if (!b->why[0]) {
    for (int s = 0; s < k->nstores; s++) k->out_dtype[k->stores[s].output] = k->stores[s].dtype;
    for (int o = 0; o < k->noutputs; o++)
      if (out_rank[o] != k->rank) fail(b, "legacy: an output's rank differs from the kernel's%s", "");
    if (k->noperands == 0) fail(b, "legacy: no tensor input%s", "");
  }
  if (b->why[0]) return lf_host->status_new(FBXP_ERR_UNSUPPORTED, b->why);
  return NULL;
}
