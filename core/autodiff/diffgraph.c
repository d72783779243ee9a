/* Which values need gradients, and the gathering of differentiable nodes
 * into prim::DifferentiableGraph nodes (PyTorch's CreateAutodiffSubgraphs,
 * done as a grouping over each block rather than by repeated node moves).
 *
 * Grouping, per block, in program order: a candidate node joins the groups
 * of the candidates that produce its inputs when the union stays convex (no
 * path leaves it and comes back) and every node that would have to move
 * below the group to make it contiguous may move; otherwise it joins the one
 * producer group it can, otherwise it starts its own. Groups whose count of
 * formula nodes is below min_size are left as they are (PyTorch builds them
 * and inlines them back; deciding first gives the same graph with less
 * churn), except a group of one node whose own backward has at least
 * FBX_AUTODIFF_SOLO_BACKWARD_OPS compute ops (measured by differentiating it
 * alone, on the types the graph gives it): layer_norm, softmax, gelu or a
 * loss is one node forward but a graph backward, which only a
 * DifferentiableGraph lets the fuser see (run eagerly, its backward is a
 * one-node unit run op by op). Then each kept group is made contiguous (the non-members inside
 * its span that depend on it move below it, in order), gets private copies
 * of the constants it reads, and becomes a DifferentiableGraph node through
 * fbx_graph_create_group. Inner blocks (If/Loop bodies) are grouped on
 * their own; nothing crosses a block boundary.
 *
 * Candidates: nodes with a gradient formula that read or produce a value
 * requiring gradients, with no blocks or subgraph, no side effects, not in
 * place (by name or op flag), not random (moving them would change the
 * order a seeded run draws numbers in), and none of whose values may share storage
 * with a value the graph mutates (alias classes below). The plumbing joins
 * too: prim::ListConstruct / TupleConstruct whose every user is a candidate
 * (the list stays inside the group), prim::ListUnpack / TupleUnpack whose
 * input comes from a group member. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "base/log.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "base/workcount.h"
#include "ops/optable.h"
#include "passes/passes.h"

/* ---- requires_grad ----------------------------------------------------------------- */

/* Floating tensors (or tensors of unknown dtype) and containers of them. */
static bool type_can_require_grad(const fbx_type *t) {
  switch (t->kind) {
    case FBX_TYPE_TENSOR: return t->dtype == FBX_DTYPE_UNDEFINED || fbx_dtype_is_floating(t->dtype);
    case FBX_TYPE_LIST:
    case FBX_TYPE_OPTIONAL: return type_can_require_grad(t->elems[0]);
    case FBX_TYPE_TUPLE:
      for (int i = 0; i < t->nelems; i++)
        if (type_can_require_grad(t->elems[i])) return true;
      return false;
    default: return false;
  }
}

static void mark(bool *rg, const fbx_value *v, bool on, bool *changed) {
  if (on && !rg[v->id] && type_can_require_grad(v->type)) {
    rg[v->id] = true;
    *changed = true;
  }
}

static bool is_plumbing(fbx_sym k) {
  return k == FBX_SYM_prim_ListConstruct || k == FBX_SYM_prim_ListUnpack || k == FBX_SYM_prim_TupleConstruct ||
         k == FBX_SYM_prim_TupleUnpack || k == FBX_SYM_prim_TupleIndex;
}

static bool no_grad_by_table(const fbx_node *n) {
  fbx_type *types[FBX_SCHEMA_MAX_ARGS];
  if (n->ninputs > FBX_SCHEMA_MAX_ARGS || !fbx_sym_in_ns(n->kind, "aten")) return false;
  for (int i = 0; i < n->ninputs; i++) types[i] = n->inputs[i]->type;
  const fbx_op *op = fbx_op_resolve_types(n->kind, types, n->ninputs);
  return op && (op->dtype_rule == FBX_DT_BOOL || op->dtype_rule == FBX_DT_LONG || op->category == FBX_OPCAT_CREATION);
}

/* One sweep over b; *changed when a value newly requires grad. Loops need
 * several sweeps (a carried value may start requiring grad in the body). */
static void propagate_block(const fbx_block *b, bool *rg, bool *changed) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (n->kind == FBX_SYM_prim_If) {
      for (int k = 0; k < n->nblocks; k++) propagate_block(n->blocks[k], rg, changed);
      for (int o = 0; o < n->noutputs; o++)
        for (int k = 0; k < n->nblocks; k++) mark(rg, n->outputs[o], rg[fbx_block_return(n->blocks[k], o)->id], changed);
      continue;
    }
    if (n->kind == FBX_SYM_prim_Loop) {
      const fbx_block *body = n->blocks[0];
      for (int c = 0; c < n->noutputs; c++) {
        const fbx_value *param = fbx_block_param(body, 1 + c);
        mark(rg, param, rg[n->inputs[2 + c]->id] || rg[fbx_block_return(body, 1 + c)->id], changed);
      }
      propagate_block(body, rg, changed);
      for (int c = 0; c < n->noutputs; c++)
        mark(rg, n->outputs[c], rg[fbx_block_param(body, 1 + c)->id] || rg[fbx_block_return(body, 1 + c)->id],
             changed);
      continue;
    }
    for (int k = 0; k < n->nblocks; k++) propagate_block(n->blocks[k], rg, changed);
    /* Ops with a formula say which inputs carry a gradient; anything else
     * (plumbing, groups, ops without a formula) is taken to pass it on, so
     * the runtime can name the op that stops a gradient, unless the op
     * table says its results are integers, bools or fresh tensors. */
    bool formula = !is_plumbing(n->kind) && fbx_grad_has_formula(n);
    if (!formula && no_grad_by_table(n)) continue;
    bool any = false;
    for (int i = 0; i < n->ninputs && !any; i++)
      any = rg[n->inputs[i]->id] && (!formula || fbx_grad_input_differentiable(n, i));
    for (int o = 0; o < n->noutputs; o++) mark(rg, n->outputs[o], any, changed);
  }
}

