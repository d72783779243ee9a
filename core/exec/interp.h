/* The reference interpreter: runs a whole TorchScript-IR graph on the CPU
 * with the op table's reference kernels. It is the oracle every fuser is
 * checked against, so it favours being plainly right over being clever.
 *
 *   fbx_graph *g;
 *   FBX_TRY(fbx_graph_parse_file(&g, "model.ir"));
 *   fbx_interp *it;
 *   FBX_TRY(fbx_interp_create(&it, g));            // plan once
 *
 *   fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_int(3)};   // borrowed by run
 *   fbx_ivalue out[1];                             // fbx_interp_noutputs(it) slots
 *   fbx_run_opts opts = {.seed = 42};
 *   fbx_status *st = fbx_interp_run(it, in, 2, out, &opts);
 *   if (st) { fprintf(stderr, "%s\n", fbx_status_message(st)); fbx_status_free(st); }
 *   else fbx_iv_release(&out[0]);                  // outputs are new references
 *
 *   fbx_interp_destroy(it);
 *   fbx_graph_destroy(g);                          // the graph outlives the interp
 *
 * What create does (the plan): every value gets a slot number; every node
 * gets its inputs' and outputs' slots, the op table row that runs it when
 * the IR types decide the overload (otherwise the overload is chosen from
 * the run-time values at first run and cached per node, keyed by the kinds
 * of the values, so a node that sees ints once and floats later picks again),
 * and the list of values whose last use it is. prim::Constant values are
 * materialized once (ints, floats, bools, strings, devices, None, int/float/
 * str lists, tensor constants with data). A `<Tensor>` constant whose data
 * the text did not give fails here with FBX_ERR_UNSUPPORTED naming the node.
 * A node whose op the table does not know fails with FBX_ERR_UNSUPPORTED only
 * when a run reaches it: graphs from PyTorch often hold in-place variants
 * (aten::relu_) in branches that a constant flag never takes.
 *
 * What run does: checks the inputs against the graph's IR types (count;
 * tensor dtype and rank where the type gives them; int/float/bool/str/list/
 * tuple/Optional kinds) before anything runs, then runs the nodes in order,
 * including prim::If and prim::Loop (trip count and condition, loop-carried
 * values, block parameters, nested blocks), lists, tuples and scalar code.
 * Each value is released right after its last use (values used inside a
 * loop body but defined outside stay alive until the loop ends), so peak
 * memory follows the graph, not its length.
 *
 * Errors: a failing node gives FBX_ERR_RUNTIME (or the kernel's code) with
 * the source location, the op's message and the node:
 *
 *   corpus.py:12:8: aten::view: shape '[3, 5]' is invalid for input of size 14
 *     in node: %y : Tensor = aten::view(%x, %4)
 *     inside: %z : Tensor = prim::Loop(%n, %1, %x) (corpus.py:10:4), iteration 2
 *
 * Threads: an interp is immutable after create except for the per-node
 * overload caches, which are updated atomically; every run keeps its values
 * in its own frame, so one interp may be run from several threads at once.
 */
#ifndef FBX_EXEC_INTERP_H
#define FBX_EXEC_INTERP_H
#include <stdint.h>

#include "base/status.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

typedef struct fbx_interp fbx_interp;

/* Testing hook (the fuzz oracle's conditioning check, tools/fuzz_oracle.c):
 * with k != 0, every floating tensor result of a kernel the interpreter runs
 * in this process is replaced by a copy scaled by (1 + k * u), u the unit
 * roundoff of its dtype (float32 2^-24) — a few ulp of rounding at every
 * op, to measure how much a graph amplifies them. Views, in-place and
 * aliasing ops are left as they are. 0 (the default) turns it off. Not for
 * concurrent use with runs in flight. */
void fbx_interp_set_perturbation(int k);

/* Counters of one run (filled when fbx_run_opts.stats is set). */
typedef struct fbx_interp_stats {
  int64_t nodes_run;         /* nodes executed (a loop body's nodes once per iteration) */
  int64_t kernels_run;       /* of which ran a kernel from the op table */
  int64_t peak_live_tensors; /* most tensor values held in the frame at once */
} fbx_interp_stats;

/* Called after each node ran, with its outputs (borrowed: retain to keep).
 * For observers such as the profiling executor and for tests. */
typedef void (*fbx_node_observer)(void *ctx, const fbx_node *node, const fbx_ivalue *outs, int nouts);

/* Runs a node that holds a subgraph (a Subgraph attribute: fusebox::FusionGroup
 * and the like) in the interpreter's place; the interpreter itself knows
 * nothing about groups. inputs (nin) are borrowed; outputs (nout, all None on
 * entry) receive new references. An error is reported like a failing node's.
 * Without a runner such nodes fail as ops the interpreter cannot run. */
typedef fbx_status *(*fbx_group_runner)(void *ctx, const fbx_node *node, const fbx_ivalue *inputs, int nin,
                                        fbx_ivalue *outputs, int nout);

/* The autodiff tape's hooks (core/autodiff/tape.h). `before` is called
 * just before a node that mutates its first input (FBX_OPF_INPLACE rows, in
 * any block) runs, with its inputs (outs NULL, nout 0), so that values the
 * tape saved can be copied before they change; `record` after every node that
 * ran (nodes in If/Loop bodies each time they run; prim::If and prim::Loop
 * themselves too, after their blocks; nodes a run_group ran as well) with its
 * inputs and outputs. Both borrowed: retain to keep. An error stops the run
 * and is reported like a failing node's. */
typedef fbx_status *(*fbx_node_recorder)(void *ctx, const fbx_node *node, const fbx_ivalue *ins, int nin,
                                         const fbx_ivalue *outs, int nout);

typedef struct fbx_run_opts {
  uint64_t seed;              /* starting state of the run's random generator */
  fbx_node_observer observe;  /* optional */
  void *observe_ctx;
  fbx_interp_stats *stats;    /* optional: filled in by the run */
  fbx_group_runner run_group; /* optional: see above (the profiling executor's hook) */
  void *run_group_ctx;
  fbx_node_recorder before;   /* optional: see above (the autodiff tape's hooks) */
  fbx_node_recorder record;
  void *record_ctx;
} fbx_run_opts;

/* Prepare `g` for running. g must stay alive and unchanged until the interp
 * is destroyed. */
fbx_status *fbx_interp_create(fbx_interp **out, const fbx_graph *g);
void fbx_interp_destroy(fbx_interp *it); /* NULL-safe */

const fbx_graph *fbx_interp_graph(const fbx_interp *it);
static inline int fbx_interp_ninputs(const fbx_interp *it) { return fbx_graph_ninputs(fbx_interp_graph(it)); }
static inline int fbx_interp_noutputs(const fbx_interp *it) { return fbx_graph_noutputs(fbx_interp_graph(it)); }

/* Check inputs against the graph's input types without running anything
 * (run does this too). Messages name the input:
 *   "input 1 (%y.1 : Float(2, 3)): expected a float32 tensor, got int64[2, 3]" */
fbx_status *fbx_interp_check_inputs(const fbx_interp *it, const fbx_ivalue *inputs, int n);

/* Run the graph. `inputs` (n values, in graph order) are borrowed; an int
 * given for a float input is widened. `outputs` receives
 * fbx_interp_noutputs(it) new references (a graph that returns a tuple has
 * one tuple output). On error the outputs are left None. opts may be NULL. */
fbx_status *fbx_interp_run(fbx_interp *it, const fbx_ivalue *inputs, int n, fbx_ivalue *outputs,
                           const fbx_run_opts *opts);

#endif
