/* hello_fuser: a complete, small fusebox fuser plugin.
 *
 * It fuses chains of float32 pointwise ops (add, sub, mul, div, neg, relu,
 * sigmoid, tanh, exp) into one loop, generated as C source and compiled
 * through the host's cc_compile service. It is the code that
 * sdk/docs/writing-a-fuser.md walks through, and it is built out of tree
 * against the installed SDK, as any third-party plugin would be:
 *
 *   cmake -S sdk/examples/hello_fuser -B hb -DCMAKE_PREFIX_PATH=<prefix>
 *   cmake --build hb
 *   FUSEBOX_FUSER=$PWD/hb/libhello_fuser.so fusebox run graph.ir --input x.npy
 *
 * It includes only the SDK header, DLPack and the C standard library; all it
 * needs from fusebox comes through the host table handed to the entry point.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>
#include <fusebox/fuser_abi.h>

/* The host's function table: the plugin's only global, set once by the entry. */
static const fbxp_host_api *host;

#define HELLO_MAX_NODES 64 /* longest chain proposed */
#define HELLO_MAX_ARGS 32  /* kernel inputs and outputs, each */
#define HELLO_DTYPE_FLOAT32 6

/* ---- the ops it fuses ------------------------------------------------------------ */

/* How each op is printed in C; operands are names or literals (%s). */
typedef struct hello_op {
  const char *kind;
  int arity;       /* tensor operand first, then an optional second operand */
  int has_alpha;   /* aten::add/sub take a third input, alpha: only 1 is fused */
  const char *fmt; /* the C expression */
} hello_op;

static const hello_op OPS[] = {
    {"aten::add", 2, 1, "%s + %s"},      {"aten::sub", 2, 1, "%s - %s"},
    {"aten::mul", 2, 0, "%s * %s"},      {"aten::div", 2, 0, "%s / %s"},
    {"aten::neg", 1, 0, "-%s"},          {"aten::relu", 1, 0, "hello_relu(%s)"},
    {"aten::sigmoid", 1, 0, "hello_sigmoid(%s)"}, {"aten::tanh", 1, 0, "tanhf(%s)"},
    {"aten::exp", 1, 0, "expf(%s)"},
};

static const hello_op *find_op(const char *kind) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].kind, kind)) return &OPS[i];
  return NULL;
}

/* ---- partition --------------------------------------------------------------------- */

/* A tensor value whose dtype is float32 or not known yet. */
static int float_or_unknown(const fbxp_value *v) {
  if (host->value_kind(v) != FBXP_TYPE_TENSOR) return 0;
  fbxp_tensor_type t = {.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0};
  if (host->value_tensor_type(v, &t) != 0) return 0;
  return t.dtype == -1 || t.dtype == HELLO_DTYPE_FLOAT32;
}

static int is_number_constant(const fbxp_value *v, double *out) {
  int64_t i;
  if (host->value_const_float(v, out)) return 1;
  if (host->value_const_int(v, &i)) {
    *out = (double)i;
    return 1;
  }
  return 0;
}

/* A scalar operand: an int or float, constant or computed (a kernel input). */
static int is_number(const fbxp_value *v) {
  fbxp_type_kind k = host->value_kind(v);
  return k == FBXP_TYPE_INT || k == FBXP_TYPE_FLOAT;
}

/* Can node n be part of a group? */
static int fusable(const fbxp_node *n) {
  const hello_op *op = find_op(host->node_kind(n));
  double c;
  if (!op || host->node_num_blocks(n) != 0 || host->node_num_outputs(n) != 1) return 0;
  if (host->node_num_inputs(n) != op->arity + op->has_alpha) return 0; /* e.g. div with rounding_mode */
  if (!float_or_unknown(host->node_output(n, 0)) || !float_or_unknown(host->node_input(n, 0))) return 0;
  if (op->arity == 2) {
    const fbxp_value *b = host->node_input(n, 1);
    if (!float_or_unknown(b) && !is_number(b)) return 0;
  }
  if (op->has_alpha && !(is_number_constant(host->node_input(n, 2), &c) && c == 1.0)) return 0;
  return 1;
}

/* Is n connected to the chain: does it read a tensor the chain reads or writes? */
static int touches(const fbxp_node *n, const fbxp_node *const *chain, int len) {
  for (int i = 0; i < host->node_num_inputs(n); i++) {
    const fbxp_value *v = host->node_input(n, i);
    if (host->value_kind(v) != FBXP_TYPE_TENSOR) continue;
    for (int j = 0; j < len; j++) {
      if (host->node_output(chain[j], 0) == v) return 1;
      for (int k = 0; k < host->node_num_inputs(chain[j]); k++)
        if (host->node_input(chain[j], k) == v) return 1;
    }
  }
  return 0;
}

