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
 * Cost: node lookups are hashed; each merge checks convexity by walking the
 * nodes between the union's first and last member, so a block of n nodes
 * costs O(n * span) where span is a group's extent in the block. */
#include <stdint.h>
#include <string.h>

#include "te.h"

typedef struct blk {
  int n;
  const fbxp_node **nodes;
  int *cls, *seg, *group, *mark, *weight;
  int hcap;   /* a power of two above 2n */
  int *hash;  /* open addressing: node index + 1, 0 empty */
} blk;

static unsigned slot_of(const blk *b, const fbxp_node *n) {
  uintptr_t h = (uintptr_t)n;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15u;
  return (unsigned)(h >> 7) & (unsigned)(b->hcap - 1);
}

static void index_build(blk *b) {
  for (int i = 0; i < b->hcap; i++) b->hash[i] = 0;
  for (int i = 0; i < b->n; i++) {
    unsigned h = slot_of(b, b->nodes[i]);
    while (b->hash[h]) h = (h + 1) & (unsigned)(b->hcap - 1);
    b->hash[h] = i + 1;
  }
}

static int index_of(const blk *b, const fbxp_node *n) {
  if (!n) return -1;
  for (unsigned h = slot_of(b, n); b->hash[h]; h = (h + 1) & (unsigned)(b->hcap - 1))
    if (b->nodes[b->hash[h] - 1] == n) return b->hash[h] - 1;
  return -1;
}

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

static int holds(const fbxp_block *bl, const fbxp_node *u, int depth) {
  for (const fbxp_node *n = te_host->block_first(bl); n; n = te_host->node_next(n)) {
    if (n == u) return 1;
    for (int i = 0; i < te_host->node_num_blocks(n) && depth < 64; i++)
      if (holds(te_host->node_block(n, i), u, depth + 1)) return 1;
  }
  return 0;
}

/* the node of this block that is u or holds it; -1: none (a return) */
static int ancestor(const blk *b, const fbxp_node *u) {
  if (!u) return -1;
  int i = index_of(b, u);
  if (i >= 0) return i;
  for (i = 0; i < b->n; i++)
    for (int k = 0; k < te_host->node_num_blocks(b->nodes[i]); k++)
      if (holds(te_host->node_block(b->nodes[i], k), u, 0)) return i;
  return -1;
}

/* Is the set {mark == 1} convex and in one stretch? */
static int set_ok(blk *b) {
  int first = -1, last = -1;
  for (int i = 0; i < b->n; i++)
    if (b->mark[i] == 1) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0 || b->seg[first] != b->seg[last]) return 0;
  int ok = 1;
  for (int i = first; i <= last && ok; i++) {
    if (b->mark[i] != 1 && b->mark[i] != 2) continue;
    int member = b->mark[i] == 1;
    const fbxp_node *n = b->nodes[i];
    for (int o = 0; o < te_host->node_num_outputs(n) && ok; o++) {
      const fbxp_value *v = te_host->node_output(n, o);
      for (int u = 0; u < te_host->value_num_uses(v); u++) {
        int32_t idx;
        int j = ancestor(b, te_host->value_use(v, u, &idx));
        if (j < 0 || j > last) continue;
        if (b->mark[j] == 1) {
          if (!member) ok = 0; /* left the set and came back */
        } else if (b->mark[j] == 0) {
          b->mark[j] = 2;
        }
      }
    }
  }
  for (int i = 0; i < b->n; i++)
    if (b->mark[i] == 2) b->mark[i] = 0;
  return ok;
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
 * out (its dims list is shared with nodes outside its group). */
static int group_nodes(blk *b) {
  for (int i = 0; i < b->n; i++) b->group[i] = -1;
  for (int i = 0; i < b->n; i++) {
    if (b->cls[i] < TE_N_PW) continue;
    b->group[i] = i; /* a group is named by its first member */
    const fbxp_node *n = b->nodes[i];
    for (int a = 0; a < te_host->node_num_inputs(n); a++) {
      int j = index_of(b, te_host->value_producer(te_host->node_input(n, a)));
      if (j < 0 || b->group[j] < 0 || b->group[j] == b->group[i]) continue;
      int gj = b->group[j], gi = b->group[i];
      for (int m = 0; m < b->n; m++) b->mark[m] = b->group[m] == gj || b->group[m] == gi;
      int ok = set_ok(b);
      for (int m = 0; m < b->n; m++) b->mark[m] = 0;
      if (!ok) continue;
      int into = gj < gi ? gj : gi, from = gj < gi ? gi : gj;
      for (int m = 0; m < b->n; m++)
        if (b->group[m] == from) b->group[m] = into;
    }
  }
  /* a list of constants joins its users' group when they share one */
  int changed = 0;
  for (int i = 0; i < b->n; i++) {
    if (b->cls[i] != TE_N_LIST) continue;
    const fbxp_value *v = te_host->node_output(b->nodes[i], 0);
    int g = -2, split = 0;
    for (int u = 0; u < te_host->value_num_uses(v); u++) {
      int32_t idx;
      int j = index_of(b, te_host->value_use(v, u, &idx));
      int gj = j >= 0 && b->cls[j] >= TE_N_PW ? b->group[j] : -1;
      if (g == -2) g = gj;
      else if (gj != g) split = 1;
    }
    if (split) {
      /* its users in several groups (reductions over the same dims, CSE'd
       * into one list): those groups merge when the union stays convex */
      int all = 1;
      for (int u = 0; u < te_host->value_num_uses(v) && all; u++) {
        int32_t idx;
        int j = index_of(b, te_host->value_use(v, u, &idx));
        all = j >= 0 && b->cls[j] >= TE_N_PW && b->group[j] >= 0;
      }
      if (all) {
        for (int m = 0; m < b->n; m++) b->mark[m] = 0;
        for (int u = 0; u < te_host->value_num_uses(v); u++) {
          int32_t idx;
          int gj = b->group[index_of(b, te_host->value_use(v, u, &idx))];
          for (int m = 0; m < b->n; m++)
            if (b->group[m] == gj) b->mark[m] = 1;
        }
        int ok = set_ok(b);
        for (int m = 0; m < b->n; m++) b->mark[m] = 0;
        if (ok) {
          int into = b->n;
          for (int u = 0; u < te_host->value_num_uses(v); u++) {
            int32_t idx;
            int gj = b->group[index_of(b, te_host->value_use(v, u, &idx))];
            if (gj < into) into = gj;
          }
          for (int u = 0; u < te_host->value_num_uses(v); u++) {
            int32_t idx;
            int gj = b->group[index_of(b, te_host->value_use(v, u, &idx))];
            if (gj != into)
              for (int m = 0; m < b->n; m++)
                if (b->group[m] == gj) b->group[m] = into;
          }
          split = 0;
          g = into;
        }
      }
    }
    if (!split && g >= 0) {
      b->group[i] = g;
      continue;
    }
    for (int u = 0; u < te_host->value_num_uses(v); u++) {
      int32_t idx;
      int j = index_of(b, te_host->value_use(v, u, &idx));
      if (j >= 0 && b->cls[j] >= TE_N_RED && b->group[j] >= 0) {
        b->cls[j] = TE_N_NO;
        b->weight[j] = 0;
        changed = 1;
      }
    }
  }
  return changed;
}

