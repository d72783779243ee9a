#include "ir/graph.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/workcount.h"

/* Topological positions leave gaps so that most insertions need no renumbering. */
enum { TOPO_STEP = 1 << 20 };

/* ---- growable arrays in the arena ------------------------------------------------ */

/* Arrays double in the arena; the old storage stays until the graph dies, which
 * bounds the waste at the array's final size. */
static int grow_array(fbx_arena *a, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int ncap = *cap ? *cap * 2 : 4;
  while (ncap < need) ncap *= 2;
  void *n = fbx_arena_alloc(a, elem * (size_t)ncap);
  if (!n) return -1;
  if (*arr && *cap) memcpy(n, *arr, elem * (size_t)*cap);
  *arr = n;
  *cap = ncap;
  return 0;
}

#define GROW(g, arr, cap, need) grow_array((g)->arena, (void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- names ----------------------------------------------------------------------- */

static void note_numeric_name(fbx_graph *g, const char *name) {
  if (!*name) return;
  uint64_t v = 0;
  for (const char *p = name; *p; p++) {
    if (*p < '0' || *p > '9') return;
    if (v > UINT64_MAX / 10 - 10) return;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (v + 1 > g->next_name) g->next_name = v + 1;
}

static const char *fresh_name(fbx_graph *g) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIu64, g->next_name++);
  return fbx_arena_strdup(g->arena, buf);
}

int fbx_value_set_name(fbx_value *v, const char *name) {
  fbx_graph *g = v->node->graph;
  const char *copy = fbx_arena_strdup(g->arena, name);
  if (!copy) return -1;
  v->name = copy;
  note_numeric_name(g, copy);
  return 0;
}

void fbx_value_set_type(fbx_value *v, fbx_type *t) { v->type = t; }

/* ---- creation ---------------------------------------------------------------------- */

static fbx_value *new_value(fbx_node *n, fbx_type *type, const char *name) {
  fbx_graph *g = n->graph;
  if (GROW(g, n->outputs, n->cap_outputs, n->noutputs + 1)) return NULL;
  fbx_value *v = fbx_arena_alloc(g->arena, sizeof *v);
  if (!v) return NULL;
  v->node = n;
  v->offset = n->noutputs;
  v->type = type ? type : fbx_type_tensor_any();
  v->id = g->next_value_id++;
  if (name) {
    if (fbx_value_set_name(v, name)) return NULL;
  } else if (!(v->name = fresh_name(g))) {
    return NULL;
  }
  n->outputs[n->noutputs++] = v;
  return v;
}

static fbx_node *new_node(fbx_graph *g, fbx_sym kind) {
  fbx_node *n = fbx_arena_alloc(g->arena, sizeof *n);
  if (!n) return NULL;
  n->kind = kind;
  n->graph = g;
  n->id = g->next_node_id++;
  return n;
}

static fbx_block *new_block(fbx_graph *g, fbx_node *owning) {
  fbx_block *b = fbx_arena_alloc(g->arena, sizeof *b);
  if (!b) return NULL;
  b->graph = g;
  b->owning = owning;
  b->param = new_node(g, FBX_SYM_prim_Param);
  b->ret = new_node(g, FBX_SYM_prim_Return);
  if (!b->param || !b->ret) return NULL;
  b->param->owner = b->ret->owner = b;
  b->param->topo = 0;
  b->ret->topo = INT64_MAX / 2;
  return b;
}

fbx_graph *fbx_graph_create(void) {
  fbx_graph *g = fbx_calloc(1, sizeof *g);
  if (!g) return NULL;
  g->arena = fbx_arena_create();
  if (!g->arena || !(g->block = new_block(g, NULL))) {
    fbx_arena_destroy(g->arena);
    fbx_free(g);
    return NULL;
  }
  return g;
}

static void destroy_subgraphs_of_node(fbx_node *n);

static void destroy_subgraphs_in_block(fbx_block *b) {
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) destroy_subgraphs_of_node(n);
}

static void destroy_subgraphs_of_node(fbx_node *n) {
  for (int i = 0; i < n->nattrs; i++)
    if (n->attrs[i].kind == FBX_ATTR_GRAPH) {
      fbx_graph_destroy(n->attrs[i].u.g);
      n->attrs[i].u.g = NULL;
    }
  for (int i = 0; i < n->nblocks; i++) destroy_subgraphs_in_block(n->blocks[i]);
}

void fbx_graph_destroy(fbx_graph *g) {
  if (!g) return;
  destroy_subgraphs_in_block(g->block);
  fbx_arena_destroy(g->arena);
  fbx_free(g);
}

fbx_node *fbx_block_first(const fbx_block *b) { return b->first; }

fbx_node *fbx_block_last(const fbx_block *b) { return b->last; }

fbx_value *fbx_graph_add_input(fbx_graph *g, fbx_type *type, const char *name) {
  return fbx_block_add_param(g->block, type, name);
}

fbx_block *fbx_node_add_block(fbx_node *n) {
  fbx_graph *g = n->graph;
  if (GROW(g, n->blocks, n->cap_blocks, n->nblocks + 1)) return NULL;
  fbx_block *b = new_block(g, n);
  if (!b) return NULL;
  n->blocks[n->nblocks++] = b;
  return b;
}

fbx_value *fbx_block_add_param(fbx_block *b, fbx_type *type, const char *name) {
  return new_value(b->param, type, name);
}

int fbx_block_add_return(fbx_block *b, fbx_value *v) { return fbx_node_add_input(b->ret, v); }

void fbx_block_erase_param(fbx_block *b, int i) { fbx_node_erase_output(b->param, i); }

