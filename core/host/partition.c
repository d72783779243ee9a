/* Partition: ask the plugin for groups, validate each proposal, and turn
 * the valid ones into fusebox::FusionGroup nodes.
 *
 * Proposals are taken in the order the plugin made them and each is checked
 * against the graph as it is at that moment (earlier accepted groups already
 * contracted into their group nodes), so accepting one group can never make
 * the graph cyclic through another. Every node pointer a plugin hands back is
 * first looked up in the set of the graph's nodes (and of nodes already moved
 * into groups) before it is dereferenced, so NULLs, nodes of other graphs and
 * stale nodes are rejected instead of crashing the host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/ptrmap.h"
#include "host/hostimpl.h"

static int collect_nodes(fbx_ptrmap *set, const fbx_block *b) {
  if (fbx_ptrmap_put(set, b->param, (void *)b->param) || fbx_ptrmap_put(set, b->ret, (void *)b->ret)) return -1;
  int count = 0;
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (fbx_ptrmap_put(set, n, n)) return -1;
    count++;
    for (int i = 0; i < n->nblocks; i++) {
      int k = collect_nodes(set, n->blocks[i]);
      if (k < 0) return -1;
      count += k;
    }
  }
  return count;
}

static int cmp_topo(const void *a, const void *b) {
  const fbx_node *x = *(fbx_node *const *)a, *y = *(fbx_node *const *)b;
  return x->topo < y->topo ? -1 : x->topo > y->topo;
}

/* Scalars, None, strings, devices and lists are compiled into the kernel,
 * not passed to it (as PyTorch does); tensor constants stay inputs. */
static bool pullable_const(const fbx_value *v) {
  if (v->node->kind != FBX_SYM_prim_Constant || v->node->noutputs != 1) return false;
  const fbx_attr *a = fbx_node_attr(v->node, FBX_SYM_attr_value);
  if (a && (a->kind == FBX_ATTR_TENSOR || a->kind == FBX_ATTR_GRAPH)) return false;
  switch (v->type->kind) {
  case FBX_TYPE_INT:
  case FBX_TYPE_FLOAT:
  case FBX_TYPE_BOOL:
  case FBX_TYPE_NONE:
  case FBX_TYPE_STR:
  case FBX_TYPE_DEVICE:
    return true;
  case FBX_TYPE_LIST:
    return v->type->nelems == 1 && v->type->elems[0]->kind != FBX_TYPE_TENSOR;
  default:
    return false;
  }
}

/* A constant non-tensor list: prim::ListConstruct of pullable constants
 * (`int[]` dims of a reduction, after CSE often shared by several groups).
 * Cloned into every group that uses it, with its constants. */
static bool const_list(const fbx_value *v) {
  const fbx_node *n = v->node;
  if (n->kind != FBX_SYM_prim_ListConstruct || n->noutputs != 1 || n->nblocks) return false;
  if (v->type->kind != FBX_TYPE_LIST || v->type->nelems != 1 || v->type->elems[0]->kind == FBX_TYPE_TENSOR)
    return false;
  for (int i = 0; i < n->ninputs; i++)
    if (!pullable_const(n->inputs[i])) return false;
  return true;
}

/* A node a proposal may name but that the host clones into each group
 * instead (so that sharing it never gives a group a list or scalar output). */
static bool clone_not_move(const fbx_node *n) {
  return n->noutputs == 1 && (pullable_const(n->outputs[0]) || const_list(n->outputs[0]));
}

static fbx_value *no_inputs(void *ctx, fbx_value *v) {
  (void)ctx;
  (void)v;
  return NULL;
}

/* Inputs of a list's clone: the clones of its constants, in order. */
typedef struct list_map {
  const fbx_node *list;
  fbx_value **clones;
} list_map;
static fbx_value *list_inputs(void *ctx, fbx_value *v) {
  const list_map *m = ctx;
  for (int i = 0; i < m->list->ninputs; i++)
    if (m->list->inputs[i] == v) return m->clones[i];
  return NULL;
}

/* Clone constant node `n` (a prim::Constant, or a constant list with its
 * constants) at the top of `b`; its output, or NULL when out of memory. */