fbx_status *fbx_autodiff_requires_grad(const fbx_graph *g, const bool *input_requires_grad, bool **out) {
  bool *rg = fbx_calloc(g->next_value_id ? g->next_value_id : 1, sizeof *rg);
  if (!rg) return fbx_status_nomem();
  bool changed = false;
  for (int i = 0; i < fbx_graph_ninputs(g); i++) mark(rg, fbx_graph_input(g, i), input_requires_grad[i], &changed);
  do {
    changed = false;
    propagate_block(g->block, rg, &changed);
  } while (changed);
  *out = rg;
  return NULL;
}

/* ---- alias classes of mutated values ------------------------------------------------ */

/* Union-find over value ids: values that may share storage (views, lists
 * and their elements, control-flow outputs and what flows into them) are
 * joined; a class is tainted when a node writes one of its values. */
typedef struct alias_sets {
  uint32_t nv;     /* values created later (groups, copies) are in no class */
  uint32_t *parent;
  bool *tainted; /* per root, after taint_all */
} alias_sets;

static uint32_t find(uint32_t *p, uint32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}

static void join(alias_sets *a, const fbx_value *x, const fbx_value *y) {
  if (!fbx_type_contains_tensor(x->type) || !fbx_type_contains_tensor(y->type)) return;
  uint32_t rx = find(a->parent, x->id), ry = find(a->parent, y->id);
  if (rx != ry) a->parent[rx] = ry;
}

/* How a node's outputs may alias its inputs: 0 not at all, 1 its first
 * tensor input (views, in-place ops), 2 any input (plumbing, unknown code). */
static int alias_kind(const fbx_node *n) {
  if (n->kind == FBX_SYM_prim_Constant) return 0;
  if (is_plumbing(n->kind) || n->kind == FBX_SYM_aten___getitem__) return 2;
  if (!fbx_sym_in_ns(n->kind, "aten") || !fbx_op_kind_known(n->kind)) return 2; /* unknown code, groups */
  return fbx_op_kind_has_flag(n->kind, FBX_OPF_ALIAS | FBX_OPF_INPLACE) ? 1 : 0;
}

static void join_block(alias_sets *a, const fbx_block *b) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) join_block(a, n->blocks[k]);
    if (n->kind == FBX_SYM_prim_If) {
      for (int o = 0; o < n->noutputs; o++)
        for (int k = 0; k < n->nblocks; k++) join(a, n->outputs[o], fbx_block_return(n->blocks[k], o));
    } else if (n->kind == FBX_SYM_prim_Loop) {
      const fbx_block *body = n->blocks[0];
      for (int c = 0; c < n->noutputs; c++) {
        join(a, n->outputs[c], n->inputs[2 + c]);
        join(a, n->outputs[c], fbx_block_param(body, 1 + c));
        join(a, n->outputs[c], fbx_block_return(body, 1 + c));
      }
    } else if (n->nblocks || alias_kind(n)) {
      int kind = n->nblocks ? 2 : alias_kind(n);
      const fbx_value *first = NULL;
      for (int i = 0; i < n->ninputs; i++) {
        if (!fbx_type_contains_tensor(n->inputs[i]->type)) continue;
        if (first) join(a, first, n->inputs[i]);
        else first = n->inputs[i];
        if (kind == 1) break;
      }
      for (int o = 0; o < n->noutputs; o++) {
        if (first) join(a, first, n->outputs[o]);
        else first = n->outputs[o];
      }
    }
  }
}

static void taint_block(alias_sets *a, const fbx_block *b) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) taint_block(a, n->blocks[k]);
    bool unknown = !fbx_sym_in_ns(n->kind, "aten") && !fbx_sym_in_ns(n->kind, "prim") &&
                   !fbx_sym_in_ns(n->kind, "fusebox");
    if (fbx_node_is_mutating(n) || fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE)) {
      if (n->ninputs) a->tainted[find(a->parent, n->inputs[0]->id)] = true;
    } else if (unknown || n->kind == FBX_SYM_prim_CallFunction || n->kind == FBX_SYM_prim_CallMethod) {
      for (int i = 0; i < n->ninputs; i++) a->tainted[find(a->parent, n->inputs[i]->id)] = true;
    }
  }
}

static fbx_status *alias_sets_build(alias_sets *a, const fbx_graph *g) {
  uint32_t nv = g->next_value_id ? g->next_value_id : 1;
  a->nv = nv;
  a->parent = fbx_malloc(nv * sizeof *a->parent);
  a->tainted = fbx_calloc(nv, sizeof *a->tainted);
  if (!a->parent || !a->tainted) return fbx_status_nomem();
  for (uint32_t i = 0; i < nv; i++) a->parent[i] = i;
  join_block(a, g->block);
  taint_block(a, g->block);
  return NULL;
}

static void alias_sets_free(alias_sets *a) {
  fbx_free(a->parent);
  fbx_free(a->tainted);
}

static bool is_tainted(const alias_sets *a, const fbx_value *v) {
  return a->parent && v->id < a->nv && a->tainted[find(a->parent, v->id)];
}