void fbx_block_erase_return(fbx_block *b, int i) { fbx_node_remove_input(b->ret, i); }

fbx_node *fbx_node_create(fbx_graph *g, fbx_sym kind, int noutputs) {
  fbx_node *n = new_node(g, kind);
  if (!n) return NULL;
  for (int i = 0; i < noutputs; i++)
    if (!new_value(n, NULL, NULL)) return NULL;
  return n;
}

fbx_value *fbx_node_add_output(fbx_node *n, fbx_type *type) { return new_value(n, type, NULL); }

void fbx_node_erase_output(fbx_node *n, int i) {
  assert(i >= 0 && i < n->noutputs);
  assert(n->outputs[i]->nuses == 0);
  for (int j = i + 1; j < n->noutputs; j++) {
    n->outputs[j - 1] = n->outputs[j];
    n->outputs[j - 1]->offset = j - 1;
  }
  n->noutputs--;
}

void fbx_node_erase_outputs(fbx_node *n, const unsigned char *drop) {
  int k = 0;
  for (int j = 0; j < n->noutputs; j++) {
    if (drop[j]) {
      assert(n->outputs[j]->nuses == 0);
      continue;
    }
    n->outputs[k] = n->outputs[j];
    n->outputs[k]->offset = k;
    k++;
  }
  n->noutputs = k;
}

/* ---- uses --------------------------------------------------------------------------- */

/* Every input slot knows where its use sits in its value's use list
 * (n->use_at[i] indexes n->inputs[i]->uses), so finding, renumbering and
 * dropping a use are O(1) whatever the value's number of uses: a pooled
 * constant read by every node of a 64k-node graph costs no more per use than
 * a value read once. A dropped use's place is taken by the value's last use,
 * so a use list is in no particular order (see fbx_value in graph.h). */

/* Room for `need` inputs, in both the inputs and use_at arrays. */
static int grow_inputs(fbx_node *n, int need) {
  if (need <= n->cap_inputs) return 0;
  int ncap = n->cap_inputs ? n->cap_inputs * 2 : 4;
  while (ncap < need) ncap *= 2;
  fbx_value **in = fbx_arena_alloc(n->graph->arena, sizeof *in * (size_t)ncap);
  int *at = fbx_arena_alloc(n->graph->arena, sizeof *at * (size_t)ncap);
  if (!in || !at) return -1;
  if (n->ninputs) {
    memcpy(in, n->inputs, sizeof *in * (size_t)n->ninputs);
    memcpy(at, n->use_at, sizeof *at * (size_t)n->ninputs);
  }
  n->inputs = in;
  n->use_at = at;
  n->cap_inputs = ncap;
  return 0;
}

/* Make room for `extra` more uses so that later rewiring cannot fail halfway. */
static int reserve_uses(fbx_value *v, int extra) {
  return GROW(v->node->graph, v->uses, v->cap_uses, v->nuses + extra);
}

/* Record that input slot `offset` of user reads v (room reserved). */
static void push_use(fbx_value *v, fbx_node *user, int offset) {
  assert(v->nuses < v->cap_uses);
  v->uses[v->nuses].user = user;
  v->uses[v->nuses].offset = offset;
  user->use_at[offset] = v->nuses++;
}

/* The use of input slot `offset` of user leaves v's list; v's last use
 * takes its place. */
static void drop_use(fbx_value *v, fbx_node *user, int offset) {
  int k = user->use_at[offset];
  assert(k >= 0 && k < v->nuses && v->uses[k].user == user && v->uses[k].offset == offset &&
         "use list out of sync");
  fbx_work_add(FBX_WORK_USE_SCAN, 1);
  int last = --v->nuses;
  if (k != last) {
    v->uses[k] = v->uses[last];
    v->uses[k].user->use_at[v->uses[k].offset] = k;
  }
}

/* Input j of n moves to slot `to` (the caller moves inputs[j] and use_at[j]
 * along with it): its use records the new slot. */
static void move_slot(fbx_node *n, int j, int to) {
  fbx_use *u = &n->inputs[j]->uses[n->use_at[j]];
  assert(u->user == n && u->offset == j && "use list out of sync");
  fbx_work_add(FBX_WORK_USE_SCAN, 1);
  u->offset = to;
  n->inputs[to] = n->inputs[j];
  n->use_at[to] = n->use_at[j];
}

int fbx_node_insert_input(fbx_node *n, int i, fbx_value *v) {
  assert(i >= 0 && i <= n->ninputs);
  assert(v->node->graph == n->graph);
  if (grow_inputs(n, n->ninputs + 1) || reserve_uses(v, 1)) return -1;
  /* Shift later inputs up, from the end so that no slot is overwritten
   * before it moved. */
  for (int j = n->ninputs - 1; j >= i; j--) move_slot(n, j, j + 1);
  n->inputs[i] = v;
  push_use(v, n, i);
  n->ninputs++;
  return 0;
}

int fbx_node_add_input(fbx_node *n, fbx_value *v) {
  assert(v->node->graph == n->graph);
  if (grow_inputs(n, n->ninputs + 1) || reserve_uses(v, 1)) return -1;
  n->inputs[n->ninputs] = v;
  push_use(v, n, n->ninputs);
  n->ninputs++;
  return 0;
}

int fbx_node_set_input(fbx_node *n, int i, fbx_value *v) {
  assert(i >= 0 && i < n->ninputs);
  fbx_value *old = n->inputs[i];
  if (old == v) return 0;
  if (reserve_uses(v, 1)) return -1; /* nothing changed */
  drop_use(old, n, i);
  n->inputs[i] = v;
  push_use(v, n, i);
  return 0;
}

