/* fusebox kit: convex grouping of a block's nodes.
 *
 * The grouping NNC's and nvFuser's policies share (plugins/tensorexpr and
 * plugins/nvfuser_like use it): the nodes of one block, in order, each with
 * a segment number; a fuser scans them and merges groups (unions of nodes)
 * that one kernel is to run. A merge is kept only when the union
 *   - lies in one segment: the fuser numbers segments so that barriers
 *     (nodes with blocks, in-place ops, side effects) sit alone in theirs,
 *     since a group runs where its last node was and must not move a read
 *     across a write;
 *   - is convex: no path leaves the union and comes back into it (then the
 *     union can run as one node);
 *   - spans at most FBXK_GROUP_SPAN nodes of the block, first member to
 *     last. This bounds both a kernel's size and the cost of the convexity
 *     check, which walks the union's span: a block of n nodes costs
 *     O(n * FBXK_GROUP_SPAN * inputs per node), and a 64k-node chain
 *     becomes kernels of at most FBXK_GROUP_SPAN nodes each.
 * Node lookups (which node of the block produced a value) are hashed.
 *
 *   fbxk_grouping *g = fbxk_grouping_new(host, block);
 *   for (i = 0; i < fbxk_grouping_size(g); i++) {
 *     fbxk_grouping_set_seg(g, i, seg_of(i));
 *     ...
 *   }
 *   for (i ...) if (fusable(i)) {
 *     fbxk_grouping_start(g, i);
 *     for each input a of node i:
 *       fbxk_grouping_merge(g, i, fbxk_grouping_producer(g, i, a));
 *   }
 *   order = fbxk_grouping_order(g) ... fbxk_grouping_free(g);
 *
 * A group is named by an id (fbxk_grouping_group); ids are node indices
 * but not necessarily the first member's. */
#ifndef FUSEBOX_KIT_GROUP_H
#define FUSEBOX_KIT_GROUP_H
#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit_dtype.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FBXK_GROUP_SPAN 512

typedef struct fbxk_grouping fbxk_grouping;

/* The nodes of block bl (not of its nested blocks), every one ungrouped in
 * segment 0. NULL when out of memory (host->alloc). */
FBXK_API fbxk_grouping *fbxk_grouping_new(const fbxp_host_api *host, const fbxp_block *bl);
FBXK_API void fbxk_grouping_free(fbxk_grouping *g); /* NULL-safe */

FBXK_API int fbxk_grouping_size(const fbxk_grouping *g);
FBXK_API const fbxp_node *fbxk_grouping_node(const fbxk_grouping *g, int i);
/* The index of node n in the block, -1 when n is not one of its nodes
 * (NULL, a node of another block). */
FBXK_API int fbxk_grouping_index(const fbxk_grouping *g, const fbxp_node *n);
/* The index of the node of this block that produced node i's input a, -1
 * for a block or graph input or a value from an outer block. */
FBXK_API int fbxk_grouping_producer(const fbxk_grouping *g, int i, int a);

FBXK_API void fbxk_grouping_set_seg(fbxk_grouping *g, int i, int seg);
/* Every node back to no group (the segments stay). */
FBXK_API void fbxk_grouping_reset(fbxk_grouping *g);
/* Node i alone in a new group (it must be in none). */
FBXK_API void fbxk_grouping_start(fbxk_grouping *g, int i);
/* Node i's group id, -1 when it is in none. */
FBXK_API int fbxk_grouping_group(const fbxk_grouping *g, int i);
/* Merges the groups of nodes i and j when both are grouped and the union
 * passes the three tests above. 1: merged (or already one group), 0: not. */
FBXK_API int fbxk_grouping_merge(fbxk_grouping *g, int i, int j);
/* The same for the groups of the k nodes idx[0..k): all of them merge, or
 * none (0 when one of the nodes is ungrouped). */
FBXK_API int fbxk_grouping_merge_all(fbxk_grouping *g, const int *idx, int k);
/* Ungrouped node i into node j's group with none of the tests: for a node
 * the caller knows to be safe (a list of constants whose users are all in
 * that group). */
FBXK_API void fbxk_grouping_join(fbxk_grouping *g, int i, int j);

/* The grouped nodes ordered by group, groups by their first member, members
 * in block order: out[0..m) with m the count of grouped nodes returned;
 * `starts` (may be NULL) gets the index in out where each group begins,
 * ending with m (room for m + 1 entries). Returns the number of groups, -1
 * when out of memory. */
FBXK_API int fbxk_grouping_order(const fbxk_grouping *g, int *out, int *starts);

#ifdef __cplusplus
}
#endif
#endif
