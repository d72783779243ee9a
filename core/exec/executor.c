/* The profiling executor: options, the top-level function, counters, the
 * event log, explain (see executor.h for the design). */
#include "exec/executor.h"
#include "exec/fold.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/env.h"
#include "base/log.h"
#include "exec/execimpl.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "passes/passes.h"

#define DEFAULT_STRATEGY "static:2,dynamic:10"

/* The options struct as far as the caller's struct_size covers it. */
static fbx_executor_opts read_opts(const fbx_executor_opts *o) {
  fbx_executor_opts r;
  memset(&r, 0, sizeof r);
  if (!o) return r;
  size_t n = o->struct_size < sizeof r ? o->struct_size : sizeof r;
  memcpy(&r, o, n);
  return r;
}

static fbx_status *profiling_runs_of(int given, int *out) {
  if (given < 0) return fbx_status_new(FBX_ERR_INVALID_ARG, "profiling_runs: expected a count >= 0, got %d", given);
  if (given > 0) {
    *out = given;
    return NULL;
  }
  int64_t v = 1;
  FBX_TRY(fbx_env_int("FUSEBOX_PROFILING_RUNS", 0, 1000000, 1, &v));
  *out = (int)v;
  return NULL;
}

fbx_status *fbx_env_check_all(void) {
  int64_t v;
  int runs = 1;
  FBX_TRY(profiling_runs_of(0, &runs));
  const char *strategy = getenv("FUSEBOX_FUSION_STRATEGY");
  if (strategy && *strategy) {
    fbx_strategy s;
    FBX_TRY(fbx_strategy_parse(&s, strategy, "FUSEBOX_FUSION_STRATEGY"));
  }
  FBX_TRY(fbx_env_int("FUSEBOX_NUM_THREADS", 1, FBX_ENV_MAX_THREADS, 0, &v));
  FBX_TRY(fbx_env_int("FUSEBOX_PW_GRAIN", 0, FBX_ENV_MAX_GRAIN, 0, &v));
  FBX_TRY(fbx_env_int("FUSEBOX_STORAGE_CACHE_MB", 0, FBX_ENV_MAX_CACHE_MB, 0, &v));
  FBX_TRY(fbx_env_int("FUSEBOX_AUTODIFF_RECOMPUTE", 0, 2, 1, &v));
  bool huge;
  FBX_TRY(fbx_env_bool("FUSEBOX_HUGE_PAGES", true, &huge));
  FBX_TRY(fbx_log_check(getenv("FUSEBOX_LOG")));
  return fbx_pass_check_env();
}

static int flat_count(const fbx_type *t) {
  if (t->kind != FBX_TYPE_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < t->nelems; i++) n += flat_count(t->elems[i]);
  return n;
}

static int flat_count_value(const fbx_ivalue *v) {
  if (v->kind != FBX_IV_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < v->u.l->n; i++) n += flat_count_value(&v->u.l->items[i]);
  return n;
}

fbx_status *fbx_executor_check_outputs(const fbx_executor *ex, fbx_ivalue *outputs, int nout) {
  for (int i = 0; i < nout; i++) {
    const fbx_value *gv = fbx_graph_output(ex->graph, i);
    int want = flat_count(gv->type), got = flat_count_value(&outputs[i]);
    if (want == got) continue;
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "output %d (%%%s) is declared ", i, gv->name);
    fbx_type_print(&b, gv->type);
    fbx_strbuf_printf(&b, " (%d value%s) but the run gave %d", want, want == 1 ? "" : "s", got);
    fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_RUNTIME, "%s", b.data);
    fbx_strbuf_free(&b);
    for (int k = 0; k < nout; k++) fbx_iv_release(&outputs[k]);
    return st;
  }
  return NULL;
}

