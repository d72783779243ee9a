/* Compiling and running fusion groups through a plugin, the in-memory
 * kernel cache, and the fuser's counters.
 *
 * Cache key: (fuser, canonical subgraph text, input specs). The cache holds
 * one reference to each kernel; callers get their own. Specs are zeroed
 * before they are filled, so equal specs compare equal with memcmp.
 *
 * Input specs: tensors give dtype/ndim/sizes/strides/CPU; scalars give kind
 * INT (dtype int64, or bool for bools) or FLOAT (dtype float64), ndim 0.
 * Plugins with host guards (FBXP_GUARDS_OUTSIDE) are only ever run on
 * inputs equal to their specs (checked here, so a missing guard cannot make
 * a plugin read out of bounds); self-fallback plugins get any shapes of the
 * compiled dtypes and decline what they cannot handle.
 *
 * Stats: `runs` counts calls that reached the plugin's run (failures and
 * declines included); kernel_launches only successful ones.
 *
 * Outputs: the plugin promises a spec for every output (at compile, or per
 * run for dynamic kernels); the host checks it (valid dtype, ndim <= 16,
 * sizes >= 0) before allocating, because a bad spec is the plugin's error,
 * not a reason to crash. Scalar outputs (spec kind INT/FLOAT) are passed to
 * run as 0-d int64/float64 tensors and come back as int/float values.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "host/hostimpl.h"
#include "ir/text.h"

/* ---- specs ---------------------------------------------------------------------- */

static fbx_status *spec_of(fbxp_arg_spec *s, const fbx_ivalue *v, int i) {
  memset(s, 0, sizeof *s);
  s->struct_size = FBXP_ARG_SPEC_SIZE_V1_0;
  switch (v->kind) {
  case FBX_IV_TENSOR: {
    const fbx_tensor *t = v->u.t;
    if (!t) return fbx_status_new(FBX_ERR_INVALID_ARG, "input %d: NULL tensor", i);
    s->kind = FBXP_ARG_TENSOR;
    s->dtype = (int32_t)t->dtype;
    s->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
      s->sizes[d] = t->sizes[d];
      s->strides[d] = t->strides[d];
    }
    s->device_type = kDLCPU;
    return NULL;
  }
  case FBX_IV_INT:
    s->kind = FBXP_ARG_INT;
    s->dtype = FBX_DTYPE_INT64;
    return NULL;
  case FBX_IV_BOOL:
    s->kind = FBXP_ARG_INT;
    s->dtype = FBX_DTYPE_BOOL;
    return NULL;
  case FBX_IV_FLOAT:
    s->kind = FBXP_ARG_FLOAT;
    s->dtype = FBX_DTYPE_FLOAT64;
    return NULL;
  default:
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "input %d: a %s value cannot be passed to a fused kernel", i,
                          fbx_iv_kind_name(v->kind));
  }
}

static void spec_print(fbx_strbuf *b, const fbxp_arg_spec *s) {
  if (s->kind == FBXP_ARG_INT) {
    fbx_strbuf_puts(b, "int");
    return;
  }
  if (s->kind == FBXP_ARG_FLOAT) {
    fbx_strbuf_puts(b, "float");
    return;
  }
  if (fbx_dtype_valid(s->dtype)) fbx_strbuf_printf(b, "%s[", fbx_dtype_name((fbx_dtype)s->dtype));
  else fbx_strbuf_printf(b, "dtype(%d)[", s->dtype);
  for (int d = 0; d < s->ndim && d < FBXP_MAX_DIMS; d++) {
    if (FBXP_IS_SYMBOL(s->sizes[d])) fbx_strbuf_printf(b, "%ss%d", d ? ", " : "", (int)FBXP_SYMBOL_ID(s->sizes[d]));
    else fbx_strbuf_printf(b, "%s%lld", d ? ", " : "", (long long)s->sizes[d]);
  }
  fbx_strbuf_puts(b, "]");
}

/* Is a plugin's output spec something the host can allocate? Symbols
 * (sizes <= -2) are allowed when they are among the kernel's nsyms input
 * symbols: they are resolved per run. */
