/* Functions: a graph that is profiled, then optimized for what was seen
 * (see executor.h). The whole graph is the first function; each group's
 * fallback is another, one level deeper. */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "exec/execimpl.h"
#include "ir/text.h"
#include "passes/passes.h"

fbx_status *fbx_xfn_new(fbx_xfn **out, fbx_executor *ex, int depth, const fbx_graph *graph, fbx_interp *interp,
                        const char *origin) {
  fbx_xfn *fn = fbx_calloc(1, sizeof *fn);
  if (!fn) return fbx_status_nomem();
  fn->ex = ex;
  fn->depth = depth;
  fn->index = ex->nfns;
  fn->graph = graph;
  fn->interp = interp;
  fn->kind = ex->fuser ? fbx_strategy_kind_at(&ex->strategy, depth) : FBX_SPEC_NONE;
  fn->origin = fbx_strdup(origin);
  atomic_init(&fn->state, FBX_FN_PROFILING);
  fbx_status *st = fn->origin ? fbx_profile_init(&fn->profile, (int)graph->next_value_id) : fbx_status_nomem();
  if (st) {
    fbx_free(fn->origin);
    fbx_free(fn);
    return st;
  }
  fn->next = ex->fns;
  ex->fns = fn;
  ex->nfns++;
  /* Nothing to learn from profiling: no fuser, no budget, or no profiling runs asked for. */
  if (fn->kind == FBX_SPEC_NONE || ex->profiling_runs == 0) fbx_xfn_optimize_locked(fn);
  *out = fn;
  return NULL;
}

void fbx_xfn_free(fbx_xfn *fn) {
  if (!fn) return;
  for (fbx_xgroup *g = fn->groups, *next; g; g = next) {
    next = g->next;
    fbx_xgroup_free(g);
  }
  for (size_t i = 0; i < fn->rejected.cap; i++)
    if (fn->rejected.keys[i]) fbx_free(fn->rejected.vals[i]);
  fbx_ptrmap_free(&fn->rejected);
  fbx_free(fn->by_node);
  fbx_interp_destroy(fn->opt_interp);
  fbx_graph_destroy(fn->opt);
  fbx_profile_free(&fn->profile);
  fbx_free(fn->origin);
  fbx_free(fn);
}

/* Keep the host's first reason for each node of a dropped proposal (for
 * `explain`; diagnostics only, so running out of memory just loses it). */
static void note_rejected(void *ctx, const fbx_node *node, const char *why) {
  fbx_xfn *fn = ctx;
  if (fbx_ptrmap_has(&fn->rejected, node)) return;
  char *copy = fbx_strdup(why);
  if (copy && fbx_ptrmap_put(&fn->rejected, node, copy)) fbx_free(copy);
}

/* ---- walking graphs ------------------------------------------------------------------ */

/* The clone has the same structure as the original: pair their values up. */
static void map_block(uint32_t *orig_of, const fbx_block *a, const fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(a) && i < fbx_block_nparams(b); i++)
    orig_of[fbx_block_param(b, i)->id] = fbx_block_param(a, i)->id;
  const fbx_node *na = fbx_block_first(a), *nb = fbx_block_first(b);
  for (; na && nb; na = na->next, nb = nb->next) {
    for (int i = 0; i < na->noutputs && i < nb->noutputs; i++) orig_of[nb->outputs[i]->id] = na->outputs[i]->id;
    for (int k = 0; k < na->nblocks && k < nb->nblocks; k++) map_block(orig_of, na->blocks[k], nb->blocks[k]);
  }
}

typedef void (*value_fn)(void *ctx, fbx_value *v);

static void each_value(fbx_block *b, value_fn f, void *ctx) {
  for (int i = 0; i < fbx_block_nparams(b); i++) f(ctx, fbx_block_param(b, i));
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int i = 0; i < n->noutputs; i++) f(ctx, n->outputs[i]);
    for (int k = 0; k < n->nblocks; k++) each_value(n->blocks[k], f, ctx);
  }
}

typedef struct refine_ctx {
  fbx_xfn *fn;
  fbx_graph *opt;
  uint32_t *orig_of;  /* by opt value id (ids below map_n) */
  uint32_t map_n;
  fbx_type **saved;   /* by opt value id: the declared type, when refined */
  bool dynamic;
  bool restore;
} refine_ctx;

static const fbx_obs *obs_of(const refine_ctx *c, const fbx_value *v) {
  if (v->id >= c->map_n || c->orig_of[v->id] == UINT32_MAX) return NULL;
  uint32_t o = c->orig_of[v->id];
  return o < (uint32_t)c->fn->profile.n ? &c->fn->profile.obs[o] : NULL;
}