/* ---- grouping one block ------------------------------------------------------------- */

typedef enum cand_kind {
  CAND_NONE,
  CAND_OP,        /* a node with a formula: counts towards min_size */
  CAND_CONSTRUCT, /* prim::ListConstruct / TupleConstruct feeding candidates only */
  CAND_UNPACK     /* prim::ListUnpack / TupleUnpack of a member's output */
} cand_kind;

typedef struct sweep {
  fbx_graph *g;
  const bool *rg;
  uint32_t nrg;     /* rg's size: values made since need no gradient decision */
  alias_sets alias; /* parent NULL when the graph has no mutation */
  int min_size;
  int created;
} sweep;

typedef struct blockgroups {
  fbx_block *b;
  fbx_node **nodes;
  int n;
  fbx_ptrmap index; /* node -> index + 1 */
  cand_kind *kind;
  int *parent;      /* union-find over indices; -1: in no group */
} blockgroups;

static int index_of(const blockgroups *bg, const fbx_node *n) {
  while (n && n->owner != bg->b) n = n->owner ? n->owner->owning : NULL;
  if (!n) return -1;
  return (int)(intptr_t)fbx_ptrmap_get(&bg->index, n) - 1; /* -1 also for the ret sentinel */
}

static int group_of(blockgroups *bg, int i) {
  if (i < 0 || bg->parent[i] < 0) return -1;
  while (bg->parent[i] != i) i = bg->parent[i] = bg->parent[bg->parent[i]];
  return i;
}

static bool touches_alias_of_mutation(const sweep *s, const fbx_node *n) {
  for (int i = 0; i < n->ninputs; i++)
    if (is_tainted(&s->alias, n->inputs[i])) return true;
  for (int o = 0; o < n->noutputs; o++)
    if (is_tainted(&s->alias, n->outputs[o])) return true;
  return false;
}

static bool requires_grad(const sweep *s, const fbx_value *v) { return v->id < s->nrg && s->rg[v->id]; }

static bool is_op_candidate(const sweep *s, const fbx_node *n) {
  if (n->nblocks || fbx_node_subgraph(n) || is_plumbing(n->kind) || n->kind == FBX_SYM_prim_Constant) return false;
  if (fbx_node_has_side_effects(n) || fbx_node_is_mutating(n) || fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE) ||
      fbx_node_is_nondeterministic(n))
    return false;
  if (!fbx_grad_has_formula(n)) return false;
  bool touches = false;
  for (int i = 0; i < n->ninputs && !touches; i++) touches = requires_grad(s, n->inputs[i]);
  for (int o = 0; o < n->noutputs && !touches; o++) touches = requires_grad(s, n->outputs[o]);
  return touches && !touches_alias_of_mutation(s, n);
}

/* A node that may move below a group: it has no effect to reorder, draws
 * no random numbers (a seeded run must draw in the same order), and
 * nothing it reads can be written in between. */
static bool movable(const sweep *s, const fbx_node *n) {
  return !fbx_node_has_side_effects(n) && !fbx_node_is_nondeterministic(n) && !touches_alias_of_mutation(s, n);
}

static void classify(const sweep *s, blockgroups *bg) {
  for (int i = 0; i < bg->n; i++) bg->kind[i] = is_op_candidate(s, bg->nodes[i]) ? CAND_OP : CAND_NONE;
  for (int i = 0; i < bg->n; i++) {
    const fbx_node *n = bg->nodes[i];
    if (touches_alias_of_mutation(s, n)) continue;
    if (n->kind == FBX_SYM_prim_ListUnpack || n->kind == FBX_SYM_prim_TupleUnpack) {
      bg->kind[i] = CAND_UNPACK;
    } else if (n->kind == FBX_SYM_prim_ListConstruct || n->kind == FBX_SYM_prim_TupleConstruct) {
      const fbx_value *v = n->outputs[0];
      bool local = v->nuses > 0;
      for (int u = 0; u < v->nuses && local; u++) {
        int j = index_of(bg, v->uses[u].user);
        local = j >= 0 && bg->nodes[j] == v->uses[u].user && bg->kind[j] == CAND_OP;
      }
      if (local) bg->kind[i] = CAND_CONSTRUCT;
    }
  }
}

/* ---- growing groups ------------------------------------------------------------------
 *
 * Nodes are visited in program order; node i joins the groups of its
 * producers when the union stays convex (no path leaves it and comes back)
 * and every non-member inside its span that depends on it may move below it.
 *
 * Each group keeps its members (a list), and a frontier: a min-heap of the
 * nodes after its last member that its members or the non-members they
 * reach use, each marked "from a member" or "from a non-member". Adding
 * node i to one group only pops the frontier up to i: a popped node before i
 * is a non-member the group reaches (it must be movable; its users join the
 * frontier), and i itself may only be reached from members. Nothing behind
 * the group's last member is looked at again, so a long chain costs O(n log n)
 * in all. A union of two or more groups is checked from scratch over the
 * members and what they reach up to i, which sums to O(n log n) over a tree
 * of unions. */

enum { NO_BLOCK = 0x7fffffff };

typedef struct gstate {
  int head, tail; /* member list (any order), through grow->next */
  int *heap;      /* frontier entries: index * 2 + from_non_member */
  int nheap, cap;
  int last_popped; /* dedupe: entries pop in order */
  int blocked;     /* a reached node that may not move (NO_BLOCK: none) */
} gstate;

