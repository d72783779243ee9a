#include "exec/fold.h"

#include <pthread.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/interp.h"
#include "passes/passes.h"

static fbx_value *fail_map(void *ctx, fbx_value *v) {
  (void)ctx;
  (void)v;
  return NULL; /* constants have no inputs */
}

typedef struct fold_map {
  fbx_value *const *outer; /* n's inputs */
  fbx_value **inner;       /* their clones in the scratch graph */
  int n;
} fold_map;

static fbx_value *input_map(void *ctx, fbx_value *v) {
  fold_map *m = ctx;
  for (int i = 0; i < m->n; i++)
    if (m->outer[i] == v) return m->inner[i];
  return NULL;
}

static bool foldable_type(const fbx_type *t) {
  return t->kind == FBX_TYPE_TENSOR || t->kind == FBX_TYPE_INT || t->kind == FBX_TYPE_FLOAT ||
         t->kind == FBX_TYPE_BOOL;
}

/* Can run-time value v stand in the graph for `like` as a constant? */
static bool const_ok(const fbx_value *like, const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_INT:
    case FBX_IV_FLOAT:
    case FBX_IV_BOOL: return like->type->kind != FBX_TYPE_TENSOR;
    case FBX_IV_TENSOR: return v->u.t->numel <= FBX_FOLD_MAX_NUMEL && like->type->kind == FBX_TYPE_TENSOR;
    default: return false;
  }
}

/* A prim::Constant for value v (const_ok) before `pos`, typed like `like`;
 * NULL with *st set when out of memory. */
static fbx_value *make_const(fbx_node *pos, const fbx_value *like, const fbx_ivalue *v, fbx_status **st) {
  fbx_block *b = pos->owner;
  fbx_value *r = NULL;
  switch (v->kind) {
    case FBX_IV_INT: r = fbx_insert_const_int(b, pos, v->u.i); break;
    case FBX_IV_FLOAT: r = fbx_insert_const_float(b, pos, v->u.f); break;
    case FBX_IV_BOOL: r = fbx_insert_const_bool(b, pos, v->u.b); break;
    default: break;
  }
  if (v->kind != FBX_IV_TENSOR) {
    if (!r) *st = fbx_status_nomem();
    return r;
  }
  fbx_tensor *c = NULL;
  if ((*st = fbx_tensor_contiguous(&c, v->u.t))) return NULL;
  fbx_tensor_const tc = {.dtype = c->dtype, .rank = c->ndim, .sizes = c->sizes, .data = c->data, .spelling = 3};
  fbx_node *k = fbx_node_create(pos->graph, FBX_SYM_prim_Constant, 1);
  int rc = k ? fbx_node_set_t(k, FBX_SYM_attr_value, &tc) : -1;
  fbx_tensor_release(c);
  if (rc) {
    *st = fbx_status_nomem();
    return NULL;
  }
  k->outputs[0]->type = like->type;
  fbx_node_insert_before(k, pos);
  return k->outputs[0];
}

fbx_status *fbx_fold_node(fbx_node *n, bool *folded) {
  *folded = false;
  if (n->noutputs == 0 || n->noutputs > 8 || n->ninputs > 32 || n->nblocks) return NULL;
  for (int i = 0; i < n->noutputs; i++)
    if (!foldable_type(n->outputs[i]->type)) return NULL;

  /* A scratch graph: the constants n reads, then n, returning its outputs. */
  fbx_graph *g = fbx_graph_create();
  if (!g) return fbx_status_nomem();
  fbx_value *inner[32];
  fold_map m = {n->inputs, inner, n->ninputs};
  fbx_status *st = NULL;
  fbx_interp *it = NULL;
  fbx_ivalue outs[8];
  int nouts = 0;
  for (int i = 0; i < n->ninputs; i++) {
    fbx_node *c = fbx_node_clone_into(g->block, n->inputs[i]->node, fail_map, NULL);
    if (!c) goto nomem;
    inner[i] = c->outputs[n->inputs[i]->offset];
  }
  fbx_node *copy = fbx_node_clone_into(g->block, n, input_map, &m);
  if (!copy) goto nomem;
  for (int i = 0; i < copy->noutputs; i++)
    if (fbx_block_add_return(g->block, copy->outputs[i])) goto nomem;

  /* Any failure to plan or run leaves n as it is: the run reports it. */
  if (fbx_interp_create(&it, g)) goto done_quiet;
  fbx_run_opts opts = {0};
  fbx_status *rs = fbx_interp_run(it, NULL, 0, outs, &opts);
  if (rs) {
    /* Only the bare out-of-memory is the pass's own failure; a tensor the
     * node asks for that cannot be allocated (a message with its size) is
     * the graph's, reported when the node runs. */
    bool oom = rs == fbx_status_nomem();
    fbx_status_free(rs);
    if (oom) goto nomem;
    goto done_quiet;
  }
  nouts = n->noutputs;
  for (int i = 0; i < nouts; i++) /* all or nothing: check before adding any constant */
    if (!const_ok(n->outputs[i], &outs[i])) goto done_quiet;
  fbx_value *repl[8];
  for (int i = 0; i < nouts; i++)
    if (!(repl[i] = make_const(n, n->outputs[i], &outs[i], &st))) goto done; /* out of memory */
  for (int i = 0; i < nouts; i++)
    if (fbx_value_replace_all_uses(n->outputs[i], repl[i])) {
      st = fbx_status_nomem();
      goto done;
    }
  *folded = true;
  goto done;
nomem:
  st = fbx_status_nomem();
  goto done;
done_quiet:
  st = NULL;
done:
  for (int i = 0; i < nouts; i++) fbx_iv_release(&outs[i]);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  return st;
}

static void do_register(void) { fbx_pass_set_tensor_folder(fbx_fold_node); }

void fbx_fold_register(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, do_register);
}
