/* Graph passes: dead code elimination, common subexpression elimination,
 * constant propagation, constant pooling, peephole rewrites, and the
 * pipeline that runs them.
 *
 *   fbx_status *st = fbx_pass_pipeline(g, "default");      // all of them, to a fixpoint
 *   st = fbx_pass_pipeline(g, "peephole,dce");               // these, once each, in order
 *   bool changed;
 *   st = fbx_pass_cse(g, &changed);                          // one pass
 *
 * Every pass is one verb `fbx_status *fbx_pass_NAME(fbx_graph *g, bool *changed)`:
 * it returns NULL on success (FBX_ERR_NOMEM when an allocation failed; the
 * graph is then valid but may be half optimized) and sets *changed (when
 * changed is not NULL) to whether it modified the graph. Passes work on the
 * graph's blocks recursively; they do not look into subgraphs held in
 * attributes (fusion groups), which are optimized when they are built.
 *
 * Environment:
 *   FUSEBOX_DISABLE_PASSES=cse,peephole   comma list of pass names to skip
 *                                         (`all` skips every pass). A skipped
 *                                         pass returns NULL with changed=false
 *                                         and logs that it was skipped. Read on
 *                                         every call, so tests may change it.
 *   FUSEBOX_LOG=passes                    each pass logs what it did
 *                                         ("dce: removed 3 nodes"); the pipeline
 *                                         prints the graph after every pass that
 *                                         changed it.
 *   FUSEBOX_VERIFY=1                      the pipeline runs the verifier after
 *                                         every pass (always on in builds
 *                                         without NDEBUG).
 *
 * What each pass does, and deliberately does not do:
 *
 *   dce        Removes nodes whose outputs are unused and that have no side
 *              effects (fbx_node_has_side_effects), innermost blocks first.
 *              Removes unused outputs of prim::If (with the matching return of
 *              both blocks) and loop-carried values of prim::Loop whose output
 *              is unused and whose block parameter only feeds computations that
 *              lead nowhere but back into the same carried value. Never
 *              removes graph inputs or outputs.
 *   cse        Merges a node into an equal one (kind, inputs, attributes,
 *              output types) that dominates it: defined earlier in the same or
 *              an enclosing block. Only pure, deterministic nodes without
 *              blocks or subgraphs. prim::ListConstruct/DictConstruct merge
 *              only when the graph has no mutation at all; when it has
 *              (fbx_graph_has_mutation) only nodes whose inputs and outputs
 *              cannot be written by the graph's mutation merge: values of
 *              immutable types (int, float, bool, str, None, Device, tuples
 *              and optionals of those) always qualify, and tensors do when
 *              the graph mutates only lists or dicts (fbx_graph_mutation_mask). Equal
 *              prim::Constant nodes merge too (floats compared by bits, so NaN
 *              merges with the same NaN, and -0.0 stays apart from 0.0).
 *   constprop  Folds scalar operations whose inputs are constants (int, float,
 *              bool, str, None) with TorchScript's semantics: aten::add/sub/mul
 *              (int*int -> int, wrapping like int64; anything with a float ->
 *              float; str + str), aten::div (always float), aten::floordiv
 *              and aten::remainder (Python floor semantics), aten::pow,
 *              aten::neg, aten::Int/Float/Bool, comparisons, aten::__not__,
 *              __and__/__or__/__xor__, __is__/__isnot__, prim::min/max of two
 *              scalars, aten::len of a str. Operations that would raise at run
 *              time (division by zero, int overflow in floordiv, a negative
 *              int exponent with an int result) are left alone so the error
 *              still happens at run time. It also folds without constant
 *              inputs: aten::len and aten::__getitem__ (constant index) of a
 *              prim::ListConstruct that is never mutated, prim::TupleIndex of
 *              a prim::TupleConstruct, aten::dim/aten::size(x, d)/aten::size(x)
 *              and prim::dtype/prim::device from known tensor types. Tensor
 *              computations fold only through the hook below. New constants
 *              are placed where the folded node was (constpool hoists them).
 *   constpool  Moves every prim::Constant to the start of the graph's top
 *              block, hoisting it out of nested blocks, in order of first
 *              occurrence, and merges equal ones (same type, same attribute;
 *              constants that the graph's mutation could write — tensors when
 *              a tensor is written in place, lists when a list is — are not
 *              merged). Constants of named types (Function — the
 *              fallback function of a guarded group —, class instances) are
 *              left where they are.
 *   peephole   Local rewrites, each counted and logged: aten::t(aten::t(x)) ->
 *              x; aten::contiguous(x[, 0]) -> x when x's type has known sizes
 *              and contiguous strides; prim::TupleUnpack(prim::TupleConstruct)
 *              and prim::TupleIndex(prim::TupleConstruct, const); prim::ListUnpack
 *              (prim::ListConstruct) when the list is never mutated; prim::If
 *              on a constant condition -> the taken block inlined; __is__ /
 *              __isnot__ decided by types (None against a non-optional type);
 *              prim::unchecked_cast of a non-optional value -> the value;
 *              prim::unchecked_cast of a constant other than None -> that
 *              constant when it is typed int/float/bool/str/Device, else a
 *              new constant of the cast type (Scalar and number: of the
 *              value's kind), so that `aten::ge(%x, %c)` in a gradient
 *              formula sees a constant scalar (fusers want one). It
 *              does not rewrite aten::expand_as(x, x) (the result is a new view,
 *              not x) and it removes only the nodes it rewrote, leaving their
 *              now-unused producers to dce.
 *   inline     prim::CallFunction of a known torch.nn.functional function
 *              (a `Function` constant named relu, dropout, softmax, layer_norm,
 *              batch_norm, embedding, mse_loss, cross_entropy, ...: the table
 *              in inline.c) -> the aten op that function calls, with its
 *              arguments rearranged and defaults made explicit (the in-place
 *              variant when `inplace` is a constant true). Calls whose
 *              arguments it needs as constants and are not, and functions it
 *              does not know, stay calls (the interpreter reports them).
 *   rtquery    The run-time queries of scripted nn.Modules replaced by the
 *              answers fusebox's kernels give (ops/list_runtime.h), where
 *              they are known without running: is_autocast_enabled -> false,
 *              is_grad_enabled -> true, prim::is_nested/is_cuda -> false,
 *              prim::device -> "cpu", aten::str of a Device constant,
 *              aten::find on constants, prim::requires_grad and
 *              aten::is_floating_point of a tensor whose type knows its
 *              dtype, and aten::any/aten::all of a list built in the block
 *              whose known elements decide the answer (rtquery.c). With
 *              peephole and constprop this drops the guarded fast paths of
 *              nn.MultiheadAttention / nn.TransformerEncoderLayer once the
 *              queries are known.
 *
 * The default pipeline (see pipeline.c) is inline, then
 *   rtquery, peephole, constprop, inline, dce, cse, constpool, dce
 * repeated while any pass changed something, at most 8 rounds.
 */
