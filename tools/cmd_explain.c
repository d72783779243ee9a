/* fusebox explain GRAPH [--fuser NAME] [--input [NAME=]X]... [--random [--shape [NAME=]D0,D1,...]...] [--seed S] [--source] [--dot FILE] [--backward]
 *
 * Runs a graph through the profiling executor just far enough to optimize it
 * (FUSEBOX_PROFILING_RUNS profiling runs, then one optimized run that
 * compiles the kernels), and shows what the executor made of it: every
 * function's optimized graph with its fusebox::FusionGroup nodes and their
 * guards (fbx_executor_explain), where each group goes when its guard fails,
 * the kernels compiled, and for every node left outside a group, why. With
 * --backward: the gradient plan (fbx_executor_grad_explain) and the kernels
 * of each DifferentiableGraph's forward and backward executors.
 *
 * The executor offers no public walk over its functions and groups yet, so
 * this file reads them through exec/execimpl.h (under the executor's lock,
 * read-only); the walk is confined to the functions marked INTERNALS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "exec/execimpl.h"
#include "exec/executor.h"
#include "host/host.h"
#include "inputs.h"
#include "model.h"
#include "ir/text.h"
#include "passes/passes.h"

static const char *const USAGE =
    "fusebox explain GRAPH [--fuser NAME] [--input [NAME=]X]... [--random [--shape [NAME=]D0,D1,...]...] [--seed S]\n"
    "                       [--source] [--dot FILE] [--backward]";

static void help(void) {
  printf("usage: %s\n\n"
         "Runs GRAPH with the profiling executor until it is optimized (FUSEBOX_PROFILING_RUNS\n"
         "profiling runs, then one optimized run that compiles the kernels) and prints:\n"
         "  - every function's optimized graph, with its fusebox::FusionGroup nodes, and the\n"
         "    guard of each group (the input types its kernels were compiled for);\n"
         "  - each group's fallback: where a run goes when the guard fails;\n"
         "  - the kernels compiled for each group (and their source with --source);\n"
         "  - every node left outside a group, with the reason: control flow, side effect,\n"
         "    constant, not proposed by the fuser, or no fuser.\n\n"
         "  --fuser NAME      the fuser (default: FUSEBOX_FUSER, else none): legacy,\n"
         "                    tensorexpr, nvfuser_like, a plugin name or a path.\n"
         FBX_CLI_INPUT_HELP
         "  --random          make every input up: tensors whose IR type gives dtype and\n"
         "                    sizes (Float(4, 8)) get random values.\n"
         "  --shape [NAME=]D0,D1,...  with --random: the sizes of input NAME (without a\n"
         "                    name: of every input whose type does not give them).\n"
         "  --seed S          seed for --random and the graph's random ops (default 0).\n"
         "  --source          print the generated source of every kernel (when the fuser\n"
         "                    shows it).\n"
         "  --dot FILE        write the first function's optimized graph as Graphviz, each\n"
         "                    fusion group a `subgraph cluster_N` (render: dot -Tsvg FILE).\n"
         "  --backward        gradient mode: every floating-point tensor input requires grad;\n"
         "                    runs forward and backward (gradients of ones) until the\n"
         "                    DifferentiableGraph plan and its forward and backward executors\n"
         "                    are optimized, and shows the plan: the graph with its\n"
         "                    prim::DifferentiableGraph nodes (the graph itself is not fused in\n"
         "                    gradient mode), then each one's guard and its forward and backward\n"
         "                    graphs with their fusion groups, every node left outside the\n"
         "                    DifferentiableGraphs with the reason, and the kernels of each\n"
         "                    one's forward and backward graphs (their source with --source),\n"
         "                    labelled forward or backward. The plain (no-grad) path\n"
         "                    is not shown (it did not run); without --backward explain shows\n"
         "                    plain runs only. Not with --dot.\n\n"
         "Exit status: 0 success, 1 the graph, an input or a run failed, 2 usage error.\n",
         USAGE);
}

/* ---- INTERNALS: the executor's functions and groups ------------------------------------------- */

/* Functions in creation order (the executor keeps them newest first). */
static int functions_in_order(fbx_executor *ex, fbx_xfn **order, int cap) {
  int n = 0;
  for (fbx_xfn *fn = ex->fns; fn && n < cap; fn = fn->next) order[n++] = fn;
  for (int i = 0; i < n / 2; i++) {
    fbx_xfn *t = order[i];
    order[i] = order[n - 1 - i];
    order[n - 1 - i] = t;
  }
  return n;
}

