/* The profiling executor (internal API; the embedding API is the same object
 * seen through <fusebox/fusebox.h>, which declares create/destroy/stats).
 *
 *   fbx_executor *ex;
 *   fbx_executor_opts o = {.struct_size = sizeof o, .fuser_handle = fuser, .strategy = "static:2,dynamic:1"};
 *   FBX_TRY(fbx_executor_create(&ex, g, &o));
 *   fbx_ivalue in[1] = {fbx_iv_tensor(x)}, out[1];
 *   FBX_TRY(fbx_executor_run_values(ex, in, 1, out, 1, 0));     // thread-safe
 *   fbx_strbuf b = {0};
 *   fbx_executor_explain(ex, &b);                               // the optimized graphs
 *   fbx_executor_stats_print(ex, &b);                           // what --stats prints
 *   fbx_executor_destroy(ex);
 *
 * The unit of specialization is a *function*: a graph, its profile and, once
 * profiled, its optimized version. The executor starts with one function for
 * the whole graph. Its first FUSEBOX_PROFILING_RUNS runs are interpreted with
 * an observer that records, for every value (by value id), the merged type
 * seen (dtype, rank, sizes, strides; sizes that differed between runs become
 * `*`). Then it is optimized: a clone runs the default pass pipeline (on the
 * declared types: folding sizes seen once would be wrong for the next
 * inputs), its values take the observed types, the fuser partitions it into
 * fusebox::FusionGroup nodes, and the values outside groups get their
 * declared types back — only what a guard checks may be specialized.
 *
 * Guards live in front of each group (when the fuser sets
 * FBXP_GUARDS_OUTSIDE): the group runs its kernel only if its inputs match
 * the types observed for them (the types its subgraph's inputs show in
 * `explain`). A failing guard is counted, with its reason ("input 0: sizes
 * [4, 5] vs guard [2, 3]"), and the group's *fallback function* runs: a new
 * function over the group's own nodes (a copy of its subgraph with tensor
 * types erased), one level deeper, profiled and optimized again like the
 * first — so respecialization is per group, as in PyTorch, and a group that
 * keeps seeing new shapes builds a chain of guarded versions. Level d (0 is
 * the whole graph) is specialized according to FUSEBOX_FUSION_STRATEGY:
 * static levels keep exact sizes and strides, dynamic ones keep only dtype,
 * rank, size-1 dims and contiguity; past the last level a failing guard runs
 * the group unfused. Besides the strategy, an executor never builds more than
 * FBX_EXECUTOR_MAX_FUNCTIONS functions.
 *
 * Kernels: compiled by the fuser (fbx_fuser_compile, cached by the host by
 * plugin, canonical subgraph and input specs) on the first run that reaches a
 * group with inputs of new specs, and kept per group (a few specs each), so
 * a warm run does no compiling and takes no lock. Kernels are compiled for
 * exact specs, except at a dynamic level with a plugin that sets
 * FBXP_ACCEPTS_SYMBOLIC (ABI 1.1): there contiguous inputs' sizes other than
 * 1 are symbolic, equal sizes sharing a symbol, and one kernel (and one slot)
 * serves every shape of that pattern. Other plugins compile one kernel per
 * new shape at a dynamic level; the host's kernel cache stays bounded
 * (FUSEBOX_KERNEL_CACHE_MAX, least recently used out first). A compile that fails, a run that fails and a run a
 * self-fallback plugin declines make the group run in the interpreter (on
 * its subgraph) for that call; failures are logged once per group, all are
 * counted.
 *
 * Threads: runs share no mutable state but atomic counters, the per-group
 * kernel slots and fallback pointers (published with release stores), and
 * the event log (its own mutex). Profile merging, optimization, fallback
 * creation and compiles happen under the executor's lock. Profiling runs
 * that race with each other are all counted and merged.
 *
 * Gradient mode (grad.c, autodiff/tape.h): fbx_executor_forward_values
 * keeps, per set of inputs requiring grad, a plan of its own. Its profiling
 * runs interpret the graph with the tape's hooks (every node recorded
 * eagerly) and the profiling observer; then a clone of the graph gets the
 * default passes, the profiled types specialized as level 0 of the strategy
 * says (static: exact sizes; dynamic, or a budget of 0: dtype, rank, size-1
 * dims; strides never), and fbx_autodiff_create_subgraphs (at least 2
 * nodes, or one whose own backward is a graph: layer_norm, softmax, gelu).
 * Exact sizes are what let the gradient formulas drop the aten::size +
 * aten::_grad_sum_to_size pairs that undo broadcasting where shapes already
 * agree, so a static backward graph is pointwise end to end
 * and fuses into few groups (as PyTorch's profiling executor specializes
 * DifferentiableGraphs on guarded shapes). Each prim::DifferentiableGraph
 * keeps a chain of *versions* (levels), each its subgraph typed for the
 * shapes it was built for and a guard over those types. It runs through a
 * group-runner hook: the first version whose guard accepts the inputs runs
 * (nothing requiring grad runs its nodes on the eager tape); when none does,
 * the nodes run on the eager tape while profiling the next level (like a
 * fusion group's fallback function: FUSEBOX_PROFILING_RUNS runs, at least
 * one), which then becomes a new version specialized as the strategy says
 * for its level, counted in the static/dynamic specializations and logged
 * with the guard's reason; past the strategy's budget rejected shapes run on
 * the eager tape for good. A version runs its forward graph F in a
 * sub-executor with this executor's fuser and strategy, and a tape entry
 * whose backward runs B in another (one per set of inputs requiring grad,
 * made at first use; respecialized per set of defined output gradients, or
 * zeros materialized when respecializing is refused). The plan's graph
 * itself is not fused: only F and B are. Eager nodes differentiate a
 * one-node subgraph (per requires-grad mask and input dtypes/ranks) whose
 * backward runs unfused; nodes whose subgraphs print alike share one such
 * unit, so the eager tape's cost grows with the distinct nodes, not with
 * the graph. Grad handles must be freed
 * before the executor is destroyed. The stats sum every counter of the
 * forward and backward sub-executors into the executor's (their kernel
 * launches, runs and interpreted ops into the backward_* fields for B), but
 * not their runs: `runs`, `forward_runs` and `backward_runs` count calls.
 * Ops whose formula gives no gradient for any input that requires grad
 * (zeros_like, x.zero_()) leave their outputs not requiring grad.
 *
 * Environment (read at create):
 *   FUSEBOX_FUSER             default fuser when the options name none (else `none`)
 *   FUSEBOX_PROFILING_RUNS    default profiling runs (a count >= 0; default 1)
 *   FUSEBOX_FUSION_STRATEGY   default strategy: comma list of static:N / dynamic:N,
 *                             levels taken in order (default static:2,dynamic:10).
 *                             A malformed value fails create with
 *                             "FUSEBOX_FUSION_STRATEGY: expected static:N,dynamic:M, got ..."
 *   FUSEBOX_LOG=exec          trace profiling, specializations, guard failures, fallbacks
 *   FUSEBOX_AUTODIFF_RECOMPUTE  save versus recompute in DifferentiableGraphs'
 *                             forward/backward split (autodiff/recompute.c): 1 (default)
 *                             recompute cheap pointwise values in the backward when a
 *                             fuser fuses both graphs, 0 always save, 2 recompute also
 *                             without a fuser (for tests: it moves more bytes unfused)
 */
