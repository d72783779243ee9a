/* Running a fusion group: guard, kernel, fallbacks (see executor.h).
 *
 * Kernels are kept per group in a few slots keyed by the exact specs of the
 * inputs, published with a compare-and-swap and never removed until the
 * executor dies, so a warm run reads them without a lock. A slot whose
 * kernel is NULL records a failed compile for those specs: the group then
 * runs interpreted without asking the plugin again. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/log.h"
#include "exec/execimpl.h"
#include "host/host.h"
#include "ir/text.h"

fbx_graph *fbx_xfn_erased_clone(const fbx_graph *sub); /* function.c */

/* "group %c (aten::relu, aten::mul, aten::add)" */
static char *describe(const fbx_node *n, const fbx_graph *sub) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "group");
  if (n->noutputs) fbx_strbuf_printf(&b, " %%%s", n->outputs[0]->name);
  fbx_strbuf_puts(&b, " (");
  int k = 0;
  for (const fbx_node *m = fbx_block_first(sub->block); m; m = m->next) {
    if (m->kind == FBX_SYM_prim_Constant) continue;
    if (k == 6) {
      fbx_strbuf_puts(&b, ", ...");
      break;
    }
    fbx_strbuf_printf(&b, "%s%s", k++ ? ", " : "", fbx_sym_str(m->kind));
  }
  fbx_strbuf_putc(&b, ')');
  return fbx_strbuf_take(&b);
}

fbx_status *fbx_xgroup_new(fbx_xgroup **out, fbx_xfn *fn, const fbx_node *node, const fbx_obs *guard) {
  const fbx_graph *sub = fbx_node_subgraph(node);
  fbx_xgroup *g = fbx_calloc(1, sizeof *g);
  if (!g) return fbx_status_nomem();
  g->fn = fn;
  g->node = node;
  g->nin = node->ninputs;
  g->nout = node->noutputs;
  g->desc = describe(node, sub);
  g->fallback_graph = fbx_xfn_erased_clone(sub);
  if (guard) {
    g->guard = fbx_malloc(sizeof *g->guard * (size_t)(g->nin > 0 ? g->nin : 1));
    if (g->guard) memcpy(g->guard, guard, sizeof *g->guard * (size_t)g->nin);
  }
  fbx_status *st = NULL;
  if (!g->desc || !g->fallback_graph || (guard && !g->guard)) st = fbx_status_nomem();
  if (!st) st = fbx_interp_create(&g->unfused, g->fallback_graph);
  if (st) {
    fbx_xgroup_free(g);
    return st;
  }
  atomic_init(&g->fallback, NULL);
  atomic_init(&g->no_fallback, false);
  atomic_init(&g->warned_compile, false);
  atomic_init(&g->warned_run, false);
  for (int i = 0; i < FBX_GROUP_KERNEL_SLOTS; i++) atomic_init(&g->kernels[i], NULL);
  *out = g;
  return NULL;
}