static void refine_value(void *vctx, fbx_value *v) {
  refine_ctx *c = vctx;
  if (v->id >= c->map_n) return;
  if (c->restore) {
    if (c->saved[v->id]) fbx_value_set_type(v, c->saved[v->id]);
    return;
  }
  const fbx_obs *o = obs_of(c, v);
  if (!o) return;
  fbx_obs g = *o;
  if (c->dynamic) fbx_obs_generalize(&g);
  fbx_type *t = fbx_obs_type(c->opt->arena, &g, v->type);
  if (!t) return;
  c->saved[v->id] = v->type;
  fbx_value_set_type(v, t);
}

static void erase_value(void *ctx, fbx_value *v) {
  (void)ctx;
  if (v->type && v->type->kind == FBX_TYPE_TENSOR) fbx_value_set_type(v, fbx_type_tensor_any());
}

/* ---- optimizing -------------------------------------------------------------------------- */

static fbx_status *add_groups(fbx_xfn *fn, refine_ctx *c, fbx_block *b) {
  fbx_executor *ex = fn->ex;
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) FBX_TRY(add_groups(fn, c, n->blocks[k]));
    if (n->kind != FBX_SYM_fusebox_FusionGroup || !fbx_node_subgraph(n)) continue;
    /* The group's outputs were typed from the observed types; outside the
     * group nothing is guarded, so they go back to plain tensors. */
    for (int i = 0; i < n->noutputs; i++) erase_value(NULL, n->outputs[i]);
    fbx_obs *guard = NULL;
    if (ex->host_guards) {
      guard = fbx_calloc(n->ninputs > 0 ? (size_t)n->ninputs : 1, sizeof *guard);
      if (!guard) return fbx_status_nomem();
      for (int i = 0; i < n->ninputs; i++) {
        const fbx_obs *o = obs_of(c, n->inputs[i]);
        guard[i].dtype = FBX_DTYPE_UNDEFINED;
        guard[i].ndim = -1;
        if (!o) continue;
        guard[i] = *o;
        if (c->dynamic) fbx_obs_generalize(&guard[i]);
      }
    }
    fbx_xgroup *g = NULL;
    fbx_status *st = fbx_xgroup_new(&g, fn, n, guard);
    fbx_free(guard);
    if (st) return st;
    g->next = fn->groups;
    fn->groups = g;
    fn->ngroups++;
    if (n->id < fn->nby_node) fn->by_node[n->id] = g;
  }
  return NULL;
}

static fbx_status *optimize(fbx_xfn *fn) {
  fbx_executor *ex = fn->ex;
  fbx_graph *opt = fbx_graph_clone(fn->graph);
  if (!opt) return fbx_status_nomem();
  fn->opt = opt;
  refine_ctx c = {.fn = fn, .opt = opt, .dynamic = fn->kind == FBX_SPEC_DYNAMIC};
  c.map_n = opt->next_value_id;
  c.orig_of = fbx_malloc(sizeof *c.orig_of * (c.map_n ? c.map_n : 1));
  c.saved = fbx_calloc(c.map_n ? c.map_n : 1, sizeof *c.saved);
  fbx_status *st = NULL;
  if (!c.orig_of || !c.saved) {
    st = fbx_status_nomem();
    goto done;
  }
  memset(c.orig_of, 0xff, sizeof *c.orig_of * (c.map_n ? c.map_n : 1));
  map_block(c.orig_of, fn->graph->block, opt->block);

  /* Passes first, on the declared types: a size folded into a constant would
   * be wrong for the next inputs, and nothing outside a group is guarded. */
  if ((st = fbx_pass_pipeline(opt, "default"))) goto done;
  if (fn->kind != FBX_SPEC_NONE) {
    each_value(opt->block, refine_value, &c);
    fbx_partition_report rep = {.on_reject = note_rejected, .on_reject_ctx = fn};
    st = fbx_fuser_partition(ex->fuser, opt, &rep);
    c.restore = true;
    each_value(opt->block, refine_value, &c);
    if (st) goto done;
  }
  fn->nby_node = opt->next_node_id;
  fn->by_node = fbx_calloc(fn->nby_node ? fn->nby_node : 1, sizeof *fn->by_node);
  if (!fn->by_node) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = add_groups(fn, &c, opt->block))) goto done;
  st = fbx_interp_create(&fn->opt_interp, opt);
done:
  fbx_free(c.orig_of);
  fbx_free(c.saved);
  return st;
}

static void drop_optimized(fbx_xfn *fn) {
  for (fbx_xgroup *g = fn->groups, *next; g; g = next) {
    next = g->next;
    fbx_xgroup_free(g);
  }
  fn->groups = NULL;
  fn->ngroups = 0;
  fbx_free(fn->by_node);
  fn->by_node = NULL;
  fn->nby_node = 0;
  fbx_interp_destroy(fn->opt_interp);
  fn->opt_interp = NULL;
  fbx_graph_destroy(fn->opt);
  fn->opt = NULL;
}