typedef struct grow {
  gstate *st;  /* by state id */
  int nst;
  int *sid;    /* root index -> state id */
  int *next;   /* member list links */
  int *stamp;  /* scratch marks for the from-scratch check */
  int cur;
  int *work;
  int *front; /* the from-scratch check's frontier */
  int nfront, cap_front;
} grow;

static int heap_push(gstate *g, int e) {
  if (g->nheap == g->cap) {
    int cap = g->cap ? 2 * g->cap : 8;
    int *nh = fbx_realloc(g->heap, sizeof *nh * (size_t)cap);
    if (!nh) return -1;
    g->heap = nh;
    g->cap = cap;
  }
  int i = g->nheap++;
  while (i > 0 && g->heap[(i - 1) / 2] > e) {
    g->heap[i] = g->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  g->heap[i] = e;
  return 0;
}

static int heap_pop(gstate *g) {
  int top = g->heap[0], e = g->heap[--g->nheap], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= g->nheap) break;
    if (c + 1 < g->nheap && g->heap[c + 1] < g->heap[c]) c++;
    if (g->heap[c] >= e) break;
    g->heap[i] = g->heap[c];
    i = c;
  }
  if (g->nheap) g->heap[i] = e;
  return top;
}

/* The block-level users of node j after `after`, pushed as frontier entries. */
static int push_users(const blockgroups *bg, gstate *g, int j, int after, int from_non_member) {
  const fbx_node *n = bg->nodes[j];
  for (int o = 0; o < n->noutputs; o++) {
    const fbx_value *v = n->outputs[o];
    for (int u = 0; u < v->nuses; u++) {
      int k = index_of(bg, v->uses[u].user);
      if (k > after && heap_push(g, k * 2 + from_non_member)) return -1;
    }
  }
  return 0;
}

static int new_state(grow *w, int i) {
  gstate *g = &w->st[w->nst];
  memset(g, 0, sizeof *g);
  g->head = g->tail = i;
  w->next[i] = -1;
  g->last_popped = -1;
  g->blocked = NO_BLOCK;
  return w->nst++;
}

/* May node i join the group with state g? Pops g's frontier before i
 * (facts about what g reaches, true whatever i does); *ok false when not. */
static fbx_status *try_one(const sweep *s, const blockgroups *bg, gstate *g, int i, bool *ok) {
  *ok = false;
  while (g->blocked == NO_BLOCK && g->nheap && g->heap[0] / 2 < i) {
    int x = heap_pop(g) / 2;
    fbx_work_add(FBX_WORK_DIFFGRAPH_VISIT, 1);
    if (x == g->last_popped) continue;
    g->last_popped = x;
    if (!movable(s, bg->nodes[x])) g->blocked = x;
    else if (push_users(bg, g, x, x, 1)) return fbx_status_nomem();
  }
  if (g->blocked != NO_BLOCK) return NULL;
  /* entries at i: a path through a non-member would come back into the
   * group. They sort last among i's entries; when one is there, i stays
   * outside and every entry at i stays (i is then a node the group reaches). */
  int at_i = 0;
  bool through = false;
  while (g->nheap && g->heap[0] / 2 == i) {
    through |= heap_pop(g) & 1;
    at_i++;
  }
  if (through) {
    for (int k = 0; k < at_i; k++)
      if (heap_push(g, i * 2 + (k == at_i - 1))) return fbx_status_nomem();
    return NULL;
  }
  *ok = true;
  return NULL;
}

/* The union of the groups with states sids[0..n) and node i, from scratch:
 * *ok, and in w->front the new group's frontier when it is valid. */
static fbx_status *try_union(const sweep *s, const blockgroups *bg, grow *w, const int *sids, int n, int i,
                             bool *ok) {
  *ok = false;
  int mem = ++w->cur, seen = ++w->cur, nwork = 0;
  w->nfront = 0;
  w->stamp[i] = mem;
  for (int k = 0; k < n; k++)
    for (int m = w->st[sids[k]].head; m >= 0; m = w->next[m]) w->stamp[m] = mem;
  for (int pass = 0; pass < 2; pass++) {
    /* pass 0: members' users; pass 1: what the non-members reached use */
    int count = pass == 0 ? n + 1 : 0;
    for (int k = 0; pass == 0 && k < count; k++) {
      for (int m = k < n ? w->st[sids[k]].head : i; m >= 0; m = k < n ? w->next[m] : -1) {
        const fbx_node *x = bg->nodes[m];
        for (int o = 0; o < x->noutputs; o++)
          for (int u = 0; u < x->outputs[o]->nuses; u++) {
            int j = index_of(bg, x->outputs[o]->uses[u].user);
            fbx_work_add(FBX_WORK_DIFFGRAPH_VISIT, 1);
            if (j < 0 || w->stamp[j] == mem) continue;
            if (j > i) {
              if (w->nfront == w->cap_front) {
                int cap = w->cap_front ? 2 * w->cap_front : 64;
                int *nf = fbx_realloc(w->front, sizeof *nf * (size_t)cap);
                if (!nf) return fbx_status_nomem();
                w->front = nf;
                w->cap_front = cap;
              }
              w->front[w->nfront++] = j * 2;
            } else if (w->stamp[j] != seen) {
              w->stamp[j] = seen;
              w->work[nwork++] = j;
            }
          }
      }
    }
    while (pass == 1 && nwork) {
      int jx = w->work[--nwork];
      if (!movable(s, bg->nodes[jx])) return NULL;
      const fbx_node *x = bg->nodes[jx];
      for (int o = 0; o < x->noutputs; o++)
        for (int u = 0; u < x->outputs[o]->nuses; u++) {
          int j = index_of(bg, x->outputs[o]->uses[u].user);
          fbx_work_add(FBX_WORK_DIFFGRAPH_VISIT, 1);
          if (j < 0) continue;
          if (w->stamp[j] == mem) {
            if (j <= i) return NULL; /* member -> outside -> member */
            continue;
          }
          if (j > i) {
            if (w->nfront == w->cap_front) {
              int cap = w->cap_front ? 2 * w->cap_front : 64;
              int *nf = fbx_realloc(w->front, sizeof *nf * (size_t)cap);
              if (!nf) return fbx_status_nomem();
              w->front = nf;
              w->cap_front = cap;
            }
            w->front[w->nfront++] = j * 2 + 1;
          } else if (w->stamp[j] != seen) {
            w->stamp[j] = seen;
            w->work[nwork++] = j;
          }
        }
    }
  }
  *ok = true;
  return NULL;
}