static int index_of(fbx_xfn **order, int n, const fbx_xfn *fn) {
  for (int i = 0; i < n; i++)
    if (order[i] == fn) return i + 1;
  return 0;
}

static void kspec_print(fbx_strbuf *b, const fbx_kspec *s) {
  switch (s->kind) {
    case FBX_IV_TENSOR:
      fbx_strbuf_printf(b, "%s[", fbx_dtype_name((fbx_dtype)s->dtype));
      for (int d = 0; d < s->ndim; d++) fbx_strbuf_printf(b, "%s%lld", d ? ", " : "", (long long)s->sizes[d]);
      fbx_strbuf_puts(b, "]");
      break;
    default: fbx_strbuf_puts(b, fbx_iv_kind_name((fbx_iv_kind)s->kind)); break;
  }
}

static void print_fallbacks(fbx_strbuf *b, fbx_executor *ex, fbx_xfn **order, int n) {
  bool any = false;
  for (int i = 0; i < n; i++) {
    fbx_xfn *fn = order[i];
    if (atomic_load(&fn->state) != FBX_FN_OPTIMIZED) continue;
    for (fbx_xgroup *g = fn->groups; g; g = g->next) {
      if (!any) fbx_strbuf_puts(b, "\n# fallbacks\n");
      any = true;
      fbx_strbuf_printf(b, "#   fallback of %s (function %d, level %d): ", g->desc, i + 1, fn->depth);
      fbx_xfn *fb = atomic_load(&g->fallback);
      if (!g->guard) {
        fbx_strbuf_puts(b, "no host guard: the fuser checks its inputs at run time; a run it declines or fails "
                           "runs the group in the interpreter\n");
      } else if (fb) {
        fbx_strbuf_printf(b, "on guard failure -> function %d (level %d, %s)\n", index_of(order, n, fb), fb->depth,
                          fbx_spec_kind_name(fb->kind));
      } else if (atomic_load(&g->no_fallback)) {
        fbx_strbuf_puts(b, "specialization budget spent: on guard failure the group runs unfused\n");
      } else {
        fbx_spec_kind k = fbx_strategy_kind_at(&ex->strategy, fn->depth + 1);
        if (k == FBX_SPEC_NONE)
          fbx_strbuf_puts(b, "on guard failure the group runs unfused (the strategy has no further level)\n");
        else
          fbx_strbuf_printf(b, "on guard failure -> a new function at level %d (%s), profiled and specialized "
                               "again (no guard has failed yet)\n", fn->depth + 1, fbx_spec_kind_name(k));
      }
      fbx_strbuf_puts(b, "#     a failing compile or run also runs the group in the interpreter (counted in stats)\n");
    }
  }
}

/* The kernels of the groups of functions order[0..n); `header` goes before
 * the first (NULL: none), `who` before each group ("" for the executor's
 * own functions). Returns the number of groups. */
static int print_kernels(fbx_strbuf *b, fbx_xfn **order, int n, bool source, const char *header, const char *who) {
  int ngroups = 0;
  for (int i = 0; i < n; i++) {
    fbx_xfn *fn = order[i];
    if (atomic_load(&fn->state) != FBX_FN_OPTIMIZED) continue;
    for (fbx_xgroup *g = fn->groups; g; g = g->next) {
      if (!ngroups++ && header) fbx_strbuf_puts(b, header);
      int nk = 0;
      for (int s = 0; s < FBX_GROUP_KERNEL_SLOTS; s++) {
        fbx_kentry *e = atomic_load(&g->kernels[s]);
        if (!e) continue;
        nk++;
        fbx_strbuf_printf(b, "#   %s%s (function %d) for (", who, g->desc, i + 1);
        for (int j = 0; j < e->nin; j++) {
          if (j) fbx_strbuf_puts(b, ", ");
          kspec_print(b, &e->specs[j]);
        }
        if (!e->kernel) {
          fbx_strbuf_puts(b, "): compile failed, the group runs in the interpreter\n");
          continue;
        }
        int l = fbx_fkernel_launches(e->kernel);
        fbx_strbuf_printf(b, "): %d launch%s per run\n", l, l == 1 ? "" : "es");
        if (!source) continue;
        const char *src = fbx_fkernel_source(e->kernel);
        if (!src) {
          fbx_strbuf_puts(b, "(the fuser shows no source for this kernel)\n");
        } else {
          fbx_strbuf_puts(b, src);
          if (!*src || src[strlen(src) - 1] != '\n') fbx_strbuf_putc(b, '\n');
        }
      }
      if (!nk) fbx_strbuf_printf(b, "#   %s%s (function %d): no kernel compiled yet\n", who, g->desc, i + 1);
    }
  }
  return ngroups;
}