static bool out_spec_ok(const fbxp_arg_spec *s, int nsyms, char *why, size_t cap) {
  if (s->kind == FBXP_ARG_INT || s->kind == FBXP_ARG_FLOAT) return true;
  if (s->kind != FBXP_ARG_TENSOR) {
    snprintf(why, cap, "unknown kind %d", s->kind);
    return false;
  }
  if (!fbx_dtype_valid(s->dtype)) {
    snprintf(why, cap, "invalid dtype %d", s->dtype);
    return false;
  }
  if (s->ndim < 0 || s->ndim > FBXP_MAX_DIMS) {
    snprintf(why, cap, "ndim %d (must be 0..%d)", s->ndim, FBXP_MAX_DIMS);
    return false;
  }
  int64_t numel = 1;
  const int64_t limit = INT64_C(1) << 48;
  for (int d = 0; d < s->ndim; d++) {
    if (FBXP_IS_SYMBOL(s->sizes[d]) && FBXP_SYMBOL_ID(s->sizes[d]) < nsyms) continue;
    if (s->sizes[d] < 0) {
      snprintf(why, cap, "negative size %lld in dim %d", (long long)s->sizes[d], d);
      return false;
    }
    if (s->sizes[d] && numel > limit / s->sizes[d]) {
      snprintf(why, cap, "too many elements");
      return false;
    }
    numel *= s->sizes[d];
  }
  return true;
}

static fbx_status *check_out_specs(const fbx_fkernel *k, const fbxp_arg_spec *specs, int nsyms) {
  for (int i = 0; i < k->nout; i++) {
    char why[96];
    if (!out_spec_ok(&specs[i], nsyms, why, sizeof why))
      return fbx_status_new(FBX_ERR_PLUGIN, "fuser '%s' gave an invalid spec for output %d of %s: %s",
                            k->fuser->name, i, k->desc, why);
  }
  return NULL;
}

/* ---- specs against the profiled types ------------------------------------------------- */

/* The profiled type of a group's input or output as a spec, for messages:
 * "float32[32, 4]" with "?" for unknown parts. */
static void type_print(fbx_strbuf *b, const fbx_type *t) {
  if (!t || t->kind != FBX_TYPE_TENSOR) {
    fbx_strbuf_puts(b, t && t->kind == FBX_TYPE_INT ? "int" : t && t->kind == FBX_TYPE_FLOAT ? "float" : "?");
    return;
  }
  fbx_strbuf_puts(b, t->dtype == FBX_DTYPE_UNDEFINED ? "?" : fbx_dtype_name(t->dtype));
  if (t->rank < 0) {
    fbx_strbuf_puts(b, "[?]");
    return;
  }
  fbx_strbuf_putc(b, '[');
  for (int d = 0; d < t->rank; d++) {
    if (d) fbx_strbuf_puts(b, ", ");
    if (t->sizes && t->sizes[d] >= 0) fbx_strbuf_printf(b, "%lld", (long long)t->sizes[d]);
    else fbx_strbuf_putc(b, '?');
  }
  fbx_strbuf_putc(b, ']');
}

/* Do the kernel's input specs agree with the group's profiled input types?
 * Only then do the profiled output types say what the outputs must be:
 * `dtypes` when every known input dtype agrees, `shapes` when every known
 * rank and size agrees too (always so for host-guarded plugins, whose
 * kernels only ever see the guarded types; a self-fallback plugin may be
 * compiled for other shapes). */
static void inputs_match_profile(const fbx_fkernel *k, const fbx_graph *sub, bool *dtypes, bool *shapes) {
  *dtypes = *shapes = true;
  for (int i = 0; i < k->nin && i < fbx_graph_ninputs(sub); i++) {
    const fbx_type *t = fbx_graph_input(sub, i)->type;
    const fbxp_arg_spec *s = &k->in_specs[i];
    if (!t || t->kind != FBX_TYPE_TENSOR || s->kind != FBXP_ARG_TENSOR) continue;
    if (t->dtype != FBX_DTYPE_UNDEFINED && (int32_t)t->dtype != s->dtype) *dtypes = false;
    if (t->rank >= 0 && t->rank != s->ndim) *shapes = false;
    for (int d = 0; t->rank == s->ndim && t->sizes && d < t->rank; d++)
      if (t->sizes[d] >= 0 && t->sizes[d] != s->sizes[d]) *shapes = false;
  }
  if (!*dtypes) *shapes = false;
}

/* A promised output spec against the profiled output type: the plugin must
 * not promise another dtype, rank or (known) size than what the reference
 * interpreter produced, or the host would hand on garbage or allocate a
 * buffer the kernel overruns. */