#ifndef FBX_PASSES_PASSES_H
#define FBX_PASSES_PASSES_H
#include <stdbool.h>

#include "base/status.h"
#include "ir/graph.h"

fbx_status *fbx_pass_dce(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_cse(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_constprop(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_constpool(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_peephole(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_inline(fbx_graph *g, bool *changed);
fbx_status *fbx_pass_rtquery(fbx_graph *g, bool *changed);
/* Does the inline pass know the torch.nn.functional function `name`? */
bool fbx_pass_inline_knows(const char *name);

/* Run a list of passes. `list` is "default" (or NULL): the default pipeline
 * iterated to a fixpoint; or a comma-separated list of pass names
 * ("peephole,dce"), each run once in order ("default" may appear as an
 * item). An unknown name gives FBX_ERR_INVALID_ARG, listing the valid names,
 * before anything runs. Honours FUSEBOX_DISABLE_PASSES, FUSEBOX_LOG and
 * FUSEBOX_VERIFY as described above; a verifier failure is returned as its
 * FBX_ERR_VERIFY status, prefixed with the pass that broke the graph. */
fbx_status *fbx_pass_pipeline(fbx_graph *g, const char *list);
/* The same, also reporting whether any pass changed the graph. */
fbx_status *fbx_pass_run_list(fbx_graph *g, const char *list, bool *changed);

/* FUSEBOX_DISABLE_PASSES (a comma list of dce, cse, constprop, constpool,
 * peephole, or all) and FUSEBOX_VERIFY (0 or 1): NULL, or a status naming
 * the variable and the bad value. fbx_executor_create and the CLI refuse
 * bad values with it; the pipeline itself ignores unknown pass names. */
fbx_status *fbx_pass_check_env(void);
/* Whether FUSEBOX_DISABLE_PASSES names `pass` (or `all`). */
bool fbx_pass_disabled(const char *pass);

/* ---- effects ---------------------------------------------------------------
 *
 * The rules live in effects.c, in one place; when the op table exists it
 * becomes their source of truth.
 *
 * Side effects: prim::RaiseException, prim::Print, prim::SetAttr,
 * prim::profile, prim::Enter/Exit, prim::rpc_async, prim::CallFunction and
 * prim::CallMethod (unknown code), aten::warn, aten::manual_seed, aten::save,
 * every mutating node (below), nodes that have no outputs (they exist only for
 * their effect; control flow excepted), nodes whose blocks or subgraph hold a
 * side effect, and nodes of namespaces other than aten, prim and fusebox
 * (unknown code, assumed to have effects). prim::If and prim::Loop are pure
 * when their blocks are; fusion groups (fusebox::FusionGroup,
 * prim::FusionGroup, prim::TensorExprGroup, prim::CudaFusionGroup) and
 * prim::DifferentiableGraph are pure when their subgraphs are.
 *
 * Mutation: in-place aten ops (unqualified name ends in `_` but not `__`:
 * aten::add_, aten::copy_; not aten::__and__), list and dict mutation
 * (aten::append, _set_item, __setitem__, insert, pop, clear, extend, remove,
 * reverse, update, setdefault, popitem, __delitem__, Delete, and aten::sort
 * of a list — the form without outputs), the augmented assignments
 * aten::__iand__/__ior__/__ixor__/__ilshift__/__irshift__, prim::SetAttr.
 *
 * Nondeterminism: aten::rand, randn, rand_like, randn_like, randint,
 * randint_like, randperm, bernoulli, normal, poisson, multinomial,
 * native_dropout, rrelu (unless `training` is a constant false), the dropout
 * family (dropout, feature_dropout, alpha_dropout, feature_alpha_dropout)
 * unless the `train` input is a constant false, and the random in-place fills
 * (uniform_, normal_, bernoulli_, random_, exponential_, geometric_, cauchy_,
 * log_normal_).
 */
bool fbx_node_has_side_effects(const fbx_node *n);
bool fbx_node_is_nondeterministic(const fbx_node *n);
/* Does n write to one of its inputs (in place, or a container it is given)? */
bool fbx_node_is_mutating(const fbx_node *n);
/* Does any node of g (in any block) mutate, or run unknown code (another
 * namespace, prim::CallFunction/CallMethod) that might? */
bool fbx_graph_has_mutation(const fbx_graph *g);
/* What a graph's mutation can reach, by kind of mutable object: a type-based
 * alias analysis. Writing a list (aten::append) does not write the tensors it
 * holds; writing a tensor in place may write any tensor (views); unknown code
 * and object attributes may write anything. */
enum { FBX_MUT_TENSOR = 1, FBX_MUT_LIST = 2, FBX_MUT_DICT = 4, FBX_MUT_OTHER = 8, FBX_MUT_ALL = 15 };
unsigned fbx_graph_mutation_mask(const fbx_graph *g);
/* Could a value of type t (or something it holds) be written, given the mask? */
bool fbx_type_may_be_written(const fbx_type *t, unsigned mask);
/* Conservative: false only when nothing can mutate the value v: nothing in
 * the graph writes objects of v's kind, or every user of v neither mutates
 * nor has side effects, nor is control flow or a block return, nor outputs a
 * value that could alias v (a list, dict, tuple of those, or an unknown type). */
bool fbx_value_may_be_mutated(const fbx_value *v);

/* ---- tensor folding hook --------------------------------------------------
 *
 * constprop folds scalars itself. For any other node whose inputs are all
 * constants (prim::Constant outputs) and that is pure, deterministic, has no
 * blocks and no output that may be mutated, it calls the registered folder
 * (the reference interpreter registers itself). The folder either leaves the
 * graph as it is and sets *folded = false, or inserts prim::Constant nodes
 * (before n, in n's block) for all of n's outputs, moves every use of each
 * output to its constant and sets *folded = true; constprop then destroys n.
 * An error status aborts the pass and is returned by it. Passing NULL
 * unregisters. Not thread-safe against concurrent passes: register once at
 * start-up.
 */
typedef fbx_status *(*fbx_fold_fn)(fbx_node *n, bool *folded);
void fbx_pass_set_tensor_folder(fbx_fold_fn fn);

#endif