static fbx_value *clone_const(fbx_block *b, const fbx_node *n, fbx_ptrmap *pulled) {
  fbx_node *first = fbx_block_first(b);
  if (n->kind != FBX_SYM_prim_ListConstruct) {
    fbx_node *c = fbx_node_clone_into(b, n, no_inputs, NULL);
    if (!c) return NULL;
    if (first && first != c) fbx_node_move_before(c, first);
    return c->outputs[0];
  }
  fbx_value *local[16];
  fbx_value **clones = n->ninputs <= 16 ? local : fbx_malloc(sizeof *clones * (size_t)n->ninputs);
  if (!clones) return NULL;
  fbx_value *out = NULL;
  int i = 0;
  for (; i < n->ninputs; i++) {
    if (fbx_ptrmap_put(pulled, n->inputs[i]->node, n->inputs[i]->node)) break;
    if (!(clones[i] = clone_const(b, n->inputs[i]->node, pulled))) break;
  }
  if (i == n->ninputs) {
    list_map m = {n, clones};
    fbx_node *c = fbx_node_clone_into(b, n, list_inputs, &m);
    if (c) out = c->outputs[0]; /* cloned at the end of the block: after its constants, before nothing yet */
    if (c && first && first != c) fbx_node_move_before(c, first);
  }
  if (clones != local) fbx_free(clones);
  return out;
}

/* Move constant inputs of a new group into its subgraph; the outer
 * constants are remembered in `pulled` and destroyed at the end if unused. */
static int pull_constants(fbx_node *group, fbx_ptrmap *pulled) {
  fbx_graph *sub = fbx_node_subgraph(group);
  for (int i = group->ninputs - 1; i >= 0; i--) {
    fbx_value *v = group->inputs[i];
    if (!pullable_const(v) && !const_list(v)) continue;
    /* Failures below leave a valid graph: an unused clone, or a parameter
     * and a clone sharing the uses. */
    if (fbx_ptrmap_put(pulled, v->node, v->node)) return -1;
    fbx_value *c = clone_const(sub->block, v->node, pulled);
    if (!c) return -1;
    fbx_value *param = fbx_block_param(sub->block, i);
    if (fbx_value_replace_all_uses(param, c)) return -1;
    fbx_block_erase_param(sub->block, i);
    fbx_node_remove_input(group, i);
  }
  return 0;
}

/* Log a rejected proposal and tell the report's listener, with the
 * proposal's nodes that really are nodes of this graph. */
static void log_reject(const fbx_fuser *f, const fbx_partition_report *rep, const fbx_ptrmap *alive,
                       const fbx_proposal *pr, int k, const char *why) {
  fbx_log(FBX_LOG_FUSION, "%s: rejected proposal %d (%d nodes): %s", f->name, k, pr->count, why);
  if (!rep->on_reject || pr->bad) return; /* a malformed proposal has no node list to trust */
  for (int i = 0; i < pr->count; i++)
    if (pr->nodes[i] && fbx_ptrmap_has(alive, pr->nodes[i])) rep->on_reject(rep->on_reject_ctx, pr->nodes[i], why);
}

