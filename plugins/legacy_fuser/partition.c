/* Partition: PyTorch's graph fuser policy, on the SDK's read-only graph.
 *
 * Each block is scanned in reverse; every fusable node (a pointwise op of
 * the table, or an aten::cat of a list construct) is a consumer that tries
 * to merge the producers of its group's inputs into its group: a fusable
 * producer node, a producer's whole group, or an aten::chunk with its
 * prim::ListUnpack when every piece is consumed inside the group. Scans
 * repeat until nothing merges (the fixpoint). A merge is kept only if the
 * group stays
 *   - convex (no path leaves it and comes back, so it can run as one node),
 *   - within one stretch between barriers: nodes with side effects (in-place
 *     aten ops, ops owning blocks, prints, ...) are never crossed, because
 *     the group runs where its last node was and must not move a read of a
 *     value across a write to it or to an alias of it,
 *   - within the argument limit (inputs + outputs), and
 *   - chunk-correct: everything feeding a chunk inside the group is used
 *     only on the way to that chunk (the chunk is pushed to the kernel's
 *     inputs, kir.c), and an aten::cat is only a group's exit.
 * After the fixpoint, the producers that a group full to the kernel's
 * limits stranded are packed side by side (pack_stranded). Groups with two
 * or more ops are proposed; the host validates them again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lf.h"

#define LF_GROUP_MAX_ARGS 48

enum { K_OTHER, K_PW, K_CHUNK, K_UNPACK, K_CAT, K_LISTC, K_CONST };

/* Where a node sits: its block-level index i, as i << 1, or (i << 1) | 1
 * for a node nested in block-level node i's blocks. An open-addressing map
 * over node pointers, built once per block. */
typedef struct where_map {
  const void **keys;
  int *vals;
  size_t cap, count;
} where_map;

static size_t wm_slot(const void *key, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)key;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static int wm_put(where_map *m, const void *key, int val) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const void **nk = lf_host->alloc(ncap * sizeof *nk);
    int *nv = lf_host->alloc(ncap * sizeof *nv);
    if (!nk || !nv) {
      lf_host->free(nk);
      lf_host->free(nv);
      return -1;
    }
    memset(nk, 0, ncap * sizeof *nk);
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = wm_slot(m->keys[i], ncap);
      while (nk[j]) j = (j + 1) & (ncap - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
    lf_host->free(m->keys);
    lf_host->free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
  }
  size_t j = wm_slot(key, m->cap);
  while (m->keys[j] && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
  if (!m->keys[j]) m->count++;
  m->keys[j] = key;
  m->vals[j] = val;
  return 0;
}