static fbx_status *check_out_against_profile(const fbx_fkernel *k, const fbx_graph *sub, const fbxp_arg_spec *specs,
                                             bool dtypes, bool shapes) {
  for (int i = 0; i < k->nout && i < fbx_graph_noutputs(sub); i++) {
    const fbx_type *t = fbx_graph_output(sub, i)->type;
    const fbxp_arg_spec *s = &specs[i];
    const char *what = NULL;
    if (!t) continue;
    if (t->kind == FBX_TYPE_TENSOR) {
      if (s->kind != FBXP_ARG_TENSOR) what = "kind";
      else if (dtypes && t->dtype != FBX_DTYPE_UNDEFINED && (int32_t)t->dtype != s->dtype) what = "dtype";
      else if (shapes && t->rank >= 0 && t->rank != s->ndim) what = "rank";
      for (int d = 0; !what && shapes && t->rank == s->ndim && t->sizes && d < t->rank; d++)
        if (t->sizes[d] >= 0 && !FBXP_IS_SYMBOL(s->sizes[d]) && t->sizes[d] != s->sizes[d]) what = "sizes";
    } else if ((t->kind == FBX_TYPE_INT || t->kind == FBX_TYPE_BOOL) && s->kind != FBXP_ARG_INT) {
      what = "kind";
    } else if (t->kind == FBX_TYPE_FLOAT && s->kind != FBXP_ARG_FLOAT) {
      what = "kind";
    }
    if (!what) continue;
    fbx_strbuf b = {0};
    spec_print(&b, s);
    fbx_strbuf_puts(&b, ", but the profiled type is ");
    type_print(&b, t);
    fbx_status *st = fbx_status_new(FBX_ERR_PLUGIN,
                                    "fuser '%s' promised a wrong %s for output %d of %s: spec %s", k->fuser->name,
                                    what, i, k->desc, b.data ? b.data : "?");
    fbx_strbuf_free(&b);
    return st;
  }
  return NULL;
}

/* ---- kernels ------------------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
  return h;
}

/* "group %5 (aten::mul, aten::add, aten::relu)" */
static char *group_desc(const fbx_node *group, const fbx_graph *sub) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "group");
  if (group->noutputs > 0) fbx_strbuf_printf(&b, " %%%s", group->outputs[0]->name);
  fbx_strbuf_puts(&b, " (");
  int k = 0;
  for (const fbx_node *n = fbx_block_first(sub->block); n; n = n->next) {
    if (n->kind == FBX_SYM_prim_Constant) continue;
    if (k == 6) {
      fbx_strbuf_puts(&b, ", ...");
      break;
    }
    fbx_strbuf_printf(&b, "%s%s", k++ ? ", " : "", fbx_sym_str(n->kind));
  }
  fbx_strbuf_puts(&b, ")");
  return fbx_strbuf_take(&b);
}

static void kernel_free(fbx_fkernel *k) {
  fbx_free(k->text);
  fbx_free(k->desc);
  fbx_free(k->in_specs);
  fbx_free(k->out_specs);
  fbx_free(k->out_dtypes);
  fbx_free(k);
}

/* The last reference is gone: hand the kernel back to the plugin. Caller
 * holds f->lock and drops the kernel's hold on the fuser afterwards. */
static void kernel_destroy_locked(fbx_fkernel *k) {
  fbx_fuser *f = k->fuser;
  fbx_fuser *prev = fbx_host_set_current(f);
  fbx_host_set_stage("release", k->desc);
  f->api->release(f->state, k->pk);
  fbx_host_set_current(prev);
  kernel_free(k);
}

/* ---- the cache's use order (f->lock held) ------------------------------------------ */

static void lru_unlink(fbx_fuser *f, fbx_fkernel *k) {
  if (k->lru_prev) k->lru_prev->lru_next = k->lru_next;
  else f->lru_head = k->lru_next;
  if (k->lru_next) k->lru_next->lru_prev = k->lru_prev;
  else f->lru_tail = k->lru_prev;
  k->lru_prev = k->lru_next = NULL;
}

static void lru_push_front(fbx_fuser *f, fbx_fkernel *k) {
  k->lru_prev = NULL;
  k->lru_next = f->lru_head;
  if (f->lru_head) f->lru_head->lru_prev = k;
  f->lru_head = k;
  if (!f->lru_tail) f->lru_tail = k;
}

/* Drop the least recently used kernels until the cache is within bounds.
 * Kernels still held by their users live on outside the cache. */
static void lru_evict_locked(fbx_fuser *f) {
  while (f->cached > f->cache_max && f->lru_tail) {
    fbx_fkernel *k = f->lru_tail;
    lru_unlink(f, k);
    fbx_fkernel **pp = &f->cache[k->hash % FBX_KCACHE_BUCKETS];
    while (*pp && *pp != k) pp = &(*pp)->next;
    if (*pp) *pp = k->next;
    k->next = NULL;
    f->cached--;
    atomic_fetch_add(&f->evictions, 1);
    if (atomic_fetch_sub(&k->refs, 1) == 1) {
      kernel_destroy_locked(k);
      fbx_fuser_unhold(f); /* never the last hold: the compiling caller holds the fuser */
    }
  }
}