static void partition_nodes(blk *b, fbxp_proposals *p, int no_shape) {
  int seg = 0;
  for (int i = 0; i < b->n; i++) {
    te_ninfo info;
    b->cls[i] = te_classify(b->nodes[i], te_typeof_profiled, NULL, &info);
    if (b->cls[i] == TE_N_SHAPE && no_shape) b->cls[i] = TE_N_NO;
    /* softmax, layer_norm, var and std are two or three loop nests */
    int passes = b->cls[i] == TE_N_SOFTMAX || b->cls[i] == TE_N_NORM ||
                 (b->cls[i] == TE_N_RED && (info.red == TE_RED_VAR || info.red == TE_RED_STD || info.indices));
    b->weight[i] = passes ? 2
                   : b->cls[i] == TE_N_SHAPE                         ? info.sop == TE_SH_CAT || info.sop == TE_SH_TYPE_AS
                   : b->cls[i] >= TE_N_PW                            ? 1
                                                                     : 0;
    if (is_barrier(b->nodes[i])) seg++;
    b->seg[i] = seg;
    if (is_barrier(b->nodes[i])) seg++;
    b->group[i] = -1;
    b->mark[i] = 0;
  }
  /* A list of reduction dims must come into its users' group (the host
   * passes no list to a kernel): when its users end up in different groups
   * (or some outside any), those reductions are not fused and the grouping
   * is done again, at most once per reduction. */
  for (int round = 0; round <= b->n; round++)
    if (!group_nodes(b)) break;
  for (int g = 0; g < b->n; g++) {
    int weight = 0, count = 0;
    for (int m = 0; m < b->n; m++)
      if (b->group[m] == g) {
        weight += b->weight[m];
        count++;
      }
    if (weight < 2) continue;
    const fbxp_node **list = te_host->alloc(sizeof *list * (size_t)count);
    if (!list) return;
    int k = 0;
    for (int m = 0; m < b->n; m++)
      if (b->group[m] == g) list[k++] = b->nodes[m];
    te_host->propose(p, list, count);
    te_host->free(list);
  }
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *p, int depth, int no_shape) {
  int n = 0;
  for (const fbxp_node *x = te_host->block_first(bl); x; x = te_host->node_next(x)) n++;
  if (n == 0) return;
  blk b = {n, NULL, NULL, NULL, NULL, NULL, NULL, 4, NULL};
  while (b.hcap < 2 * n) b.hcap *= 2;
  b.nodes = te_host->alloc(sizeof *b.nodes * (size_t)n);
  int *ints = te_host->alloc(sizeof(int) * (5 * (size_t)n + (size_t)b.hcap));
  if (b.nodes && ints) {
    b.hash = ints + 5 * n;
    b.cls = ints;
    b.seg = ints + n;
    b.group = ints + 2 * n;
    b.mark = ints + 3 * n;
    b.weight = ints + 4 * n;
    int i = 0;
    for (const fbxp_node *x = te_host->block_first(bl); x; x = te_host->node_next(x)) b.nodes[i++] = x;
    index_build(&b);
    partition_nodes(&b, p, no_shape);
    for (i = 0; i < n && depth < 32; i++)
      for (int k = 0; k < te_host->node_num_blocks(b.nodes[i]); k++)
        partition_block(te_host->node_block(b.nodes[i], k), p, depth + 1, no_shape);
  }
  te_host->free(b.nodes);
  te_host->free(ints);
}

fbxp_status *te_partition(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  (void)state;
  partition_block(te_host->graph_block(g), p, 0, mutates(te_host->graph_block(g), 0));
  return NULL;
}
