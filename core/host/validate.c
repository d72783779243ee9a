/* Validation of a proposed fusion group (fuser ABI rule 4).
 *
 * A group is valid when it is non-empty, its nodes are distinct and all in
 * one block, none of them is control flow, owns blocks, has side effects, is
 * a block sentinel or already a group, and it is convex: no path leaves the
 * group and comes back (otherwise the group node would have to run both
 * before and after the outside node on that path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "host/hostimpl.h"
#include "ir/text.h"
#include "passes/passes.h"

/* "%y : Tensor = aten::add(%x, %x, %2)" for messages (truncated). */
static void describe(char *buf, size_t cap, const fbx_node *n) {
  fbx_strbuf b = {0};
  fbx_node_print_line(&b, n);
  const char *s = b.data ? b.data : fbx_sym_str(n->kind);
  size_t len = strlen(s);
  if (len >= cap) len = cap - 1;
  memcpy(buf, s, len);
  buf[len] = 0;
  if (len == cap - 1 && cap > 4) memcpy(buf + cap - 4, "...", 4);
  fbx_strbuf_free(&b);
}

static fbx_status *bad(const fbx_node *n, int i, const char *why) {
  char line[256];
  describe(line, sizeof line, n);
  return fbx_status_new(FBX_ERR_INVALID_ARG, "node %d (%s) %s", i, line, why);
}

static bool is_group_kind(fbx_sym k) {
  return k == FBX_SYM_fusebox_FusionGroup || k == FBX_SYM_prim_FusionGroup || k == FBX_SYM_prim_TensorExprGroup ||
         k == FBX_SYM_prim_CudaFusionGroup || k == FBX_SYM_prim_DifferentiableGraph ||
         k == FBX_SYM_fusebox_TypeGuard || k == FBX_SYM_prim_TypeCheck || k == FBX_SYM_prim_FallbackGraph;
}

/* The node of `block` that is n or holds n in its blocks; NULL if none. */
static fbx_node *ancestor_in(fbx_node *n, const fbx_block *block) {
  while (n && n->owner != block) n = n->owner ? n->owner->owning : NULL;
  return n;
}

static const char *block_desc(const fbx_block *b) {
  if (!b->owning) return "the top-level block";
  static _Thread_local char buf[2][160];
  static _Thread_local int next;
  char *s = buf[next++ & 1];
  const fbx_node *o = b->owning;
  snprintf(s, sizeof buf[0], "a block of %s%s%s", fbx_sym_str(o->kind), o->noutputs ? " %" : "",
           o->noutputs ? o->outputs[0]->name : "");
  return s;
}

/* Breadth-first walk from the group's outputs through outside nodes of the
 * block; reaching a member again means the group is not convex. A use inside
 * a nested block counts as a use by the block's owner in this block. Only
 * nodes before the last member can lead back, which bounds the walk. */
typedef struct walk {
  const fbx_block *block;
  const fbx_ptrmap *members;
  int64_t last;
  fbx_ptrmap seen; /* outside node -> the member its path started from */
  fbx_node **work;
  int nwork, cap;
} walk;

static fbx_status *visit_uses(walk *w, const fbx_node *from, const fbx_node *origin, bool from_member) {
  for (int o = 0; o < from->noutputs; o++) {
    const fbx_value *v = from->outputs[o];
    for (int u = 0; u < v->nuses; u++) {
      fbx_node *a = ancestor_in(v->uses[u].user, w->block);
      if (!a || a == w->block->ret || a->topo > w->last) continue;
      if (fbx_ptrmap_has(w->members, a)) {
        if (from_member) continue; /* an edge inside the group */
        char l1[200], l2[200];
        describe(l1, sizeof l1, origin);
        describe(l2, sizeof l2, from);
        return fbx_status_new(FBX_ERR_INVALID_ARG,
                              "group is not convex: a path leaves it at (%s), goes through (%s) and comes back", l1,
                              l2);
      }
      if (fbx_ptrmap_has(&w->seen, a)) continue;
      if (w->nwork == w->cap) {
        int cap = w->cap ? w->cap * 2 : 32;
        fbx_node **nw = fbx_realloc(w->work, (size_t)cap * sizeof *nw);
        if (!nw) return fbx_status_nomem();
        w->work = nw;
        w->cap = cap;
      }
      if (fbx_ptrmap_put(&w->seen, a, (void *)origin)) return fbx_status_nomem();
      w->work[w->nwork++] = a;
    }
  }
  return NULL;
}