static void join_groups(blockgroups *bg, int self, const int *roots, int nroots) {
  bg->parent[self] = self;
  for (int k = 0; k < nroots; k++) bg->parent[roots[k]] = self;
}

/* i joins the groups of roots[0..nroots) (already checked). */
static fbx_status *commit(const blockgroups *bg, grow *w, int i, const int *roots, int nroots, bool from_scratch) {
  int sid;
  if (nroots == 0) {
    sid = new_state(w, i);
    if (push_users(bg, &w->st[sid], i, i, 0)) return fbx_status_nomem();
  } else if (!from_scratch) {
    sid = w->sid[roots[0]];
    gstate *g = &w->st[sid];
    w->next[i] = g->head;
    g->head = i;
    if (push_users(bg, g, i, i, 0)) return fbx_status_nomem();
  } else {
    sid = w->sid[roots[0]];
    gstate *g = &w->st[sid];
    for (int k = 1; k < nroots; k++) {
      gstate *o = &w->st[w->sid[roots[k]]];
      w->next[g->tail] = o->head;
      g->tail = o->tail;
      fbx_free(o->heap);
      memset(o, 0, sizeof *o);
    }
    w->next[i] = g->head;
    g->head = i;
    g->nheap = 0;
    g->last_popped = -1;
    g->blocked = NO_BLOCK;
    for (int k = 0; k < w->nfront; k++)
      if (heap_push(g, w->front[k])) return fbx_status_nomem();
  }
  w->sid[i] = sid;
  join_groups((blockgroups *)bg, i, roots, nroots);
  return NULL;
}

static fbx_status *grow_groups(const sweep *s, blockgroups *bg) {
  grow w = {0};
  size_t cap = (size_t)(bg->n ? bg->n : 1);
  int *roots = fbx_malloc(sizeof(int) * cap), *sids = fbx_malloc(sizeof(int) * cap);
  w.st = fbx_calloc(cap, sizeof *w.st);
  w.sid = fbx_malloc(sizeof(int) * cap);
  w.next = fbx_malloc(sizeof(int) * cap);
  w.stamp = fbx_calloc(cap, sizeof(int));
  w.work = fbx_malloc(sizeof(int) * cap);
  fbx_status *st = NULL;
  if (!roots || !sids || !w.st || !w.sid || !w.next || !w.stamp || !w.work) st = fbx_status_nomem();
  for (int i = 0; i < bg->n && !st; i++) {
    if (bg->kind[i] == CAND_NONE) continue;
    const fbx_node *n = bg->nodes[i];
    int nroots = 0;
    /* producer groups, latest producer first (the one to try alone first) */
    for (int a = n->ninputs - 1; a >= 0; a--) {
      int r = group_of(bg, index_of(bg, n->inputs[a]->node));
      bool seen = r < 0;
      for (int k = 0; k < nroots && !seen; k++) seen = roots[k] == r;
      if (!seen) roots[nroots++] = r;
    }
    if (bg->kind[i] == CAND_UNPACK && !nroots) continue;
    bool ok = false;
    if (nroots == 0) {
      ok = true;
    } else if (nroots == 1) {
      st = try_one(s, bg, &w.st[w.sid[roots[0]]], i, &ok);
    } else {
      for (int k = 0; k < nroots; k++) sids[k] = w.sid[roots[k]];
      st = try_union(s, bg, &w, sids, nroots, i, &ok);
    }
    if (st) break;
    if (ok) {
      st = commit(bg, &w, i, roots, nroots, nroots > 1);
      continue;
    }
    bool joined = false;
    for (int k = 0; k < nroots && !joined && nroots > 1 && !st; k++) {
      st = try_one(s, bg, &w.st[w.sid[roots[k]]], i, &joined);
      if (!st && joined) st = commit(bg, &w, i, &roots[k], 1, false);
    }
    if (!st && !joined && bg->kind[i] != CAND_UNPACK) st = commit(bg, &w, i, NULL, 0, false);
  }
  if (w.st)
    for (int k = 0; k < w.nst; k++) fbx_free(w.st[k].heap);
  fbx_free(w.st);
  fbx_free(w.sid);
  fbx_free(w.next);
  fbx_free(w.stamp);
  fbx_free(w.work);
  fbx_free(w.front);
  fbx_free(roots);
  fbx_free(sids);
  return st;
}

/* ---- turning one group into a DifferentiableGraph ---------------------------------- */

