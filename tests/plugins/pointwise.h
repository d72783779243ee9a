/* A minimal pointwise fuser shared by the test plugins (included by each
 * plugin's .c; only the SDK header is used, like an out-of-tree plugin).
 *
 * Partition: maximal chains of aten::relu / aten::neg / aten::mul /
 * aten::add with tensor results, consecutive in program order (constants in
 * between are skipped), each node using a result of the chain so far; two
 * or more nodes make a group. Every block is searched.
 *
 * Compile: float32 contiguous CPU tensors of one shape, plus int/float
 * scalars (kernel inputs or constants in the subgraph); anything else is
 * FBXP_ERR_UNSUPPORTED. The kernel is a list of register instructions.
 *
 * Run: plain C loops over chunks of elements, chunks spread over the host's
 * parallel_for (so run is thread-safe: no state is written).
 */
#ifndef FBXTEST_POINTWISE_H
#define FBXTEST_POINTWISE_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fusebox/fuser_abi.h>

#define PW_FN static __attribute__((unused))

static const fbxp_host_api *H;

enum { PW_RELU, PW_NEG, PW_MUL, PW_ADD };
enum { PW_REG, PW_CONST, PW_SCALAR_IN };
#define PW_MAX_NODES 32
#define PW_MAX_IN 32
#define PW_CHUNK 128

typedef struct pw_operand {
  int kind; /* PW_REG: reg; PW_CONST: c; PW_SCALAR_IN: input index */
  int reg;
  double c;
} pw_operand;

typedef struct pw_instr {
  int op;
  pw_operand a, b;
  double alpha;
} pw_instr;

/* Registers: 0..nin-1 are the kernel's inputs, nin+i the result of instr i. */
typedef struct pw_kernel {
  int nin, ninstr, nout;
  int in_kind[PW_MAX_IN];
  pw_instr instr[PW_MAX_NODES];
  int out_reg[PW_MAX_NODES];
  int ndim;
  int64_t sizes[FBXP_MAX_DIMS];
  int64_t numel;
  char source[64];
} pw_kernel;

PW_FN int pw_supported_kind(const char *k) {
  return !strcmp(k, "aten::relu") || !strcmp(k, "aten::neg") || !strcmp(k, "aten::mul") || !strcmp(k, "aten::add");
}

PW_FN int pw_fusable(const fbxp_node *n) {
  return pw_supported_kind(H->node_kind(n)) && H->node_num_outputs(n) == 1 &&
         H->value_kind(H->node_output(n, 0)) == FBXP_TYPE_TENSOR && H->node_num_blocks(n) == 0;
}

PW_FN int pw_uses_chain(const fbxp_node *n, const fbxp_node *const *chain, int len) {
  for (int i = 0; i < H->node_num_inputs(n); i++) {
    const fbxp_node *p = H->value_producer(H->node_input(n, i));
    for (int j = 0; j < len; j++)
      if (p == chain[j]) return 1;
  }
  return 0;
}

PW_FN void pw_partition_block(const fbxp_block *b, fbxp_proposals *props) {
  const fbxp_node *chain[PW_MAX_NODES];
  int len = 0;
  for (const fbxp_node *n = H->block_first(b); n; n = H->node_next(n)) {
    for (int i = 0; i < H->node_num_blocks(n); i++) pw_partition_block(H->node_block(n, i), props);
    if (!strcmp(H->node_kind(n), "prim::Constant")) continue;
    if (pw_fusable(n) && len > 0 && len < PW_MAX_NODES && pw_uses_chain(n, chain, len)) {
      chain[len++] = n;
      continue;
    }
    if (len >= 2) H->propose(props, chain, len);
    len = 0;
    if (pw_fusable(n)) chain[len++] = n;
  }
  if (len >= 2) H->propose(props, chain, len);
}

PW_FN fbxp_status *pw_partition(void *state, const fbxp_graph *g, fbxp_proposals *props) {
  (void)state;
  pw_partition_block(H->graph_block(g), props);
  return NULL;
}

PW_FN fbxp_status *pw_error(fbxp_code code, const char *msg) { return H->status_new(code, msg); }

/* An operand from a subgraph value: an earlier register, an input, or a constant. */
PW_FN int pw_operand_of(const fbxp_graph *g, const fbxp_value *v, const fbxp_node *const *done, int ndone,
                        const pw_kernel *k, pw_operand *out) {
  for (int i = 0; i < H->graph_num_inputs(g); i++)
    if (H->graph_input(g, i) == v) {
      out->kind = k->in_kind[i] == FBXP_ARG_TENSOR ? PW_REG : PW_SCALAR_IN;
      out->reg = i;
      return 0;
    }
  const fbxp_node *p = H->value_producer(v);
  for (int i = 0; i < ndone; i++)
    if (done[i] == p) {
      out->kind = PW_REG;
      out->reg = k->nin + i;
      return 0;
    }
  int64_t iv;
  double fv;
  if (H->value_const_int(v, &iv)) {
    out->kind = PW_CONST;
    out->c = (double)iv;
    return 0;
  }
  if (H->value_const_float(v, &fv)) {
    out->kind = PW_CONST;
    out->c = fv;
    return 0;
  }
  return -1;
}