void fbx_node_remove_input(fbx_node *n, int i) {
  assert(i >= 0 && i < n->ninputs);
  drop_use(n->inputs[i], n, i);
  for (int j = i + 1; j < n->ninputs; j++) move_slot(n, j, j - 1);
  n->ninputs--;
}

/* In increasing order: a kept input moves down to k <= j, into a slot
 * already vacated. */
void fbx_node_remove_inputs(fbx_node *n, const unsigned char *drop) {
  int k = 0;
  for (int j = 0; j < n->ninputs; j++) {
    if (drop[j]) {
      drop_use(n->inputs[j], n, j);
      continue;
    }
    if (k != j) move_slot(n, j, k);
    k++;
  }
  n->ninputs = k;
}

void fbx_node_remove_all_inputs(fbx_node *n) {
  for (int i = n->ninputs - 1; i >= 0; i--) drop_use(n->inputs[i], n, i);
  n->ninputs = 0;
}

/* ---- placement ------------------------------------------------------------------------ */

static void renumber(fbx_block *b) {
  int64_t t = TOPO_STEP;
  for (fbx_node *n = b->first; n; n = n->next) {
    fbx_work_add(FBX_WORK_TOPO_RESPACE, 1);
    n->topo = t;
    t += TOPO_STEP;
  }
}

/* n was linked where its neighbours leave no room (lo is its predecessor's
 * position). Rather than renumber the whole block (a pass that inserts many
 * nodes at one place, like constant pooling, would then cost the block's
 * size every ~20 insertions), spread n and the nodes after it evenly up to
 * the first node far enough away: k nodes need a gap of at least 64 (k + 1),
 * which leaves every one of them room for a few more halvings. The window
 * grows with the crowding, so its cost is paid for by the insertions that
 * crowded it. Falls back to renumbering the block when the positions run out. */
static void respace(fbx_block *b, fbx_node *n, int64_t lo) {
  int64_t k = 1;
  fbx_node *x = n->next;
  for (; x && x->topo - lo < 64 * (k + 1); x = x->next) {
    k++;
    fbx_work_add(FBX_WORK_TOPO_RESPACE, 1);
  }
  int64_t hi = x ? x->topo : lo + TOPO_STEP * (k + 1);
  if (!x && hi >= b->ret->topo) {
    renumber(b);
    return;
  }
  int64_t step = (hi - lo) / (k + 1);
  int64_t t = lo;
  for (fbx_node *m = n; m != x; m = m->next) m->topo = t += step;
}

/* The neighbours of a position, with the sentinels standing in at the ends. */
static fbx_node *prev_or_param(const fbx_node *n) { return n->prev ? n->prev : n->owner->param; }
static fbx_node *next_or_ret(const fbx_node *n) { return n->next ? n->next : n->owner->ret; }

/* Insert n after pos, where pos is a node of the block or its param node. */
static void link_after(fbx_node *n, fbx_node *pos) {
  assert(!n->owner && "node is already in a block");
  assert(pos->kind != FBX_SYM_prim_Return || pos != pos->owner->ret);
  fbx_block *b = pos->owner;
  bool at_head = pos == b->param;
  fbx_node *next = at_head ? b->first : pos->next;
  n->owner = b;
  n->prev = at_head ? NULL : pos;
  n->next = next;
  if (at_head) b->first = n; else pos->next = n;
  if (next) next->prev = n; else b->last = n;
  int64_t lo = at_head ? b->param->topo : pos->topo;
  int64_t hi = next ? next->topo : b->ret->topo;
  if (!next && hi - lo > TOPO_STEP)
    n->topo = lo + TOPO_STEP; /* appending: a full step, not half the gap (that renumbers every ~40 appends) */
  else if (hi - lo < 2)
    respace(b, n, lo);
  else
    n->topo = lo + (hi - lo) / 2;
}

void fbx_node_insert_after(fbx_node *n, fbx_node *pos) { link_after(n, pos); }

void fbx_node_insert_before(fbx_node *n, fbx_node *pos) {
  assert(pos != pos->owner->param && "cannot insert before a block's param node");
  if (pos == pos->owner->ret)
    link_after(n, pos->owner->last ? pos->owner->last : pos->owner->param);
  else
    link_after(n, prev_or_param(pos));
}

void fbx_node_append(fbx_block *b, fbx_node *n) { link_after(n, b->last ? b->last : b->param); }

void fbx_node_prepend(fbx_block *b, fbx_node *n) { link_after(n, b->param); }

void fbx_node_detach(fbx_node *n) {
  fbx_block *b = n->owner;
  if (!b) return;
  if (n->prev) n->prev->next = n->next; else b->first = n->next;
  if (n->next) n->next->prev = n->prev; else b->last = n->prev;
  n->prev = n->next = NULL;
  n->owner = NULL;
}

void fbx_node_move_before(fbx_node *n, fbx_node *pos) {
  fbx_node_detach(n);
  fbx_node_insert_before(n, pos);
}

void fbx_node_move_after(fbx_node *n, fbx_node *pos) {
  fbx_node_detach(n);
  fbx_node_insert_after(n, pos);
}

static void destroy_block_nodes(fbx_block *b) {
  /* Destroy from the end so that users go before their producers. */
  for (fbx_node *n = fbx_block_last(b), *p; n; n = p) {
    p = n->prev;
    for (int i = 0; i < n->noutputs; i++)
      while (n->outputs[i]->nuses) {
        /* Uses by the block's own return (or by nodes already gone) go too. */
        fbx_use u = n->outputs[i]->uses[0];
        fbx_node_remove_input(u.user, u.offset);
      }
    fbx_node_destroy(n);
  }
  fbx_node_remove_all_inputs(b->ret);
}