static fbx_value *identity_map(void *ctx, fbx_value *v) {
  (void)ctx;
  return v;
}

/* members: the group's nodes in program order. */
static fbx_status *materialize(sweep *s, fbx_block *b, fbx_node **members, int count) {
  fbx_status *st = NULL;
  fbx_ptrmap in_group = {0}, down = {0}, consts = {0};
  fbx_node **arr = NULL, **moved = NULL, **origs = NULL;
  int narr = 0, nmoved = 0, norigs = 0;
  for (int i = 0; i < count; i++)
    if (fbx_ptrmap_put(&in_group, members[i], members[i])) goto nomem;
  /* Make the group contiguous: what depends on it inside its span goes below it. */
  int span = 0;
  for (fbx_node *n = members[0]; n != members[count - 1]; n = n->next) span++;
  moved = fbx_malloc(sizeof *moved * (size_t)(span + 1));
  if (!moved) goto nomem;
  for (fbx_node *n = members[0]; n != members[count - 1]; n = n->next) {
    if (fbx_ptrmap_has(&in_group, n)) continue;
    bool dep = false;
    for (int i = 0; i < n->ninputs && !dep; i++) {
      const fbx_node *d = n->inputs[i]->node;
      while (d && d->owner != b) d = d->owner ? d->owner->owning : NULL;
      dep = d && (fbx_ptrmap_has(&in_group, d) || fbx_ptrmap_has(&down, d));
    }
    /* values read inside n's blocks */
    for (int k = 0; k < n->nblocks && !dep; k++) {
      for (const fbx_node *m = members[0]; m != n && !dep; m = m->next) {
        if (!fbx_ptrmap_has(&in_group, m) && !fbx_ptrmap_has(&down, m)) continue;
        for (int o = 0; o < m->noutputs && !dep; o++)
          for (int u = 0; u < m->outputs[o]->nuses && !dep; u++)
            dep = fbx_node_is_within(m->outputs[o]->uses[u].user, n);
      }
    }
    if (!dep) continue;
    if (!movable(s, n)) {
      /* The positions moved since the group was checked; leave it alone. */
      fbx_log(FBX_LOG_PASSES, "autodiff: skipping a group: %s would have to move below it", fbx_sym_str(n->kind));
      goto done;
    }
    if (fbx_ptrmap_put(&down, n, n)) goto nomem;
    moved[nmoved++] = n;
  }
  for (int i = nmoved - 1; i >= 0; i--) {
    bool ok = fbx_node_move_after_checked(moved[i], members[count - 1]);
    assert(ok && "a convex group's dependents move below it");
    (void)ok;
  }
  /* Private copies of the constants the group reads, so it is
   * self-contained (the backward copies constants rather than saving them). */
  arr = fbx_malloc(sizeof *arr * (size_t)count * 2);
  origs = fbx_malloc(sizeof *origs * (size_t)count * 2);
  if (!arr || !origs) goto nomem;
  int cap_consts = 2 * count;
  for (int i = 0; i < count; i++) {
    fbx_node *m = members[i];
    for (int a = 0; a < m->ninputs; a++) {
      fbx_node *c = m->inputs[a]->node;
      if (c->kind != FBX_SYM_prim_Constant || fbx_ptrmap_has(&in_group, c)) continue;
      fbx_node *copy = fbx_ptrmap_get(&consts, c);
      if (!copy) {
        if (narr >= cap_consts) {
          cap_consts *= 2;
          fbx_node **na = fbx_realloc(arr, sizeof *arr * (size_t)cap_consts);
          if (!na) goto nomem;
          arr = na;
          fbx_node **no = fbx_realloc(origs, sizeof *origs * (size_t)cap_consts);
          if (!no) goto nomem;
          origs = no;
        }
        copy = fbx_node_clone_into(b, c, identity_map, NULL);
        if (!copy) goto nomem;
        fbx_node_move_before(copy, members[0]);
        if (fbx_ptrmap_put(&consts, c, copy)) goto nomem;
        arr[narr++] = copy;
        origs[norigs++] = c;
      }
      if (fbx_node_set_input(m, a, copy->outputs[0])) goto nomem;
    }
  }
  {
    fbx_node **all = fbx_realloc(arr, sizeof *arr * (size_t)(narr + count));
    if (!all) goto nomem;
    arr = all;
  }
  for (int i = 0; i < count; i++) arr[narr++] = members[i];
  if (!fbx_graph_create_group(s->g, FBX_SYM_prim_DifferentiableGraph, arr, narr)) goto nomem;
  s->created++;
  for (int i = 0; i < norigs; i++)
    if (!origs[i]->outputs[0]->nuses) fbx_node_destroy(origs[i]);
  goto done;
nomem:
  st = fbx_status_nomem();
done:
  fbx_ptrmap_free(&in_group);
  fbx_ptrmap_free(&down);
  fbx_ptrmap_free(&consts);
  fbx_free(arr);
  fbx_free(moved);
  fbx_free(origs);
  return st;
}

static int cmp_node_order(const void *a, const void *b) {
  const fbx_node *x = *(fbx_node *const *)a, *y = *(fbx_node *const *)b;
  return x == y ? 0 : fbx_node_is_before(x, y) ? -1 : 1;
}

/* ---- single-node groups whose backward is worth a graph ---------------------------- */

typedef struct solo_map {
  fbx_ptrmap m; /* g value -> S value */
} solo_map;

static fbx_value *solo_value(void *ctx, fbx_value *v) { return fbx_ptrmap_get(&((solo_map *)ctx)->m, v); }