void fbx_xgroup_free(fbx_xgroup *g) {
  if (!g) return;
  /* The fallback function is on the executor's list and freed from there. */
  for (int i = 0; i < FBX_GROUP_KERNEL_SLOTS; i++) {
    fbx_kentry *e = atomic_load(&g->kernels[i]);
    if (!e) continue;
    fbx_fkernel_release(e->kernel);
    fbx_free(e->specs);
    fbx_free(e);
  }
  fbx_interp_destroy(g->unfused);
  fbx_graph_destroy(g->fallback_graph);
  fbx_free(g->guard);
  fbx_free(g->desc);
  fbx_free(g);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static void spec_of(fbx_kspec *s, const fbx_ivalue *v) {
  memset(s, 0, sizeof *s);
  s->kind = (int32_t)v->kind;
  if (v->kind != FBX_IV_TENSOR || !v->u.t) return;
  const fbx_tensor *t = v->u.t;
  s->dtype = (int32_t)t->dtype;
  s->ndim = t->ndim;
  for (int d = 0; d < t->ndim; d++) {
    s->sizes[d] = t->sizes[d];
    s->strides[d] = t->strides[d];
  }
}

static fbx_kentry *find_kernel(fbx_xgroup *g, const fbx_kspec *specs, int *free_slot) {
  *free_slot = -1;
  for (int i = 0; i < FBX_GROUP_KERNEL_SLOTS; i++) {
    fbx_kentry *e = atomic_load_explicit(&g->kernels[i], memory_order_acquire);
    if (!e) {
      *free_slot = i;
      return NULL;
    }
    if (e->nin == g->nin && !memcmp(e->specs, specs, sizeof *specs * (size_t)g->nin)) return e;
  }
  return NULL;
}

/* At a dynamic level, a plugin that takes symbolic sizes gets them (and the
 * kernel slots are keyed by the same symbolic specs, so one kernel serves
 * every shape of a pattern). */
static bool symbolic_level(const fbx_xgroup *g) {
  const fbx_executor *ex = g->fn->ex;
  return g->fn->kind == FBX_SPEC_DYNAMIC && fbx_fuser_accepts_symbolic(ex->fuser) &&
         !(fbx_fuser_flags(ex->fuser) & FBXP_SELF_FALLBACK);
}

/* The host's symbolization (kernel.c) of the same inputs, on the slot keys:
 * contiguous tensors' sizes other than 1 become symbols, strides dropped. */
static void symbolize_keys(fbx_kspec *specs, int n) {
  fbx_symtab t = {0};
  for (int i = 0; i < n; i++) {
    fbx_kspec *s = &specs[i];
    if (s->kind != FBX_IV_TENSOR) continue;
    int64_t expect = 1;
    bool contiguous = true;
    for (int d = s->ndim - 1; d >= 0; d--) {
      if (s->sizes[d] != 1 && s->strides[d] != expect) contiguous = false;
      expect *= s->sizes[d];
    }
    if (!contiguous) continue;
    if (!fbx_symtab_apply(&t, s->sizes, s->ndim)) break;
    memset(s->strides, 0, sizeof s->strides);
  }
}

static fbx_status *compile(fbx_xgroup *g, const fbx_ivalue *inputs, fbx_fkernel **out) {
  fbx_executor *ex = g->fn->ex;
  fbx_fuser_stats before, after;
  fbx_fuser_get_stats(ex->fuser, &before);
  fbx_status *st = fbx_fuser_compile_sym(ex->fuser, g->node, inputs, g->nin, symbolic_level(g), out);
  fbx_fuser_get_stats(ex->fuser, &after);
  /* Deltas of the fuser's counters: exact unless another executor shares
   * the fuser and compiles at the same moment. */
  atomic_fetch_add(&ex->mem_hits, after.memory_cache_hits - before.memory_cache_hits);
  atomic_fetch_add(&ex->disk_hits, after.disk_cache_hits - before.disk_cache_hits);
  atomic_fetch_add(&ex->compile_ns, (long long)((after.compile_seconds - before.compile_seconds) * 1e9));
  if (st && after.compile_unsupported > before.compile_unsupported) atomic_fetch_add(&ex->compile_unsupported, 1);
  else if (st) atomic_fetch_add(&ex->compile_failures, 1);
  else if (after.compiles > before.compiles) atomic_fetch_add(&ex->kernels_compiled, 1);
  return st;
}

/* The kernel entry for these inputs, compiling on a miss. *tmp is set (and
 * NULL returned) when every slot is taken: the caller runs and releases it. */
static fbx_status *get_kernel(fbx_xgroup *g, const fbx_ivalue *inputs, const fbx_kentry **entry,
                              fbx_fkernel **tmp) {
  fbx_executor *ex = g->fn->ex;
  *entry = NULL;
  *tmp = NULL;
  fbx_kspec local[8] = {{0}};
  fbx_kspec *specs = g->nin <= 8 ? local : fbx_malloc(sizeof *specs * (size_t)g->nin);
  if (!specs) return fbx_status_nomem();
  for (int i = 0; i < g->nin; i++) spec_of(&specs[i], &inputs[i]);
  if (symbolic_level(g)) symbolize_keys(specs, g->nin);
  int slot;
  fbx_kentry *e = find_kernel(g, specs, &slot);
  fbx_status *st = NULL;
  if (!e) {
    pthread_mutex_lock(&ex->lock);
    e = find_kernel(g, specs, &slot); /* another thread may have compiled it meanwhile */
    if (!e) {
      fbx_fkernel *k = NULL;
      fbx_status *cst = compile(g, inputs, &k);
      if (cst && fbx_status_code(cst) == FBX_ERR_NOMEM) {
        st = cst;
      } else {
        if (cst && fbx_status_code(cst) == FBX_ERR_UNSUPPORTED) {
          /* The plugin's (or the host's) normal "not this group": no warning. */
          fbx_executor_event(ex, "%s: not supported by the fuser, it runs in the interpreter: %s", g->desc,
                             fbx_status_message(cst));
          fbx_log(FBX_LOG_FUSION, "%s runs in the interpreter: %s", g->desc, fbx_status_message(cst));
          fbx_status_free(cst);
        } else if (cst) {
          bool first = !atomic_exchange(&g->warned_compile, true);
          fbx_executor_event(ex, "%s: compile failed, it runs in the interpreter: %s", g->desc,
                             fbx_status_message(cst));
          if (first)
            fprintf(stderr, "[fusebox:exec] warning: %s runs in the interpreter: %s\n", g->desc,
                    fbx_status_message(cst));
          fbx_status_free(cst);
        }
        if (slot < 0) {
          *tmp = k; /* NULL after a failed compile: run interpreted */
        } else {
          e = fbx_calloc(1, sizeof *e);
          if (e) e->specs = fbx_malloc(sizeof *specs * (size_t)(g->nin > 0 ? g->nin : 1));
          if (!e || !e->specs) {
            if (e) fbx_free(e);
            e = NULL;
            fbx_fkernel_release(k);
            st = fbx_status_nomem();
          } else {
            memcpy(e->specs, specs, sizeof *specs * (size_t)g->nin);
            e->nin = g->nin;
            e->kernel = k;
            atomic_store_explicit(&g->kernels[slot], e, memory_order_release);
          }
        }
      }
    }
    pthread_mutex_unlock(&ex->lock);
  }
  if (specs != local) fbx_free(specs);
  *entry = e;
  return st;
}

/* ---- fallbacks ------------------------------------------------------------------------------- */

static fbx_status *run_unfused(fbx_xgroup *g, const fbx_ivalue *inputs, fbx_ivalue *outputs) {
  fbx_interp_stats is = {0};
  fbx_run_opts o = {.stats = &is};
  fbx_status *st = fbx_interp_run(g->unfused, inputs, g->nin, outputs, &o);
  atomic_fetch_add(&g->fn->ex->interp_ops, is.kernels_run);
  return st;
}

/* The next level for this group, created on its first guard failure; NULL
 * when the budget is spent. */
static fbx_status *get_fallback(fbx_xgroup *g, const char *why, fbx_xfn **out) {
  *out = atomic_load_explicit(&g->fallback, memory_order_acquire);
  if (*out || atomic_load_explicit(&g->no_fallback, memory_order_acquire)) return NULL;
  fbx_executor *ex = g->fn->ex;
  fbx_status *st = NULL;
  pthread_mutex_lock(&ex->lock);
  *out = atomic_load_explicit(&g->fallback, memory_order_acquire);
  if (!*out && !atomic_load(&g->no_fallback)) {
    int depth = g->fn->depth + 1;
    if (fbx_strategy_kind_at(&ex->strategy, depth) == FBX_SPEC_NONE || ex->nfns >= FBX_EXECUTOR_MAX_FUNCTIONS) {
      fbx_executor_event(ex, "%s at level %d: specialization budget spent (%s), it runs unfused on guard failure",
                         g->desc, g->fn->depth,
                         ex->nfns >= FBX_EXECUTOR_MAX_FUNCTIONS ? "function limit" : "strategy");
      atomic_store_explicit(&g->no_fallback, true, memory_order_release);
    } else {
      char origin[512];
      snprintf(origin, sizeof origin, "the fallback of %s at level %d", g->desc, g->fn->depth);
      fbx_xfn *fn = NULL;
      st = fbx_xfn_new(&fn, ex, depth, g->fallback_graph, g->unfused, origin);
      if (!st) {
        fbx_executor_event(ex, "respecializing %s (level %d, %s) after guard failure: %s", g->desc, depth,
                           fbx_spec_kind_name(fn->kind), why);
        atomic_store_explicit(&g->fallback, fn, memory_order_release);
        *out = fn;
      }
    }
  }
  pthread_mutex_unlock(&ex->lock);
  return st;
}

/* ---- the runner ------------------------------------------------------------------------------- */

fbx_status *fbx_xgroup_run(void *ctx, const fbx_node *node, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs,
                           int nout) {
  fbx_xfn *fn = ctx;
  fbx_executor *ex = fn->ex;
  fbx_xgroup *g = node->id < fn->nby_node ? fn->by_node[node->id] : NULL;
  if (!g || nin != g->nin || nout != g->nout)
    return fbx_status_new(FBX_ERR_INTERNAL, "fusion group node without its runtime in the executor");

  if (g->guard) {
    fbx_strbuf why = {0};
    if (!fbx_guard_check(g->guard, nin, inputs, &why)) {
      atomic_fetch_add(&ex->guard_failures, 1);
      const char *reason = why.data ? why.data : "?";
      fbx_executor_event(ex, "guard failed for %s at level %d: %s", g->desc, fn->depth, reason);
      fbx_log(FBX_LOG_EXEC, "guard failed for %s at level %d: %s", g->desc, fn->depth, reason);
      fbx_xfn *fb = NULL;
      fbx_status *st = get_fallback(g, reason, &fb);
      fbx_strbuf_free(&why);
      if (st) return st;
      if (fb) return fbx_xfn_run(fb, inputs, nin, outputs, 0);
      atomic_fetch_add(&ex->fb_unfused, 1);
      return run_unfused(g, inputs, outputs);
    }
    fbx_strbuf_free(&why);
  }

  const fbx_kentry *e;
  fbx_fkernel *tmp;
  FBX_TRY(get_kernel(g, inputs, &e, &tmp));
  fbx_fkernel *k = e ? e->kernel : tmp;
  if (!k) {
    atomic_fetch_add(&ex->fb_compile, 1);
    return run_unfused(g, inputs, outputs);
  }
  bool declined = false;
  fbx_status *st = fbx_fkernel_run(k, inputs, nin, outputs, nout, &declined);
  int launches = fbx_fkernel_launches(k);
  fbx_fkernel_release(tmp);
  if (st) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outputs[i]);
    if (fbx_status_code(st) == FBX_ERR_NOMEM) return st;
    atomic_fetch_add(&ex->fb_run, 1);
    fbx_executor_event(ex, "%s: kernel failed, ran in the interpreter: %s", g->desc, fbx_status_message(st));
    if (!atomic_exchange(&g->warned_run, true))
      fprintf(stderr, "[fusebox:exec] warning: %s ran in the interpreter: %s\n", g->desc, fbx_status_message(st));
    fbx_status_free(st);
    return run_unfused(g, inputs, outputs);
  }
  if (declined) {
    atomic_fetch_add(&ex->fb_declined, 1);
    return run_unfused(g, inputs, outputs);
  }
  atomic_fetch_add(&ex->kernel_runs, 1);
  atomic_fetch_add(&ex->kernel_launches, launches);
  return NULL;
}
