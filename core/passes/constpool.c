/* Constant pooling: every prim::Constant moves to the start of the graph's
 * top block (out of nested blocks too), in order of first occurrence, and
 * equal constants merge into the first. A constant has no inputs, so the top
 * of the graph dominates every use it can have. */
#include "base/alloc.h"
#include "base/log.h"
#include "base/workcount.h"
#include "passes/passes.h"
#include "passes/passutil.h"

typedef struct pool {
  fbx_node **nodes; /* pooled constants in first-occurrence order */
  uint64_t *hashes;
  size_t count, cap;
  /* an open-addressing index over nodes by hash: slot -> index + 1, 0 empty.
   * With no deletions, the constants of one hash lie along its probe
   * sequence in pool order, so the first equal one is found first. */
  size_t *index;
  size_t index_cap;
  unsigned mutation; /* fbx_graph_mutation_mask */
  int merged, moved;
} pool;

static bool mergeable(const pool *p, const fbx_node *c) {
  /* Two tensor or list constants merged would become one object: with
   * mutation in the graph a write through one would show through the other. */
  return !fbx_type_may_be_written(c->outputs[0]->type, p->mutation);
}

static size_t slot_of(uint64_t h, size_t cap) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

/* The first pooled constant equal to c; expected O(1) (hash lookup). */
static fbx_node *pool_find(const pool *p, const fbx_node *c, uint64_t h) {
  if (!mergeable(p, c) || !p->index_cap) return NULL;
  for (size_t j = slot_of(h, p->index_cap); p->index[j]; j = (j + 1) & (p->index_cap - 1)) {
    size_t i = p->index[j] - 1;
    fbx_work_add(FBX_WORK_CONSTPOOL_PROBE, 1);
    if (p->hashes[i] == h && mergeable(p, p->nodes[i]) && fbx_passutil_consts_equal(p->nodes[i], c))
      return p->nodes[i];
  }
  return NULL;
}

static void index_put(size_t *index, size_t cap, uint64_t h, size_t i) {
  size_t j = slot_of(h, cap);
  while (index[j]) j = (j + 1) & (cap - 1);
  index[j] = i + 1;
}

static int pool_add(pool *p, fbx_node *c, uint64_t h) {
  if (p->count == p->cap) {
    size_t ncap = p->cap ? p->cap * 2 : 32;
    fbx_node **nn = fbx_realloc(p->nodes, ncap * sizeof *nn);
    if (!nn) return -1;
    p->nodes = nn;
    uint64_t *nh = fbx_realloc(p->hashes, ncap * sizeof *nh);
    if (!nh) return -1;
    p->hashes = nh;
    p->cap = ncap;
  }
  if ((p->count + 1) * 2 > p->index_cap) {
    /* rebuilt in pool order, which keeps every probe sequence in pool order */
    size_t icap = p->index_cap ? p->index_cap * 2 : 64;
    size_t *ni = fbx_calloc(icap, sizeof *ni);
    if (!ni) return -1;
    for (size_t i = 0; i < p->count; i++) index_put(ni, icap, p->hashes[i], i);
    fbx_free(p->index);
    p->index = ni;
    p->index_cap = icap;
  }
  p->nodes[p->count] = c;
  p->hashes[p->count] = h;
  index_put(p->index, p->index_cap, h, p->count);
  p->count++;
  return 0;
}

static uint64_t const_hash(const fbx_node *c) {
  return fbx_passutil_attrs_hash(c) * 31u + (uint64_t)c->outputs[0]->type->kind;
}

static fbx_status *pool_block(pool *p, fbx_graph *g, fbx_block *b) {
  FBX_BLOCK_FOR_EACH(n, b) {
    for (int i = 0; i < n->nblocks; i++) FBX_TRY(pool_block(p, g, n->blocks[i]));
    if (n->kind != FBX_SYM_prim_Constant || n->noutputs != 1 || n->ninputs) continue;
    /* Constants of named types (Function: a fallback graph's entry, a class
     * instance) stand for code or objects, not values: they stay put. */
    if (n->outputs[0]->type->kind == FBX_TYPE_NAMED) continue;
    uint64_t h = const_hash(n);
    fbx_node *same = pool_find(p, n, h);
    if (same) {
      FBX_TRY(fbx_passutil_replace_uses(n->outputs[0], same->outputs[0]));
      fbx_node_destroy(n);
      p->merged++;
      continue;
    }
    /* Its place: right after the previously pooled constant. */
    fbx_node *after = p->count ? p->nodes[p->count - 1] : NULL;
    if (pool_add(p, n, h)) return fbx_status_nomem();
    if (n->owner != g->block || n->prev != after) {
      fbx_node_move_after(n, after ? after : g->block->param);
      p->moved++;
    }
  }
  return NULL;
}

fbx_status *fbx_pass_constpool(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("constpool", changed)) return NULL;
  pool p = {.mutation = fbx_graph_mutation_mask(g)};
  fbx_status *err = pool_block(&p, g, g->block);
  fbx_free(p.nodes);
  fbx_free(p.hashes);
  fbx_free(p.index);
  if (changed) *changed = p.merged || p.moved;
  if (p.merged || p.moved)
    fbx_log(FBX_LOG_PASSES, "constpool: merged %d constants, moved %d", p.merged, p.moved);
  return err;
}