/* Ops of a backward graph that compute tensors, in every block: not
 * constants, list and tuple plumbing, shape queries or views, nor the
 * _grad_sum_to_size that undoes broadcasting (it is the input shapes', not
 * the op's: with exact sizes it mostly goes away). */
static int compute_ops(const fbx_block *b) {
  int c = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) c += compute_ops(n->blocks[k]);
    if (!fbx_sym_in_ns(n->kind, "aten") || fbx_op_kind_has_flag(n->kind, FBX_OPF_ALIAS) ||
        !strcmp(fbx_sym_str(n->kind), "aten::_grad_sum_to_size"))
      continue;
    bool tensor = false;
    for (int o = 0; o < n->noutputs; o++) tensor |= n->outputs[o]->type->kind == FBX_TYPE_TENSOR;
    c += tensor;
  }
  return c;
}

/* The size of the backward of a group of one formula node (members: that
 * node and the list plumbing pulled in with it, in program order): the
 * compute ops of its gradient, differentiated on its own for the inputs
 * that require grad. 0 when it cannot be differentiated here. */
static fbx_status *solo_backward_ops(const sweep *s, fbx_node **members, int n, int *out) {
  *out = 0;
  fbx_graph *S = fbx_graph_create();
  solo_map sm = {{0}};
  bool *rg = NULL;
  int nrg = 0, cap = 0;
  fbx_status *st = S ? NULL : fbx_status_nomem();
  const fbx_node *op = NULL;
  for (int k = 0; k < n && !st; k++) {
    const fbx_node *m = members[k];
    for (int i = 0; i < m->ninputs && !st; i++) {
      fbx_value *v = m->inputs[i];
      if (fbx_ptrmap_has(&sm.m, v)) continue;
      fbx_value *p = NULL;
      if (v->node->kind == FBX_SYM_prim_Constant) {
        fbx_node *c = fbx_node_clone_into(S->block, v->node, solo_value, &sm);
        p = c ? c->outputs[v->offset] : NULL;
      } else {
        if (nrg == cap) {
          cap = cap ? cap * 2 : 8;
          bool *r = fbx_realloc(rg, sizeof *r * (size_t)cap);
          if (!r) {
            st = fbx_status_nomem();
            break;
          }
          rg = r;
        }
        rg[nrg++] = requires_grad(s, v);
        p = fbx_graph_add_input(S, fbx_type_clone(S->arena, v->type), NULL);
      }
      if (!p || fbx_ptrmap_put(&sm.m, v, p)) st = fbx_status_nomem();
    }
    fbx_node *c = st ? NULL : fbx_node_clone_into(S->block, m, solo_value, &sm);
    if (!st && !c) st = fbx_status_nomem();
    for (int o = 0; c && !st && o < m->noutputs; o++)
      if (fbx_ptrmap_put(&sm.m, m->outputs[o], c->outputs[o])) st = fbx_status_nomem();
    if (!is_plumbing(m->kind)) op = c;
  }
  for (int o = 0; op && !st && o < op->noutputs; o++)
    if (fbx_block_add_return(S->block, op->outputs[o])) st = fbx_status_nomem();
  fbx_gradient *gr = NULL;
  if (!st && op) {
    st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
    if (st && fbx_status_code(st) != FBX_ERR_NOMEM) {
      fbx_status_free(st); /* the runtime reports it; here it only means "not worth a graph" */
      st = NULL;
    }
  }
  if (gr) *out = compute_ops(gr->backward->block);
  fbx_gradient_free(gr);
  fbx_ptrmap_free(&sm.m);
  fbx_free(rg);
  fbx_graph_destroy(S);
  return st;
}

static fbx_status *group_block_nodes(sweep *s, blockgroups *bg) {
  classify(s, bg);
  FBX_TRY(grow_groups(s, bg));
  /* Collect every group first: materializing one moves nodes of others. */
  int *count_op = fbx_calloc((size_t)bg->n, sizeof(int));
  int *size = fbx_calloc((size_t)bg->n, sizeof(int));
  fbx_node ***lists = fbx_calloc((size_t)bg->n, sizeof *lists);
  fbx_status *st = NULL;
  if (!count_op || !size || !lists) {
    st = fbx_status_nomem();
    goto out;
  }
  /* sizes first: a list per group as long as the block would be n^2 */
  for (int i = 0; i < bg->n; i++) {
    int r = group_of(bg, i);
    if (r >= 0) size[r]++;
  }
  for (int r = 0; r < bg->n; r++) {
    if (!size[r]) continue;
    if (!(lists[r] = fbx_malloc(sizeof(fbx_node *) * (size_t)size[r]))) {
      st = fbx_status_nomem();
      goto out;
    }
    size[r] = 0;
  }
  for (int i = 0; i < bg->n; i++) {
    int r = group_of(bg, i);
    if (r < 0) continue;
    lists[r][size[r]++] = bg->nodes[i];
    count_op[r] += bg->kind[i] == CAND_OP;
  }
  /* Which groups to keep, all decided before any is materialized: a
   * group's outputs are new values, which the requires-grad marks (taken
   * before the sweep) do not know, so a single node measured after its
   * producers' group was made would see inputs that need no gradient. */
  for (int r = 0; r < bg->n && !st; r++) {
    if (!lists[r]) continue;
    qsort(lists[r], (size_t)size[r], sizeof(fbx_node *), cmp_node_order);
    if (count_op[r] < s->min_size) {
      /* A composite op alone (layer_norm, softmax, gelu, a loss): its
       * backward is a graph of its own that a fuser can fuse. */
      int bops = 0;
      if (count_op[r] == 1) st = solo_backward_ops(s, lists[r], size[r], &bops);
      if (!st && bops < FBX_AUTODIFF_SOLO_BACKWARD_OPS) size[r] = 0;
    }
  }
  for (int r = 0; r < bg->n && !st; r++)
    if (lists[r] && size[r]) st = materialize(s, bg->b, lists[r], size[r]);
out:
  if (lists)
    for (int r = 0; r < bg->n; r++) fbx_free(lists[r]);
  fbx_free(lists);
  fbx_free(size);
  fbx_free(count_op);
  return st;
}

