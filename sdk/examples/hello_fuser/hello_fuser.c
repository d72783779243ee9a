/* hello_fuser: a complete, small fusebox fuser plugin.
 *
 * It fuses chains of float32 pointwise ops into one loop, generated as C
 * source and compiled through the host's cc_compile service. Which ops, what
 * each one computes (PyTorch's semantics: NaN propagation, type promotion of
 * wrapped numbers, ...) and the C that prints them come from the SDK's
 * kernel kit (<fusebox/kit/kit.h>, libfusebox_kit.a): the op table matches a
 * node to a row, the row's template prints the expression, the kit's printer
 * and math prelude make the kernel. It is the code that
 * sdk/docs/writing-a-fuser.md walks through, and it is built out of tree
 * against the installed SDK, as any third-party plugin would be:
 *
 *   cmake -S sdk/examples/hello_fuser -B hb -DCMAKE_PREFIX_PATH=<prefix>
 *   cmake --build hb
 *   FUSEBOX_FUSER=$PWD/hb/libhello_fuser.so fusebox run graph.ir --input x.npy
 *
 * It includes only the SDK headers, DLPack and the C standard library; all it
 * needs from fusebox at run time comes through the host table handed to the
 * entry point.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>
#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit.h>

/* The host's function table: the plugin's only global, set once by the entry. */
static const fbxp_host_api *host;

#define HELLO_MAX_NODES 64 /* longest chain proposed */
#define HELLO_MAX_ARGS 32  /* kernel inputs and outputs, each */

/* ---- the ops it fuses ------------------------------------------------------------ */

/* The kit's row for node n, if it is one hello compiles: an op computed in
 * float32 for float32 operands whose value is a float (not a comparison,
 * not a selector, not a conversion), and that has a float template. */
static int hello_op(const fbxp_node *n, fbxk_match *m) {
  if (fbxk_op_match(host, n, m) < 0) return 0;
  int r = fbxk_op_rule(m->op);
  if (r != FBXK_R_SAME && r != FBXK_R_UFLOAT && r != FBXK_R_PROMOTE && r != FBXK_R_FLOAT) return 0;
  return fbxk_op_template(m->op, FBXK_F32) != NULL;
}

/* ---- partition --------------------------------------------------------------------- */