/* Gradient mode: the kernels of every DifferentiableGraph's forward and
 * backward executors (an fbx_grad_sub_visitor). */
typedef struct grad_kernels {
  fbx_strbuf *b;
  bool source;
  int nsubs;
} grad_kernels;

static void grad_sub_kernels(void *ctx, const char *dg, int level, const char *what, fbx_executor *sub) {
  grad_kernels *k = ctx;
  k->nsubs++;
  char who[192];
  snprintf(who, sizeof who, "prim::DifferentiableGraph %%%s, level %d, %s: ", dg, level, what);
  pthread_mutex_lock(&sub->lock);
  fbx_xfn *order[FBX_EXECUTOR_MAX_FUNCTIONS];
  int n = functions_in_order(sub, order, FBX_EXECUTOR_MAX_FUNCTIONS);
  bool optimized = false;
  for (int i = 0; i < n; i++) optimized |= atomic_load(&order[i]->state) == FBX_FN_OPTIMIZED;
  if (!print_kernels(k->b, order, n, k->source, NULL, who))
    fbx_strbuf_printf(k->b, "#   %s%s\n", who, optimized ? "no fusion group" : "not optimized yet (no kernels)");
  pthread_mutex_unlock(&sub->lock);
}

static void print_grad_kernels(fbx_strbuf *b, fbx_executor *ex, bool source) {
  fbx_strbuf_puts(b, "\n# kernels of the DifferentiableGraphs' forward and backward graphs\n");
  if (!ex->fuser) {
    fbx_strbuf_puts(b, "#   none: no fuser, so no kernels (--fuser none)\n");
    return;
  }
  grad_kernels k = {.b = b, .source = source};
  fbx_executor_grad_each_sub(ex, grad_sub_kernels, &k);
  if (!k.nsubs) fbx_strbuf_puts(b, "#   none: no DifferentiableGraph has run with inputs that require grad\n");
}

/* ---- why a node is not in a group ------------------------------------------------------------- */

static bool is_group(const fbx_node *n) { return n->kind == FBX_SYM_fusebox_FusionGroup && fbx_node_subgraph(n); }

static const char *reason(const fbx_xfn *fn, const fbx_node *n, const char *fuser, char *buf, size_t cap) {
  if (n->kind == FBX_SYM_prim_If || n->kind == FBX_SYM_prim_Loop || n->nblocks > 0) return "control flow";
  if (fbx_node_has_side_effects(n)) return "side effect";
  if (!fuser) return "no fuser (--fuser none)";
  const char *why = fbx_ptrmap_get(&fn->rejected, n);
  if (why)
    snprintf(buf, cap, "proposed by %s, rejected: %s", fuser, why);
  else
    snprintf(buf, cap, "not proposed by %s", fuser);
  return buf;
}

static void unfused_block(fbx_strbuf *b, const fbx_xfn *fn, const fbx_block *blk, const char *fuser, int depth,
                          int *count, int *nconst) {
  for (const fbx_node *n = fbx_block_first(blk); n; n = n->next) {
    if (is_group(n)) continue;
    if (n->kind == FBX_SYM_prim_Constant) {
      (*nconst)++;
      continue;
    }
    char buf[160];
    fbx_strbuf line = {0};
    fbx_node_print_line(&line, n);
    fbx_strbuf_printf(b, "#   %*s%s  -- %s\n", 2 * depth, "", line.data ? line.data : fbx_sym_str(n->kind),
                      reason(fn, n, fuser, buf, sizeof buf));
    fbx_strbuf_free(&line);
    (*count)++;
    for (int k = 0; k < n->nblocks; k++) unfused_block(b, fn, n->blocks[k], fuser, depth + 1, count, nconst);
  }
}

