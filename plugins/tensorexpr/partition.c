/* Partition: NNC's fusion policy (torch/csrc/jit/passes/tensorexpr_fuser.cpp)
 * on the SDK's read-only graph.
 *
 * A node is fusable when te_classify (lower.c, the same test compile
 * applies) takes it with the profiled types: a pointwise row of the kit, a
 * sum/mean/amax/amin over constant dims, a softmax/log_softmax over a
 * constant dim. Each block is scanned in order; a fusable node joins the
 * groups of the fusable producers of its inputs (merging them) when the
 * union stays
 *   - in one stretch between barriers (nodes with blocks, in-place ops,
 *     side effects): the group runs where its last node was;
 *   - convex: no path leaves the union and comes back into it;
 * else it starts a group of its own. A prim::ListConstruct of constants
 * whose only user is a member (reduction dims) joins its user's group.
 * Groups with at least two ops are proposed, a softmax or log_softmax
 * counting for two (it is a max, a sum and a normalization: three loop
 * nests). Guards are outside (FBXP_GUARDS_OUTSIDE): kernels are compiled
 * for the profiled specs.
 *
 * The grouping itself (which merges keep the union convex, in one stretch
 * and within FBXK_GROUP_SPAN nodes, at near-linear cost) is the kit's
 * (kit_group.h), shared with nvfuser_like. */
#include <stdint.h>
#include <string.h>

#include <fusebox/kit/kit_group.h>

#include "te.h"

typedef struct blk {
  fbxk_grouping *g;
  int n;
  int *cls, *weight;
} blk;

static int is_barrier(const fbxp_node *n) {
  const char *k = te_host->node_kind(n);
  size_t len = strlen(k);
  if (te_host->node_num_blocks(n) > 0) return 1;
  if (len > 1 && k[len - 1] == '_' && k[len - 2] != '_') return 1; /* in place */
  if (!strncmp(k, "prim::Print", 11) || !strncmp(k, "prim::RaiseException", 20) || !strncmp(k, "prim::SetAttr", 13) ||
      !strcmp(k, "aten::warn"))
    return 1;
  return strncmp(k, "aten::", 6) && strncmp(k, "prim::", 6);
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *p, int depth, int no_shape);

/* Does a node of the block (or of a nested one) write into a tensor? A
 * shape-only op in a group computes a copy, not a view: that is the same
 * value only while nothing is written in place. */
static int mutates(const fbxp_block *bl, int depth) {
  for (const fbxp_node *n = te_host->block_first(bl); n; n = te_host->node_next(n)) {
    const char *k = te_host->node_kind(n);
    size_t len = strlen(k);
    if (len > 1 && k[len - 1] == '_' && k[len - 2] != '_') return 1;
    if (!strncmp(k, "aten::copy_", 11) || !strcmp(k, "aten::index_put_")) return 1;
    for (int i = 0; i < te_host->node_num_blocks(n); i++)
      if (depth >= 64 || mutates(te_host->node_block(n, i), depth + 1)) return 1;
  }
  return 0;
}

/* One grouping of the block; returns 1 when a reduction had to be taken
 * out (its dims list is shared with nodes outside its group), -1 when out
 * of memory. */
static int group_nodes(blk *b) {
  fbxk_grouping *g = b->g;
  fbxk_grouping_reset(g);
  for (int i = 0; i < b->n; i++) {
    if (b->cls[i] < TE_N_PW) continue;
    fbxk_grouping_start(g, i);
    int nin = te_host->node_num_inputs(fbxk_grouping_node(g, i));
    for (int a = 0; a < nin; a++) {
      int j = fbxk_grouping_producer(g, i, a);
      if (j >= 0 && fbxk_grouping_group(g, j) >= 0) fbxk_grouping_merge(g, i, j);
    }
  }
  /* a list of constants joins its users' group when they share one */
  int changed = 0;
  for (int i = 0; i < b->n; i++) {
    if (b->cls[i] != TE_N_LIST) continue;
    const fbxp_value *v = te_host->node_output(fbxk_grouping_node(g, i), 0);
    int nu = te_host->value_num_uses(v), grp = -2, split = 0, all = 1, first_user = -1;
    int *users = te_host->alloc(sizeof(int) * (size_t)(nu ? nu : 1));
    if (!users) return -1;
    for (int u = 0; u < nu; u++) {
      int32_t idx;
      int j = fbxk_grouping_index(g, te_host->value_use(v, u, &idx));
      users[u] = j;
      int in = j >= 0 && b->cls[j] >= TE_N_PW && fbxk_grouping_group(g, j) >= 0;
      int gj = in ? fbxk_grouping_group(g, j) : -1;
      if (!in) all = 0;
      if (first_user < 0 && in) first_user = j;
      if (grp == -2) grp = gj;
      else if (gj != grp) split = 1;
    }
    /* its users in several groups (reductions over the same dims, CSE'd into
     * one list): those groups merge when the union stays convex */
    if (split && all && fbxk_grouping_merge_all(g, users, nu)) split = 0, grp = fbxk_grouping_group(g, first_user);
    if (!split && grp >= 0) {
      fbxk_grouping_join(g, i, first_user);
    } else {
      for (int u = 0; u < nu; u++) {
        int j = users[u];
        if (j >= 0 && b->cls[j] >= TE_N_RED && fbxk_grouping_group(g, j) >= 0) {
          b->cls[j] = TE_N_NO;
          b->weight[j] = 0;
          changed = 1;
        }
      }
    }
    te_host->free(users);
  }
  return changed;
}