fbx_status *fbx_executor_create(fbx_executor **out, const fbx_graph *g, const fbx_executor_opts *opts_in) {
  fbx_fold_register(); /* constprop folds through the interpreter */
  if (!out || !g) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_create: NULL %s", out ? "graph" : "out");
  *out = NULL;
  fbx_executor_opts o = read_opts(opts_in);
  if (o.device && strcmp(o.device, "cpu"))
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "device '%s': executors run on the cpu (fusers may use other devices "
                                               "for their kernels)", o.device);
  /* Every FUSEBOX_* variable of core, so that junk is refused here rather
   * than taken as something else deep inside (issue #12). */
  FBX_TRY(fbx_env_check_all());
  fbx_strategy strategy;
  if (o.strategy) {
    FBX_TRY(fbx_strategy_parse(&strategy, o.strategy, "strategy"));
  } else {
    const char *env = getenv("FUSEBOX_FUSION_STRATEGY");
    if (env && *env) FBX_TRY(fbx_strategy_parse(&strategy, env, "FUSEBOX_FUSION_STRATEGY"));
    else FBX_TRY(fbx_strategy_parse(&strategy, DEFAULT_STRATEGY, "default strategy"));
  }
  int nprof = 1;
  FBX_TRY(profiling_runs_of(o.profiling_runs, &nprof));

  int64_t recompute = 1;
  FBX_TRY(fbx_env_int("FUSEBOX_AUTODIFF_RECOMPUTE", 0, 2, 1, &recompute));

  fbx_executor *ex = fbx_calloc(1, sizeof *ex);
  if (!ex) return fbx_status_nomem();
  ex->strategy = strategy;
  ex->ad_recompute = (int)recompute;
  ex->profiling_runs = nprof;
  pthread_mutex_init(&ex->lock, NULL);
  pthread_mutex_init(&ex->ev_lock, NULL);
  pthread_mutex_init(&ex->ad_lock, NULL);
  fbx_status *st = NULL;
  if (o.fuser_handle) {
    ex->fuser = fbx_fuser_retain(o.fuser_handle);
  } else {
    const char *name = o.fuser ? o.fuser : getenv("FUSEBOX_FUSER");
    if (name && *name) st = fbx_fuser_load(&ex->fuser, name);
  }
  if (!st && ex->fuser) ex->host_guards = !(fbx_fuser_flags(ex->fuser) & FBXP_SELF_FALLBACK);
  /* Verified before anything sizes a buffer from its declared types: a
   * `Tensor` output that is really a 3-tuple overflowed forward's outputs. */
  if (!st) st = fbx_graph_verify(g);
  if (!st && !(ex->graph = fbx_graph_clone(g))) st = fbx_status_nomem();
  /* One semantics for dead code, whatever the fuser (issue #12): a node
   * whose outputs nobody uses and that has no side effect never runs. The
   * optimized graph always had it removed by the pipeline's dce, but the
   * profiling runs interpreted the graph as given, so a dead aten::where
   * with a float condition failed under a fuser and passed under `none`.
   * PyTorch's profiling executor does the same: dead code elimination is
   * among the profiling-insensitive passes that run before the profiled
   * graph is instrumented. FUSEBOX_DISABLE_PASSES=dce keeps the node in
   * both graphs, so then it runs (and fails) under every fuser alike. */
  if (!st) st = fbx_pass_dce(ex->graph, NULL);
  fbx_interp *it = NULL;
  if (!st) st = fbx_interp_create(&it, ex->graph);
  if (!st) {
    for (int i = 0; i < fbx_graph_noutputs(ex->graph); i++) ex->nflat_outputs += flat_count(fbx_graph_output(ex->graph, i)->type);
    pthread_mutex_lock(&ex->lock);
    st = fbx_xfn_new(&ex->top, ex, 0, ex->graph, it, "the graph");
    pthread_mutex_unlock(&ex->lock);
    if (st) fbx_interp_destroy(it);
  }
  if (st) {
    fbx_executor_destroy(ex);
    return st;
  }
  if (fbx_log_on(FBX_LOG_EXEC)) {
    fbx_strbuf b = {0};
    fbx_strategy_print(&b, &ex->strategy);
    fbx_log(FBX_LOG_EXEC, "executor: fuser %s, %d profiling run%s, strategy %s", fbx_executor_fuser_name(ex),
            nprof, nprof == 1 ? "" : "s", b.data ? b.data : "?");
    fbx_strbuf_free(&b);
  }
  *out = ex;
  return NULL;
}