void fbx_node_destroy(fbx_node *n) {
  for (int i = 0; i < n->noutputs; i++) assert(n->outputs[i]->nuses == 0 && "destroying a node whose output is still used");
  for (int i = 0; i < n->nblocks; i++) destroy_block_nodes(n->blocks[i]);
  n->nblocks = 0;
  for (int i = 0; i < n->nattrs; i++)
    if (n->attrs[i].kind == FBX_ATTR_GRAPH) {
      fbx_graph_destroy(n->attrs[i].u.g);
      n->attrs[i].u.g = NULL;
    }
  n->nattrs = 0;
  fbx_node_remove_all_inputs(n);
  fbx_node_detach(n);
}

/* ---- order --------------------------------------------------------------------------- */

static int depth_of(const fbx_node *n) {
  int d = 0;
  for (const fbx_block *b = n->owner; b && b->owning; b = b->owning->owner) d++;
  return d;
}

bool fbx_node_is_within(const fbx_node *inner, const fbx_node *outer) {
  for (const fbx_block *b = inner->owner; b && b->owning; b = b->owning->owner)
    if (b->owning == outer) return true;
  return false;
}

bool fbx_node_is_before(const fbx_node *a, const fbx_node *b) {
  if (a == b) return false;
  int da = depth_of(a), db = depth_of(b);
  const fbx_node *xa = a, *xb = b;
  /* Lift the deeper node until both are in blocks of the same depth. An
   * enclosing node counts as after its own contents (its outputs exist only
   * once its blocks have run). */
  while (da > db) {
    xa = xa->owner->owning;
    da--;
  }
  while (db > da) {
    xb = xb->owner->owning;
    db--;
  }
  if (xa == xb) return xa != a; /* a is inside b (before), or b is inside a (not) */
  while (xa->owner != xb->owner) {
    xa = xa->owner->owning;
    xb = xb->owner->owning;
    if (xa == xb) return false; /* different blocks of one node: neither is before */
  }
  return xa->topo < xb->topo;
}

/* The node of `block` that contains n (n itself, or an enclosing node). */
static const fbx_node *ancestor_in(const fbx_node *n, const fbx_block *block) {
  while (n && n->owner != block) n = n->owner ? n->owner->owning : NULL;
  return n;
}

/* Values that n (including anything nested in its blocks) reads from its own
 * block must be defined at or before `after_node`. */
static bool reads_ok(const fbx_node *n, const fbx_node *top, const fbx_node *after_node) {
  for (int i = 0; i < n->ninputs; i++) {
    const fbx_node *def = ancestor_in(n->inputs[i]->node, top->owner);
    if (!def || def == top || fbx_node_is_within(n->inputs[i]->node, top)) continue;
    if (def != after_node && !fbx_node_is_before(def, after_node)) return false;
  }
  for (int b = 0; b < n->nblocks; b++)
  {
    for (const fbx_node *m = fbx_block_first(n->blocks[b]); m; m = m->next)
      if (!reads_ok(m, top, after_node)) return false;
    if (!reads_ok(n->blocks[b]->ret, top, after_node)) return false;
  }
  return true;
}

/* Would n be valid strictly between after_node and before_node (neighbours
 * in n's block)? */
static bool can_move_to(const fbx_node *n, const fbx_node *before_node, const fbx_node *after_node) {
  if (!reads_ok(n, n, after_node)) return false;
  for (int i = 0; i < n->noutputs; i++) {
    const fbx_value *v = n->outputs[i];
    for (int u = 0; u < v->nuses; u++) {
      const fbx_node *a = ancestor_in(v->uses[u].user, n->owner);
      if (a == n) continue;
      if (a != before_node && !fbx_node_is_before(before_node, a)) return false;
    }
  }
  return true;
}

bool fbx_node_move_before_checked(fbx_node *n, fbx_node *pos) {
  assert(pos->owner == n->owner);
  if (pos == n || pos->prev == n) return true;
  if (!can_move_to(n, pos, prev_or_param(pos))) return false;
  fbx_node_move_before(n, pos);
  return true;
}

bool fbx_node_move_after_checked(fbx_node *n, fbx_node *pos) {
  assert(pos->owner == n->owner);
  if (pos == n || pos->next == n) return true;
  if (!can_move_to(n, next_or_ret(pos), pos)) return false;
  fbx_node_move_after(n, pos);
  return true;
}

/* ---- value uses ------------------------------------------------------------------------ */

int fbx_value_replace_all_uses(fbx_value *from, fbx_value *to) {
  assert(from != to);
  while (from->nuses) {
    fbx_use u = from->uses[0];
    if (fbx_node_set_input(u.user, u.offset, to)) return -1;
  }
  return 0;
}

int fbx_value_replace_uses_after(fbx_value *from, fbx_value *to, const fbx_node *after) {
  for (int i = 0; i < from->nuses;) {
    fbx_use u = from->uses[i];
    if (fbx_node_is_before(after, u.user)) {
      if (fbx_node_set_input(u.user, u.offset, to)) return -1;
      /* the use at i is gone: do not advance */
    } else {
      i++;
    }
  }
  return 0;
}

fbx_value *fbx_graph_find_value_in_block(const fbx_block *b, const char *name);

static fbx_value *find_in_node(const fbx_node *n, const char *name) {
  fbx_work_add(FBX_WORK_FIND_VALUE, 1);
  for (int i = 0; i < n->noutputs; i++)
    if (!strcmp(n->outputs[i]->name, name)) return n->outputs[i];
  for (int i = 0; i < n->nblocks; i++) {
    fbx_value *v = fbx_graph_find_value_in_block(n->blocks[i], name);
    if (v) return v;
  }
  return NULL;
}

