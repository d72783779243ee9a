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
 * Groups with two or more ops are proposed; the host validates them again.
 */
#include <string.h>

#include "lf.h"

#define LF_GROUP_MAX_ARGS 48

enum { K_OTHER, K_PW, K_CHUNK, K_UNPACK, K_CAT, K_LISTC, K_CONST };

typedef struct blk {
  int n;
  const fbxp_node **nodes;
  int *kind, *seg, *group;
  int *mark; /* scratch */
} blk;

static int index_of(const blk *b, const fbxp_node *n) {
  if (!n) return -1;
  for (int i = 0; i < b->n; i++)
    if (b->nodes[i] == n) return i;
  return -1;
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

static int holds(const fbxp_block *bl, const fbxp_node *u, int depth) {
  for (const fbxp_node *n = lf_host->block_first(bl); n; n = lf_host->node_next(n)) {
    if (n == u) return 1;
    for (int i = 0; i < lf_host->node_num_blocks(n) && depth < 64; i++)
      if (holds(lf_host->node_block(n, i), u, depth + 1)) return 1;
  }
  return 0;
}

/* The node of this block that is u or holds u in a nested block (-1: none). */
static int ancestor(const blk *b, const fbxp_node *u) {
  int i = index_of(b, u);
  if (i >= 0) return i;
  for (i = 0; i < b->n; i++)
    for (int k = 0; k < lf_host->node_num_blocks(b->nodes[i]); k++)
      if (holds(lf_host->node_block(b->nodes[i], k), u, 0)) return i;
  return -1;
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

static int outputs_fill_space(blk *b, int first, int last);

/* Is the tentative member set (mark == 1) valid? */
static int set_valid(blk *b) {
  int first = b->n, last = -1;
  for (int i = 0; i < b->n; i++)
    if (b->mark[i] == 1) {
      if (i < first) first = i;
      last = i;
    }
  if (last < 0) return 0;
  /* one stretch between barriers */
  if (b->seg[first] != b->seg[last]) return 0;
  /* convex: walk forward from members through non-members up to `last`
   * (mark 2 = reached from the group) */
  int nin = 0, nout = 0;
  for (int i = first; i <= last; i++) {
    if (b->mark[i] != 1 && b->mark[i] != 2) continue;
    const fbxp_node *n = b->nodes[i];
    int member = b->mark[i] == 1;
    for (int o = 0; o < lf_host->node_num_outputs(n); o++) {
      const fbxp_value *v = lf_host->node_output(n, o);
      int outside = 0;
      for (int u = 0; u < lf_host->value_num_uses(v); u++) {
        int j = user_at(b, v, u);
        if (j < 0) {
          outside = 1;
          continue;
        }
        if (b->mark[j] == 1) {
          if (!member) return 0; /* left and came back */
          continue;
        }
        outside = 1;
        if (j <= last && b->mark[j] == 0) b->mark[j] = 2;
      }
      if (member && outside && lf_host->value_kind(v) == FBXP_TYPE_TENSOR) nout++;
      if (member && outside && lf_host->value_kind(v) != FBXP_TYPE_TENSOR && b->kind[i] != K_PW) return 0;
    }
  }
  for (int i = 0; i < b->n; i++)
    if (b->mark[i] == 2) b->mark[i] = 0;
  /* inputs: distinct tensor values read from outside */
  for (int i = first; i <= last; i++) {
    if (b->mark[i] != 1) continue;
    const fbxp_node *n = b->nodes[i];
    if (b->kind[i] == K_CAT) {
      /* exit only: its result feeds no member */
      const fbxp_value *v = lf_host->node_output(n, 0);
      for (int u = 0; u < lf_host->value_num_uses(v); u++) {
        int j = user_at(b, v, u);
        if (j >= 0 && b->mark[j] == 1) return 0;
      }
    }
    for (int a = 0; a < lf_host->node_num_inputs(n); a++) {
      const fbxp_value *v = lf_host->node_input(n, a);
      if (lf_host->value_kind(v) != FBXP_TYPE_TENSOR) continue;
      int p = index_of(b, lf_host->value_producer(v));
      if (p >= 0 && b->mark[p] == 1) continue;
      int dup = 0;
      for (int i2 = first; i2 < i && !dup; i2++) {
        if (b->mark[i2] != 1) continue;
        for (int a2 = 0; a2 < lf_host->node_num_inputs(b->nodes[i2]); a2++)
          if (lf_host->node_input(b->nodes[i2], a2) == v) dup = 1;
      }
      for (int a2 = 0; a2 < a && !dup; a2++)
        if (lf_host->node_input(n, a2) == v) dup = 1;
      if (!dup) nin++;
    }
  }
  if (nin + nout > LF_GROUP_MAX_ARGS) return 0;
  /* chunks: the cone feeding each chunk is used only inside that cone */
  for (int c = first; c <= last; c++) {
    if (b->mark[c] != 1 || b->kind[c] != K_CHUNK) continue;
    /* mark the cone with 3 */
    int changed = 1, ok = 1;
    int p = index_of(b, lf_host->value_producer(lf_host->node_input(b->nodes[c], 0)));
    if (p >= 0 && b->mark[p] == 1) b->mark[p] = 3;
    while (changed) {
      changed = 0;
      for (int i = last; i >= first; i--) {
        if (b->mark[i] != 3) continue;
        for (int a = 0; a < lf_host->node_num_inputs(b->nodes[i]); a++) {
          int q = index_of(b, lf_host->value_producer(lf_host->node_input(b->nodes[i], a)));
          if (q >= 0 && b->mark[q] == 1) {
            b->mark[q] = 3;
            changed = 1;
          }
        }
      }
    }
    for (int i = first; i <= last && ok; i++) {
      if (b->mark[i] != 3) continue;
      if (b->kind[i] == K_CHUNK || b->kind[i] == K_UNPACK || b->kind[i] == K_CAT) ok = 0;
      const fbxp_node *n = b->nodes[i];
      for (int o = 0; o < lf_host->node_num_outputs(n) && ok; o++) {
        const fbxp_value *v = lf_host->node_output(n, o);
        for (int u = 0; u < lf_host->value_num_uses(v) && ok; u++) {
          int j = user_at(b, v, u);
          ok = j == c || (j >= 0 && b->mark[j] == 3);
        }
      }
    }
    for (int i = first; i <= last; i++)
      if (b->mark[i] == 3) b->mark[i] = 1;
    if (!ok) return 0;
  }
  return outputs_fill_space(b, first, last);
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
  for (int u = 0; u < lf_host->value_num_uses(v); u++) {
    int j = user_at(b, v, u);
    if (j < 0 || b->mark[j] != 1) return 1;
  }
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
static int outputs_fill_space(blk *b, int first, int last) {
  pshape it = {.rank = 0}, v;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = first; i <= last; i++) {
      if (b->mark[i] != 1) continue;
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

static void mark_group(blk *b, int g) {
  for (int i = 0; i < b->n; i++) b->mark[i] = b->group[i] == g && g >= 0;
}

/* Merge the producer p (and what comes with it) into group g. */
static int try_merge(blk *b, int g, int p) {
  if (p < 0 || b->group[p] == g) return 0;
  int k = b->kind[p];
  if (k == K_CAT || k == K_LISTC || k == K_OTHER || k == K_CONST || k == K_CHUNK) return 0;
  mark_group(b, g);
  if (b->group[p] >= 0) {
    int g2 = b->group[p];
    for (int i = 0; i < b->n; i++)
      if (b->group[i] == g2) {
        if (b->kind[i] == K_CAT) return 0; /* a cat is only an exit */
        b->mark[i] = 1;
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
    int c = index_of(b, lf_host->value_producer(lf_host->node_input(n, 0)));
    if (c < 0 || b->group[c] >= 0) return 0;
    b->mark[p] = 1;
    b->mark[c] = 1;
  } else {
    b->mark[p] = 1;
  }
  if (!set_valid(b)) return 0;
  int g2 = b->group[p];
  for (int i = 0; i < b->n; i++)
    if (b->mark[i] == 1 || (g2 >= 0 && b->group[i] == g2)) b->group[i] = g;
  return 1;
}

/* List constructs join their cat. */
static int seed(blk *b, int i, int *ngroups) {
  if (b->group[i] >= 0) return b->group[i];
  if (b->kind[i] != K_PW && b->kind[i] != K_CAT) return -1;
  int g = (*ngroups)++;
  b->group[i] = g;
  if (b->kind[i] == K_CAT) {
    int lc = index_of(b, lf_host->value_producer(lf_host->node_input(b->nodes[i], 0)));
    if (lc >= 0 && b->group[lc] < 0 && b->seg[lc] == b->seg[i]) b->group[lc] = g;
  }
  return g;
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *props);

static void fuse_block(blk *b, fbxp_proposals *props) {
  int ngroups = 0, any = 1, rounds = 0;
  while (any && rounds++ < 64) {
    any = 0;
    for (int i = b->n - 1; i >= 0; i--) {
      int g = seed(b, i, &ngroups);
      if (g < 0) continue;
      /* the producers of the group's inputs, latest first */
      int merged = 1;
      while (merged) {
        merged = 0;
        for (int m = b->n - 1; m >= 0 && !merged; m--) {
          if (b->group[m] != g) continue;
          const fbxp_node *n = b->nodes[m];
          for (int a = 0; a < lf_host->node_num_inputs(n) && !merged; a++) {
            int p = index_of(b, lf_host->value_producer(lf_host->node_input(n, a)));
            if (p >= 0 && b->group[p] != g && try_merge(b, g, p)) merged = any = 1;
          }
        }
      }
    }
  }
  const fbxp_node **nodes = lf_host->alloc((size_t)(b->n ? b->n : 1) * sizeof *nodes);
  if (!nodes) return;
  for (int g = 0; g < ngroups; g++) {
    int count = 0, ops = 0;
    for (int i = 0; i < b->n; i++)
      if (b->group[i] == g) {
        nodes[count++] = b->nodes[i];
        ops += b->kind[i] == K_PW || b->kind[i] == K_CAT;
      }
    if (ops >= 2) lf_host->propose(props, nodes, count);
  }
  lf_host->free(nodes);
}

static void partition_block(const fbxp_block *bl, fbxp_proposals *props) {
  blk b = {0};
  for (const fbxp_node *n = lf_host->block_first(bl); n; n = lf_host->node_next(n)) {
    b.n++;
    for (int i = 0; i < lf_host->node_num_blocks(n); i++) partition_block(lf_host->node_block(n, i), props);
  }
  size_t cnt = (size_t)(b.n ? b.n : 1);
  b.nodes = lf_host->alloc(cnt * sizeof *b.nodes);
  b.kind = lf_host->alloc(cnt * sizeof(int));
  b.seg = lf_host->alloc(cnt * sizeof(int));
  b.group = lf_host->alloc(cnt * sizeof(int));
  b.mark = lf_host->alloc(cnt * sizeof(int));
  if (b.nodes && b.kind && b.seg && b.group && b.mark) {
    int i = 0, seg = 0;
    for (const fbxp_node *n = lf_host->block_first(bl); n; n = lf_host->node_next(n), i++) {
      b.nodes[i] = n;
      if (is_barrier(n)) seg++;
      b.seg[i] = seg;
      b.group[i] = -1;
      b.mark[i] = 0;
    }
    for (i = 0; i < b.n; i++) b.kind[i] = is_barrier(b.nodes[i]) ? K_OTHER : classify(b.nodes[i]);
    fuse_block(&b, props);
  }
  lf_host->free(b.nodes);
  lf_host->free(b.kind);
  lf_host->free(b.seg);
  lf_host->free(b.group);
  lf_host->free(b.mark);
}

fbxp_status *lf_partition(void *state, const fbxp_graph *g, fbxp_proposals *props) {
  (void)state;
  partition_block(lf_host->graph_block(g), props);
  return NULL;
}