static void print_unfused(fbx_strbuf *b, fbx_executor *ex, fbx_xfn **order, int n) {
  const char *fuser = ex->fuser ? fbx_fuser_name(ex->fuser) : NULL;
  for (int i = 0; i < n; i++) {
    fbx_xfn *fn = order[i];
    int state = atomic_load(&fn->state);
    const fbx_graph *g = state == FBX_FN_OPTIMIZED ? fn->opt : fn->graph;
    fbx_strbuf_printf(b, "\n# nodes outside fusion groups in function %d (%s)%s\n", i + 1, fn->origin,
                      state == FBX_FN_PROFILING ? ", still profiling" : state == FBX_FN_UNFUSED ? ", optimizing failed" : "");
    int count = 0, nconst = 0;
    unfused_block(b, fn, g->block, state == FBX_FN_OPTIMIZED && fn->kind != FBX_SPEC_NONE ? fuser : NULL, 0, &count,
                  &nconst);
    if (state != FBX_FN_OPTIMIZED && fuser)
      fbx_strbuf_puts(b, "#   (not partitioned yet: the function has not been optimized)\n");
    if (nconst)
      fbx_strbuf_printf(b, "#   and %d prim::Constant node%s (values: kernels take the constants they use)\n", nconst,
                        nconst == 1 ? "" : "s");
    if (!count && !nconst) fbx_strbuf_puts(b, "#   (none)\n");
  }
}

/* ---- Graphviz -------------------------------------------------------------------------------- */

typedef struct dot_src {
  const fbx_value *v;
  char id[24];
} dot_src;

typedef struct dot {
  FILE *f;
  dot_src *src;
  int nsrc, cap;
  int next_id, next_cluster, next_block;
  bool oom;
} dot;

static void dot_map(dot *d, const fbx_value *v, const char *id) {
  if (d->nsrc == d->cap) {
    int cap = d->cap ? d->cap * 2 : 64;
    dot_src *p = fbx_realloc(d->src, sizeof *p * (size_t)cap);
    if (!p) {
      d->oom = true;
      return;
    }
    d->src = p;
    d->cap = cap;
  }
  d->src[d->nsrc].v = v;
  snprintf(d->src[d->nsrc].id, sizeof d->src[0].id, "%s", id);
  d->nsrc++;
}

static const char *dot_lookup(const dot *d, const fbx_value *v) {
  for (int i = d->nsrc - 1; i >= 0; i--)
    if (d->src[i].v == v) return d->src[i].id[0] ? d->src[i].id : NULL;
  return NULL;
}

static void dot_str(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n') fputs("\\n", f);
    else fputc(*s, f);
  }
}

static void dot_edges_into(dot *d, const fbx_node *n, const char *id, int indent) {
  for (int i = 0; i < n->ninputs; i++) {
    const char *from = dot_lookup(d, n->inputs[i]);
    if (!from) continue;
    fprintf(d->f, "%*s%s -> %s [label=\"%%", indent, "", from, id);
    dot_str(d->f, n->inputs[i]->name);
    fputs("\"];\n", d->f);
  }
}

static void dot_block(dot *d, const fbx_block *blk, int indent, const char *fuser);