/* Groups are runs of consecutive fusable nodes (constants in between are
 * skipped). A run is convex by construction: nothing outside it sits between
 * its nodes, so no path can leave it and come back. */
static void partition_block(const fbxp_block *b, fbxp_proposals *props) {
  const fbxp_node *chain[HELLO_MAX_NODES];
  int len = 0;
  for (const fbxp_node *n = host->block_first(b); n; n = host->node_next(n)) {
    for (int i = 0; i < host->node_num_blocks(n); i++) partition_block(host->node_block(n, i), props);
    if (!strcmp(host->node_kind(n), "prim::Constant")) continue;
    int ok = fusable(n);
    if (ok && len > 0 && len < HELLO_MAX_NODES && touches(n, chain, len)) {
      chain[len++] = n;
      continue;
    }
    if (len >= 2) host->propose(props, chain, len);
    len = 0;
    if (ok) chain[len++] = n;
  }
  if (len >= 2) host->propose(props, chain, len);
}

static fbxp_status *hello_partition(void *state, const fbxp_graph *g, fbxp_proposals *props) {
  (void)state;
  partition_block(host->graph_block(g), props);
  return NULL;
}

/* ---- code generation ---------------------------------------------------------------- */

/* A growing string in host memory; on allocation failure `failed` is set. */
typedef struct strbuf {
  char *data;
  size_t len, cap;
  int failed;
} strbuf;

static void sb_printf(strbuf *sb, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = sb->cap - sb->len;
    va_start(ap, fmt);
    int n = sb->failed ? 0 : vsnprintf(sb->data ? sb->data + sb->len : NULL, room, fmt, ap);
    va_end(ap);
    if (sb->failed || n < 0) {
      sb->failed = 1;
      return;
    }
    if ((size_t)n < room) {
      sb->len += (size_t)n;
      return;
    }
    size_t cap = (sb->cap ? sb->cap * 2 : 1024) + (size_t)n;
    char *data = host->alloc(cap);
    if (!data) {
      sb->failed = 1;
      return;
    }
    if (sb->data) memcpy(data, sb->data, sb->len + 1);
    host->free(sb->data);
    sb->data = data;
    sb->cap = cap;
  }
}

/* The C spelling of an operand: v<i> for a value computed or loaded in the
 * loop, a float literal for a constant. Values are numbered in `names`. */
static int operand(const fbxp_value *v, const fbxp_value *const *names, int nnames, char *out, size_t cap) {
  double c;
  for (int i = 0; i < nnames; i++)
    if (names[i] == v) {
      snprintf(out, cap, "v%d", i);
      return 0;
    }
  if (!is_number_constant(v, &c)) return -1;
  if (isnan(c)) snprintf(out, cap, "NAN");
  else if (isinf(c)) snprintf(out, cap, c > 0 ? "INFINITY" : "(-INFINITY)");
  else snprintf(out, cap, "((float)%a)", c); /* hex: exact */
  return 0;
}

/* The kernel every group compiles to, with this signature:
 *   void hello_kernel(const float *const *in, const double *scalars,
 *                     float *const *out, int64_t begin, int64_t end);
 * computing elements [begin, end) of every output. */
typedef void (*hello_kernel_fn)(const float *const *in, const double *scalars, float *const *out, int64_t begin,
                                int64_t end);