/* A tensor value whose dtype is float32 or not known yet. */
static int float_or_unknown(const fbxp_value *v) {
  if (host->value_kind(v) != FBXP_TYPE_TENSOR) return 0;
  fbxp_tensor_type t = {.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0};
  if (host->value_tensor_type(v, &t) != 0) return 0;
  return t.dtype == -1 || t.dtype == FBXK_F32;
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

/* Can node n be part of a group? A kit row hello compiles, every operand a
 * float32 tensor (or not profiled yet) or a number, a float32 result. The
 * kit's match already checked that parameters (alpha, bounds) are numbers
 * and string arguments (gelu's approximate) constants. */
static int fusable(const fbxp_node *n) {
  fbxk_match m;
  if (host->node_num_blocks(n) != 0 || !hello_op(n, &m)) return 0;
  if (!float_or_unknown(host->node_output(n, 0))) return 0;
  int tensors = 0;
  for (int i = 0; i < m.noperands; i++) {
    const fbxp_value *v = host->node_input(n, m.operand_input[i]);
    if (float_or_unknown(v)) tensors++;
    else if (!is_number(v)) return 0;
  }
  return tensors > 0;
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
  fbxk_buf b = {0};
  fbxk_print_float(&b, c, FBXK_F32, FBXK_C); /* hex float literal, or FBXK_NAN/FBXK_INF */
  char *lit = fbxk_take(&b);
  snprintf(out, cap, "%s", lit ? lit : "0");
  fbxk_free(lit);
  return lit ? 0 : -1;
}

/* The kernel every group compiles to, with this signature:
 *   void hello_kernel(const float *const *in, const double *scalars,
 *                     float *const *out, int64_t begin, int64_t end);
 * computing elements [begin, end) of every output. */
typedef void (*hello_kernel_fn)(const float *const *in, const double *scalars, float *const *out, int64_t begin,
                                int64_t end);

/* The kernel's C, printed with the kit's printer: the C dialect's head and
 * math prelude, then one statement per node, its expression from the kit's
 * template for float32 (rounded to float32 as PyTorch rounds each op). */
static fbxp_status *generate(const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin, fbxk_printer *p) {
  const fbxp_value *names[HELLO_MAX_ARGS + HELLO_MAX_NODES];
  int nnames = 0;
  fbxk_p_init(p, FBXK_C);
  fbxk_p_puts(p, fbxk_prelude(FBXK_C));
  fbxk_p_open(p, "\nvoid hello_kernel(const float *const *in, const double *scalars, float *const *out,\n"
                 "                  int64_t begin, int64_t end)");
  for (int i = 0; i < nin; i++) {
    names[nnames++] = host->graph_input(g, i);
    if (in[i].kind == FBXP_ARG_TENSOR) fbxk_p_line(p, "const float *restrict in%d = in[%d];", i, i);
    else fbxk_p_line(p, "const float v%d = (float)scalars[%d];", i, i);
  }
  for (int o = 0; o < host->graph_num_outputs(g); o++) fbxk_p_line(p, "float *restrict out%d = out[%d];", o, o);
  fbxk_p_for(p, NULL, "i", "begin", "end", "1");
  for (int i = 0; i < nin; i++)
    if (in[i].kind == FBXP_ARG_TENSOR) fbxk_p_line(p, "const float v%d = in%d[i];", i, i);
  for (const fbxp_node *n = host->block_first(host->graph_block(g)); n; n = host->node_next(n)) {
    const char *kind = host->node_kind(n);
    if (!strcmp(kind, "prim::Constant")) continue; /* used as literals */
    fbxk_match m;
    if (!hello_op(n, &m) || nnames == HELLO_MAX_ARGS + HELLO_MAX_NODES)
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: group holds an op it cannot compile");
    /* the template's $0.. are the operands, then the parameters */
    char arg[FBXK_MAX_OP_ARGS * 2][64];
    const char *args[FBXK_MAX_OP_ARGS * 2];
    int nargs = m.noperands + m.nparams;
    for (int a = 0; a < nargs; a++) {
      int input = a < m.noperands ? m.operand_input[a] : m.param_input[a - m.noperands];
      if (operand(host->node_input(n, input), names, nnames, arg[a], sizeof arg[a]))
        return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: an operand is neither a tensor nor a number constant");
      args[a] = arg[a];
    }
    fbxk_buf e = {0}, r = {0};
    fbxk_op_print(&e, m.op, FBXK_F32, FBXK_C, args);
    char *expr = fbxk_take(&e);
    fbxk_print_cast(&r, FBXK_F32, expr ? expr : "0", FBXK_C);
    char *rounded = fbxk_take(&r);
    fbxk_p_line(p, "const float v%d = %s; /* %s */", nnames, rounded ? rounded : "0", kind);
    fbxk_free(expr);
    fbxk_free(rounded);
    names[nnames++] = host->node_output(n, 0);
  }
  for (int o = 0; o < host->graph_num_outputs(g); o++) {
    const fbxp_value *v = host->graph_output(g, o);
    char a[64];
    if (host->value_kind(v) != FBXP_TYPE_TENSOR || operand(v, names, nnames, a, sizeof a))
      return host->status_new(FBXP_ERR_UNSUPPORTED, "hello: a group output is not a tensor");
    fbxk_p_line(p, "out%d[i] = %s;", o, a);
  }
  fbxk_p_close(p); /* the loop */
  fbxk_p_close(p); /* the function */
  return p->buf.oom ? host->status_new(FBXP_ERR_NOMEM, "hello: out of memory generating C") : NULL;
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
    if (in[i].dtype != FBXK_F32 || in[i].device_type != kDLCPU)
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

  fbxk_printer p;
  st = generate(g, in, nin, &p);
  k->source = fbxk_p_take(&p); /* host->alloc'd: the kit allocates with the host's allocator */
  if (!st && !k->source) st = host->status_new(FBXP_ERR_NOMEM, "hello: out of memory generating C");
  /* the flags the kit's templates assume: no FMA contraction (results as
   * the unfused ops), no errno (lets the loop vectorize) */
  if (!st) st = host->cc_compile(k->source, "-ffp-contract=off -fno-math-errno -fno-trapping-math -lm", &k->lib);
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
    s->dtype = FBXK_F32;
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
    .description = "float32 pointwise chains as generated C with the SDK's kernel kit (the tutorial's plugin)",
    .flags = FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE,
    .devices = FBXP_DEVICE_CPU,
    .compat_key = "hello-2", /* bump when the generated code changes meaning */
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
  fbxk_set_allocator(h->alloc, h->free); /* kit strings become host memory (kernel_source) */
  return &API;
}
