/* Partition: which nodes form fusions.
 *
 * A node is taken when nvf_classify takes it with the profiled types
 * (pointwise rows of the kit, sum/mean/amax/amin over constant dims,
 * softmax/log_softmax, layer_norm). Each block is scanned in order; a taken
 * node joins the fusions of its taken producers when the union
 *   - lies in one stretch between barriers (nodes with blocks, in-place ops,
 *     side effects, ops outside aten/prim): the fusion runs where its last
 *     node was;
 *   - is convex: no path leaves it and comes back.
 * Any shape of reductions is accepted here: at compile time the segmenter
 * splits a fusion that one kernel cannot run into segments that can.
 * A prim::ListConstruct of constants (reduction dims, normalized shapes) is
 * not proposed: the host clones constant lists into every group that uses
 * them (one list may serve several groups, or be saved for backward).
 * Fusions of at least two ops are proposed; softmax, log_softmax and
 * layer_norm count for two each, so a lone softmax or layer norm is a fusion
 * (one persistent kernel instead of the interpreter's several passes).
 *
 * Cost: a merge checks convexity over the union's span: O(n * span). */
#include <stdint.h>
#include <string.h>

#include "nvf.h"

typedef struct pblk {
  int n;
  const fbxp_node **nodes;
  int *cls, *seg, *grp, *taint, *weight;
} pblk;

static int barrier(const fbxp_node *n) {
  const char *k = nvf_host->node_kind(n);
  size_t len = strlen(k);
  if (nvf_host->node_num_blocks(n) > 0) return 1;
  if (len > 1 && k[len - 1] == '_' && k[len - 2] != '_') return 1;
  if (!strncmp(k, "prim::Print", 11) || !strncmp(k, "prim::RaiseException", 20) || !strncmp(k, "prim::SetAttr", 13) ||
      !strcmp(k, "aten::warn"))
    return 1;
  return strncmp(k, "aten::", 6) && strncmp(k, "prim::", 6);
}

/* the index of n in the block, -1; linear from a hint (producers are near) */
static int index_of(const pblk *b, const fbxp_node *n, int before) {
  if (!n) return -1;
  for (int i = before - 1; i >= 0; i--)
    if (b->nodes[i] == n) return i;
  return -1;
}

/* Is the union of groups ga and gb convex and in one stretch? */
static int union_ok(pblk *b, int ga, int gb) {
  int first = -1, last = -1;
  for (int i = 0; i < b->n; i++)
    if (b->grp[i] == ga || b->grp[i] == gb) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0 || b->seg[first] != b->seg[last]) return 0;
  int ok = 1;
  for (int i = first; i <= last; i++) b->taint[i] = 0;
  for (int i = first; i <= last && ok; i++) {
    int member = b->grp[i] == ga || b->grp[i] == gb;
    int from_member = 0, from_taint = 0;
    for (int a = 0; a < nvf_host->node_num_inputs(b->nodes[i]); a++) {
      int j = index_of(b, nvf_host->value_producer(nvf_host->node_input(b->nodes[i], a)), i);
      if (j < first) continue;
      if (b->grp[j] == ga || b->grp[j] == gb) from_member = 1;
      else if (b->taint[j]) from_taint = 1;
    }
    if (member && from_taint) ok = 0;
    if (!member && (from_member || from_taint)) b->taint[i] = 1;
  }
  return ok;
}

static void group_once(pblk *b) {
  for (int i = 0; i < b->n; i++) {
    b->grp[i] = -1;
    if (b->cls[i] < NVF_N_PW) continue;
    b->grp[i] = i;
    const fbxp_node *n = b->nodes[i];
    for (int a = 0; a < nvf_host->node_num_inputs(n); a++) {
      int j = index_of(b, nvf_host->value_producer(nvf_host->node_input(n, a)), i);
      if (j < 0 || b->grp[j] < 0 || b->grp[j] == b->grp[i]) continue;
      int gj = b->grp[j], gi = b->grp[i];
      if (!union_ok(b, gi, gj)) continue;
      int into = gj < gi ? gj : gi, from = gj < gi ? gi : gj;
      for (int m = 0; m <= i; m++)
        if (b->grp[m] == from) b->grp[m] = into;
    }
  }
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *pr, int depth) {
  int n = 0;
  for (const fbxp_node *x = nvf_host->block_first(bl); x; x = nvf_host->node_next(x)) n++;
  if (!n) return;
  pblk b = {n, NULL, NULL, NULL, NULL, NULL, NULL};
  b.nodes = nvf_host->alloc(sizeof *b.nodes * (size_t)n);
  int *ints = nvf_host->alloc(sizeof(int) * 5 * (size_t)n);
  const fbxp_node **list = nvf_host->alloc(sizeof *list * (size_t)n);
  if (b.nodes && ints && list) {
    b.cls = ints;
    b.seg = ints + n;
    b.grp = ints + 2 * n;
    b.taint = ints + 3 * n;
    b.weight = ints + 4 * n;
    int i = 0, seg = 0;
    for (const fbxp_node *x = nvf_host->block_first(bl); x; x = nvf_host->node_next(x), i++) {
      b.nodes[i] = x;
      nvf_ninfo info;
      b.cls[i] = nvf_classify(x, nvf_typeof_profiled, NULL, &info);
      b.weight[i] = b.cls[i] == NVF_N_SOFTMAX || b.cls[i] == NVF_N_LAYER_NORM ? 2 : b.cls[i] >= NVF_N_PW;
      int bar = barrier(x);
      seg += bar;
      b.seg[i] = seg;
      seg += bar;
    }
    group_once(&b);
    for (int g = 0; g < n; g++) {
      int weight = 0, count = 0;
      for (int m = 0; m < n; m++)
        if (b.grp[m] == g) {
          weight += b.weight[m];
          list[count++] = b.nodes[m];
        }
      if (weight >= 2) nvf_host->propose(pr, list, count);
    }
    for (i = 0; i < n && depth < 32; i++)
      for (int k = 0; k < nvf_host->node_num_blocks(b.nodes[i]); k++)
        partition_block(nvf_host->node_block(b.nodes[i], k), pr, depth + 1);
  }
  nvf_host->free(b.nodes);
  nvf_host->free(ints);
  nvf_host->free(list);
}

fbxp_status *nvf_partition(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  (void)state;
  partition_block(nvf_host->graph_block(g), p, 0);
  return NULL;
}