void fbx_executor_destroy(fbx_executor *ex) {
  if (!ex) return;
  fbx_executor_grad_free_all(ex);
  for (fbx_xfn *fn = ex->fns, *next; fn; fn = next) {
    next = fn->next;
    if (fn == ex->top) fbx_interp_destroy(fn->interp); /* the others borrow their group's */
    fbx_xfn_free(fn);
  }
  for (int i = 0; i < ex->nevents; i++) fbx_free(ex->events[i].msg);
  fbx_free(ex->events);
  fbx_fuser_release(ex->fuser);
  fbx_graph_destroy(ex->graph);
  pthread_mutex_destroy(&ex->lock);
  pthread_mutex_destroy(&ex->ev_lock);
  pthread_mutex_destroy(&ex->ad_lock);
  fbx_free(ex);
}

fbx_status *fbx_executor_check_inputs(const fbx_executor *ex, const fbx_ivalue *inputs, int nin) {
  return fbx_interp_check_inputs(ex->top->interp, inputs, nin);
}

const fbx_graph *fbx_executor_graph(const fbx_executor *ex) { return ex->graph; }

const char *fbx_executor_fuser_name(const fbx_executor *ex) { return ex->fuser ? fbx_fuser_name(ex->fuser) : "none"; }

int fbx_executor_num_inputs(const fbx_executor *ex) { return ex ? fbx_graph_ninputs(ex->graph) : 0; }

int fbx_executor_num_outputs(const fbx_executor *ex) { return ex ? ex->nflat_outputs : 0; }

fbx_status *fbx_executor_run_values(fbx_executor *ex, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs,
                                    int nout, uint64_t seed) {
  if (!ex || (nin > 0 && !inputs) || !outputs)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_run: NULL argument");
  int want = fbx_graph_noutputs(ex->graph);
  if (nout != want)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "the graph gives %d output%s, room for %d given", want,
                          want == 1 ? "" : "s", nout);
  atomic_fetch_add_explicit(&ex->runs, 1, memory_order_relaxed);
  FBX_TRY(fbx_xfn_run(ex->top, inputs, nin, outputs, seed));
  return fbx_executor_check_outputs(ex, outputs, nout);
}

/* ---- events ------------------------------------------------------------------------------ */

void fbx_executor_event(fbx_executor *ex, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fbx_log(FBX_LOG_EXEC, "%s", msg);
  pthread_mutex_lock(&ex->ev_lock);
  for (int i = 0; i < ex->nevents; i++)
    if (!strcmp(ex->events[i].msg, msg)) {
      ex->events[i].count++;
      pthread_mutex_unlock(&ex->ev_lock);
      return;
    }
  if (ex->nevents == FBX_EXECUTOR_MAX_EVENTS) {
    ex->events_dropped++;
  } else {
    if (ex->nevents == ex->cap_events) {
      int cap = ex->cap_events ? ex->cap_events * 2 : 8;
      void *p = fbx_realloc(ex->events, sizeof *ex->events * (size_t)cap);
      if (p) {
        ex->events = p;
        ex->cap_events = cap;
      }
    }
    char *copy = ex->nevents < ex->cap_events ? fbx_strdup(msg) : NULL;
    if (copy) {
      ex->events[ex->nevents].msg = copy;
      ex->events[ex->nevents].count = 1;
      ex->nevents++;
    } else {
      ex->events_dropped++;
    }
  }
  pthread_mutex_unlock(&ex->ev_lock);
}

/* ---- stats ------------------------------------------------------------------------------- */

