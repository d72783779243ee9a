/* The host's function table (fbxp_host_api) that every plugin receives.
 *
 * Handles are the IR's own pointers cast to the opaque ABI types. Every
 * accessor tolerates NULL handles and out-of-range indices (returning NULL,
 * 0 or -1), because a plugin's mistake must never crash the host; a handle
 * that is garbage cannot be detected and is not tried.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "base/log.h"
#include "base/parallel.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ops/optable.h"

#define G(x) ((const fbx_graph *)(x))
#define B(x) ((const fbx_block *)(x))
#define N(x) ((const fbx_node *)(x))
#define V(x) ((const fbx_value *)(x))

/* ---- statuses ------------------------------------------------------------------ */

static fbxp_status nomem_status = {FBXP_ERR_NOMEM, 1, "out of memory"};

static const char *const code_names[] = {
    "ok", "invalid", "unsupported", "compile error", "run error", "out of memory", "internal error", "decline",
};

const char *fbxp_code_name(fbxp_code c) {
  return (unsigned)c < sizeof code_names / sizeof code_names[0] ? code_names[c] : "unknown code";
}

static fbxp_status *status_vnew(fbxp_code code, const char *fmt, va_list ap) {
  fbxp_status *st = fbx_malloc(sizeof *st);
  char *msg = st ? fbx_vasprintf(fmt, ap) : NULL;
  if (!msg) {
    fbx_free(st);
    return &nomem_status;
  }
  st->code = code;
  st->is_static = 0;
  st->msg = msg;
  return st;
}

fbxp_status *fbx_svc_status(fbxp_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fbxp_status *st = status_vnew(code, fmt, ap);
  va_end(ap);
  return st;
}

static fbxp_status *api_status_new(fbxp_code code, const char *message) {
  return fbx_svc_status(code, "%s", message ? message : "(no message)");
}

static void status_free(fbxp_status *ps) {
  if (!ps || ps->is_static) return;
  fbx_free(ps->msg);
  fbx_free(ps);
}

fbxp_code fbx_host_drop_status(fbxp_status *ps) {
  if (!ps) return FBXP_OK;
  fbxp_code c = ps->code;
  status_free(ps);
  return c;
}