#ifndef FBX_EXEC_EXECUTOR_H
#define FBX_EXEC_EXECUTOR_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/fusebox.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

#define FBX_EXECUTOR_MAX_FUNCTIONS 256
#define FBX_STRATEGY_MAX_LEVELS 8

/* ---- the fusion strategy (strategy.c) ------------------------------------------------ */

typedef enum fbx_spec_kind { FBX_SPEC_NONE, FBX_SPEC_STATIC, FBX_SPEC_DYNAMIC } fbx_spec_kind;

typedef struct fbx_strategy {
  int nlevels;
  struct {
    fbx_spec_kind kind;
    int count;
  } levels[FBX_STRATEGY_MAX_LEVELS];
} fbx_strategy;

/* Parse "static:2,dynamic:10" (whitespace around items allowed; counts >= 0).
 * `what` names the source in the error ("FUSEBOX_FUSION_STRATEGY"). */
fbx_status *fbx_strategy_parse(fbx_strategy *out, const char *text, const char *what);
/* How level `depth` specializes (FBX_SPEC_NONE past the budget). */
fbx_spec_kind fbx_strategy_kind_at(const fbx_strategy *s, int depth);
int fbx_strategy_depth(const fbx_strategy *s); /* total levels */
void fbx_strategy_print(fbx_strbuf *b, const fbx_strategy *s);
const char *fbx_spec_kind_name(fbx_spec_kind k);