fbx_value *fbx_graph_find_value_in_block(const fbx_block *b, const char *name) {
  fbx_value *v = find_in_node(b->param, name);
  if (v) return v;
  for (fbx_node *n = fbx_block_first(b); n; n = n->next)
    if ((v = find_in_node(n, name))) return v;
  return NULL;
}

fbx_value *fbx_graph_find_value(const fbx_graph *g, const char *name) {
  return fbx_graph_find_value_in_block(g->block, name);
}

/* ---- attributes ----------------------------------------------------------------------- */

fbx_attr *fbx_node_attr(const fbx_node *n, fbx_sym name) {
  for (int i = 0; i < n->nattrs; i++)
    if (n->attrs[i].name == name) return &n->attrs[i];
  return NULL;
}

static fbx_attr *attr_slot(fbx_node *n, fbx_sym name) {
  fbx_attr *a = fbx_node_attr(n, name);
  if (a) {
    if (a->kind == FBX_ATTR_GRAPH) fbx_graph_destroy(a->u.g);
    memset(&a->u, 0, sizeof a->u);
    a->n = 0;
    return a;
  }
  if (GROW(n->graph, n->attrs, n->cap_attrs, n->nattrs + 1)) return NULL;
  a = &n->attrs[n->nattrs++];
  memset(a, 0, sizeof *a);
  a->name = name;
  return a;
}

void fbx_node_remove_attr(fbx_node *n, fbx_sym name) {
  for (int i = 0; i < n->nattrs; i++)
    if (n->attrs[i].name == name) {
      if (n->attrs[i].kind == FBX_ATTR_GRAPH) fbx_graph_destroy(n->attrs[i].u.g);
      memmove(&n->attrs[i], &n->attrs[i + 1], sizeof(fbx_attr) * (size_t)(n->nattrs - i - 1));
      n->nattrs--;
      return;
    }
}

int fbx_node_set_i(fbx_node *n, fbx_sym name, int64_t v) {
  fbx_attr *a = attr_slot(n, name);
  if (!a) return -1;
  a->kind = FBX_ATTR_INT;
  a->u.i = v;
  return 0;
}

int fbx_node_set_f(fbx_node *n, fbx_sym name, double v) {
  fbx_attr *a = attr_slot(n, name);
  if (!a) return -1;
  a->kind = FBX_ATTR_FLOAT;
  a->u.f = v;
  return 0;
}

/* Attribute payloads are copied before the slot is claimed, so an allocation
 * failure leaves any previous value intact. */
int fbx_node_set_s(fbx_node *n, fbx_sym name, const char *v) {
  const char *c = fbx_arena_strdup(n->graph->arena, v);
  fbx_attr *a = c ? attr_slot(n, name) : NULL;
  if (!a) return -1;
  a->kind = FBX_ATTR_STR;
  a->u.s = c;
  return 0;
}

int fbx_node_set_is(fbx_node *n, fbx_sym name, const int64_t *v, int count) {
  int64_t *c = fbx_arena_memdup(n->graph->arena, v, sizeof *v * (size_t)count);
  fbx_attr *a = c ? attr_slot(n, name) : NULL;
  if (!a) return -1;
  a->kind = FBX_ATTR_INTS;
  a->u.is = c;
  a->n = count;
  return 0;
}

int fbx_node_set_fs(fbx_node *n, fbx_sym name, const double *v, int count) {
  double *c = fbx_arena_memdup(n->graph->arena, v, sizeof *v * (size_t)count);
  fbx_attr *a = c ? attr_slot(n, name) : NULL;
  if (!a) return -1;
  a->kind = FBX_ATTR_FLOATS;
  a->u.fs = c;
  a->n = count;
  return 0;
}

int fbx_node_set_ss(fbx_node *n, fbx_sym name, const char *const *v, int count) {
  fbx_arena *ar = n->graph->arena;
  const char **c = fbx_arena_alloc(ar, sizeof *c * (size_t)(count ? count : 1));
  if (!c) return -1;
  for (int i = 0; i < count; i++)
    if (!(c[i] = fbx_arena_strdup(ar, v[i]))) return -1;
  fbx_attr *a = attr_slot(n, name);
  if (!a) return -1;
  a->kind = FBX_ATTR_STRS;
  a->u.ss = c;
  a->n = count;
  return 0;
}

static fbx_tensor_const *copy_tensor_const(fbx_arena *ar, const fbx_tensor_const *t) {
  fbx_tensor_const *c = fbx_arena_memdup(ar, t, sizeof *t);
  if (!c) return NULL;
  if (t->rank > 0 && !(c->sizes = fbx_arena_memdup(ar, t->sizes, sizeof(int64_t) * (size_t)t->rank)))
    return NULL;
  if (t->text && !(c->text = fbx_arena_strdup(ar, t->text))) return NULL;
  if (t->data) {
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) numel *= t->sizes[i];
    if (!(c->data = fbx_arena_memdup(ar, t->data, fbx_dtype_size(t->dtype) * (size_t)numel)))
      return NULL;
  }
  return c;
}

int fbx_node_set_t(fbx_node *n, fbx_sym name, const fbx_tensor_const *t) {
  fbx_tensor_const *c = copy_tensor_const(n->graph->arena, t);
  fbx_attr *a = c ? attr_slot(n, name) : NULL;
  if (!a) return -1;
  a->kind = FBX_ATTR_TENSOR;
  a->u.t = c;
  return 0;
}