static fbxp_status *generate(const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin, strbuf *sb) {
  const fbxp_value *names[HELLO_MAX_ARGS + HELLO_MAX_NODES];
  int nnames = 0;
  char a[64], b[64] = "";
  sb_printf(sb, "#include <math.h>\n#include <stdint.h>\n\n"
                "static inline float hello_relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }\n"
                "static inline float hello_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }\n\n"
                "void hello_kernel(const float *const *in, const double *scalars, float *const *out,\n"
                "                  int64_t begin, int64_t end) {\n");
  for (int i = 0; i < nin; i++) {
    names[nnames++] = host->graph_input(g, i);
    if (in[i].kind == FBXP_ARG_TENSOR) sb_printf(sb, "  const float *restrict in%d = in[%d];\n", i, i);
    else sb_printf(sb, "  const float v%d = (float)scalars[%d];\n", i, i);
  }
  for (int o = 0; o < host->graph_num_outputs(g); o++) sb_printf(sb, "  float *restrict out%d = out[%d];\n", o, o);
  sb_printf(sb, "  for (int64_t i = begin; i < end; i++) {\n");
  for (int i = 0; i < nin; i++)
    if (in[i].kind == FBXP_ARG_TENSOR) sb_printf(sb, "    const float v%d = in%d[i];\n", i, i);
  for (const fbxp_node *n = host->block_first(host->graph_block(g)); n; n = host->node_next(n)) {
    const char *kind = host->node_kind(n);
    if (!strcmp(kind, "prim::Constant")) continue; /* used as literals */
    const hello_op *op = find_op(kind);
    if (!op || nnames == HELLO_MAX_ARGS + HELLO_MAX_NODES)
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: group holds an op it cannot compile");
    if (host->node_num_inputs(n) < op->arity || operand(host->node_input(n, 0), names, nnames, a, sizeof a) ||
        (op->arity == 2 && operand(host->node_input(n, 1), names, nnames, b, sizeof b)))
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: an operand is neither a tensor nor a number constant");
    sb_printf(sb, "    const float v%d = ", nnames);
    sb_printf(sb, op->fmt, a, b);
    sb_printf(sb, "; /* %s */\n", kind);
    names[nnames++] = host->node_output(n, 0);
  }
  for (int o = 0; o < host->graph_num_outputs(g); o++) {
    const fbxp_value *v = host->graph_output(g, o);
    if (host->value_kind(v) != FBXP_TYPE_TENSOR || operand(v, names, nnames, a, sizeof a))
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: a group output is not a tensor");
    sb_printf(sb, "    out%d[i] = %s;\n", o, a);
  }
  sb_printf(sb, "  }\n}\n");
  return sb->failed ? host->status_new(FBXP_ERR_NOMEM, "hello: out of memory generating C") : NULL;
}

/* ---- compile, run, release ------------------------------------------------------------ */

typedef struct hello_kernel {
  fbxp_shlib *lib;
  hello_kernel_fn fn;
  int32_t ninputs, noutputs;
  int64_t numel;
  char *source; /* kept for kernel_source */
} hello_kernel;

/* Inputs this plugin compiles for: float32 CPU tensors, contiguous, all of
 * one shape (no broadcasting), plus int/float scalars. Anything else is
 * FBXP_ERR_UNSUPPORTED and the host runs the group through its interpreter. */
static fbxp_status *check_specs(const fbxp_arg_spec *in, int32_t nin, const fbxp_arg_spec **shape) {
  *shape = NULL;
  for (int i = 0; i < nin; i++) {
    if (in[i].kind != FBXP_ARG_TENSOR) continue;
    if (in[i].dtype != HELLO_DTYPE_FLOAT32 || in[i].device_type != kDLCPU)
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: only float32 CPU tensors");
    int64_t expect = 1;
    for (int d = in[i].ndim - 1; d >= 0; d--) {
      if (in[i].sizes[d] != 1 && in[i].strides[d] != expect)
        return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: only contiguous tensors");
      expect *= in[i].sizes[d];
    }
    if (!*shape) *shape = &in[i];
    else if (in[i].ndim != (*shape)->ndim ||
             memcmp(in[i].sizes, (*shape)->sizes, (size_t)in[i].ndim * sizeof in[i].sizes[0]))
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: inputs of different shapes (no broadcasting)");
  }
  if (!*shape) return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: the group has no tensor input");
  return NULL;
}

static void hello_release(void *state, fbxp_kernel *kernel) {
  (void)state;
  hello_kernel *k = (hello_kernel *)kernel;
  if (!k) return;
  if (k->lib) host->shlib_release(k->lib);
  host->free(k->source);
  host->free(k);
}