static fbx_status *group_block(sweep *s, fbx_block *b) {
  blockgroups bg = {.b = b};
  fbx_status *st = NULL;
  /* Inner blocks first: groups hold no blocks, and this block's groups then
   * see the inner groups as the nodes they are. */
  for (fbx_node *n = fbx_block_first(b); n; n = n->next)
    for (int k = 0; k < n->nblocks; k++) FBX_TRY(group_block(s, n->blocks[k]));
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) bg.n++;
  size_t cap = (size_t)(bg.n ? bg.n : 1);
  bg.nodes = fbx_malloc(cap * sizeof *bg.nodes);
  bg.kind = fbx_malloc(cap * sizeof *bg.kind);
  bg.parent = fbx_malloc(cap * sizeof *bg.parent);
  if (!bg.nodes || !bg.kind || !bg.parent) goto nomem;
  int i = 0;
  for (fbx_node *n = fbx_block_first(b); n; n = n->next, i++) {
    bg.nodes[i] = n;
    bg.parent[i] = -1;
    if (fbx_ptrmap_put(&bg.index, n, (void *)(intptr_t)(i + 1))) goto nomem;
  }
  st = group_block_nodes(s, &bg);
  goto done;
nomem:
  st = fbx_status_nomem();
done:
  fbx_ptrmap_free(&bg.index);
  fbx_free(bg.nodes);
  fbx_free(bg.kind);
  fbx_free(bg.parent);
  return st;
}

fbx_status *fbx_autodiff_create_subgraphs(fbx_graph *g, const bool *input_requires_grad, int min_size,
                                          int *ncreated) {
  bool *rg = NULL;
  sweep s = {.g = g, .min_size = min_size < 1 ? 1 : min_size, .nrg = g->next_value_id};
  if (ncreated) *ncreated = 0;
  FBX_TRY(fbx_autodiff_requires_grad(g, input_requires_grad, &rg));
  s.rg = rg;
  fbx_status *st = NULL;
  if (fbx_graph_has_mutation(g)) st = alias_sets_build(&s.alias, g);
  if (!st) st = group_block(&s, g->block);
  alias_sets_free(&s.alias);
  fbx_free(rg);
  if (ncreated) *ncreated = s.created;
  if (s.created) fbx_log(FBX_LOG_PASSES, "autodiff: created %d DifferentiableGraph node%s", s.created,
                         s.created == 1 ? "" : "s");
  return st;
}

/* ---- why nodes stay outside ------------------------------------------------------------ */

static const char *outside_reason(const sweep *s, const fbx_node *n) {
  if (n->nblocks) return "control flow (its blocks are grouped on their own)";
  if (fbx_node_has_side_effects(n)) return "has side effects";
  if (fbx_node_is_mutating(n) || fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE)) return "writes in place (eager tape)";
  if (fbx_node_is_nondeterministic(n)) return "random (moving it would change the order numbers are drawn in)";
  bool touches = false;
  for (int i = 0; i < n->ninputs && !touches; i++) touches = requires_grad(s, n->inputs[i]);
  for (int o = 0; o < n->noutputs && !touches; o++) touches = requires_grad(s, n->outputs[o]);
  if (!touches) return "needs no gradient";
  if (!fbx_grad_has_formula(n)) return "no gradient formula";
  if (touches_alias_of_mutation(s, n)) return "may share storage with a value the graph mutates";
  return "its region is below the minimum size (and its backward is small)";
}

static int explain_block(const sweep *s, const fbx_block *b, int depth, fbx_strbuf *out) {
  int listed = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (n->kind == FBX_SYM_prim_Constant || n->kind == FBX_SYM_prim_DifferentiableGraph || is_plumbing(n->kind))
      continue;
    fbx_strbuf_printf(out, "#   %*s%%%s = %s: %s\n", 2 * depth, "", n->noutputs ? n->outputs[0]->name : "-",
                      fbx_sym_str(n->kind), outside_reason(s, n));
    listed++;
    for (int k = 0; k < n->nblocks; k++) listed += explain_block(s, n->blocks[k], depth + 1, out);
  }
  return listed;
}

fbx_status *fbx_autodiff_explain_outside(const fbx_graph *g, const bool *input_requires_grad, fbx_strbuf *out) {
  bool *rg = NULL;
  sweep s = {.g = (fbx_graph *)g, .nrg = g->next_value_id};
  FBX_TRY(fbx_autodiff_requires_grad(g, input_requires_grad, &rg));
  s.rg = rg;
  fbx_status *st = NULL;
  if (fbx_graph_has_mutation(g)) st = alias_sets_build(&s.alias, g);
  if (!st && !explain_block(&s, g->block, 0, out)) fbx_strbuf_puts(out, "#   none\n");
  alias_sets_free(&s.alias);
  fbx_free(rg);
  return st;
}