static void partition_nodes(blk *b, fbxp_proposals *p, int no_shape) {
  int seg = 0;
  for (int i = 0; i < b->n; i++) {
    const fbxp_node *x = fbxk_grouping_node(b->g, i);
    te_ninfo info;
    b->cls[i] = te_classify(x, te_typeof_profiled, NULL, &info);
    if (b->cls[i] == TE_N_SHAPE && no_shape) b->cls[i] = TE_N_NO;
    /* softmax, layer_norm, var and std are two or three loop nests */
    int passes = b->cls[i] == TE_N_SOFTMAX || b->cls[i] == TE_N_NORM ||
                 (b->cls[i] == TE_N_RED && (info.red == TE_RED_VAR || info.red == TE_RED_STD || info.indices));
    b->weight[i] = passes ? 2
                   : b->cls[i] == TE_N_SHAPE                         ? info.sop == TE_SH_CAT || info.sop == TE_SH_TYPE_AS
                   : b->cls[i] >= TE_N_PW                            ? 1
                                                                     : 0;
    int bar = is_barrier(x);
    seg += bar;
    fbxk_grouping_set_seg(b->g, i, seg);
    seg += bar;
  }
  /* A list of reduction dims must come into its users' group (the host
   * passes no list to a kernel): when its users end up in different groups
   * (or some outside any), those reductions are not fused and the grouping
   * is done again, at most once per reduction. */
  for (int round = 0; round <= b->n; round++) {
    int r = group_nodes(b);
    if (r < 0) return;
    if (!r) break;
  }
  size_t m = (size_t)b->n;
  int *order = te_host->alloc(sizeof(int) * (2 * m + 1));
  const fbxp_node **list = te_host->alloc(sizeof *list * m);
  int ng = order && list ? fbxk_grouping_order(b->g, order, order + m) : -1;
  for (int q = 0; q < ng; q++) {
    int *starts = order + m;
    int weight = 0, count = 0;
    for (int k = starts[q]; k < starts[q + 1]; k++) {
      weight += b->weight[order[k]];
      list[count++] = fbxk_grouping_node(b->g, order[k]);
    }
    if (weight >= 2) te_host->propose(p, list, count);
  }
  te_host->free(order);
  te_host->free(list);
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *p, int depth, int no_shape) {
  blk b = {fbxk_grouping_new(te_host, bl), 0, NULL, NULL};
  if (!b.g) return;
  b.n = fbxk_grouping_size(b.g);
  int *ints = b.n ? te_host->alloc(sizeof(int) * 2 * (size_t)b.n) : NULL;
  if (ints) {
    b.cls = ints;
    b.weight = ints + b.n;
    partition_nodes(&b, p, no_shape);
    for (int i = 0; i < b.n && depth < 32; i++) {
      const fbxp_node *x = fbxk_grouping_node(b.g, i);
      for (int k = 0; k < te_host->node_num_blocks(x); k++)
        partition_block(te_host->node_block(x, k), p, depth + 1, no_shape);
    }
  }
  te_host->free(ints);
  fbxk_grouping_free(b.g);
}

fbxp_status *te_partition(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  (void)state;
  partition_block(te_host->graph_block(g), p, 0, mutates(te_host->graph_block(g), 0));
  return NULL;
}
