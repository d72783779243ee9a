/* The autodiff tape: what a forward run that needs gradients records, and
 * the backward pass over it (internal API; the executor's gradient mode,
 * core/exec/grad.c, is its user, see exec/executor.h).
 *
 *   fbx_tape *t;
 *   FBX_TRY(fbx_tape_create(&t));
 *   FBX_TRY(fbx_tape_watch(t, &inputs[0]));          // x requires grad
 *   ... run the graph; for each differentiable unit that ran (one node, or a
 *   ... DifferentiableGraph's forward graph):
 *   FBX_TRY(fbx_tape_record(t, fn, ins, diff, nin, outs, nout, saved, nsaved, false));
 *   fbx_ivalue gin[1];
 *   FBX_TRY(fbx_tape_backward(t, outs, grad_outs, nflat, &inputs[0]..., gin, 1));
 *   fbx_tape_destroy(t);
 *
 * Gradients are keyed by tensor *identity*: the fbx_tensor object, not its
 * value id in some graph. prim::If, prim::Loop, list and tuple nodes only move
 * the same tensor objects around, so the tape never sees them and needs no
 * formulas for control flow. Each tracked tensor has a current *slot* (its
 * version): recording a unit gives each of its floating outputs a new slot,
 * even when the output is an input object (an in-place op returns its
 * mutated self), so gradients never mix versions. The tape retains every
 * tensor it tracks, so an address cannot be reused by another tensor while
 * the tape lives.
 *
 * In-place ops: fbx_tape_before_inplace runs before one mutates its first
 * input. It copies every saved value that shares memory with that input
 * (so earlier entries keep what they saw) and keeps a copy of the input
 * itself for the in-place entry to save. An in-place write into a view of
 * a tracked tensor (w[0].zero_(), w[:, 0][idx] = v) rebases the view's
 * *base* as PyTorch's CopySlices does: the base is the largest contiguous
 * tracked tensor holding the view's memory (of equal ones the oldest, so a
 * full slice is not taken for its base); after the in-place entry an entry
 * gives the base a new version whose gradient goes to its old version with
 * the view's region zeroed and, that region, to the view's new version (and
 * from there through the in-place op's formula). Other tracked views of the
 * base that overlap the write are not rebased: their versions are marked so
 * that a gradient through them fails with a clear error instead of being
 * wrong. Writes into memory a tracked tensor shares in any other way (no
 * contiguous base holds the view) are refused with an error naming the node.
 *
 * A unit whose gradient is not known (no formula) marks its floating outputs
 * with the reason (fbx_tape_mark_no_grad); backward fails with that reason
 * only if a defined gradient reaches one of them.
 *
 * Threads: a tape belongs to one forward run and its backward; units (the
 * fbx_tape_fn objects) may be shared by tapes on several threads.
 */
#ifndef FBX_AUTODIFF_TAPE_H
#define FBX_AUTODIFF_TAPE_H
#include <stdbool.h>

#include "base/status.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

/* A differentiable unit as the tape sees it. Embedded as the first member
 * of the unit's own struct; must outlive every tape that recorded it. */
typedef struct fbx_tape_fn fbx_tape_fn;
struct fbx_tape_fn {
  /* Input gradients from output gradients. gout[j] (nout) is a tensor, a
   * Tensor[] list (every element defined) or None (undefined); outs are the
   * unit's outputs as the forward gave them (for shapes); saved (nsaved) are
   * the values the forward saved. gin (nin, all None on entry) receives new
   * references: a tensor, a Tensor[] list (elements may be None), or None. */
  fbx_status *(*backward)(fbx_tape_fn *fn, const fbx_ivalue *gout, const fbx_ivalue *outs, int nout,
                          const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin);
  const char *what; /* "aten::mul (corpus.py:3:8)", for messages */
};

typedef struct fbx_tape fbx_tape;

fbx_status *fbx_tape_create(fbx_tape **out);
/* Frees every recorded entry and saved value (NULL-safe). */
void fbx_tape_destroy(fbx_tape *t);

/* v (a floating tensor) requires grad from now on: a graph input. */
fbx_status *fbx_tape_watch(fbx_tape *t, const fbx_ivalue *v);
/* Does v (a tensor, or a list or tuple holding one) require grad? */
bool fbx_tape_requires_grad(const fbx_tape *t, const fbx_ivalue *v);

/* Call before node n mutates ins[0] in place (ins: its nin inputs). Fails
 * with FBX_ERR_UNSUPPORTED when ins[0] shares memory with a tensor that
 * requires grad and no contiguous tracked base holds it. The write must then
 * be recorded (fbx_tape_record with inplace) or marked (fbx_tape_mark_constant,
 * fbx_tape_mark_no_grad): each rebases the view's base, if any. */
fbx_status *fbx_tape_before_inplace(fbx_tape *t, const fbx_node *n, const fbx_ivalue *ins, int nin);

/* Record one unit that ran: ins (nin, borrowed) are its inputs; diff[i]
 * (NULL: all) says whether input i may receive a gradient; outs (nout,
 * borrowed) its outputs; saved (nsaved) the values its backward needs, moved
 * into the tape (the array is left None). `inplace`: the unit mutated ins[0]
 * (fbx_tape_before_inplace was called for it; its copy of ins[0] is what the
 * entry sees as input 0). Floating tensor outputs (and list elements) then
 * require grad. */
fbx_status *fbx_tape_record(fbx_tape *t, fbx_tape_fn *fn, const fbx_ivalue *ins, const bool *diff, int nin,
                            const fbx_ivalue *outs, int nout, fbx_ivalue *saved, int nsaved, bool inplace);
/* The floating tensors among outs (nout) require grad but have no gradient:
 * `reason` (copied) is the backward's error should a gradient reach them. */
fbx_status *fbx_tape_mark_no_grad(fbx_tape *t, const fbx_ivalue *outs, int nout, const char *reason);

/* A unit whose formula gives no gradient for any input that requires grad
 * (zeros_like, x.zero_(), a comparison) ran: its outputs do not require
 * grad, as in PyTorch, even an in-place op's self (its later versions see no
 * gradient from before the write). Nothing is recorded. */
fbx_status *fbx_tape_mark_constant(fbx_tape *t, const fbx_ivalue *outs, int nout);

/* Replace every saved value that shares memory with x by a copy (a tensor
 * saved by several entries gets one copy): x's memory is about to go away
 * or change (fbx_executor_forward borrows its inputs for the call only).
 * *ncopied (may be NULL) receives the number of copies; 0 means the tape
 * keeps nothing of x's memory that backward reads: the tensors it tracks
 * are keys (identity, sizes, dtype), their data is never read. */
fbx_status *fbx_tape_unshare_saved(fbx_tape *t, const fbx_tensor *x, int *ncopied);

/* Entries recorded so far (for tests and stats). */
int fbx_tape_nentries(const fbx_tape *t);

/* The backward pass. outs (n, flat: no tuples) are the graph's outputs as
 * the forward returned them, gout (n) their gradients (None: undefined; a
 * tensor of the output's shape otherwise). inputs (nin) are the watched
 * values whose gradients are wanted: gin[i] receives a new reference to the
 * gradient of inputs[i] as it was when watched, or None when no gradient
 * reaches it. Saved values are released as the pass goes; a tape runs
 * backward once (a second call fails with FBX_ERR_INVALID_ARG). */
fbx_status *fbx_tape_backward(fbx_tape *t, const fbx_ivalue *outs, const fbx_ivalue *gout, int n,
                              const fbx_ivalue *inputs, fbx_ivalue *gin, int nin);

#endif
