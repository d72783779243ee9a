/* Common subexpression elimination by hash-consing.
 *
 * Walks blocks in program order with one hash table per block, chained to
 * the tables of the enclosing blocks: a node found equal to one in the chain
 * is dominated by it (same block earlier, or an enclosing block before the
 * nested node) and is replaced by it. Which nodes may merge is decided by
 * `eligible` below; passes.h states the rules. */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "passes/passes.h"
#include "passes/passutil.h"

typedef struct scope {
  const struct scope *parent;
  fbx_node **slots;
  uint64_t *hashes;
  size_t cap, count;
} scope;

static uint64_t node_hash(const fbx_node *n) {
  uint64_t h = 1469598103934665603ull ^ n->kind;
  for (int i = 0; i < n->ninputs; i++) h = (h ^ n->inputs[i]->id) * 1099511628211ull;
  for (int i = 0; i < n->noutputs; i++) h = (h ^ (uint64_t)n->outputs[i]->type->kind) * 1099511628211ull;
  return h ^ fbx_passutil_attrs_hash(n) * 31u;
}

static bool nodes_equal(const fbx_node *a, const fbx_node *b) {
  if (a->kind != b->kind || a->ninputs != b->ninputs || a->noutputs != b->noutputs) return false;
  for (int i = 0; i < a->ninputs; i++)
    if (a->inputs[i] != b->inputs[i]) return false;
  for (int i = 0; i < a->noutputs; i++)
    if (!fbx_type_equal(a->outputs[i]->type, b->outputs[i]->type)) return false;
  return fbx_passutil_attrs_equal(a, b);
}

static fbx_node *scope_find(const scope *s, const fbx_node *n, uint64_t h) {
  for (; s; s = s->parent) {
    if (!s->cap) continue;
    for (size_t i = h & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
      if (s->hashes[i] == h && nodes_equal(s->slots[i], n)) return s->slots[i];
  }
  return NULL;
}

static int scope_add(scope *s, fbx_node *n, uint64_t h) {
  if ((s->count + 1) * 2 > s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 16;
    fbx_node **ns = fbx_calloc(ncap, sizeof *ns);
    uint64_t *nh = fbx_calloc(ncap, sizeof *nh);
    if (!ns || !nh) {
      fbx_free(ns);
      fbx_free(nh);
      return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->slots[i]) continue;
      size_t j = s->hashes[i] & (ncap - 1);
      while (ns[j]) j = (j + 1) & (ncap - 1);
      ns[j] = s->slots[i];
      nh[j] = s->hashes[i];
    }
    fbx_free(s->slots);
    fbx_free(s->hashes);
    s->slots = ns;
    s->hashes = nh;
    s->cap = ncap;
  }
  size_t j = h & (s->cap - 1);
  while (s->slots[j]) j = (j + 1) & (s->cap - 1);
  s->slots[j] = n;
  s->hashes[j] = h;
  s->count++;
  return 0;
}

static bool none_written(fbx_value *const *vs, int count, unsigned mask) {
  for (int i = 0; i < count; i++)
    if (fbx_type_may_be_written(vs[i]->type, mask)) return false;
  return true;
}

static bool eligible(const fbx_node *n, unsigned mutation) {
  if (n->nblocks || n->noutputs == 0 || fbx_node_subgraph(n)) return false;
  if (fbx_node_has_side_effects(n) || fbx_node_is_nondeterministic(n)) return false;
  for (int i = 0; i < n->nattrs; i++)
    if (n->attrs[i].kind == FBX_ATTR_GRAPH) return false;
  /* prim::Uninitialized stands for "no value yet"; nothing to share. */
  if (n->kind == FBX_SYM_prim_Uninitialized) return false;
  if (!mutation) return true;
  /* With mutation around, two equal nodes may read an object between writes,
   * or produce objects later written through one name and read through the
   * other: merge only what the graph's mutation cannot reach. */
  if (n->kind == FBX_SYM_prim_ListConstruct || n->kind == FBX_SYM_prim_DictConstruct) return false;
  return none_written(n->inputs, n->ninputs, mutation) && none_written(n->outputs, n->noutputs, mutation);
}

typedef struct cse_ctx {
  unsigned mutation; /* fbx_graph_mutation_mask */
  int merged;
  /* merged nodes (no uses left), destroyed at the end, last first: a
   * value's use list is in program order, so dropping the last use first
   * keeps removing n copies of a node linear instead of n^2/2 moves */
  fbx_node **dead;
  size_t ndead, cap_dead;
} cse_ctx;

static int note_dead(cse_ctx *c, fbx_node *n) {
  if (c->ndead == c->cap_dead) {
    size_t cap = c->cap_dead ? 2 * c->cap_dead : 64;
    fbx_node **nd = fbx_realloc(c->dead, cap * sizeof *nd);
    if (!nd) return -1;
    c->dead = nd;
    c->cap_dead = cap;
  }
  c->dead[c->ndead++] = n;
  return 0;
}

static fbx_status *cse_block(cse_ctx *c, fbx_block *b, const scope *parent) {
  scope s = {.parent = parent};
  fbx_status *err = NULL;
  FBX_BLOCK_FOR_EACH(n, b) {
    for (int i = 0; i < n->nblocks && !err; i++) err = cse_block(c, n->blocks[i], &s);
    if (err) break;
    if (!eligible(n, c->mutation)) continue;
    uint64_t h = node_hash(n);
    fbx_node *same = scope_find(&s, n, h);
    if (!same) {
      if (scope_add(&s, n, h)) {
        err = fbx_status_nomem();
        break;
      }
      continue;
    }
    for (int i = 0; i < n->noutputs && !err; i++)
      err = fbx_passutil_replace_uses(n->outputs[i], same->outputs[i]);
    if (err) break;
    if (note_dead(c, n)) {
      err = fbx_status_nomem();
      break;
    }
    c->merged++;
  }
  fbx_free(s.slots);
  fbx_free(s.hashes);
  return err;
}

fbx_status *fbx_pass_cse(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("cse", changed)) return NULL;
  cse_ctx c = {.mutation = fbx_graph_mutation_mask(g)};
  fbx_status *err = cse_block(&c, g->block, NULL);
  while (c.ndead) fbx_node_destroy(c.dead[--c.ndead]);
  fbx_free(c.dead);
  if (changed) *changed = c.merged > 0;
  if (c.merged) fbx_log(FBX_LOG_PASSES, "cse: merged %d nodes", c.merged);
  return err;
}
