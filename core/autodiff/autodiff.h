/* AutoDiff: gradient formulas, DifferentiableGraph creation, and the
 * forward/backward split (internal API; the runtime that uses it is the
 * executor's gradient mode, see exec/executor.h).
 *
 * The pieces, in the order the executor uses them:
 *
 *   1. fbx_autodiff_requires_grad / fbx_autodiff_create_subgraphs
 *      (diffgraph.c): given which graph inputs require gradients, gather
 *      differentiable nodes into prim::DifferentiableGraph nodes (Subgraph
 *      attribute, like fusion groups), before fusion.
 *   2. fbx_autodiff_differentiate (differentiate.c): one DifferentiableGraph
 *      subgraph S becomes a forward graph F (S plus the intermediates the
 *      backward needs as extra outputs) and a backward graph B (output
 *      gradients and saved values in, input gradients out). Both are plain
 *      graphs: the executor runs each through its own profiling executor, so
 *      the selected fuser fuses them. With a fuser, saved values that are
 *      cheap pointwise functions of S's inputs are recomputed in B instead
 *      when that moves fewer bytes (recompute.c).
 *   3. fbx_grad_build (formula.c, formulas_*.h): the per-op gradient formulas
 *      that step 2 instantiates node by node, in reverse order. Most are data:
 *      TorchScript-IR text templates (like PyTorch's symbolic scripts); the
 *      rest are small builders in C.
 *
 * The same machinery serves single nodes: the executor's eager tape (nodes
 * outside any DifferentiableGraph, e.g. inside loops or below the minimum
 * size) differentiates a one-node subgraph and runs its backward graph in
 * the interpreter.
 *
 * Undefined gradients: a NULL gradient value means "zero, not materialized".
 * Formulas skip work for NULL output gradients where they can; they
 * materialize zeros only where an op with several outputs gets gradients for
 * some of them (chunk, split, unbind, max.dim's values).
 */
#ifndef FBX_AUTODIFF_AUTODIFF_H
#define FBX_AUTODIFF_AUTODIFF_H
#include <stdbool.h>

#include "base/status.h"
#include "ir/graph.h"

/* ---- gradient formulas (formula.c) ------------------------------------------------- */

/* Where fbx_grad_build puts the nodes it creates and how it reaches forward
 * values. */
typedef struct fbx_grad_env {
  fbx_graph *graph; /* the backward graph being built */
  fbx_block *block; /* new nodes are appended at the end of this block */
  /* The backward-graph value standing for forward value v, an input or an
   * output of the node being differentiated. Called only for the values the
   * formula actually uses, so the caller saves exactly those (and copies
   * constants instead of saving them). */
  fbx_status *(*fwd_value)(void *ctx, const fbx_value *v, fbx_value **out);
  void *ctx;
} fbx_grad_env;

/* Does n (its overload resolved from its IR types) have a gradient formula? */
bool fbx_grad_has_formula(const fbx_node *n);
/* Does op-table row op_id (FBX_OP_*) have a gradient formula? (For the
 * test that walks the table; nodes use fbx_grad_has_formula.) */
bool fbx_grad_op_has_formula(int op_id);
/* May n's formula give a gradient for input i? (false for integer/bool
 * inputs, dims, sizes, indices, ...) */
bool fbx_grad_input_differentiable(const fbx_node *n, int i);

/* Append to env->block the gradient of node n (a node of the forward graph).
 * grad_outputs[j] is the backward-graph value of the gradient of n's output
 * j, or NULL (zero). On return grad_inputs[i] (n->ninputs entries) is the
 * gradient of input i, or NULL where there is none. A Tensor[] output or
 * input has a Tensor[] gradient value. Broadcasting is undone (the gradient
 * has the input's sizes). Errors: FBX_ERR_UNSUPPORTED "no gradient formula
 * for aten::foo.bar" for nodes without one. */
fbx_status *fbx_grad_build(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                           fbx_value **grad_inputs);

/* ---- which values need gradients, DifferentiableGraph creation (diffgraph.c) -------- */

/* For graph g whose inputs i require gradients where input_requires_grad[i]:
 * out[value id] (fbx_malloc'd, g->next_value_id entries) is true for every
 * floating-point tensor value (or list of them) that depends differentiably
 * on such an input, through blocks (prim::If outputs, prim::Loop carried
 * values) included. */