PW_FN fbxp_status *pw_compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                              fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state;
  if (nin != H->graph_num_inputs(g) || nin > PW_MAX_IN) return pw_error(FBXP_ERR_INVALID, "bad input count");
  pw_kernel *k = H->alloc(sizeof *k);
  if (!k) return pw_error(FBXP_ERR_NOMEM, "out of memory");
  memset(k, 0, sizeof *k);
  k->nin = nin;
  k->ndim = -1;
  for (int i = 0; i < nin; i++) {
    k->in_kind[i] = in[i].kind;
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    if (in[i].dtype != 6) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, "only float32 tensors");
    }
    if (in[i].device_type != kDLCPU) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, "only CPU tensors");
    }
    int64_t expect = 1;
    for (int d = in[i].ndim - 1; d >= 0; d--) {
      if (in[i].sizes[d] != 1 && in[i].strides[d] != expect && in[i].strides[d] != FBXP_DIM_UNKNOWN) {
        H->free(k);
        return pw_error(FBXP_ERR_UNSUPPORTED, "only contiguous tensors");
      }
      expect *= in[i].sizes[d];
    }
    if (k->ndim < 0) {
      k->ndim = in[i].ndim;
      memcpy(k->sizes, in[i].sizes, sizeof k->sizes);
    } else if (k->ndim != in[i].ndim || memcmp(k->sizes, in[i].sizes, (size_t)k->ndim * sizeof k->sizes[0])) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, "tensors of different shapes (no broadcasting)");
    }
  }
  if (k->ndim < 0) {
    H->free(k);
    return pw_error(FBXP_ERR_UNSUPPORTED, "no tensor input");
  }
  k->numel = 1;
  for (int d = 0; d < k->ndim; d++) k->numel *= k->sizes[d] < 0 ? 0 : k->sizes[d];
  for (int d = 0; d < k->ndim; d++)
    if (k->sizes[d] < 0) k->numel = -1; /* symbolic: pw_run takes the run's shape */

  const fbxp_node *done[PW_MAX_NODES];
  for (const fbxp_node *n = H->block_first(H->graph_block(g)); n; n = H->node_next(n)) {
    const char *kind = H->node_kind(n);
    if (!strcmp(kind, "prim::Constant")) continue;
    if (!pw_supported_kind(kind) || k->ninstr == PW_MAX_NODES) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, kind);
    }
    pw_instr *ins = &k->instr[k->ninstr];
    ins->op = !strcmp(kind, "aten::relu") ? PW_RELU : !strcmp(kind, "aten::neg") ? PW_NEG
              : !strcmp(kind, "aten::mul")  ? PW_MUL
                                            : PW_ADD;
    ins->alpha = 1;
    int arity = ins->op <= PW_NEG ? 1 : 2;
    int bad = H->node_num_inputs(n) < arity ||
              pw_operand_of(g, H->node_input(n, 0), done, k->ninstr, k, &ins->a) || ins->a.kind != PW_REG;
    if (!bad && arity == 2) bad = pw_operand_of(g, H->node_input(n, 1), done, k->ninstr, k, &ins->b);
    if (!bad && ins->op == PW_ADD && H->node_num_inputs(n) >= 3) {
      pw_operand al;
      bad = pw_operand_of(g, H->node_input(n, 2), done, k->ninstr, k, &al) || al.kind != PW_CONST;
      ins->alpha = al.c;
    }
    if (bad) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, "operands must be tensors, scalar inputs or constants");
    }
    done[k->ninstr++] = n;
  }
  k->nout = H->graph_num_outputs(g);
  if (k->nout != res->noutputs || k->nout > PW_MAX_NODES) {
    H->free(k);
    return pw_error(FBXP_ERR_INVALID, "output count");
  }
  for (int o = 0; o < k->nout; o++) {
    pw_operand op;
    if (pw_operand_of(g, H->graph_output(g, o), done, k->ninstr, k, &op) || op.kind != PW_REG) {
      H->free(k);
      return pw_error(FBXP_ERR_UNSUPPORTED, "outputs must be tensors");
    }
    k->out_reg[o] = op.reg;
    fbxp_arg_spec *s = &res->outputs[o];
    s->kind = FBXP_ARG_TENSOR;
    s->dtype = 6;
    s->ndim = k->ndim;
    memcpy(s->sizes, k->sizes, sizeof s->sizes);
    s->device_type = kDLCPU;
  }
  res->nkernels = 1;
  snprintf(k->source, sizeof k->source, "/* pointwise: %d instructions */", k->ninstr);
  *out = (fbxp_kernel *)k;
  return NULL;
}