int fbx_node_set_g(fbx_node *n, fbx_sym name, fbx_graph *sub) {
  fbx_attr *a = attr_slot(n, name);
  if (!a) return -1;
  a->kind = FBX_ATTR_GRAPH;
  a->u.g = sub;
  sub->parent = n->graph;
  return 0;
}

int fbx_node_set_ty(fbx_node *n, fbx_sym name, const fbx_type *t) {
  fbx_type *c = fbx_type_clone(n->graph->arena, t);
  fbx_attr *a = c ? attr_slot(n, name) : NULL;
  if (!a) return -1;
  a->kind = FBX_ATTR_TYPE;
  a->u.ty = c;
  return 0;
}

static int copy_attr(fbx_node *dst, const fbx_attr *a) {
  switch (a->kind) {
    case FBX_ATTR_INT: return fbx_node_set_i(dst, a->name, a->u.i);
    case FBX_ATTR_FLOAT: return fbx_node_set_f(dst, a->name, a->u.f);
    case FBX_ATTR_STR: return fbx_node_set_s(dst, a->name, a->u.s);
    case FBX_ATTR_INTS: return fbx_node_set_is(dst, a->name, a->u.is, a->n);
    case FBX_ATTR_FLOATS: return fbx_node_set_fs(dst, a->name, a->u.fs, a->n);
    case FBX_ATTR_STRS: return fbx_node_set_ss(dst, a->name, a->u.ss, a->n);
    case FBX_ATTR_TENSOR: return fbx_node_set_t(dst, a->name, a->u.t);
    case FBX_ATTR_TYPE: return fbx_node_set_ty(dst, a->name, a->u.ty);
    case FBX_ATTR_GRAPH: {
      fbx_graph *c = fbx_graph_clone(a->u.g);
      if (!c) return -1;
      if (fbx_node_set_g(dst, a->name, c)) {
        fbx_graph_destroy(c);
        return -1;
      }
      return 0;
    }
    case FBX_ATTR_KIND_COUNT: break;
  }
  return -1;
}

int fbx_node_copy_attrs(fbx_node *dst, const fbx_node *src) {
  for (int i = 0; i < src->nattrs; i++)
    if (copy_attr(dst, &src->attrs[i])) return -1;
  return 0;
}

fbx_graph *fbx_node_subgraph(const fbx_node *n) {
  fbx_attr *a = fbx_node_attr(n, FBX_SYM_attr_Subgraph);
  return a && a->kind == FBX_ATTR_GRAPH ? a->u.g : NULL;
}

/* ---- cloning ---------------------------------------------------------------------------- */

typedef struct clone_ctx {
  fbx_ptrmap local;     /* values defined inside what is being cloned */
  fbx_value_map_fn map; /* everything else */
  void *map_ctx;
  bool keep_names;
} clone_ctx;

static fbx_value *clone_lookup(clone_ctx *c, fbx_value *v) {
  fbx_value *m = fbx_ptrmap_get(&c->local, v);
  return m ? m : c->map(c->map_ctx, v);
}

static fbx_value *clone_output(clone_ctx *c, fbx_node *dst, const fbx_value *src) {
  fbx_type *t = fbx_type_clone(dst->graph->arena, src->type);
  if (!t) return NULL;
  fbx_value *v = new_value(dst, t, c->keep_names ? src->name : NULL);
  if (!v || fbx_ptrmap_put(&c->local, src, v)) return NULL;
  return v;
}

static int clone_block_into(clone_ctx *c, fbx_block *dst, const fbx_block *src);

static fbx_node *clone_node(clone_ctx *c, fbx_block *b, const fbx_node *n) {
  fbx_graph *g = b->graph;
  fbx_node *m = new_node(g, n->kind);
  if (!m) return NULL;
  for (int i = 0; i < n->ninputs; i++) {
    fbx_value *in = clone_lookup(c, n->inputs[i]);
    if (!in || fbx_node_add_input(m, in)) goto fail;
  }
  for (int i = 0; i < n->noutputs; i++)
    if (!clone_output(c, m, n->outputs[i])) goto fail;
  if (n->srcloc && !(m->srcloc = fbx_arena_strdup(g->arena, n->srcloc))) goto fail;
  m->line = n->line;
  m->col = n->col;
  if (fbx_node_copy_attrs(m, n)) goto fail;
  fbx_node_append(b, m);
  for (int i = 0; i < n->nblocks; i++) {
    fbx_block *nb = fbx_node_add_block(m);
    if (!nb || clone_block_into(c, nb, n->blocks[i])) return NULL; /* m is in b: the caller's graph owns it */
  }
  return m;
fail:
  fbx_node_remove_all_inputs(m);
  for (int i = 0; i < m->nattrs; i++)
    if (m->attrs[i].kind == FBX_ATTR_GRAPH) fbx_graph_destroy(m->attrs[i].u.g);
  m->nattrs = 0;
  return NULL;
}

static int clone_block_into(clone_ctx *c, fbx_block *dst, const fbx_block *src) {
  for (int i = 0; i < fbx_block_nparams(src); i++)
    if (!clone_output(c, dst->param, fbx_block_param(src, i))) return -1;
  for (fbx_node *n = fbx_block_first(src); n; n = n->next)
    if (!clone_node(c, dst, n)) return -1;
  for (int i = 0; i < fbx_block_nreturns(src); i++) {
    fbx_value *v = clone_lookup(c, fbx_block_return(src, i));
    if (!v || fbx_block_add_return(dst, v)) return -1;
  }
  return 0;
}

static fbx_value *map_identity_fail(void *ctx, fbx_value *v) {
  (void)ctx;
  (void)v;
  return NULL; /* a whole-graph clone has no outer values */
}