void fbx_kcache_flush_locked(fbx_fuser *f) {
  f->lru_head = f->lru_tail = NULL;
  atomic_store(&f->cached, 0);
  for (int b = 0; b < FBX_KCACHE_BUCKETS; b++) {
    fbx_fkernel *k = f->cache[b];
    f->cache[b] = NULL;
    while (k) {
      fbx_fkernel *next = k->next;
      k->next = NULL;
      if (atomic_fetch_sub(&k->refs, 1) == 1) {
        kernel_destroy_locked(k);
        fbx_fuser_unhold(f); /* never the last hold: the releasing user still has one */
      }
      k = next;
    }
  }
}

void fbx_fkernel_release(fbx_fkernel *k) {
  if (!k || atomic_fetch_sub(&k->refs, 1) != 1) return;
  /* Only kernels no longer in the cache get here (the cache holds a reference). */
  fbx_fuser *f = k->fuser;
  pthread_mutex_lock(&f->lock);
  kernel_destroy_locked(k);
  pthread_mutex_unlock(&f->lock);
  fbx_fuser_unhold(f);
}

int fbx_fkernel_launches(const fbx_fkernel *k) { return k ? k->nkernels : 0; }

const char *fbx_fkernel_source(const fbx_fkernel *k) {
  if (!k) return NULL;
  const char *(*src)(void *, fbxp_kernel *) = FBX_PLUGIN_FN(k->fuser, kernel_source);
  return src ? src(k->fuser->state, k->pk) : NULL;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static fbx_fkernel *cache_find(fbx_fuser *f, uint64_t h, const char *text, const fbxp_arg_spec *specs, int nin) {
  for (fbx_fkernel *k = f->cache[h % FBX_KCACHE_BUCKETS]; k; k = k->next)
    if (k->hash == h && k->nin == nin && !strcmp(k->text, text) &&
        (nin == 0 || !memcmp(k->in_specs, specs, (size_t)nin * sizeof *specs)))
      return k;
  return NULL;
}

/* Call the plugin's compile for a new kernel k (f->lock held). */
static fbx_status *plugin_compile(fbx_fuser *f, fbx_fkernel *k, const fbx_graph *sub) {
  fbxp_compile_result res;
  memset(&res, 0, sizeof res);
  res.struct_size = FBXP_COMPILE_RESULT_SIZE_V1_0;
  res.noutputs = k->nout;
  res.outputs = k->out_specs;
  fbx_fuser *prev = fbx_host_set_current(f);
  fbx_host_set_stage("compile", k->desc);
  double t0 = now_ns();
  fbxp_status *ps = f->api->compile(f->state, (const fbxp_graph *)sub, k->in_specs, k->nin, &res, &k->pk);
  double t1 = now_ns();
  fbx_host_set_current(prev);
  atomic_fetch_add(&f->compiles, 1);
  atomic_fetch_add(&f->compile_ns, (long long)(t1 - t0));
  if (ps) {
    /* FBXP_ERR_UNSUPPORTED is the plugin's normal "not this group": counted
     * apart and reported as FBX_ERR_UNSUPPORTED, which callers keep quiet. */
    if (ps->code == FBXP_ERR_UNSUPPORTED) {
      atomic_fetch_add(&f->compile_unsupported, 1);
      return fbx_host_take_status(ps, FBX_ERR_UNSUPPORTED, "fuser '%s' does not support %s", f->name, k->desc);
    }
    atomic_fetch_add(&f->compile_failures, 1);
    return fbx_host_take_status(ps, FBX_ERR_PLUGIN, "fuser '%s' failed to compile %s", f->name, k->desc);
  }
  k->dynamic_outputs = res.dynamic_outputs != 0;
  k->nkernels = res.nkernels > 0 ? res.nkernels : 1;
  /* Plugins fill kind/dtype/ndim/sizes; restore what only the host sets. */
  for (int i = 0; i < k->nout; i++) k->out_specs[i].struct_size = FBXP_ARG_SPEC_SIZE_V1_0;
  bool dtypes, shapes;
  inputs_match_profile(k, sub, &dtypes, &shapes);
  if (k->dynamic_outputs && dtypes && k->out_dtypes)
    for (int i = 0; i < k->nout && i < fbx_graph_noutputs(sub); i++) {
      const fbx_type *t = fbx_graph_output(sub, i)->type;
      k->out_dtypes[i] = t && t->kind == FBX_TYPE_TENSOR && t->dtype != FBX_DTYPE_UNDEFINED ? (int32_t)t->dtype : -1;
    }
  else {
    fbx_free(k->out_dtypes);
    k->out_dtypes = NULL;
  }
  fbx_status *st = k->dynamic_outputs ? NULL : check_out_specs(k, k->out_specs, k->nsyms);
  if (!st && !k->dynamic_outputs) st = check_out_against_profile(k, sub, k->out_specs, dtypes, shapes);
  if (!st && k->dynamic_outputs && !FBX_PLUGIN_FN(f, output_specs))
    st = fbx_status_new(FBX_ERR_PLUGIN, "fuser '%s' compiled %s with dynamic outputs but has no output_specs",
                        f->name, k->desc);
  if (st) {
    atomic_fetch_add(&f->compile_failures, 1);
    prev = fbx_host_set_current(f);
    fbx_host_set_stage("release", k->desc);
    f->api->release(f->state, k->pk);
    fbx_host_set_current(prev);
    k->pk = NULL;
  }
  return st;
}

bool fbx_symtab_apply(fbx_symtab *t, int64_t *sizes, int ndim) {
  int64_t ids[FBXP_MAX_DIMS];
  int n = t->n;
  for (int d = 0; d < ndim && d < FBXP_MAX_DIMS; d++) {
    ids[d] = -1;
    if (sizes[d] == 1) continue;
    for (int j = 0; j < n; j++)
      if (t->vals[j] == sizes[d]) ids[d] = j;
    if (ids[d] < 0) {
      if (n == FBX_SYMTAB_MAX) return false; /* t->n unchanged: nothing applied */
      t->vals[n] = sizes[d];
      ids[d] = n++;
    }
  }
  t->n = n;
  for (int d = 0; d < ndim && d < FBXP_MAX_DIMS; d++)
    if (ids[d] >= 0) sizes[d] = FBXP_SYMBOL(ids[d]);
  return true;
}

bool fbx_fuser_accepts_symbolic(const fbx_fuser *f) { return f && (f->flags & FBXP_ACCEPTS_SYMBOLIC); }

static bool spec_contiguous(const fbxp_arg_spec *s) {
  int64_t expect = 1;
  for (int d = s->ndim - 1; d >= 0; d--) {
    if (s->sizes[d] != 1 && s->strides[d] != expect) return false;
    expect *= s->sizes[d];
  }
  return true;
}

/* Symbolic sizes for the contiguous tensor inputs (their strides become
 * FBXP_DIM_UNKNOWN); returns the number of symbols. */
static int symbolize(fbxp_arg_spec *specs, int nin) {
  fbx_symtab t = {0};
  for (int i = 0; i < nin; i++) {
    fbxp_arg_spec *s = &specs[i];
    if (s->kind != FBXP_ARG_TENSOR || !spec_contiguous(s)) continue;
    if (!fbx_symtab_apply(&t, s->sizes, s->ndim)) break;
    for (int d = 0; d < s->ndim; d++) s->strides[d] = FBXP_DIM_UNKNOWN;
  }
  return t.n;
}

fbx_status *fbx_fuser_compile(fbx_fuser *f, const fbx_node *group, const fbx_ivalue *inputs, int nin,
                              fbx_fkernel **out) {
  return fbx_fuser_compile_sym(f, group, inputs, nin, false, out);
}

fbx_status *fbx_fuser_compile_sym(fbx_fuser *f, const fbx_node *group, const fbx_ivalue *inputs, int nin,
                                  bool symbolic, fbx_fkernel **out) {
  if (!f || !group || !out || (nin > 0 && !inputs))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_compile: NULL argument");
  const fbx_graph *sub = fbx_node_subgraph(group);
  if (!sub)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_compile: %s node has no subgraph", fbx_sym_str(group->kind));
  if (nin != fbx_graph_ninputs(sub))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_compile: the group takes %d inputs, %d given",
                          fbx_graph_ninputs(sub), nin);
  fbx_fkernel *k = fbx_calloc(1, sizeof *k);
  if (!k) return fbx_status_nomem();
  k->fuser = f;
  k->nin = nin;
  k->nout = fbx_graph_noutputs(sub);
  k->in_specs = fbx_calloc(nin ? (size_t)nin : 1, sizeof *k->in_specs);
  k->out_specs = fbx_calloc(k->nout ? (size_t)k->nout : 1, sizeof *k->out_specs);
  k->out_dtypes = fbx_calloc(k->nout ? (size_t)k->nout : 1, sizeof *k->out_dtypes);
  k->text = fbx_graph_print(sub);
  k->desc = group_desc(group, sub);
  if (!k->in_specs || !k->out_specs || !k->out_dtypes || !k->text || !k->desc) {
    kernel_free(k);
    return fbx_status_nomem();
  }
  for (int i = 0; i < nin; i++) {
    fbx_status *st = spec_of(&k->in_specs[i], &inputs[i], i);
    if (st) {
      kernel_free(k);
      return st;
    }
  }
  /* Symbols only for host-guarded plugins: their inputs are checked against
   * the specs (and bind the symbols) before every run. */
  if (symbolic && fbx_fuser_accepts_symbolic(f) && !(f->flags & FBXP_SELF_FALLBACK))
    k->nsyms = symbolize(k->in_specs, nin);
  for (int i = 0; i < k->nout; i++) k->out_specs[i].struct_size = FBXP_ARG_SPEC_SIZE_V1_0;
  uint64_t h = fnv(0xcbf29ce484222325ULL, k->text, strlen(k->text));
  h = fnv(h, k->in_specs, (size_t)nin * sizeof *k->in_specs);
  k->hash = h;

  pthread_mutex_lock(&f->lock);
  fbx_fkernel *hit = cache_find(f, h, k->text, k->in_specs, nin);
  if (hit) {
    atomic_fetch_add(&hit->refs, 1);
    lru_unlink(f, hit);
    lru_push_front(f, hit);
    pthread_mutex_unlock(&f->lock);
    atomic_fetch_add(&f->memory_cache_hits, 1);
    fbx_log(FBX_LOG_FUSION, "%s: %s: kernel cache hit", f->name, k->desc);
    kernel_free(k);
    *out = hit;
    return NULL;
  }
  fbx_status *st = plugin_compile(f, k, sub);
  if (st) {
    pthread_mutex_unlock(&f->lock);
    fbx_log(FBX_LOG_FUSION, "%s", fbx_status_message(st));
    kernel_free(k);
    return st;
  }
  atomic_init(&k->refs, 2); /* the cache's and the caller's */
  fbx_fuser_hold(f);
  k->next = f->cache[h % FBX_KCACHE_BUCKETS];
  f->cache[h % FBX_KCACHE_BUCKETS] = k;
  lru_push_front(f, k);
  f->cached++;
  lru_evict_locked(f);
  pthread_mutex_unlock(&f->lock);
  if (fbx_log_on(FBX_LOG_FUSION)) {
    fbx_strbuf b = {0};
    for (int i = 0; i < nin; i++) {
      if (i) fbx_strbuf_puts(&b, ", ");
      spec_print(&b, &k->in_specs[i]);
    }
    fbx_log(FBX_LOG_FUSION, "%s: compiled %s for (%s)%s", f->name, k->desc, b.data ? b.data : "",
            k->dynamic_outputs ? ", dynamic outputs" : "");
    fbx_strbuf_free(&b);
  }
  *out = k;
  return NULL;
}