typedef struct pw_ctx {
  const pw_kernel *k;
  const float *in[PW_MAX_IN];
  double scalar[PW_MAX_IN];
  float *out[PW_MAX_NODES];
} pw_ctx;

PW_FN void pw_body(void *vctx, int64_t begin, int64_t end) {
  const pw_ctx *c = vctx;
  const pw_kernel *k = c->k;
  float reg[PW_MAX_NODES][PW_CHUNK];
  for (int64_t base = begin; base < end; base += PW_CHUNK) {
    int n = end - base < PW_CHUNK ? (int)(end - base) : PW_CHUNK;
    for (int i = 0; i < k->ninstr; i++) {
      const pw_instr *ins = &k->instr[i];
      float *dst = reg[i];
      const float *a = ins->a.reg < k->nin ? c->in[ins->a.reg] + base : reg[ins->a.reg - k->nin];
      const float *b = NULL;
      float bc = 0;
      if (ins->op >= PW_MUL) {
        if (ins->b.kind == PW_REG) b = ins->b.reg < k->nin ? c->in[ins->b.reg] + base : reg[ins->b.reg - k->nin];
        else bc = (float)(ins->b.kind == PW_CONST ? ins->b.c : c->scalar[ins->b.reg]);
      }
      float alpha = (float)ins->alpha;
      switch (ins->op) {
      case PW_RELU:
        for (int j = 0; j < n; j++) dst[j] = a[j] != a[j] ? a[j] : a[j] > 0 ? a[j] : 0.0f;
        break;
      case PW_NEG:
        for (int j = 0; j < n; j++) dst[j] = -a[j];
        break;
      case PW_MUL:
        for (int j = 0; j < n; j++) dst[j] = a[j] * (b ? b[j] : bc);
        break;
      default:
        for (int j = 0; j < n; j++) dst[j] = a[j] + alpha * (b ? b[j] : bc);
        break;
      }
    }
    for (int o = 0; o < k->nout; o++) {
      int r = k->out_reg[o];
      const float *src = r < k->nin ? c->in[r] + base : reg[r - k->nin];
      memcpy(c->out[o] + base, src, (size_t)n * sizeof(float));
    }
  }
}

PW_FN fbxp_status *pw_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin,
                          DLTensor *const *outs, int32_t nout) {
  (void)state;
  const pw_kernel *k = (const pw_kernel *)kernel;
  if (!k || nin != k->nin || nout != k->nout) return pw_error(FBXP_ERR_INVALID, "argument count");
  pw_ctx c;
  memset(&c, 0, sizeof c);
  c.k = k;
  for (int i = 0; i < nin; i++) {
    if (in[i].kind == FBXP_ARG_TENSOR) {
      const DLTensor *t = in[i].u.tensor;
      if (!t || t->dtype.code != kDLFloat || t->dtype.bits != 32) return pw_error(FBXP_ERR_INVALID, "input dtype");
      c.in[i] = (const float *)((const char *)t->data + t->byte_offset);
    } else {
      c.scalar[i] = in[i].kind == FBXP_ARG_INT ? (double)in[i].u.i : in[i].u.f;
    }
  }
  for (int o = 0; o < nout; o++) {
    if (!outs[o] || outs[o]->dtype.code != kDLFloat) return pw_error(FBXP_ERR_INVALID, "output dtype");
    c.out[o] = (float *)((char *)outs[o]->data + outs[o]->byte_offset);
  }
  int64_t numel = k->numel;
  if (numel < 0) { /* symbolic sizes: the run's own shape (all tensors have it) */
    numel = 1;
    for (int d = 0; d < outs[0]->ndim; d++) numel *= outs[0]->shape[d];
  }
  H->parallel_for(numel, 16384, pw_body, &c);
  return NULL;
}

PW_FN void pw_release(void *state, fbxp_kernel *k) {
  (void)state;
  H->free(k);
}

PW_FN const char *pw_kernel_source(void *state, fbxp_kernel *k) {
  (void)state;
  return ((const pw_kernel *)k)->source;
}

/* The entry most test plugins use: accept host major 1, keep the table. */
#define PW_ENTRY(table)                                                                                  \
  FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major,       \
                                                       uint32_t minor, const char **reason) {           \
    (void)minor;                                                                                         \
    if (major != FBXP_ABI_MAJOR) {                                                                       \
      *reason = "built for fusebox ABI 1.x";                                                             \
      return NULL;                                                                                       \
    }                                                                                                    \
    H = host;                                                                                            \
    return &(table);                                                                                     \
  }

#endif