fbx_status *fbx_fuser_partition(fbx_fuser *f, fbx_graph *g, fbx_partition_report *rep) {
  fbx_partition_report local = {0};
  if (!rep) rep = &local;
  rep->proposed = rep->accepted = rep->rejected = 0;
  if (!f || !g) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_fuser_partition: NULL fuser or graph");
  fbx_sym fuser_attr;
  if (fbx_sym_intern(&fuser_attr, "fuser", 5)) return fbx_status_nomem();

  pthread_mutex_lock(&f->lock);
  fbx_ptrmap alive = {0}, consumed = {0}, pulled = {0};
  fbxp_proposals p = {.graph = g};
  fbx_status *st = NULL;
  int total = collect_nodes(&alive, g->block);
  if (total < 0) {
    st = fbx_status_nomem();
    goto done;
  }
  p.max_count = total;

  fbx_fuser *prev = fbx_host_set_current(f);
  fbx_host_set_stage("partition", "the graph");
  fbxp_status *ps = f->api->partition(f->state, (const fbxp_graph *)g, &p);
  fbx_host_set_current(prev);
  if (ps) {
    st = fbx_host_take_status(ps, FBX_ERR_PLUGIN, "fuser '%s' failed to partition the graph", f->name);
    goto done;
  }
  if (p.nomem) {
    st = fbx_status_nomem();
    goto done;
  }
  fbx_log(FBX_LOG_FUSION, "%s: %d proposals", f->name, p.n);

  for (int k = 0; k < p.n && !st; k++) {
    fbx_proposal *pr = &p.items[k];
    rep->proposed++;
    if (pr->bad) {
      rep->rejected++;
      log_reject(f, rep, &alive, pr, k, pr->bad);
      continue;
    }
    char why[128] = "";
    /* Constants and constant lists named in a proposal are not moved into
     * the group (another group or node may use them too): they become
     * inputs and are cloned in, like every constant. Only pointers known
     * to be this graph's nodes are looked at. */
    int kept = 0;
    for (int i = 0; i < pr->count; i++) {
      fbx_node *n = pr->nodes[i];
      if (n && fbx_ptrmap_has(&alive, n) && !fbx_ptrmap_has(&consumed, n) && clone_not_move(n)) continue;
      pr->nodes[kept++] = n;
    }
    if (!kept && pr->count) snprintf(why, sizeof why, "only constants: nothing to fuse");
    pr->count = kept;
    for (int i = 0; i < pr->count && !*why; i++) {
      const fbx_node *n = pr->nodes[i];
      if (!n) snprintf(why, sizeof why, "node %d is NULL", i);
      else if (fbx_ptrmap_has(&consumed, n)) snprintf(why, sizeof why, "node %d is already in another accepted group", i);
      else if (!fbx_ptrmap_has(&alive, n)) snprintf(why, sizeof why, "node %d is not a node of this graph", i);
    }
    if (*why) {
      rep->rejected++;
      log_reject(f, rep, &alive, pr, k, why);
      continue;
    }
    fbx_node **after = NULL;
    int nafter = 0;
    fbx_status *vs = fbx_group_validate_members(g, pr->nodes, pr->count, &after, &nafter);
    if (vs) {
      if (fbx_status_code(vs) == FBX_ERR_NOMEM) {
        st = vs;
        break;
      }
      rep->rejected++;
      log_reject(f, rep, &alive, pr, k, fbx_status_message(vs));
      fbx_free(after);
      fbx_status_free(vs);
      continue;
    }
    qsort(pr->nodes, (size_t)pr->count, sizeof *pr->nodes, cmp_topo);
    /* Users of the group between its nodes go after it (validation checked
     * that they feed no member and have no side effects). */
    fbx_node *pos = pr->nodes[pr->count - 1];
    for (int i = 0; i < nafter; i++) {
      fbx_node_move_after(after[i], pos);
      pos = after[i];
    }
    fbx_free(after);
    fbx_node *group = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, pr->nodes, pr->count);
    if (!group) {
      st = fbx_status_nomem();
      break;
    }
    for (int i = 0; i < pr->count; i++)
      if (fbx_ptrmap_put(&consumed, pr->nodes[i], pr->nodes[i])) st = fbx_status_nomem();
    if (!st && (fbx_node_set_s(group, fuser_attr, f->name) || pull_constants(group, &pulled)))
      st = fbx_status_nomem();
    if (st) break;
    rep->accepted++;
    fbx_log(FBX_LOG_FUSION, "%s: accepted proposal %d: %d nodes -> fusebox::FusionGroup with %d inputs, %d outputs",
            f->name, k, pr->count, group->ninputs, group->noutputs);
  }
  /* Constants that only fed groups are dead now: the lists first, then
   * the constants the lists used. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < pulled.cap; i++) {
      fbx_node *c = pulled.keys && pulled.keys[i] ? (fbx_node *)pulled.vals[i] : NULL;
      if (!c || fbx_ptrmap_has(&consumed, c) || (c->kind == FBX_SYM_prim_ListConstruct) != (pass == 0)) continue;
      bool used = false;
      for (int o = 0; o < c->noutputs; o++) used |= c->outputs[o]->nuses > 0;
      if (!used) {
        pulled.vals[i] = NULL;
        fbx_node_destroy(c);
      }
    }
  if (!st)
    fbx_log(FBX_LOG_FUSION, "%s: partition: %d proposed, %d accepted, %d rejected", f->name, rep->proposed,
            rep->accepted, rep->rejected);
done:
  for (int k = 0; k < p.n; k++) fbx_free(p.items[k].nodes);
  fbx_free(p.items);
  fbx_ptrmap_free(&alive);
  fbx_ptrmap_free(&consumed);
  fbx_ptrmap_free(&pulled);
  pthread_mutex_unlock(&f->lock);
  return st;
}