/* ---- running ------------------------------------------------------------------------- */

static fbx_status *mismatch(const fbx_fkernel *k, int i, const fbxp_arg_spec *want, const fbx_ivalue *got) {
  fbx_strbuf b = {0};
  spec_print(&b, want);
  fbx_strbuf_puts(&b, ", got ");
  fbx_iv_describe(&b, got);
  fbx_status *st = fbx_status_new(FBX_ERR_INVALID_ARG, "input %d of %s does not match the spec it was compiled for: expected %s",
                                  i, k->desc, b.data ? b.data : "?");
  fbx_strbuf_free(&b);
  return st;
}

/* Fill a[i] (and dl[i] for tensors) from inputs, checking them against the
 * compiled specs: with host-side guards the plugin relies on the exact
 * specs; a self-fallback plugin checks shapes itself. */
static fbx_status *bind_inputs(const fbx_fkernel *k, const fbx_ivalue *inputs, fbxp_arg *a, DLTensor *dl,
                               int64_t *bound) {
  bool exact = !(k->fuser->flags & FBXP_SELF_FALLBACK);
  for (int j = 0; j < k->nsyms; j++) bound[j] = -1;
  for (int i = 0; i < k->nin; i++) {
    const fbxp_arg_spec *s = &k->in_specs[i];
    const fbx_ivalue *v = &inputs[i];
    a[i].kind = s->kind;
    if (s->kind == FBXP_ARG_TENSOR) {
      const fbx_tensor *t = v->kind == FBX_IV_TENSOR ? v->u.t : NULL;
      if (!t || (int32_t)t->dtype != s->dtype) return mismatch(k, i, s, v);
      if (exact) {
        bool same = t->ndim == s->ndim;
        bool sym = false;
        for (int d = 0; same && d < t->ndim; d++) {
          if (FBXP_IS_SYMBOL(s->sizes[d])) {
            /* a symbol: never 1, the same size wherever it appears */
            int id = FBXP_SYMBOL_ID(s->sizes[d]);
            sym = true;
            same = t->sizes[d] != 1 && id < k->nsyms && (bound[id] < 0 || bound[id] == t->sizes[d]);
            if (same) bound[id] = t->sizes[d];
          } else {
            same = t->sizes[d] == s->sizes[d] && (s->strides[d] == FBXP_DIM_UNKNOWN || t->strides[d] == s->strides[d]);
          }
        }
        if (same && sym) same = fbx_tensor_is_contiguous(t);
        if (!same) return mismatch(k, i, s, v);
      }
      FBX_TRY(fbx_tensor_to_dltensor(&dl[i], t));
      a[i].u.tensor = &dl[i];
    } else if (s->kind == FBXP_ARG_INT) {
      if (v->kind == FBX_IV_INT) a[i].u.i = v->u.i;
      else if (v->kind == FBX_IV_BOOL) a[i].u.i = v->u.b;
      else return mismatch(k, i, s, v);
    } else {
      if (v->kind == FBX_IV_FLOAT) a[i].u.f = v->u.f;
      else if (v->kind == FBX_IV_INT) a[i].u.f = (double)v->u.i;
      else if (v->kind == FBX_IV_BOOL) a[i].u.f = v->u.b;
      else return mismatch(k, i, s, v);
    }
  }
  return NULL;
}