/* Check every FUSEBOX_* variable that core reads (FUSEBOX_PROFILING_RUNS,
 * FUSEBOX_FUSION_STRATEGY, FUSEBOX_NUM_THREADS, FUSEBOX_PW_GRAIN,
 * FUSEBOX_STORAGE_CACHE_MB, FUSEBOX_LOG, FUSEBOX_DISABLE_PASSES,
 * FUSEBOX_VERIFY, FUSEBOX_AUTODIFF_RECOMPUTE, FUSEBOX_HUGE_PAGES; see base/env.h): NULL, or the first bad one's status
 * naming the variable and its value. fbx_executor_create returns it; the
 * CLI calls it before any command and exits 2. */
fbx_status *fbx_env_check_all(void);

/* ---- running -------------------------------------------------------------------------- */

/* Run on interpreter values: inputs borrowed (checked like fbx_interp_run),
 * outputs[0..nout) new references, nout == the graph's output count (tuples
 * not flattened). `seed` starts the run's random generator. */
fbx_status *fbx_executor_run_values(fbx_executor *ex, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs,
                                    int nout, uint64_t seed);
/* Do the outputs of a run flatten to as many values as the graph's declared
 * output types (fbx_executor_num_outputs)? On a mismatch, releases
 * outputs[0..nout) and returns a status naming the output. */
fbx_status *fbx_executor_check_outputs(const fbx_executor *ex, fbx_ivalue *outputs, int nout);

/* Gradient mode (grad.c; the design is in <fusebox/fusebox.h> above
 * fbx_executor_forward). requires_grad (nin; NULL: every floating tensor
 * input) says which inputs require grad; outputs as run_values; *handle
 * receives the tape. backward_values: grad_outputs are flat (tuple outputs
 * flattened, n == fbx_executor_num_outputs), None for undefined; grad_inputs
 * (nin) receive new references, None where there is no gradient. */
fbx_status *fbx_executor_forward_values(fbx_executor *ex, const fbx_ivalue *inputs, int nin,
                                        const bool *requires_grad, fbx_ivalue *outputs, int nout, uint64_t seed,
                                        fbx_grad_handle **handle);
fbx_status *fbx_executor_backward_values(fbx_grad_handle *h, const fbx_ivalue *grad_outputs, int n,
                                         fbx_ivalue *grad_inputs, int nin);
/* x (an input given to forward_values) was borrowed for the call: copy
 * every value h saved for backward that shares x's memory, so the caller
 * may free or overwrite it now. *kept (may be NULL): whether anything was
 * saved there (what else h holds of x is identity and metadata: backward
 * never reads its data). fbx_executor_forward calls it per borrowed input. */
fbx_status *fbx_grad_unborrow(fbx_grad_handle *h, const fbx_tensor *x, bool *kept);
/* Input i as h holds it (the tensor forward_values was given), or NULL when
 * it is not a tensor. For tests. */
const fbx_tensor *fbx_grad_input_tensor(const fbx_grad_handle *h, int i);

/* Check inputs against the graph's input types without running (run checks
 * too); messages as fbx_interp_check_inputs gives them. */
fbx_status *fbx_executor_check_inputs(const fbx_executor *ex, const fbx_ivalue *inputs, int nin);

const fbx_graph *fbx_executor_graph(const fbx_executor *ex); /* the executor's copy */
const char *fbx_executor_fuser_name(const fbx_executor *ex); /* "none" without a fuser */

/* Every function's optimized graph (or a note that it is still profiling). */
void fbx_executor_explain(const fbx_executor *ex, fbx_strbuf *b);
/* What `fusebox run --stats` prints: counters, then the event log. */
void fbx_executor_stats_print(const fbx_executor *ex, fbx_strbuf *b);

#endif