static void dot_node(dot *d, const fbx_node *n, int indent, const char *fuser) {
  if (n->kind == FBX_SYM_prim_Constant) {
    for (int i = 0; i < n->noutputs; i++) dot_map(d, n->outputs[i], ""); /* constants: no edges */
    return;
  }
  if (is_group(n)) {
    const fbx_graph *sub = fbx_node_subgraph(n);
    int c = d->next_cluster++;
    fprintf(d->f, "%*ssubgraph cluster_%d {\n", indent, "", c);
    fprintf(d->f, "%*s  label=\"fusebox::FusionGroup", indent, "");
    if (n->noutputs) {
      fputs(" %", d->f);
      dot_str(d->f, n->outputs[0]->name);
    }
    if (fuser) {
      fputs(" (", d->f);
      dot_str(d->f, fuser);
      fputc(')', d->f);
    }
    fprintf(d->f, "\";\n%*s  style=filled; fillcolor=\"#e8f0fe\"; color=\"#4a76c9\";\n", indent, "");
    /* The subgraph's inputs are the group node's inputs. */
    for (int i = 0; i < fbx_graph_ninputs(sub) && i < n->ninputs; i++) {
      const char *from = dot_lookup(d, n->inputs[i]);
      dot_map(d, fbx_graph_input(sub, i), from ? from : "");
    }
    dot_block(d, sub->block, indent + 2, fuser);
    fprintf(d->f, "%*s}\n", indent, "");
    for (int i = 0; i < n->noutputs && i < fbx_graph_noutputs(sub); i++) {
      const char *from = dot_lookup(d, fbx_graph_output(sub, i));
      dot_map(d, n->outputs[i], from ? from : "");
    }
    return;
  }
  char id[24];
  snprintf(id, sizeof id, "n%d", d->next_id++);
  fprintf(d->f, "%*s%s [label=\"", indent, "", id);
  dot_str(d->f, fbx_sym_str(n->kind));
  for (int i = 0; i < n->noutputs; i++) {
    fputs(i ? ", %" : "\\n%", d->f);
    dot_str(d->f, n->outputs[i]->name);
  }
  fputs("\"];\n", d->f);
  dot_edges_into(d, n, id, indent);
  for (int k = 0; k < n->nblocks; k++) {
    const fbx_block *blk = n->blocks[k];
    fprintf(d->f, "%*ssubgraph cluster_block%d {\n%*s  label=\"block%d of ", indent, "", d->next_block++, indent, "",
            k);
    dot_str(d->f, fbx_sym_str(n->kind));
    fprintf(d->f, "\"; style=dashed;\n");
    for (int i = 0; i < fbx_block_nparams(blk); i++) dot_map(d, fbx_block_param(blk, i), id);
    dot_block(d, blk, indent + 2, fuser);
    fprintf(d->f, "%*s}\n", indent, "");
    for (int i = 0; i < fbx_block_nreturns(blk); i++) {
      const char *from = dot_lookup(d, fbx_block_return(blk, i));
      if (from && strcmp(from, id))
        fprintf(d->f, "%*s%s -> %s [style=dashed];\n", indent, "", from, id);
    }
  }
  for (int i = 0; i < n->noutputs; i++) dot_map(d, n->outputs[i], id);
}

static void dot_block(dot *d, const fbx_block *blk, int indent, const char *fuser) {
  for (const fbx_node *n = fbx_block_first(blk); n; n = n->next) dot_node(d, n, indent, fuser);
}

static fbx_status *write_dot(const char *path, const fbx_graph *g, const char *fuser) {
  FILE *f = fopen(path, "w");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  dot d = {.f = f};
  fputs("digraph fusebox {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n", f);
  for (int i = 0; i < fbx_graph_ninputs(g); i++) {
    const fbx_value *v = fbx_graph_input(g, i);
    char id[24];
    snprintf(id, sizeof id, "in%d", i);
    fprintf(f, "  %s [shape=ellipse, label=\"%%", id);
    dot_str(f, v->name);
    fbx_strbuf t = {0};
    fbx_type_print(&t, v->type);
    fputs(" : ", f);
    dot_str(f, t.data ? t.data : "?");
    fbx_strbuf_free(&t);
    fputs("\"];\n", f);
    dot_map(&d, v, id);
  }
  dot_block(&d, g->block, 2, fuser);
  fputs("  ret [shape=ellipse, label=\"return\"];\n", f);
  for (int i = 0; i < fbx_graph_noutputs(g); i++) {
    const char *from = dot_lookup(&d, fbx_graph_output(g, i));
    if (from) fprintf(f, "  %s -> ret [label=\"%d\"];\n", from, i);
  }
  fputs("}\n", f);
  fbx_free(d.src);
  bool werr = ferror(f) != 0;
  if (fclose(f) || werr) return fbx_status_new(FBX_ERR_IO, "cannot write %s", path);
  return d.oom ? fbx_status_nomem() : NULL;
}

/* ---- gradient mode ----------------------------------------------------------------------------- */

/* Into out[0..cap) (the executor checked the count against the graph's types). */
static void flatten_tuples(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) flatten_tuples(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = *v;
  (*n)++;
}