void fbx_executor_stats_get(const fbx_executor *cex, fbx_executor_stats *out) {
  if (!out) return;
  size_t size = out->struct_size < sizeof(fbx_executor_stats) ? out->struct_size : sizeof(fbx_executor_stats);
  fbx_executor_stats s;
  memset(&s, 0, sizeof s);
  fbx_executor *ex = (fbx_executor *)cex; /* atomics are only read */
  if (ex) {
    s.runs = atomic_load(&ex->runs);
    s.profiling_runs = atomic_load(&ex->profiling_runs_done);
    s.static_specializations = atomic_load(&ex->specs_static);
    s.dynamic_specializations = atomic_load(&ex->specs_dynamic);
    s.specializations = s.static_specializations + s.dynamic_specializations;
    s.guard_failures = atomic_load(&ex->guard_failures);
    s.fallbacks_unfused = atomic_load(&ex->fb_unfused);
    s.fallbacks_compile = atomic_load(&ex->fb_compile);
    s.fallbacks_run = atomic_load(&ex->fb_run);
    s.fallbacks_declined = atomic_load(&ex->fb_declined);
    s.fallbacks = s.fallbacks_unfused + s.fallbacks_compile + s.fallbacks_run + s.fallbacks_declined;
    s.optimize_failures = atomic_load(&ex->optimize_failures);
    s.groups = atomic_load(&ex->groups);
    s.kernels_compiled = atomic_load(&ex->kernels_compiled);
    s.compile_failures = atomic_load(&ex->compile_failures);
    s.compile_unsupported = atomic_load(&ex->compile_unsupported);
    s.memory_cache_hits = atomic_load(&ex->mem_hits);
    s.disk_cache_hits = atomic_load(&ex->disk_hits);
    s.compile_seconds = (double)atomic_load(&ex->compile_ns) * 1e-9;
    s.kernel_runs = atomic_load(&ex->kernel_runs);
    s.kernel_launches = atomic_load(&ex->kernel_launches);
    s.interpreted_ops = atomic_load(&ex->interp_ops);
    s.forward_runs = atomic_load(&ex->forward_runs);
    s.backward_runs = atomic_load(&ex->backward_runs);
    s.differentiable_graphs = atomic_load(&ex->diff_graphs);
    fbx_executor_grad_stats(ex, &s);
  }
  s.struct_size = size;
  memcpy(out, &s, size);
}

void fbx_executor_stats_print(const fbx_executor *cex, fbx_strbuf *b) {
  fbx_executor *ex = (fbx_executor *)cex;
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  fbx_strbuf_printf(b, "fusebox stats: fuser %s, strategy ", fbx_executor_fuser_name(ex));
  fbx_strategy_print(b, &ex->strategy);
  fbx_strbuf_printf(b, ", %d profiling run%s per specialization\n", ex->profiling_runs,
                    ex->profiling_runs == 1 ? "" : "s");
  fbx_strbuf_printf(b, "  runs                %lld\n", (long long)s.runs);
  fbx_strbuf_printf(b, "  profiling runs      %lld\n", (long long)s.profiling_runs);
  fbx_strbuf_printf(b, "  specializations     %lld (%lld static, %lld dynamic)\n", (long long)s.specializations,
                    (long long)s.static_specializations, (long long)s.dynamic_specializations);
  fbx_strbuf_printf(b, "  guard failures      %lld\n", (long long)s.guard_failures);
  fbx_strbuf_printf(b,
                    "  fallbacks           %lld (budget spent, unfused: %lld; compile failed: %lld; run failed: %lld; "
                    "declined: %lld)\n",
                    (long long)s.fallbacks, (long long)s.fallbacks_unfused, (long long)s.fallbacks_compile,
                    (long long)s.fallbacks_run, (long long)s.fallbacks_declined);
  if (s.optimize_failures) fbx_strbuf_printf(b, "  optimize failures   %lld\n", (long long)s.optimize_failures);
  fbx_strbuf_printf(b, "  groups              %lld\n", (long long)s.groups);
  fbx_strbuf_printf(b, "  kernels compiled    %lld (%lld failed, %lld unsupported)\n", (long long)s.kernels_compiled,
                    (long long)s.compile_failures, (long long)s.compile_unsupported);
  fbx_strbuf_printf(b, "  cache hits          %lld memory, %lld disk\n", (long long)s.memory_cache_hits,
                    (long long)s.disk_cache_hits);
  fbx_strbuf_printf(b, "  compile time        %.3f ms\n", s.compile_seconds * 1e3);
  if (ex->fuser) {
    fbx_fuser_stats fs;
    fbx_fuser_get_stats(ex->fuser, &fs);
    fbx_strbuf_printf(b, "  kernel cache        %lld kernels, %lld evicted (the fuser's, all executors)\n",
                      (long long)fs.cached_kernels, (long long)fs.cache_evictions);
  }
  int64_t nrun = s.runs + s.forward_runs;
  fbx_strbuf_printf(b, "  kernel launches     %lld (%.2f per run)\n", (long long)s.kernel_launches,
                    nrun ? (double)s.kernel_launches / (double)nrun : 0.0);
  fbx_strbuf_printf(b, "  interpreted ops     %lld (%.2f per run)\n", (long long)s.interpreted_ops,
                    nrun ? (double)s.interpreted_ops / (double)nrun : 0.0);
  if (s.forward_runs) {
    fbx_strbuf_printf(b, "  forward runs        %lld (gradient mode; kernels of their forward graphs counted above)\n",
                      (long long)s.forward_runs);
    fbx_strbuf_printf(b, "  backward runs       %lld\n", (long long)s.backward_runs);
    fbx_strbuf_printf(b, "  diff. graphs        %lld\n", (long long)s.differentiable_graphs);
    fbx_strbuf_printf(b, "  backward launches   %lld (%lld kernel runs)\n", (long long)s.backward_kernel_launches,
                      (long long)s.backward_kernel_runs);
    fbx_strbuf_printf(b, "  backward interp ops %lld\n", (long long)s.backward_interpreted_ops);
  }
  pthread_mutex_lock(&ex->ev_lock);
  if (ex->nevents) fbx_strbuf_puts(b, "  events:\n");
  for (int i = 0; i < ex->nevents; i++) {
    if (ex->events[i].count > 1) fbx_strbuf_printf(b, "    [%lldx] %s\n", (long long)ex->events[i].count, ex->events[i].msg);
    else fbx_strbuf_printf(b, "    %s\n", ex->events[i].msg);
  }
  if (ex->events_dropped)
    fbx_strbuf_printf(b, "    (%lld more events not kept)\n", (long long)ex->events_dropped);
  pthread_mutex_unlock(&ex->ev_lock);
  fbx_executor_grad_events(ex, b);
}