static fbxp_status *hello_compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                                  fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state;
  const fbxp_arg_spec *shape;
  if (nin != host->graph_num_inputs(g) || res->noutputs != host->graph_num_outputs(g))
    return host->status_new(FBXP_ERR_INVALID, "hello: input or output count does not match the group");
  if (nin > HELLO_MAX_ARGS || res->noutputs > HELLO_MAX_ARGS)
    return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: too many kernel inputs or outputs");
  fbxp_status *st = check_specs(in, nin, &shape);
  if (st) return st;

  hello_kernel *k = host->alloc(sizeof *k);
  if (!k) return host->status_new(FBXP_ERR_NOMEM, "hello: out of memory");
  memset(k, 0, sizeof *k);
  k->ninputs = nin;
  k->noutputs = res->noutputs;
  k->numel = 1;
  for (int d = 0; d < shape->ndim; d++) k->numel *= shape->sizes[d];

  strbuf sb = {0};
  st = generate(g, in, nin, &sb);
  k->source = sb.data;
  if (!st) st = host->cc_compile(k->source, "-lm", &k->lib); /* status carries the compiler's errors */
  if (!st) {
    /* POSIX: a data pointer from dlsym converts to a function pointer. */
    void *sym = host->shlib_symbol(k->lib, "hello_kernel");
    memcpy(&k->fn, &sym, sizeof sym);
    if (!sym) st = host->status_new(FBXP_ERR_COMPILE, "hello: the compiled object lacks hello_kernel");
  }
  if (st) {
    hello_release(NULL, (fbxp_kernel *)k);
    return st;
  }
  /* Outputs: float32 tensors of the inputs' shape (the host allocates them). */
  for (int o = 0; o < res->noutputs; o++) {
    fbxp_arg_spec *s = &res->outputs[o];
    s->kind = FBXP_ARG_TENSOR;
    s->dtype = HELLO_DTYPE_FLOAT32;
    s->ndim = shape->ndim;
    memcpy(s->sizes, shape->sizes, sizeof s->sizes);
    s->device_type = kDLCPU;
    s->device_id = 0;
  }
  res->nkernels = 1;
  *out = (fbxp_kernel *)k;
  return NULL;
}

/* What one run hands to the host's thread pool: read-only while it runs,
 * on the caller's stack, so concurrent runs share nothing. */
typedef struct run_ctx {
  hello_kernel_fn fn;
  const float *in[HELLO_MAX_ARGS];
  double scalars[HELLO_MAX_ARGS];
  float *out[HELLO_MAX_ARGS];
} run_ctx;

static void run_range(void *ctx, int64_t begin, int64_t end) {
  const run_ctx *c = ctx;
  c->fn(c->in, c->scalars, c->out, begin, end);
}

static int is_float32(const DLTensor *t) {
  return t && t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1;
}

static fbxp_status *hello_run(void *state, fbxp_kernel *kernel, const fbxp_arg *in, int32_t nin,
                              DLTensor *const *outs, int32_t nout) {
  (void)state;
  const hello_kernel *k = (const hello_kernel *)kernel;
  if (!k || nin != k->ninputs || nout != k->noutputs)
    return host->status_new(FBXP_ERR_INVALID, "hello: run with the wrong number of arguments");
  run_ctx c = {.fn = k->fn};
  for (int i = 0; i < nin; i++) {
    if (in[i].kind == FBXP_ARG_TENSOR) {
      if (!is_float32(in[i].u.tensor)) return host->status_new(FBXP_ERR_INVALID, "hello: input is not float32");
      c.in[i] = (const float *)((const char *)in[i].u.tensor->data + in[i].u.tensor->byte_offset);
    } else {
      c.scalars[i] = in[i].kind == FBXP_ARG_INT ? (double)in[i].u.i : in[i].u.f;
    }
  }
  for (int o = 0; o < nout; o++) {
    if (!is_float32(outs[o])) return host->status_new(FBXP_ERR_INVALID, "hello: output is not float32");
    c.out[o] = (float *)((char *)outs[o]->data + outs[o]->byte_offset);
  }
  host->parallel_for(k->numel, 32768, run_range, &c);
  return NULL;
}

static const char *hello_kernel_source(void *state, fbxp_kernel *kernel) {
  (void)state;
  return ((const hello_kernel *)kernel)->source;
}

/* ---- the table and the entry point -------------------------------------------------------- */

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "hello",
    .version = "1.0.0",
    .vendor = "fusebox SDK",
    .description = "float32 pointwise chains as generated C (the SDK tutorial's plugin)",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .compat_key = "hello-1", /* bump when the generated code changes meaning */
    .partition = hello_partition,
    .compile = hello_compile,
    .run = hello_run,
    .release = hello_release,
    .kernel_source = hello_kernel_source,
};

FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *h, uint32_t major, uint32_t minor,
                                                     const char **reason) {
  (void)minor; /* any 1.x host has everything 1.0 has */
  if (major != FBXP_ABI_MAJOR) {
    *reason = "hello was built for fusebox ABI 1.x";
    return NULL;
  }
  /* Every host function used here is in the 1.0 table; a host table that
   * does not cover it is not one we can work with. */
  if (!h || h->struct_size < FBXP_HOST_API_SIZE_V1_0) {
    *reason = "hello needs the fusebox ABI 1.0 host table (host table too small)";
    return NULL;
  }
  host = h;
  return &API;
}