/* One forward and backward, with gradients of ones for the floating tensor outputs. */
static fbx_status *forward_backward(fbx_executor *ex, const fbx_ivalue *vals, int nin, fbx_ivalue *outs, int nout,
                                    uint64_t seed) {
  int nflat = fbx_executor_num_outputs(ex);
  fbx_ivalue *flat = fbx_calloc((size_t)nflat + 1, sizeof *flat);
  fbx_ivalue *gout = fbx_calloc((size_t)nflat + 1, sizeof *gout);
  fbx_ivalue *gin = fbx_calloc((size_t)nin + 1, sizeof *gin);
  fbx_grad_handle *h = NULL;
  fbx_status *st = flat && gout && gin ? NULL : fbx_status_nomem();
  if (!st) st = fbx_executor_forward_values(ex, vals, nin, NULL, outs, nout, seed, &h);
  int n = 0;
  for (int i = 0; i < nout && !st; i++) flatten_tuples(&outs[i], flat, &n, nflat);
  if (n > nflat) n = nflat;
  for (int k = 0; k < n && !st; k++) {
    const fbx_ivalue *o = &flat[k];
    if (o->kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(o->u.t->dtype)) continue;
    fbx_tensor *d = NULL, *t = NULL;
    if (!(st = fbx_tensor_empty(&d, FBX_DTYPE_FLOAT64, o->u.t->ndim, o->u.t->sizes))) {
      for (int64_t e = 0; e < d->numel; e++) ((double *)d->data)[e] = 1.0;
      st = fbx_tensor_clone_as(&t, d, o->u.t->dtype);
      fbx_tensor_release(d);
    }
    if (!st) gout[k] = fbx_iv_tensor(t);
  }
  if (!st) st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
  fbx_grad_free(h);
  for (int k = 0; gout && k < nflat; k++) fbx_iv_release(&gout[k]);
  for (int i = 0; gin && i < nin; i++) fbx_iv_release(&gin[i]);
  fbx_free(flat);
  fbx_free(gout);
  fbx_free(gin);
  return st;
}

/* ---- the command ----------------------------------------------------------------------------- */

#define EXPLAIN_MAX_SHAPES 16