void fbx_xfn_optimize_locked(fbx_xfn *fn) {
  fbx_executor *ex = fn->ex;
  fbx_status *st = optimize(fn);
  if (st) {
    drop_optimized(fn);
    atomic_fetch_add(&ex->optimize_failures, 1);
    fbx_executor_event(ex, "optimizing %s failed (it runs unfused): %s", fn->origin, fbx_status_message(st));
    fprintf(stderr, "[fusebox:exec] warning: optimizing %s failed, it runs unfused: %s\n", fn->origin,
            fbx_status_message(st));
    fbx_status_free(st);
    atomic_store_explicit(&fn->state, FBX_FN_UNFUSED, memory_order_release);
    return;
  }
  atomic_fetch_add(&ex->groups, fn->ngroups);
  if (fn->kind != FBX_SPEC_NONE) {
    atomic_fetch_add(fn->kind == FBX_SPEC_STATIC ? &ex->specs_static : &ex->specs_dynamic, 1);
    fbx_executor_event(ex, "specialization %d (%s, level %d) of %s: %d group%s, after %d profiling run%s",
                       fn->index + 1, fbx_spec_kind_name(fn->kind), fn->depth, fn->origin, fn->ngroups,
                       fn->ngroups == 1 ? "" : "s", fn->profiled, fn->profiled == 1 ? "" : "s");
  }
  fbx_profile_free(&fn->profile);
  atomic_store_explicit(&fn->state, FBX_FN_OPTIMIZED, memory_order_release);
}

/* ---- running ------------------------------------------------------------------------------ */

static fbx_status *profile_run(fbx_xfn *fn, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs, uint64_t seed) {
  fbx_executor *ex = fn->ex;
  fbx_profile local;
  FBX_TRY(fbx_profile_init(&local, (int)fn->graph->next_value_id));
  for (int i = 0; i < nin && i < fbx_graph_ninputs(fn->graph); i++) {
    uint32_t id = fbx_graph_input(fn->graph, i)->id;
    if (id < (uint32_t)local.n) fbx_obs_record(&local.obs[id], &inputs[i]);
  }
  fbx_interp_stats is = {0};
  fbx_run_opts o = {.seed = seed, .observe = fbx_profile_observe, .observe_ctx = &local, .stats = &is};
  fbx_status *st = fbx_interp_run(fn->interp, inputs, nin, outputs, &o);
  atomic_fetch_add(&ex->interp_ops, is.kernels_run);
  if (st) {
    fbx_profile_free(&local);
    return st;
  }
  pthread_mutex_lock(&ex->lock);
  if (atomic_load_explicit(&fn->state, memory_order_relaxed) == FBX_FN_PROFILING) {
    fbx_profile_merge(&fn->profile, &local);
    fn->profiled++;
    atomic_fetch_add(&ex->profiling_runs_done, 1);
    fbx_log(FBX_LOG_EXEC, "profiling run %d of %s", fn->profiled, fn->origin);
    if (fn->profiled >= ex->profiling_runs) fbx_xfn_optimize_locked(fn);
  }
  pthread_mutex_unlock(&ex->lock);
  fbx_profile_free(&local);
  return NULL;
}

fbx_status *fbx_xfn_run(fbx_xfn *fn, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs, uint64_t seed) {
  switch (atomic_load_explicit(&fn->state, memory_order_acquire)) {
    case FBX_FN_OPTIMIZED: {
      fbx_interp_stats is = {0};
      fbx_run_opts o = {.seed = seed, .run_group = fbx_xgroup_run, .run_group_ctx = fn, .stats = &is};
      fbx_status *st = fbx_interp_run(fn->opt_interp, inputs, nin, outputs, &o);
      atomic_fetch_add(&fn->ex->interp_ops, is.kernels_run);
      return st;
    }
    case FBX_FN_UNFUSED: {
      fbx_interp_stats is = {0};
      fbx_run_opts o = {.seed = seed, .stats = &is};
      fbx_status *st = fbx_interp_run(fn->interp, inputs, nin, outputs, &o);
      atomic_fetch_add(&fn->ex->interp_ops, is.kernels_run);
      return st;
    }
    default: return profile_run(fn, inputs, nin, outputs, seed);
  }
}

/* Make a group's fallback graph: its subgraph with tensor types forgotten, so
 * that the inputs a guard rejected still pass the interpreter's checks. */
fbx_graph *fbx_xfn_erased_clone(const fbx_graph *sub);
fbx_graph *fbx_xfn_erased_clone(const fbx_graph *sub) {
  fbx_graph *g = fbx_graph_clone(sub);
  if (g) each_value(g->block, erase_value, NULL);
  return g;
}
