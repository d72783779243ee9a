/* Convex grouping of a block's nodes (kit_group.h). */
#include <stdint.h>
#include <string.h>

#include <fusebox/kit/kit_group.h>

struct fbxk_grouping {
  const fbxp_host_api *host;
  int n;
  const fbxp_node **nodes;
  int *seg;
  int *grp;   /* group id (a node index), -1 */
  int *next;  /* the next member of the node's group, -1 */
  int *first, *last, *size, *tail; /* per group id */
  int *taint; /* scratch of the convexity walk */
  unsigned *stamp; /* per group id: in the union being checked */
  unsigned cur;
  int hcap;  /* a power of two above 2n */
  int *hash; /* open addressing: node index + 1, 0 empty */
};

static unsigned slot_of(const fbxk_grouping *g, const fbxp_node *n) {
  uint64_t h = (uint64_t)(uintptr_t)n;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (unsigned)h & (unsigned)(g->hcap - 1);
}

fbxk_grouping *fbxk_grouping_new(const fbxp_host_api *host, const fbxp_block *bl) {
  int n = 0;
  for (const fbxp_node *x = host->block_first(bl); x; x = host->node_next(x)) n++;
  fbxk_grouping *g = host->alloc(sizeof *g);
  if (!g) return NULL;
  memset(g, 0, sizeof *g);
  g->host = host;
  g->n = n;
  g->hcap = 16;
  while (g->hcap < 2 * n + 2) g->hcap *= 2;
  size_t m = (size_t)(n ? n : 1);
  g->nodes = host->alloc(sizeof *g->nodes * m);
  int *ints = host->alloc(sizeof(int) * (9 * m + (size_t)g->hcap));
  g->stamp = host->alloc(sizeof *g->stamp * m);
  if (!g->nodes || !ints || !g->stamp) {
    host->free(ints);
    g->seg = NULL;
    fbxk_grouping_free(g);
    return NULL;
  }
  g->seg = ints;
  g->grp = ints + m;
  g->next = ints + 2 * m;
  g->first = ints + 3 * m;
  g->last = ints + 4 * m;
  g->size = ints + 5 * m;
  g->tail = ints + 6 * m;
  g->taint = ints + 7 * m;
  g->hash = ints + 9 * m;
  memset(g->hash, 0, sizeof(int) * (size_t)g->hcap);
  int i = 0;
  for (const fbxp_node *x = host->block_first(bl); x; x = host->node_next(x), i++) {
    g->nodes[i] = x;
    g->seg[i] = 0;
    g->grp[i] = g->next[i] = -1;
    g->stamp[i] = 0;
    unsigned h = slot_of(g, x);
    while (g->hash[h]) h = (h + 1) & (unsigned)(g->hcap - 1);
    g->hash[h] = i + 1;
  }
  return g;
}

void fbxk_grouping_free(fbxk_grouping *g) {
  if (!g) return;
  const fbxp_host_api *host = g->host;
  host->free(g->nodes);
  host->free(g->seg);
  host->free(g->stamp);
  host->free(g);
}

int fbxk_grouping_size(const fbxk_grouping *g) { return g->n; }
const fbxp_node *fbxk_grouping_node(const fbxk_grouping *g, int i) { return g->nodes[i]; }

int fbxk_grouping_index(const fbxk_grouping *g, const fbxp_node *n) {
  if (!n) return -1;
  for (unsigned h = slot_of(g, n); g->hash[h]; h = (h + 1) & (unsigned)(g->hcap - 1))
    if (g->nodes[g->hash[h] - 1] == n) return g->hash[h] - 1;
  return -1;
}

int fbxk_grouping_producer(const fbxk_grouping *g, int i, int a) {
  const fbxp_host_api *h = g->host;
  return fbxk_grouping_index(g, h->value_producer(h->node_input(g->nodes[i], a)));
}

void fbxk_grouping_set_seg(fbxk_grouping *g, int i, int seg) { g->seg[i] = seg; }

void fbxk_grouping_reset(fbxk_grouping *g) {
  for (int i = 0; i < g->n; i++) g->grp[i] = g->next[i] = -1;
}

void fbxk_grouping_start(fbxk_grouping *g, int i) {
  g->grp[i] = i;
  g->next[i] = -1;
  g->first[i] = g->last[i] = g->tail[i] = i;
  g->size[i] = 1;
}