fbx_graph *fbx_graph_clone(const fbx_graph *g) {
  fbx_graph *c = fbx_graph_create();
  if (!c) return NULL;
  c->next_name = g->next_name;
  if (g->source && !(c->source = fbx_arena_strdup(c->arena, g->source))) {
    fbx_graph_destroy(c);
    return NULL;
  }
  clone_ctx ctx = {.map = map_identity_fail, .keep_names = true};
  int rc = clone_block_into(&ctx, c->block, g->block);
  fbx_ptrmap_free(&ctx.local);
  if (rc) {
    fbx_graph_destroy(c);
    return NULL;
  }
  if (g->next_name > c->next_name) c->next_name = g->next_name;
  return c;
}

fbx_node *fbx_node_clone_into(fbx_block *b, const fbx_node *n, fbx_value_map_fn map, void *ctx) {
  clone_ctx c = {.map = map, .map_ctx = ctx, .keep_names = false};
  fbx_node *m = clone_node(&c, b, n);
  fbx_ptrmap_free(&c.local);
  return m;
}

static int count_block(const fbx_block *b) {
  int k = 0;
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    k++;
    for (int i = 0; i < n->nblocks; i++) k += count_block(n->blocks[i]);
  }
  return k;
}

int fbx_graph_count_nodes(const fbx_graph *g) { return count_block(g->block); }

/* ---- groups ------------------------------------------------------------------------------ */

typedef struct group_ctx {
  fbx_graph *sub;
  fbx_node *group;
  fbx_ptrmap inner; /* outer value -> subgraph input */
  int failed;
} group_ctx;

static fbx_value *group_map(void *vctx, fbx_value *v) {
  group_ctx *c = vctx;
  fbx_value *in = fbx_ptrmap_get(&c->inner, v);
  if (in) return in;
  fbx_type *t = fbx_type_clone(c->sub->arena, v->type);
  in = t ? fbx_graph_add_input(c->sub, t, NULL) : NULL;
  if (!in || fbx_ptrmap_put(&c->inner, v, in) || fbx_node_add_input(c->group, v)) {
    c->failed = 1;
    return NULL;
  }
  return in;
}

fbx_node *fbx_graph_create_group(fbx_graph *g, fbx_sym kind, fbx_node *const *nodes, int count) {
  assert(count > 0);
  fbx_block *block = nodes[0]->owner;
  fbx_ptrmap members = {0};
  group_ctx c = {0};
  fbx_node *group = NULL;
  for (int i = 0; i < count; i++) {
    assert(nodes[i]->owner == block);
    if (fbx_ptrmap_put(&members, nodes[i], (void *)nodes[i])) goto fail;
  }
  c.sub = fbx_graph_create();
  group = new_node(g, kind);
  if (!c.sub || !group) goto fail;
  c.group = group;
  /* Clone members in order; values they define map through the clone
   * context's local map, so only genuinely outer values become inputs. */
  clone_ctx cc = {.map = group_map, .map_ctx = &c, .keep_names = false};
  for (int i = 0; i < count; i++) {
    if (!clone_node(&cc, c.sub->block, nodes[i]) || c.failed) {
      fbx_ptrmap_free(&cc.local);
      goto fail;
    }
  }
  /* Outputs: member outputs used by anything outside the members. */
  for (int i = 0; i < count; i++) {
    for (int o = 0; o < nodes[i]->noutputs; o++) {
      fbx_value *v = nodes[i]->outputs[o];
      bool outside = false;
      for (int u = 0; u < v->nuses && !outside; u++) {
        const fbx_node *a = ancestor_in(v->uses[u].user, block);
        outside = !a || !fbx_ptrmap_has(&members, a) || a == block->ret;
      }
      if (!outside) continue;
      fbx_value *inner = fbx_ptrmap_get(&cc.local, v);
      fbx_type *t = fbx_type_clone(g->arena, v->type);
      fbx_value *out = t ? new_value(group, t, NULL) : NULL;
      if (!inner || !out || fbx_block_add_return(c.sub->block, inner)) {
        fbx_ptrmap_free(&cc.local);
        goto fail;
      }
      /* Remember the pairing: the k-th group output replaces v. */
      if (fbx_ptrmap_put(&members, out, v)) {
        fbx_ptrmap_free(&cc.local);
        goto fail;
      }
    }
  }
  fbx_ptrmap_free(&cc.local);
  for (int k = 0; k < group->noutputs; k++) {
    fbx_value *orig = fbx_ptrmap_get(&members, group->outputs[k]);
    if (reserve_uses(group->outputs[k], orig->nuses)) goto fail;
  }
  if (fbx_node_set_g(group, FBX_SYM_attr_Subgraph, c.sub)) goto fail;
  c.sub = NULL;
  fbx_node_insert_after(group, nodes[count - 1]);
  for (int k = 0; k < group->noutputs; k++) {
    fbx_value *orig = fbx_ptrmap_get(&members, group->outputs[k]);
    /* Only uses outside the members move; the members are destroyed next. */
    for (int u = 0; u < orig->nuses;) {
      const fbx_node *a = ancestor_in(orig->uses[u].user, block);
      if (!a || !fbx_ptrmap_has(&members, a) || a == block->ret)
        (void)fbx_node_set_input(orig->uses[u].user, orig->uses[u].offset, group->outputs[k]); /* reserved */
      else
        u++;
    }
  }
  for (int i = count - 1; i >= 0; i--) {
    fbx_node *n = nodes[i];
    for (int o = 0; o < n->noutputs; o++)
      while (n->outputs[o]->nuses) {
        fbx_use u = n->outputs[o]->uses[0];
        fbx_node_remove_input(u.user, u.offset); /* a later member, also going */
      }
    fbx_node_destroy(n);
  }
  fbx_ptrmap_free(&members);
  fbx_ptrmap_free(&c.inner);
  return group;
fail:
  if (group) {
    fbx_node_remove_all_inputs(group);
    fbx_node_destroy(group);
  }
  fbx_graph_destroy(c.sub);
  fbx_ptrmap_free(&members);
  fbx_ptrmap_free(&c.inner);
  return NULL;
}

