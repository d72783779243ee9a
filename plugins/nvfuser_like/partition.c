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
 * Grouping (which merges keep a union convex, in one stretch and within
 * FBXK_GROUP_SPAN nodes, at near-linear cost) is the kit's (kit_group.h),
 * shared with tensorexpr. */
#include <stdint.h>
#include <string.h>

#include <fusebox/kit/kit_group.h>

#include "nvf.h"

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

static void partition_block(const fbxp_block *bl, fbxp_proposals *pr, int depth) {
  fbxk_grouping *g = fbxk_grouping_new(nvf_host, bl);
  if (!g) return;
  int n = fbxk_grouping_size(g);
  size_t m = (size_t)(n ? n : 1);
  int *ints = nvf_host->alloc(sizeof(int) * 4 * (m + 1));
  const fbxp_node **list = nvf_host->alloc(sizeof *list * m);
  if (ints && list && n) {
    int *cls = ints, *weight = ints + m + 1, *order = ints + 2 * (m + 1), *starts = ints + 3 * (m + 1);
    int seg = 0;
    for (int i = 0; i < n; i++) {
      const fbxp_node *x = fbxk_grouping_node(g, i);
      nvf_ninfo info;
      cls[i] = nvf_classify(x, nvf_typeof_profiled, NULL, &info);
      weight[i] = cls[i] == NVF_N_SOFTMAX || cls[i] == NVF_N_LAYER_NORM ? 2 : cls[i] >= NVF_N_PW;
      int bar = barrier(x);
      seg += bar;
      fbxk_grouping_set_seg(g, i, seg);
      seg += bar;
    }
    /* in order: a taken node joins the fusions of its taken producers */
    for (int i = 0; i < n; i++) {
      if (cls[i] < NVF_N_PW) continue;
      fbxk_grouping_start(g, i);
      int nin = nvf_host->node_num_inputs(fbxk_grouping_node(g, i));
      for (int a = 0; a < nin; a++) {
        int j = fbxk_grouping_producer(g, i, a);
        if (j >= 0 && fbxk_grouping_group(g, j) >= 0) fbxk_grouping_merge(g, i, j);
      }
    }
    int ng = fbxk_grouping_order(g, order, starts);
    for (int q = 0; q < ng; q++) {
      int w = 0, count = 0;
      for (int k = starts[q]; k < starts[q + 1]; k++) {
        w += weight[order[k]];
        list[count++] = fbxk_grouping_node(g, order[k]);
      }
      if (w >= 2) nvf_host->propose(pr, list, count);
    }
    for (int i = 0; i < n && depth < 32; i++) {
      const fbxp_node *x = fbxk_grouping_node(g, i);
      for (int k = 0; k < nvf_host->node_num_blocks(x); k++) partition_block(nvf_host->node_block(x, k), pr, depth + 1);
    }
  }
  nvf_host->free(ints);
  nvf_host->free(list);
  fbxk_grouping_free(g);
}

fbxp_status *nvf_partition(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  (void)state;
  partition_block(nvf_host->graph_block(g), p, 0);
  return NULL;
}