int fbx_cmd_explain(int argc, char **argv) {
  const char *path = NULL, *fuser_name = NULL, *dot_path = NULL;
  bool random = false, source = false, backward = false, default_shape = false;
  long long seed = 0;
  fbx_cli_shape shapes[EXPLAIN_MAX_SHAPES];
  int nshapes = 0;
  char **inputs = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *inputs);
  if (!inputs) return fbx_cli_fail("explain", fbx_status_nomem());
  int ninputs = 0, rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(inputs);
      return 0;
    } else if (!strcmp(a, "--input") || !strcmp(a, "-i")) {
      if (!has_value) rc = fbx_cli_usage("explain", USAGE, "%s needs a value", a);
      else inputs[ninputs++] = argv[++i];
    } else if (!strcmp(a, "--fuser")) {
      if (!has_value) rc = fbx_cli_usage("explain", USAGE, "--fuser needs a name");
      else fuser_name = argv[++i];
    } else if (!strcmp(a, "--dot")) {
      if (!has_value) rc = fbx_cli_usage("explain", USAGE, "--dot needs a file name");
      else dot_path = argv[++i];
    } else if (!strcmp(a, "--seed")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 0, &seed))
        rc = fbx_cli_usage("explain", USAGE, "--seed needs a non-negative integer");
    } else if (!strcmp(a, "--shape")) {
      if (!has_value) {
        rc = fbx_cli_usage("explain", USAGE, "--shape needs [NAME=]D0,D1,...");
      } else if (nshapes == EXPLAIN_MAX_SHAPES) {
        rc = fbx_cli_usage("explain", USAGE, "at most %d --shape options", EXPLAIN_MAX_SHAPES);
      } else if (!fbx_cli_parse_shape(argv[++i], &shapes[nshapes])) {
        rc = fbx_cli_usage("explain", USAGE,
                           "--shape '%s': expected [NAME=]D0,D1,... (1 to %d sizes >= 0, at most 2^40 elements)",
                           argv[i], FBX_MAX_DIMS);
      } else if (!shapes[nshapes].name && default_shape) {
        rc = fbx_cli_usage("explain", USAGE, "--shape without a name given twice");
      } else {
        default_shape |= !shapes[nshapes++].name;
      }
    } else if (!strcmp(a, "--random")) {
      random = true;
    } else if (!strcmp(a, "--source")) {
      source = true;
    } else if (!strcmp(a, "--backward")) {
      backward = true;
    } else if (a[0] == '-' && a[1]) {
      rc = fbx_cli_usage("explain", USAGE, "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      rc = fbx_cli_usage("explain", USAGE, "more than one graph given ('%s'); inputs go after --input", a);
    }
  }
  if (!rc && !path) rc = fbx_cli_usage("explain", USAGE, "no graph given");
  if (!rc && random && ninputs) rc = fbx_cli_usage("explain", USAGE, "--random and --input exclude each other");
  if (!rc && nshapes && !random) rc = fbx_cli_usage("explain", USAGE, "--shape sizes --random inputs; add --random");
  if (!rc && backward && dot_path)
    rc = fbx_cli_usage("explain", USAGE, "--dot draws the plain function; it does not run with --backward");
  if (rc) {
    fbx_free(inputs);
    return rc;
  }
  if (!fuser_name) fuser_name = getenv("FUSEBOX_FUSER");

  fbx_fuser *fz = NULL;
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue *vals = NULL, *outs = NULL;
  int nin = 0, nout = 0;
  fbx_strbuf b = {0};
  fbx_cli_model model = {0};
  fbx_status *st = fbx_cli_load_fuser(fuser_name, &fz);
  if (st) {
    fprintf(stderr, "fusebox explain: fuser '%s' cannot be used: %s\n", fuser_name, fbx_status_message(st));
    fbx_status_free(st);
    fbx_free(inputs);
    return 2;
  }
  /* GRAPH may be an imported model's directory or a .pt archive (tools/model.h). */
  if ((st = fbx_cli_model_open(&model, path, inputs, ninputs))) goto done;
  if ((st = fbx_graph_parse_file(&g, model.graph))) goto done;
  fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = fz};
  if ((st = fbx_executor_create(&ex, g, &xo))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  if (!vals || !outs) {
    st = fbx_status_nomem();
    goto done;
  }
  if (random && model.nweights) st = fbx_cli_mixed_inputs(g, model.args, model.nargs, seed, shapes, nshapes, vals);
  else if (random) st = fbx_cli_random_inputs_shaped(g, seed, shapes, nshapes, vals);
  else st = fbx_cli_gather_inputs(g, model.args, model.nargs, vals);
  if (st) goto done;
  if ((st = fbx_executor_check_inputs(ex, vals, nin))) goto done;
  /* Gradient mode profiles the graph, then its forward and backward graphs. */
  int runs = backward ? 2 * ex->profiling_runs + 1 : ex->profiling_runs + 1;
  for (int r = 0; r < runs; r++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outs[i]);
    if (backward) st = forward_backward(ex, vals, nin, outs, nout, (uint64_t)seed);
    else st = fbx_executor_run_values(ex, vals, nin, outs, nout, seed);
    if (st) goto done;
  }

  fbx_strbuf_printf(&b, "# fusebox explain %s: fuser %s", path, fbx_executor_fuser_name(ex));
  if (fz) fbx_strbuf_printf(&b, " %s (%s)", fbx_fuser_version(fz), fbx_fuser_path(fz));
  fbx_strbuf_printf(&b, ", after %d %srun%s (%d profiling)\n", runs, backward ? "forward+backward " : "",
                    runs == 1 ? "" : "s", ex->profiling_runs);
  if (backward) {
    /* The plain function never ran: only the gradient plan is of interest. */
    fbx_strbuf_puts(&b, "# gradient mode only: the plain (no-grad) path was not used\n");
    fbx_executor_grad_explain(ex, &b);
  } else {
    fbx_executor_explain(ex, &b);
  }
  pthread_mutex_lock(&ex->lock);
  fbx_xfn *order[FBX_EXECUTOR_MAX_FUNCTIONS];
  int nfn = backward ? 0 : functions_in_order(ex, order, FBX_EXECUTOR_MAX_FUNCTIONS);
  print_fallbacks(&b, ex, order, nfn);
  print_kernels(&b, order, nfn, source, "\n# kernels\n", "");
  print_unfused(&b, ex, order, nfn);
  if (dot_path && nfn > 0) {
    fbx_xfn *top = order[0];
    const fbx_graph *dg = atomic_load(&top->state) == FBX_FN_OPTIMIZED ? top->opt : top->graph;
    st = write_dot(dot_path, dg, fz ? fbx_fuser_name(fz) : NULL);
  }
  pthread_mutex_unlock(&ex->lock);
  if (backward) print_grad_kernels(&b, ex, source); /* takes ex->lock itself */
  if (b.oom && !st) st = fbx_status_nomem();
  if (!st) {
    fputs(b.data ? b.data : "", stdout);
    if (dot_path) printf("\n# wrote %s\n", dot_path);
  }
done:
  if (st) rc = fbx_cli_fail("explain", st);
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(outs);
  fbx_free(inputs);
  fbx_strbuf_free(&b);
  fbx_executor_destroy(ex);
  fbx_fuser_release(fz);
  fbx_graph_destroy(g);
  fbx_cli_model_close(&model);
  return rc;
}