typedef struct inline_ctx {
  const fbx_graph *sub;
  fbx_node *group;
} inline_ctx;

static fbx_value *inline_map(void *vctx, fbx_value *v) {
  inline_ctx *c = vctx;
  assert(v->node == c->sub->block->param);
  return c->group->inputs[v->offset];
}

int fbx_node_inline_group(fbx_node *group) {
  fbx_graph *sub = fbx_node_subgraph(group);
  assert(sub);
  inline_ctx ic = {sub, group};
  clone_ctx c = {.map = inline_map, .map_ctx = &ic, .keep_names = false};
  /* Clone into a scratch block owned by nobody, then splice before the group. */
  fbx_block *scratch = new_block(group->graph, NULL);
  if (!scratch) return -1;
  for (fbx_node *n = fbx_block_first(sub->block); n; n = n->next)
    if (!clone_node(&c, scratch, n)) {
      fbx_ptrmap_free(&c.local);
      destroy_block_nodes(scratch);
      return -1;
    }
  /* One value may stand for several outputs: reserve for all of them. */
  int total_uses = 0;
  for (int k = 0; k < group->noutputs; k++) total_uses += group->outputs[k]->nuses;
  for (int k = 0; k < group->noutputs; k++) {
    fbx_value *r = clone_lookup(&c, fbx_block_return(sub->block, k));
    if (reserve_uses(r, total_uses)) {
      fbx_ptrmap_free(&c.local);
      destroy_block_nodes(scratch);
      return -1;
    }
  }
  for (int k = 0; k < group->noutputs; k++) {
    fbx_value *r = clone_lookup(&c, fbx_block_return(sub->block, k));
    (void)fbx_value_replace_all_uses(group->outputs[k], r); /* reserved above */
  }
  fbx_ptrmap_free(&c.local);
  for (fbx_node *n = fbx_block_first(scratch), *next; n; n = next) {
    next = n->next;
    fbx_node_detach(n);
    fbx_node_insert_before(n, group);
  }
  fbx_node_destroy(group);
  return 0;
}

/* ---- constants ------------------------------------------------------------------------------ */

static fbx_value *insert_const(fbx_block *b, fbx_node *pos, fbx_node *n) {
  if (pos)
    fbx_node_insert_before(n, pos);
  else
    fbx_node_append(b, n);
  return n->outputs[0];
}

static fbx_node *const_node(fbx_block *b, fbx_type_kind kind) {
  fbx_node *n = fbx_node_create(b->graph, FBX_SYM_prim_Constant, 1);
  if (n) n->outputs[0]->type = fbx_type_simple(kind);
  return n;
}

fbx_value *fbx_insert_const_int(fbx_block *b, fbx_node *pos, int64_t v) {
  fbx_node *n = const_node(b, FBX_TYPE_INT);
  if (!n || fbx_node_set_i(n, FBX_SYM_attr_value, v)) return NULL;
  return insert_const(b, pos, n);
}

fbx_value *fbx_insert_const_float(fbx_block *b, fbx_node *pos, double v) {
  fbx_node *n = const_node(b, FBX_TYPE_FLOAT);
  if (!n || fbx_node_set_f(n, FBX_SYM_attr_value, v)) return NULL;
  return insert_const(b, pos, n);
}

fbx_value *fbx_insert_const_bool(fbx_block *b, fbx_node *pos, bool v) {
  fbx_node *n = const_node(b, FBX_TYPE_BOOL);
  if (!n || fbx_node_set_i(n, FBX_SYM_attr_value, v)) return NULL;
  return insert_const(b, pos, n);
}

fbx_value *fbx_insert_const_none(fbx_block *b, fbx_node *pos) {
  fbx_node *n = const_node(b, FBX_TYPE_NONE);
  if (!n) return NULL;
  return insert_const(b, pos, n);
}

bool fbx_value_is_const(const fbx_value *v) { return v->node->kind == FBX_SYM_prim_Constant; }

bool fbx_value_is_none(const fbx_value *v) {
  return fbx_value_is_const(v) && v->type->kind == FBX_TYPE_NONE;
}

bool fbx_value_const_int(const fbx_value *v, int64_t *out) {
  if (!fbx_value_is_const(v)) return false;
  if (v->type->kind != FBX_TYPE_INT && v->type->kind != FBX_TYPE_BOOL) return false;
  const fbx_attr *a = fbx_node_attr(v->node, FBX_SYM_attr_value);
  if (!a || a->kind != FBX_ATTR_INT) return false;
  *out = a->u.i;
  return true;
}

bool fbx_value_const_float(const fbx_value *v, double *out) {
  if (!fbx_value_is_const(v)) return false;
  const fbx_attr *a = fbx_node_attr(v->node, FBX_SYM_attr_value);
  if (!a) return false;
  if (v->type->kind == FBX_TYPE_FLOAT && a->kind == FBX_ATTR_FLOAT) {
    *out = a->u.f;
    return true;
  }
  if (v->type->kind == FBX_TYPE_INT && a->kind == FBX_ATTR_INT) {
    *out = (double)a->u.i;
    return true;
  }
  return false;
}