fbx_status *fbx_autodiff_requires_grad(const fbx_graph *g, const bool *input_requires_grad, bool **out);

/* Gather the differentiable nodes of g that touch values requiring gradients
 * into prim::DifferentiableGraph nodes (in every block; no control flow,
 * side effects or random ops inside; convex; alias-safe: no in-place op or view of a
 * value that is mutated elsewhere), dropping regions of fewer than
 * min_size nodes (only nodes with a formula count: not constants, nor the
 * list/tuple construct/unpack nodes pulled in with them) unless the region is
 * one node whose backward alone has FBX_AUTODIFF_SOLO_BACKWARD_OPS compute
 * ops or more (layer_norm, softmax, gelu, losses). Deterministic and
 * idempotent (a second call creates nothing). *ncreated (may be NULL) gets
 * the count. */
#define FBX_AUTODIFF_SOLO_BACKWARD_OPS 4
fbx_status *fbx_autodiff_create_subgraphs(fbx_graph *g, const bool *input_requires_grad, int min_size,
                                          int *ncreated);

/* For `explain`: one line per node of g (grouped by create_subgraphs) left
 * outside the DifferentiableGraphs, with why ("needs no gradient", "no
 * gradient formula", "writes in place (eager tape)", control flow, ...).
 * Constants and list/tuple plumbing are not listed. */
struct fbx_strbuf;
fbx_status *fbx_autodiff_explain_outside(const fbx_graph *g, const bool *input_requires_grad, struct fbx_strbuf *out);

/* ---- the forward/backward split (differentiate.c) -------------------------------- */

/* Where a saved value comes from at run time. */
typedef struct fbx_saved_ref {
  bool from_forward; /* false: S's input `index`; true: F's output `index` */
  int index;
} fbx_saved_ref;

typedef struct fbx_gradient {
  /* F: S's inputs -> S's outputs, then the saved intermediates. */
  fbx_graph *forward;
  int nreal_outputs; /* S's output count */
  /* B: inputs are one gradient per S output whose gradient is defined (per
   * the mask differentiate was given, in output order; a Tensor[] output
   * gets a Tensor[] gradient), then the nsaved saved values in order;
   * outputs are ngrads gradients. */
  fbx_graph *backward;
  int nsaved;
  fbx_saved_ref *saved;
  int ngrads;
  int *grad_of; /* B's output k is the gradient of S's input grad_of[k] */
  /* save versus recompute (differentiate_ex) */
  bool recompute;       /* made with recomputation allowed (respecialize does the same) */
  int nrecomputed;      /* values B computes again instead of reading them saved */
  int nrecompute_nodes; /* the nodes that takes in B */
} fbx_gradient;

/* Differentiate subgraph S (a DifferentiableGraph's Subgraph or a one-node
 * graph) with respect to its inputs i where input_requires_grad[i], given
 * which output gradients will be defined (output_grad_defined NULL: all).
 * S is not modified. */
fbx_status *fbx_autodiff_differentiate(fbx_gradient **out, const fbx_graph *S, const bool *input_requires_grad,
                                       const bool *output_grad_defined);
/* The same; with `recompute`, a value B needs that is a cheap pointwise
 * function of S's inputs (pointwise ops and constants all the way down) is
 * computed again in B instead of saved when that moves fewer bytes in a
 * fused forward and backward (the rule: autodiff/recompute.c). Fewer saved
 * values, a larger B. */
fbx_status *fbx_autodiff_differentiate_ex(fbx_gradient **out, const fbx_graph *S, const bool *input_requires_grad,
                                          const bool *output_grad_defined, bool recompute);
void fbx_gradient_free(fbx_gradient *g); /* NULL-safe */

/* A backward graph for base's forward (same saved values, same B input
 * layout rules) but another set of defined output gradients: (*out)->forward
 * is NULL (base's forward serves), saved/nsaved equal base's. Fails with
 * FBX_ERR_UNSUPPORTED when it would need a value base did not save; the
 * caller then materializes zeros and uses base->backward. */
fbx_status *fbx_autodiff_respecialize(fbx_gradient **out, const fbx_graph *S, const fbx_gradient *base,
                                      const bool *input_requires_grad, const bool *output_grad_defined);

#endif
