/* Work counters: how many inner-loop steps some algorithms took, so that a
 * test can check that a pass stays near-linear on a large graph by counting
 * (never by timing). Per thread; tests read them before and after a call.
 *
 *   uint64_t before = fbx_work_count(FBX_WORK_USE_SCAN);
 *   ... run the pass ...
 *   assert(fbx_work_count(FBX_WORK_USE_SCAN) - before <= 8 * nodes);
 */
#ifndef FBX_BASE_WORKCOUNT_H
#define FBX_BASE_WORKCOUNT_H
#include <stdint.h>

typedef enum fbx_work_kind {
  FBX_WORK_USE_SCAN,       /* use-list entries searched or moved when a use is dropped (ir/graph.c) */
  FBX_WORK_FIND_VALUE,     /* nodes visited by fbx_graph_find_value* (ir/graph.c) */
  FBX_WORK_CONSTPOOL_PROBE, /* pooled constants looked at per constant (passes/constpool.c) */
  FBX_WORK_DIFFGRAPH_VISIT, /* nodes looked at by the DifferentiableGraph pass's convexity checks */
  FBX_WORK_TOPO_RESPACE,    /* nodes given a new position when an insertion found no room (ir/graph.c) */
  FBX_WORK_EAGER_UNIT,      /* eager autodiff units built (differentiated, executors made) (exec/grad.c) */
  FBX_WORK_VERIFY_USE,      /* input slots and use-list entries the verifier looks at (ir/verify.c) */
  FBX_WORK_NKINDS
} fbx_work_kind;

extern _Thread_local uint64_t fbx_work_counts[FBX_WORK_NKINDS];

static inline void fbx_work_add(fbx_work_kind k, uint64_t n) { fbx_work_counts[k] += n; }
static inline uint64_t fbx_work_count(fbx_work_kind k) { return fbx_work_counts[k]; }

#endif