char *fbx_executor_report(const fbx_executor *ex) {
  if (!ex) return NULL;
  fbx_strbuf b = {0};
  fbx_executor_stats_print(ex, &b);
  return fbx_strbuf_take(&b);
}

/* ---- explain ------------------------------------------------------------------------------ */

void fbx_executor_explain(const fbx_executor *cex, fbx_strbuf *b) {
  fbx_executor *ex = (fbx_executor *)cex;
  pthread_mutex_lock(&ex->lock);
  /* The list is newest first; print in creation order. */
  fbx_xfn *order[FBX_EXECUTOR_MAX_FUNCTIONS];
  int n = 0;
  for (fbx_xfn *fn = ex->fns; fn && n < FBX_EXECUTOR_MAX_FUNCTIONS; fn = fn->next) order[n++] = fn;
  for (int i = n - 1; i >= 0; i--) {
    fbx_xfn *fn = order[i];
    int state = atomic_load(&fn->state);
    fbx_strbuf_printf(b, "# function %d (level %d, %s, fuser %s): %s: ", fn->index + 1, fn->depth,
                      fn->kind == FBX_SPEC_NONE ? "not specialized" : fbx_spec_kind_name(fn->kind),
                      fbx_executor_fuser_name(ex), fn->origin);
    if (state == FBX_FN_OPTIMIZED) {
      fbx_strbuf_printf(b, "optimized, %d group%s\n", fn->ngroups, fn->ngroups == 1 ? "" : "s");
      fbx_graph_print_to(b, fn->opt);
      int k = 0;
      for (fbx_xgroup *g = fn->groups; g; g = g->next, k++) {
        if (!g->guard) continue;
        fbx_strbuf_printf(b, "# guard of %s:", g->desc);
        for (int j = 0; j < g->nin; j++) {
          fbx_strbuf_puts(b, j ? ", " : " ");
          fbx_guard_print(b, &g->guard[j]);
        }
        fbx_strbuf_putc(b, '\n');
      }
    } else {
      fbx_strbuf_printf(b, "%s\n", state == FBX_FN_UNFUSED ? "runs unfused (optimizing failed)"
                                                           : "profiling (not optimized yet)");
      fbx_graph_print_to(b, fn->graph);
    }
  }
  pthread_mutex_unlock(&ex->lock);
  fbx_executor_grad_explain(ex, b);
}

char *fbx_executor_explain_text(const fbx_executor *ex) {
  if (!ex) return NULL;
  fbx_strbuf b = {0};
  fbx_executor_explain(ex, &b);
  return fbx_strbuf_take(&b);
}