static int wm_get(const where_map *m, const void *key) {
  if (!m->cap || !key) return -1;
  size_t j = wm_slot(key, m->cap);
  while (m->keys[j]) {
    if (m->keys[j] == key) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

/* A block's nodes, their groups, and scratch for checking a tentative group.
 * Groups are kept as member lists (descending index), so that nothing below
 * scans the whole block per merge: a check costs the size of the tentative
 * group (bounded by the kernel limits) plus the nodes between its first and
 * last member that a path from it reaches. */
typedef struct blk {
  int n;
  const fbxp_node **nodes;
  int *kind, *seg, *group;
  where_map where;
  /* groups, by id: first member (highest index, -1 when empty), when its
   * producers were last tried (see fuse_block) */
  int *ghead, *gscanned;
  int *gnext; /* per node: the next member of its group (lower index), -1 */
  long changes; /* merges and seeds so far */
  int *gfull;   /* per group: a merge into it was refused by the kernel's limits */
  int *gpack;   /* per group: the group its stranded producers are packed into (-1) */
  int limit_hit; /* set_valid refused the set for the limits on values or arguments */
  /* the tentative member set: tm[0..ntm), mem[i] == mem_stamp */
  int *tm, ntm;
  int *mem, mem_stamp;
  int *vis, vis_stamp;   /* reached from the set (convexity walk) */
  int *cone, cone_stamp; /* a chunk's cone */
  int *stack;
  const fbxp_value **ins; /* distinct-input count */
  size_t cap_ins;
} blk;

static int is_mem(const blk *b, int i) { return i >= 0 && b->mem[i] == b->mem_stamp; }

static int index_of(const blk *b, const fbxp_node *n) {
  int c = wm_get(&b->where, n);
  return c >= 0 && !(c & 1) ? c >> 1 : -1;
}

static int kind_is(const fbxp_node *n, const char *k) { return n && !strcmp(lf_host->node_kind(n), k); }

static int only_use_is(const fbxp_value *v, const fbxp_node *user) {
  int32_t idx;
  return lf_host->value_num_uses(v) == 1 && lf_host->value_use(v, 0, &idx) == user;
}

static int is_barrier(const fbxp_node *n) {
  const char *k = lf_host->node_kind(n);
  size_t len = strlen(k);
  if (lf_host->node_num_blocks(n) > 0) return 1;
  if (len > 1 && k[len - 1] == '_' && k[len - 2] != '_') return 1; /* in place (not __and__) */
  if (!strncmp(k, "prim::Print", 11) || !strncmp(k, "prim::RaiseException", 20) || !strncmp(k, "prim::SetAttr", 13))
    return 1;
  return strncmp(k, "aten::", 6) && strncmp(k, "prim::", 6);
}

static int classify(const fbxp_node *n) {
  const char *k = lf_host->node_kind(n);
  if (!strcmp(k, "prim::Constant")) return K_CONST;
  if (!strcmp(k, "aten::chunk")) {
    const fbxp_value *l = lf_host->node_output(n, 0);
    int32_t idx;
    const fbxp_node *u = lf_host->value_num_uses(l) == 1 ? lf_host->value_use(l, 0, &idx) : NULL;
    int64_t c, d;
    if (kind_is(u, "prim::ListUnpack") && lf_host->value_const_int(lf_host->node_input(n, 1), &c) &&
        lf_host->value_const_int(lf_host->node_input(n, 2), &d) && lf_host->node_num_outputs(u) == c)
      return K_CHUNK;
    return K_OTHER;
  }
  if (!strcmp(k, "prim::ListUnpack")) {
    const fbxp_node *p = lf_host->value_producer(lf_host->node_input(n, 0));
    return p && classify(p) == K_CHUNK ? K_UNPACK : K_OTHER;
  }
  if (!strcmp(k, "aten::cat")) {
    const fbxp_node *lc = lf_host->value_producer(lf_host->node_input(n, 0));
    int64_t d;
    if (kind_is(lc, "prim::ListConstruct") && only_use_is(lf_host->node_output(lc, 0), n) &&
        lf_host->value_const_int(lf_host->node_input(n, 1), &d) && lf_host->node_num_inputs(lc) > 0)
      return K_CAT;
    return K_OTHER;
  }
  if (!strcmp(k, "prim::ListConstruct")) {
    const fbxp_value *l = lf_host->node_output(n, 0);
    int32_t idx;
    const fbxp_node *u = lf_host->value_num_uses(l) == 1 ? lf_host->value_use(l, 0, &idx) : NULL;
    return u && !strcmp(lf_host->node_kind(u), "aten::cat") && classify(u) == K_CAT ? K_LISTC : K_OTHER;
  }
  return lf_node_fusable(n) ? K_PW : K_OTHER;
}

/* The node of this block that is u or holds u in a nested block (-1: none;
 * nodes nested deeper than 64 blocks are not looked for). */
static int ancestor(const blk *b, const fbxp_node *u) {
  int c = wm_get(&b->where, u);
  return c >= 0 ? c >> 1 : -1;
}

/* The block-level node of v's u-th use; -2 for a return (or anything
 * outside the block): a use outside the group that cannot come back. */
static int user_at(const blk *b, const fbxp_value *v, int u) {
  int32_t idx;
  const fbxp_node *n = lf_host->value_use(v, u, &idx);
  if (!n) return -2;
  int i = ancestor(b, n);
  return i >= 0 ? i : -2;
}

static int outputs_fill_space(blk *b);

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, c = *(const int *)y;
  return (a > c) - (a < c);
}

static int cmp_ptr(const void *x, const void *y) {
  uintptr_t a = (uintptr_t) * (const fbxp_value *const *)x, c = (uintptr_t) * (const fbxp_value *const *)y;
  return (a > c) - (a < c);
}

static void tm_add(blk *b, int i) {
  if (is_mem(b, i)) return;
  b->mem[i] = b->mem_stamp;
  b->tm[b->ntm++] = i;
}

/* An upper bound of the kernel IR values (kir.c) a group needs: a value per
 * op, and at most one per operand (a load, a scalar or a literal); the ops
 * between a kernel's inputs and a chunk are emitted once per piece. */
static int values_fit(const blk *b) {
  long cost = 0;
  int pieces = 1, nchunks = 0;
  for (int t = 0; t < b->ntm; t++) {
    const fbxp_node *n = b->nodes[b->tm[t]];
    cost += 1 + lf_host->node_num_inputs(n);
    if (b->kind[b->tm[t]] == K_UNPACK && lf_host->node_num_outputs(n) > pieces) pieces = lf_host->node_num_outputs(n);
    nchunks += b->kind[b->tm[t]] == K_CHUNK;
  }
  return nchunks <= LF_MAX_CHUNKS && cost * pieces <= LF_MAX_VALUES;
}

/* Is the tentative member set (tm, mem) valid? */
static int set_valid(blk *b) {
  b->limit_hit = 0;
  if (!b->ntm) return 0;
  /* ascending order: outputs_fill_space broadcasts in program order */
  qsort(b->tm, (size_t)b->ntm, sizeof *b->tm, cmp_int);
  int first = b->tm[0], last = b->tm[b->ntm - 1];
  /* one stretch between barriers */
  if (b->seg[first] != b->seg[last]) return 0;
  /* within the kernel's limits on values and chunks */
  if (!values_fit(b)) {
    b->limit_hit = 1;
    return 0;
  }
  /* convex: walk forward from members through non-members up to `last`;
   * a non-member reached from the group must not feed a member */
  int nin = 0, nout = 0, nst = 0;
  b->vis_stamp++;
  for (int t = 0; t < b->ntm; t++) {
    int i = b->tm[t];
    const fbxp_node *n = b->nodes[i];
    for (int o = 0; o < lf_host->node_num_outputs(n); o++) {
      const fbxp_value *v = lf_host->node_output(n, o);
      int outside = 0;
      for (int u = 0; u < lf_host->value_num_uses(v); u++) {
        int j = user_at(b, v, u);
        if (j < 0) {
          outside = 1;
          continue;
        }
        if (is_mem(b, j)) continue;
        outside = 1;
        if (j <= last && b->vis[j] != b->vis_stamp) {
          b->vis[j] = b->vis_stamp;
          b->stack[nst++] = j;
        }
      }
      if (outside && lf_host->value_kind(v) == FBXP_TYPE_TENSOR) nout++;
      if (outside && lf_host->value_kind(v) != FBXP_TYPE_TENSOR && b->kind[i] != K_PW) return 0;
    }
  }
  while (nst) {
    const fbxp_node *n = b->nodes[b->stack[--nst]];
    for (int o = 0; o < lf_host->node_num_outputs(n); o++) {
      const fbxp_value *v = lf_host->node_output(n, o);
      for (int u = 0; u < lf_host->value_num_uses(v); u++) {
        int j = user_at(b, v, u);
        if (j < 0) continue;
        if (is_mem(b, j)) return 0; /* left and came back */
        if (j <= last && b->vis[j] != b->vis_stamp) {
          b->vis[j] = b->vis_stamp;
          b->stack[nst++] = j;
        }
      }
    }
  }
  /* inputs: distinct tensor values read from outside */
  size_t nins = 0;
  for (int t = 0; t < b->ntm; t++) {
    int i = b->tm[t];
    const fbxp_node *n = b->nodes[i];
    if (b->kind[i] == K_CAT) {
      /* exit only: its result feeds no member */
      const fbxp_value *v = lf_host->node_output(n, 0);
      for (int u = 0; u < lf_host->value_num_uses(v); u++)
        if (is_mem(b, user_at(b, v, u))) return 0;
    }
    for (int a = 0; a < lf_host->node_num_inputs(n); a++) {
      const fbxp_value *v = lf_host->node_input(n, a);
      if (lf_host->value_kind(v) != FBXP_TYPE_TENSOR) continue;
      if (is_mem(b, index_of(b, lf_host->value_producer(v)))) continue;
      if (nins == b->cap_ins) {
        size_t cap = b->cap_ins ? 2 * b->cap_ins : 64;
        const fbxp_value **ni = lf_host->alloc(cap * sizeof *ni);
        if (!ni) return 0;
        if (nins) memcpy(ni, b->ins, nins * sizeof *ni);
        lf_host->free(b->ins);
        b->ins = ni;
        b->cap_ins = cap;
      }
      b->ins[nins++] = v;
    }
  }
  if (nins) qsort(b->ins, nins, sizeof *b->ins, cmp_ptr);
  for (size_t k = 0; k < nins; k++) nin += k == 0 || b->ins[k] != b->ins[k - 1];
  if (nin + nout > LF_GROUP_MAX_ARGS) {
    b->limit_hit = 1;
    return 0;
  }
  /* chunks: the cone feeding each chunk is used only inside that cone */
  for (int t = 0; t < b->ntm; t++) {
    int c = b->tm[t];
    if (b->kind[c] != K_CHUNK) continue;
    int ok = 1;
    b->cone_stamp++;
    nst = 0;
    int p = index_of(b, lf_host->value_producer(lf_host->node_input(b->nodes[c], 0)));
    if (is_mem(b, p)) {
      b->cone[p] = b->cone_stamp;
      b->stack[nst++] = p;
    }
    while (nst) {
      const fbxp_node *n = b->nodes[b->stack[--nst]];
      for (int a = 0; a < lf_host->node_num_inputs(n); a++) {
        int q = index_of(b, lf_host->value_producer(lf_host->node_input(n, a)));
        if (is_mem(b, q) && b->cone[q] != b->cone_stamp) {
          b->cone[q] = b->cone_stamp;
          b->stack[nst++] = q;
        }
      }
    }
    for (int t2 = 0; t2 < b->ntm && ok; t2++) {
      int i = b->tm[t2];
      if (b->cone[i] != b->cone_stamp) continue;
      if (b->kind[i] == K_CHUNK || b->kind[i] == K_UNPACK || b->kind[i] == K_CAT) ok = 0;
      const fbxp_node *n = b->nodes[i];
      for (int o = 0; o < lf_host->node_num_outputs(n) && ok; o++) {
        const fbxp_value *v = lf_host->node_output(n, o);
        for (int u = 0; u < lf_host->value_num_uses(v) && ok; u++) {
          int j = user_at(b, v, u);
          ok = j == c || (j >= 0 && b->cone[j] == b->cone_stamp);
        }
      }
    }
    if (!ok) return 0;
  }
  return outputs_fill_space(b);
}

/* ---- output shapes ------------------------------------------------------------------ */

/* A profiled shape: rank -1 when unknown, FBXP_DIM_UNKNOWN sizes. */
typedef struct pshape {
  int rank;
  int64_t s[FBXP_MAX_DIMS];
} pshape;

static void pshape_of(const fbxp_value *v, pshape *o) {
  fbxp_tensor_type t;
  memset(&t, 0, sizeof t);
  t.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0;
  o->rank = -1;
  if (lf_host->value_tensor_type(v, &t) || t.ndim < 0 || t.ndim > FBXP_MAX_DIMS) return;
  o->rank = t.ndim;
  for (int d = 0; d < t.ndim; d++) o->s[d] = t.sizes[d] < 0 ? FBXP_DIM_UNKNOWN : t.sizes[d];
}

/* acc = broadcast(acc, v); 0 when a rank is unknown (nothing can be said). */
static int pshape_broadcast(pshape *acc, const pshape *v) {
  if (v->rank < 0 || acc->rank < 0) return 0;
  pshape r;
  r.rank = v->rank > acc->rank ? v->rank : acc->rank;
  for (int d = 0; d < r.rank; d++) {
    int da = d - (r.rank - acc->rank), dv = d - (r.rank - v->rank);
    int64_t a = da >= 0 ? acc->s[da] : 1, b = dv >= 0 ? v->s[dv] : 1;
    /* a known size > 1 wins: the profiled values did broadcast */
    r.s[d] = a == 1 ? b : b == 1 ? a : a == FBXP_DIM_UNKNOWN ? b : a;
  }
  *acc = r;
  return 1;
}

/* Could v be smaller than the iteration shape `it`? A lower rank, a known
 * size that differs, or a size 1 where the group's size is not known to be
 * 1 (dynamic shapes keep size-1 dims, so that 1 is real). */
static int pshape_smaller(const pshape *v, const pshape *it) {
  if (v->rank != it->rank) return 1;
  for (int d = 0; d < v->rank; d++) {
    int64_t a = v->s[d], b = it->s[d];
    if (a == b || a == FBXP_DIM_UNKNOWN) continue;
    if (b != FBXP_DIM_UNKNOWN || a == 1) return 1;
  }
  return 0;
}

static int used_outside(blk *b, const fbxp_value *v) {
  for (int u = 0; u < lf_host->value_num_uses(v); u++)
    if (!is_mem(b, user_at(b, v, u))) return 1;
  return 0;
}

/* The kernel writes every output over the whole iteration space (the
 * broadcast of what the group computes), so a group whose profiled types
 * show an output smaller than that (a saved `y * 2` next to a bigger
 * `where(c, x, y * 2)`) would not compile, or would decline at every run.
 * Such a merge is refused; a group whose ranks are not known is left to
 * compile and run, which check again. The sinks of a group are its outputs,
 * the pieces of its cats and of its chunks: everything else feeds them, and
 * a pointwise value is never bigger than its consumers. */
static int outputs_fill_space(blk *b) {
  pshape it = {.rank = 0}, v;
  for (int pass = 0; pass < 2; pass++) {
    for (int t = 0; t < b->ntm; t++) {
      int i = b->tm[t];
      const fbxp_node *n = b->nodes[i];
      if (b->kind[i] == K_PW && used_outside(b, lf_host->node_output(n, 0))) {
        pshape_of(lf_host->node_output(n, 0), &v);
        if (pass == 0 ? !pshape_broadcast(&it, &v) : pshape_smaller(&v, &it)) return pass == 0;
      } else if (b->kind[i] == K_UNPACK || b->kind[i] == K_CAT) {
        const fbxp_node *lc = b->kind[i] == K_CAT ? lf_host->value_producer(lf_host->node_input(n, 0)) : n;
        int cnt = b->kind[i] == K_CAT ? lf_host->node_num_inputs(lc) : lf_host->node_num_outputs(n);
        for (int k = 0; k < cnt; k++) {
          pshape_of(b->kind[i] == K_CAT ? lf_host->node_input(lc, k) : lf_host->node_output(n, k), &v);
          if (pass == 0 ? !pshape_broadcast(&it, &v) : pshape_smaller(&v, &it)) return pass == 0;
        }
      }
    }
  }
  return 1;
}

/* A new, empty tentative set holding group g's members. */
static void begin_set(blk *b, int g) {
  b->mem_stamp++;
  b->ntm = 0;
  for (int m = g >= 0 ? b->ghead[g] : -1; m >= 0; m = b->gnext[m]) tm_add(b, m);
}

/* Node i joins group g (its list stays in descending index order). */
static void join(blk *b, int g, int i) {
  b->group[i] = g;
  int *at = &b->ghead[g];
  while (*at > i) at = &b->gnext[*at];
  b->gnext[i] = *at;
  *at = i;
}

/* Merge the producer p (and what comes with it) into group g. */
static int try_merge(blk *b, int g, int p) {
  if (p < 0 || b->group[p] == g) return 0;
  int k = b->kind[p];
  if (k == K_CAT || k == K_LISTC || k == K_OTHER || k == K_CONST || k == K_CHUNK) return 0;
  begin_set(b, g);
  int c = -1, g2 = b->group[p];
  if (g2 >= 0) {
    for (int m = b->ghead[g2]; m >= 0; m = b->gnext[m]) {
      if (b->kind[m] == K_CAT) return 0; /* a cat is only an exit */
      tm_add(b, m);
    }
  } else if (k == K_UNPACK) {
    /* every piece consumed inside the group */
    const fbxp_node *n = b->nodes[p];
    for (int o = 0; o < lf_host->node_num_outputs(n); o++) {
      const fbxp_value *v = lf_host->node_output(n, o);
      for (int u = 0; u < lf_host->value_num_uses(v); u++) {
        int j = user_at(b, v, u);
        if (j < 0 || b->group[j] != g) return 0;
      }
    }
    c = index_of(b, lf_host->value_producer(lf_host->node_input(n, 0)));
    if (c < 0 || b->group[c] >= 0) return 0;
    tm_add(b, p);
    tm_add(b, c);
  } else {
    tm_add(b, p);
  }
  if (!set_valid(b)) {
    if (b->limit_hit) b->gfull[g] = 1;
    return 0;
  }
  if (g2 >= 0) {
    for (int m = b->ghead[g2], next; m >= 0; m = next) {
      next = b->gnext[m];
      join(b, g, m);
    }
    b->ghead[g2] = -1;
  } else {
    join(b, g, p);
    if (c >= 0) join(b, g, c);
  }
  b->changes++;
  return 1;
}

/* List constructs join their cat. */
static int seed(blk *b, int i, int *ngroups) {
  if (b->group[i] >= 0) return b->group[i];
  if (b->kind[i] != K_PW && b->kind[i] != K_CAT) return -1;
  int g = (*ngroups)++;
  b->ghead[g] = -1;
  b->gscanned[g] = -1;
  join(b, g, i);
  if (b->kind[i] == K_CAT) {
    int lc = index_of(b, lf_host->value_producer(lf_host->node_input(b->nodes[i], 0)));
    if (lc >= 0 && b->group[lc] < 0 && b->seg[lc] == b->seg[i]) join(b, g, lc);
  }
  b->changes++;
  return g;
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *props);

/* Packing, after the fixpoint (PyTorch's fuser has no limit on a kernel's
 * size, so it never needs this): a consumer group that reached the kernel's
 * limits strands the producers it could not take. Under a wide tree of adds
 * that is hundreds of three-node groups (and lone nodes) below each full
 * group, every one its own kernel, and their number per node grows with the
 * tree's depth. The stranded producer groups of one full consumer group are
 * merged side by side, in reverse order, while the union stays valid
 * (convex, one stretch, within the limits): a pack is full when the next
 * group does not fit, and the next pack starts with that group. Only groups
 * of plain pointwise members are packed; each group is looked at once, and
 * each try costs the size of the pack, so packing is linear in the block. */
static void pack_stranded(blk *b, int ngroups) {
  for (int g = 0; g < ngroups; g++) b->gpack[g] = -1;
  for (int i = b->n - 1; i >= 0; i--) {
    int a = b->group[i];
    if (a < 0 || b->ghead[a] != i || b->gfull[a]) continue; /* each group once, at its head */
    int plain = 1, c = -1;
    for (int m = i; m >= 0 && plain; m = b->gnext[m]) plain = b->kind[m] == K_PW;
    for (int m = i; m >= 0 && plain && c < 0; m = b->gnext[m]) {
      const fbxp_node *n = b->nodes[m];
      for (int o = 0; o < lf_host->node_num_outputs(n) && c < 0; o++) {
        const fbxp_value *v = lf_host->node_output(n, o);
        for (int u = 0; u < lf_host->value_num_uses(v) && c < 0; u++) {
          int j = user_at(b, v, u);
          if (j >= 0 && b->group[j] >= 0 && b->group[j] != a && b->gfull[b->group[j]]) c = b->group[j];
        }
      }
    }
    if (c < 0) continue;
    int p = b->gpack[c];
    if (p >= 0 && b->ghead[p] >= 0) {
      begin_set(b, p);
      for (int m = i; m >= 0; m = b->gnext[m]) tm_add(b, m);
      if (set_valid(b)) {
        for (int m = i, next; m >= 0; m = next) {
          next = b->gnext[m];
          join(b, p, m);
        }
        b->ghead[a] = -1;
        b->changes++;
        continue;
      }
    }
    b->gpack[c] = a;
  }
}

/* Scans in reverse until nothing merges. A group whose producers were all
 * tried with nothing changed anywhere since (no merge, no new group) is not
 * tried again: every try would fail the same way. */
static void fuse_block(blk *b, fbxp_proposals *props) {
  int ngroups = 0, any = 1, rounds = 0;
  while (any && rounds++ < 64) {
    any = 0;
    for (int i = b->n - 1; i >= 0; i--) {
      int g = seed(b, i, &ngroups);
      if (g < 0 || b->gscanned[g] == b->changes) continue;
      /* the producers of the group's inputs, latest first */
      int merged = 1;
      while (merged) {
        merged = 0;
        for (int m = b->ghead[g]; m >= 0 && !merged; m = b->gnext[m]) {
          const fbxp_node *n = b->nodes[m];
          for (int a = 0; a < lf_host->node_num_inputs(n) && !merged; a++) {
            int p = index_of(b, lf_host->value_producer(lf_host->node_input(n, a)));
            if (p >= 0 && b->group[p] != g && try_merge(b, g, p)) merged = any = 1;
          }
        }
      }
      b->gscanned[g] = b->changes;
    }
  }
  pack_stranded(b, ngroups);
  const fbxp_node **nodes = lf_host->alloc((size_t)(b->n ? b->n : 1) * sizeof *nodes);
  if (!nodes) return;
  for (int g = 0; g < ngroups; g++) {
    int count = 0, ops = 0;
    for (int m = b->ghead[g]; m >= 0; m = b->gnext[m]) {
      count++;
      ops += b->kind[m] == K_PW || b->kind[m] == K_CAT;
    }
    int at = count;
    for (int m = b->ghead[g]; m >= 0; m = b->gnext[m]) nodes[--at] = b->nodes[m];
    if (ops >= 2) lf_host->propose(props, nodes, count);
  }
  lf_host->free(nodes);
}

/* Every node nested in block-level node i's blocks maps to i. */
static int note_nested(blk *b, const fbxp_block *bl, int i, int depth) {
  for (const fbxp_node *n = lf_host->block_first(bl); n; n = lf_host->node_next(n)) {
    if (wm_put(&b->where, n, (i << 1) | 1)) return -1;
    for (int k = 0; k < lf_host->node_num_blocks(n) && depth < 64; k++)
      if (note_nested(b, lf_host->node_block(n, k), i, depth + 1)) return -1;
  }
  return 0;
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *props) {
  blk b = {0};
  for (const fbxp_node *n = lf_host->block_first(bl); n; n = lf_host->node_next(n)) {
    b.n++;
    for (int i = 0; i < lf_host->node_num_blocks(n); i++) partition_block(lf_host->node_block(n, i), props);
  }
  size_t cnt = (size_t)(b.n ? b.n : 1);
  int **arrays[] = {&b.kind, &b.seg, &b.group, &b.ghead, &b.gscanned, &b.gnext, &b.tm, &b.mem, &b.vis, &b.cone, &b.stack, &b.gfull, &b.gpack};
  int narrays = (int)(sizeof arrays / sizeof *arrays), ok = 1;
  b.nodes = lf_host->alloc(cnt * sizeof *b.nodes);
  ok = b.nodes != NULL;
  for (int a = 0; a < narrays; a++) {
    *arrays[a] = lf_host->alloc(cnt * sizeof(int));
    if (*arrays[a]) memset(*arrays[a], 0, cnt * sizeof(int));
    else ok = 0;
  }
  if (ok) {
    int i = 0, seg = 0;
    for (const fbxp_node *n = lf_host->block_first(bl); n && ok; n = lf_host->node_next(n), i++) {
      b.nodes[i] = n;
      if (is_barrier(n)) seg++;
      b.seg[i] = seg;
      b.group[i] = -1;
      b.gnext[i] = -1;
      if (wm_put(&b.where, n, i << 1)) ok = 0;
      for (int k = 0; k < lf_host->node_num_blocks(n) && ok; k++)
        if (note_nested(&b, lf_host->node_block(n, k), i, 0)) ok = 0;
    }
    for (i = 0; i < b.n && ok; i++) b.kind[i] = is_barrier(b.nodes[i]) ? K_OTHER : classify(b.nodes[i]);
    if (ok) fuse_block(&b, props);
  }
  lf_host->free(b.nodes);
  for (int a = 0; a < narrays; a++) lf_host->free(*arrays[a]);
  lf_host->free(b.where.keys);
  lf_host->free(b.where.vals);
  lf_host->free(b.ins);
}

fbxp_status *lf_partition(void *state, const fbxp_graph *g, fbxp_proposals *props) {
  (void)state;
  partition_block(lf_host->graph_block(g), props);
  return NULL;
}