int fbxk_grouping_group(const fbxk_grouping *g, int i) { return g->grp[i]; }

/* Is the union of the groups stamped g->cur, spanning [first, last],
 * convex? A node outside it that depends on a member is tainted; a member
 * that depends on a tainted node means a path left and came back. Producers
 * precede their users in the block, so one forward walk decides it. */
static int convex(fbxk_grouping *g, int first, int last) {
  const fbxp_host_api *h = g->host;
  for (int i = first; i <= last; i++) {
    int member = g->grp[i] >= 0 && g->stamp[g->grp[i]] == g->cur;
    int from_member = 0, from_taint = 0;
    g->taint[i] = 0;
    int nin = h->node_num_inputs(g->nodes[i]);
    for (int a = 0; a < nin; a++) {
      int j = fbxk_grouping_producer(g, i, a);
      if (j < first || j >= i) continue;
      if (g->grp[j] >= 0 && g->stamp[g->grp[j]] == g->cur) from_member = 1;
      else if (g->taint[j]) from_taint = 1;
    }
    if (member && from_taint) return 0;
    if (!member && (from_member || from_taint)) g->taint[i] = 1;
  }
  return 1;
}

int fbxk_grouping_merge_all(fbxk_grouping *g, const int *idx, int k) {
  if (k <= 0) return 0;
  if (++g->cur == 0) { /* the stamps wrapped: clear them */
    for (int i = 0; i < g->n; i++) g->stamp[i] = 0;
    g->cur = 1;
  }
  int first = g->n, last = -1, into = -1, distinct = 0;
  for (int q = 0; q < k; q++) {
    if (idx[q] < 0 || idx[q] >= g->n) return 0;
    int id = g->grp[idx[q]];
    if (id < 0) return 0;
    if (g->stamp[id] == g->cur) continue;
    g->stamp[id] = g->cur;
    distinct++;
    if (g->first[id] < first) first = g->first[id];
    if (g->last[id] > last) last = g->last[id];
    if (into < 0 || g->size[id] > g->size[into]) into = id;
  }
  if (distinct == 1) return 1;
  if (g->seg[first] != g->seg[last] || last - first + 1 > FBXK_GROUP_SPAN) return 0;
  if (!convex(g, first, last)) return 0;
  /* relabel the smaller groups into the largest */
  for (int q = 0; q < k; q++) {
    int id = g->grp[idx[q]];
    if (id == into) continue;
    for (int m = id; m >= 0; m = g->next[m]) g->grp[m] = into;
    g->next[g->tail[into]] = id;
    g->tail[into] = g->tail[id];
    g->size[into] += g->size[id];
  }
  g->first[into] = first;
  g->last[into] = last;
  return 1;
}

int fbxk_grouping_merge(fbxk_grouping *g, int i, int j) {
  int idx[2] = {i, j};
  return fbxk_grouping_merge_all(g, idx, 2);
}

void fbxk_grouping_join(fbxk_grouping *g, int i, int j) {
  int id = g->grp[j];
  if (id < 0 || g->grp[i] >= 0) return;
  g->grp[i] = id;
  g->next[i] = -1;
  g->next[g->tail[id]] = i;
  g->tail[id] = i;
  g->size[id]++;
  if (i < g->first[id]) g->first[id] = i;
  if (i > g->last[id]) g->last[id] = i;
}

int fbxk_grouping_order(const fbxk_grouping *g, int *out, int *starts) {
  const fbxp_host_api *h = g->host;
  int *pos = h->alloc(sizeof(int) * (size_t)(g->n ? g->n : 1));
  if (!pos) return -1;
  /* groups in the order of their first members; pos[id]: the next slot */
  int ngroups = 0, m = 0;
  for (int i = 0; i < g->n; i++) {
    int id = g->grp[i];
    if (id < 0 || g->first[id] != i) continue;
    if (starts) starts[ngroups] = m;
    pos[id] = m;
    m += g->size[id];
    ngroups++;
  }
  if (starts) starts[ngroups] = m;
  for (int i = 0; i < g->n; i++)
    if (g->grp[i] >= 0) out[pos[g->grp[i]]++] = i;
  h->free(pos);
  return ngroups;
}