fbx_status *fbx_host_take_status(fbxp_status *ps, fbx_code code, const char *fmt, ...) {
  if (!ps) return NULL;
  char prefix[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  fbx_status *st = fbx_status_new(code, "%s: [%s] %s", prefix, fbxp_code_name(ps->code),
                                  ps->msg && *ps->msg ? ps->msg : "(no message)");
  status_free(ps);
  return st;
}

/* ---- the current fuser of this thread ---------------------------------------------- */

static _Thread_local fbx_fuser *tl_current;
/* What the current fuser is doing, for the crash note (crashnote.c): both
 * static or owned by the kernel/fuser for the duration of the call. */
static _Thread_local const char *tl_stage, *tl_what;

fbx_fuser *fbx_host_set_current(fbx_fuser *f) {
  fbx_fuser *old = tl_current;
  tl_current = f;
  tl_stage = tl_what = NULL;
  return old;
}

void fbx_host_set_stage(const char *stage, const char *what) {
  tl_stage = stage;
  tl_what = what;
}

bool fbx_host_current_call(const char **name, const char **path, const char **stage, const char **what) {
  const fbx_fuser *f = tl_current;
  if (!f || !tl_stage) return false;
  *name = f->name ? f->name : "?";
  *path = f->path ? f->path : "?";
  *stage = tl_stage;
  *what = tl_what ? tl_what : "?";
  return true;
}

fbx_fuser *fbx_host_current(void) { return tl_current; }

void fbx_svc_count_disk_hit(void) {
  fbx_fuser *f = tl_current;
  if (f) atomic_fetch_add(&f->disk_cache_hits, 1);
}

/* ---- logging -------------------------------------------------------------------- */

static void api_log(fbxp_log_level level, const char *message) {
  const char *who = tl_current && tl_current->name ? tl_current->name : "plugin";
  if (!message) message = "";
  if (level >= FBXP_LOG_WARN) {
    fprintf(stderr, "[fusebox:%s] warning: %s\n", who, message);
    return;
  }
  fbx_log(FBX_LOG_FUSION, "[%s] %s", who, message);
}

/* ---- graphs and blocks ------------------------------------------------------------- */

static const fbxp_block *api_graph_block(const fbxp_graph *g) {
  return g ? (const fbxp_block *)G(g)->block : NULL;
}
static int32_t api_graph_num_inputs(const fbxp_graph *g) { return g ? fbx_graph_ninputs(G(g)) : 0; }
static const fbxp_value *api_graph_input(const fbxp_graph *g, int32_t i) {
  if (!g || i < 0 || i >= fbx_graph_ninputs(G(g))) return NULL;
  return (const fbxp_value *)fbx_graph_input(G(g), i);
}
static int32_t api_graph_num_outputs(const fbxp_graph *g) { return g ? fbx_graph_noutputs(G(g)) : 0; }
static const fbxp_value *api_graph_output(const fbxp_graph *g, int32_t i) {
  if (!g || i < 0 || i >= fbx_graph_noutputs(G(g))) return NULL;
  return (const fbxp_value *)fbx_graph_output(G(g), i);
}
static const fbxp_node *api_block_first(const fbxp_block *b) {
  return b ? (const fbxp_node *)fbx_block_first(B(b)) : NULL;
}
static const fbxp_node *api_node_next(const fbxp_node *n) { return n ? (const fbxp_node *)N(n)->next : NULL; }
static const fbxp_node *api_block_owner(const fbxp_block *b) {
  return b ? (const fbxp_node *)B(b)->owning : NULL;
}

/* ---- nodes ------------------------------------------------------------------------ */

static const char *api_node_kind(const fbxp_node *n) { return n ? fbx_sym_str(N(n)->kind) : ""; }
static const char *api_node_srcloc(const fbxp_node *n) { return n ? N(n)->srcloc : NULL; }
static int32_t api_node_num_inputs(const fbxp_node *n) { return n ? N(n)->ninputs : 0; }
static const fbxp_value *api_node_input(const fbxp_node *n, int32_t i) {
  if (!n || i < 0 || i >= N(n)->ninputs) return NULL;
  return (const fbxp_value *)N(n)->inputs[i];
}
static int32_t api_node_num_outputs(const fbxp_node *n) { return n ? N(n)->noutputs : 0; }
static const fbxp_value *api_node_output(const fbxp_node *n, int32_t i) {
  if (!n || i < 0 || i >= N(n)->noutputs) return NULL;
  return (const fbxp_value *)N(n)->outputs[i];
}
static int32_t api_node_num_blocks(const fbxp_node *n) { return n ? N(n)->nblocks : 0; }
static const fbxp_block *api_node_block(const fbxp_node *n, int32_t i) {
  if (!n || i < 0 || i >= N(n)->nblocks) return NULL;
  return (const fbxp_block *)N(n)->blocks[i];
}

static const char *api_node_schema(const fbxp_node *n) {
  if (!n) return NULL;
  const fbx_node *node = N(n);
  if (node->ninputs > FBX_SCHEMA_MAX_ARGS * 4) return NULL;
  fbx_type *types[FBX_SCHEMA_MAX_ARGS * 4];
  for (int i = 0; i < node->ninputs; i++) types[i] = node->inputs[i]->type;
  const fbx_op *op = fbx_op_resolve_types(node->kind, types, node->ninputs);
  return op ? op->schema_text : NULL;
}

/* ---- values ------------------------------------------------------------------------- */

static fbxp_type_kind api_value_kind(const fbxp_value *v) {
  if (!v || !V(v)->type) return FBXP_TYPE_OTHER;
  switch (V(v)->type->kind) {
  case FBX_TYPE_TENSOR: return FBXP_TYPE_TENSOR;
  case FBX_TYPE_INT: return FBXP_TYPE_INT;
  case FBX_TYPE_FLOAT: return FBXP_TYPE_FLOAT;
  case FBX_TYPE_BOOL: return FBXP_TYPE_BOOL;
  case FBX_TYPE_NONE: return FBXP_TYPE_NONE;
  case FBX_TYPE_STR: return FBXP_TYPE_STR;
  case FBX_TYPE_DEVICE: return FBXP_TYPE_DEVICE;
  case FBX_TYPE_LIST: return FBXP_TYPE_LIST;
  case FBX_TYPE_TUPLE: return FBXP_TYPE_TUPLE;
  case FBX_TYPE_OPTIONAL: return FBXP_TYPE_OPTIONAL;
  default: return FBXP_TYPE_OTHER;
  }
}

static const char *api_value_name(const fbxp_value *v) { return v && V(v)->name ? V(v)->name : ""; }

static const fbxp_node *api_value_producer(const fbxp_value *v) {
  if (!v) return NULL;
  const fbx_node *n = V(v)->node;
  return n->kind == FBX_SYM_prim_Param ? NULL : (const fbxp_node *)n;
}

static int32_t api_value_num_uses(const fbxp_value *v) { return v ? V(v)->nuses : 0; }

static const fbxp_node *api_value_use(const fbxp_value *v, int32_t i, int32_t *input_index) {
  if (input_index) *input_index = -1;
  if (!v || i < 0 || i >= V(v)->nuses) return NULL;
  const fbx_use *u = &V(v)->uses[i];
  if (input_index) *input_index = u->offset;
  return u->user->kind == FBX_SYM_prim_Return ? NULL : (const fbxp_node *)u->user;
}

static void device_of(const char *dev, int32_t *type, int32_t *id) {
  *type = 0;
  *id = 0;
  if (!dev) return;
  size_t n = strcspn(dev, ":");
  if (n == 3 && !strncmp(dev, "cpu", 3)) *type = kDLCPU;
  else if (n == 4 && !strncmp(dev, "cuda", 4)) *type = kDLCUDA;
  else return;
  if (dev[n] == ':') *id = (int32_t)strtol(dev + n + 1, NULL, 10);
}

static int32_t api_value_tensor_type(const fbxp_value *v, fbxp_tensor_type *out) {
  if (!v || !out || !V(v)->type || V(v)->type->kind != FBX_TYPE_TENSOR) return -1;
  const fbx_type *t = V(v)->type;
  fbxp_tensor_type tt;
  memset(&tt, 0, sizeof tt);
  tt.dtype = t->dtype == FBX_DTYPE_UNDEFINED ? -1 : (int32_t)t->dtype;
  tt.ndim = t->rank < 0 || t->rank > FBXP_MAX_DIMS ? -1 : t->rank;
  for (int d = 0; d < FBXP_MAX_DIMS; d++) tt.sizes[d] = tt.strides[d] = FBXP_DIM_UNKNOWN;
  for (int d = 0; d < tt.ndim; d++) {
    tt.sizes[d] = t->sizes && t->sizes[d] >= 0 ? t->sizes[d] : FBXP_DIM_UNKNOWN;
    tt.strides[d] = t->strides && t->strides[d] >= 0 ? t->strides[d] : FBXP_DIM_UNKNOWN;
  }
  tt.requires_grad = t->requires_grad;
  device_of(t->device, &tt.device_type, &tt.device_id);
  /* Only the part the caller's struct_size covers. */
  size_t n = out->struct_size < sizeof tt ? out->struct_size : sizeof tt;
  if (n > sizeof(size_t)) memcpy((char *)out + sizeof(size_t), (char *)&tt + sizeof(size_t), n - sizeof(size_t));
  return 0;
}

static const fbx_attr *const_attr(const fbx_value *v) {
  if (!v || v->node->kind != FBX_SYM_prim_Constant) return NULL;
  return fbx_node_attr(v->node, FBX_SYM_attr_value);
}

static int32_t api_value_const_int(const fbxp_value *v, int64_t *out) {
  int64_t x;
  if (!v || !fbx_value_const_int(V(v), &x)) return 0;
  if (out) *out = x;
  return 1;
}

static int32_t api_value_const_float(const fbxp_value *v, double *out) {
  const fbx_attr *a = const_attr(V(v));
  if (!a || a->kind != FBX_ATTR_FLOAT || V(v)->type->kind != FBX_TYPE_FLOAT) return 0;
  if (out) *out = a->u.f;
  return 1;
}

static int32_t api_value_const_str(const fbxp_value *v, const char **out) {
  const fbx_attr *a = const_attr(V(v));
  if (!a || a->kind != FBX_ATTR_STR) return 0;
  if (V(v)->type->kind != FBX_TYPE_STR && V(v)->type->kind != FBX_TYPE_DEVICE) return 0;
  if (out) *out = a->u.s;
  return 1;
}

static int32_t api_value_is_none(const fbxp_value *v) { return v && fbx_value_is_none(V(v)); }

static int32_t api_value_const_int_list(const fbxp_value *v, int64_t *out, int32_t cap) {
  if (!v) return -1;
  if (cap < 0) cap = 0;
  const fbx_value *val = V(v);
  const fbx_attr *a = const_attr(val);
  if (a) {
    if (a->kind != FBX_ATTR_INTS) return -1;
    for (int i = 0; i < a->n && i < cap && out; i++) out[i] = a->u.is[i];
    return a->n;
  }
  if (val->node->kind != FBX_SYM_prim_ListConstruct) return -1;
  const fbx_node *lc = val->node;
  for (int i = 0; i < lc->ninputs; i++) {
    int64_t x;
    if (!fbx_value_const_int(lc->inputs[i], &x)) return -1;
    if (i < cap && out) out[i] = x;
  }
  return lc->ninputs;
}

/* ---- proposals ------------------------------------------------------------------------- */

static int32_t api_propose(fbxp_proposals *p, const fbxp_node *const *nodes, int32_t count) {
  if (!p || p->nomem) return -1;
  if (p->n == p->cap) {
    int cap = p->cap ? p->cap * 2 : 16;
    fbx_proposal *items = fbx_realloc(p->items, (size_t)cap * sizeof *items);
    if (!items) {
      p->nomem = true;
      return -1;
    }
    p->items = items;
    p->cap = cap;
  }
  fbx_proposal *it = &p->items[p->n];
  memset(it, 0, sizeof *it);
  int32_t rc = 0;
  if (count <= 0) {
    it->bad = count < 0 ? "negative node count" : "empty group";
    rc = count < 0 ? -1 : 0;
  } else if (!nodes) {
    it->bad = "NULL node array";
    rc = -1;
  } else if (count > p->max_count) {
    /* The array cannot hold that many distinct nodes of this graph: do not
     * read past what the plugin may really have. */
    it->bad = "more nodes than the graph has";
    rc = -1;
  } else {
    it->nodes = fbx_malloc((size_t)count * sizeof *it->nodes);
    if (!it->nodes) {
      p->nomem = true;
      return -1;
    }
    memcpy(it->nodes, nodes, (size_t)count * sizeof *it->nodes);
    it->count = count;
  }
  if (!it->nodes && !it->bad) it->bad = "empty group";
  if (it->bad) it->count = count; /* for the log only: nodes is NULL */
  p->n++;
  return rc;
}

/* ---- memory and threads ---------------------------------------------------------------- */

static void *api_alloc(size_t n) { return fbx_malloc(n ? n : 1); }
static void api_free(void *p) { fbx_free(p); }

static void api_parallel_for(int64_t n, int64_t grain, fbxp_range_fn fn, void *ctx) {
  if (!fn || n <= 0) return;
  fbx_parallel_for(n, grain < 1 ? 1 : grain, (fbx_range_fn)fn, ctx);
}

/* ---- services (core/host/services_*.c) ---------------------------------------------------- */

static fbxp_status *api_cc_compile(const char *source, const char *flags, fbxp_shlib **out) {
  if (!source || !out) return fbx_svc_status(FBXP_ERR_INVALID, "cc_compile: NULL source or out");
  return fbx_svc_cc_compile(source, flags, out);
}
static void *api_shlib_symbol(fbxp_shlib *lib, const char *name) {
  return lib && name ? fbx_svc_shlib_symbol(lib, name) : NULL;
}
static void api_shlib_release(fbxp_shlib *lib) {
  if (lib) fbx_svc_shlib_release(lib);
}
static fbxp_status *api_nvrtc_compile(const char *source, const char *name, const char *arch, char **ptx,
                                      char **log) {
  if (log) *log = NULL;
  if (!source || !ptx) return fbx_svc_status(FBXP_ERR_INVALID, "nvrtc_compile: NULL source or ptx");
  return fbx_svc_nvrtc_compile(source, name ? name : "kernel.cu", arch, ptx, log);
}
static fbxp_status *api_opencl_build(const char *source, const char *options, void **program, void **context,
                                     void **device, void **queue, char **log) {
  if (log) *log = NULL;
  if (!source || !program || !context || !device || !queue)
    return fbx_svc_status(FBXP_ERR_INVALID, "opencl_build: NULL source or output");
  return fbx_svc_opencl_build(source, options, program, context, device, queue, log);
}

/* ---- statuses both ways (1.1) ------------------------------------------------------- */

static fbxp_code api_status_code(const fbxp_status *s) { return s ? s->code : FBXP_OK; }
static const char *api_status_message(const fbxp_status *s) { return s && s->msg ? s->msg : ""; }
static void api_status_free(fbxp_status *s) { status_free(s); }

/* ---- the table ------------------------------------------------------------------------- */

static const fbxp_host_api host_api = {
    .struct_size = FBXP_HOST_API_SIZE_V1_1,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .status_new = api_status_new,
    .log = api_log,
    .graph_block = api_graph_block,
    .graph_num_inputs = api_graph_num_inputs,
    .graph_input = api_graph_input,
    .graph_num_outputs = api_graph_num_outputs,
    .graph_output = api_graph_output,
    .block_first = api_block_first,
    .node_next = api_node_next,
    .block_owner = api_block_owner,
    .node_kind = api_node_kind,
    .node_srcloc = api_node_srcloc,
    .node_num_inputs = api_node_num_inputs,
    .node_input = api_node_input,
    .node_num_outputs = api_node_num_outputs,
    .node_output = api_node_output,
    .node_num_blocks = api_node_num_blocks,
    .node_block = api_node_block,
    .node_schema = api_node_schema,
    .value_kind = api_value_kind,
    .value_name = api_value_name,
    .value_producer = api_value_producer,
    .value_num_uses = api_value_num_uses,
    .value_use = api_value_use,
    .value_tensor_type = api_value_tensor_type,
    .value_const_int = api_value_const_int,
    .value_const_float = api_value_const_float,
    .value_const_str = api_value_const_str,
    .value_is_none = api_value_is_none,
    .value_const_int_list = api_value_const_int_list,
    .propose = api_propose,
    .alloc = api_alloc,
    .free = api_free,
    .parallel_for = api_parallel_for,
    .cc_compile = api_cc_compile,
    .shlib_symbol = api_shlib_symbol,
    .shlib_release = api_shlib_release,
    .nvrtc_compile = api_nvrtc_compile,
    .opencl_build = api_opencl_build,
    .status_code = api_status_code,
    .status_message = api_status_message,
    .status_free = api_status_free,
    .num_threads = fbx_host_num_threads,
    .cpu_features = fbx_host_cpu_features,
    .cache_dir = fbx_host_cache_dir,
};

const fbxp_host_api *fbx_host_api_table(void) { return &host_api; }

/* A 1.0 host's table: the 1.0 part only, nothing beyond its struct_size. */
static fbxp_host_api host_api_1_0;
static pthread_once_t host_api_1_0_once = PTHREAD_ONCE_INIT;
static void host_api_1_0_init(void) {
  memset(&host_api_1_0, 0, sizeof host_api_1_0);
  memcpy(&host_api_1_0, &host_api, FBXP_HOST_API_SIZE_V1_0);
  host_api_1_0.struct_size = FBXP_HOST_API_SIZE_V1_0;
  host_api_1_0.abi_minor = 0;
}

const fbxp_host_api *fbx_host_api_table_for(uint32_t minor) {
  if (minor >= FBXP_ABI_MINOR) return &host_api;
  pthread_once(&host_api_1_0_once, host_api_1_0_init);
  return &host_api_1_0;
}