static int cmp_topo(const void *a, const void *b) {
  const fbx_node *x = *(fbx_node *const *)a, *y = *(fbx_node *const *)b;
  return x->topo < y->topo ? -1 : x->topo > y->topo;
}

/* Also collects the outside nodes lying between the members that depend on
 * the group: the group node takes the place of the last member, so they
 * must move after it. Convexity guarantees they feed no member; one with
 * side effects is not moved (its order against other effects could change). */
static fbx_status *check_convex(fbx_node *const *nodes, int count, const fbx_ptrmap *members, fbx_node ***after,
                                int *nafter) {
  walk w = {.block = nodes[0]->owner, .members = members, .last = nodes[0]->topo};
  for (int i = 1; i < count; i++)
    if (nodes[i]->topo > w.last) w.last = nodes[i]->topo;
  fbx_status *st = NULL;
  for (int i = 0; i < count && !st; i++) st = visit_uses(&w, nodes[i], nodes[i], true);
  for (int head = 0; head < w.nwork && !st; head++)
    st = visit_uses(&w, w.work[head], fbx_ptrmap_get(&w.seen, w.work[head]), false);
  for (int i = 0; i < w.nwork && !st; i++) {
    if (!fbx_node_has_side_effects(w.work[i])) continue;
    char l1[200];
    describe(l1, sizeof l1, w.work[i]);
    st = fbx_status_new(FBX_ERR_INVALID_ARG,
                        "(%s) lies between the group's nodes, uses its results and has side effects: it cannot move "
                        "after the group",
                        l1);
  }
  if (!st && after) {
    if (w.nwork > 1) qsort(w.work, (size_t)w.nwork, sizeof *w.work, cmp_topo);
    *after = w.work;
    *nafter = w.nwork;
    w.work = NULL;
  }
  fbx_free(w.work);
  fbx_ptrmap_free(&w.seen);
  return st;
}

fbx_status *fbx_group_validate_members(const fbx_graph *g, fbx_node *const *nodes, int count, fbx_node ***after,
                                       int *nafter) {
  (void)g;
  if (after) {
    *after = NULL;
    *nafter = 0;
  }
  const fbx_block *block = nodes[0]->owner;
  if (!block) return bad(nodes[0], 0, "is not inserted in a block");
  for (int i = 0; i < count; i++) {
    const fbx_node *n = nodes[i];
    if (n->kind == FBX_SYM_prim_Param || n->kind == FBX_SYM_prim_Return)
      return bad(n, i, "is a block's parameter/return node and cannot be fused");
    if (!n->owner) return bad(n, i, "is not inserted in a block");
    if (n->owner != block) {
      char msg[256];
      snprintf(msg, sizeof msg, "is in %s, but node 0 is in %s: a group's nodes must share one block",
               block_desc(n->owner), block_desc(block));
      return bad(n, i, msg);
    }
  }
  fbx_ptrmap members = {0};
  fbx_status *st = NULL;
  for (int i = 0; i < count && !st; i++) {
    const fbx_node *n = nodes[i];
    if (fbx_ptrmap_has(&members, n)) st = bad(n, i, "appears twice in the group");
    else if (fbx_ptrmap_put(&members, n, (void *)n)) st = fbx_status_nomem();
    else if (n->kind == FBX_SYM_prim_If || n->kind == FBX_SYM_prim_Loop)
      st = bad(n, i, "is control flow and cannot be fused");
    else if (n->nblocks > 0) st = bad(n, i, "has blocks and cannot be fused");
    else if (is_group_kind(n->kind) || fbx_node_subgraph(n)) st = bad(n, i, "is already a group (holds a subgraph)");
    else if (fbx_node_has_side_effects(n)) st = bad(n, i, "has side effects and cannot be fused");
  }
  if (!st) st = check_convex(nodes, count, &members, after, nafter);
  fbx_ptrmap_free(&members);
  return st;
}

fbx_status *fbx_group_validate(const fbx_graph *g, fbx_node *const *nodes, int count) {
  if (!g) return fbx_status_new(FBX_ERR_INVALID_ARG, "no graph");
  if (count <= 0 || !nodes) return fbx_status_new(FBX_ERR_INVALID_ARG, "empty group");
  for (int i = 0; i < count; i++) {
    if (!nodes[i]) return fbx_status_new(FBX_ERR_INVALID_ARG, "node %d is NULL", i);
    if (nodes[i]->graph != g) return bad(nodes[i], i, "belongs to another graph");
  }
  return fbx_group_validate_members(g, nodes, count, NULL, NULL);
}
