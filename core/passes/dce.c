/* Dead code elimination.
 *
 * A backwards sweep over each block: a node goes when none of its outputs is
 * used and it has no side effects. Control flow gets two extra rules:
 * unused outputs of prim::If are dropped together with the matching return
 * of both blocks, and a loop-carried value of prim::Loop is dropped when its
 * output is unused and its block parameter feeds nothing live (only, perhaps,
 * the computation of its own next value). */
#include "base/alloc.h"
#include "base/log.h"
#include "base/ptrmap.h"
#include "passes/passes.h"
#include "passes/passutil.h"

typedef struct dce_stats {
  int nodes, if_outputs, loop_carried;
} dce_stats;

static int count_nodes(const fbx_node *n) {
  int k = 1;
  for (int b = 0; b < n->nblocks; b++)
    for (const fbx_node *m = fbx_block_first(n->blocks[b]); m; m = m->next) k += count_nodes(m);
  return k;
}

static void trim_if_outputs(fbx_node *n, dce_stats *st) {
  for (int i = n->noutputs - 1; i >= 0; i--) {
    if (n->outputs[i]->nuses) continue;
    fbx_block_erase_return(n->blocks[0], i);
    fbx_block_erase_return(n->blocks[1], i);
    fbx_node_erase_output(n, i);
    st->if_outputs++;
  }
}

/* ---- loop-carried values ------------------------------------------------------ */

/* Mark every value that nodes nested in n read (values of enclosing scopes
 * among them). */
static int mark_inputs_deep(fbx_ptrmap *live, const fbx_node *n) {
  for (int i = 0; i < n->ninputs; i++)
    if (fbx_ptrmap_put(live, n->inputs[i], (void *)n->inputs[i])) return -1;
  for (int b = 0; b < n->nblocks; b++)
  {
    for (const fbx_node *m = fbx_block_first(n->blocks[b]); m; m = m->next)
      if (mark_inputs_deep(live, m)) return -1;
    if (mark_inputs_deep(live, n->blocks[b]->ret)) return -1;
  }
  return 0;
}

/* Values of the loop body that live computations read, given which carried
 * slots are live (their next value is needed). Nested nodes count as a whole. */
static int body_liveness(fbx_ptrmap *live, const fbx_block *body, const bool *slot_live, int ncarried) {
  fbx_ptrmap_clear(live);
  const fbx_node *ret = body->ret;
  if (fbx_ptrmap_put(live, ret->inputs[0], (void *)ret->inputs[0])) return -1;
  for (int k = 0; k < ncarried; k++)
    if (slot_live[k] && fbx_ptrmap_put(live, ret->inputs[k + 1], (void *)ret->inputs[k + 1])) return -1;
  for (const fbx_node *n = fbx_block_last(body); n; n = n->prev) {
    bool is_live = fbx_node_has_side_effects(n);
    for (int o = 0; o < n->noutputs && !is_live; o++) is_live = fbx_ptrmap_has(live, n->outputs[o]);
    if (is_live && mark_inputs_deep(live, n)) return -1;
  }
  return 0;
}

/* Point the return of every dead carried slot at its own parameter, so the
 * computation of its next value becomes dead; the slot itself goes once its
 * parameter has no other use (drop_passthrough_slots). */
static fbx_status *cut_dead_slots(fbx_node *loop, bool *changed) {
  int ncarried = loop->noutputs;
  fbx_block *body = loop->blocks[0];
  if (ncarried == 0) return NULL;
  bool *slot_live = fbx_calloc((size_t)ncarried, sizeof *slot_live);
  fbx_ptrmap live = {0};
  if (!slot_live) return fbx_status_nomem();
  for (int k = 0; k < ncarried; k++) slot_live[k] = loop->outputs[k]->nuses > 0;
  for (bool grew = true; grew;) {
    grew = false;
    if (body_liveness(&live, body, slot_live, ncarried)) goto oom;
    for (int k = 0; k < ncarried; k++)
      if (!slot_live[k] && fbx_ptrmap_has(&live, fbx_block_param(body, k + 1))) slot_live[k] = grew = true;
  }
  for (int k = 0; k < ncarried; k++) {
    fbx_value *param = fbx_block_param(body, k + 1);
    if (slot_live[k] || fbx_block_return(body, k + 1) == param) continue;
    fbx_node_set_input(body->ret, k + 1, param);
    if (fbx_block_return(body, k + 1) != param) goto oom;
    *changed = true;
  }
  fbx_ptrmap_free(&live);
  fbx_free(slot_live);
  return NULL;
oom:
  fbx_ptrmap_free(&live);
  fbx_free(slot_live);
  return fbx_status_nomem();
}

static void drop_passthrough_slots(fbx_node *loop, dce_stats *st) {
  fbx_block *body = loop->blocks[0];
  for (int k = loop->noutputs - 1; k >= 0; k--) {
    fbx_value *param = fbx_block_param(body, k + 1);
    if (loop->outputs[k]->nuses || fbx_block_return(body, k + 1) != param || param->nuses != 1) continue;
    fbx_block_erase_return(body, k + 1);
    fbx_block_erase_param(body, k + 1);
    fbx_node_remove_input(loop, k + 2);
    fbx_node_erase_output(loop, k);
    st->loop_carried++;
  }
}

static bool is_loop(const fbx_node *n) {
  return n->kind == FBX_SYM_prim_Loop && n->nblocks == 1 && n->ninputs == n->noutputs + 2 &&
         fbx_block_nparams(n->blocks[0]) == n->noutputs + 1 &&
         fbx_block_nreturns(n->blocks[0]) == n->noutputs + 1;
}

static bool is_if(const fbx_node *n) {
  return n->kind == FBX_SYM_prim_If && n->nblocks == 2 &&
         fbx_block_nreturns(n->blocks[0]) == n->noutputs &&
         fbx_block_nreturns(n->blocks[1]) == n->noutputs;
}

/* ---- the sweep ------------------------------------------------------------------ */

static fbx_status *dce_block(fbx_block *b, dce_stats *st, bool *loop_changed) {
  for (fbx_node *n = fbx_block_last(b), *prev; n; n = prev) {
    prev = n->prev;
    if (is_if(n)) trim_if_outputs(n, st);
    if (is_loop(n)) FBX_TRY(cut_dead_slots(n, loop_changed));
    for (int i = 0; i < n->nblocks; i++) FBX_TRY(dce_block(n->blocks[i], st, loop_changed));
    if (is_loop(n)) drop_passthrough_slots(n, st);
    if (fbx_passutil_has_uses(n) || fbx_node_has_side_effects(n)) continue;
    st->nodes += count_nodes(n);
    fbx_node_destroy(n);
  }
  return NULL;
}

fbx_status *fbx_pass_dce(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("dce", changed)) return NULL;
  dce_stats st = {0};
  bool loop_changed = false;
  fbx_status *err = dce_block(g->block, &st, &loop_changed);
  bool any = st.nodes || st.if_outputs || st.loop_carried || loop_changed;
  if (changed) *changed = any;
  if (any)
    fbx_log(FBX_LOG_PASSES, "dce: removed %d nodes, %d prim::If outputs, %d loop-carried values",
            st.nodes, st.if_outputs, st.loop_carried);
  return err;
}