static fbx_status *alloc_output(fbx_tensor **t, const fbxp_arg_spec *s) {
  if (s->kind == FBXP_ARG_INT) return fbx_tensor_zeros(t, FBX_DTYPE_INT64, 0, NULL);
  if (s->kind == FBXP_ARG_FLOAT) return fbx_tensor_zeros(t, FBX_DTYPE_FLOAT64, 0, NULL);
  return fbx_tensor_empty(t, (fbx_dtype)s->dtype, s->ndim, s->sizes);
}

/* FBXP_DECLINE is for self-fallback plugins only. A guards-outside plugin
 * was compiled for exactly these specs and the host's guard let them
 * through: declining breaks the contract, so it is a run failure (warned,
 * counted in run_failures; the group runs in the interpreter). */
static fbx_status *guarded_decline(const fbx_fuser *f, const fbx_fkernel *k, fbxp_status *ps) {
  return fbx_host_take_status(ps, FBX_ERR_PLUGIN,
                              "fuser '%s' declined to run %s, but only FBXP_SELF_FALLBACK plugins may decline "
                              "(its guards are outside: the kernel must run what it was compiled for)",
                              f->name, k->desc);
}

fbx_status *fbx_fkernel_run(fbx_fkernel *k, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs, int nout,
                            bool *declined) {
  if (declined) *declined = false;
  if (!k || (nin > 0 && !inputs) || (nout > 0 && !outputs))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fkernel_run: NULL argument");
  for (int i = 0; i < nout; i++) outputs[i] = fbx_iv_none();
  if (nin != k->nin || nout != k->nout)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fkernel_run: %s takes %d inputs and %d outputs, got %d and %d",
                          k->desc, k->nin, k->nout, nin, nout);
  fbx_fuser *f = k->fuser;
  fbx_status *st = NULL;
  /* One allocation for the argument arrays. */
  size_t nbytes = (size_t)nin * (sizeof(fbxp_arg) + sizeof(DLTensor)) +
                  (size_t)nout * (sizeof(DLTensor) + sizeof(DLTensor *) + sizeof(fbx_tensor *) + sizeof(fbxp_arg_spec));
  char *mem = fbx_calloc(1, nbytes ? nbytes : 1);
  if (!mem) return fbx_status_nomem();
  DLTensor *in_dl = (DLTensor *)mem;
  DLTensor *out_dl = in_dl + nin;
  fbxp_arg_spec *dyn = (fbxp_arg_spec *)(out_dl + nout);
  fbxp_arg *args = (fbxp_arg *)(dyn + nout);
  DLTensor **out_ptrs = (DLTensor **)(args + nin);
  fbx_tensor **outs = (fbx_tensor **)(out_ptrs + nout);

  int64_t bound[FBX_SYMTAB_MAX];
  st = bind_inputs(k, inputs, args, in_dl, bound);
  const fbxp_arg_spec *specs = k->out_specs;
  if (!st && k->nsyms && !k->dynamic_outputs) {
    /* outputs in terms of the inputs' symbols: this run's sizes */
    for (int i = 0; i < nout; i++) {
      dyn[i] = k->out_specs[i];
      for (int d = 0; d < dyn[i].ndim && d < FBXP_MAX_DIMS; d++)
        if (FBXP_IS_SYMBOL(dyn[i].sizes[d])) dyn[i].sizes[d] = bound[FBXP_SYMBOL_ID(dyn[i].sizes[d])];
    }
    specs = dyn;
  }
  if (!st && k->dynamic_outputs) {
    for (int i = 0; i < nout; i++) dyn[i].struct_size = FBXP_ARG_SPEC_SIZE_V1_0;
    fbx_fuser *prev = fbx_host_set_current(f);
    fbx_host_set_stage("output_specs", k->desc);
    fbxp_status *ps = f->api->output_specs(f->state, k->pk, args, nin, dyn, nout);
    fbx_host_set_current(prev);
    if (ps && ps->code == FBXP_DECLINE && !(f->flags & FBXP_SELF_FALLBACK)) {
      st = guarded_decline(f, k, ps);
      ps = NULL;
    } else if (ps && ps->code == FBXP_DECLINE) {
      fbx_host_drop_status(ps);
      atomic_fetch_add(&f->declines, 1);
      if (declined) *declined = true;
      else st = fbx_status_new(FBX_ERR_UNSUPPORTED, "fuser '%s' declined to run %s", f->name, k->desc);
      fbx_free(mem);
      return st;
    }
    if (ps) st = fbx_host_take_status(ps, FBX_ERR_PLUGIN, "fuser '%s' failed to give output specs for %s", f->name, k->desc);
    if (!st) st = check_out_specs(k, dyn, 0);
    for (int i = 0; i < nout && !st && k->out_dtypes; i++)
      if (dyn[i].kind == FBXP_ARG_TENSOR && k->out_dtypes[i] >= 0 && dyn[i].dtype != k->out_dtypes[i]) {
        fbx_strbuf b = {0};
        spec_print(&b, &dyn[i]);
        st = fbx_status_new(FBX_ERR_PLUGIN, "fuser '%s' promised a wrong dtype for output %d of %s: spec %s, but the profiled type is %s",
                            f->name, i, k->desc, b.data ? b.data : "?", fbx_dtype_name((fbx_dtype)k->out_dtypes[i]));
        fbx_strbuf_free(&b);
      }
    if (st) atomic_fetch_add(&f->run_failures, 1);
    specs = dyn;
  }
  for (int i = 0; i < nout && !st; i++) {
    st = alloc_output(&outs[i], &specs[i]);
    if (!st) st = fbx_tensor_to_dltensor(&out_dl[i], outs[i]);
    out_ptrs[i] = &out_dl[i];
  }
  if (!st) {
    bool serial = !(f->flags & FBXP_RUN_THREAD_SAFE);
    if (serial) pthread_mutex_lock(&f->run_lock);
    fbx_fuser *prev = fbx_host_set_current(f);
    fbx_host_set_stage("run", k->desc);
    fbxp_status *ps = f->api->run(f->state, k->pk, args, nin, (DLTensor *const *)out_ptrs, nout);
    fbx_host_set_current(prev);
    if (serial) pthread_mutex_unlock(&f->run_lock);
    atomic_fetch_add(&f->runs, 1);
    if (!ps) {
      atomic_fetch_add(&f->kernel_launches, k->nkernels);
      for (int i = 0; i < nout; i++) {
        if (specs[i].kind == FBXP_ARG_INT) outputs[i] = fbx_iv_int(*(const int64_t *)outs[i]->data);
        else if (specs[i].kind == FBXP_ARG_FLOAT) outputs[i] = fbx_iv_float(*(const double *)outs[i]->data);
        else {
          outputs[i] = fbx_iv_tensor(outs[i]);
          outs[i] = NULL;
        }
      }
    } else if (ps->code == FBXP_DECLINE && !(f->flags & FBXP_SELF_FALLBACK)) {
      atomic_fetch_add(&f->run_failures, 1);
      st = guarded_decline(f, k, ps);
    } else if (ps->code == FBXP_DECLINE) {
      fbx_host_drop_status(ps);
      atomic_fetch_add(&f->declines, 1);
      if (declined) *declined = true;
      else st = fbx_status_new(FBX_ERR_UNSUPPORTED, "fuser '%s' declined to run %s", f->name, k->desc);
    } else {
      atomic_fetch_add(&f->run_failures, 1);
      st = fbx_host_take_status(ps, FBX_ERR_PLUGIN, "fuser '%s' failed to run %s", f->name, k->desc);
    }
  }
  for (int i = 0; i < nout; i++) fbx_tensor_release(outs[i]);
  fbx_free(mem);
  return st;
}

void fbx_fuser_get_stats(const fbx_fuser *f, fbx_fuser_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!f) return;
  fbx_fuser *m = (fbx_fuser *)f; /* atomics are read-only here */
  out->compiles = atomic_load(&m->compiles);
  out->compile_failures = atomic_load(&m->compile_failures);
  out->compile_unsupported = atomic_load(&m->compile_unsupported);
  out->memory_cache_hits = atomic_load(&m->memory_cache_hits);
  out->disk_cache_hits = atomic_load(&m->disk_cache_hits);
  out->runs = atomic_load(&m->runs);
  out->run_failures = atomic_load(&m->run_failures);
  out->declines = atomic_load(&m->declines);
  out->kernel_launches = atomic_load(&m->kernel_launches);
  out->compile_seconds = (double)atomic_load(&m->compile_ns) * 1e-9;
  out->cached_kernels = atomic_load(&m->cached);
  out->cache_evictions = atomic_load(&m->evictions);
}
